"""Cohort policy holes in one cluster's Kueue objects: quota that is silently shared or that a
queue can never take back. Each finding says what happens and the fix; synth prints them as
warnings, `validate` reports them (KQ031-KQ034), `diff` lists them in its summary, and `plan`
names the policy in a pending reason.

Kueue's defaults behind them (apis/kueue/v1beta2 clusterqueue_types.go, v0.17.4; the same in
v1beta1 at v0.12.3): a missing borrowingLimit means "no limit" (a ClusterQueue in a cohort may
borrow everything the others leave idle); preemption.reclaimWithinCohort and withinClusterQueue
default to Never (a lender cannot preempt borrowers to get its quota back; a ClusterQueue does
not preempt its own lower-priority workloads). Deployment pods are Workloads of their own (pod
integration), so an HPA's replicas are admitted one by one, and never past what the
ClusterQueue can ever get (supply.py potentialAvailable)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from . import demand, quantity, supply
from .errors import Problem, problem

KUEUE = "kueue.x-k8s.io"
SERVING_KINDS = ("Deployment", "LeaderWorkerSet", "StatefulSet")   # long-running: serving


def finding(rule: str, kind: str, namespace: str | None, name: str, path: tuple, message: str,
            fix: str) -> Problem:
    """One finding, as the one problem type: the fix is its hint."""
    return problem(path, message, rule=rule, kind=kind, namespace=namespace or "", name=name, hint=fix)


def line(p: Problem) -> str:
    return f"{p.object}: {p.message}. Fix: {p.hint}"


def _map(v) -> dict:
    return v if isinstance(v, dict) else {}


def _cluster_queues(objs: Iterable[Mapping]) -> dict[str, Mapping]:
    return {o["metadata"]["name"]: o for o in objs if _is(o, "ClusterQueue")}


def _is(o: Mapping, kind: str) -> bool:
    return o.get("kind") == kind and str(o.get("apiVersion", "")).rpartition("/")[0] == KUEUE \
        and isinstance(_map(o.get("metadata")).get("name"), str)


def _preemption(cq: Mapping, key: str) -> str:
    return str(_map(_map(cq.get("spec")).get("preemption")).get(key) or "Never")


def findings(objs: Sequence[Mapping]) -> list[Problem]:
    """Every policy finding of one cluster's objects, in a stable order."""
    tree = supply.from_objects(objs)
    cqs = _cluster_queues(objs)
    out = _unlimited_borrowing(tree, cqs) + _cannot_reclaim(tree, cqs)
    queued = _queued(objs, cqs)
    out += _serving_blocked(tree, cqs, queued, _priorities(objs))
    out += _hpa_never(tree, objs, queued)
    return out


# ---------------------------------------------------------------- borrowing and lending

def _members(tree: supply.Tree, cq: str) -> list[str]:
    """The other ClusterQueues of cq's cohort tree."""
    node = tree.cqs.get(cq)
    if node is None or node.parent is None:
        return []
    return [n.name for n in node.root().subtree_cqs() if n.name != cq]


def _open_flavors(tree: supply.Tree, name: str, others: list[str]) -> list[str]:
    """Flavors the queue holds nothing of (no resource nominal) but may borrow without limit
    some resource another queue of the cohort holds."""
    quotas = tree.holders[name].quotas()
    listed = {f for (f, _), q in quotas.items() if q.nominal > 0}   # a flavor the queue holds some of
    lent = {fr for o in others for fr, q in tree.holders[o].quotas().items() if q.nominal > 0}
    return list(dict.fromkeys(f for (f, r), q in sorted(quotas.items())
                              if f not in listed and q.borrowing is None and (f, r) in lent))


def _unlimited_borrowing(tree: supply.Tree, cqs: dict[str, Mapping]) -> list[Problem]:
    out = []
    for name in sorted(cqs):
        others = _members(tree, name)
        flavors = _open_flavors(tree, name, others) if others and name in tree.holders else []
        if flavors:
            out.append(finding(
                "KQ031", "ClusterQueue", None, name, ("spec", "resourceGroups"),
                f"holds nothing of flavor{'s' if len(flavors) > 1 else ''} {', '.join(flavors)} but may borrow all "
                f"of {'them' if len(flavors) > 1 else 'it'} (no borrowingLimit: Kueue's default is no limit), so "
                f"capacity added to the cohort is lent to this queue too",
                "give those flavors a borrowingLimit (in the spec: the team's quotas.<flavor>.<resource>."
                "borrowingLimit, 0 to never borrow), or list them with the share the team should have"))
    return out


def _lends(holder: supply.Holder) -> list[tuple[str, str]]:
    return sorted(fr for fr, q in holder.quotas().items() if q.nominal > 0 and (q.lending is None or q.lending > 0))


def _borrowers(tree: supply.Tree, cq: str, fr: tuple[str, str]) -> list[str]:
    return [o for o in _members(tree, cq) if (q := tree.holders[o].quotas().get(fr)) is not None
            and (q.borrowing is None or q.borrowing > 0)]


def _cannot_reclaim(tree: supply.Tree, cqs: dict[str, Mapping]) -> list[Problem]:
    out = []
    for name in sorted(cqs):
        holder = tree.holders.get(name)
        if holder is None or _preemption(cqs[name], "reclaimWithinCohort") != "Never":
            continue
        lent = [fr for fr in _lends(holder) if _borrowers(tree, name, fr)]
        if not lent:
            continue
        borrowers = sorted({b for fr in lent for b in _borrowers(tree, name, fr)})
        flavors = list(dict.fromkeys(f for f, _ in lent))
        out.append(finding(
            "KQ032", "ClusterQueue", None, name, ("spec", "preemption", "reclaimWithinCohort"),
            f"lends its quota of {', '.join(flavors)} to {', '.join(borrowers)} but cannot take it back "
            f"(reclaimWithinCohort: Never, Kueue's default): its own workloads wait until the borrowed work ends",
            "set preemption.reclaimWithinCohort: Any (or LowerPriority) on this queue (in the spec: queues[]."
            "preemption or the team's preemption), or a lendingLimit on what it may lend"))
    return out


# ---------------------------------------------------------------- serving and HPAs

@dataclass(frozen=True)
class _Queued:
    obj: Mapping
    demand: demand.Demand
    cluster_queue: str


def _queued(objs: Iterable[Mapping], cqs: dict[str, Mapping]) -> list[_Queued]:
    local = {(o["metadata"].get("namespace") or "default", o["metadata"]["name"]): _map(o.get("spec")).get("clusterQueue")
             for o in objs if _is(o, "LocalQueue")}
    out = []
    for o in objs:
        if not isinstance(o, dict) or not demand.is_workload(o):
            continue
        d = demand.of(o)
        cq = local.get((d.namespace, d.queue)) if d.queue else None
        if isinstance(cq, str) and cq in cqs:
            out.append(_Queued(o, d, cq))
    return out


def _priorities(objs: Iterable[Mapping]) -> tuple[dict[str, int], dict[str, int], int]:
    """(WorkloadPriorityClass values, PriorityClass values, the globalDefault PriorityClass's)."""
    wpc, pc, default = {}, {}, 0
    for o in objs:
        name, value = _map(o.get("metadata")).get("name"), o.get("value")
        if not isinstance(name, str) or not isinstance(value, int):
            continue
        if _is(o, "WorkloadPriorityClass"):
            wpc[name] = value
        elif o.get("kind") == "PriorityClass":
            pc[name] = value
            default = value if o.get("globalDefault") is True else default
    return wpc, pc, default


def _priority(d: demand.Demand, prio: tuple[dict[str, int], dict[str, int], int]) -> int:
    """Kueue's jobframework order: the WorkloadPriorityClass label, the pods' PriorityClass,
    the globalDefault PriorityClass, else 0."""
    wpc, pc, default = prio
    if d.workload_priority_class in wpc:
        return wpc[d.workload_priority_class]
    if d.priority_class_name in pc:
        return pc[d.priority_class_name]
    return default


def _serving_blocked(tree: supply.Tree, cqs: dict[str, Mapping], queued: list[_Queued], prio) -> list[Problem]:
    out = []
    for q in queued:
        if q.demand.kind not in SERVING_KINDS:
            continue
        mine = _priority(q.demand, prio)
        lower = sorted(f"{x.demand.kind} {x.demand.name}" for x in queued if x.cluster_queue == q.cluster_queue
                       and x is not q and _priority(x.demand, prio) < mine)
        reasons = []
        if lower and _preemption(cqs[q.cluster_queue], "withinClusterQueue") == "Never":
            reasons.append(f"lower-priority work in ClusterQueue {q.cluster_queue} ({', '.join(lower[:3])}"
                           f"{' …' if len(lower) > 3 else ''}) can hold the quota it needs, and the queue does not "
                           f"preempt it (withinClusterQueue: Never)")
        holder = tree.holders[q.cluster_queue]
        if _preemption(cqs[q.cluster_queue], "reclaimWithinCohort") == "Never":
            borrowers = sorted({b for fr in _lends(holder) for b in _borrowers(tree, q.cluster_queue, fr)})
            if borrowers:
                reasons.append(f"{', '.join(borrowers)} may borrow its queue's quota, which ClusterQueue "
                               f"{q.cluster_queue} cannot take back (reclaimWithinCohort: Never)")
        if reasons:
            out.append(finding(
                "KQ033", q.demand.kind, q.demand.namespace, q.demand.name, ("metadata", "labels"),
                f"serving can be kept waiting: {'; '.join(reasons)}",
                f"on ClusterQueue {q.cluster_queue}: preemption.withinClusterQueue: LowerPriority and "
                f"reclaimWithinCohort: Any (in the spec: the queue's or team's preemption), or give serving a "
                f"ClusterQueue of its own"))
    return out


def _hpas(objs: Iterable[Mapping]) -> dict[tuple, tuple[Mapping, int]]:
    """(kind, namespace, name) of the target -> (HPA, maxReplicas)."""
    out = {}
    for o in objs:
        if o.get("kind") != "HorizontalPodAutoscaler":
            continue
        spec, meta = _map(o.get("spec")), _map(o.get("metadata"))
        ref, most = _map(spec.get("scaleTargetRef")), spec.get("maxReplicas")
        if isinstance(most, int) and isinstance(meta.get("name"), str):
            out[(ref.get("kind"), meta.get("namespace") or "default", ref.get("name"))] = (o, most)
    return out


def most_pods(tree: supply.Tree, cq: str, ps) -> int:
    """How many pods of one pod set ClusterQueue `cq` can ever hold at once, each its own
    Workload (pod integration): per flavor the pods may use, its potentialAvailable over the
    pod's request, the scarcest resource deciding."""
    holder = tree.holders[cq]
    requests = {r: v for r, v in ps.with_pods().items() if v > 0}
    total = 0
    for g in holder.groups:
        asked = {r: v for r, v in requests.items() if r in g.covered}
        if not asked:
            continue
        ok = supply.eligible_flavors(tree, g, ps)
        fit = sum(min(int(tree.most(cq, f, r) // v) for r, v in asked.items()) for f in ok)
        total = fit if total == 0 else min(total, fit)
    return total


def _hpa_never(tree: supply.Tree, objs: Sequence[Mapping], queued: list[_Queued]) -> list[Problem]:
    hpas = _hpas(objs)
    out = []
    for q in queued:
        d = q.demand
        found = hpas.get((d.kind, d.namespace, d.name))
        if found is None or d.kind != "Deployment" or len(d.podsets) != 1:
            continue
        hpa, most = found
        fits = most_pods(tree, q.cluster_queue, d.podsets[0])
        if most > fits:
            per = ", ".join(f"{quantity.show(r, v)} {r}" for r, v in sorted(d.podsets[0].requests.items()) if v > 0)
            meta = _map(hpa.get("metadata"))
            out.append(finding(
                "KQ034", "HorizontalPodAutoscaler", meta.get("namespace"), meta["name"], ("spec", "maxReplicas"),
                f"maxReplicas {most}, but ClusterQueue {q.cluster_queue} can ever admit {fits} pod"
                f"{'' if fits == 1 else 's'} of Deployment {d.name} ({per} each, borrowing included): "
                f"{most - fits} replica{'' if most - fits == 1 else 's'} would stay pending",
                f"lower maxReplicas to {fits}, or raise the queue's quota for this workload"))
    return out


def tree_lines(emitted: Mapping[str, list]) -> list[str]:
    """One line per finding of each overlay (with base/), as synth prints them."""
    base = list(emitted.get("base", []))
    return [f"{unit}: {line(f)}" for unit in sorted(emitted) if unit.startswith("overlays/")
            for f in findings(list(emitted[unit]) + base)]
