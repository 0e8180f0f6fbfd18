"""Usage of ClusterQueues and Cohorts on the supply model's tree (generator/
supply.py holds the quota: nodes, subtree quota, local quota, potentialAvailable),
the way Kueue's scheduler cache keeps them (Kueue v0.17.4 pkg/cache/scheduler/resource_node.go,
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
from dataclasses import dataclass
from decimal import Decimal

from ..kernel import supply
from ..kernel.supply import FR, ZERO, Node, local_quota, potential_available
from . import overlay


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
class Tree(supply.Tree):
    """All nodes of a cluster, built by the supply model (generator/kernel/supply.py) from the
    planner's reading of the overlay."""

    def __init__(self, cluster: overlay.Cluster):
        super().__init__(
            [supply.Holder(cq.name, cq.cohort, cq.groups, cq.fair_weight) for cq in cluster.cluster_queues.values()],
            [supply.Holder(co.name, co.parent, co.groups, co.fair_weight, co.declared)
             for co in cluster.cohorts.values()],
            cluster.flavors)


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
