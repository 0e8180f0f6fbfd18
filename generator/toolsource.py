"""Where a platform repository's CI installs the tool from: `init --tool-source`.

The name gke-ml-platform is not published on PyPI, so a bare `gke-ml-platform==X` would
install whatever someone else publishes under it first. The requirement init writes names
its source instead (pip's direct references, PEP 508 `name @ URL`; the hash in the URL's
`#sha256=` fragment is checked by pip, PEP 503/610):

- a wheel file on this machine: `gke-ml-platform @ file:///…whl#sha256=…` (hash computed here);
- a wheel URL (https): `gke-ml-platform @ https://…whl`, its `#sha256=` kept when given;
- a git URL at a tag or commit: `gke-ml-platform @ git+https://…@TAG`;
- `pypi`: `gke-ml-platform==VERSION` from the public index (once the name is published there);
- a package index URL (https, not a .whl): `--index-url URL` then `gke-ml-platform==VERSION`:
  that index alone is asked, for the tool and its dependencies (a private mirror of PyPI).

Without --tool-source the requirement is a placeholder on a host that never resolves
(.invalid, RFC 2606): pip fails on it, and synth warns until it is replaced."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from .kernel.release import NAME, VERSION

PLACEHOLDER_HOST = "tool-source.invalid"
WHEEL = "gke_ml_platform-"   # the wheel file name's distribution part (PEP 427: `-` becomes `_`)
FORMS = ("a wheel file, an https URL of a wheel (add #sha256=HEX), git+https://HOST/REPO.git@TAG, pypi, "
         "or the https URL of a package index")


class SourceError(Exception):
    """--tool-source is none of the forms: one line, exit 2."""


@dataclass(frozen=True)
class ToolSource:
    kind: str                    # placeholder, wheel-file, wheel-url, git, pypi, index
    requirement: str             # the requirement line
    index_url: str | None = None
    note: str = ""               # what the README and requirements.txt say about it

    @property
    def placeholder(self) -> bool:
        return self.kind == "placeholder"


def placeholder() -> ToolSource:
    url = f"https://{PLACEHOLDER_HOST}/{WHEEL}{VERSION}-py3-none-any.whl"
    return ToolSource("placeholder", f"{NAME} @ {url}",
                      note="a placeholder: replace it with where your organisation keeps the tool")


def parse(value: str | None, cwd: Path | None = None) -> ToolSource:
    """The source --tool-source names (None: the placeholder)."""
    if value is None:
        return placeholder()
    value = value.strip()
    if value == "pypi":
        return ToolSource("pypi", f"{NAME}=={VERSION}", note="the public index (PyPI), pinned to this version")
    if value.startswith("git+"):
        return _git(value)
    if value.startswith(("https://", "http://", "file://")):
        return _url(value)
    path = Path(value).expanduser()
    path = path if path.is_absolute() else (cwd or Path.cwd()) / path
    if path.suffix == ".whl":
        return _wheel_file(path)
    raise SourceError(f"--tool-source {value!r}: give {FORMS}")


def _wheel_name(name: str, value: str) -> None:
    if not name.startswith(WHEEL) or not name.endswith(".whl"):
        raise SourceError(f"--tool-source {value!r}: {name!r} is not a wheel of {NAME} "
                          f"(its file name starts with {WHEEL!r} and ends with .whl)")


def _wheel_file(path: Path) -> ToolSource:
    _wheel_name(path.name, str(path))
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as e:
        raise SourceError(f"--tool-source {path}: cannot read it ({e.strerror or e})") from None
    return ToolSource("wheel-file", f"{NAME} @ {path.resolve().as_uri()}#sha256={digest}",
                      note="a wheel file on the machine that runs pip (the CI runner must have it at this path); "
                      "pip checks its sha256")


def _url(value: str) -> ToolSource:
    parts = urlsplit(value)
    if parts.scheme == "file":
        return _wheel_file(Path(parts.path))
    if parts.scheme != "https":
        raise SourceError(f"--tool-source {value!r}: an https URL (pip would fetch it unauthenticated over {parts.scheme})")
    if not parts.path.endswith(".whl"):
        if parts.fragment or parts.query:
            raise SourceError(f"--tool-source {value!r}: a package index URL has no query or fragment")
        return ToolSource("index", f"{NAME}=={VERSION}", index_url=value,
                          note=f"the package index {value}, the only one asked (it must serve the dependencies too)")
    _wheel_name(parts.path.rsplit("/", 1)[-1], value)
    if parts.fragment and not re.fullmatch(r"sha256=[0-9a-f]{64}", parts.fragment):
        raise SourceError(f"--tool-source {value!r}: the fragment is #sha256= and 64 hex digits")
    note = "a wheel URL; pip checks its sha256" if parts.fragment else \
        "a wheel URL without #sha256=: add the wheel's hash so that a changed file is refused"
    return ToolSource("wheel-url", f"{NAME} @ {value}", note=note)


def _git(value: str) -> ToolSource:
    url = value[len("git+"):]
    parts = urlsplit(url)
    if parts.scheme not in ("https", "ssh") or not parts.netloc:
        raise SourceError(f"--tool-source {value!r}: git+https://HOST/REPO.git@TAG (or git+ssh://)")
    path, at, ref = parts.path.rpartition("@")
    if not at or not path or not re.fullmatch(r"[A-Za-z0-9._/-]+", ref):
        raise SourceError(f"--tool-source {value!r}: name the tag (or commit) to install: {value}@TAG")
    return ToolSource("git", f"{NAME} @ {value}",
                      note=f"the git repository at {ref} (a tag can be moved; a commit SHA cannot)")


def placeholder_line(requirements: Path) -> int | None:
    """The line of requirements.txt that still holds the placeholder source, else None."""
    try:
        lines = requirements.read_text(errors="replace").splitlines()
    except OSError:
        return None
    return next((i for i, line in enumerate(lines, 1)
                 if PLACEHOLDER_HOST in line and not line.lstrip().startswith("#")), None)


def placeholder_warning(root: Path) -> str | None:
    """synth's warning, as for the spec's placeholders, while requirements.txt has the placeholder."""
    req = root / "requirements.txt"
    line = placeholder_line(req)
    if line is None:
        return None
    return (f"{req}:{line}: the tool's source is still the placeholder https://{PLACEHOLDER_HOST}/…, so CI cannot "
            f"install the tool; put your own there ({FORMS}; see the file's comment)")
