"""Quota and usage of ClusterQueues and Cohorts as one tree, the way Kueue's
scheduler cache keeps them (Kueue v0.17.4 pkg/cache/scheduler/resource_node.go,
clusterqueue_snapshot.go, fair_sharing.go).

Every node (ClusterQueue or Cohort) has, per (flavor, resource):
- quota: nominal, borrowingLimit, lendingLimit;
- subtree quota: its own nominal plus what its children lend up (a child keeps
  `nominal - lendingLimit` to itself: its local quota);
- usage: for a ClusterQueue what its admitted Workloads hold; for a Cohort the
  part of its children's usage above their local quota.
A ClusterQueue may use its own local quota plus what its parent has available,
capped by its borrowingLimit; the root has what its subtree holds.

The functions are ports of Kueue's, named like them, so each can be checked
against the Go side by side."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal

from . import model

FR = tuple[str, str]            # (flavor, resource)
ZERO = Decimal(0)


@dataclass(eq=False)
class Node:
    name: str
    is_cq: bool
    quotas: dict[FR, model.Quota] = field(default_factory=dict)
    subtree: dict[FR, Decimal] = field(default_factory=dict)
    usage: dict[FR, Decimal] = field(default_factory=dict)
    parent: Node | None = None
    child_cohorts: list[Node] = field(default_factory=list)
    child_cqs: list[Node] = field(default_factory=list)
    weight: Decimal = Decimal(1)

    def __repr__(self) -> str:
        return f"{'CQ' if self.is_cq else 'Cohort'}({self.name})"

    def ancestors(self):
        """Parent to root."""
        a = self.parent
        while a is not None:
            yield a
            a = a.parent

    def root(self) -> Node:
        n = self
        while n.parent is not None:
            n = n.parent
        return n

    def subtree_cqs(self):
        yield from self.child_cqs
        for c in self.child_cohorts:
            yield from c.subtree_cqs()

    def nominal(self, fr: FR) -> Decimal:
        q = self.quotas.get(fr)
        return q.nominal if q else ZERO


def local_quota(n: Node, fr: FR) -> Decimal:
    q = n.quotas.get(fr)
    if q is not None and q.lending is not None:
        return max(ZERO, n.subtree.get(fr, ZERO) - q.lending)
    return ZERO


def local_available(n: Node, fr: FR) -> Decimal:
    return max(ZERO, local_quota(n, fr) - n.usage.get(fr, ZERO))


def _available(n: Node, fr: FR) -> Decimal:
    if n.parent is None:
        return n.subtree.get(fr, ZERO) - n.usage.get(fr, ZERO)
    parent_available = _available(n.parent, fr)
    q = n.quotas.get(fr)
    if q is not None and q.borrowing is not None:
        stored_in_parent = n.subtree.get(fr, ZERO) - local_quota(n, fr)
        used_in_parent = max(ZERO, n.usage.get(fr, ZERO) - local_quota(n, fr))
        parent_available = min(stored_in_parent - used_in_parent + q.borrowing, parent_available)
    return local_available(n, fr) + parent_available


def available(n: Node, fr: FR) -> Decimal:
    """What the node can still take now, borrowing included; 0 when in debt."""
    return max(ZERO, _available(n, fr))


def potential_available(n: Node, fr: FR) -> Decimal:
    """The most the node could ever hold, were nothing else used."""
    if n.parent is None:
        return n.subtree.get(fr, ZERO)
    avail = local_quota(n, fr) + potential_available(n.parent, fr)
    q = n.quotas.get(fr)
    if q is not None and q.borrowing is not None:
        avail = min(n.subtree.get(fr, ZERO) + q.borrowing, avail)
    return avail


def add_usage(n: Node, fr: FR, v: Decimal) -> None:
    la = local_available(n, fr)
    n.usage[fr] = n.usage.get(fr, ZERO) + v
    if n.parent is not None and v > la:
        add_usage(n.parent, fr, v - la)


def remove_usage(n: Node, fr: FR, v: Decimal) -> None:
    stored = n.usage.get(fr, ZERO) - local_quota(n, fr)
    n.usage[fr] = n.usage.get(fr, ZERO) - v
    if stored <= 0 or n.parent is None:
        return
    remove_usage(n.parent, fr, min(v, stored))


def add(n: Node, usage: dict[FR, Decimal]) -> None:
    for fr, v in usage.items():
        add_usage(n, fr, v)


def remove(n: Node, usage: dict[FR, Decimal]) -> None:
    for fr, v in usage.items():
        remove_usage(n, fr, v)


def borrowing_with(n: Node, fr: FR, v: Decimal) -> bool:
    return n.usage.get(fr, ZERO) + v > n.subtree.get(fr, ZERO) if not n.is_cq \
        else n.usage.get(fr, ZERO) + v > n.nominal(fr)


def is_borrowing(n: Node, fr: FR) -> bool:
    return borrowing_with(n, fr, ZERO)


def within_nominal(n: Node, frs) -> bool:
    """IsWithinNominalInResources: usage <= subtree quota for every (flavor, resource)."""
    return all(n.usage.get(fr, ZERO) <= n.subtree.get(fr, ZERO) for fr in frs)


def quantities_fit_in_quota(n: Node, requests: dict[FR, Decimal]) -> tuple[bool, dict[FR, Decimal]]:
    fits = True
    remaining = {}
    for fr, v in requests.items():
        if n.usage.get(fr, ZERO) + v > n.subtree.get(fr, ZERO):
            fits = False
        remaining[fr] = max(ZERO, v - local_available(n, fr))
    return fits, remaining


def node_height(n: Node) -> int:
    h = min(len(n.child_cohorts) + len(n.child_cqs), 1)
    for c in n.child_cohorts:
        h = max(h, node_height(c) + 1)
    return h


def lowest_subtree_that_fits(cq: Node, fr: FR, v: Decimal) -> tuple[int, bool]:
    """FindHeightOfLowestSubtreeThatFits: (borrowing level, may reclaim in hierarchy).
    0 = fits in the ClusterQueue's own nominal quota."""
    if not borrowing_with(cq, fr, v) or cq.parent is None:
        return 0, cq.parent is not None
    remaining = v - local_available(cq, fr)
    for node in cq.ancestors():
        if not borrowing_with(node, fr, remaining):
            return node_height(node), node.parent is not None
        remaining -= local_available(node, fr)
    return node_height(cq.root()), False


# ---------------------------------------------------------------- building
class Tree:
    """All nodes of a cluster. Cohorts named by ClusterQueues but without a Cohort
    object are implicit roots without quota of their own."""

    def __init__(self, cluster: model.Cluster):
        self.cqs: dict[str, Node] = {}
        self.cohorts: dict[str, Node] = {}
        self.cycles: set[str] = set()              # cohorts in a parent cycle (their queues are inactive)
        for co in cluster.cohorts.values():
            self._cohort(co.name).quotas = {(f, r): q for f, r, q in co.quotas()}
            self._cohort(co.name).weight = co.fair_weight
        for co in cluster.cohorts.values():
            if co.parent:
                child, parent = self._cohort(co.name), self._cohort(co.parent)
                child.parent = parent
                parent.child_cohorts.append(child)
        for cq in sorted(cluster.cluster_queues.values(), key=lambda q: q.name):
            node = Node(cq.name, True, {(f, r): q for f, r, q in cq.quotas()}, weight=cq.fair_weight)
            self.cqs[cq.name] = node
            if cq.cohort:
                parent = self._cohort(cq.cohort)
                node.parent = parent
                parent.child_cqs.append(node)
        for name, co_node in self.cohorts.items():
            seen = set()
            n: Node | None = co_node
            while n is not None:
                if n.name in seen:
                    self.cycles.add(name)
                    break
                seen.add(n.name)
                n = n.parent
        for name in self.cycles:                # cut the loop so the walks terminate
            node = self.cohorts[name]
            if node.parent is not None and node in node.parent.child_cohorts:
                node.parent.child_cohorts.remove(node)
            node.parent = None
        for root in [c for c in self.cohorts.values() if c.parent is None]:
            _update(root)
        for node in self.cqs.values():
            if node.parent is None:
                node.subtree = {fr: q.nominal for fr, q in node.quotas.items()}

    def _cohort(self, name: str) -> Node:
        if name not in self.cohorts:
            self.cohorts[name] = Node(name, False)
        return self.cohorts[name]

    def in_cycle(self, cq: str) -> bool:
        node = self.cqs[cq]
        return any(a.name in self.cycles for a in node.ancestors())


def _update(cohort: Node) -> None:
    """updateCohortResourceNode: subtree quota and usage from the leaves up."""
    cohort.subtree = {fr: q.nominal for fr, q in cohort.quotas.items()}
    cohort.usage = {}
    for child in cohort.child_cohorts:
        _update(child)
        _accumulate(cohort, child)
    for child in cohort.child_cqs:
        child.subtree = {fr: q.nominal for fr, q in child.quotas.items()}
        _accumulate(cohort, child)


def _accumulate(parent: Node, child: Node) -> None:
    for fr, q in child.subtree.items():
        parent.subtree[fr] = parent.subtree.get(fr, ZERO) + q - local_quota(child, fr)
    for fr, u in child.usage.items():
        parent.usage[fr] = parent.usage.get(fr, ZERO) + max(ZERO, u - local_quota(child, fr))


# ---------------------------------------------------------------- fair sharing
@dataclass(frozen=True)
class DRS:
    """Dominant resource share: the largest ratio, over resources, of what a node
    borrows to what its parent could lend, per mille, divided by its weight."""
    weight: Decimal
    ratio: float = 0.0
    resource: str = ""
    borrowing: bool = False
    borrowed: tuple[FR, ...] = ()

    def is_zero(self) -> bool:
        return self.ratio == 0

    def zero_weight_borrows(self) -> bool:
        return self.weight == 0 and not self.is_zero()

    def weighted(self) -> float:
        if self.is_zero():
            return 0.0
        if self.weight == 0:
            return math.inf
        return self.ratio / float(self.weight)

    def borrowing_on(self, requested: dict[FR, Decimal]) -> bool:
        return any(requested.get(fr, ZERO) > 0 for fr in self.borrowed)


NEGATIVE_DRS = DRS(Decimal(1), -1.0)


def compare_drs(a: DRS, b: DRS) -> int:
    if a.zero_weight_borrows() and b.zero_weight_borrows():
        return (a.ratio > b.ratio) - (a.ratio < b.ratio)
    if a.zero_weight_borrows():
        return 1
    if b.zero_weight_borrows():
        return -1
    wa, wb = a.weighted(), b.weighted()
    return (wa > wb) - (wa < wb)


def drs(n: Node, extra: dict[FR, Decimal] | None = None) -> DRS:
    out = DRS(n.weight)
    if n.parent is None:
        return out
    extra = extra or {}
    borrowing: dict[str, Decimal] = {}
    borrowed = []
    for fr, q in n.subtree.items():
        amount = extra.get(fr, ZERO) + n.usage.get(fr, ZERO) - q
        if amount > 0:
            borrowing[fr[1]] = borrowing.get(fr[1], ZERO) + amount
            borrowed.append(fr)
    if not borrowing:
        return out
    lendable = _lendable(n.parent)
    ratio, dominant = 0.0, ""
    for res, b in sorted(borrowing.items()):
        lr = lendable.get(res, ZERO)
        if lr > 0:
            r = float(b) * 1000.0 / float(lr)
            if r > ratio or (r == ratio and res < dominant):
                ratio, dominant = r, res
    return DRS(n.weight, ratio, dominant, True, tuple(sorted(borrowed)))


def _lendable(n: Node) -> dict[str, Decimal]:
    out: dict[str, Decimal] = {}
    for fr in n.root().subtree:
        out[fr[1]] = out.get(fr[1], ZERO) + potential_available(n, fr)
    return out
