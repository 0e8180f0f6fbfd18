"""`python -m generator validate`: strict schemas plus the cross-object checks
that kubeconform, kube-linter and Pluto cannot do (a queue label that names a
LocalQueue whose ClusterQueue covers what the pods ask for, selectors that
select something, TPU slices whose chips add up, ...).

Kept light on purpose: no cdk8s, no kubernetes client, one CRD index (cached
by content hash), validators built once per (apiVersion, kind). The run itself
lives in `run`; these are the names the rest of the project imports.

They load on first use: the command line registers `validate` (generator/validate/
command.py) for every command, and `check` or `synth` must not pay for importing
the run, the spec model through `context`, and the rules with it."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .context import Target, UsageError
    from .run import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Options, Report, check_stream, schemas_for, validate

__all__ = ["EXIT_FINDINGS", "EXIT_OK", "EXIT_USAGE", "Options", "Report", "Target", "UsageError", "check_stream",
           "schemas_for", "validate"]

_HOME = {"Target": "context", "UsageError": "context"}   # the others live in `run`


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOME.get(name, 'run')}", __name__), name)
    globals()[name] = value   # once: later look-ups do not come here
    return value
