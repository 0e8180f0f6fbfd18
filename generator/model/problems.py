"""Spec errors for people: pydantic's validation errors turned into one line
each, with the field path as the user wrote it (camelCase keys, list
indexes), what is wrong in plain words and what would be right: the nearest
valid key for a typo, the allowed values, the limit.

`salvage` lets the cross-checks run even when some fields are invalid: each
invalid value is replaced by a valid stand-in (a bound, a default, a sample
string), twice with different stand-ins; the cross-check problems found both
times do not depend on the bad values and are reported with them."""
from __future__ import annotations

import copy
import re
import types
import typing
from dataclasses import dataclass
from typing import Any, Union

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from ..kernel.errors import Problem, format_path, hint, show, unknown
from . import fields
from .kinds import t5

# Plain words for the patterns of the field types.
_PATTERN_WORDS = {
    fields.DNS_LABEL: "lower-case letters, digits and '-', starting and ending with a letter or digit "
                      "(a DNS label, at most 63 characters)",
    fields.DNS_1035: "lower-case letters, digits and '-', starting with a letter and ending with a letter or "
                     "digit (at most 63 characters)",
    fields.DNS_SUBDOMAIN: "lower-case letters, digits, '-' and '.', starting and ending with a letter or digit",
    fields.LABEL_VALUE: "at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
    fields.LABEL_KEY: "a label key: an optional DNS prefix and '/', then letters, digits, '-', '_' or '.'",
    fields.ENV_NAME: "an environment variable name: letters, digits, '_', '-' or '.', not starting with a digit",
    r"^v[0-9]+\.[0-9]+\.[0-9]+$": "a release version such as v0.17.4",
    r"^1\.[0-9]+$": "a Kubernetes minor version such as \"1.33\"",
    r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$": "an image tag: letters, digits, '_', '.' and '-', at most 128 characters",
    r"^sha256:[0-9a-f]{64}$": "sha256: followed by 64 lower-case hex digits",
    t5.DURATION: "a duration such as 30s or 1m (a whole number and ms, s, m or h)",
    t5.MODEL_VERSION: "a version such as 1.0 (digits and dots)",
}
_TYPE_WORDS = {
    "int_type": "a whole number", "int_parsing": "a whole number", "string_type": "text",
    "bool_type": "true or false", "dict_type": "a mapping (key: value)", "model_type": "a mapping (key: value)",
    "list_type": "a list", "tuple_type": "a list", "float_type": "a number", "int_from_float": "a whole number",
}


# ---------------------------------------------------------------- walking the model by path

def _unwrap(tp: Any) -> list[Any]:
    """The concrete types an annotation admits (Annotated, Optional and unions flattened)."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin in (Union, types.UnionType):
        return [t for a in typing.get_args(tp) for t in _unwrap(a)]
    return [tp]


def _step(tp: Any, part: Any) -> Any:
    """The annotation one path element further down, or None."""
    for t in _unwrap(tp):
        origin = typing.get_origin(t)
        if isinstance(t, type) and issubclass(t, BaseModel) and isinstance(part, str):
            for name, f in t.model_fields.items():
                if part in (name, f.alias):
                    return f.annotation
        elif origin is dict and isinstance(part, str):
            return typing.get_args(t)[1]
        elif origin in (list, tuple) and isinstance(part, int):
            return typing.get_args(t)[0]
    return None


def _resolve(root: type[BaseModel], loc: tuple) -> tuple[Any, list[Any]]:
    """(annotation at loc, the user-facing path) — discriminator tags in loc are dropped."""
    tp: Any = root
    path: list[Any] = []
    for part in loc:
        nxt = _step(tp, part)
        if nxt is None and isinstance(part, str):
            # A discriminated union names the chosen member by its tag: choose it.
            members = [t for t in _unwrap(tp) if isinstance(t, type) and issubclass(t, BaseModel)]
            chosen = [t for t in members if _tag(t) == part]
            if chosen:
                tp = chosen[0]
                continue
        path.append(part)
        tp = nxt
    return tp, path


def _tag(model: type[BaseModel]) -> Any:
    f = model.model_fields.get("kind")
    args = typing.get_args(f.annotation) if f else ()
    return args[0] if len(args) == 1 else None


def _keys(tp: Any) -> list[str]:
    out = []
    for t in _unwrap(tp):
        if isinstance(t, type) and issubclass(t, BaseModel):
            out += [f.alias or n for n, f in t.model_fields.items()]
    return sorted(set(out))


def _alias(path: list[Any], root: type[BaseModel]) -> str:
    """The path with field names as the user writes them (aliases)."""
    out: list[Any] = []
    tp: Any = root
    for part in path:
        alias = part
        for t in _unwrap(tp):
            if isinstance(t, type) and issubclass(t, BaseModel) and isinstance(part, str) and part in t.model_fields:
                alias = t.model_fields[part].alias or part
        out.append(alias)
        tp = _step(tp, part)
        if tp is None:
            break
    out += path[len(out):]
    return format_path(out)


# ---------------------------------------------------------------- messages

_show = show


_CHOICE_KINDS = ("literal_error", "union_tag_invalid", "union_tag_not_found")
_LIMIT_KINDS = ("greater_than_equal", "greater_than", "less_than_equal", "less_than", "string_too_long",
                "too_short", "string_too_short")


def _message(err: ErrorDetails, parent: Any) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    value: Any = err.get("input")
    if kind == "missing":
        return "is required but missing"
    if kind == "extra_forbidden":
        return _unknown_field(str(err["loc"][-1]), _keys(parent))
    if kind in _CHOICE_KINDS:
        return _choice_message(kind, ctx, value)
    if kind in _LIMIT_KINDS:
        return _limit_message(kind, ctx, value)
    if kind == "string_pattern_mismatch":
        words = _PATTERN_WORDS.get(ctx.get("pattern", ""))
        return f"{_show(value)} is not valid: use {words}" if words else \
            f"{_show(value)} does not have the required form {ctx.get('pattern')}"
    if kind == "value_error":
        return str(ctx.get("error", err["msg"]))
    if kind in _TYPE_WORDS:
        return f"{_show(value)} should be {_TYPE_WORDS[kind]}"
    return f"{_show(value)}: {err['msg']}"


# The GPUs of one pod go by a different name in different workload kinds (tgi and t5-inference:
# per replica; serving: per pod; finetune and training: per node): too far apart for the nearest-name
# hint, so a user writing one kind's name in another kind gets this kind's.
GPU_COUNT_FIELDS = ("gpus", "accelerators", "gpusPerNode")


def _unknown_field(name: str, allowed: list[str]) -> str:
    other = [f for f in GPU_COUNT_FIELDS if f in allowed and f != name] if name in GPU_COUNT_FIELDS else []
    if other:
        return (f"unknown field {name!r}; did you mean {other[0]!r}? (the GPUs of a pod are {other[0]!r} "
                f"in this workload kind)")
    return unknown("field", name, allowed, listed="allowed")


def _choice_message(kind: str, ctx: dict, value: Any) -> str:
    """A value outside a fixed set: a literal field's values or a discriminated union's kinds."""
    if kind == "literal_error":
        allowed = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        if allowed and isinstance(value, str):
            return f"{_show(value)} is not allowed" + hint(value, allowed, "allowed")
        return f"{_show(value)} is not allowed (allowed: {ctx.get('expected', '').replace(chr(39), '')})"
    tags = ctx.get("expected_tags", "").replace("'", "")
    if kind == "union_tag_not_found":
        return f"needs `kind` (one of: {tags})"
    return unknown("kind", ctx.get("tag"), tags.split(", "))


def _limit_message(kind: str, ctx: dict, value: Any) -> str:
    """A number out of its bounds, or a string or list of the wrong length."""
    if kind in ("greater_than_equal", "greater_than"):
        bound = ctx.get("ge", ctx.get("gt"))
        if kind == "greater_than_equal":
            return f"{_show(value)} is too small: the least allowed is {bound}"
        return f"{_show(value)} is too small: it must be more than {bound}"
    if kind in ("less_than_equal", "less_than"):
        bound = ctx.get("le", ctx.get("lt"))
        return f"{_show(value)} is too large: the most allowed is {bound}"
    if kind == "string_too_long":
        return f"{_show(value)} is {len(value)} characters; at most {ctx.get('max_length')} are allowed"
    return f"needs at least {ctx.get('min_length')} {'entry' if kind == 'too_short' else 'character'}" + \
        ("" if ctx.get("min_length") == 1 else "s")


def translate(error: ValidationError, root: type[BaseModel]) -> list[Problem]:
    out = []
    for err in error.errors(include_url=False):
        loc = tuple(err["loc"])
        if err["type"] == "extra_forbidden":
            parent, path = _resolve(root, loc[:-1])
            path = path + [loc[-1]]
        else:
            parent, path = _resolve(root, loc[:-1]) if loc else (root, [])
            _, path = _resolve(root, loc)
        out.append(Problem(_alias(path, root), _message(err, parent)))
    return out


# ---------------------------------------------------------------- salvage

_SAMPLES = ("a", "b1", "v0.0.0", "1.33", "0", "x.y", "sha256:" + "0" * 64, "/a", "0.0", "1Gi", "60s")


def _stand_in(tp: Any, err: ErrorDetails, variant: int) -> tuple[bool, Any]:
    """A valid value for the field, different per variant; (False, None) when none is found."""
    ctx = err.get("ctx") or {}
    for key in ("ge", "gt", "le", "lt"):
        if key in ctx:
            bound = ctx[key]
            step = {"ge": variant, "gt": 1 + variant, "le": -variant, "lt": -1 - variant}[key]
            candidates: list[Any] = [bound + step]
            break
    else:
        candidates = [s for s in (_SAMPLES[variant:] + _SAMPLES[:variant])] + [1 + variant, True, [], {}]
    if tp is None:
        return False, None
    adapter = TypeAdapter(tp)
    for value in candidates:
        try:
            adapter.validate_python(value, strict=True)
        except (ValidationError, TypeError, ValueError):
            continue
        return True, value
    return False, None


def _set(raw: Any, loc: tuple, value: Any, delete: bool = False) -> bool:
    node = raw
    for part in loc[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    try:
        if delete:
            del node[loc[-1]]
        else:
            node[loc[-1]] = value
    except (KeyError, IndexError, TypeError):
        return False
    return True


def salvage(raw: dict, error: ValidationError, root: type[BaseModel], variant: int) -> Salvaged | None:
    """A copy of raw with every invalid value replaced by a valid stand-in, or None. A list
    item with a value no stand-in replaces (an unknown workload kind, a mapping given as a
    string) is left out, and Salvaged.restore puts the cross-checks' paths back."""
    fixed = copy.deepcopy(raw)
    dropped: set[tuple] = set()
    for err in error.errors(include_url=False):
        loc = tuple(err["loc"])
        raw_loc = tuple(p for i, p in enumerate(loc) if not _is_tag(root, loc, i))
        if err["type"] == "extra_forbidden":
            ok = _set(fixed, raw_loc, None, delete=True)
        else:
            tp, _ = _resolve(root, loc)
            found, value = _stand_in(tp, err, variant)
            ok = found and _set(fixed, raw_loc, value)
        if not ok:
            item = _list_item(fixed, raw_loc)
            if item is None or item[:-1] not in LEAVES:
                return None
            dropped.add(item)
    for item in sorted(dropped, key=lambda x: x[-1], reverse=True):
        if any(item[:len(d)] == d for d in dropped if d != item and len(d) < len(item)):
            continue   # inside an item left out already
        _set(fixed, item, None, delete=True)
    return Salvaged(fixed, frozenset(dropped))


# Lists whose items nothing else in the spec refers to: leaving one out adds no problem of its own
# (a queue entry or a namespace left out would: "profile 'x' is in no queue entry").
LEAVES = {("workloads",)}


def _list_item(raw: Any, loc: tuple) -> tuple | None:
    """The path of the outermost list item that holds loc, when it is inside one."""
    node = raw
    for i, part in enumerate(loc):
        if isinstance(node, list) and isinstance(part, int) and part < len(node):
            return loc[:i + 1]
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return None


@dataclass(frozen=True)
class Salvaged:
    raw: dict
    dropped: frozenset[tuple]   # list items left out, by their path in the spec as written

    def restore(self, problem: Problem) -> Problem:
        """A cross-check problem with the salvaged copy's list indexes turned back into the spec's
        (in its path and its message: "which workloads[1] also creates")."""
        text = problem.path + "\n" + problem.message
        for lp in sorted({d[:-1] for d in self.dropped}, key=repr):
            removed = sorted(d[-1] for d in self.dropped if d[:-1] == lp)
            pattern = re.compile(r"(?<![\w\]])" + re.escape(format_path(list(lp))) + r"\[(\d+)\]")

            def remap(m: re.Match, removed: list[int] = removed) -> str:
                k = int(m.group(1))
                for d in removed:   # the copy's item k is the spec's k + the items left out before it
                    if d <= k:
                        k += 1
                return m.group(0)[:m.start(1) - m.start(0)] + f"{k}]"
            text = pattern.sub(remap, text)
        path, _, message = text.partition("\n")
        return Problem(path, message)


def _is_tag(root: type[BaseModel], loc: tuple, i: int) -> bool:
    """Whether loc[i] is a discriminator tag pydantic put in loc (not a key of the input)."""
    part = loc[i]
    tp, _ = _resolve(root, loc[:i])
    return _step(tp, part) is None and isinstance(part, str) and any(
        isinstance(t, type) and issubclass(t, BaseModel) and _tag(t) == part for t in _unwrap(tp))
