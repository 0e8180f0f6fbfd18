"""The Workloads' lifecycle: made from workload objects (one per Job, one per pod of a
Deployment, ...) and scaled, deleted, finished or evicted as a scenario says; holding quota
and letting it go; admission checks deciding whether reserved quota admits (Kueue v0.17.4
pkg/controller/jobframework/reconciler.go makes and deletes Workloads,
pkg/controller/core/workload_controller.go evicts them and applies admission checks:
Ready admits, Pending holds the quota without admitting, Retry releases it, Rejected
deactivates the Workload).

Sizes are capped (the cap, simulate.MAX_WORKLOADS) so any input is simulated in bounded
time and memory; what was left out is counted per workload object."""
from __future__ import annotations

from decimal import Decimal

from . import assign, overlay
from .assign import M_FIT
from .cache import Cache
from .overlay import ClusterQueue, Owner, Workload
from .queue_manager import QueueManager
from .state import ADMITTED, FINISHED, NEVER, PENDING, RESERVED, State
from .store import Store


class WorkloadController:
    def __init__(self, store: Store, cache: Cache, queues: QueueManager, cap: int):
        self.store, self.cache, self.queues = store, cache, queues
        self.cap = cap                                # Workloads simulated in one plan
        self.live: dict[tuple, Owner] = {}
        self.check_defaults: dict[str, str] = {}      # admission check -> its verdict for every Workload
        self.left_out: dict[tuple, int] = {}          # workload object -> its Workloads over the cap, now
        self.left_out_peak: dict[tuple, int] = {}     # ... the most at any step (what the note counts)

    @property
    def dropped(self) -> int:
        """Workloads left out by the cap (a scaled object's counted once, as it stands now)."""
        return sum(self.left_out_peak.values())

    # ------------------------------------------------------------ scenario steps
    def submit(self, owner: Owner) -> None:
        self.live[owner.ref] = owner
        if owner.kind in overlay.SCALABLE_KINDS:
            self.make(owner, owner.replicas or 0)
            if not owner.replicas:
                self.store.events.append(f"{owner.label} created with 0 replicas")
        else:
            self.make(owner, 1)

    def scale(self, ref: tuple, replicas: int) -> None:
        owner = self.live[ref]
        units = self.store.units(ref)
        before = len(units)
        owner.replicas = replicas
        self.left_out.pop(ref, None)
        if replicas > before:
            self.make(owner, replicas - before)
        elif replicas < before:
            for st in _scale_down_order(owner, units)[:before - replicas]:
                self.remove(st, "scaled down")

    def delete(self, ref: tuple) -> None:
        for st in self.store.units(ref):
            self.remove(st, "deleted")
        self.live.pop(ref, None)

    def finish(self, ref: tuple) -> None:
        """The Workloads of an object complete: their quota is released; they stay listed as finished."""
        for st in self.store.units(ref):
            held = st.holds_quota
            if held:
                self.release(st)
            st.status, st.reason = FINISHED, "completed" if held else "completed without being admitted?"
            self.queues.touch(st.key)
            self.store.events.append(f"{st.key} finished" + (", freeing its quota" if held else ""))
        self.live.pop(ref, None)

    def evict(self, ref: tuple, why: str = "evicted by the scenario") -> None:
        """The object's Workloads are evicted (Kueue's Evicted condition, as an administrator or a
        failing node sets it): their quota is released and they queue again."""
        for st in self.store.units(ref):
            if not st.holds_quota:
                self.store.events.append(f"{st.key} holds no quota: nothing to evict")
                continue
            self.evict_state(st, why)

    def evict_state(self, st: State, why: str) -> None:
        self.release(st)
        st.status, st.evicted, st.reason = PENDING, True, why
        self.store.evictions.append((st.key, None))
        self.store.events.append(f"{st.key} evicted ({why})")

    # ------------------------------------------------------------ for MultiKueue (dispatch.py)
    def add_copy(self, wl: Workload) -> State | None:
        """A Workload made elsewhere (MultiKueue's copy of a manager Workload): it keeps the
        original's pod sets and priority and queues here as new."""
        if wl.key in self.store.states:
            return None
        st = State(wl, created=self.store.tick())
        self.store.states[wl.key] = st
        self.queues.touch(wl.key)
        self.store.events.append(f"{wl.key} created")
        return st

    def drop(self, key: str, why: str) -> None:
        """Delete one Workload (and its job), freeing its quota."""
        st = self.store.states.get(key)
        if st is not None:
            self.remove(st, why)

    def set_workload_check(self, key: str, check: str, state: str, message: str = "") -> None:
        """One admission check's verdict for one Workload (MultiKueue's, for a manager Workload)."""
        st = self.store.states[key]
        st.checks[check] = state
        if st.holds_quota:
            self.apply_checks(st)
            if state == "Retry" and message:
                st.reason = f"{message}: quota released, queued again"

    def complete(self, key: str, why: str) -> None:
        """One Workload finishes (its job completed elsewhere): quota released, listed as finished."""
        st = self.store.states[key]
        if st.holds_quota:
            self.release(st)
        st.status, st.reason = FINISHED, why
        self.queues.touch(st.key)
        self.store.events.append(f"{st.key} finished ({why})")

    # ------------------------------------------------------------ Workloads
    def make(self, owner: Owner, n: int) -> None:
        """n more Workloads of the object, as many as the cap leaves room for; counted
        before any is made, so a huge count costs nothing."""
        room = max(0, self.cap - len(self.store.states))
        for _ in range(min(n, room)):
            self.create(owner)
        now = self.left_out[owner.ref] = self.left_out.get(owner.ref, 0) + max(0, n - room)
        self.left_out_peak[owner.ref] = max(self.left_out_peak.get(owner.ref, 0), now)

    def create(self, owner: Owner) -> State | None:
        index = None
        if owner.kind in overlay.SCALABLE_KINDS:
            # Replica labels are slots 1..replicas: a new pod takes the lowest free one.
            taken = {int(s.key.rsplit("#", 1)[1]) for s in self.store.units(owner.ref)}
            index = next(i for i in range(1, len(taken) + 2) if i not in taken)
        wl = overlay.workloads_of(self.store.cluster, owner, index)
        clock = self.store.tick()
        st = State(wl, created=clock if wl.created_at is None else recorded(wl.created_at),
                   checks=dict(wl.check_states))
        self.store.states[wl.key] = st
        self.queues.touch(wl.key)
        self.store.events.append(f"{wl.key} created")
        if wl.preadmitted:
            self.preadmit(st)
        return st

    def preadmit(self, st: State) -> None:
        """A Workload whose status.admission the input records holds that quota from the start."""
        pre = st.wl.preadmitted
        assert pre is not None, "called for Workloads with status.admission"
        cq = self.store.cluster.cluster_queues.get(pre.cluster_queue)
        if cq is None or pre.cluster_queue not in self.cache.tree.cqs:
            st.reason = f"status.admission names ClusterQueue {pre.cluster_queue}, which does not exist"
            return
        a = _recorded_assignment(st.wl, cq)
        st.cluster_queue = cq.name
        self.hold(st, cq, a, [])
        # waitForPodsReady: admitted before the plan, its pods are ready when its PodsReady says so
        st.pods_ready = st.pods_ready or pre.pods_ready
        if pre.reserved_at is not None:
            st.admitted_at = recorded(pre.reserved_at)
            if st.holds_quota:
                self.cache.unindex(st)
                self.cache.index(st)
        self.store.events.append(f"{st.key} already admitted to {'/'.join(a.flavor_names())} "
                                 "(status.admission)")

    def remove(self, st: State, why: str) -> None:
        held = st.holds_quota
        if held:
            self.release(st)
        del self.store.states[st.key]
        self.queues.touch(st.key)
        self.store.events.append(f"{st.key} {why}" + (", freeing its quota" if held else ""))

    def hold(self, st: State, cq: ClusterQueue, a: assign.Assignment, placements: list) -> None:
        """Quota reserved; the admission checks decide whether that admits it."""
        self.cache.assume(st, cq, a, placements)
        self.queues.touch(st.key)
        self.apply_checks(st)

    def release(self, st: State) -> None:
        """Quota released: the Workload is pending, and the cohort's inadmissible ones try again."""
        self.cache.forget(st)
        self.queues.touch(st.key)
        self.queues.requeue_cohort(st.cluster_queue)

    def apply_checks(self, st: State) -> None:
        cq = self.store.cluster.cluster_queues.get(st.cluster_queue or "")
        if cq is None:
            return
        states = _check_states(st, cq, self.check_defaults)
        if any(s == "Rejected" for s in states.values()):
            self.release(st)
            st.status, st.reason = NEVER, "rejected by AdmissionCheck " + ", ".join(
                n for n, s in states.items() if s == "Rejected") + "; Kueue deactivates the Workload"
            st.inadmissible = True
            self.store.events.append(f"{st.key} rejected by its admission check and deactivated")
            return
        retry = [n for n, s in states.items() if s == "Retry"]
        if retry:
            self.release(st)
            st.evicted = True
            st.reason = f"AdmissionCheck {', '.join(retry)} asked to retry: quota released, queued again"
            for n in retry:
                st.checks[n] = "Pending"      # the check's controller starts over on the next reservation
            self.store.events.append(f"{st.key} evicted: AdmissionCheck {', '.join(retry)} Retry")
            return
        _admit_or_wait(st, tuple(n for n, s in states.items() if s != "Ready"))


def _scale_down_order(owner: Owner, units: list[State]) -> list[State]:
    if owner.kind == "LeaderWorkerSet":
        # Groups are StatefulSet ordinals: the highest goes first.
        return sorted(units, key=lambda s: -int(s.key.rsplit("#", 1)[1]))
    # ReplicaSet: pods not yet running (gated by Kueue) first, then the newest.
    return sorted(units, key=lambda s: (s.status == ADMITTED, -s.created))


def _check_states(st: State, cq: ClusterQueue, defaults: dict[str, str]) -> dict[str, str]:
    """The state of each admission check that applies to the Workload's flavors."""
    flavors = set(st.flavors.values())
    return {ref.name: st.checks.get(ref.name, defaults.get(ref.name, "Ready"))
            for ref in cq.checks if not ref.on_flavors or flavors & set(ref.on_flavors)}


def _admit_or_wait(st: State, waiting: tuple[str, ...]) -> None:
    st.waiting_checks = waiting
    if waiting:
        st.status = RESERVED
        st.reason = "quota reserved; waiting for AdmissionCheck " + ", ".join(waiting)
    else:
        again = st.evicted
        st.status, st.reason, st.evicted = ADMITTED, "", False
        st.readmitted = st.readmitted or again


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


# Times recorded in the input (creationTimestamp, QuotaReserved) are kept in their
# order and put before everything the simulation does (its clock counts from 0).
RECORDED_BEFORE = 2.0 ** 40          # seconds; later than any real timestamp


def recorded(epoch: float) -> float:
    return epoch - RECORDED_BEFORE
