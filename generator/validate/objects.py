"""The object graph of one input: lookups by kind and name, and the pod
templates inside each workload with what Kueue will make of them (generator
/demand.py: pods per Workload, per-pod requests, which pods form one TPU
slice, which labels the controller adds to the pods)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .. import demand
from ..apiscope import CORE_CLUSTER_SCOPED
from ..demand import PodSet


def group_of(obj: dict) -> str:
    return demand.api_group(obj)


def meta(obj: dict) -> dict:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


@dataclass
class Obj:
    """An object of the input with its position (for stable ordering)."""
    index: int
    body: dict
    default_namespace: str = ""   # kubectl apply -n: where a namespaced object without one lands

    @property
    def kind(self) -> str:
        return self.body.get("kind")

    @property
    def group(self) -> str:
        return group_of(self.body)

    @property
    def name(self) -> str:
        return meta(self.body).get("name", "")

    @property
    def namespace(self) -> str:
        return meta(self.body).get("namespace") or self.default_namespace

    @property
    def labels(self) -> dict:
        return _dict(meta(self.body).get("labels"))

    @property
    def annotations(self) -> dict:
        return _dict(meta(self.body).get("annotations"))

    @property
    def spec(self) -> dict:
        return _dict(self.body.get("spec"))

    @cached_property
    def demand(self) -> demand.Demand:
        return demand.of(self.body)

    @property
    def podsets(self) -> tuple[PodSet, ...]:
        return self.demand.podsets


class Model:
    """Every object of one input, indexed once."""

    def __init__(self, objects: list[Obj], schemas=None, autopilot: bool = False, namespace: str = ""):
        self.objects = objects
        self.schemas = schemas
        self.autopilot = autopilot
        if namespace:
            for o in objects:
                if not self.cluster_scoped(o):
                    o.default_namespace = namespace
        self._by_kind: dict[tuple[str, str], list[Obj]] = {}
        for o in objects:
            self._by_kind.setdefault((o.group, o.kind), []).append(o)

    def all(self, group: str, kind: str) -> list[Obj]:
        return self._by_kind.get((group, kind), [])

    def get(self, group: str, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        for o in self.all(group, kind):
            if o.name == name and (namespace is None or o.namespace == namespace):
                return o
        return None

    def names(self, group: str, kind: str, namespace: str | None = None) -> list[str]:
        return sorted({o.name for o in self.all(group, kind) if namespace is None or o.namespace == namespace})

    def kueue(self, kind: str) -> list[Obj]:
        return self.all("kueue.x-k8s.io", kind)

    def workloads(self):
        """(object, podset) for every pod template in the input."""
        for o in self.objects:
            for ps in o.podsets:
                yield o, ps

    def cluster_scoped(self, o: Obj) -> bool:
        """Custom resources: the scope their CRD declares; core kinds: the table above."""
        info = self.schemas.crd_info(o.body.get("apiVersion"), o.kind) if self.schemas else None
        if info is not None:
            return info[3] == "Cluster"
        return (o.group, o.kind) in CORE_CLUSTER_SCOPED


def describe(names: list[str]) -> str:
    return ", ".join(names) if names else "none"
