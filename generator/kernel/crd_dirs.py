"""Which upstream CRD directories hold the schemas for a profile's objects."""
from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from . import paths, upstream, versions


def default_root() -> Path:
    """The CRD directory: $CRD_DIR, else crds/ of the upstream data root
    ($SHARED_DIR or this checkout's ../shared when present, else the per-user
    cache `gke-ml-platform crds` fills; see generator/kernel/upstream.py)."""
    if os.environ.get("CRD_DIR"):
        return Path(os.environ["CRD_DIR"])
    return upstream.data_root() / "crds"


def ensure_root() -> Path:
    """default_root(), after downloading into the per-user cache the pinned CRD
    files it lacks (once: later runs find them there). CrdFileError, one line
    saying what is missing and the ways to provide it, when that fails."""
    if os.environ.get("CRD_DIR") or upstream.uses_shared():
        return default_root()
    cache = upstream.cache_dir()
    missing = upstream.not_present(cache, upstream.pinned_crds())
    if missing:
        from . import fetch_upstream  # the downloader imports this module
        try:
            fetch_upstream.fetch(cache, missing, upstream.download_url)
        except fetch_upstream.FetchError as e:
            raise CrdFileError(
                f"upstream CRDs missing: {len(missing)} of {len(upstream.pinned_crds())} pinned CRD files are not in "
                f"{cache / 'crds'} and downloading them failed ({e}); run `gke-ml-platform crds` where "
                f"raw.githubusercontent.com is reachable (or set {upstream.BASE_URL_ENV} to a mirror with its paths), "
                f"or pass --crd-dir DIR (or set CRD_DIR) to a folder holding them") from None
        print(f"upstream data: downloaded {len(missing)} pinned CRD files (sha256-checked) into {cache / 'crds'}",
              file=sys.stderr)
    return cache / "crds"


def dirs_for(kueue: str, jobset: str, lws: str, root: Path | None = None) -> list[Path]:
    """The CRD directories of these Kueue/JobSet/LWS releases plus the `crds` of versions.yaml."""
    root = Path(root or default_root())
    dirs = [root / "kueue" / kueue,
            root / "jobset" / jobset,
            root / "lws" / lws]
    dirs += [root / d for d in versions.table()["crds"]]
    return dirs


class CrdFileError(Exception):
    """A pinned CRD file is missing, unreadable or not the pinned upstream bytes."""


@dataclass(frozen=True)
class PinnedFile:
    rel: str        # path under the CRD root, e.g. kueue/v0.17.4/kueue.x-k8s.io_clusterqueues.yaml
    url: str        # upstream raw file at the pinned tag or commit
    sha256: str


def pinned_files(rel_dirs: list[str]) -> list[PinnedFile]:
    """The `crdFiles` of versions.yaml that live directly in these directories (relative to the root)."""
    table = versions.table().get("crdFiles", {})
    out = []
    for d in rel_dirs:
        files = [PinnedFile(rel, e["url"], e["sha256"]) for rel, e in sorted(table.items())
                 if rel.rpartition("/")[0] == d]
        if not files:
            raise CrdFileError(f"{paths.VERSIONS.name}: no crdFiles pinned under {d}/; add each file's "
                               f"upstream url and sha256 (sha256sum <file>) to crdFiles")
        out += files
    return out


def verified(root: Path, files: list[PinnedFile]) -> tuple[tuple[str, str], ...]:
    """(absolute path, sha256) of each file after checking its bytes against the pin."""
    out = []
    for f in files:
        path = Path(root) / f.rel
        try:
            data = path.read_bytes()
        except OSError as e:
            raise CrdFileError(f"{path}: cannot read the pinned CRD file ({e.strerror}); "
                               f"run `gke-ml-platform crds` (downloads into {upstream.cache_dir()}) or pass --crd-dir") from None
        digest = hashlib.sha256(data).hexdigest()
        if digest != f.sha256:
            raise CrdFileError(f"{path}: sha256 {digest} differs from the pin {f.sha256} in "
                               f"{paths.VERSIONS.name} (upstream {f.url}); the file was edited or "
                               f"is another release: re-download it with `gke-ml-platform crds`")
        out.append((str(path), digest))
    return tuple(out)
