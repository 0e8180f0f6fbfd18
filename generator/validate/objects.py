"""The object graph of one input: lookups by kind and name, and the pod
templates inside each workload with what the controller will make of them
(how many pods one Kueue workload holds, which pods form one TPU slice, which
labels the controller adds to the pods).

Pod counts follow Kueue's integrations: a Job's pod set is min(parallelism,
completions); a JobSet holds replicas x that per replicated job; an LWS group
(leader + size-1 workers) is one workload; plain Deployments and ReplicaSets
run under the pod integration, one workload per pod; a StatefulSet is one pod
group of `replicas` pods."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from . import quantity

# Core kinds without a namespace, as (API group, kind). Custom resources get
# their scope from their CRD instead.
CORE_CLUSTER_SCOPED = frozenset({
    ("", "Namespace"), ("", "Node"), ("", "PersistentVolume"), ("", "ComponentStatus"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("storage.k8s.io", "StorageClass"), ("storage.k8s.io", "CSIDriver"), ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "VolumeAttachment"), ("storage.k8s.io", "VolumeAttributesClass"),
    ("rbac.authorization.k8s.io", "ClusterRole"), ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"), ("apiregistration.k8s.io", "APIService"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
    ("node.k8s.io", "RuntimeClass"), ("networking.k8s.io", "IngressClass"),
    ("networking.k8s.io", "IPAddress"), ("networking.k8s.io", "ServiceCIDR"),
    ("certificates.k8s.io", "CertificateSigningRequest"), ("certificates.k8s.io", "ClusterTrustBundle"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"), ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("resource.k8s.io", "DeviceClass"), ("resource.k8s.io", "ResourceSlice"),
})

@dataclass(frozen=True)
class Wild:
    """A label value the controller sets per pod (an index, a uid, a hash):
    it matches any selector value except the excluded ones."""
    excluded: frozenset = frozenset()

    def matches(self, value) -> bool:
        return value not in self.excluded


ANY = Wild()


def group_of(obj: dict) -> str:
    api = obj.get("apiVersion") or ""
    return api.rpartition("/")[0]


def meta(obj: dict) -> dict:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _int(value, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


@dataclass
class PodSet:
    """One pod template inside a workload object."""
    path: tuple            # where the PodTemplateSpec sits in the object; () for a Pod
    template: dict         # {"metadata": ..., "spec": ...}
    pods: int              # pods from this template in one Kueue workload
    group: str             # TPU slice group inside the object (pods of one group form one slice)
    group_pods: int        # pods from this template in one slice group
    what: str              # how the counts were derived, for messages
    controller_labels: dict = field(default_factory=dict)   # label -> value, or a Wild

    @property
    def spec(self) -> dict:
        return _dict(self.template.get("spec"))

    @property
    def metadata(self) -> dict:
        return _dict(self.template.get("metadata"))

    @property
    def labels(self) -> dict:
        return {**_dict(self.metadata.get("labels")), **self.controller_labels}

    def containers(self):
        """(path, container) of regular and init containers."""
        for key in ("containers", "initContainers"):
            for i, c in enumerate(_list(self.spec.get(key))):
                if isinstance(c, dict):
                    yield self.path + ("spec", key, i), c

    def ports(self) -> list[dict]:
        return [p for _, c in self.containers() for p in _list(c.get("ports")) if isinstance(p, dict)]

    def requests(self) -> dict:
        """Effective pod requests: the containers' sum, sidecars included, or the
        largest init container if that is more (as the scheduler and Kueue count)."""
        def req(c):
            res = _dict(c.get("resources"))
            out = {}
            for source in (_dict(res.get("limits")), _dict(res.get("requests"))):  # request defaults to limit
                for r, v in source.items():
                    try:
                        out[r] = quantity.parse(v)
                    except ValueError:
                        pass
            return out

        def add(a, b):
            return {r: a.get(r, 0) + b.get(r, 0) for r in set(a) | set(b)}

        total: dict = {}
        sidecars: dict = {}
        peaks = []
        for c in _list(self.spec.get("initContainers")):
            if not isinstance(c, dict):
                continue
            if c.get("restartPolicy") == "Always":
                sidecars = add(sidecars, req(c))
            else:
                peaks.append(add(sidecars, req(c)))
        for c in _list(self.spec.get("containers")):
            if isinstance(c, dict):
                total = add(total, req(c))
        total = add(total, sidecars)
        for peak in peaks:
            total = {r: max(total.get(r, 0), peak.get(r, 0)) for r in set(total) | set(peak)}
        return total


def _job_pods(job_spec: dict) -> int:
    parallelism = _int(job_spec.get("parallelism"), 1)
    completions = job_spec.get("completions")
    if isinstance(completions, int) and not isinstance(completions, bool) and completions < parallelism:
        return completions
    return parallelism


def _slice_size(template: dict, default: int) -> int:
    """Kueue's podset-slice-size annotation splits a pod set into slices of that many pods."""
    ann = _dict(_dict(template.get("metadata")).get("annotations"))
    try:
        return int(ann.get("kueue.x-k8s.io/podset-slice-size", default))
    except (TypeError, ValueError):
        return default


def podsets(obj: dict) -> list[PodSet]:
    kind, spec, name = obj.get("kind"), _dict(obj.get("spec")), meta(obj).get("name")
    group = group_of(obj)
    if kind == "Pod" and group == "":
        tmpl = {"metadata": meta(obj), "spec": spec}
        return [PodSet((), tmpl, 1, "pod", 1, "one pod")]
    if kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet") and group in ("apps", "extensions"):
        tmpl = _dict(spec.get("template"))
        if kind == "StatefulSet":
            replicas = _int(spec.get("replicas"), 1)
            return [PodSet(("spec", "template"), tmpl, replicas, "pod", 1, f"StatefulSet pod group of {replicas}",
                           {"statefulset.kubernetes.io/pod-name": ANY, "apps.kubernetes.io/pod-index": ANY})]
        return [PodSet(("spec", "template"), tmpl, 1, "pod", 1, "one pod per workload under the pod integration",
                       {"pod-template-hash": ANY})]
    if kind == "Job" and group == "batch":
        pods = _job_pods(spec)
        tmpl = _dict(spec.get("template"))
        labels = {"job-name": name, "batch.kubernetes.io/job-name": name,
                  "controller-uid": ANY, "batch.kubernetes.io/controller-uid": ANY}
        if spec.get("completionMode") == "Indexed":
            labels["batch.kubernetes.io/job-completion-index"] = ANY
        return [PodSet(("spec", "template"), tmpl, pods, "job", _slice_size(tmpl, pods),
                       f"Job parallelism {pods}", labels)]
    if kind == "CronJob" and group == "batch":
        job = _dict(_dict(spec.get("jobTemplate")).get("spec"))
        pods = _job_pods(job)
        tmpl = _dict(job.get("template"))
        labels = {"job-name": ANY, "batch.kubernetes.io/job-name": ANY,
                  "controller-uid": ANY, "batch.kubernetes.io/controller-uid": ANY,
                  "batch.kubernetes.io/job-completion-index": ANY}
        return [PodSet(("spec", "jobTemplate", "spec", "template"), tmpl, pods, "job", _slice_size(tmpl, pods),
                       f"Job parallelism {pods}", labels)]
    if kind == "JobSet" and group == "jobset.x-k8s.io":
        out = []
        for i, rj in enumerate(_list(spec.get("replicatedJobs"))):
            rj = _dict(rj)
            job = _dict(_dict(rj.get("template")).get("spec"))
            replicas, pods = _int(rj.get("replicas"), 1), _job_pods(job)
            tmpl = _dict(job.get("template"))
            labels = {"jobset.sigs.k8s.io/jobset-name": name,
                      "jobset.sigs.k8s.io/replicatedjob-name": rj.get("name"),
                      "jobset.sigs.k8s.io/replicatedjob-replicas": str(replicas),
                      "jobset.sigs.k8s.io/job-index": ANY, "jobset.sigs.k8s.io/job-global-index": ANY,
                      "jobset.sigs.k8s.io/job-key": ANY, "jobset.sigs.k8s.io/restart-attempt": ANY,
                      "job-name": ANY, "batch.kubernetes.io/job-name": ANY, "controller-uid": ANY,
                      "batch.kubernetes.io/controller-uid": ANY, "batch.kubernetes.io/job-completion-index": ANY}
            out.append(PodSet(("spec", "replicatedJobs", i, "template", "spec", "template"), tmpl,
                              replicas * pods, f"replicatedJobs[{i}]", _slice_size(tmpl, pods),
                              f"{replicas} job(s) x parallelism {pods}", labels))
        return out
    if kind == "LeaderWorkerSet" and group == "leaderworkerset.x-k8s.io":
        lwt = _dict(spec.get("leaderWorkerTemplate"))
        size = _int(lwt.get("size"), 1)
        labels = {"leaderworkerset.sigs.k8s.io/name": name, "leaderworkerset.sigs.k8s.io/group-index": ANY,
                  "leaderworkerset.sigs.k8s.io/group-key": ANY,
                  "leaderworkerset.sigs.k8s.io/template-revision-hash": ANY}
        worker_index = "leaderworkerset.sigs.k8s.io/worker-index"   # "0" on the leader
        base = ("spec", "leaderWorkerTemplate")
        if isinstance(lwt.get("leaderTemplate"), dict):
            return [PodSet(base + ("leaderTemplate",), lwt["leaderTemplate"], 1, "group", 1,
                           f"LWS group of {size}: the leader", {**labels, worker_index: "0"}),
                    PodSet(base + ("workerTemplate",), _dict(lwt.get("workerTemplate")), size - 1, "group", size - 1,
                           f"LWS group of {size}: {size - 1} worker(s)",
                           {**labels, worker_index: Wild(frozenset({"0"}))})]
        return [PodSet(base + ("workerTemplate",), _dict(lwt.get("workerTemplate")), size, "group", size,
                       f"LWS group of {size}", {**labels, worker_index: ANY})]
    if kind == "PodTemplate" and group == "":
        return [PodSet(("template",), _dict(obj.get("template")), 1, "pod", 1, "one pod")]
    return []


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
    def podsets(self) -> list[PodSet]:
        return podsets(self.body)


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
