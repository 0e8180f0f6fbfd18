"""The scheduling cycle (Kueue v0.17.4 pkg/scheduler/scheduler.go).

A cycle takes the head of every active ClusterQueue from the queue manager
(queue_manager.py: highest priority, then oldest; StrictFIFO keeps a head that does not fit
at the front, BestEffortFIFO sets it aside as inadmissible until quota frees up), assigns
flavors to each against the cache's snapshot (assign.py) and, when preemption is needed,
finds targets (preempt.py). The heads are then processed in order: those that fit without
borrowing first, then by priority and age (or, with fair sharing, by a tournament of
dominant resource shares up the cohort tree). A head is admitted if it still fits after the
ones before it; a head that needs preemption evicts its targets and is retried first in the
next cycle; one that needs preemption but has no targets holds back the quota it could
reclaim so lower-priority workloads of the cohort do not take it. Cycles run until nothing
changes (settle)."""
from __future__ import annotations

from decimal import Decimal

from ..kernel import supply
from . import assign, fairorder, preempt, quota, tas, tasassign
from .assign import M_FIT, M_NOFIT, M_PREEMPT
from .cache import Cache
from .overlay import ClusterQueue
from .queue_manager import QueueManager
from .quota import FR, ZERO
from .state import NEVER, PENDING, RESERVED, Entry, State
from .store import Store
from .workload_controller import WorkloadController

MAX_CYCLES = 50_000


class Scheduler:
    def __init__(self, store: Store, cache: Cache, queues: QueueManager, workloads: WorkloadController):
        self.store, self.cache, self.queues, self.workloads = store, cache, queues, workloads
        self.gates = gates(store)
        self.cycle_no = 0

    def settle(self) -> None:
        """Run scheduling cycles until nothing changes."""
        idle = 0
        limit = 2 + max((len(g.flavors) for q in self.store.cluster.cluster_queues.values() for g in q.groups),
                        default=1)
        for _ in range(MAX_CYCLES):
            progress, moved = self._cycle()
            if progress:
                idle = 0
            elif not moved:
                idle += 1
                if idle > limit:
                    self.queues.mark_waiting()
                    return
        self.queues.mark_waiting()
        self.store.notes.append(f"the simulation stopped after {MAX_CYCLES} scheduling cycles without settling")

    def cycle(self) -> None:
        """One scheduling cycle (Kueue's Scheduler.schedule), what its unit tests run;
        `settle` runs them until nothing changes."""
        self._cycle()
        self.queues.mark_waiting()

    def _cycle(self) -> tuple[bool, bool]:
        """One cycle: heads, flavors and targets for each, then admit or preempt in order.
        Returns (progress: something admitted or preempted, moved: a head set aside)."""
        self.cycle_no += 1
        heads = self.queues.heads()
        if not heads:
            return False, False
        snap = self.cache.snapshot()
        entries = [self._nominate(snap, st, cq) for st, cq in heads]
        if self.store.cluster.config.fair_sharing:
            ordered = fairorder.fair_order(snap, entries, self.gates)
        else:
            ordered = sorted(entries, key=lambda e: (e.a.borrowing, -e.st.priority, e.st.created, e.st.key))
        preempted: dict[str, preempt.Target] = {}
        admitted: list[tuple[Entry, list]] = []
        issued: list[Entry] = []
        outcome: dict[str, str] = {}            # key -> how the entry ended (for requeueing)
        for e in ordered:
            how, placements = self._process(snap, e, preempted, [a.st.key for a, _ in admitted])
            outcome[e.st.key] = how
            if how == "preempting":
                issued.append(e)
            elif how == "admitted":
                admitted.append((e, placements))
        self.cache.restore(snap)
        self._apply(admitted, issued)
        moved = self._requeue(entries, outcome)
        return bool(admitted or issued), moved

    # ------------------------------------------------------------ nominate: flavors and targets
    def _context(self, snap: preempt.Snapshot, st: State, cq: ClusterQueue) -> assign.Context:
        node = snap.node(cq.name)
        cluster = self.store.cluster
        cfg = cluster.config

        def oracle(fr: FR, amount: Decimal) -> tuple[int, int]:
            p = preempt.Preemptor(st.key, cq.name, st.priority, st.created, {fr: amount}, {fr})
            found = preempt.targets(snap, p, cfg.fair_sharing, cfg.strategies,
                                    "FairSharingPreemptWithinNominal" in self.gates)
            if not found:
                return assign.NO_CANDIDATES, quota.lowest_subtree_that_fits(node, fr, amount)[0]
            for t in found:
                snap.remove(t.info)
            borrow = quota.lowest_subtree_that_fits(node, fr, amount)[0]
            for t in found:
                snap.add(t.info)
            return (assign.PREEMPT if any(t.info.cq == cq.name for t in found) else assign.RECLAIM), borrow
        fresh = st.last_generation == self.cache.generation.get(cq.name, 0) or \
            (self.store.rules.preserve_scan_progress and self.cycle_no - st.last_cycle <= 1)
        last = st.last_tried if fresh else None
        return assign.Context(cq, node, cluster.flavors, cfg.fair_sharing, snap.reservations,
                              oracle, last, self.cache.static, snap.tas, snap.tas_used,
                              tas_enabled=cfg.gate("TopologyAwareScheduling", self.store.rules.tas))

    def _targets(self, snap, st: State, cq: ClusterQueue, a: assign.Assignment) -> list[preempt.Target]:
        cfg = self.store.cluster.config
        p = preempt.Preemptor(st.key, cq.name, st.priority, st.created, dict(a.usage), a.frs_need_preemption(),
                              dict(a.shapes), dict(a.tas_requests))
        return preempt.targets(snap, p, cfg.fair_sharing, cfg.strategies,
                               "FairSharingPreemptWithinNominal" in self.gates)

    def _nominate(self, snap, st: State, cq: ClusterQueue) -> Entry:
        ctx = self._context(snap, st, cq)
        a = assign.assign(ctx, st.wl)
        targets: list[preempt.Target] = []
        if a.mode() == M_PREEMPT:
            targets = self._targets(snap, st, cq, a)
            tasassign.after_targets(ctx, a, targets, snap)
        if a.mode() != M_FIT and not targets and any(ps.min_count is not None for ps in st.wl.podsets):
            found: dict = {}

            def fits(counts: tuple[int, ...]) -> bool:
                b = assign.assign(ctx, st.wl, counts)
                if b.mode() == M_FIT:
                    found[counts] = (b, [])
                    return True
                if b.mode() == M_PREEMPT:
                    t = self._targets(snap, st, cq, b)
                    if t:
                        found[counts] = (b, t)
                        return True
                return False
            counts = assign.reduced_counts(st.wl, fits)
            if counts is not None:
                a, targets = found[counts]
        st.last_tried, st.last_generation, st.last_cycle = \
            a.last_tried, self.cache.generation.get(cq.name, 0), self.cycle_no
        return Entry(st, cq, a, targets, a.message())

    # ------------------------------------------------------------ process: admit or preempt
    def _process(self, snap: preempt.Snapshot, e: Entry, preempted: dict[str, preempt.Target],
                 admitted_now: list[str]) -> tuple[str, list]:
        """Admit (or issue the preemptions of) one entry against the cycle's snapshot:
        (nofit | notargets | skipped | preempting | admitted, TPU placements)."""
        mode = e.a.mode()
        node = snap.node(e.cq.name)
        if mode == M_NOFIT:
            return "nofit", []
        if mode == M_PREEMPT and not e.targets:
            if e.cq.preemption.reclaim != "Any":
                quota.add(node, _to_reserve(e, node))
                snap.tas_change(_tas_usage(snap, e.a), 1)      # resourcesToReserve: netUsage's TAS part
            return "notargets", []
        if any(t.info.key in preempted for t in e.targets):
            e.message = "its preemption targets overlap another workload's in this cycle"
            return "skipped", []
        ok, placements = self._still_fits(snap, e, list(preempted.values()) + e.targets)
        if not ok:
            e.message = "no longer fits after another workload was admitted in the same cycle"
            return "skipped", []
        waiting = self._pods_not_ready(admitted_now) if mode == M_FIT else []
        if waiting:
            # waitForPodsReady.blockAdmission (scheduler.go: PodsReadyForAllAdmittedWorkloads, then
            # the Workload is set Waiting until they are)
            e.message = f"waiting for all admitted workloads to be in PodsReady condition ({', '.join(waiting)})"
            return "skipped", []
        for t in e.targets:
            preempted[t.info.key] = t
        quota.add(node, e.a.usage)
        snap.tas_change(_tas_usage(snap, e.a), 1)       # cq.AddUsage: the TAS part
        return ("preempting" if mode == M_PREEMPT else "admitted"), placements

    def _pods_not_ready(self, admitted_now: list[str]) -> list[str]:
        """With waitForPodsReady.blockAdmission: the admitted Workloads whose pods are not ready
        yet (admitted in this step, in this cycle, or before the plan without PodsReady)."""
        if not self.store.cluster.config.block_admission:
            return []
        return sorted([st.key for st in self.store.states.values() if st.holds_quota and not st.pods_ready]
                      + admitted_now)

    @staticmethod
    def _still_fits(snap: preempt.Snapshot, e: Entry, gone: list[preempt.Target]) -> tuple[bool, list]:
        """Whether the entry fits after the workloads admitted before it in this cycle (with
        every target issued so far gone), and where its TPU slices go."""
        node = snap.node(e.cq.name)
        mode = e.a.mode()
        for t in gone:
            snap.remove(t.info)
        ok = all(quota.available(node, fr) >= v for fr, v in e.a.usage.items())
        ok = ok and _tas_fits(snap, e.a)
        if ok and e.a.shapes and mode == M_PREEMPT:
            ok = snap.tas_fits(e.a.shapes, snap.removed)
        for t in gone:
            snap.add(t.info)
        placements: list = []
        if ok and mode == M_FIT and e.a.shapes:
            for flavor, shapes in sorted(e.a.shapes.items()):
                got = snap.reservations[flavor].place(e.st.key, shapes)
                if got is None:
                    return False, []
                placements += [(flavor, p) for p in got]
        return ok, placements

    def _apply(self, admitted: list[tuple[Entry, list]], issued: list[Entry]) -> None:
        """Admissions now; evictions as the workload controller would right after."""
        for e, placements in admitted:
            for flavor, p in placements:
                self.cache.reservations[flavor].hold(e.st.key, [p])
            self.workloads.hold(e.st, e.cq, e.a, [p for _, p in placements])
            self.store.events.append(
                f"{e.st.key} {'re-admitted' if e.st.readmitted else 'admitted'} to {'/'.join(e.a.flavor_names())}"
                + (f" with {_counts(e)}" if e.a.counts else "")
                + (f"; waiting for {', '.join(e.st.waiting_checks)}" if e.st.status == RESERVED else ""))
        for e in issued:
            for t in e.targets:
                victim = self.store.states.get(t.info.key)
                if victim is None or not victim.holds_quota:
                    continue
                self._evict(victim, e.st, t.reason)
            e.st.sticky = e.cq.queueing_strategy == "BestEffortFIFO"
            self.queues.requeue_preemptor(e.st)
            e.st.reason = f"preempting {', '.join(t.info.key for t in e.targets)}"
            # markPreemptionOutcome (scheduler.go): the next attempt tries every flavor again.
            e.st.last_tried = None

    def _evict(self, victim: State, by: State, reason: str) -> None:
        self.workloads.release(victim)
        self.store.evictions.append((victim.key, by.key))
        victim.status = PENDING
        victim.reason = f"preempted by {by.key}"
        victim.preempted_by.append(by.key)
        victim.evicted = True
        why = preempt.REASONS.get(reason, reason)
        self.store.events.append(
            f"{victim.key} preempted by {by.key} ({why}; priority {victim.priority} "
            f"{'<' if victim.priority < by.priority else '=' if victim.priority == by.priority else '>'}"
            f" {by.priority})")
        if victim.wl.owner[0] in ("Deployment", "Pod"):
            # The pod is deleted; its ReplicaSet makes a new one that queues as new.
            victim.created = self.store.tick()

    # ------------------------------------------------------------ requeue: why the others wait
    def _requeue(self, entries: list[Entry], outcome: dict[str, str]) -> bool:
        """Heads not admitted: why they wait; BestEffortFIFO sets the ones that do not fit
        aside until quota frees up. True when one was set aside."""
        moved = False
        for e in entries:
            how = outcome.get(e.st.key, "nofit")
            st = e.st
            if how in ("nofit", "notargets"):
                self._pending_reason(st, e)
                immediate = e.cq.queueing_strategy == "StrictFIFO" or e.a.pending_flavors()
                if not immediate and not st.inadmissible:
                    self.queues.set_aside(st)
                    moved = True
            elif how == "skipped":
                st.status, st.reason = PENDING, e.message
                if not self.store.rules.preserve_scan_progress:
                    st.last_tried = None        # setSkipped: retry every flavor (markSkipped keeps it from v0.19)
        return moved

    def _pending_reason(self, st: State, e: Entry) -> None:
        never = self._never_fits(st, e.cq)
        if never:
            st.status, st.reason = NEVER, never
            return
        st.status = PENDING
        msg = e.message or "does not fit"
        if e.a.mode() == M_PREEMPT:
            msg += self._blocked_by(e)
        st.reason = msg

    def _blocked_by(self, e: Entry) -> str:
        """Why preemption cannot make room, naming the policy and who holds the quota: the
        ClusterQueues of the cohort that borrow the flavors this head asked for."""
        pre = e.cq.preemption
        borrowers = self._borrowers(e)
        if borrowers and pre.reclaim == "Never":
            return (f"; {', '.join(borrowers)} borrow{'s' if len(borrowers) == 1 else ''} the quota and "
                    f"ClusterQueue {e.cq.name} may not reclaim it (reclaimWithinCohort: Never; fix: Any or "
                    f"LowerPriority)")
        if pre.within == "Never" and pre.reclaim == "Never":
            return "; preemption is off (withinClusterQueue: Never, reclaimWithinCohort: Never)"
        if borrowers:
            return (f"; no workload it may preempt would make room (reclaimWithinCohort: {pre.reclaim}; borrowed "
                    f"by {', '.join(borrowers)})")
        return "; no workload it may preempt would make room"

    def _borrowers(self, e: Entry) -> list[str]:
        """Other ClusterQueues of the head's cohort using more than their nominal quota of a
        (flavor, resource) the head asked for."""
        node = self.cache.tree.cqs.get(e.cq.name)
        if node is None or node.parent is None:
            return []
        out = []
        for other in node.root().subtree_cqs():
            if other is not node and any(other.usage.get(fr, ZERO) > other.nominal(fr) for fr in e.a.usage):
                out.append(other.name)
        return sorted(out)

    def _never_fits(self, st: State, cq: ClusterQueue) -> str | None:
        """Why the Workload could not be admitted even into an empty cluster, or None."""
        cluster, static = self.store.cluster, self.cache.static
        tree = quota.Tree(cluster)
        verdict = supply.never(tree, cq.name, st.wl.podsets)   # quota alone: the one verdict every tool gives
        if verdict is not None:
            slices = assign.in_slices(static.get(verdict.flavor or ""), verdict.resource, verdict.need,
                                      verdict.most or ZERO)
            return "can never be admitted: " + verdict.message + slices
        empty = {f: r.empty() for f, r in self.cache.reservations.items()}
        ctx = assign.Context(cq, tree.cqs[cq.name], cluster.flavors, False, empty,
                             lambda fr, v: (assign.NO_CANDIDATES, 0), None, static, self.cache.tas,
                             lambda flavor: lambda leaf: {},
                             tas_enabled=cluster.config.gate("TopologyAwareScheduling", self.store.rules.tas))
        counts = tuple(ps.min_count if ps.min_count is not None else ps.count for ps in st.wl.podsets)
        a = assign.assign(ctx, st.wl, counts if counts != tuple(ps.count for ps in st.wl.podsets) else None)
        if a.mode() != M_NOFIT:
            return None
        return "can never be admitted: " + (a.message() or "no flavor fits")


def _to_reserve(e: Entry, node: quota.Node) -> dict[FR, Decimal]:
    """quotaResourcesToReserve: what a head that needs preemption but found no targets
    keeps from lower-priority workloads of the cohort this cycle."""
    out = {}
    for fr, v in e.a.usage.items():
        q = node.quotas.get(fr)
        nominal = q.nominal if q else ZERO
        used = node.usage.get(fr, ZERO)
        if e.a.borrowing > 0:
            out[fr] = v if q is None or q.borrowing is None else min(v, nominal + q.borrowing - used)
        else:
            out[fr] = max(ZERO, min(v, nominal - used))
    return {fr: v for fr, v in out.items() if v > 0}


# Feature gates the planner follows (beyond the release's defaults in releases.py).
MODELLED_GATES = ("PartialAdmission", "TopologyAwareScheduling", "TASProfileMixed", "FairSharingPreemptWithinNominal",
                  "FairSharingPrioritizeNonBorrowing")


def gates(store: Store) -> set[str]:
    """The release's default-on gates the scheduler reads, with the configuration's featureGates."""
    out = set(store.rules.gates)
    for name, on in store.cluster.config.feature_gates:
        (out.add if on else out.discard)(name)
    return out


def _tas_usage(snap: preempt.Snapshot, a: assign.Assignment) -> tuple:
    """(flavor, {leaf: requests}) of the assignment's TAS pod sets."""
    return tuple((p.flavor, tas.usage_of(snap.tas[p.flavor], p.request, p.assignment))
                 for p in a.topology if p.flavor in snap.tas)


def _tas_fits(snap: preempt.Snapshot, a: assign.Assignment) -> bool:
    """TASFlavorSnapshot.Fits: each leaf the assignment uses still has room for its pods."""
    for flavor, leaves in _tas_usage(snap, a):
        fs = snap.tas[flavor]
        used = snap.tas_used(flavor)
        for leaf_id, req in leaves.items():
            leaf = fs.leaves.get(leaf_id)
            if leaf is None:
                return False
            free = dict(leaf.capacity or {})
            for r, v in used(leaf).items():
                free[r] = free.get(r, ZERO) - v
            if any(free.get(r, ZERO) < v for r, v in req.items()):
                return False
    return True


def _counts(e: Entry) -> str:
    assert e.a.counts, "called for partial admissions only"
    return ", ".join(f"{ps.name} {c} of {ps.count} pods" for ps, c in zip(e.st.wl.podsets, e.a.counts, strict=True))
