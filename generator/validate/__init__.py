"""`python -m generator validate`: strict schemas plus the cross-object checks
that kubeconform, kube-linter and Pluto cannot do (a queue label that names a
LocalQueue whose ClusterQueue covers what the pods ask for, selectors that
select something, TPU slices whose chips add up, ...).

Kept light on purpose: no cdk8s, no kubernetes client, one CRD index (cached
by content hash), validators built once per (apiVersion, kind). The run itself
lives in `run`; these are the names the rest of the project imports."""
from __future__ import annotations

from .context import Target, UsageError
from .run import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Options, Report, check_stream, schemas_for, validate

__all__ = ["EXIT_FINDINGS", "EXIT_OK", "EXIT_USAGE", "Options", "Report", "Target", "UsageError", "check_stream",
           "schemas_for", "validate"]
