"""CRD fields guarded by transition rules: `x-kubernetes-validations` whose
rule reads `oldSelf`, which the API server evaluates on every update of a
custom resource (Kubernetes docs, "Transition rules"). They are evaluated by
the validator's CEL support (generator/validate/cel.py) against the pinned
CRDs of the profile's releases; this module gives `generator diff` the old
and new values of each field a rule refuses."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..kernel import versions


@dataclass(frozen=True)
class Violation:
    path: str
    old: object
    new: object
    rule: str
    message: str
    certain: bool      # False: the rule could not be evaluated; the update may be refused


def default_releases() -> dict[str, str]:
    return {p: versions.default(p) for p in ("kueue", "jobset", "lws")}


def _at(obj: object, path: tuple) -> object:
    for part in path:
        if isinstance(obj, dict) and part in obj:
            obj = obj[part]
        elif isinstance(obj, list) and isinstance(part, int) and part < len(obj):
            obj = obj[part]
        else:
            return None
    return obj


def transition_violations(old: dict, new: dict, crd_root: Path,
                          releases: dict[str, str] | None = None) -> list[Violation]:
    """Changes from `old` to `new` that a transition rule of the pinned CRD refuses
    (or may refuse). crds.CrdFileError when a pinned CRD file is missing or altered."""
    from ..validate import cel
    from ..validate.context import Target

    r = {**default_releases(), **(releases or {})}
    target = Target(versions.default("kubernetes"), r["kueue"], r["jobset"], r["lws"], autopilot=False)
    return [Violation(v.field, _at(old, v.path), _at(new, v.path), v.rule, v.message, certain=v.evaluated)
            for v in cel.transition_violations(old, new, crd_root, target)]
