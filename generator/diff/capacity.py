"""Capacity impact of a change, per overlay (one profile's cluster): for each
ClusterQueue (and each cohort of them) and resource, the nominal quota, what
the queued workloads ask for at their fewest and most replicas (an HPA's
range), the headroom left at the most, and the workloads that can never be
admitted because one of their Workloads needs more than the ClusterQueue can
ever give it.

Every number of what a workload asks for comes from generator/kernel/demand.py; every
number of what the queues give, and the never-admitted verdict, from
generator/kernel/supply.py. Quota is shown per ClusterQueue and flavor, never summed
across flavors (a flavor is one kind of machine)."""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from ..kernel import catalog, demand, quantity, supply
from ..kernel.supply import FR
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


# ---------------------------------------------------------------- one overlay's picture

@dataclass(frozen=True)
class Queued:
    """A workload object, where it queues and what it asks of each flavor at its fewest and most replicas."""
    key: Key
    cluster_queue: str | None
    problem: str | None          # why it reaches no ClusterQueue
    lo: dict[FR, Decimal]
    hi: dict[FR, Decimal]
    demand: demand.Demand


@dataclass
class Picture:
    tree: supply.Tree = field(default_factory=lambda: supply.Tree([]))
    workloads: dict[Key, Queued] = field(default_factory=dict)

    def demand(self, cqs: set[str], fr: FR) -> tuple[Decimal, Decimal]:
        qs = [w for w in self.workloads.values() if w.cluster_queue in cqs]
        return (sum((w.lo.get(fr, ZERO) for w in qs), ZERO), sum((w.hi.get(fr, ZERO) for w in qs), ZERO))


def _asks(pic: Picture, cq: str | None, obj: dict, hpa: dict) -> tuple[dict[FR, Decimal], dict[FR, Decimal]]:
    """What the object's Workloads ask of each flavor at their fewest and most replicas: each pod
    set in the flavor the supply model places it (generator/kernel/supply.py placement)."""
    lo: dict[FR, Decimal] = {}
    hi: dict[FR, Decimal] = {}
    if cq is None:
        return lo, hi
    ranges = pod_ranges(obj, hpa)
    where = supply.placement(pic.tree, cq, [ps for ps, _, _ in ranges])
    for (ps, fewest, most), flavors in zip(ranges, where, strict=True):
        for r, v in ps.with_pods().items():
            if r in flavors:
                fr = (flavors[r], r)
                lo[fr] = lo.get(fr, ZERO) + v * fewest
                hi[fr] = hi.get(fr, ZERO) + v * most
    return lo, hi


def picture(unit: Unit) -> Picture:
    pic = Picture(supply.from_objects(loc.obj for key, loc in unit.items()
                                      if key[0] == "kueue.x-k8s.io" and key[1] in ("ClusterQueue", "Cohort", "ResourceFlavor")))
    local = {}
    for key, loc in unit.items():
        if key[1] == "LocalQueue" and key[0] == "kueue.x-k8s.io":
            local[(key[2], key[3])] = (loc.obj.get("spec") or {}).get("clusterQueue")
    hpa = hpa_ranges(unit)
    for key in sorted(unit, key=sort_key):
        obj = unit[key].obj
        if not demand.is_workload(obj):
            continue
        d = demand.of(obj)
        if not d.queue:
            continue          # not queued: Kueue does not count it
        cq = local.get((key[2], d.queue))
        problem = None
        if (key[2], d.queue) not in local:
            problem = f"LocalQueue {key[2]}/{d.queue} does not exist"
        elif cq not in pic.tree.cqs:
            problem = f"ClusterQueue {cq} (of LocalQueue {key[2]}/{d.queue}) does not exist"
        cq = cq if problem is None else None
        lo, hi = _asks(pic, cq, obj, hpa)
        pic.workloads[key] = Queued(key, cq, problem, lo, hi, d)
    return pic


# ---------------------------------------------------------------- never admitted

def fmt(resource: str, value: Decimal) -> str:
    """A quantity as every tool shows it (quantity.show); negative values (headroom) keep their sign."""
    return quantity.show(resource, value)


def never_admitted(pic: Picture, w: Queued) -> str | None:
    """Why one Workload of `w` can never be admitted (the supply model's verdict), or None."""
    if w.problem or w.cluster_queue is None:
        return w.problem
    verdict = supply.never(pic.tree, w.cluster_queue, w.demand.podsets)
    return None if verdict is None else verdict.message
