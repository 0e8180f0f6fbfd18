"""The platform spec: read once (one YAML reader, generator/kernel/yamlio.py), parsed
into the typed model (model/spec.py, defaults applied there), then checked
(model/checks.py, each workload kind's own checks beside its fields). Any
problem is a SpecError with one line per problem; nothing here imports cdk8s."""
from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from ..kernel import credentials, input_limits, userinput, yamlio
from ..kernel.errors import Problem, SpecError, format_path
from . import checks, problems
from .kinds.manifest import Manifest
from .spec import NodePool, Platform, Profile, Queue

Spec = Platform   # the name the builders and tests use


def load(path: str | Path) -> Platform:
    return from_dict(userinput.load_mapping(path, "spec"), str(path))


def from_dict(raw: dict, source: str = "<spec>") -> Platform:
    over = input_limits.check_spec(raw)   # counts first: the model and checks never see a spec that would take minutes
    if over:
        raise SpecError(source, over)
    leaked = credential_problems(raw)   # every key and value, whatever else is wrong
    try:
        with yamlio.gc_paused():   # a large tree of new objects, none cyclic (see yamlio.gc_paused)
            platform = Platform.model_validate(raw)
    except ValidationError as e:
        found = problems.translate(e, Platform)
        raise SpecError(source, leaked + found + _cross_checks_despite(raw, e), raw) from None
    platform._source = source
    found = _read_manifests(platform, source) + checks.check(platform)
    if found or leaked:
        raise SpecError(source, leaked + found, raw)
    return platform


def credential_problems(raw) -> list[Problem]:
    """A credential of a published format in any key or value of the spec (generator/kernel/credentials.py)."""
    return [Problem(format_path(path), what) for path, what in credentials.scan(raw)]


def _read_manifests(platform: Platform, source: str) -> list[Problem]:
    """Teams' own manifests (kind `manifest`), read relative to the spec file."""
    base = Path(source).parent if not source.startswith("<") else Path(".")
    out = []
    for i, w in enumerate(platform.workloads):
        if isinstance(w, Manifest):
            out += [Problem(f"workloads[{i}].{p.path}", p.message)
                    for p in w.read(base, contained=not source.startswith("<"))]
            out += _manifest_credentials(i, w)
    return out


def _manifest_credentials(i: int, w: Manifest) -> list[Problem]:
    """The files the spec points at go through the same credential check as the spec."""
    out = []
    for n, obj in enumerate(w.objects, 1):
        where = f"{w.file}: document {n} ({obj.get('kind')}/{(obj.get('metadata') or {}).get('name')})"
        found = [*credentials.scan(obj), *credentials.in_object(obj)]
        out += [Problem(f"workloads[{i}].file", f"{where}: {format_path(list(path)) or '<root>'}: {what}")
                for path, what in found]
    return out


def _cross_checks_despite(raw: dict, error: ValidationError) -> list[Problem]:
    """Cross-check problems that hold whatever the invalid values are: found with two
    different valid stand-ins for them (see problems.salvage)."""
    runs = []
    dropped: set[str] = set()
    for variant in (0, 1):
        fixed = problems.salvage(raw, error, Platform, variant)
        if fixed is None:
            return []
        dropped |= {format_path(list(d)) for d in fixed.dropped}
        try:
            found = checks.check(Platform.model_validate(fixed.raw))
        except (ValidationError, KeyError, ValueError, TypeError, ArithmeticError):
            return []
        runs.append({fixed.restore(p) for p in found})
    bad_paths = {p.path for p in problems.translate(error, Platform)}
    return sorted(p for p in runs[0] & runs[1] if p.path not in bad_paths
                  and not any(p.path == d or p.path.startswith((d + ".", d + "[")) for d in dropped))


__all__ = ["Platform", "Spec", "Profile", "NodePool", "Queue", "load", "from_dict", "SpecError"]
