"""Small typed builders for Kueue objects. Each returns the object body as a
dict for the API version the pinned Kueue release serves; the differences
between v1beta1 and v1beta2 live here and nowhere else."""
from __future__ import annotations

from dataclasses import dataclass, field

from .versions import KueueRelease

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"


@dataclass(frozen=True)
class FlavorQuota:
    flavor: str
    quotas: tuple[tuple[str, object], ...]   # (resource, nominalQuota) in order


@dataclass(frozen=True)
class ClusterQueue:
    name: str
    covered: tuple[str, ...]
    flavors: tuple[FlavorQuota, ...]
    preemption: dict = field(default_factory=dict)
    admission_checks: tuple[str, ...] = ()
    cohort: str | None = None

    def body(self, kueue: KueueRelease) -> dict:
        spec: dict = {"namespaceSelector": {}}
        if self.cohort:
            spec["cohortName" if kueue.is_v1beta2 else "cohort"] = self.cohort
        if self.admission_checks:
            if kueue.is_v1beta2:
                # v1beta2 removed the plain list; the strategy form is the only one.
                spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": n} for n in self.admission_checks]}
            else:
                spec["admissionChecks"] = list(self.admission_checks)
        if self.preemption:
            spec["preemption"] = dict(self.preemption)
        spec["resourceGroups"] = [{
            "coveredResources": list(self.covered),
            "flavors": [{"name": f.flavor,
                         "resources": [{"name": r, "nominalQuota": q} for r, q in f.quotas]}
                        for f in self.flavors],
        }]
        return _obj(kueue.api, "ClusterQueue", self.name, None, spec=spec)


def resource_flavor(kueue: KueueRelease, name: str, node_labels: dict | None = None,
                    topology: str | None = None, tolerations: list | None = None) -> dict:
    spec: dict = {}
    if node_labels:
        spec["nodeLabels"] = dict(node_labels)
    if tolerations:
        spec["tolerations"] = list(tolerations)
    if topology:
        spec["topologyName"] = topology
    return _obj(kueue.api, "ResourceFlavor", name, None, spec=spec or None)


def local_queue(kueue: KueueRelease, namespace: str, name: str, cluster_queue: str) -> dict:
    return _obj(kueue.api, "LocalQueue", name, namespace, spec={"clusterQueue": cluster_queue})


def workload_priority_class(kueue: KueueRelease, name: str, value: int, description: str | None) -> dict:
    obj = _obj(kueue.api, "WorkloadPriorityClass", name, None)
    obj["value"] = value
    if description:
        obj["description"] = description
    return obj


def topology(kueue: KueueRelease, name: str, node_labels: list[str]) -> dict:
    return _obj(kueue.topology_api, "Topology", name, None,
                spec={"levels": [{"nodeLabel": label} for label in node_labels]})


def admission_check(kueue: KueueRelease, name: str, controller: str) -> dict:
    return _obj(kueue.api, "AdmissionCheck", name, None, spec={"controllerName": controller})


def _obj(api: str, kind: str, name: str, namespace: str | None, **body) -> dict:
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    out = {"apiVersion": api, "kind": kind, "metadata": meta}
    out.update({k: v for k, v in body.items() if v is not None})
    return out
