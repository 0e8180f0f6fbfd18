"""Upstream data: the CRDs the validator loads and the tutorial manifests and
other upstream files the tests compare with. Every file is pinned in
schemas/versions.yaml by its upstream URL (a tag or commit) and sha256
(`crdFiles`, under crds/; `testFiles`, under the data root).

Where the files are read from, the first that applies:

1. a shared-data folder with a `crds/` folder in it: $SHARED_DIR, else, run
   from a checkout of this repository, `../shared` beside it (this
   repository's tests read it; an installed tool never looks there);
2. the per-user download cache that `gke-ml-platform crds` (and `make crds`)
   fills: $UPSTREAM_CACHE, else `upstream/` in the user's cache folder
   (generator.kernel.paths.cache_dir). Same layout: `crds/`, `reference/`.

Downloads go to raw.githubusercontent.com, or to $UPSTREAM_BASE_URL in its
place (a mirror with the same paths)."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from . import paths, versions

SHARED_ENV = "SHARED_DIR"
CACHE_ENV = "UPSTREAM_CACHE"
BASE_URL_ENV = "UPSTREAM_BASE_URL"
UPSTREAM_BASE = "https://raw.githubusercontent.com/"


@dataclass(frozen=True)
class PinnedFile:
    rel: str        # path under the data root: crds/... or reference/...
    url: str        # upstream raw file at the pinned tag or commit
    sha256: str


def pinned_crds() -> list[PinnedFile]:
    """The pinned CRD files, what validate and diff read (under crds/ of the data root)."""
    return [PinnedFile(f"crds/{rel}", e["url"], e["sha256"]) for rel, e in sorted(versions.table()["crdFiles"].items())]


def pinned() -> list[PinnedFile]:
    """Every pinned upstream file, CRDs first: also the tutorial manifests this repository's tests compare with."""
    rest = [PinnedFile(rel, e["url"], e["sha256"]) for rel, e in sorted(versions.table().get("testFiles", {}).items())]
    return pinned_crds() + rest


def shared_dir() -> Path | None:
    """$SHARED_DIR, else ../shared beside this repository's checkout; None for an installed tool."""
    if os.environ.get(SHARED_ENV):
        return Path(os.environ[SHARED_ENV])
    return None if paths.INSTALLED else paths.ROOT.parent / "shared"


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or paths.cache_dir() / "upstream")


def uses_shared() -> bool:
    shared = shared_dir()
    return shared is not None and (shared / "crds").is_dir()


def data_root() -> Path:
    """The folder holding crds/ and reference/ (see the module docstring)."""
    shared = shared_dir()
    return shared if shared is not None and uses_shared() else cache_dir()


def download_url(f: PinnedFile) -> str:
    """The URL to download from: upstream, or the same path under $UPSTREAM_BASE_URL."""
    base = os.environ.get(BASE_URL_ENV)
    if base and f.url.startswith(UPSTREAM_BASE):
        return base.rstrip("/") + "/" + f.url[len(UPSTREAM_BASE):]
    return f.url


def matches(root: Path, f: PinnedFile) -> bool:
    try:
        return hashlib.sha256((root / f.rel).read_bytes()).hexdigest() == f.sha256
    except OSError:
        return False


def not_present(root: Path, files: list[PinnedFile] | None = None) -> list[PinnedFile]:
    """The pinned files that are absent under `root` or are not the pinned bytes."""
    return [f for f in (pinned() if files is None else files) if not matches(root, f)]
