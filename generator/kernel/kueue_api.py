"""Small typed builders for Kueue objects. Each returns the object body as a
dict for the API version the pinned Kueue release serves; the differences
between v1beta1 and v1beta2 live here and nowhere else."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .versions import KueueRelease

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
# AdmissionCheck controllerNames (apis/kueue/v1beta{1,2}: MultiKueueControllerName,
# ProvisioningRequestControllerName; the same at v0.12.3, v0.17.4 and v0.19.2).
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
# Where the release manifests keep the manager's Configuration: ConfigMap kueue-manager-config,
# key controller_manager_config.yaml (config/components/manager's configMapGenerator
# `manager-config` under config/default's namePrefix `kueue-`, every pinned release).
CONFIG_MAP = "kueue-manager-config"
CONFIG_KEY = "controller_manager_config.yaml"
# Kueue integration (framework) names of the kinds a MultiKueue group dispatches
# (config/components/manager/controller_manager_config.yaml at every pinned release).
Integration = Literal["batch/job", "jobset.x-k8s.io/jobset"]
INTEGRATIONS: dict[tuple[str, str], Integration] = {("batch", "Job"): "batch/job",
                                                    ("jobset.x-k8s.io", "JobSet"): "jobset.x-k8s.io/jobset"}
# (group, kind) -> the integrations that must be enabled for Kueue to manage an object of that
# kind: the framework each kind's integration registers (pkg/controller/jobs/<name>/
# *_controller.go, jobframework.RegisterIntegration(FrameworkName, ...), at v0.12.3, v0.17.4 and
# v0.19.2), and `pod` beside the pod-based ones (v0.12.3 lists it in their DependencyList and
# refuses the Configuration without it; later releases still admit their pods through it).
MANAGED_BY: dict[tuple[str, str], tuple[str, ...]] = {
    ("batch", "Job"): ("batch/job",),
    ("jobset.x-k8s.io", "JobSet"): ("jobset.x-k8s.io/jobset",),
    ("", "Pod"): ("pod",),
    ("apps", "Deployment"): ("deployment", "pod"),
    ("apps", "StatefulSet"): ("statefulset", "pod"),
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): ("leaderworkerset.x-k8s.io/leaderworkerset", "pod"),
}


def enabled_integrations(config: dict, release: KueueRelease) -> tuple[str, ...]:
    """The integrations a manager Configuration enables once Kueue has defaulted it
    (apis/config/<api>/defaults.go SetDefaults_Configuration at the release): a left-out list
    becomes the release's default; so does an empty one from v0.13 (v0.12.3 tests `== nil`)."""
    integrations = config.get("integrations")
    frameworks = integrations.get("frameworks") if isinstance(integrations, dict) else None
    if frameworks is None or (not frameworks and release.defaults_empty_frameworks):
        return release.default_frameworks
    return tuple(f for f in frameworks if isinstance(f, str)) if isinstance(frameworks, list) else ()


def unmanaged(group: str, kind: str, enabled: tuple[str, ...]) -> tuple[str, ...] | None:
    """The integrations missing for Kueue to manage a (group, kind); None for a kind no
    integration manages."""
    needs = MANAGED_BY.get((group, kind))
    return None if needs is None else tuple(f for f in needs if f not in enabled)


@dataclass(frozen=True)
class Quota:
    resource: str
    nominal: object
    borrowing_limit: object | None = None
    lending_limit: object | None = None

    def body(self) -> dict:
        out = {"name": self.resource, "nominalQuota": self.nominal}
        if self.borrowing_limit is not None:
            out["borrowingLimit"] = self.borrowing_limit
        if self.lending_limit is not None:
            out["lendingLimit"] = self.lending_limit
        return out


@dataclass(frozen=True)
class FlavorQuota:
    flavor: str
    quotas: tuple[Quota, ...]   # one per covered resource, in the coveredResources order


@dataclass(frozen=True)
class AdmissionCheckRef:
    name: str
    on_flavors: tuple[str, ...] = ()   # empty: every flavor


@dataclass(frozen=True)
class ClusterQueue:
    name: str
    covered: tuple[str, ...]
    flavors: tuple[FlavorQuota, ...]
    preemption: dict = field(default_factory=dict)
    admission_checks: tuple[AdmissionCheckRef, ...] = ()
    cohort: str | None = None
    namespace_selector: dict = field(default_factory=dict)   # {}: every namespace
    fair_sharing_weight: object | None = None

    def body(self, kueue: KueueRelease) -> dict:
        spec: dict = {"namespaceSelector": dict(self.namespace_selector)}
        if self.cohort:
            spec["cohortName" if kueue.is_v1beta2 else "cohort"] = self.cohort
        if self.admission_checks:
            if kueue.is_v1beta2 or any(a.on_flavors for a in self.admission_checks):
                # v1beta2 removed the plain list; the strategy form is the only one
                # (and the one that limits a check to some flavors).
                spec["admissionChecksStrategy"] = {"admissionChecks": [
                    {"name": a.name, **({"onFlavors": list(a.on_flavors)} if a.on_flavors else {})}
                    for a in self.admission_checks]}
            else:
                spec["admissionChecks"] = [a.name for a in self.admission_checks]
        if self.fair_sharing_weight is not None:
            spec["fairSharing"] = {"weight": self.fair_sharing_weight}
        if self.preemption:
            spec["preemption"] = dict(self.preemption)
        spec["resourceGroups"] = [{
            "coveredResources": list(self.covered),
            "flavors": [{"name": f.flavor, "resources": [q.body() for q in f.quotas]} for f in self.flavors],
        }]
        return _obj(kueue.api, "ClusterQueue", self.name, None, spec=spec)


def resource_flavor(kueue: KueueRelease, name: str, node_labels: dict | None = None,
                    topology: str | None = None, tolerations: list | None = None,
                    annotations: dict | None = None) -> dict:
    spec: dict = {}
    if node_labels:
        spec["nodeLabels"] = dict(node_labels)
    if tolerations:
        spec["tolerations"] = list(tolerations)
    if topology:
        spec["topologyName"] = topology
    obj = _obj(kueue.api, "ResourceFlavor", name, None, spec=spec or None)
    if annotations:
        obj["metadata"]["annotations"] = dict(annotations)
    return obj


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


def admission_check(kueue: KueueRelease, name: str, controller: str, parameters: dict | None = None) -> dict:
    spec: dict = {"controllerName": controller}
    if parameters:
        spec["parameters"] = dict(parameters)
    return _obj(kueue.api, "AdmissionCheck", name, None, spec=spec)


def provisioning_request_config(kueue: KueueRelease, name: str, provisioning_class: str,
                                managed_resources: list[str]) -> dict:
    return _obj(kueue.api, "ProvisioningRequestConfig", name, None, spec={
        "provisioningClassName": provisioning_class, "managedResources": list(managed_resources)})


def multikueue_cluster(kueue: KueueRelease, name: str, secret: str) -> dict:
    """A worker, reached with the kubeconfig in Secret `secret` (key `kubeconfig`) of the
    manager's Kueue namespace. v1beta2 nests it under clusterSource (exactly one source)."""
    kubeconfig = {"location": secret, "locationType": "Secret"}
    spec = {"clusterSource": {"kubeConfig": kubeconfig}} if kueue.is_v1beta2 else {"kubeConfig": kubeconfig}
    return _obj(kueue.api, "MultiKueueCluster", name, None, spec=spec)


def multikueue_config(kueue: KueueRelease, name: str, clusters: list[str]) -> dict:
    return _obj(kueue.api, "MultiKueueConfig", name, None, spec={"clusters": list(clusters)})


def cohort(kueue: KueueRelease, name: str, parent: str | None = None, resource_groups: list | None = None,
           fair_sharing_weight: object | None = None) -> dict:
    """A v1beta2 Cohort: a node of the cohort tree, optionally holding quota of its own."""
    spec: dict = {}
    if parent:
        spec["parentName"] = parent
    if fair_sharing_weight is not None:
        spec["fairSharing"] = {"weight": fair_sharing_weight}
    if resource_groups:
        spec["resourceGroups"] = resource_groups
    return _obj(kueue.api, "Cohort", name, None, spec=spec or None)


def _obj(api: str, kind: str, name: str, namespace: str | None, **body) -> dict:
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    out = {"apiVersion": api, "kind": kind, "metadata": meta}
    out.update({k: v for k, v in body.items() if v is not None})
    return out
