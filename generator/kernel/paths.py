"""Where things live: the tool's own data files, the user's platform repository,
and the user's cache.

The tool's data (the version pins, the JSON Schemas, the example specs, the
load generator's locustfile) is read from the installed package, where the
wheel puts a copy under `generator/_data/` (see setup.py), or, run from a
checkout of this repository, from the checkout itself: the same relative paths
in both. Nothing is ever written there by a command a user runs.

The platform repository is the user's: the folder holding `platform.yaml`,
found from the working directory upwards as git finds `.git`. Output,
scenarios and the validator's config live beside the spec."""
import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent   # generator/ (this file is generator/kernel/paths.py)
# This repository's checkout (the tests, `make`, bench): only meaningful when
# the tool runs from a checkout, never a place a user command reads or writes.
ROOT = PACKAGE.parent
# This checkout's spec: what bench and `make images` (tools of this repository, not commands) start from.
DEFAULT_SPEC = ROOT / "platform.yaml"
_BUNDLED = PACKAGE / "_data"
# True when running from an installed wheel (the data files were copied into it).
INSTALLED = _BUNDLED.is_dir()
DATA = _BUNDLED if INSTALLED else ROOT

SCHEMAS = DATA / "schemas"
SPEC_SCHEMA = SCHEMAS / "platform.schema.json"
VERSIONS = SCHEMAS / "versions.yaml"
EXAMPLES = DATA / "examples"
LOCUSTFILE = DATA / "images" / "t5-loadgen" / "locustfile.py"
# The data files the wheel carries, relative to DATA (setup.py copies exactly these).
# examples/**: the example specs, their scenarios (scenarios/<name>/<profile>/) and the files they name (manifests/).
DATA_FILES = ("schemas/*.yaml", "schemas/*.json", "examples/*.yaml", "examples/**/*.yaml",
              "images/t5-loadgen/locustfile.py")

SPEC_NAME = "platform.yaml"
SCENARIOS = "scenarios"
# Output trees that synth owns; everything under them is regenerated.
OUTPUT_DIRS = ("base", "overlays", "controllers", "argocd")


class NoPlatform(Exception):
    """No platform.yaml in the working directory or any folder above it."""


class OutsideRepository(Exception):
    """A path the repository holds (the spec, a scenario, a manifest) leads outside it
    through a symbolic link or `..`: a branch's contents never choose where the tool reads
    or writes outside the repository. One line, exit 2."""


def inside(path: str | Path, root: str | Path) -> bool:
    """Whether `path`, every symbolic link followed, is `root` (links followed) or under it."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def contained(path: str | Path, root: str | Path, what: str) -> Path:
    """`path` when it stays inside the repository `root` once its links are followed, else
    OutsideRepository naming it (`what`: "the spec", "the scenario", ...)."""
    if not inside(path, root):
        via = " through a symbolic link" if os.path.islink(path) or _linked(path, root) else ""
        raise OutsideRepository(f"{path}: {what} leads outside the repository {shown(root)}{via} "
                                f"(to {os.path.realpath(path)}); keep it a plain file inside the repository")
    return Path(path)


def _linked(path: str | Path, root: str | Path) -> bool:
    p = Path(os.path.abspath(path))
    return any(q.is_symlink() for q in (p, *p.parents))


def repository_file(path: str | Path, root: str | Path, what: str) -> Path:
    """`path` when it is outside `root` as written (named on the command line), or stays
    inside `root` once its links are followed; else OutsideRepository."""
    if lexically_inside(path, root):
        contained(path, root, what)
    return Path(path)


def repository_root() -> Path:
    """The platform repository of the working directory (the spec's folder), else the working directory."""
    try:
        return find_spec().parent
    except NoPlatform:
        return Path.cwd()


def lexically_inside(path: str | Path, root: str | Path) -> bool:
    """Whether `path` as written (no link followed) is under `root`: a path the repository
    holds, rather than one a user named outside it on the command line."""
    a, b = os.path.abspath(path), os.path.abspath(root)
    return a == b or a.startswith(b.rstrip(os.sep) + os.sep)


def find_spec(start: Path | None = None) -> Path:
    """The platform repository's spec: platform.yaml in `start` (default: the
    working directory) or the nearest folder above it that has one."""
    here = Path(start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / SPEC_NAME).is_file():
            return contained(d / SPEC_NAME, d, "the spec")
    raise NoPlatform(f"no {SPEC_NAME} in {here} or any folder above it; run the command inside a platform "
                     f"repository, create one with `gke-ml-platform init DIR`, or pass --spec FILE")


def platform_dir(spec: str | Path | None = None) -> Path:
    """The platform repository: the folder of `spec`, else of the spec found from the working directory.
    The folder the spec's path names, not the folder of a symbolic link's target: a spec that
    is a link leading outside it is refused (OutsideRepository), never followed out."""
    if not spec:
        return find_spec().parent
    root = Path(os.path.abspath(spec)).parent.resolve()
    contained(spec, root, "the spec")
    return root


def shown(path: Path | str) -> str:
    """A path as messages show it: relative when under the working directory."""
    rel = os.path.relpath(path)
    return str(path) if rel.startswith("..") else rel


def file_name(obj: dict) -> str:
    """The file synth writes an object to: kind_name.yaml, or kind_namespace_name.yaml
    ('_' never occurs in Kubernetes names)."""
    meta = obj["metadata"]
    parts = [obj["kind"].lower()] + ([meta["namespace"]] if meta.get("namespace") else []) + [meta["name"]]
    return "_".join(parts) + ".yaml"


def cache_dir() -> Path:
    """$GENERATOR_CACHE_DIR, else $XDG_CACHE_HOME/gke-ml-platform, else ~/.cache/gke-ml-platform."""
    if os.environ.get("GENERATOR_CACHE_DIR"):
        return Path(os.environ["GENERATOR_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gke-ml-platform"
