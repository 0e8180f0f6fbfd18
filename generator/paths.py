"""Where things live in the repository."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"
SPEC_SCHEMA = SCHEMAS / "platform.schema.json"
VERSIONS = SCHEMAS / "versions.yaml"
DEFAULT_SPEC = ROOT / "platform.yaml"
# Output trees that synth owns; everything under them is regenerated.
OUTPUT_DIRS = ("base", "overlays", "controllers", "argocd")
