"""Where things live in the repository, and the user's cache."""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"
SPEC_SCHEMA = SCHEMAS / "platform.schema.json"
VERSIONS = SCHEMAS / "versions.yaml"
DEFAULT_SPEC = ROOT / "platform.yaml"
# Output trees that synth owns; everything under them is regenerated.
OUTPUT_DIRS = ("base", "overlays", "controllers", "argocd")


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
