"""Kueue's scheduler, replayed offline (Kueue v0.17.4 pkg/scheduler/scheduler.go,
pkg/cache/queue/cluster_queue.go).

A scheduling cycle takes the head of every active ClusterQueue (highest
priority, then oldest; StrictFIFO keeps a head that does not fit at the front,
BestEffortFIFO sets it aside as inadmissible until quota frees up), assigns
flavors to each (assign.py) and, when preemption is needed, finds targets
(preempt.py). The heads are then processed in order: those that fit without
borrowing first, then by priority and age (or, with fair sharing, by a
tournament of dominant resource shares up the cohort tree). A head is admitted
if it still fits after the ones before it; a head that needs preemption evicts
its targets and is retried first in the next cycle; one that needs preemption
but has no targets holds back the quota it could reclaim so lower-priority
workloads of the cohort do not take it. Cycles run until nothing changes.

Between cycles, evicted Workloads requeue with their creation time (a
Deployment's preempted pod is replaced by a new pod, which queues as new), and
freed quota makes the inadmissible Workloads of the cohort eligible again.
After quota is reserved, the ClusterQueue's admission checks decide: Ready
admits, Pending holds the quota without admitting, Retry releases it, Rejected
deactivates the Workload. Stop policies: Hold stops new admissions (and takes
back quota reserved but not yet admitted), HoldAndDrain also evicts.

Sizes are capped (MAX_WORKLOADS, MAX_CUBES) so any input is simulated in
bounded time and memory; the plan says what was left out."""
from __future__ import annotations

import bisect
import copy
from decimal import Decimal

from ..kernel import supply
from ..kernel.labelmatch import selector_matches
from ..kernel.quantity import show as fmt
from . import actions, assign, fairorder, overlay, preempt, queues, quota, releases, tpusetup
from .assign import M_FIT, M_NOFIT, M_PREEMPT
from .overlay import ClusterQueue, Owner, Workload
from .quota import FR, ZERO
from .results import STATES, Cubes, Plan, Row, StepResult, Usage, snapshot, usage_rows  # noqa: F401 (re-exported)
from .state import ADMITTED, FINISHED, NEVER, PENDING, RESERVED, UNMANAGED, Entry, State
from .tpusetup import MAX_CUBES  # noqa: F401 (re-exported)

MAX_CYCLES = 50_000
MAX_WORKLOADS = 10_000      # Workloads simulated in one plan; more are left out, with a note


class Simulator:
    def __init__(self, cluster: overlay.Cluster, cubes: int | None = None, cubes_source: str = "--cubes",
                 kueue_version: str = "v0.17.4"):
        self.cluster = copy.deepcopy(cluster)
        self.clock = 0
        self.states: dict[str, State] = {}
        self.live: dict[tuple, Owner] = {}
        self.events: list[str] = []
        self.notes: list[str] = list(cluster.notes)
        self.rules = releases.rules(kueue_version)
        # Pending Workloads per ClusterQueue (queues.py) and admitted ones per ClusterQueue (the
        # scheduler snapshot's), kept as Workloads change instead of re-read every cycle.
        self.queues: dict[str, queues.PendingQueue] = {}
        self.queued: dict[str, str] = {}                 # Workload key -> the queue it waits in
        self.touched: set[str] = set()                   # Workloads to classify again
        self.epoch, self.synced_epoch = 0, -1            # queue objects changed: classify all again
        self.infos: dict[str, dict[str, preempt.Info]] = {}
        self.ranked: dict[tuple, list[tuple]] = {}       # (cq, flavor, resource) -> preempt.rank of its admitted, sorted
        self.last_heads: list[tuple[State, ClusterQueue]] = []
        self.gates = set(self.rules.gates)
        self.cycle_no = 0
        self.check_defaults: dict[str, str] = {}
        self.generation: dict[str, int] = {}
        self.left_out: dict[tuple, int] = {}     # workload object -> its Workloads over MAX_WORKLOADS, now
        self.left_out_peak: dict[tuple, int] = {}   # ... the most at any step (what the note counts)
        # Workloads that lost their quota against their will (preempted, drained, evicted), with
        # who preempted them: what MultiKueue (dispatch.py) reacts to. Read and cleared by it.
        self.evictions: list[tuple[str, str | None]] = []
        self.reservations = tpusetup.reservations(self.cluster, cubes, cubes_source, self.notes)
        self.static = tpusetup.static_pools(self.cluster, self.reservations, self.notes)
        self.tree = quota.Tree(self.cluster)
        if self.cluster.config.fair_sharing or any(c.cohort for c in self.cluster.cluster_queues.values()):
            self.notes.append(f"Kueue configuration: {self.cluster.config.source}")

    # Steps that change queue objects (actions.py).
    set_quota = actions.set_quota
    set_stop_policy = actions.set_stop_policy
    set_namespace_labels = actions.set_namespace_labels
    apply = actions.apply
    remove_object = actions.remove_object
    set_check = actions.set_check

    def rebuild(self) -> None:
        """After a change to queues, cohorts or quotas: the quota tree anew, with the
        quota Workloads hold; their inadmissible siblings may try again."""
        self.tree = quota.Tree(self.cluster)
        for st in self.states.values():
            if st.holds_quota and st.cluster_queue in self.tree.cqs:
                quota.add(self.tree.cqs[st.cluster_queue], st.usage)
        for name in self.cluster.cluster_queues:
            self.generation[name] = self.generation.get(name, 0) + 1
        self._requeue_all()

    # ------------------------------------------------------------ actions
    @property
    def dropped(self) -> int:
        """Workloads left out by the cap (a scaled object's counted once, as it stands now)."""
        return sum(self.left_out_peak.values())

    def _make(self, owner: Owner, n: int) -> None:
        """n more Workloads of the object, as many as the cap leaves room for; counted
        before any is made, so a huge count costs nothing."""
        room = max(0, MAX_WORKLOADS - len(self.states))
        for _ in range(min(n, room)):
            self._create(owner)
        now = self.left_out[owner.ref] = self.left_out.get(owner.ref, 0) + max(0, n - room)
        self.left_out_peak[owner.ref] = max(self.left_out_peak.get(owner.ref, 0), now)

    def submit(self, owner: Owner) -> None:
        self.live[owner.ref] = owner
        if owner.kind in overlay.SCALABLE_KINDS:
            self._make(owner, owner.replicas or 0)
            if not owner.replicas:
                self.events.append(f"{owner.label} created with 0 replicas")
        else:
            self._make(owner, 1)

    def scale(self, ref: tuple, replicas: int) -> None:
        owner = self.live[ref]
        units = self._units(ref)
        before = len(units)
        owner.replicas = replicas
        self.left_out.pop(ref, None)
        if replicas > before:
            self._make(owner, replicas - before)
        elif replicas < before:
            for st in self._scale_down_order(owner, units)[:before - replicas]:
                self._remove(st, "scaled down")

    def delete(self, ref: tuple) -> None:
        for st in self._units(ref):
            self._remove(st, "deleted")
        self.live.pop(ref, None)

    def finish(self, ref: tuple) -> None:
        """The Workloads of an object complete: their quota is released; they stay listed as finished."""
        for st in self._units(ref):
            held = st.holds_quota
            if held:
                self._release(st)
            st.status, st.reason = FINISHED, "completed" if held else "completed without being admitted?"
            self.touched.add(st.key)
            self.events.append(f"{st.key} finished" + (", freeing its quota" if held else ""))
        self.live.pop(ref, None)

    def evict(self, ref: tuple, why: str = "evicted by the scenario") -> None:
        """The object's Workloads are evicted (Kueue's Evicted condition, as an administrator or a
        failing node sets it): their quota is released and they queue again."""
        for st in self._units(ref):
            if not st.holds_quota:
                self.events.append(f"{st.key} holds no quota: nothing to evict")
                continue
            self.evict_state(st, why)

    def evict_state(self, st: State, why: str) -> None:
        self._release(st)
        st.status, st.evicted, st.reason = PENDING, True, why
        self.evictions.append((st.key, None))
        self.events.append(f"{st.key} evicted ({why})")

    # ------------------------------------------------------------ for MultiKueue (dispatch.py)
    def add_copy(self, wl: Workload) -> State | None:
        """A Workload made elsewhere (MultiKueue's copy of a manager Workload): it keeps the
        original's pod sets and priority and queues here as new."""
        if wl.key in self.states:
            return None
        self.clock += 1
        st = State(wl, created=self.clock)
        self.states[wl.key] = st
        self.touched.add(wl.key)
        self.events.append(f"{wl.key} created")
        return st

    def drop(self, key: str, why: str) -> None:
        """Delete one Workload (and its job), freeing its quota."""
        st = self.states.get(key)
        if st is not None:
            self._remove(st, why)

    def set_workload_check(self, key: str, check: str, state: str, message: str = "") -> None:
        """One admission check's verdict for one Workload (MultiKueue's, for a manager Workload)."""
        st = self.states[key]
        st.checks[check] = state
        if st.holds_quota:
            self._apply_checks(st)
            if state == "Retry" and message:
                st.reason = f"{message}: quota released, queued again"

    def complete(self, key: str, why: str) -> None:
        """One Workload finishes (its job completed elsewhere): quota released, listed as finished."""
        st = self.states[key]
        if st.holds_quota:
            self._release(st)
        st.status, st.reason = FINISHED, why
        self.touched.add(st.key)
        self.events.append(f"{st.key} finished ({why})")

    def begin_step(self) -> None:
        self.events = []
        for st in self.states.values():
            st.preempted_by = []
            st.readmitted = False

    # ------------------------------------------------------------ workloads
    def _create(self, owner: Owner) -> State | None:
        index = None
        if owner.kind in overlay.SCALABLE_KINDS:
            # Replica labels are slots 1..replicas: a new pod takes the lowest free one.
            taken = {int(s.key.rsplit("#", 1)[1]) for s in self._units(owner.ref)}
            index = next(i for i in range(1, len(taken) + 2) if i not in taken)
        wl = overlay.workloads_of(self.cluster, owner, index)
        self.clock += 1
        st = State(wl, created=self.clock if wl.created_at is None else recorded(wl.created_at),
                   checks=dict(wl.check_states))
        self.states[wl.key] = st
        self.touched.add(wl.key)
        self.events.append(f"{wl.key} created")
        if wl.preadmitted:
            self._preadmit(st)
        return st

    def _preadmit(self, st: State) -> None:
        pre = st.wl.preadmitted
        assert pre is not None, "called for Workloads with status.admission"
        cq = self.cluster.cluster_queues.get(pre.cluster_queue)
        if cq is None or pre.cluster_queue not in self.tree.cqs:
            st.reason = f"status.admission names ClusterQueue {pre.cluster_queue}, which does not exist"
            return
        a = _recorded_assignment(st.wl, cq)
        st.cluster_queue = cq.name
        self._hold(st, cq, a, [])
        if pre.reserved_at is not None:
            st.admitted_at = recorded(pre.reserved_at)
            if st.holds_quota:
                self._released_info(st)
                self._admitted_info(st)
        self.events.append(f"{st.key} already admitted to {'/'.join(a.flavor_names())} "
                           "(status.admission)")

    def _units(self, ref: tuple) -> list[State]:
        return [s for s in self.states.values() if s.wl.owner == ref and s.status != FINISHED]

    def _scale_down_order(self, owner: Owner, units: list[State]) -> list[State]:
        if owner.kind == "LeaderWorkerSet":
            # Groups are StatefulSet ordinals: the highest goes first.
            return sorted(units, key=lambda s: -int(s.key.rsplit("#", 1)[1]))
        # ReplicaSet: pods not yet running (gated by Kueue) first, then the newest.
        return sorted(units, key=lambda s: (s.status == ADMITTED, -s.created))

    def _remove(self, st: State, why: str) -> None:
        held = st.holds_quota
        if held:
            self._release(st)
        del self.states[st.key]
        self.touched.add(st.key)
        self.events.append(f"{st.key} {why}" + (", freeing its quota" if held else ""))

    def _hold(self, st: State, cq: ClusterQueue, a: assign.Assignment, placements: list) -> None:
        st.assignment, st.usage = a, dict(a.usage)
        st.placements = placements
        quota.add(self.tree.cqs[cq.name], st.usage)
        self.clock += 1
        st.admitted_at = self.clock
        st.cluster_queue = cq.name
        st.status = RESERVED
        st.inadmissible = st.sticky = False
        st.last_tried = None
        self._admitted_info(st)
        self.touched.add(st.key)
        self._apply_checks(st)

    def _admitted_info(self, st: State) -> None:
        """The admitted Workload as the scheduler's snapshot holds it, in its queue's candidate order."""
        info = self._info(st)
        self.infos.setdefault(info.cq, {})[info.key] = info
        for fr in info.frs:
            bisect.insort(self.ranked.setdefault((info.cq, *fr), []), preempt.rank(info))

    def _released_info(self, st: State) -> None:
        info = self.infos.get(st.cluster_queue or "", {}).pop(st.key, None)
        if info is not None:
            for fr in info.frs:
                ranked = self.ranked[(info.cq, *fr)]
                i = bisect.bisect_left(ranked, preempt.rank(info))
                if i < len(ranked) and ranked[i] == preempt.rank(info):
                    del ranked[i]

    def _release(self, st: State) -> None:
        self._released_info(st)
        self.touched.add(st.key)
        if st.cluster_queue in self.tree.cqs:
            quota.remove(self.tree.cqs[st.cluster_queue], st.usage)
            self.generation[st.cluster_queue] = self.generation.get(st.cluster_queue, 0) + 1
        for res in self.reservations.values():
            res.release(st.key)
        st.usage, st.placements, st.admitted_at, st.assignment = {}, [], None, None
        st.status = PENDING
        self._requeue_cohort(st.cluster_queue)

    def _apply_checks(self, st: State) -> None:
        cq = self.cluster.cluster_queues.get(st.cluster_queue or "")
        if cq is None:
            return
        states = self._check_states(st, cq)
        if any(s == "Rejected" for s in states.values()):
            self._release(st)
            st.status, st.reason = NEVER, "rejected by AdmissionCheck " + ", ".join(
                n for n, s in states.items() if s == "Rejected") + "; Kueue deactivates the Workload"
            st.inadmissible = True
            self.events.append(f"{st.key} rejected by its admission check and deactivated")
            return
        retry = [n for n, s in states.items() if s == "Retry"]
        if retry:
            self._release(st)
            st.evicted = True
            st.reason = f"AdmissionCheck {', '.join(retry)} asked to retry: quota released, queued again"
            for n in retry:
                st.checks[n] = "Pending"      # the check's controller starts over on the next reservation
            self.events.append(f"{st.key} evicted: AdmissionCheck {', '.join(retry)} Retry")
            return
        self._admit_or_wait(st, tuple(n for n, s in states.items() if s != "Ready"))

    def _check_states(self, st: State, cq: ClusterQueue) -> dict[str, str]:
        """The state of each admission check that applies to the Workload's flavors."""
        flavors = set(st.flavors.values())
        return {ref.name: st.checks.get(ref.name, self.check_defaults.get(ref.name, "Ready"))
                for ref in cq.checks if not ref.on_flavors or flavors & set(ref.on_flavors)}

    def _admit_or_wait(self, st: State, waiting: tuple[str, ...]) -> None:
        st.waiting_checks = waiting
        if waiting:
            st.status = RESERVED
            st.reason = "quota reserved; waiting for AdmissionCheck " + ", ".join(waiting)
        else:
            again = st.evicted
            st.status, st.reason, st.evicted = ADMITTED, "", False
            st.readmitted = st.readmitted or again

    # ------------------------------------------------------------ queues
    def _cq_problem(self, cq: ClusterQueue) -> tuple[str, str] | None:
        """(state, why) when the ClusterQueue is inactive: it admits nothing."""
        c = self.cluster
        if cq.stop_policy not in (None, "None"):
            return PENDING, f"ClusterQueue {cq.name} is stopped (stopPolicy: {cq.stop_policy})"
        missing = []
        for name in cq.flavor_names():
            rf = c.flavors.get(name)
            if rf is None:
                missing.append(f"ResourceFlavor {name} does not exist")
            elif rf.topology and rf.topology not in c.topologies:
                missing.append(f"ResourceFlavor {name} names Topology {rf.topology}, which does not exist")
        for ac in cq.admission_checks:
            if ac not in c.admission_checks:
                missing.append(f"AdmissionCheck {ac} does not exist")
        if cq.cohort and cq.name in self.tree.cqs and self.tree.in_cycle(cq.name):
            missing.append(f"its cohort {cq.cohort} is in a cycle of parent cohorts")
        if missing:
            return NEVER, f"ClusterQueue {cq.name} is inactive: " + "; ".join(dict.fromkeys(missing))
        return None

    def _classify(self, st: State) -> ClusterQueue | None:
        """The active ClusterQueue the Workload waits in, or None with the state set."""
        wl, c = st.wl, self.cluster
        if st.holds_quota or st.status == FINISHED:
            return None
        if st.status == NEVER and st.reason.startswith("rejected by"):
            return None
        if wl.queue is None:
            st.status, st.reason = UNMANAGED, "no kueue.x-k8s.io/queue-name label: Kueue does not manage it"
            return None
        lq = c.local_queues.get((wl.namespace, wl.queue))
        cq = c.cluster_queues.get(lq.cluster_queue) if lq else None
        st.cluster_queue = cq.name if cq else None
        never = list(wl.problems) + self._wiring_problems(wl, lq, cq)
        if never or lq is None or cq is None:
            st.status, st.reason, st.blocked = NEVER, "; ".join(dict.fromkeys(never)), True
            return None
        if lq.stop_policy not in (None, "None"):
            st.status, st.blocked = PENDING, True
            st.reason = f"LocalQueue {lq.namespace}/{lq.name} is stopped (stopPolicy: {lq.stop_policy})"
            return None
        problem = self._cq_problem(cq)
        if problem:
            (st.status, st.reason), st.blocked = problem, True
            return None
        if st.blocked or st.status not in (PENDING, NEVER):
            st.status, st.reason, st.blocked = PENDING, "", False
        return cq

    def _wiring_problems(self, wl: Workload, lq, cq: ClusterQueue | None) -> list[str]:
        """Why the Workload's queue name leads to no ClusterQueue that takes it."""
        if lq is None:
            return [f"LocalQueue {wl.namespace}/{wl.queue} does not exist"]
        if cq is None:
            return [f"ClusterQueue {lq.cluster_queue} (of LocalQueue {wl.namespace}/{wl.queue}) does not exist"]
        if not selector_matches(cq.namespace_selector, overlay.namespace_labels(self.cluster, wl.namespace)):
            return [f"namespace {wl.namespace} is not selected by ClusterQueue {cq.name}'s namespaceSelector"]
        return []

    def _requeue_cohort(self, cq_name: str | None) -> None:
        node = self.tree.cqs.get(cq_name or "")
        if node is None:
            return
        names = {n.name for n in node.root().subtree_cqs()} if node.parent else {node.name}
        for name in sorted(names):
            q = self.queues.get(name)
            if q is not None:
                q.reactivate()

    def _requeue_all(self) -> None:
        for st in self.states.values():
            st.inadmissible = False
        self.epoch += 1

    def _sync(self) -> None:
        """Classify the Workloads that changed (all of them after a change to queue objects)
        into the pending queues."""
        if self.synced_epoch != self.epoch:
            self.queues, self.queued = {}, {}
            self.touched = set(self.states)
            self.synced_epoch = self.epoch
        for key in self.touched:
            old = self.queued.pop(key, None)
            if old is not None and old in self.queues:
                self.queues[old].discard(key)
            st = self.states.get(key)
            cq = self._classify(st) if st is not None else None
            if st is not None and cq is not None:
                self.queues.setdefault(cq.name, queues.PendingQueue(cq.name)).add(st)
                self.queued[key] = cq.name
        self.touched.clear()

    def _mark_waiting(self) -> None:
        """StrictFIFO: the others wait behind the head (said once the cycles are over)."""
        for head, cq in self.last_heads:
            if cq.queueing_strategy == "StrictFIFO" and cq.name in self.queues:
                for s in self.queues[cq.name].active():
                    if s is not head:
                        s.status, s.reason = PENDING, f"waiting behind {head.key} (StrictFIFO)"

    def settle(self) -> None:
        """Run scheduling cycles until nothing changes."""
        idle = 0
        limit = 2 + max((len(g.flavors) for q in self.cluster.cluster_queues.values() for g in q.groups), default=1)
        for _ in range(MAX_CYCLES):
            progress, moved = self._cycle()
            if progress:
                idle = 0
            elif not moved:
                idle += 1
                if idle > limit:
                    self._mark_waiting()
                    return
        self._mark_waiting()
        self.notes.append(f"the simulation stopped after {MAX_CYCLES} scheduling cycles without settling")

    # ------------------------------------------------------------ one cycle
    def cycle(self) -> None:
        """One scheduling cycle (Kueue's Scheduler.schedule), what its unit tests run;
        `settle` runs them until nothing changes."""
        self._cycle()
        self._mark_waiting()

    def _snapshot(self) -> preempt.Snapshot:
        tree = _clone(self.tree)
        # The live per-queue dicts: every removal a trial makes is undone before the cycle ends
        # (checked in _cycle), so nothing is copied.
        workloads = {name: self.infos.setdefault(name, {}) for name in tree.cqs}
        reservations = {f: r.copy() for f, r in self.reservations.items()}
        policies = {name: cq.preemption for name, cq in self.cluster.cluster_queues.items()}

        def tas_fits(shapes: dict, removed: set[str]) -> bool:
            for flavor, want in shapes.items():
                res = reservations.get(flavor)
                if res is None:
                    continue
                trial = res.copy()
                for k in removed:
                    trial.release(k)
                if not trial.fits(want):
                    return False
            return True
        snap = preempt.Snapshot(tree, workloads, policies, tas_fits)
        snap.ranked = self.ranked
        snap.reservations = reservations
        return snap

    def _info(self, st: State) -> preempt.Info:
        frs = frozenset((c.flavor, r) for ps in (st.assignment.podsets if st.assignment else ())
                        for r, c in ps.flavors.items())
        return preempt.Info(st.key, st.cluster_queue or "", st.priority, st.created, st.admitted_at or 0,
                            dict(st.usage), frs, False)

    def _context(self, snap: preempt.Snapshot, st: State, cq: ClusterQueue) -> assign.Context:
        node = snap.node(cq.name)
        cfg = self.cluster.config

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
        fresh = st.last_generation == self.generation.get(cq.name, 0) or \
            (self.rules.preserve_scan_progress and self.cycle_no - st.last_cycle <= 1)
        last = st.last_tried if fresh else None
        held = None
        if any(rf.nodes_per_block for rf in self.cluster.flavors.values()):   # GKE blocks (plan/tas.py)
            held = [(s.wl, s.flavors) for s in sorted((s for s in self.states.values()
                                                       if s.holds_quota and s.key != st.key),
                                                      key=lambda s: (s.admitted_at or 0, s.key))]
        return assign.Context(cq, node, self.cluster.flavors, cfg.fair_sharing, snap.reservations,
                              oracle, last, self.static, held)

    def _targets(self, snap, st: State, cq: ClusterQueue, a: assign.Assignment) -> list[preempt.Target]:
        cfg = self.cluster.config
        p = preempt.Preemptor(st.key, cq.name, st.priority, st.created, dict(a.usage), a.frs_need_preemption(),
                              dict(a.shapes))
        return preempt.targets(snap, p, cfg.fair_sharing, cfg.strategies,
                               "FairSharingPreemptWithinNominal" in self.gates)

    def _nominate(self, snap, st: State, cq: ClusterQueue) -> Entry:
        ctx = self._context(snap, st, cq)
        a = assign.assign(ctx, st.wl)
        targets: list[preempt.Target] = []
        if a.mode() == M_PREEMPT:
            targets = self._targets(snap, st, cq, a)
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
        st.last_tried, st.last_generation, st.last_cycle = a.last_tried, self.generation.get(cq.name, 0), self.cycle_no
        return Entry(st, cq, a, targets, a.message())

    def _cycle(self) -> tuple[bool, bool]:
        """One cycle: heads, flavors and targets for each, then admit or preempt in order.
        Returns (progress: something admitted or preempted, moved: a head set aside)."""
        self.cycle_no += 1
        heads = self._heads()
        if not heads:
            return False, False
        snap = self._snapshot()
        entries = [self._nominate(snap, st, cq) for st, cq in heads]
        if self.cluster.config.fair_sharing:
            ordered = fairorder.fair_order(snap, entries, self.gates)
        else:
            ordered = sorted(entries, key=lambda e: (e.a.borrowing, -e.st.priority, e.st.created, e.st.key))
        preempted: dict[str, preempt.Target] = {}
        admitted: list[tuple[Entry, list]] = []
        issued: list[Entry] = []
        outcome: dict[str, str] = {}            # key -> how the entry ended (for requeueing)
        for e in ordered:
            how, placements = self._process(snap, e, preempted)
            outcome[e.st.key] = how
            if how == "preempting":
                issued.append(e)
            elif how == "admitted":
                admitted.append((e, placements))
        self._restore(snap)
        self._apply(admitted, issued)
        moved = self._requeue(entries, outcome)
        return bool(admitted or issued), moved

    def _restore(self, snap: preempt.Snapshot) -> None:
        """The snapshot shares the per-queue dicts of admitted Workloads: put back any a trial
        left removed (none should be)."""
        for key in list(snap.removed):
            st = self.states.get(key)
            if st is not None and st.holds_quota and st.cluster_queue:
                self.infos.setdefault(st.cluster_queue, {})[key] = self._info(st)    # still ranked

    def _heads(self) -> list[tuple[State, ClusterQueue]]:
        """The head of every active ClusterQueue (StrictFIFO: the others wait behind it)."""
        self._sync()
        heads: list[tuple[State, ClusterQueue]] = []
        for name in sorted(self.queues):
            head = self.queues[name].head()
            if head is not None:
                heads.append((head, self.cluster.cluster_queues[name]))
        self.last_heads = heads
        return heads

    def _process(self, snap: preempt.Snapshot, e: Entry, preempted: dict[str, preempt.Target]) -> tuple[str, list]:
        """Admit (or issue the preemptions of) one entry against the cycle's snapshot:
        (nofit | notargets | skipped | preempting | admitted, TPU placements)."""
        mode = e.a.mode()
        node = snap.node(e.cq.name)
        if mode == M_NOFIT:
            return "nofit", []
        if mode == M_PREEMPT and not e.targets:
            if e.cq.preemption.reclaim != "Any":
                quota.add(node, _to_reserve(e, node))
            return "notargets", []
        if any(t.info.key in preempted for t in e.targets):
            e.message = "its preemption targets overlap another workload's in this cycle"
            return "skipped", []
        ok, placements = self._still_fits(snap, e, list(preempted.values()) + e.targets)
        if not ok:
            e.message = "no longer fits after another workload was admitted in the same cycle"
            return "skipped", []
        for t in e.targets:
            preempted[t.info.key] = t
        quota.add(node, e.a.usage)
        return ("preempting" if mode == M_PREEMPT else "admitted"), placements

    def _still_fits(self, snap: preempt.Snapshot, e: Entry, gone: list[preempt.Target]) -> tuple[bool, list]:
        """Whether the entry fits after the workloads admitted before it in this cycle (with
        every target issued so far gone), and where its TPU slices go."""
        node = snap.node(e.cq.name)
        mode = e.a.mode()
        for t in gone:
            snap.remove(t.info)
        ok = all(quota.available(node, fr) >= v for fr, v in e.a.usage.items())
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
                self.reservations[flavor].hold(e.st.key, [p])
            self._hold(e.st, e.cq, e.a, [p for _, p in placements])
            self.events.append(f"{e.st.key} {'re-admitted' if e.st.readmitted else 'admitted'}"
                               f" to {'/'.join(e.a.flavor_names())}"
                               + (f" with {_counts(e)}" if e.a.counts else "")
                               + (f"; waiting for {', '.join(e.st.waiting_checks)}" if e.st.status == RESERVED else ""))
        for e in issued:
            for t in e.targets:
                victim = self.states.get(t.info.key)
                if victim is None or not victim.holds_quota:
                    continue
                self._evict(victim, e.st, t.reason)
            e.st.sticky = e.cq.queueing_strategy == "BestEffortFIFO"
            q = self.queues.get(self.queued.get(e.st.key, ""))
            if q is not None and e.st.key in q.members and not e.st.inadmissible:
                q.push(e.st)                # its order changed
            e.st.reason = f"preempting {', '.join(t.info.key for t in e.targets)}"
            # markPreemptionOutcome (scheduler.go): the next attempt tries every flavor again.
            e.st.last_tried = None

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
                    q = self.queues.get(self.queued.get(st.key, ""))
                    if q is not None:
                        q.set_aside(st)
                    else:
                        st.inadmissible = True
                    moved = True
            elif how == "skipped":
                st.status, st.reason = PENDING, e.message
                if not self.rules.preserve_scan_progress:
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
            pre = e.cq.preemption
            if pre.within == "Never" and pre.reclaim == "Never":
                msg += "; preemption is off (withinClusterQueue: Never, reclaimWithinCohort: Never)"
            else:
                msg += "; no workload it may preempt would make room"
        st.reason = msg

    def _never_fits(self, st: State, cq: ClusterQueue) -> str | None:
        """Why the Workload could not be admitted even into an empty cluster, or None."""
        tree = quota.Tree(self.cluster)
        verdict = supply.never(tree, cq.name, st.wl.podsets)   # quota alone: the one verdict every tool gives
        if verdict is not None:
            slices = assign.in_slices(self.static.get(verdict.flavor or ""), verdict.resource, verdict.need,
                                      verdict.most or ZERO)
            return "can never be admitted: " + verdict.message + slices
        empty = {f: r.empty() for f, r in self.reservations.items()}
        ctx = assign.Context(cq, tree.cqs[cq.name], self.cluster.flavors, False, empty,
                             lambda fr, v: (assign.NO_CANDIDATES, 0), None, self.static)
        counts = tuple(ps.min_count if ps.min_count is not None else ps.count for ps in st.wl.podsets)
        a = assign.assign(ctx, st.wl, counts if counts != tuple(ps.count for ps in st.wl.podsets) else None)
        if a.mode() != M_NOFIT:
            return None
        return "can never be admitted: " + (a.message() or "no flavor fits")

    def _evict(self, victim: State, by: State, reason: str) -> None:
        self._release(victim)
        self.evictions.append((victim.key, by.key))
        victim.status = PENDING
        victim.reason = f"preempted by {by.key}"
        victim.preempted_by.append(by.key)
        victim.evicted = True
        why = preempt.REASONS.get(reason, reason)
        self.events.append(f"{victim.key} preempted by {by.key} ({why}; priority {victim.priority} "
                           f"{'<' if victim.priority < by.priority else '=' if victim.priority == by.priority else '>'}"
                           f" {by.priority})")
        if victim.wl.owner[0] in ("Deployment", "Pod"):
            # The pod is deleted; its ReplicaSet makes a new one that queues as new.
            self.clock += 1
            victim.created = self.clock

def _recorded_assignment(wl: Workload, cq: ClusterQueue) -> assign.Assignment:
    """The flavors and counts a Workload's status.admission records, as an assignment."""
    pre = wl.preadmitted
    assert pre is not None, "called for Workloads with status.admission"
    full = tuple(ps.count for ps in wl.podsets)
    a = assign.Assignment(counts=pre.counts if tuple(pre.counts) != full else None)
    covers_pods = cq.group_of(overlay.PODS) is not None
    for ps, flavors, count in zip(wl.podsets, pre.flavors, pre.counts, strict=True):
        req = {r: v * count for r, v in ps.requests.items()}
        if covers_pods:
            req[overlay.PODS] = Decimal(count)
        psa = assign.PodSetAssignment(ps.name, count, req)
        for r, amount in req.items():
            f = flavors.get(r) or (flavors.get("cpu") if r == overlay.PODS else None)
            if f is None and amount > 0:
                g = cq.group_of(r)
                f = g.flavors[0].flavor if g and g.flavors else None
            if f is not None:
                psa.flavors[r] = assign.Choice(f, M_FIT, 0)
        assign._append(a, psa)
    return a


def _clone(tree: quota.Tree) -> quota.Tree:
    """The quota tree for one cycle's snapshot: its own usage, the same quotas (a cycle
    changes usage only); what copy.deepcopy did at a tenth of the cost."""
    new: dict[int, quota.Node] = {}
    for n in list(tree.cqs.values()) + list(tree.cohorts.values()):
        new[id(n)] = quota.Node(n.name, n.is_cq, n.quotas, dict(n.subtree), dict(n.usage), weight=n.weight)
    for n in list(tree.cqs.values()) + list(tree.cohorts.values()):
        c = new[id(n)]
        c.parent = new[id(n.parent)] if n.parent is not None else None
        c.child_cohorts = [new[id(x)] for x in n.child_cohorts]
        c.child_cqs = [new[id(x)] for x in n.child_cqs]
    out = object.__new__(quota.Tree)
    out.__dict__.update(tree.__dict__)
    out.cqs = {k: new[id(v)] for k, v in tree.cqs.items()}
    out.cohorts = {k: new[id(v)] for k, v in tree.cohorts.items()}
    out.cycles = set(tree.cycles)
    return out


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


def _counts(e: Entry) -> str:
    assert e.a.counts, "called for partial admissions only"
    return ", ".join(f"{ps.name} {c} of {ps.count} pods" for ps, c in zip(e.st.wl.podsets, e.a.counts, strict=True))


def _q(resource: str, v) -> str:
    return "none" if v is None else str(fmt(resource, v))


# Times recorded in the input (creationTimestamp, QuotaReserved) are kept in their
# order and put before everything the simulation does (its clock counts from 0).
RECORDED_BEFORE = 2.0 ** 40          # seconds; later than any real timestamp


def recorded(epoch: float) -> float:
    return epoch - RECORDED_BEFORE


def run(cluster: overlay.Cluster, scenario, cubes: int | None = None, kueue_version: str = "v0.17.4") -> Plan:
    """Replay a scenario (see scenario.py) and return the state after each step."""
    n, source = (cubes, "--cubes") if cubes is not None else (scenario.cubes, "scenario `cubes`")
    sim = Simulator(cluster, n, source, kueue_version)
    sim.begin_step()
    for owner in scenario.initial:
        sim.submit(copy.deepcopy(owner))
    sim.settle()
    what = f"apply {len(scenario.initial)} workload object{'s' if len(scenario.initial) != 1 else ''} of the overlay"
    steps = [_checked(sim, 0, "apply the overlay", what, scenario.initial_expect)]
    for i, step in enumerate(scenario.steps, start=1):
        sim.begin_step()
        step.apply(sim)
        sim.settle()
        steps.append(_checked(sim, i, step.title, step.describe(), step.expect))
    notes = list(sim.notes)
    if sim.dropped:
        notes.append(f"only the first {MAX_WORKLOADS} Workloads are simulated; {sim.dropped} more were left out "
                     "(the plan is capped to stay bounded)")
    return Plan(cluster.source, scenario.source, scenario.description, tuple(dict.fromkeys(notes)), tuple(steps),
                release=sim.rules.release)


def _checked(sim: Simulator, index: int, title: str, action: str, expect) -> StepResult:
    result = snapshot(sim, index, title, action)
    if expect is None:
        return result
    from dataclasses import replace
    return replace(result, failures=tuple(expect.check(result)))
