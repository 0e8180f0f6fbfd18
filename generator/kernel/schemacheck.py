"""Strict schema validation of Kubernetes objects.

Core kinds: kubernetes-validate's bundled JSON schemas (strict variant) for
the pinned Kubernetes minor, with validators built once and cached (the
package's own validate() reloads a 1.3 MB file per call).

Custom resources: the upstream CRDs' openAPIV3Schema, made strict: every
object schema with `properties` gets `additionalProperties: false` unless it
preserves unknown fields, since CRDs never say so and a misspelt field would
otherwise pass. CEL rules (x-kubernetes-validations) are evaluated by
generator/validate/cel.py, not here.

Patterns are Go RE2 regular expressions (the API server compiles them with Go's
regexp): they run on RE2 (google-re2), not Python's `re`, which refuses some
(`^(?i)...` in Kueue's AdmissionCheck) and accepts others RE2 does not.
Core quantities (resource.Quantity: a string or number in the bundled
schemas) are checked as Kubernetes quantities.

The CRD index comes either from every YAML file under some directories, or
from an explicit list of hash-verified files (the validator's pinned files),
whose parsed index is cached as JSON by content hash: parsing 7 MB of CRD
YAML takes about 0.5 s, reading the cache about 20 ms."""
from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Sequence
from functools import cache, lru_cache
from pathlib import Path

import jsonschema
import re2
from referencing import Registry, Resource

from . import diskcache, durationfmt, quantity, yamlio
from .errors import Problem, problem

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False   # a pattern RE2 cannot compile is skipped, not printed


@lru_cache(maxsize=4096)
def _re2(pattern: str):
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error:
        return None   # the API server would refuse such a CRD; nothing to hold the object to


def _pattern(validator, pattern, instance, schema):
    if not isinstance(instance, str):
        return
    compiled = _re2(pattern)
    if compiled is not None and compiled.search(instance) is None:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


QUANTITY_KEYWORD = "x-generator-quantity"


def _quantity(validator, enabled, instance, schema):
    if not enabled or instance is None:
        return
    try:
        value = quantity.parse(instance)
    except ValueError:
        yield jsonschema.ValidationError(f"{instance!r} is not a quantity (for example 500m, 2, 1.5, 16Gi, 1e3)")
        return
    if value.copy_abs() > quantity.MAX_QUANTITY:   # copy_abs: exact, no context (1e999999999 overflows abs())
        yield jsonschema.ValidationError(quantity.too_large(instance))


_CoreValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator,
                                              {"pattern": _pattern, QUANTITY_KEYWORD: _quantity})


def _format(validator, fmt, instance, schema):
    """The CRD string formats the API server checks (apiextensions formats.go, kube-openapi strfmt): only
    `duration` is ported, the one a pinned CRD uses on a field a manifest sets (kernel/durationfmt.py)."""
    if fmt == "duration" and isinstance(instance, str) and not durationfmt.is_duration(instance):
        yield jsonschema.ValidationError(f"{instance!r} in body must be of type duration (a Go duration such as "
                                         f"30s or 1m30s)")


_CrdValidator = jsonschema.validators.extend(jsonschema.Draft7Validator, {"pattern": _pattern, "format": _format})


def _core_dir(k8s_minor: str) -> Path:
    import kubernetes_validate

    root = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    d = root / f"v{k8s_minor}.0-local-strict"
    if not d.is_dir():
        raise ValueError(f"no bundled core schemas for Kubernetes {k8s_minor} in kubernetes-validate")
    return d


_QUANTITY_DEF = "io.k8s.apimachinery.pkg.api.resource.Quantity"


@cache
def _core_defs(k8s_minor: str) -> dict:
    with yamlio.gc_paused():   # 1.4 MB of JSON: see yamlio.gc_paused
        defs = json.loads((_core_dir(k8s_minor) / "_definitions.json").read_text())
    if _QUANTITY_DEF in defs.get("$defs", {}):
        defs["$defs"][_QUANTITY_DEF][QUANTITY_KEYWORD] = True
    return defs


_INLINED: dict[str, set[int]] = {}   # per Kubernetes minor: ids of the schema nodes inlined already


@cache
def _core_registry(k8s_minor: str) -> Registry:
    return Resource.from_contents(_core_defs(k8s_minor)) @ Registry()


# Where the bundled core schemas point into their definitions (a kind's file, and the
# definitions themselves), and the keywords under which they hold schemas.
_DEF_REFS = ("/api/_definitions.json#/$defs/", "#/$defs/")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
_SCHEMA_ONE = ("additionalProperties", "items", "not", "if", "then", "else", "contains", "propertyNames",
               "unevaluatedProperties", "unevaluatedItems")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
# Keywords beside a $ref that validate nothing (draft 2020-12 annotations, Kubernetes extensions).
_ANNOTATIONS = ("description", "title", "default", "examples", "format", "deprecated")


def _inline_refs(schema: dict, defs: dict, done: set[int]) -> None:
    """Every `{"$ref": <a definition>}` under `schema` replaced by the definition itself (the
    same dict: a recursive definition becomes a cycle, which validation follows only as deep as
    the object goes). A reference is what jsonschema spent a third of the core schema check
    on, looking it up again at each use; what the validator finds is the same, since the bundled
    schemas put nothing beside a $ref but annotations (left out with it). A $ref with anything
    else beside it, or to something other than a definition, stays. The definitions a kind uses
    are inlined as its validator is built, each once (`done`: the nodes gone through already)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if id(node) in done:
            continue
        done.add(id(node))
        for key in _SCHEMA_MAPS:
            value = node.get(key)
            if isinstance(value, dict):
                for name, sub in value.items():
                    value[name] = _target(sub, defs)
                stack += [v for v in value.values() if isinstance(v, dict)]
        for key in _SCHEMA_ONE:
            if isinstance(node.get(key), dict):
                node[key] = _target(node[key], defs)
                stack.append(node[key])
        for key in _SCHEMA_LISTS:
            value = node.get(key)
            if isinstance(value, list):
                value[:] = [_target(v, defs) for v in value]
                stack += [v for v in value if isinstance(v, dict)]


def _target(node, defs: dict):
    """The definition a schema node only refers to (following a chain of such), else the node."""
    seen = 0
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and seen < 64 \
            and all(k == "$ref" or k in _ANNOTATIONS or k.startswith("x-kubernetes-") for k in node):
        ref = node["$ref"]
        prefix = next((p for p in _DEF_REFS if ref.startswith(p)), None)
        target = defs.get(ref[len(prefix):]) if prefix else None
        if not isinstance(target, dict):
            return node
        node, seen = target, seen + 1
    return node


@cache
def _core_files(k8s_minor: str) -> frozenset[str]:
    return frozenset(p.name for p in _core_dir(k8s_minor).glob("*.json"))


def _core_file(api_version: str, kind: str) -> str:
    group, _, version = api_version.rpartition("/")
    prefix = group.split(".")[0] + "-" if group else ""
    return f"{kind.lower()}-{prefix}{version}.json"


@cache
def _core_validator(k8s_minor: str, api_version: str, kind: str):
    path = _core_dir(k8s_minor) / _core_file(api_version, kind)
    if not path.exists():
        return None
    schema = json.loads(path.read_text())
    _inline_refs(schema, _core_defs(k8s_minor).get("$defs", {}), _INLINED.setdefault(k8s_minor, set()))
    return _CoreValidator(schema, registry=_core_registry(k8s_minor))


def strictify(schema: dict) -> dict:
    """Deep copy of an openAPIV3Schema with closed objects."""
    schema = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if (node.get("type") == "object" and "properties" in node
                    and "additionalProperties" not in node
                    and not node.get("x-kubernetes-preserve-unknown-fields")):
                node["additionalProperties"] = False
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return schema


def _index_file(path: str, index: dict) -> None:
    for doc in yamlio.load_all(Path(path).read_text()):
        if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
            continue
        spec = doc["spec"]
        for v in spec["versions"]:
            key = (f"{spec['group']}/{v['name']}", spec["names"]["kind"])
            index[key] = (path, v.get("schema", {}).get("openAPIV3Schema", {}),
                          v.get("served", True), v.get("deprecated", False), spec["scope"])


@cache
def _crd_index(crd_dirs: tuple[str, ...]) -> dict:
    """(apiVersion, kind) -> (file, raw schema, served, deprecated, scope) for every CRD under the dirs."""
    index: dict = {}
    for d in crd_dirs:
        for path in sorted(Path(d).rglob("*.yaml")):
            _index_file(str(path), index)
    return index


_CACHE_FORMAT = "crd-index-1"


@cache
def _pinned_index(files: tuple[tuple[str, str], ...]) -> dict:
    """The index of exactly these (path, sha256) files. The caller has checked the hashes,
    so the key (paths and hashes) names the content; a missing or bad cache is rebuilt."""
    cached = diskcache.entry(_CACHE_FORMAT, hashlib.sha256(json.dumps([_CACHE_FORMAT, files]).encode()).hexdigest())
    text = diskcache.read(cached)
    if text is not None:
        try:
            return {(api, kind): tuple(rest) for api, kind, *rest in json.loads(text)}
        except (ValueError, TypeError):
            pass
    index: dict = {}
    for path, _ in files:
        _index_file(path, index)
    diskcache.keep(cached, json.dumps([[api, kind, *rest] for (api, kind), rest in index.items()]))
    return index


def _index(source: tuple) -> dict:
    kind, value = source
    return _pinned_index(value) if kind == "files" else _crd_index(value)


@cache
def _crd_validator(source: tuple, api_version: str, kind: str):
    entry = _index(source).get((api_version, kind))
    if entry is None:
        return None
    schema = strictify(entry[1])
    # metadata is checked by the API server, not by the CRD schema; keep it open.
    schema.setdefault("properties", {})["metadata"] = {"type": "object"}
    return _CrdValidator(schema)


class SchemaSet:
    """Validators for one Kubernetes minor plus a set of CRD directories, or an
    explicit list of (path, sha256) CRD files already checked by the caller."""

    def __init__(self, k8s_minor: str, crd_dirs: Sequence[str | Path] = (),
                 crd_files: tuple[tuple[str, str], ...] | None = None):
        self.k8s_minor = k8s_minor
        self.crd_dirs = tuple(sorted(str(Path(d)) for d in crd_dirs))
        self._source = ("files", tuple(crd_files)) if crd_files is not None else ("dirs", self.crd_dirs)

    def crd_info(self, api_version: str, kind: str):
        """(file, served, deprecated, scope) of the CRD version serving this object, or None."""
        entry = _index(self._source).get((api_version, kind))
        return None if entry is None else (entry[0], entry[2], entry[3], entry[4])

    def crd_versions(self, group: str, kind: str) -> list[tuple[str, bool, bool]]:
        """(apiVersion, served, deprecated) of every version of a custom resource kind."""
        return sorted((api, e[2], e[3]) for (api, k), e in _index(self._source).items()
                      if k == kind and api.rpartition("/")[0] == group)

    def core_kind_known(self, group: str, kind: str) -> bool:
        """Does the bundled core schema set have this kind in this group, at any version?"""
        prefix = f"{kind.lower()}-{group.split('.')[0] + '-' if group else ''}"
        return any(n.startswith(prefix) for n in _core_files(self.k8s_minor))

    def crd_schema(self, api_version: str, kind: str) -> dict | None:
        """The CRD's own openAPIV3Schema for this version (not closed), or None for core kinds."""
        entry = _index(self._source).get((api_version, kind))
        return None if entry is None else entry[1]

    def validator(self, api_version: str, kind: str):
        v = _core_validator(self.k8s_minor, api_version, kind)
        if v is None:
            v = _crd_validator(self._source, api_version, kind)
        return v

    def errors(self, obj: dict) -> list[Problem]:
        """Every schema violation of obj; an object without a schema is itself an error."""
        api, kind = obj.get("apiVersion"), obj.get("kind")
        if not api or not kind:
            return [Problem("", "object has no apiVersion or kind")]
        v = self.validator(api, kind)
        if v is None:
            return [Problem("", f"no schema for {kind} {api} (Kubernetes {self.k8s_minor} or the pinned CRDs)")]
        info = self.crd_info(api, kind)
        out = []
        if info is not None and not info[1]:
            out.append(Problem("apiVersion", f"{api} {kind} is not served by the pinned release"))
        for e in sorted(v.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))):
            out.append(problem(e.absolute_path, e.message))
        return out
