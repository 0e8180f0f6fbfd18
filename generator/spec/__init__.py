"""The platform spec: read once (one YAML reader, generator/yamlio.py), parsed
into the typed model (spec/model.py, defaults applied there), then checked
(spec/checks.py, each workload kind's own checks beside its fields). Any
problem is a SpecError with one line per problem; nothing here imports cdk8s."""
from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from .. import limits, userinput
from ..errors import Problem, SpecError
from . import checks, problems
from .kinds.manifest import Manifest
from .model import NodePool, Platform, Profile, Queue

Spec = Platform   # the name the builders and tests use


def load(path: str | Path) -> Platform:
    return from_dict(userinput.load_mapping(path, "spec"), str(path))


def from_dict(raw: dict, source: str = "<spec>") -> Platform:
    over = limits.check_spec(raw)   # counts first: the model and checks never see a spec that would take minutes
    if over:
        raise SpecError(source, over)
    try:
        platform = Platform.model_validate(raw)
    except ValidationError as e:
        found = problems.translate(e, Platform)
        raise SpecError(source, found + _cross_checks_despite(raw, e)) from None
    platform._source = source
    found = _read_manifests(platform, source) + checks.check(platform)
    if found:
        raise SpecError(source, found)
    return platform


def _read_manifests(platform: Platform, source: str) -> list[Problem]:
    """Teams' own manifests (kind `manifest`), read relative to the spec file."""
    base = Path(source).parent if not source.startswith("<") else Path(".")
    out = []
    for i, w in enumerate(platform.workloads):
        if isinstance(w, Manifest):
            out += [Problem(f"workloads[{i}].{p.path}", p.message) for p in w.read(base)]
    return out


def _cross_checks_despite(raw: dict, error: ValidationError) -> list[Problem]:
    """Cross-check problems that hold whatever the invalid values are: found with two
    different valid stand-ins for them (see problems.salvage)."""
    runs = []
    for variant in (0, 1):
        fixed = problems.salvage(raw, error, Platform, variant)
        if fixed is None:
            return []
        try:
            runs.append(set(checks.check(Platform.model_validate(fixed))))
        except (ValidationError, KeyError, ValueError, TypeError, ArithmeticError):
            return []
    bad_paths = {p.path for p in problems.translate(error, Platform)}
    return sorted(p for p in runs[0] & runs[1] if p.path not in bad_paths)


__all__ = ["Platform", "Spec", "Profile", "NodePool", "Queue", "load", "from_dict", "SpecError"]
