"""Which upstream CRD directories hold the schemas for a profile's objects."""
from __future__ import annotations

import os
from pathlib import Path

from . import paths, versions
from .spec import Profile, Spec


def default_root() -> Path:
    """The CRD directory: $CRD_DIR, else ../shared/crds beside the repository."""
    return Path(os.environ.get("CRD_DIR", paths.ROOT.parent / "shared" / "crds"))


def crd_dirs(spec: Spec, profile: Profile, root: Path | None = None) -> list[Path]:
    root = Path(root or default_root())
    dirs = [root / "kueue" / profile.kueue.version,
            root / "jobset" / spec.jobset_version,
            root / "lws" / spec.lws_version]
    dirs += [root / d for d in versions.table()["crds"]]
    return dirs
