"""Which admitted Workloads Kueue evicts to make room (Kueue v0.17.4
pkg/scheduler/preemption: preemption.go, classical/, fairsharing/, common/).

Classical preemption. Candidates use a (flavor, resource) the preemptor needs
preempted there, and are:
- in the preemptor's ClusterQueue, allowed by withinClusterQueue (LowerPriority,
  LowerOrNewerEqualPriority, Any);
- in other ClusterQueues of the cohort tree that borrow, allowed by
  reclaimWithinCohort. When the preemptor's own subtree has the quota it needs
  (a hierarchical advantage) it reclaims regardless of priority; otherwise
  borrowWithinCohort (with maxPriorityThreshold) decides whether the preemptor
  may keep borrowing while it preempts lower-priority borrowers.
They are ordered: other queues first, lowest priority, most recently admitted.
They are removed one by one, each only while its queue (and the queues up to
the common cohort) still borrows, until the preemptor fits; then those not
needed are added back in reverse order. If even all of them are not enough,
nobody is preempted.

Fair sharing (when the manager configuration turns it on): the queues whose
dominant resource share is highest lose workloads first, as long as the
preemptor's share after admission stays at most the target's share after the
eviction (rule S2-a), else below the target's share before it (S2-b)."""
from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from decimal import Decimal

from . import packer, quota, tasassign
from .quota import FR, ZERO, Node

WITHIN_CQ = "InClusterQueue"
RECLAIM = "InCohortReclamation"
RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"
FAIR_SHARING = "InCohortFairSharing"
REASONS = {WITHIN_CQ: "prioritization in the ClusterQueue", RECLAIM: "reclamation within the cohort",
           RECLAIM_WHILE_BORROWING: "reclamation within the cohort while borrowing",
           FAIR_SHARING: "fair sharing within the cohort"}


@dataclass(eq=False)
class Info:
    """An admitted Workload as the scheduler's snapshot holds it."""
    key: str
    cq: str
    priority: int
    created: float                        # queue order timestamp
    admitted_at: float                    # quota reservation time
    usage: dict[FR, Decimal]
    frs: frozenset                        # (flavor, resource) of its assignment
    evicted: bool = False
    tas: tuple = ()                       # (TAS flavor, {leaf: requests}) of the nodes its pods use


@dataclass
class Target:
    info: Info
    reason: str


@dataclass
class Preemptor:
    key: str
    cq: str
    priority: int
    created: float
    usage: dict[FR, Decimal]
    frs_need: set[FR]
    shapes: dict = field(default_factory=dict)      # TPU flavor -> slices
    tas: dict = field(default_factory=dict)         # TAS flavor -> [(pod set, tas.Request)]


class Snapshot:
    """Quota tree plus admitted Workloads per ClusterQueue; removals are simulated
    and undone the way Kueue's snapshot does."""

    def __init__(self, tree: quota.Tree, workloads: dict[str, dict[str, Info]], policies: dict,
                 tas_fits=None):
        self.tree = tree
        self.workloads = workloads          # cq -> key -> Info
        self.policies = policies            # cq -> model.Preemption
        self.tas_fits = tas_fits            # (shapes by flavor, removed keys) -> bool
        self.removed: set[str] = set()
        self.reservations: dict[str, packer.Reservation] = {}   # TPU flavor -> its slices (the simulator sets them)
        # (cq, flavor, resource) -> the ranks of its admitted Workloads that use that flavor and
        # resource, in candidate order (lowest priority, newest admission); kept by the simulator
        # as Workloads are admitted and released; read, never changed, here. None: sort here.
        self.ranked: dict[tuple, list[tuple]] | None = None
        # TAS flavors (tas.FlavorSnapshot), the usage per leaf the cache holds (read only) and
        # what this cycle changed: admissions added, trial removals taken away.
        self.tas: dict = {}
        self.tas_base: dict[str, dict[str, dict]] = {}
        self.tas_delta: dict[str, dict[str, dict]] = {}

    def tas_used(self, flavor: str):
        """What is used on each leaf of a TAS flavor, as this snapshot sees it."""
        base = self.tas_base.get(flavor, {})
        delta = self.tas_delta.get(flavor, {})

        def used(leaf) -> dict:
            got = base.get(leaf.id)
            more = delta.get(leaf.id)
            if more is None:
                return got or {}
            out = dict(got or {})
            for r, v in more.items():
                out[r] = out.get(r, ZERO) + v
            return out
        return used

    def tas_change(self, usage: tuple, sign: int) -> None:
        for flavor, leaves in usage:
            delta = self.tas_delta.setdefault(flavor, {})
            for leaf, req in leaves.items():
                d = delta.setdefault(leaf, {})
                for r, v in req.items():
                    d[r] = d.get(r, ZERO) + sign * v

    def ordered(self, cq: str, frs):
        """The admitted Workloads of a ClusterQueue that use one of `frs`, in candidate order
        (those a trial removed skipped)."""
        present = self.workloads.get(cq, {})
        if self.ranked is None:
            yield from sorted((i for i in present.values() if _uses(i, frs)), key=rank)
            return
        lists = [self.ranked.get((cq, *fr), []) for fr in sorted(frs)]
        last = None
        for *_, key in (lists[0] if len(lists) == 1 else heapq.merge(*lists)):
            info = present.get(key) if key != last else None
            last = key
            if info is not None:
                yield info

    def node(self, cq: str) -> Node:
        return self.tree.cqs[cq]

    def remove(self, info: Info) -> None:
        quota.remove(self.node(info.cq), info.usage)
        if info.tas:
            self.tas_change(info.tas, -1)
        self.workloads[info.cq].pop(info.key, None)
        self.removed.add(info.key)

    def add(self, info: Info) -> None:
        quota.add(self.node(info.cq), info.usage)
        if info.tas:
            self.tas_change(info.tas, 1)
        self.workloads.setdefault(info.cq, {})[info.key] = info
        self.removed.discard(info.key)


def satisfies(policy: str, p_prio: int, p_created: float, c: Info) -> bool:
    if policy == "LowerPriority":
        return p_prio > c.priority
    if policy == "LowerOrNewerEqualPriority":
        return p_prio > c.priority or (p_prio == c.priority and p_created < c.created)
    return policy == "Any"


def rank(c: Info) -> tuple:
    """Candidate order within one ClusterQueue: lowest priority, newest admission."""
    return (c.priority, -c.admitted_at, c.key)


def order_key(c: Info, preemptor_cq: str):
    """CandidatesOrdering: evicted first, other queues first, lowest priority, newest admission."""
    return (not c.evicted, c.cq == preemptor_cq, c.priority, -c.admitted_at, c.key)


def _fits(snap: Snapshot, p: Preemptor, allow_borrowing: bool) -> bool:
    node = snap.node(p.cq)
    for fr, v in p.usage.items():
        if not allow_borrowing and quota.borrowing_with(node, fr, v):
            return False
        if v > quota.available(node, fr):
            return False
    if p.shapes and snap.tas_fits is not None:
        return snap.tas_fits(p.shapes, snap.removed)
    if p.tas:
        return tasassign.fits_now(snap, p.tas)     # workloadFits: the pod sets fit the nodes too
    return True


def _fill_back(snap: Snapshot, p: Preemptor, targets: list[Target], allow_borrowing: bool, fits=None) -> list[Target]:
    fits = fits or (lambda: _fits(snap, p, allow_borrowing))
    for i in range(len(targets) - 2, -1, -1):
        snap.add(targets[i].info)
        if fits():
            targets[i] = targets[-1]
            targets.pop()
        else:
            snap.remove(targets[i].info)
    return targets


def _restore(snap: Snapshot, targets: list[Target]) -> None:
    for t in targets:
        snap.add(t.info)


# ---------------------------------------------------------------- classical
@dataclass
class _Cand:
    info: Info
    lca: Node | None
    variant: str                          # WithinCQ | Hierarchical | ReclaimWithout | ReclaimWhile


def _uses(info: Info, frs) -> bool:
    return not info.frs.isdisjoint(frs)


def _classify(snap: Snapshot, p: Preemptor, c: Info, advantage: bool) -> str | None:
    if not _uses(c, p.frs_need):
        return None
    pol = snap.policies[p.cq]
    policy = pol.within if c.cq == p.cq else pol.reclaim
    if not satisfies(policy, p.priority, p.created, c):
        return None
    if c.cq == p.cq:
        return "WithinCQ"
    if advantage:
        return "Hierarchical"
    if pol.borrow == "Never":
        return "ReclaimWithout"
    if c.priority >= p.priority or (pol.threshold is not None and c.priority > pol.threshold):
        return "ReclaimWithout"
    return "ReclaimWhile"


def _from_cq(snap: Snapshot, p: Preemptor, cq: str, lca: Node | None, advantage: bool, dead: set[str]):
    """The candidates of one ClusterQueue, in candidate order, as they are asked for. The
    order is by priority, so the policy's priority bound ends the scan (satisfies() would
    refuse every Workload after it)."""
    pol = snap.policies[p.cq]
    policy = pol.within if cq == p.cq else pol.reclaim
    for info in snap.ordered(cq, p.frs_need):
        if cq in dead or (policy == "LowerPriority" and info.priority >= p.priority) or \
                (policy == "LowerOrNewerEqualPriority" and info.priority > p.priority):
            return
        v = _classify(snap, p, info, advantage)
        if v:
            yield _Cand(info, lca, v)


def _collect(snap: Snapshot, p: Preemptor, current: Node, root: Node, skip: Node | None, advantage: bool,
             out: list[tuple[str, Node | None, bool]]) -> None:
    """The ClusterQueues of the cohort whose Workloads are candidates (decided before any
    removal, as Kueue collects them)."""
    for child in current.child_cohorts:
        if child is skip or quota.within_nominal(child, p.frs_need):
            continue
        _collect(snap, p, child, root, skip, advantage, out)
    for child in current.child_cqs:
        if child.name == p.cq:
            continue
        if not quota.within_nominal(child, p.frs_need):
            out.append((child.name, root, advantage))


def _merged(snap: Snapshot, p: Preemptor, sources: list[tuple[str, Node | None, bool]], dead: set[str]):
    """One group's candidates from several ClusterQueues, in candidate order (a lazy merge
    of each queue's ordered candidates: a preemptor that fits early reads few of them)."""
    gens = [_from_cq(snap, p, cq, lca, adv, dead) for cq, lca, adv in sources]
    if len(gens) == 1:
        return gens[0]
    return heapq.merge(*gens, key=lambda c: rank(c.info))


Sources = list[tuple[str, Node | None, bool]]       # (ClusterQueue, common cohort, hierarchical advantage)


def _sources(snap: Snapshot, p: Preemptor) -> tuple[Sources, Sources, Sources]:
    """Where candidates come from: (hierarchical reclaim, priority-based reclaim, the
    preemptor's own ClusterQueue)."""
    node = snap.node(p.cq)
    pol = snap.policies[p.cq]
    same: Sources = [(p.cq, None, False)] if pol.within != "Never" else []
    hier: Sources = []
    prio: Sources = []
    if node.parent is not None and pol.reclaim != "Never":
        advantage, remaining = quota.quantities_fit_in_quota(node, p.usage)
        previous = None
        for ancestor in node.ancestors():
            _collect(snap, p, ancestor, ancestor, previous, advantage, hier if advantage else prio)
            fits, remaining = quota.quantities_fit_in_quota(ancestor, remaining)
            advantage = advantage or fits
            previous = ancestor
    return hier, prio, same


def _attempts(snap: Snapshot, p: Preemptor, hier: Sources, prio: Sources) -> list[bool]:
    """With borrowing allowed, without, or both, in Kueue's order."""
    node = snap.node(p.cq)
    others = next(itertools.chain(_merged(snap, p, hier, set()), _merged(snap, p, prio, set())), None) is not None
    has_hier = next(iter(_merged(snap, p, hier, set())), None) is not None
    forbidden = snap.policies[p.cq].borrow == "Never"
    under_nominal = all(node.usage.get(fr, ZERO) < node.nominal(fr) for fr in p.frs_need)
    if not others or (forbidden and not under_nominal):
        return [True]
    if forbidden and not has_hier:
        return [False, True]
    return [True, False]


def classical(snap: Snapshot, p: Preemptor) -> list[Target]:
    hier, prio, same = _sources(snap, p)
    for borrow in _attempts(snap, p, hier, prio):
        # Other queues' first (hierarchical reclaim, then priority-based), then the preemptor's
        # own; no admitted Workload of the planner is already being evicted (Kueue's first group).
        # A queue (or its cohort up to the common one) found within nominal stays so while
        # candidates are only removed: the rest of its candidates are not valid either.
        dead: set[str] = set()
        found = _attempt(snap, p, borrow, dead, itertools.chain(
            _merged(snap, p, hier, dead), _merged(snap, p, prio, dead), _merged(snap, p, same, dead)))
        if found:
            return found
    return []


def _attempt(snap: Snapshot, p: Preemptor, borrow: bool, dead: set[str], candidates) -> list[Target]:
    """Remove candidates in order until the preemptor fits; the targets, or [] (all restored)."""
    targets: list[Target] = []
    for c in candidates:
        why = _invalid(snap, p, c, borrow)
        if why == "within nominal":
            dead.add(c.info.cq)
        if why:
            continue
        snap.remove(c.info)
        targets.append(Target(c.info, _reason(c.variant)))
        if _fits(snap, p, borrow):
            targets = _fill_back(snap, p, targets, borrow)
            _restore(snap, targets)
            return targets
    _restore(snap, targets)
    return []


def _reason(variant: str) -> str:
    return {"WithinCQ": WITHIN_CQ, "Hierarchical": RECLAIM, "ReclaimWithout": RECLAIM,
            "ReclaimWhile": RECLAIM_WHILE_BORROWING}[variant]


def _invalid(snap: Snapshot, p: Preemptor, c: _Cand, borrow: bool) -> str:
    """Why a candidate may not be taken now ('' when it may)."""
    if c.info.cq == p.cq:
        return ""
    if borrow and c.variant == "ReclaimWithout":
        return "reclaim without borrowing"
    cq = snap.node(c.info.cq)
    if quota.within_nominal(cq, p.frs_need):
        return "within nominal"
    for node in cq.ancestors():
        if node is c.lca:
            break
        if quota.within_nominal(node, p.frs_need):
            return "within nominal"
    return ""


# ---------------------------------------------------------------- fair sharing
def _is_borrowing(node: Node, frs) -> bool:
    return node.parent is not None and any(quota.is_borrowing(node, fr) for fr in frs)


def fair(snap: Snapshot, p: Preemptor, strategies: tuple[str, ...], within_nominal_rule: bool) -> list[Target]:
    node = snap.node(p.cq)
    cands = _fair_candidates(snap, p)
    if not cands:
        return []
    quota.add(node, p.usage)                # shares include the incoming workload

    def fits() -> bool:
        quota.remove(node, p.usage)
        ok = _fits(snap, p, True)
        quota.add(node, p.usage)
        return ok

    ok, targets, retry = _first_strategy(snap, p, cands, strategies[0], within_nominal_rule, fits)
    if not ok and len(strategies) > 1:
        ok, targets = _second_strategy(snap, p, retry, targets, fits)
    quota.remove(node, p.usage)
    if not ok:
        _restore(snap, targets)
        return []
    targets = _fill_back(snap, p, targets, True)
    _restore(snap, targets)
    return targets


def _fair_candidates(snap: Snapshot, p: Preemptor) -> list[Info]:
    """The preemptor's own queue's Workloads its policy allows, and those of the borrowing
    queues of its cohort tree, in candidate order."""
    node = snap.node(p.cq)
    pol = snap.policies[p.cq]
    cands: list[Info] = []
    if pol.within != "Never":
        cands += [i for i in snap.workloads.get(p.cq, {}).values()
                  if satisfies(pol.within, p.priority, p.created, i) and _uses(i, p.frs_need)]
    if node.parent is not None and pol.reclaim != "Never":
        for other in node.root().subtree_cqs():
            if other is not node and _is_borrowing(other, p.frs_need):
                cands += [i for i in snap.workloads.get(other.name, {}).values()
                          if satisfies(pol.reclaim, p.priority, p.created, i) and _uses(i, p.frs_need)]
    cands.sort(key=lambda c: order_key(c, p.cq))
    return cands


def _strategy(name: str, preemptor_new: quota.DRS, target_old: quota.DRS, target_new: quota.DRS | None) -> bool:
    if name == "LessThanInitialShare":
        return quota.compare_drs(preemptor_new, target_old) < 0
    return target_new is not None and quota.compare_drs(preemptor_new, target_new) <= 0


class _Ordering:
    """TargetClusterQueueOrdering: from the root, the child with the highest share
    that still has candidates, down to a ClusterQueue."""

    def __init__(self, snap: Snapshot, p: Preemptor, cands: list[Info]):
        self.snap = snap
        self.p = p
        self.preemptor = snap.node(p.cq)
        self.path = set(self.preemptor.ancestors())
        self.targets: dict[str, list[Info]] = {}
        for c in cands:
            self.targets.setdefault(c.cq, []).append(c)
        self.pruned_cqs: set[str] = set()
        self.pruned_cohorts: set[str] = set()

    def has(self, cq: Node) -> bool:
        return bool(self.targets.get(cq.name))

    def pop(self, cq: Node) -> Info:
        return self.targets[cq.name].pop(0)

    def drop(self, cq: Node) -> None:
        self.pruned_cqs.add(cq.name)

    def __iter__(self):
        if self.preemptor.parent is None:
            while self.has(self.preemptor):
                yield self.preemptor
            return
        root = self.preemptor.root()
        guard = 0
        while root.name not in self.pruned_cohorts and guard < 100_000:
            guard += 1
            t = self._next(root)
            if t is not None:
                yield t

    def _next(self, cohort: Node) -> Node | None:
        best_cq, best_cq_drs = self._best_cq(cohort)
        best_co, best_co_drs = self._best_cohort(cohort)
        if best_co is None and best_cq is None:
            self.pruned_cohorts.add(cohort.name)
            return None
        if best_co is not None and quota.compare_drs(best_co_drs, best_cq_drs) >= 0:
            return self._next(best_co)
        return best_cq

    def _best_cq(self, cohort: Node) -> tuple[Node | None, quota.DRS]:
        """The child ClusterQueue with the highest share that still has candidates (ties: the
        one whose next candidate comes first); those without are pruned."""
        best_cq, best_cq_drs = None, quota.NEGATIVE_DRS
        for cq in cohort.child_cqs:
            if cq.name in self.pruned_cqs:
                continue
            d = quota.drs(cq)
            if (not d.borrowing and cq is not self.preemptor) or not self.has(cq):
                self.pruned_cqs.add(cq.name)
            elif best_cq is not None and quota.compare_drs(d, best_cq_drs) == 0:
                if order_key(self.targets[cq.name][0], self.p.cq) < order_key(self.targets[best_cq.name][0], self.p.cq):
                    best_cq = cq
            elif quota.compare_drs(d, best_cq_drs) == 1:
                best_cq, best_cq_drs = cq, d
        return best_cq, best_cq_drs

    def _best_cohort(self, cohort: Node) -> tuple[Node | None, quota.DRS]:
        """The child cohort with the highest share that borrows (or leads to the preemptor)."""
        best_co, best_co_drs = None, quota.NEGATIVE_DRS
        for co in cohort.child_cohorts:
            if co.name in self.pruned_cohorts:
                continue
            d = quota.drs(co)
            if not d.borrowing and co not in self.path:
                self.pruned_cohorts.add(co.name)
            elif quota.compare_drs(d, best_co_drs) >= 0:
                best_co, best_co_drs = co, d
        return best_co, best_co_drs


def _almost_lcas(preemptor: Node, target: Node) -> tuple[Node, Node]:
    path = set(preemptor.ancestors())
    lca = next(a for a in target.ancestors() if a in path)

    def almost(n: Node) -> Node:
        prev = n
        for a in n.ancestors():
            if a is lca:
                return prev
            prev = a
        return prev
    return almost(preemptor), almost(target)


def _first_strategy(snap: Snapshot, p: Preemptor, cands: list[Info], strategy: str, within_nominal_rule: bool, fits):
    ordering = _Ordering(snap, p, cands)
    targets: list[Target] = []
    retry: list[Info] = []
    node = ordering.preemptor
    within_nominal = within_nominal_rule and not any(quota.is_borrowing(node, fr) for fr in p.frs_need)
    for cq in ordering:
        if cq is node:
            info = ordering.pop(cq)
            snap.remove(info)
            targets.append(Target(info, WITHIN_CQ))
            if fits():
                return True, targets, []
            continue
        if within_nominal:
            info = ordering.pop(cq)
            snap.remove(info)
            targets.append(Target(info, RECLAIM))
            if fits():
                return True, targets, []
            continue
        a_pre, a_tgt = _almost_lcas(node, cq)
        preemptor_new, target_old = quota.drs(a_pre), quota.drs(a_tgt)
        while ordering.has(cq):
            info = ordering.pop(cq)
            quota.remove(cq, info.usage)
            target_new = quota.drs(_almost_lcas(node, cq)[1])
            quota.add(cq, info.usage)
            if _strategy(strategy, preemptor_new, target_old, target_new):
                snap.remove(info)
                targets.append(Target(info, FAIR_SHARING))
                if fits():
                    return True, targets, []
                break
            retry.append(info)
    return False, targets, retry


def _second_strategy(snap: Snapshot, p: Preemptor, retry: list[Info], targets: list[Target], fits):
    ordering = _Ordering(snap, p, retry)
    node = ordering.preemptor
    for cq in ordering:
        if cq is node:
            ordering.pop(cq)
            continue
        a_pre, a_tgt = _almost_lcas(node, cq)
        passed = _strategy("LessThanInitialShare", quota.drs(a_pre), quota.drs(a_tgt), None)
        info = ordering.pop(cq)
        if passed:
            snap.remove(info)
            targets.append(Target(info, FAIR_SHARING))
            if fits():
                return True, targets
        ordering.drop(cq)
    return False, targets


def targets(snap: Snapshot, p: Preemptor, fair_sharing: bool, strategies: tuple[str, ...],
            within_nominal_rule: bool) -> list[Target]:
    if fair_sharing:
        return fair(snap, p, strategies, within_nominal_rule)
    return classical(snap, p)
