"""Which head goes first with fair sharing: the tournament of dominant resource shares up the
cohort tree (Kueue's pkg/scheduler/fair_sharing_iterator.go)."""
from __future__ import annotations

from . import preempt, quota
from .state import Entry


def fair_order(snap: preempt.Snapshot, entries: list[Entry], gates: set[str]) -> list[Entry]:
    """The fair-sharing tournament (scheduler/fair_sharing_iterator.go): per root cohort,
    at each level the child whose share after admitting its head is lowest goes first.
    Usage of earlier winners is not added between picks within one cycle: admission
    below re-checks quota anyway."""
    left = {e.cq.name: e for e in entries}
    out: list[Entry] = []
    while left:
        name = min(left)
        node = snap.node(name)
        if node.parent is None:
            out.append(left.pop(name))
            continue
        root = node.root()
        shares = _tournament_shares(root, left)
        winner = _tournament(root, left, shares, gates)
        assert winner is not None, "the root has a member with a head"
        out.append(left.pop(winner.cq.name))
    return out

def _tournament_shares(root: quota.Node, left: dict[str, Entry]) -> dict:
    shares = {}
    for cq in root.subtree_cqs():
        e = left.get(cq.name)
        if e is None:
            continue
        quota.add(cq, e.a.usage)
        d = quota.drs(cq)
        for anc in cq.ancestors():
            shares[(anc.name, e.st.key)] = d
            d = quota.drs(anc)
        quota.remove(cq, e.a.usage)
    return shares

def _tournament(cohort: quota.Node, left: dict[str, Entry], shares: dict, gates: set[str]) -> Entry | None:
    cands = [w for w in (_tournament(c, left, shares, gates) for c in cohort.child_cohorts) if w]
    cands += [left[c.name] for c in cohort.child_cqs if c.name in left]
    if not cands:
        return None
    best = cands[0]
    for cur in cands[1:]:
        if _fair_less(cur, best, cohort.name, shares, gates):
            best = cur
    return best

def _fair_less(a: Entry, b: Entry, parent: str, shares: dict, gates: set[str]) -> bool:
    da, db = shares[(parent, a.st.key)], shares[(parent, b.st.key)]
    if "FairSharingPrioritizeNonBorrowing" in gates:
        ba, bb = da.borrowing_on(a.a.usage), db.borrowing_on(b.a.usage)
        if ba != bb:
            return not ba
    c = quota.compare_drs(da, db)
    if c:
        return c < 0
    if a.st.priority != b.st.priority:
        return a.st.priority > b.st.priority
    return (a.st.created, a.st.key) < (b.st.created, b.st.key)
