"""What a plan reports: a row per Workload, usage per ClusterQueue, TPU cubes, per step; and
the snapshot of a simulator that makes them."""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING

from ..kernel.quantity import show as fmt
from . import packer, quota, tasassign
from .quota import FR, ZERO
from .state import ADMITTED, FINISHED, NEVER, PENDING, RESERVED, UNMANAGED, State

if TYPE_CHECKING:
    from .simulate import Simulator


@dataclass(frozen=True)
class Row:
    workload: str
    kind: str
    cluster_queue: str | None
    priority: int
    priority_source: str
    state: str                     # admitted | reserved | pending | preempted | never | unmanaged | finished
    detail: str
    demand: dict[str, str]
    flavors: dict[str, str]
    # MultiKueue group plans only (dispatch.py): the cluster it runs on (or waits in), the cluster
    # it was submitted to, and the state of its copy on each worker.
    cluster: str | None = None
    home: str | None = None
    copies: tuple[tuple[str, str], ...] = ()
    # Topology-aware pod sets: pod set -> {flavor, levels, domains: [[values..., pods]]} (plan/tas.py).
    topology: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Usage:
    cluster_queue: str
    flavor: str
    resource: str
    used: Decimal
    nominal: Decimal
    borrowed: Decimal = ZERO       # used above nominal, taken from the cohort
    lent: Decimal = ZERO           # this queue's unused nominal that others use
    cohort: str | None = None
    lenders: tuple[str, ...] = ()  # queues of the cohort with unused quota (who the borrowed quota is from)
    borrowing_limit: Decimal | None = None
    lending_limit: Decimal | None = None
    cluster: str | None = None     # MultiKueue group plans: whose ClusterQueue


@dataclass(frozen=True)
class Cubes:
    flavor: str
    cubes: tuple[tuple[int, int, tuple[str, ...]], ...]     # (used chips, chips per cube, holders)


@dataclass(frozen=True)
class StepResult:
    index: int
    title: str
    action: str
    events: tuple[str, ...]
    rows: tuple[Row, ...]
    usage: tuple[Usage, ...]
    cubes: tuple[Cubes, ...]
    failures: tuple[str, ...] = ()          # scenario expectations that did not hold
    checked: bool = False                   # the step has an `expect:` (held or not)


STATES = (ADMITTED, RESERVED, "preempted", PENDING, NEVER, UNMANAGED, FINISHED)


def snapshot(sim: Simulator, index: int, title: str, action: str) -> StepResult:
    rows = [_row(st) for st in sim.states.values()]
    rows.sort(key=lambda r: (STATES.index(r.state), -r.priority, _natural(r.workload)))
    cubes = []
    for flavor, res in sorted(sim.cache.reservations.items()):
        per = []
        for i in range(res.n_cubes):
            holders = tuple(sorted({h for h in res.holders() for p in res.placements(h) if i in p.cubes}))
            per.append((res.used(i), res.cube_chips, holders))
        cubes.append(Cubes(flavor, tuple(per)))
    return StepResult(index, title, action, tuple(sim.store.events), tuple(rows), tuple(usage_rows(sim)), tuple(cubes))


def _row(st: State) -> Row:
    wl = st.wl
    state, detail = st.status, st.reason
    if st.holds_quota:
        detail = _holding(st)
    elif st.preempted_by and st.status == PENDING:
        state = "preempted"
        detail = f"by {', '.join(st.preempted_by)}; waiting: {st.reason}" \
            if not st.reason.startswith("preempted by") else f"by {', '.join(st.preempted_by)}"
    notes = list(wl.notes) + _unmodelled(st)
    if notes:
        detail += " (" + "; ".join(notes) + ")"
    return Row(wl.key, wl.owner[0], st.cluster_queue, wl.priority.value, wl.priority.source, state, detail,
               {r: str(fmt(r, v)) for r, v in sorted(wl.demand.items())}, dict(sorted(st.flavors.items())),
               topology=tasassign.as_json(st.assignment.topology) if st.assignment and st.holds_quota else {})


def _holding(st: State) -> str:
    """The detail of a Workload that holds quota: where, how much of it, and what happened."""
    detail = "admitted to " + ", ".join(st.assignment.flavor_names() if st.assignment else [])
    if st.status == RESERVED:
        detail = st.reason + "; " + detail.replace("admitted to", "quota in")
    if st.assignment and st.assignment.counts:
        detail += " (partial admission: " + ", ".join(
            f"{ps.name} {c} of {ps.count} pods" for ps, c in zip(st.wl.podsets, st.assignment.counts, strict=True)) + ")"
    if st.placements:
        detail += ": " + _placements(st.placements)
    if st.assignment and st.assignment.topology:
        detail += "; " + tasassign.describe(st.assignment.topology)
    if st.preempted_by:
        return f"preempted by {', '.join(st.preempted_by)}, then re-admitted; {detail}"
    return "re-admitted; " + detail if st.readmitted else detail


def _natural(name: str) -> tuple:
    """team-a/job-2 before team-a/job-10."""
    import re
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def _unmodelled(st: State) -> list[str]:
    """What the planner does not model for this Workload, said where it matters."""
    out = []
    for ps in st.wl.podsets:
        aff = ps.spec.get("affinity")
        aff = aff if isinstance(aff, dict) else {}
        if aff.get("podAffinity") or aff.get("podAntiAffinity") or ps.spec.get("topologySpreadConstraints"):
            out.append("not modelled: pod affinity and spread constraints are the kube-scheduler's, "
                       "Kueue does not look at them")
    return list(dict.fromkeys(out))


def usage_rows(sim: Simulator) -> list[Usage]:
    out = []
    tree = sim.cache.tree
    for cq in sorted(sim.cluster.cluster_queues.values(), key=lambda q: q.name):
        node = tree.cqs.get(cq.name)
        if node is None:
            continue
        for g in cq.groups:
            for fq in g.flavors:
                for r in g.covered:
                    q = fq.resources.get(r)
                    if q is None:
                        continue
                    fr = (fq.flavor, r)
                    used = node.usage.get(fr, ZERO)
                    # Above nominal is borrowed only in a cohort; alone, it is what a quota cut left.
                    borrowed = max(ZERO, used - q.nominal) if node.parent is not None else ZERO
                    lent = _lent(node, fr)
                    lenders: tuple[str, ...] = ()
                    if borrowed > 0 and node.parent is not None:
                        lenders = tuple(f"{o.name} ({fmt(r, o.nominal(fr) - o.usage.get(fr, ZERO))} unused)"
                                        for o in node.root().subtree_cqs()
                                        if o is not node and o.nominal(fr) > o.usage.get(fr, ZERO))
                        pool = node.root().quotas.get(fr)
                        if pool and pool.nominal > 0:
                            lenders += (f"cohort {node.root().name} ({fmt(r, pool.nominal)} of its own)",)
                    out.append(Usage(cq.name, fq.flavor, r, used, q.nominal, borrowed, lent,
                                     cq.cohort, lenders, q.borrowing, q.lending))
    return out


def _lent(node: quota.Node, fr: FR) -> Decimal:
    """This queue's share of what the other queues of its cohort borrow: their borrowing is
    spread over the lenders in proportion to the unused quota each lends (Kueue pools it)."""
    if node.parent is None:
        return ZERO
    members = list(node.root().subtree_cqs())

    def lendable(n: quota.Node) -> Decimal:
        unused = max(ZERO, n.nominal(fr) - n.usage.get(fr, ZERO))
        q = n.quotas.get(fr)
        return min(unused, q.lending) if q is not None and q.lending is not None else unused
    borrowed = sum((max(ZERO, n.usage.get(fr, ZERO) - n.nominal(fr)) for n in members), ZERO)
    total = sum((lendable(n) for n in members), ZERO)
    pool = node.root().quotas.get(fr)
    total += pool.nominal if pool else ZERO
    mine = lendable(node)
    if borrowed <= 0 or total <= 0 or mine <= 0:
        return ZERO
    return min(mine, borrowed * mine / total)


def _placements(placements: list[packer.Placement]) -> str:
    groups: dict[tuple, int] = {}
    for p in placements:
        k = (p.shape, p.cubes if p.origin is None else (p.cubes[0],), p.origin is None)
        groups[k] = groups.get(k, 0) + 1
    parts = []
    for (shape, cubes, _whole), n in sorted(groups.items(), key=lambda kv: (-kv[0][0].chips, kv[0][1])):
        where = ("cubes " if len(cubes) > 1 else "cube ") + ",".join(map(str, cubes))
        parts.append(f"{n} slice{'s' if n > 1 else ''} {shape} ({where})")
    return "; ".join(parts)


@dataclass(frozen=True)
class Plan:
    source: str
    scenario: str | None
    description: str
    notes: tuple[str, ...]
    steps: tuple[StepResult, ...]
    clusters: tuple[str, ...] = ()          # MultiKueue group plans: the manager, then its workers
    release: str = ""                       # the Kueue release whose rules the plan followed
    release_source: str = ""                # who chose it (the spec, --kueue-version, the default)

    @property
    def verdict(self) -> str:
        """One line: whether the scenario's expectations hold, and where they do not."""
        checked = [s for s in self.steps if s.checked]
        failed = [s for s in checked if s.failures]
        if not checked:
            return "no expectations to check"
        if not failed:
            return f"expectations hold ({len(checked)} of {len(self.steps)} step(s) checked)"
        return (f"expectations FAIL in {len(failed)} of {len(checked)} checked step(s): "
                + "; ".join(f"step {s.index} ({s.title})" for s in failed))

    @property
    def failures(self) -> list[str]:
        where = f"{self.scenario}: " if self.scenario else ""
        return [f"{where}step {s.index} ({s.title}): {f}" for s in self.steps for f in s.failures]
