"""The JSON cdk8s writes for an API object, computed in Python.

The rules are cdk8s 2.70's and cdk8s-plus-33 2.5's (their lib/*.js), kept exact
because the output must not change by a byte:

- A typed object (`KubeDeployment`, ...): ApiObject.toJson sanitizes its props
  (keys sorted, null and undefined dropped, `sanitizeValue` in lib/_util.js),
  the metadata also drops empty objects and arrays (ApiObjectMetadataDefinition),
  and toJson_<Kind>Props writes apiVersion, kind, metadata, then the fields in
  their declared order, which json2jsii made alphabetical: all keys sorted.
- A custom resource (ApiObject + one JsonPatch `add` per body key): apiVersion,
  kind, the sanitized metadata, then the body's keys in the builder's order,
  their values as given (patches are applied after sanitizing).
- Everything crosses JSON on the way to Node and back: 2.0 comes back as 2, and
  a JavaScript object lists integer-like keys ("0", "10") first, in numeric order.

tests/test_render.py holds these rules to cdk8s itself on fixture specs."""
from __future__ import annotations

from typing import Any

from .kube import ApiObject, Struct, _Value, json_name

_ARRAY_INDEX_LIMIT = 2 ** 32 - 1


def _index_like(key: str) -> bool:
    """A key JavaScript orders first: a canonical array index."""
    return key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and int(key) < _ARRAY_INDEX_LIMIT


_orders: dict[tuple[bool, tuple[str, ...]], list[str]] = {}   # objects of one shape are many


def _js_order(keys: list[str], sort: bool) -> list[str]:
    """Object.keys order of an object built with `keys` inserted in this order (sorted
    first, as Array.prototype.sort compares UTF-16 code units, when `sort`)."""
    shape = (sort, tuple(keys))
    order = _orders.get(shape)
    if order is None:
        if len(_orders) >= 100_000:
            _orders.clear()
        order = _orders[shape] = _order(keys, sort)
    return order


def _order(keys: list[str], sort: bool) -> list[str]:
    if sort:
        keys = sorted(keys) if all(k.isascii() for k in keys) else sorted(keys, key=lambda k: k.encode("utf-16-be"))
    if any(k[:1].isdigit() for k in keys):
        first = sorted((k for k in keys if _index_like(k)), key=int)
        if first:
            keys = first + [k for k in keys if not _index_like(k)]
    return keys


def _number(v: float) -> float | int:
    return int(v) if v.is_integer() else v


def typed(value: Any, filter_empty: bool = False) -> Any:
    """A typed prop value as sanitizeValue + toJson_* write it (keys sorted)."""
    if isinstance(value, Struct):
        fields = {json_name(k): v for k, v in value.fields.items()}
        return _mapping(fields, filter_empty)
    if isinstance(value, dict):
        return _mapping(value, filter_empty)
    if isinstance(value, (list, tuple)):
        if filter_empty and not value:
            return None
        return [typed(v, filter_empty) for v in value]
    if isinstance(value, _Value):
        return typed(value.value)
    if type(value) is float:
        return _number(value)
    return value


def _mapping(d: dict, filter_empty: bool) -> dict | None:
    out = {}
    for k in _js_order(list(d), sort=True):
        v = d[k]
        if v is None:
            continue
        v = typed(v, filter_empty)
        if v is None:
            continue
        out[k] = v
    if filter_empty and not out:
        return None
    return out


def plain(value: Any) -> Any:
    """A JSON value after a trip through jsii and Node: key order kept but for integer-like
    keys, null map values dropped (jsii leaves them out)."""
    if isinstance(value, dict):
        return {k: plain(value[k]) for k in _js_order(list(value), sort=False) if value[k] is not None}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if type(value) is float:
        return _number(value)
    return value


def metadata(meta: Any) -> dict:
    return typed(meta, filter_empty=True) or {}


def typed_object(obj: ApiObject) -> dict:
    api_version, kind = obj.gvk
    props = obj.props
    out: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    if "metadata" in props:
        out["metadata"] = metadata(props["metadata"])
    rest = {json_name(k): v for k, v in props.items() if k != "metadata"}
    for k, v in (_mapping(rest, False) or {}).items():
        out[k] = v
    return out


def custom_object(body: dict, meta_keys: tuple[str, ...]) -> dict:
    meta = body["metadata"]
    out: dict[str, Any] = {"apiVersion": body["apiVersion"], "kind": body["kind"],
                           "metadata": metadata({k: meta[k] for k in meta_keys if k in meta})}
    for key, value in body.items():
        if key not in ("apiVersion", "kind", "metadata") and value is not None:
            out[key] = plain(value)
    return out
