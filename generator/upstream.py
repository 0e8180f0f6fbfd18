"""Upstream data: the CRDs the validator loads and the tutorial manifests and
other upstream files the tests compare with. Every file is pinned in
schemas/versions.yaml by its upstream URL (a tag or commit) and sha256
(`crdFiles`, under crds/; `testFiles`, under the data root).

Where the files are read from, the first that applies:

1. a shared-data folder with a `crds/` folder in it: $SHARED_DIR, else
   `../shared` beside the repository (this repository's CI has one);
2. the download cache that `make crds` fills: $UPSTREAM_CACHE, else
   `build/shared` in the repository. Same layout: `crds/`, `reference/`.

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


def pinned() -> list[PinnedFile]:
    """Every pinned upstream file, CRDs first."""
    table = versions.table()
    crds = [PinnedFile(f"crds/{rel}", e["url"], e["sha256"]) for rel, e in sorted(table["crdFiles"].items())]
    rest = [PinnedFile(rel, e["url"], e["sha256"]) for rel, e in sorted(table.get("testFiles", {}).items())]
    return crds + rest


def shared_dir() -> Path:
    return Path(os.environ.get(SHARED_ENV) or paths.ROOT.parent / "shared")


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or paths.ROOT / "build" / "shared")


def uses_shared() -> bool:
    return (shared_dir() / "crds").is_dir()


def data_root() -> Path:
    """The folder holding crds/ and reference/ (see the module docstring)."""
    return shared_dir() if uses_shared() else cache_dir()


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
