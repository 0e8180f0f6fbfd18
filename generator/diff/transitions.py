"""CRD fields guarded by transition rules: `x-kubernetes-validations` whose
rule reads `oldSelf`, which the API server evaluates on every update of a
custom resource (Kubernetes docs, "Transition rules").

Until the validator's CEL evaluation is on main, this module evaluates only
two forms, behind the one function `transition_violations`:
  - `self == oldSelf` (the field may never change), and
  - a guard `!has(oldSelf.f) || ...`, which passes when the old value has no `f`;
and skips a rule that reads only fields equal on both sides (a no-op to it).
Any other rule whose value changed is reported as "may be refused": it is not
evaluated here. Swap `transition_violations` for
generator.validate.cel.transition_violations(old, new, crd_root) when that lands.

A rule runs where the old and new values can be correlated: properties and map
keys by name, items of `x-kubernetes-list-type: map` lists by their keys; never
inside other lists (the same documentation)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .. import crds, versions
from ..schemacheck import SchemaSet

Step = tuple   # ("prop", name) | ("map",) | ("items", list-map keys)


@dataclass(frozen=True)
class TransitionRule:
    steps: tuple[Step, ...]
    rule: str
    message: str


@dataclass(frozen=True)
class Violation:
    path: str
    old: object
    new: object
    rule: str
    message: str
    certain: bool      # False: the rule was not evaluated; the update may be refused


def rules_of(schema: dict) -> tuple[TransitionRule, ...]:
    """Every rule reading oldSelf in a CRD version's openAPIV3Schema, with where it sits."""
    out: list[TransitionRule] = []

    def walk(node: dict, steps: tuple) -> None:
        for v in node.get("x-kubernetes-validations") or []:
            if "oldSelf" in v.get("rule", ""):
                out.append(TransitionRule(steps, " ".join(v["rule"].split()), v.get("message", "")))
        for name, sub in (node.get("properties") or {}).items():
            if isinstance(sub, dict):
                walk(sub, steps + (("prop", name),))
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], steps + (("map",),))
        if isinstance(node.get("items"), dict):
            keys = tuple(node.get("x-kubernetes-list-map-keys") or ()) \
                if node.get("x-kubernetes-list-type") == "map" else None
            walk(node["items"], steps + (("items", keys),))

    walk(schema, ())
    return tuple(out)


def _seg(name: str) -> str:
    return f".{name}" if re.fullmatch(r"[A-Za-z0-9_-]+", name) else f"[{name}]"


def _correlated(old, new, steps: tuple, path: str):
    """(path, old value, new value) of every place the steps reach on both sides."""
    if not steps:
        yield path.lstrip("."), old, new
        return
    step, rest = steps[0], steps[1:]
    if step[0] == "prop" and isinstance(old, dict) and isinstance(new, dict):
        if step[1] in old and step[1] in new:
            yield from _correlated(old[step[1]], new[step[1]], rest, path + _seg(step[1]))
    elif step[0] == "map" and isinstance(old, dict) and isinstance(new, dict):
        for k in old:
            if k in new:
                yield from _correlated(old[k], new[k], rest, path + _seg(str(k)))
    elif step[0] == "items" and step[1] and isinstance(old, list) and isinstance(new, list):
        def ident(x):
            return tuple(x.get(k) for k in step[1]) if isinstance(x, dict) else None
        olds = {ident(x): x for x in old}
        for x in new:
            if ident(x) in olds:
                yield from _correlated(olds[ident(x)], x, rest, f"{path}[{'/'.join(map(str, ident(x)))}]")


_GUARD = re.compile(r"^!has\(oldSelf\.([A-Za-z0-9_]+)\) \|\| ")
_FIELD = re.compile(r"\b(?:self|oldSelf)\.([A-Za-z_][A-Za-z0-9_]*)")
_WHOLE = re.compile(r"\b(?:self|oldSelf)\b(?!\.)")


def _same_fields(rule: str, self_value, old_value) -> bool:
    """The rule reads only fields (`self.f`, `oldSelf.f`) that are equal on both sides: it
    cannot tell the update from a no-op one, which the API server accepts."""
    fields = set(_FIELD.findall(rule))
    return (bool(fields) and not _WHOLE.search(rule) and isinstance(self_value, dict)
            and isinstance(old_value, dict) and all(self_value.get(f) == old_value.get(f) for f in fields))


def evaluate(rule: str, self_value, old_value) -> bool | None:
    """True/False for the forms this module knows; None for any other rule."""
    if rule == "self == oldSelf":
        return self_value == old_value
    m = _GUARD.match(rule)
    if m and isinstance(old_value, dict) and m.group(1) not in old_value:
        return True
    if _same_fields(rule, self_value, old_value):
        return True
    return None


def violations_in(schema: dict, old: dict, new: dict) -> list[Violation]:
    return _check(rules_of(schema), old, new)


def _check(rules: tuple[TransitionRule, ...], old: dict, new: dict) -> list[Violation]:
    out = []
    for r in rules:
        for path, a, b in _correlated(old, new, r.steps, ""):
            ok = evaluate(r.rule, b, a)
            if ok is False or (ok is None and a != b):
                out.append(Violation(path, a, b, r.rule, r.message, certain=ok is False))
    return out


@lru_cache(maxsize=None)
def _schemas(crd_root: str, kueue: str, jobset: str, lws: str) -> SchemaSet:
    root = Path(crd_root)
    dirs = crds.dirs_for(kueue, jobset, lws, root)
    files = crds.pinned_files([d.relative_to(root).as_posix() for d in dirs])
    return SchemaSet(versions.default("kubernetes"), crd_files=crds.verified(root, files))


def default_releases() -> dict[str, str]:
    return {p: versions.default(p) for p in ("kueue", "jobset", "lws")}


def transition_violations(old: dict, new: dict, crd_root: Path,
                          releases: dict[str, str] | None = None) -> list[Violation]:
    """Changes from `old` to `new` that a transition rule of the pinned CRD refuses
    (or may refuse). crds.CrdFileError when a pinned CRD file is missing or altered."""
    if old.get("apiVersion") != new.get("apiVersion"):
        return []     # a version change goes through conversion; nothing to correlate here
    r = {**default_releases(), **(releases or {})}
    rules = _rules(str(crd_root), r["kueue"], r["jobset"], r["lws"], new["apiVersion"], new["kind"])
    return _check(rules, old, new)


@lru_cache(maxsize=None)
def _rules(crd_root: str, kueue: str, jobset: str, lws: str, api: str, kind: str) -> tuple[TransitionRule, ...]:
    schema = _schemas(crd_root, kueue, jobset, lws).crd_schema(api, kind)
    return rules_of(schema) if schema else ()
