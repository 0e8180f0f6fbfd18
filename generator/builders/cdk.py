"""The app's charts: one Chart per output directory, typed objects for core
kinds (generator/builders/k8s.py, the cdk8s-plus-33 names; see core.py), and custom
resources whose bodies come from the project's own builders (kernel/kueue_api.py, ...).

Objects are rendered to cdk8s' JSON in Python (generator/builders/render.py): creating
each one in Node through jsii cost over half of a large synth. The same charts
can still be rendered by cdk8s itself (`CDK8S_RENDER`, or `rendering("cdk8s")`):
tests/test_render.py holds the two to the same output.

Charts never get a namespace: cdk8s would stamp it on cluster-scoped objects.
Every object carries an explicit metadata.name, so no hashes are added."""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from . import render
from .kube import ApiObject

if TYPE_CHECKING:   # the builders pass charts where cdk8s-plus-33's signatures take a construct scope
    from cdk8s import Chart as _Scope
else:
    _Scope = object

_META_KEYS = ("name", "namespace", "labels", "annotations")

# "cdk8s": render through cdk8s-plus-33 in Node, the reference for generator/builders/render.py.
_backend = {"name": "cdk8s" if os.environ.get("CDK8S_RENDER") == "1" else "python"}


@contextlib.contextmanager
def rendering(backend: str) -> Iterator[None]:
    """Render through `backend` ("python" or "cdk8s") inside the block."""
    before = _backend["name"]
    _backend["name"] = backend
    try:
        yield
    finally:
        _backend["name"] = before


class Custom:
    """A custom resource from a plain body built by a typed builder."""
    __slots__ = ("id", "body")

    def __init__(self, id: str, body: dict) -> None:   # noqa: A002  cdk8s' name
        self.id = id
        self.body = body


class App:
    def __init__(self) -> None:
        self.charts: set[str] = set()


class Chart(_Scope):
    """The objects of one output directory, in the order they were added (cdk8s'
    order too: no object depends on another)."""

    def __init__(self, app: App, name: str) -> None:
        if name in app.charts:
            raise ValueError(f"There is already a Construct with name '{name}' in App")
        app.charts.add(name)
        self.name = name
        self.objects: list[ApiObject | Custom] = []
        self._ids: set[str] = set()

    def add(self, obj: ApiObject | Custom) -> None:
        if obj.id in self._ids:
            raise ValueError(f"There is already a Construct with name '{obj.id}' in Chart [{self.name}]")
        self._ids.add(obj.id)
        self.objects.append(obj)


def new_app() -> App:
    return App()


def chart(app: App, name: str) -> Chart:
    return Chart(app, name.replace("/", "--"))


def object_id(kind: str, name: str, namespace: str | None) -> str:
    return f"{kind}.{namespace or '_'}.{name}"


def custom(scope: Chart, body: dict) -> Custom:
    meta = body["metadata"]
    unknown = set(meta) - set(_META_KEYS)
    if unknown:
        raise ValueError(f"unsupported metadata fields {sorted(unknown)} on {body['kind']}/{meta['name']}")
    obj = Custom(object_id(body["kind"], meta["name"], meta.get("namespace")), body)
    scope.add(obj)
    return obj


def manifests(c: Chart) -> list[dict]:
    if _backend["name"] == "cdk8s":
        from . import cdk8s_render
        return cdk8s_render.manifests(c.objects)
    return [_render(o) for o in c.objects]


def render_one(obj: ApiObject) -> dict:
    """One typed object's JSON (what `to_json()` of a cdk8s object returns)."""
    if _backend["name"] == "cdk8s":
        from . import cdk8s_render
        return cdk8s_render.manifests([obj])[0]
    return render.typed_object(obj)


def _render(obj: Any) -> dict:
    if isinstance(obj, Custom):
        return render.custom_object(obj.body, _META_KEYS)
    return render.typed_object(obj)
