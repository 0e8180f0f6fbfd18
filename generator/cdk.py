"""The cdk8s side: one Chart per output directory, typed `Kube*` classes for
core kinds (see core.py), and `ApiObject`s for custom resources whose bodies
come from the project's own builders (kueue.py, ...).

Charts never get a namespace: cdk8s would stamp it on cluster-scoped objects.
Every object carries an explicit metadata.name, so no hashes are added."""
from __future__ import annotations

import functools
import os

import cdk8s
import cdk8s_plus_33.k8s as k8s

_META_KEYS = ("name", "namespace", "labels", "annotations")


def _share_values(cls) -> None:
    """Quantity and IntOrString are immutable values, yet every from_string /
    from_number call is a round trip to the Node process (most of all jsii calls
    in a large synth). One object per distinct value, shared by every prop that
    uses it; typed=True keeps 1 and 1.0 apart."""
    for name in ("from_string", "from_number"):
        factory = getattr(cls, name)
        if not hasattr(factory, "cache_info"):
            setattr(cls, name, staticmethod(functools.lru_cache(maxsize=None, typed=True)(factory)))


_share_values(k8s.Quantity)
_share_values(k8s.IntOrString)


def new_app() -> cdk8s.App:
    # outdir is never written: synth collects objects with Chart.to_json().
    return cdk8s.App(outdir=os.devnull)


def chart(app: cdk8s.App, name: str) -> cdk8s.Chart:
    return cdk8s.Chart(app, name.replace("/", "--"), disable_resource_name_hashes=True)


def object_id(kind: str, name: str, namespace: str | None) -> str:
    return f"{kind}.{namespace or '_'}.{name}"


def custom(scope, body: dict) -> cdk8s.ApiObject:
    """A custom resource from a plain body built by a typed builder."""
    meta = body["metadata"]
    unknown = set(meta) - set(_META_KEYS)
    if unknown:
        raise ValueError(f"unsupported metadata fields {sorted(unknown)} on {body['kind']}/{meta['name']}")
    obj = cdk8s.ApiObject(
        scope, object_id(body["kind"], meta["name"], meta.get("namespace")),
        api_version=body["apiVersion"], kind=body["kind"],
        metadata=cdk8s.ApiObjectMetadata(**{k: meta[k] for k in _META_KEYS if k in meta}),
    )
    for key, value in body.items():
        if key not in ("apiVersion", "kind", "metadata"):
            obj.add_json_patch(cdk8s.JsonPatch.add(f"/{key}", value))
    return obj


def manifests(c: cdk8s.Chart) -> list[dict]:
    return list(c.to_json())
