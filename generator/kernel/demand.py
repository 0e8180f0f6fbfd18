"""What a workload object asks Kueue for. The one place that answers it: the
validator, the planner, `generator diff` and the spec's fit checks all read
these numbers.

Kueue makes Workloads from objects through its integrations (Kueue v0.17.4,
pkg/controller/jobs/*):

  batch/v1 Job        one Workload, pod set "main": count = parallelism, or
                      completions when smaller (job_controller.go podsCount);
                      minimum for partial admission from the annotation
                      kueue.x-k8s.io/job-min-parallelism (minPodsCount)
  batch/v1 CronJob    not queued itself: each Job it creates is (its jobTemplate)
  JobSet              one Workload, a pod set per replicated job named after it:
                      count = replicas x the job's pods (jobset_controller.go)
  LeaderWorkerSet     one Workload per group (replicas of them): pod sets
                      "leader" (1) and "worker" (size - 1), or "main" (size)
                      without a leader template (leaderworkerset_reconciler.go)
  Deployment          pod integration: one Workload per pod (replicas of them)
  StatefulSet         one Workload, a pod group of replicas pods
  Pod                 one Workload
  kueue Workload      itself: its pod sets (count, minCount, template), as a
                      `kubectl get workloads -o yaml` dump or a hand-made one shows them

A pod's request is what the scheduler counts (k8s component-helpers
PodRequests, which Kueue's workload.totalRequestsFromPodSets calls): regular
containers and sidecars (init containers with restartPolicy Always) add up,
each ordinary init container is a peak (itself plus the sidecars started
before it) and the pod needs the largest of these, and the pod's `overhead` is
added on top. A limit without a request is the request (API-server defaulting).
Kueue adds the `pods` resource (one per pod) only when a ClusterQueue covers it
(flavorassigner.go); `with_pods` does that."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from . import quantity
from .errors import Problem, format_path
from .labelmatch import ANY, Wild

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
MIN_PARALLELISM_ANNOTATION = "kueue.x-k8s.io/job-min-parallelism"
SLICE_SIZE_ANNOTATION = "kueue.x-k8s.io/podset-slice-size"
PODS = "pods"

Requests = dict[str, Decimal]


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def api_group(obj: Mapping) -> str:
    api = obj.get("apiVersion")
    return api.rpartition("/")[0] if isinstance(api, str) else ""


def _add(a: Requests, b: Requests) -> Requests:
    return {r: a.get(r, Decimal(0)) + b.get(r, Decimal(0)) for r in a.keys() | b.keys()}


def _max(a: Requests, b: Requests) -> Requests:
    return {r: max(a.get(r, Decimal(0)), b.get(r, Decimal(0))) for r in a.keys() | b.keys()}


MAX_QUANTITY = quantity.MAX_QUANTITY   # larger values would only overflow later sums


def _bounded(q: Decimal) -> Decimal:
    if not q.is_finite() or abs(q) > MAX_QUANTITY:
        raise OverflowError(q)
    return q


def _container_requests(c: Mapping, path: tuple, problems: list[Problem]) -> Requests:
    res = _dict(c.get("resources"))
    out: Requests = {}
    for part in ("limits", "requests"):   # requests override the limits they default from
        for r, v in _dict(res.get(part)).items():
            try:
                out[r] = _bounded(quantity.parse(v))
                if out[r] < 0:      # the API server refuses it (k8s.io/api core validation: >= 0)
                    problems.append(Problem(format_path(path + ("resources", part, r)),
                                            f"{v!r} is negative; requests and limits are 0 or more"))
            except OverflowError:
                problems.append(Problem(format_path(path + ("resources", part, r)), quantity.too_large(v)))
            except (ValueError, ArithmeticError):
                problems.append(Problem(format_path(path + ("resources", part, r)),
                                        f"{v!r} is not a quantity (e.g. 500m, 2, 16Gi)"))
    return out


def pod_requests(pod_spec: Mapping, path: tuple = (), problems: list[Problem] | None = None) -> Requests:
    """Effective requests of one pod (see the module docstring); unreadable quantities are
    left out and, when `problems` is given, reported there with their field path."""
    problems = problems if problems is not None else []
    total: Requests = {}
    for i, c in enumerate(_list(pod_spec.get("containers"))):
        if isinstance(c, dict):
            total = _add(total, _container_requests(c, path + ("containers", i), problems))
    sidecars: Requests = {}
    peak: Requests = {}
    for i, c in enumerate(_list(pod_spec.get("initContainers"))):
        if not isinstance(c, dict):
            continue
        req = _container_requests(c, path + ("initContainers", i), problems)
        if c.get("restartPolicy") == "Always":
            sidecars = _add(sidecars, req)
        else:
            peak = _max(peak, _add(sidecars, req))
    total = _max(_add(total, sidecars), peak)
    overhead: Requests = {}
    for r, v in _dict(pod_spec.get("overhead")).items():
        try:
            overhead[r] = _bounded(quantity.parse(v))
        except (ValueError, ArithmeticError, OverflowError):
            problems.append(Problem(format_path(path + ("overhead", r)), f"{v!r} is not a quantity"))
    total = _add(total, overhead)
    return {r: v for r, v in sorted(total.items()) if v > 0}


@dataclass(frozen=True)
class PodSet:
    """One pod template inside a workload object, as Kueue sees it."""
    name: str                  # Kueue's pod set name
    path: tuple                # where the PodTemplateSpec sits in the object; () for a Pod
    template: dict             # {"metadata": ..., "spec": ...}
    count: int                 # pods from this template in one Workload
    min_count: int | None      # fewest pods partial admission may admit; None: all or nothing
    requests: Requests         # one pod's effective request
    slice_group: str           # pods of one group form one TPU slice (a Job, an LWS group)
    slice_pods: int            # pods from this template in one slice group
    what: str                  # how the count was derived, for messages
    controller_labels: dict = field(default_factory=dict)   # labels the controller adds: value or Wild

    @property
    def spec(self) -> dict:
        return _dict(self.template.get("spec"))

    @property
    def metadata(self) -> dict:
        return _dict(self.template.get("metadata"))

    @property
    def annotations(self) -> dict:
        return _dict(self.metadata.get("annotations"))

    @property
    def labels(self) -> dict:
        """The pods' labels: the template's plus those the controller sets."""
        return {**_dict(self.metadata.get("labels")), **self.controller_labels}

    def containers(self):
        """(path, container) of regular and init containers."""
        for key in ("containers", "initContainers"):
            for i, c in enumerate(_list(self.spec.get(key))):
                if isinstance(c, dict):
                    yield self.path + ("spec", key, i), c

    def ports(self) -> list[dict]:
        return [p for _, c in self.containers() for p in _list(c.get("ports")) if isinstance(p, dict)]

    def total(self) -> Requests:
        """What the whole pod set asks for in one Workload."""
        return {r: v * self.count for r, v in self.requests.items()}

    def with_pods(self) -> Requests:
        """One pod's request with Kueue's `pods` resource, for ClusterQueues that cover it."""
        return {**self.requests, PODS: Decimal(1)}


@dataclass(frozen=True)
class Demand:
    """The Workloads one object makes: `copies` Workloads, each with these pod sets."""
    kind: str
    group: str
    namespace: str
    name: str
    podsets: tuple[PodSet, ...]
    copies: int                          # Deployment pods, LWS groups; 1 otherwise
    scalable: bool                       # copies follow spec.replicas (an HPA may change it)
    queue: str | None                    # kueue.x-k8s.io/queue-name where Kueue reads it
    workload_priority_class: str | None  # kueue.x-k8s.io/priority-class where Kueue reads it
    priority_class_name: str | None      # the first pod set's priorityClassName (jobframework)
    problems: tuple[Problem, ...] = ()   # unreadable counts or quantities, with field paths
    priority: int | None = None          # a Workload object's own spec.priority, which Kueue uses as is

    @property
    def pods(self) -> int:
        """Pods of one Workload."""
        return sum(ps.count for ps in self.podsets)

    def per_workload(self) -> Requests:
        out: Requests = {}
        for ps in self.podsets:
            out = _add(out, ps.total())
        return {r: v for r, v in sorted(out.items()) if v > 0}

    def total(self, copies: int | None = None) -> Requests:
        """Everything the object's Workloads ask for together (at `copies`, default its own)."""
        n = self.copies if copies is None else copies
        return {r: v * n for r, v in self.per_workload().items()}


# ---------------------------------------------------------------- per integration

def _job_counts(job_spec: Mapping, annotations: Mapping, where: tuple, problems: list[Problem]) -> tuple[int, int | None]:
    """(pods, minimum pods) of a Job spec, as Kueue's job integration counts them."""
    parallelism = job_spec.get("parallelism", 1)
    if not isinstance(parallelism, int) or isinstance(parallelism, bool) or parallelism < 0:
        problems.append(Problem(format_path(where + ("parallelism",)),
                                f"{parallelism!r} is not a pod count (a whole number, 0 or more)"))
        parallelism = 1
    completions = job_spec.get("completions")
    if completions is not None and (not isinstance(completions, int) or isinstance(completions, bool)):
        problems.append(Problem(format_path(where + ("completions",)), f"{completions!r} is not a whole number"))
        completions = None
    pods = completions if completions is not None and completions < parallelism else parallelism
    minimum = None
    raw = annotations.get(MIN_PARALLELISM_ANNOTATION)
    if raw is not None:
        try:
            minimum = int(str(raw))
        except ValueError:
            # Kueue ignores a value strconv.Atoi cannot read (minPodsCount).
            minimum = None
    return pods, minimum


def _slice_pods(template: Mapping, default: int) -> int:
    """Kueue's podset-slice-size annotation splits a pod set into slices of that many pods."""
    value = _dict(_dict(template.get("metadata")).get("annotations")).get(SLICE_SIZE_ANNOTATION)
    try:
        return int(value) if value is not None else default
    except (TypeError, ValueError):
        return default


def _podset(name: str, path: tuple, template: Any, count: int, minimum: int | None, group: str,
            slice_pods: int, what: str, labels: dict, problems: list[Problem]) -> PodSet:
    template = _dict(template)
    requests = pod_requests(_dict(template.get("spec")), path + ("spec",), problems)
    return PodSet(name, path, template, count, minimum, requests, group, slice_pods, what, labels)


def _job(obj: Mapping, problems: list[Problem]) -> list[PodSet]:
    spec, name = _dict(obj.get("spec")), _dict(obj.get("metadata")).get("name")
    pods, minimum = _job_counts(spec, _dict(_dict(obj.get("metadata")).get("annotations")), ("spec",), problems)
    labels: dict = {"job-name": name, "batch.kubernetes.io/job-name": name,
                    "controller-uid": ANY, "batch.kubernetes.io/controller-uid": ANY}
    if spec.get("completionMode") == "Indexed":
        labels["batch.kubernetes.io/job-completion-index"] = ANY
    tmpl = spec.get("template")
    return [_podset("main", ("spec", "template"), tmpl, pods, minimum, "job", _slice_pods(_dict(tmpl), pods),
                    f"Job: {pods} pod(s) (parallelism, or completions when fewer)", labels, problems)]


def _cronjob(obj: Mapping, problems: list[Problem]) -> list[PodSet]:
    job_template = _dict(_dict(obj.get("spec")).get("jobTemplate"))
    job = _dict(job_template.get("spec"))
    where = ("spec", "jobTemplate", "spec")
    pods, minimum = _job_counts(job, _dict(_dict(job_template.get("metadata")).get("annotations")), where, problems)
    labels = {"job-name": ANY, "batch.kubernetes.io/job-name": ANY, "controller-uid": ANY,
              "batch.kubernetes.io/controller-uid": ANY, "batch.kubernetes.io/job-completion-index": ANY}
    tmpl = job.get("template")
    return [_podset("main", where + ("template",), tmpl, pods, minimum, "job", _slice_pods(_dict(tmpl), pods),
                    f"each Job of the CronJob: {pods} pod(s)", labels, problems)]


def _jobset(obj: Mapping, problems: list[Problem]) -> list[PodSet]:
    spec, name = _dict(obj.get("spec")), _dict(obj.get("metadata")).get("name")
    out = []
    for i, rj in enumerate(_list(spec.get("replicatedJobs"))):
        rj = _dict(rj)
        where = ("spec", "replicatedJobs", i)
        replicas = rj.get("replicas", 1)
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            problems.append(Problem(format_path(where + ("replicas",)), f"{replicas!r} is not a job count"))
            replicas = 1
        job_template = _dict(rj.get("template"))
        job = _dict(job_template.get("spec"))
        pods, _ = _job_counts(job, {}, where + ("template", "spec"), problems)
        labels = {"jobset.sigs.k8s.io/jobset-name": name,
                  "jobset.sigs.k8s.io/replicatedjob-name": rj.get("name"),
                  "jobset.sigs.k8s.io/replicatedjob-replicas": str(replicas),
                  "jobset.sigs.k8s.io/job-index": ANY, "jobset.sigs.k8s.io/job-global-index": ANY,
                  "jobset.sigs.k8s.io/job-key": ANY, "jobset.sigs.k8s.io/restart-attempt": ANY,
                  "job-name": ANY, "batch.kubernetes.io/job-name": ANY, "controller-uid": ANY,
                  "batch.kubernetes.io/controller-uid": ANY, "batch.kubernetes.io/job-completion-index": ANY}
        tmpl = job.get("template")
        # JobSet pod sets are all or nothing: Kueue sets no MinCount for them.
        out.append(_podset(str(rj.get("name", f"replicatedJobs[{i}]")), where + ("template", "spec", "template"),
                           tmpl, replicas * pods, None, f"replicatedJobs[{i}]", _slice_pods(_dict(tmpl), pods),
                           f"{replicas} job(s) x {pods} pod(s)", labels, problems))
    return out


def _lws(obj: Mapping, problems: list[Problem]) -> list[PodSet]:
    spec, name = _dict(obj.get("spec")), _dict(obj.get("metadata")).get("name")
    lwt = _dict(spec.get("leaderWorkerTemplate"))
    size = lwt.get("size", 1)
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        problems.append(Problem("spec.leaderWorkerTemplate.size", f"{size!r} is not a group size (1 or more)"))
        size = 1
    labels = {"leaderworkerset.sigs.k8s.io/name": name, "leaderworkerset.sigs.k8s.io/group-index": ANY,
              "leaderworkerset.sigs.k8s.io/group-key": ANY,
              "leaderworkerset.sigs.k8s.io/template-revision-hash": ANY}
    worker_index = "leaderworkerset.sigs.k8s.io/worker-index"   # "0" on the leader
    base = ("spec", "leaderWorkerTemplate")
    if isinstance(lwt.get("leaderTemplate"), dict):
        return [_podset("leader", base + ("leaderTemplate",), lwt["leaderTemplate"], 1, None, "group", 1,
                        f"LWS group of {size}: the leader", {**labels, worker_index: "0"}, problems),
                _podset("worker", base + ("workerTemplate",), lwt.get("workerTemplate"), size - 1, None, "group",
                        size - 1, f"LWS group of {size}: {size - 1} worker(s)",
                        {**labels, worker_index: Wild(frozenset({"0"}))}, problems)]
    return [_podset("main", base + ("workerTemplate",), lwt.get("workerTemplate"), size, None, "group", size,
                    f"LWS group of {size}", {**labels, worker_index: ANY}, problems)]


def _replicated(obj: Mapping, problems: list[Problem]) -> list[PodSet]:
    kind, spec = obj.get("kind"), _dict(obj.get("spec"))
    tmpl = spec.get("template")
    if kind == "StatefulSet":
        replicas = _replicas(spec, problems)
        return [_podset("main", ("spec", "template"), tmpl, replicas, None, "pod", 1,
                        f"StatefulSet pod group of {replicas}",
                        {"statefulset.kubernetes.io/pod-name": ANY, "apps.kubernetes.io/pod-index": ANY},
                        problems)]
    return [_podset("main", ("spec", "template"), tmpl, 1, None, "pod", 1,
                    "one pod per Workload (pod integration)", {"pod-template-hash": ANY}, problems)]


def _pod(obj: Mapping, problems: list[Problem]) -> list[PodSet]:
    tmpl = {"metadata": _dict(obj.get("metadata")), "spec": _dict(obj.get("spec"))}
    requests = pod_requests(tmpl["spec"], ("spec",), problems)
    return [PodSet("main", (), tmpl, 1, None, requests, "pod", 1, "one pod")]


def _pod_template(obj: Mapping, problems: list[Problem]) -> list[PodSet]:
    return [_podset("main", ("template",), obj.get("template"), 1, None, "pod", 1, "one pod", {}, problems)]


def _workload(obj: Mapping, problems: list[Problem]) -> list[PodSet]:
    """A kueue.x-k8s.io Workload: pod sets as written (count defaults to 1; minCount is
    the partial-admission minimum)."""
    out = []
    for i, ps in enumerate(_list(_dict(obj.get("spec")).get("podSets"))):
        ps = _dict(ps)
        where = ("spec", "podSets", i)
        count = ps.get("count", 1)
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            problems.append(Problem(format_path(where + ("count",)), f"{count!r} is not a pod count (a whole number, 0 or more)"))
            count = 1
        minimum = ps.get("minCount")
        if minimum is not None and (not isinstance(minimum, int) or isinstance(minimum, bool) or not 0 <= minimum <= count):
            problems.append(Problem(format_path(where + ("minCount",)),
                                    f"{minimum!r} is not a pod count from 0 to count ({count})"))
            minimum = None
        name = str(ps.get("name") or f"podSets[{i}]")
        out.append(_podset(name, where + ("template",), ps.get("template"), count, minimum, name, count,
                           f"Workload pod set {name}: {count} pod(s)", {}, problems))
    return out


def _workload_priority(obj: Mapping) -> tuple[str | None, str | None, int | None]:
    """(WorkloadPriorityClass, PriorityClass, explicit priority) of a Workload object:
    v1beta2 priorityClassRef, v1beta1 priorityClassName + priorityClassSource, spec.priority."""
    spec = _dict(obj.get("spec"))
    ref = _dict(spec.get("priorityClassRef"))
    name, group = ref.get("name"), ref.get("group")
    if not ref:
        name = spec.get("priorityClassName")
        group = "kueue.x-k8s.io" if spec.get("priorityClassSource") == "kueue.x-k8s.io/workloadpriorityclass" \
            else "scheduling.k8s.io"
    name = name if isinstance(name, str) and name else None
    priority = spec.get("priority")
    priority = priority if isinstance(priority, int) and not isinstance(priority, bool) else None
    if group == "kueue.x-k8s.io":
        return name, None, priority
    return None, name, priority


def _replicas(spec: Mapping, problems: list[Problem]) -> int:
    replicas = spec.get("replicas", 1)   # API-server default; an HPA target may leave it out
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        problems.append(Problem("spec.replicas", f"{replicas!r} is not a replica count (a whole number, 0 or more)"))
        return 1
    return replicas


# (API group, kind) -> pod sets of one Workload.
_INTEGRATIONS = {
    ("batch", "Job"): _job,
    ("batch", "CronJob"): _cronjob,
    ("jobset.x-k8s.io", "JobSet"): _jobset,
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): _lws,
    ("apps", "Deployment"): _replicated,
    ("apps", "ReplicaSet"): _replicated,
    ("apps", "StatefulSet"): _replicated,
    ("apps", "DaemonSet"): _replicated,
    ("", "ReplicationController"): _replicated,
    ("", "Pod"): _pod,
    ("", "PodTemplate"): _pod_template,
    ("kueue.x-k8s.io", "Workload"): _workload,
}
# Kinds whose spec.replicas counts Workloads (Deployment: one per pod; LWS: one per group).
_COPIES_FOLLOW_REPLICAS = {("apps", "Deployment"), ("apps", "ReplicaSet"), ("", "ReplicationController"),
                           ("leaderworkerset.x-k8s.io", "LeaderWorkerSet")}
# Where Kueue reads the queue and priority labels: the pod for pod-integration kinds.
_LABELS_ON_POD = {("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "DaemonSet")}


def is_workload(obj: Mapping) -> bool:
    return (api_group(obj), obj.get("kind")) in _INTEGRATIONS


def podsets(obj: Mapping) -> list[PodSet]:
    """The pod sets of one Workload of `obj` ([] for objects that make no pods)."""
    return list(of(obj).podsets) if is_workload(obj) else []


def of(obj: Mapping) -> Demand:
    """The Workloads `obj` makes. Objects that make no pods have no pod sets."""
    key: tuple[str, Any] = (api_group(obj), obj.get("kind"))   # the kind as the input has it
    meta = _dict(obj.get("metadata"))
    spec = _dict(obj.get("spec"))
    problems: list[Problem] = []
    build = _INTEGRATIONS.get(key)
    sets = tuple(build(obj, problems)) if build else ()
    copies, scalable = 1, False
    if key in _COPIES_FOLLOW_REPLICAS:
        copies, scalable = _replicas(spec, problems), True
    elif key == ("apps", "StatefulSet"):
        scalable = True
    queue, wpc = _labels(obj, key, sets)
    pc = next((ps.spec.get("priorityClassName") for ps in sets if ps.spec.get("priorityClassName")), None)
    explicit = None
    if key == ("kueue.x-k8s.io", "Workload"):
        queue = spec.get("queueName") if isinstance(spec.get("queueName"), str) else None
        wpc, pc, explicit = _workload_priority(obj)
    return Demand(
        kind=str(obj.get("kind")), group=key[0], namespace=str(meta.get("namespace") or ""),
        name=str(meta.get("name") or ""), podsets=sets, copies=copies, scalable=scalable,
        queue=queue, workload_priority_class=wpc, priority_class_name=pc,
        problems=tuple(dict.fromkeys(problems)), priority=explicit)


def _labels(obj: Mapping, key: tuple, sets: tuple[PodSet, ...]) -> tuple[str | None, str | None]:
    labels = _dict(_dict(obj.get("metadata")).get("labels"))
    if key == ("batch", "CronJob"):
        labels = _dict(_dict(_dict(_dict(obj.get("spec")).get("jobTemplate")).get("metadata")).get("labels"))
    queue, wpc = labels.get(QUEUE_LABEL), labels.get(PRIORITY_LABEL)
    if key in _LABELS_ON_POD and sets:
        pod_labels = _dict(sets[0].metadata.get("labels"))
        # Kueue's Deployment webhook copies the queue label to the pods; the
        # priority label is read from the pod (pod integration).
        queue = queue or pod_labels.get(QUEUE_LABEL)
        wpc = pod_labels.get(PRIORITY_LABEL)
    return (queue if isinstance(queue, str) else None, wpc if isinstance(wpc, str) else None)
