"""Custom resources as the API server checks them beyond their OpenAPI schema (SC001) and CEL
rules (CE001): the uniqueness of the items of lists the CRD declares `x-kubernetes-list-type: map`
(by their `x-kubernetes-list-map-keys`) or `set` (whole items). Kubernetes v1.31
k8s.io/apiextensions-apiserver pkg/apiserver/schema/listtype/validation.go ValidateListSetsAndMaps,
which the custom resource strategy's Validate runs on create (pkg/registry/customresource/strategy.go)
on the object as defaulted, so a key left to its CRD default (a port's protocol) counts with it.
Two JobSet replicatedJobs or Kueue admission checks of one name, two Topology levels of one label:
the API server answers `Duplicate value`."""
from __future__ import annotations

import json

from .. import apierrors as E
from ..findings import ERROR
from . import hit, rule

# The pruned schema of each CRD version, by the identity of its (cached, shared) openAPIV3Schema:
# only the branches that lead to a list-type map or set, so objects are walked along those alone.
_PRUNED: dict[int, tuple[object, dict | None]] = {}


def _prune(schema) -> dict | None:
    """{list: (type, keys), props: {name: node}, extra: node, items: node} for the parts of a
    structural schema that hold a list-type map or set; None where there is none."""
    if not isinstance(schema, dict):
        return None
    node: dict = {}
    if schema.get("x-kubernetes-list-type") in ("map", "set"):
        node["list"] = (schema["x-kubernetes-list-type"], tuple(schema.get("x-kubernetes-list-map-keys") or ()))
    props = {k: p for k, s in (schema.get("properties") or {}).items() if (p := _prune(s)) is not None}
    if props:
        node["props"] = props
    extra = _prune(schema.get("additionalProperties"))
    if extra is not None:
        node["extra"] = extra
    items = _prune(schema.get("items"))
    if items is not None:
        node["items"] = items
    return node or None


def _pruned(schema: dict) -> dict | None:
    cached = _PRUNED.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _PRUNED[id(schema)] = (schema, _prune(schema))
    return cached[1]


def _non_unique(values: list) -> list[int]:
    """validateListSet: the index of each value's first repeat (compound values compared as JSON)."""
    seen: dict = {}
    out = []
    for i, v in enumerate(values):
        k = json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else (type(v).__name__, v)
        seen[k] = seen.get(k, 0) + 1
        if seen[k] == 2:
            out.append(i)
    return out


_UNSET = object()   # an item without the key field (upstream's unspecifiedKeyValue)


def _list_errors(kind: str, keys: tuple, items: list, at: tuple) -> list[tuple[tuple, str]]:
    """validateListSetsAndMapsArray for one list: [(path, message)]. An item of a list-type map that
    is not an object is left to the schema check (SC001 says so first)."""
    if kind == "set":
        return [(at + (i,), E.duplicate(items[i])) for i in _non_unique(items)]
    if len(keys) == 1:
        found = [x.get(keys[0], _UNSET) if isinstance(x, dict) else _UNSET for x in items]
        return [(at + (i,), E.duplicate({} if found[i] is _UNSET else {keys[0]: found[i]}))
                for i in _non_unique(found)]
    compound = [{k: x[k] for k in keys if k in x} if isinstance(x, dict) else {} for x in items]
    return [(at + (i,), E.duplicate(compound[i])) for i in _non_unique(compound)]


def _walk(node: dict, value, at: tuple, out: list) -> None:
    """ValidateListSetsAndMaps / validationListSetAndMaps along the pruned schema."""
    if isinstance(value, list):
        if "list" in node and len(value) > 1:
            list_type, keys = node["list"]
            out.extend(_list_errors(list_type, keys, value, at))
        if "items" in node:
            for i, v in enumerate(value):
                _walk(node["items"], v, at + (i,), out)
    elif isinstance(value, dict):
        props = node.get("props") or {}
        for k, v in value.items():
            if k in props:
                _walk(props[k], v, at + (k,), out)
            elif "extra" in node:
                _walk(node["extra"], v, at + (k,), out)


@rule("AS390", ERROR, "a custom resource list that its CRD declares a list-type map or set holds two items with "
      "the same key (or two equal items): two JobSet replicatedJobs or Kueue admission checks of one name "
      "(API server: apiextensions-apiserver ValidateListSetsAndMaps)",
      "give each item of the list its own key (the x-kubernetes-list-map-keys the CRD names, often `name`)")
def list_sets_and_maps(model):
    schemas = model.schemas
    if schemas is None:
        return
    for o in model.objects:
        api = o.body.get("apiVersion")
        if not isinstance(api, str) or not isinstance(o.kind, str):
            continue
        schema = schemas.crd_schema(api, o.kind)
        node = _pruned(schema) if isinstance(schema, dict) else None
        if node is None:
            continue
        found: list = []
        _walk(node, o.body, (), found)
        for path, message in found:
            yield hit(o, path, message)
