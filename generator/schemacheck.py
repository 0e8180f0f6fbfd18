"""Strict schema validation of Kubernetes objects.

Core kinds: kubernetes-validate's bundled JSON schemas (strict variant) for
the pinned Kubernetes minor, with validators built once and cached (the
package's own validate() reloads a 1.3 MB file per call).

Custom resources: the upstream CRDs' openAPIV3Schema, made strict: every
object schema with `properties` gets `additionalProperties: false` unless it
preserves unknown fields, since CRDs never say so and a misspelt field would
otherwise pass. CEL rules (x-kubernetes-validations) are not evaluated."""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import jsonschema
from referencing import Registry, Resource

from . import yamlio


@dataclass(frozen=True)
class SchemaError:
    path: str
    message: str


def _core_dir(k8s_minor: str) -> Path:
    import kubernetes_validate

    root = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    d = root / f"v{k8s_minor}.0-local-strict"
    if not d.is_dir():
        raise ValueError(f"no bundled core schemas for Kubernetes {k8s_minor} in kubernetes-validate")
    return d


@lru_cache(maxsize=None)
def _core_registry(k8s_minor: str) -> Registry:
    defs = json.loads((_core_dir(k8s_minor) / "_definitions.json").read_text())
    return Resource.from_contents(defs) @ Registry()


def _core_file(api_version: str, kind: str) -> str:
    group, _, version = api_version.rpartition("/")
    prefix = group.split(".")[0] + "-" if group else ""
    return f"{kind.lower()}-{prefix}{version}.json"


@lru_cache(maxsize=None)
def _core_validator(k8s_minor: str, api_version: str, kind: str):
    path = _core_dir(k8s_minor) / _core_file(api_version, kind)
    if not path.exists():
        return None
    schema = json.loads(path.read_text())
    return jsonschema.Draft202012Validator(schema, registry=_core_registry(k8s_minor))


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


@lru_cache(maxsize=None)
def _crd_index(crd_dirs: tuple[str, ...]) -> dict:
    """(apiVersion, kind) -> (file, raw schema, served, deprecated) for every CRD under the dirs."""
    index = {}
    for d in crd_dirs:
        for path in sorted(Path(d).rglob("*.yaml")):
            for doc in yamlio.load_all(path.read_text()):
                if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                    continue
                spec = doc["spec"]
                for v in spec["versions"]:
                    key = (f"{spec['group']}/{v['name']}", spec["names"]["kind"])
                    index[key] = (str(path), v.get("schema", {}).get("openAPIV3Schema", {}),
                                  v.get("served", True), v.get("deprecated", False), spec["scope"])
    return index


@lru_cache(maxsize=None)
def _crd_validator(crd_dirs: tuple[str, ...], api_version: str, kind: str):
    entry = _crd_index(crd_dirs).get((api_version, kind))
    if entry is None:
        return None
    schema = strictify(entry[1])
    # metadata is checked by the API server, not by the CRD schema; keep it open.
    schema.setdefault("properties", {})["metadata"] = {"type": "object"}
    return jsonschema.Draft7Validator(schema)


class SchemaSet:
    """Validators for one Kubernetes minor plus a set of CRD directories."""

    def __init__(self, k8s_minor: str, crd_dirs: list[str | Path]):
        self.k8s_minor = k8s_minor
        self.crd_dirs = tuple(sorted(str(Path(d)) for d in crd_dirs))

    def crd_info(self, api_version: str, kind: str):
        """(file, served, deprecated, scope) of the CRD version serving this object, or None."""
        entry = _crd_index(self.crd_dirs).get((api_version, kind))
        return None if entry is None else (entry[0], entry[2], entry[3], entry[4])

    def validator(self, api_version: str, kind: str):
        v = _core_validator(self.k8s_minor, api_version, kind)
        if v is None:
            v = _crd_validator(self.crd_dirs, api_version, kind)
        return v

    def errors(self, obj: dict) -> list[SchemaError]:
        """Every schema violation of obj; an object without a schema is itself an error."""
        api, kind = obj.get("apiVersion"), obj.get("kind")
        if not api or not kind:
            return [SchemaError("", "object has no apiVersion or kind")]
        v = self.validator(api, kind)
        if v is None:
            return [SchemaError("", f"no schema for {kind} {api} (Kubernetes {self.k8s_minor} or the pinned CRDs)")]
        info = self.crd_info(api, kind)
        out = []
        if info is not None and not info[1]:
            out.append(SchemaError("apiVersion", f"{api} {kind} is not served by the pinned release"))
        for e in sorted(v.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))):
            path = ".".join(str(p) for p in e.absolute_path)
            out.append(SchemaError(path, e.message))
        return out
