"""The reference rendering: the recorded objects created through cdk8s and
cdk8s-plus-33 in Node, one jsii call at a time, as synth did before
generator/builders/render.py. Slow; used by tests/test_render.py (and CDK8S_RENDER=1)."""
from __future__ import annotations

import itertools
import os
from typing import Any

import cdk8s
import cdk8s_plus_33.k8s as real

from . import kube as k8s

_app = cdk8s.App(outdir=os.devnull)   # never synthesized: only to_json() is used
_ids = itertools.count()


def _real(value: Any) -> Any:
    if isinstance(value, k8s.Struct):
        return getattr(real, type(value).__name__)(**{f: _real(v) for f, v in value.fields.items()})
    if isinstance(value, k8s.Quantity | k8s.IntOrString):
        cls = real.Quantity if isinstance(value, k8s.Quantity) else real.IntOrString
        return cls.from_string(value.value) if isinstance(value.value, str) else cls.from_number(value.value)
    if isinstance(value, dict):
        return {k: _real(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_real(v) for v in value]
    return value


def manifests(objects: list) -> list[dict]:
    from .cdk import _META_KEYS, Custom
    chart = cdk8s.Chart(_app, f"c{next(_ids)}", disable_resource_name_hashes=True)
    for obj in objects:
        if isinstance(obj, Custom):
            body = obj.body
            meta = body["metadata"]
            api = cdk8s.ApiObject(
                chart, obj.id, api_version=body["apiVersion"], kind=body["kind"],
                metadata=cdk8s.ApiObjectMetadata(**{k: meta[k] for k in _META_KEYS if k in meta}))
            for key, value in body.items():
                if key not in ("apiVersion", "kind", "metadata"):
                    api.add_json_patch(cdk8s.JsonPatch.add(f"/{key}", value))
        else:
            getattr(real, obj.kind_class)(chart, obj.id, **{f: _real(v) for f, v in obj.props.items()})
    return list(chart.to_json())
