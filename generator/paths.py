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


def cache_dir() -> Path:
    """$GENERATOR_CACHE_DIR, else $XDG_CACHE_HOME/gke-ml-platform, else ~/.cache/gke-ml-platform."""
    if os.environ.get("GENERATOR_CACHE_DIR"):
        return Path(os.environ["GENERATOR_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gke-ml-platform"
