"""Capacity impact of a change, per overlay (one profile's cluster): for each
ClusterQueue (and each cohort of them) and resource, the nominal quota, what
the queued workloads ask for at their fewest and most replicas (an HPA's
range), the headroom left at the most, and the workloads that can never be
admitted because one of their Workloads needs more than the ClusterQueue can
ever give it.

Every number of what a workload asks for comes from generator/demand.py.
"Can ever give": a flavor's nominal quota, plus, in a cohort, what it may
borrow: its borrowingLimit, or else what the other ClusterQueues of the cohort
lend (their lendingLimit, else their nominal quota) (Kueue docs, "Cluster
Queue": borrowingLimit, lendingLimit). Hierarchical Cohort objects and fair
sharing are not modelled."""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from .. import catalog, demand, quantity
from .objects import Key, Unit, sort_key

ACCELERATOR_RESOURCES = tuple(sorted({d.resource for d in catalog.DEVICES.values()}))
Requests = dict[str, Decimal]
ZERO = Decimal(0)


# ---------------------------------------------------------------- workloads' demand

def hpa_ranges(unit: Unit) -> dict[tuple, tuple[int, int]]:
    """(target kind, namespace, name) -> (minReplicas, maxReplicas) of every HPA."""
    out = {}
    for key, loc in unit.items():
        if key[1] == "HorizontalPodAutoscaler":
            spec = loc.obj.get("spec", {})
            ref = spec.get("scaleTargetRef", {})
            out[(ref.get("kind"), key[2], ref.get("name"))] = (spec.get("minReplicas", 1), spec.get("maxReplicas", 1))
    return out


def pod_ranges(obj: dict, hpa: dict) -> list[tuple[demand.PodSet, int, int]]:
    """(pod set, fewest pods, most pods) of a workload object, all its Workloads
    together: the demand module's counts, scaled by an HPA's range where one targets it."""
    d = demand.of(obj)
    meta = obj["metadata"]
    scaled = hpa.get((d.kind, meta.get("namespace"), meta["name"])) if d.scalable else None
    out = []
    for ps in d.podsets:
        if scaled is None:
            n = ps.count * d.copies
            out.append((ps, n, n))
        elif d.kind == "StatefulSet":          # one pod group whose size is the replica count
            out.append((ps, scaled[0], scaled[1]))
        else:                                  # one Workload per replica
            out.append((ps, ps.count * scaled[0], ps.count * scaled[1]))
    return out


def _pods(lo: int, hi: int, scaled: bool) -> str:
    if lo == hi:
        return f"{lo} pod" if lo == 1 else f"{lo} pods"
    return f"{lo}–{hi} pods" + (" (HPA)" if scaled else "")


def span(lo, hi) -> str:
    return str(lo) if lo == hi else f"{lo}–{hi}"


def accelerator_summary(obj: dict, hpa: dict, resource: str) -> tuple[str, int, int] | None:
    """('2 × 2 pods = 4', fewest, most) for one accelerator resource, or None if it asks for none."""
    meta = obj["metadata"]
    scaled = (obj["kind"], meta.get("namespace"), meta["name"]) in hpa
    parts, lo_total, hi_total = [], 0, 0
    for ps, lo, hi in pod_ranges(obj, hpa):
        n = int(ps.requests.get(resource, 0))
        if n and hi:
            parts.append(f"{n} × {_pods(lo, hi, scaled)}")
            lo_total, hi_total = lo_total + n * lo, hi_total + n * hi
    if not parts:
        return None
    return f"{' + '.join(parts)} = {span(lo_total, hi_total)}", lo_total, hi_total


# ---------------------------------------------------------------- queues

@dataclass(frozen=True)
class Limits:
    nominal: Decimal
    borrowing: Decimal | None
    lending: Decimal | None


@dataclass(frozen=True)
class Group:
    covered: tuple[str, ...]
    flavors: tuple[tuple[str, dict[str, Limits]], ...]   # (flavor, resource -> limits)


@dataclass(frozen=True)
class Queue:
    name: str
    cohort: str | None
    groups: tuple[Group, ...]

    @property
    def covered(self) -> set[str]:
        return {r for g in self.groups for r in g.covered}

    def quota(self, resource: str) -> Decimal:
        return sum((lim[resource].nominal for g in self.groups for _, lim in g.flavors if resource in lim), ZERO)

    def lendable(self, flavor: str, resource: str) -> Decimal:
        for g in self.groups:
            for name, lim in g.flavors:
                if name == flavor and resource in lim:
                    r = lim[resource]
                    return r.nominal if r.lending is None else min(r.lending, r.nominal)
        return ZERO


def _quantity(v) -> Decimal | None:
    if v is None:
        return None
    try:
        return quantity.parse(v)
    except (ValueError, ArithmeticError):
        return None


def _queue(name: str, obj: dict) -> Queue:
    spec = obj.get("spec") or {}
    groups = []
    for g in spec.get("resourceGroups") or []:
        flavors = []
        for f in g.get("flavors") or []:
            lim = {r["name"]: Limits(_quantity(r.get("nominalQuota")) or ZERO, _quantity(r.get("borrowingLimit")),
                                     _quantity(r.get("lendingLimit")))
                   for r in f.get("resources") or [] if isinstance(r, dict) and "name" in r}
            flavors.append((str(f.get("name")), lim))
        groups.append(Group(tuple(g.get("coveredResources") or ()), tuple(flavors)))
    # v1beta2 names the cohort `cohortName`, v1beta1 `cohort`.
    return Queue(name, spec.get("cohortName") or spec.get("cohort"), tuple(groups))


# ---------------------------------------------------------------- one overlay's picture

@dataclass(frozen=True)
class Queued:
    """A workload object, where it queues and what it asks for at its fewest and most replicas."""
    key: Key
    cluster_queue: str | None
    problem: str | None          # why it reaches no ClusterQueue
    lo: Requests
    hi: Requests
    demand: demand.Demand


@dataclass
class Picture:
    queues: dict[str, Queue] = field(default_factory=dict)
    workloads: dict[Key, Queued] = field(default_factory=dict)

    def demand(self, cq: str, resource: str) -> tuple[Decimal, Decimal]:
        qs = [w for w in self.workloads.values() if w.cluster_queue == cq]
        return (sum((w.lo.get(resource, ZERO) for w in qs), ZERO), sum((w.hi.get(resource, ZERO) for w in qs), ZERO))

    def ever(self, queue: Queue, flavor: str, resource: str) -> Decimal:
        """The most of `resource` a Workload can get from `flavor` of `queue`, borrowing included."""
        own = next((lim[resource] for g in queue.groups for name, lim in g.flavors
                    if name == flavor and resource in lim), None)
        if own is None:
            return ZERO
        if not queue.cohort:
            return own.nominal
        lent = sum((q.lendable(flavor, resource) for q in self.queues.values()
                    if q.cohort == queue.cohort and q.name != queue.name), ZERO)
        return own.nominal + (lent if own.borrowing is None else min(own.borrowing, lent))


def picture(unit: Unit) -> Picture:
    pic = Picture()
    local = {}
    for key, loc in unit.items():
        if key[1] == "ClusterQueue" and key[0] == "kueue.x-k8s.io":
            pic.queues[key[3]] = _queue(key[3], loc.obj)
        elif key[1] == "LocalQueue" and key[0] == "kueue.x-k8s.io":
            local[(key[2], key[3])] = (loc.obj.get("spec") or {}).get("clusterQueue")
    hpa = hpa_ranges(unit)
    for key in sorted(unit, key=sort_key):
        obj = unit[key].obj
        if not demand.is_workload(obj):
            continue
        d = demand.of(obj)
        if not d.queue:
            continue          # not queued: Kueue does not count it
        lo: Requests = {}
        hi: Requests = {}
        for ps, fewest, most in pod_ranges(obj, hpa):
            for r, v in demand.PodSet.with_pods(ps).items():
                lo[r] = lo.get(r, ZERO) + v * fewest
                hi[r] = hi.get(r, ZERO) + v * most
        cq = local.get((key[2], d.queue))
        problem = None
        if (key[2], d.queue) not in local:
            problem = f"LocalQueue {key[2]}/{d.queue} does not exist"
        elif cq not in pic.queues:
            problem = f"ClusterQueue {cq} (of LocalQueue {key[2]}/{d.queue}) does not exist"
        pic.workloads[key] = Queued(key, cq if problem is None else None, problem, lo, hi, d)
    return pic


# ---------------------------------------------------------------- never admitted

def fmt(resource: str, value: Decimal) -> str:
    """A quantity as the quota is written; negative values (headroom) keep their sign."""
    sign = "-" if value < 0 else ""
    return f"{sign}{quantity.fmt(resource, abs(value))}"


def _podset_never(pic: Picture, queue: Queue, ps: demand.PodSet) -> str | None:
    count = ps.count if ps.min_count is None else ps.min_count
    need = {r: v * count for r, v in ps.with_pods().items() if v and (r != demand.PODS or r in queue.covered)}
    missing = sorted(r for r in need if r not in queue.covered)
    if missing:
        return f"asks for {missing[0]}, which ClusterQueue {queue.name} does not cover"
    for g in queue.groups:
        asked = {r: v for r, v in need.items() if r in g.covered}
        if not asked or any(all(pic.ever(queue, f, r) >= v for r, v in asked.items()) for f, _ in g.flavors):
            continue
        best = {r: max((pic.ever(queue, f, r) for f, _ in g.flavors), default=ZERO) for r in asked}
        r = next((r for r in sorted(asked) if best[r] < asked[r]), sorted(asked)[0])
        most = "no single flavor has all of it" if best[r] >= asked[r] else \
            f"ClusterQueue {queue.name} can give at most {fmt(r, best[r])}"
        return (f"one Workload needs {fmt(r, asked[r])} {r} ({count} pod{'s' if count != 1 else ''} × "
                f"{fmt(r, ps.with_pods()[r])}); {most}")
    return None


def never_admitted(pic: Picture, w: Queued) -> str | None:
    """Why one Workload of `w` can never be admitted, or None."""
    if w.problem or w.cluster_queue is None:
        return w.problem
    queue = pic.queues[w.cluster_queue]
    for ps in w.demand.podsets:
        why = _podset_never(pic, queue, ps)
        if why:
            return why
    return None
