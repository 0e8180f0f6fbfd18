"""CRD fields guarded by transition rules: `x-kubernetes-validations` whose
rule reads `oldSelf`, which the API server evaluates on every update of a
custom resource (Kubernetes docs, "Transition rules"). They are evaluated by
the validator's CEL support (generator/validate/cel.py) against the pinned
CRDs of the profile's releases; this module gives `generator diff` the problems
(errors.Problem: the field path, the rule's message and CEL source) and the old and
new values of each field a rule refuses."""
from __future__ import annotations

from pathlib import Path

from ..kernel import versions
from ..kernel.errors import Problem


def default_releases() -> dict[str, str]:
    return {p: versions.default(p) for p in ("kueue", "jobset", "lws")}


def value_at(obj: object, path: tuple) -> object:
    """The value at `path` (a Problem's parts) in `obj`; None when it has none."""
    for part in path:
        if isinstance(obj, dict) and part in obj:
            obj = obj[part]
        elif isinstance(obj, list) and isinstance(part, int) and part < len(obj):
            obj = obj[part]
        else:
            return None
    return obj


def transition_violations(old: dict, new: dict, crd_root: Path,
                          releases: dict[str, str] | None = None) -> list[Problem]:
    """Changes from `old` to `new` that a transition rule of the pinned CRD refuses
    (or may refuse: see `certain`). crds.CrdFileError when a pinned CRD file is missing or altered."""
    from ..validate import cel
    from ..validate.context import Target

    r = {**default_releases(), **(releases or {})}
    target = Target(versions.default("kubernetes"), r["kueue"], r["jobset"], r["lws"], autopilot=False)
    return cel.transition_violations(old, new, crd_root, target)


def certain(p: Problem) -> bool:
    """The rule was evaluated and refuses the change; otherwise it may refuse it."""
    from ..validate import cel
    return p.rule == cel.BROKEN
