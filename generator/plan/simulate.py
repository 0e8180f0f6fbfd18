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

import copy
from dataclasses import dataclass, field
from decimal import Decimal

from .. import supply
from ..errors import Problem, SpecError
from ..labels import selector_matches
from ..quantity import show as fmt
from . import assign, model, packer, preempt, quota
from .assign import M_FIT, M_NOFIT, M_PREEMPT
from .model import UNLIMITED, ClusterQueue, Owner, Workload
from .quota import FR, ZERO

ADMITTED, RESERVED, PENDING, NEVER, UNMANAGED, FINISHED = \
    "admitted", "reserved", "pending", "never", "unmanaged", "finished"
MAX_CYCLES = 50_000
MAX_WORKLOADS = 2_000      # Workloads simulated in one plan; more are left out, with a note
MAX_CUBES = 64             # TPU cubes per reservation
CHECK_STATES = ("Pending", "Ready", "Retry", "Rejected")
# Kueue v0.17 feature gates the scheduler reads (pkg/features/kube_features.go): beta and on
# by default from v0.17; not in v0.12.
V017_GATES = ("FairSharingPreemptWithinNominal", "FairSharingPrioritizeNonBorrowing")


@dataclass
class State:
    wl: Workload
    created: float                                              # queue order: creation time
    status: str = PENDING
    reason: str = ""
    assignment: assign.Assignment | None = None  # while quota is reserved
    usage: dict[FR, Decimal] = field(default_factory=dict)
    admitted_at: float | None = None                            # quota reservation time
    placements: list[packer.Placement] = field(default_factory=list)
    cluster_queue: str | None = None
    preempted_by: list[str] = field(default_factory=list)       # during the current step
    evicted: bool = False                                       # preempted and not yet back
    readmitted: bool = False                                    # came back during the current step
    inadmissible: bool = False                                  # set aside until quota frees up
    blocked: bool = False                                       # state set by the queue wiring, not by quota
    sticky: bool = False                                        # preempted for: first in line next cycle
    last_tried: list[dict[str, int]] | None = None
    last_generation: int = -1
    checks: dict[str, str] = field(default_factory=dict)        # per-workload admission check states
    waiting_checks: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return self.wl.key

    @property
    def priority(self) -> int:
        return self.wl.priority.value

    @property
    def holds_quota(self) -> bool:
        return self.status in (ADMITTED, RESERVED)

    @property
    def flavors(self) -> dict[str, str]:
        return self.assignment.flavors() if self.assignment and self.holds_quota else {}


@dataclass
class Entry:
    st: State
    cq: ClusterQueue
    a: assign.Assignment
    targets: list[preempt.Target]
    message: str = ""


class Simulator:
    def __init__(self, cluster: model.Cluster, cubes: int | None = None, cubes_source: str = "--cubes",
                 kueue_version: str = "v0.17.4"):
        self.cluster = copy.deepcopy(cluster)
        self.clock = 0
        self.states: dict[str, State] = {}
        self.live: dict[tuple, Owner] = {}
        self.events: list[str] = []
        self.notes: list[str] = list(cluster.notes)
        self.gates = set(V017_GATES) if _minor(kueue_version) >= 17 else set()
        self.check_defaults: dict[str, str] = {}
        self.generation: dict[str, int] = {}
        self.dropped = 0
        # Workloads that lost their quota against their will (preempted, drained, evicted), with
        # who preempted them: what MultiKueue (dispatch.py) reacts to. Read and cleared by it.
        self.evictions: list[tuple[str, str | None]] = []
        self.reservations = self._reservations(cubes, cubes_source)
        self.static = self._static_pools()
        self.tree = quota.Tree(self.cluster)
        if self.cluster.config.fair_sharing or any(c.cohort for c in self.cluster.cluster_queues.values()):
            self.notes.append(f"Kueue configuration: {self.cluster.config.source}")

    # ------------------------------------------------------------ setup
    def _reservations(self, cubes: int | None, cubes_source: str) -> dict[str, packer.Reservation]:
        """The dynamically sliced TPU flavors: a generation with dynamic slicing, a Kueue
        Topology, and the ClusterQueue checked by that slicing mode's AdmissionCheck."""
        out: dict[str, packer.Reservation] = {}
        problems: list[Problem] = []
        for cq in sorted(self.cluster.cluster_queues.values(), key=lambda q: q.name):
            controllers = {self.cluster.admission_checks.get(a) for a in cq.admission_checks}
            for group in cq.groups:
                for fq in group.flavors:
                    rf = self.cluster.flavors.get(fq.flavor)
                    if rf is None or rf.topology is None or rf.topology not in self.cluster.topologies:
                        continue
                    gen = rf.tpu_generation()
                    if gen is None or gen.dynamic is None or fq.flavor in out \
                            or gen.dynamic.admission_check_controller not in controllers:
                        continue
                    n = self._cubes(cq, fq, gen, cubes, cubes_source, problems)
                    if n is not None:
                        out[fq.flavor] = packer.Reservation(gen, n, self.cluster.topologies[rf.topology],
                                                            f"Topology {rf.topology}")
        if problems:
            raise SpecError(self.cluster.source, problems)
        if cubes is not None and not out:
            self.notes.append(f"{cubes_source} ignored: no TPU flavor with slice admission in this overlay")
        return out

    def _cubes(self, cq: ClusterQueue, fq: model.FlavorQuota, gen, cubes: int | None, cubes_source: str,
               problems: list[Problem]) -> int | None:
        """How many cubes the reservation behind a flavor has: --cubes, or its quota."""
        resource, per_cube = gen.resource, gen.dynamic.cube.chips
        q = fq.resources.get(resource)
        nominal = q.nominal if q else None
        if cubes is not None:
            n = cubes
            self.notes.append(f"flavor {fq.flavor}: reservation of {assign.cubes(n)} ({cubes_source})")
        elif nominal is None or nominal >= UNLIMITED:
            problems.append(Problem(
                f"ClusterQueue/{cq.name}.flavors.{fq.flavor}.{resource}",
                f"nominalQuota is {'missing' if nominal is None else fmt(resource, nominal)} (unlimited), "
                "so the reservation's size is unknown: pass --cubes N or set `cubes` in the scenario"))
            return None
        else:
            n = int(nominal // per_cube)
            self.notes.append(f"flavor {fq.flavor}: reservation of {assign.cubes(n)} "
                              f"({fmt(resource, nominal)} {resource} / {per_cube} chips per cube)")
            if nominal % per_cube:
                self.notes.append(f"flavor {fq.flavor}: {resource} quota {fmt(resource, nominal)} is not "
                                  f"whole cubes; {nominal % per_cube} chips cannot form slices")
        if n > MAX_CUBES:
            self.notes.append(f"flavor {fq.flavor}: only the first {MAX_CUBES} of {n} cubes are simulated "
                              "(slice placement is capped to keep the plan bounded)")
            n = MAX_CUBES
        return n

    def _static_pools(self) -> dict[str, packer.StaticPool]:
        """Flavors of static TPU node pools (accelerator and topology labels), with a note
        per ClusterQueue on how many slices its quota is."""
        out: dict[str, packer.StaticPool] = {}
        for name, rf in sorted(self.cluster.flavors.items()):
            pool = rf.static_pool() if name not in self.reservations else None
            if pool is not None:
                out[name] = pool
        for cq in sorted(self.cluster.cluster_queues.values(), key=lambda q: q.name):
            for flavor, resource, q in cq.quotas():
                pool = out.get(flavor)
                if pool is None or resource != pool.resource:
                    continue
                extra = q.nominal % pool.shape.chips
                self.notes.append(
                    f"flavor {flavor}: static TPU node pools, {pool.describe()}: ClusterQueue {cq.name}'s "
                    f"{fmt(resource, q.nominal)} {resource} = {assign.plural(pool.slices_in(q.nominal), 'slice')}"
                    + (f" and {extra} chips that make no slice" if extra else ""))
                m = pool.machine
                if m is not None and not m.allows(pool.shape):
                    self.notes.append(f"flavor {flavor}: a {m.name} node pool cannot have topology {pool.shape} "
                                      f"(it can: {', '.join(s.text for s in m.topologies)})")
        return out

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
    def submit(self, owner: Owner) -> None:
        self.live[owner.ref] = owner
        if owner.kind in model.SCALABLE_KINDS:
            for _ in range(owner.replicas or 0):
                self._create(owner)
            if not owner.replicas:
                self.events.append(f"{owner.label} created with 0 replicas")
        else:
            self._create(owner)

    def scale(self, ref: tuple, replicas: int) -> None:
        owner = self.live[ref]
        units = self._units(ref)
        before = len(units)
        owner.replicas = replicas
        if replicas > before:
            for _ in range(replicas - before):
                self._create(owner)
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
        self.events.append(f"{st.key} finished ({why})")

    def set_quota(self, cq_name: str, flavor: str, resource: str, nominal: Decimal | None,
                  borrowing: Decimal | None | str = "keep", lending: Decimal | None | str = "keep",
                  cohort: bool = False) -> None:
        owner = self.cluster.cohorts[cq_name] if cohort else self.cluster.cluster_queues[cq_name]
        what = "Cohort" if cohort else "ClusterQueue"
        for group in owner.groups:
            for fq in group.flavors:
                if fq.flavor == flavor and resource in fq.resources:
                    q = fq.resources[resource]
                    changes = []
                    if nominal is not None and nominal != q.nominal:
                        changes.append(f"nominalQuota {fmt(resource, q.nominal)} -> {fmt(resource, nominal)}")
                        q.nominal = nominal
                    for label, attr, value in (("borrowingLimit", "borrowing", borrowing),
                                               ("lendingLimit", "lending", lending)):
                        if value != "keep" and value != getattr(q, attr):
                            old = getattr(q, attr)
                            changes.append(f"{label} {_q(resource, old)} -> {_q(resource, value)}")
                            setattr(q, attr, value)
                    self.events.append(f"{what} {cq_name}: {resource} in {flavor}: " + (", ".join(changes) or "unchanged"))
        self.rebuild()
        if not cohort:
            cq = self.cluster.cluster_queues[cq_name]
            used = sum((st.usage.get((flavor, resource), ZERO) for st in self.states.values()
                        if st.holds_quota and st.cluster_queue == cq_name), ZERO)
            now = cq.quota(flavor, resource)
            if now is not None and used > now.nominal:
                # Kueue never evicts for a quota cut; admitted Workloads keep running.
                self.events.append(f"ClusterQueue {cq_name}: {fmt(resource, used)} {resource} already admitted in "
                                   f"{flavor} stays over the new quota until it finishes")

    def set_stop_policy(self, kind: str, name: str, namespace: str | None, policy: str) -> None:
        if kind == "ClusterQueue":
            self.cluster.cluster_queues[name].stop_policy = policy
            affected = [st for st in self.states.values() if st.cluster_queue == name]
        else:
            self.cluster.local_queues[(namespace or "default", name)].stop_policy = policy
            affected = [st for st in self.states.values()
                        if st.wl.namespace == namespace and st.wl.queue == name]
        self.events.append(f"{kind} {namespace + '/' if namespace else ''}{name}: stopPolicy {policy}")
        for st in affected:
            # Hold: quota reserved but not admitted is taken back; HoldAndDrain evicts the admitted too
            # (workload_controller.go reconcileOnClusterQueueActiveState / ...LocalQueue...).
            if (st.status == RESERVED and policy != "None") or (st.status == ADMITTED and policy == "HoldAndDrain"):
                self._release(st)
                st.status, st.evicted = PENDING, True
                st.reason = f"evicted: the {kind} is stopped ({policy})"
                self.events.append(f"{st.key} evicted: {kind} {name} is stopped ({policy})")
                self.evictions.append((st.key, None))
        self.rebuild()

    def set_namespace_labels(self, namespace: str, labels: dict) -> None:
        self.cluster.namespaces[namespace] = dict(labels)
        self.events.append(f"Namespace {namespace}: labels {labels}")
        self._requeue_all()

    def apply(self, obj: dict) -> str:
        """Create or replace a queue object (ClusterQueue, Cohort, LocalQueue, ResourceFlavor,
        AdmissionCheck, Namespace, priority classes, Topology)."""
        problems: list[Problem] = []
        what = model.read_object(self.cluster, obj, 0, problems, replace=True)
        if problems:
            raise SpecError(self.cluster.source, problems)
        self.events.append(f"applied {what}")
        self.reservations = {**self._reservations(None, "--cubes"), **self.reservations} \
            if obj.get("kind") == "ClusterQueue" else self.reservations
        self.static = self._static_pools()
        self.rebuild()
        return what or ""

    def remove_object(self, kind: str, name: str, namespace: str | None = None) -> None:
        c = self.cluster
        if kind == "ClusterQueue":
            held = [st for st in self.states.values() if st.holds_quota and st.cluster_queue == name]
            if held:
                # A ClusterQueue with admitted Workloads stays (terminating) until they finish.
                c.cluster_queues[name].stop_policy = "Hold"
                self.events.append(f"ClusterQueue {name} is terminating: {len(held)} admitted Workload(s) keep it "
                                   "until they finish; it admits nothing more")
            else:
                c.cluster_queues.pop(name, None)
                self.events.append(f"ClusterQueue {name} deleted")
        elif kind == "ResourceFlavor":
            c.flavors.pop(name, None)
            self.events.append(f"ResourceFlavor {name} deleted")
        elif kind == "Cohort":
            c.cohorts.pop(name, None)
            self.events.append(f"Cohort {name} deleted")
        elif kind == "LocalQueue":
            c.local_queues.pop((namespace or "default", name), None)
            self.events.append(f"LocalQueue {namespace}/{name} deleted")
        elif kind == "AdmissionCheck":
            c.admission_checks.pop(name, None)
            self.events.append(f"AdmissionCheck {name} deleted")
        self.rebuild()

    def set_check(self, check: str, state: str, ref: tuple | None = None) -> None:
        """An admission check's verdict, for one object's Workloads or (ref None) for all."""
        targets = [st for st in self.states.values() if ref is None or st.wl.owner == ref]
        if ref is None:
            self.check_defaults[check] = state
        for st in targets:
            st.checks[check] = state
        self.events.append(f"AdmissionCheck {check}: {state}" + (f" for {ref[0]} {ref[1]}/{ref[2]}" if ref else ""))
        for st in targets:
            if st.holds_quota:
                self._apply_checks(st)

    def begin_step(self) -> None:
        self.events = []
        for st in self.states.values():
            st.preempted_by = []
            st.readmitted = False

    # ------------------------------------------------------------ workloads
    def _create(self, owner: Owner) -> State | None:
        if len(self.states) >= MAX_WORKLOADS:
            self.dropped += 1
            return None
        index = None
        if owner.kind in model.SCALABLE_KINDS:
            # Replica labels are slots 1..replicas: a new pod takes the lowest free one.
            taken = {int(s.key.rsplit("#", 1)[1]) for s in self._units(owner.ref)}
            index = next(i for i in range(1, len(taken) + 2) if i not in taken)
        wl = model.workloads_of(self.cluster, owner, index)
        self.clock += 1
        st = State(wl, created=self.clock if wl.created_at is None else recorded(wl.created_at),
                   checks=dict(wl.check_states))
        self.states[wl.key] = st
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
        a = assign.Assignment(counts=pre.counts)
        covers_pods = cq.group_of(model.PODS) is not None
        for ps, flavors, count in zip(st.wl.podsets, pre.flavors, pre.counts, strict=True):
            req = {r: v * count for r, v in ps.requests.items()}
            if covers_pods:
                req[model.PODS] = Decimal(count)
            psa = assign.PodSetAssignment(ps.name, count, req)
            for r, amount in req.items():
                f = flavors.get(r) or (flavors.get("cpu") if r == model.PODS else None)
                if f is None and amount > 0:
                    g = cq.group_of(r)
                    f = g.flavors[0].flavor if g and g.flavors else None
                if f is not None:
                    psa.flavors[r] = assign.Choice(f, M_FIT, 0)
            assign._append(a, psa)
        st.cluster_queue = cq.name
        self._hold(st, cq, a, [])
        if pre.reserved_at is not None:
            st.admitted_at = recorded(pre.reserved_at)
        self.events.append(f"{st.key} already admitted to {'/'.join(sorted(set(a.flavors().values())))} "
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
        self._apply_checks(st)

    def _release(self, st: State) -> None:
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
        flavors = set(st.flavors.values())
        states = {}
        for ref in cq.checks:
            if ref.on_flavors and not flavors & set(ref.on_flavors):
                continue
            states[ref.name] = st.checks.get(ref.name, self.check_defaults.get(ref.name, "Ready"))
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
        waiting = tuple(n for n, s in states.items() if s != "Ready")
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
        never = list(wl.problems)
        lq = c.local_queues.get((wl.namespace, wl.queue))
        cq = c.cluster_queues.get(lq.cluster_queue) if lq else None
        st.cluster_queue = cq.name if cq else None
        if lq is None:
            never.append(f"LocalQueue {wl.namespace}/{wl.queue} does not exist")
        elif cq is None:
            never.append(f"ClusterQueue {lq.cluster_queue} (of LocalQueue {wl.namespace}/{wl.queue}) does not exist")
        elif not selector_matches(cq.namespace_selector, model.namespace_labels(c, wl.namespace)):
            never.append(f"namespace {wl.namespace} is not selected by ClusterQueue {cq.name}'s namespaceSelector")
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

    def _requeue_cohort(self, cq_name: str | None) -> None:
        node = self.tree.cqs.get(cq_name or "")
        if node is None:
            return
        names = {n.name for n in node.root().subtree_cqs()} if node.parent else {node.name}
        for st in self.states.values():
            if st.cluster_queue in names:
                st.inadmissible = False

    def _requeue_all(self) -> None:
        for st in self.states.values():
            st.inadmissible = False

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
                    return
        self.notes.append(f"the simulation stopped after {MAX_CYCLES} scheduling cycles without settling")

    # ------------------------------------------------------------ one cycle
    def cycle(self) -> None:
        """One scheduling cycle (Kueue's Scheduler.schedule), what its unit tests run;
        `settle` runs them until nothing changes."""
        self._cycle()

    def _order(self, st: State):
        return (not st.sticky, -st.priority, st.created, st.key)

    def _snapshot(self) -> preempt.Snapshot:
        tree = copy.deepcopy(self.tree)
        workloads: dict[str, dict[str, preempt.Info]] = {name: {} for name in tree.cqs}
        for st in self.states.values():
            if st.holds_quota and st.cluster_queue in workloads:
                workloads[st.cluster_queue][st.key] = self._info(st)
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
        last = st.last_tried if st.last_generation == self.generation.get(cq.name, 0) else None
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
        st.last_tried, st.last_generation = a.last_tried, self.generation.get(cq.name, 0)
        return Entry(st, cq, a, targets, a.message())

    def _cycle(self) -> tuple[bool, bool]:
        """One cycle: heads, flavors and targets for each, then admit or preempt in order.
        Returns (progress: something admitted or preempted, moved: a head set aside)."""
        heads = self._heads()
        if not heads:
            return False, False
        snap = self._snapshot()
        entries = [self._nominate(snap, st, cq) for st, cq in heads]
        if self.cluster.config.fair_sharing:
            ordered = self._fair_order(snap, entries)
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
        self._apply(admitted, issued)
        moved = self._requeue(entries, outcome)
        return bool(admitted or issued), moved

    def _heads(self) -> list[tuple[State, ClusterQueue]]:
        """The head of every active ClusterQueue (StrictFIFO: the others wait behind it)."""
        heads: list[tuple[State, ClusterQueue]] = []
        waiting: dict[str, list[State]] = {}
        for st in self.states.values():
            cq = self._classify(st)
            if cq is not None:
                waiting.setdefault(cq.name, []).append(st)
        for name in sorted(waiting):
            cq = self.cluster.cluster_queues[name]
            active = [s for s in waiting[name] if not s.inadmissible]
            if not active:
                continue
            head = min(active, key=self._order)
            if cq.queueing_strategy == "StrictFIFO":
                for s in active:
                    if s is not head:
                        s.status, s.reason = PENDING, f"waiting behind {head.key} (StrictFIFO)"
            heads.append((head, cq))
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
                               f" to {'/'.join(sorted(set(e.a.flavors().values())))}"
                               + (f" with {_counts(e)}" if e.a.counts else "")
                               + (f"; waiting for {', '.join(e.st.waiting_checks)}" if e.st.status == RESERVED else ""))
        for e in issued:
            for t in e.targets:
                victim = self.states.get(t.info.key)
                if victim is None or not victim.holds_quota:
                    continue
                self._evict(victim, e.st, t.reason)
            e.st.sticky = e.cq.queueing_strategy == "BestEffortFIFO"
            e.st.reason = f"preempting {', '.join(t.info.key for t in e.targets)}"

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
                    st.inadmissible = True
                    moved = True
            elif how == "skipped":
                st.status, st.reason = PENDING, e.message
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

    # ------------------------------------------------------------ fair sharing order
    def _fair_order(self, snap: preempt.Snapshot, entries: list[Entry]) -> list[Entry]:
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
            shares = self._tournament_shares(root, left)
            winner = self._tournament(root, left, shares)
            assert winner is not None, "the root has a member with a head"
            out.append(left.pop(winner.cq.name))
        return out

    def _tournament_shares(self, root: quota.Node, left: dict[str, Entry]) -> dict:
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

    def _tournament(self, cohort: quota.Node, left: dict[str, Entry], shares: dict) -> Entry | None:
        cands = [w for w in (self._tournament(c, left, shares) for c in cohort.child_cohorts) if w]
        cands += [left[c.name] for c in cohort.child_cqs if c.name in left]
        if not cands:
            return None
        best = cands[0]
        for cur in cands[1:]:
            if self._fair_less(cur, best, cohort.name, shares):
                best = cur
        return best

    def _fair_less(self, a: Entry, b: Entry, parent: str, shares: dict) -> bool:
        da, db = shares[(parent, a.st.key)], shares[(parent, b.st.key)]
        if "FairSharingPrioritizeNonBorrowing" in self.gates:
            ba, bb = da.borrowing_on(a.a.usage), db.borrowing_on(b.a.usage)
            if ba != bb:
                return not ba
        c = quota.compare_drs(da, db)
        if c:
            return c < 0
        if a.st.priority != b.st.priority:
            return a.st.priority > b.st.priority
        return (a.st.created, a.st.key) < (b.st.created, b.st.key)


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


def _minor(version: str) -> int:
    try:
        return int(version.lstrip("v").split(".")[1])
    except (IndexError, ValueError):
        return 17


# ---------------------------------------------------------------- results
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


STATES = (ADMITTED, RESERVED, "preempted", PENDING, NEVER, UNMANAGED, FINISHED)


def snapshot(sim: Simulator, index: int, title: str, action: str) -> StepResult:
    rows = []
    for st in sim.states.values():
        wl = st.wl
        state, detail = st.status, st.reason
        if st.holds_quota:
            detail = "admitted to " + ", ".join(sorted(set(st.flavors.values())))
            if st.status == RESERVED:
                detail = st.reason + "; " + detail.replace("admitted to", "quota in")
            if st.assignment and st.assignment.counts:
                detail += " (partial admission: " + ", ".join(
                    f"{ps.name} {c} of {ps.count} pods" for ps, c in zip(wl.podsets, st.assignment.counts, strict=True)) + ")"
            if st.placements:
                detail += ": " + _placements(st.placements)
            if st.preempted_by:
                detail = f"preempted by {', '.join(st.preempted_by)}, then re-admitted; {detail}"
            elif st.readmitted:
                detail = "re-admitted; " + detail
        elif st.preempted_by and st.status == PENDING:
            state = "preempted"
            detail = f"by {', '.join(st.preempted_by)}; waiting: {st.reason}" \
                if not st.reason.startswith("preempted by") else f"by {', '.join(st.preempted_by)}"
        notes = list(wl.notes) + _unmodelled(st)
        if notes:
            detail += " (" + "; ".join(notes) + ")"
        rows.append(Row(wl.key, wl.owner[0], st.cluster_queue, wl.priority.value, wl.priority.source, state, detail,
                        {r: str(fmt(r, v)) for r, v in sorted(wl.demand.items())}, dict(sorted(st.flavors.items()))))
    rows.sort(key=lambda r: (STATES.index(r.state), -r.priority, _natural(r.workload)))
    cubes = []
    for flavor, res in sorted(sim.reservations.items()):
        per = []
        for i in range(res.n_cubes):
            holders = tuple(sorted({h for h in res.holders() for p in res.placements(h) if i in p.cubes}))
            per.append((res.used(i), res.cube_chips, holders))
        cubes.append(Cubes(flavor, tuple(per)))
    return StepResult(index, title, action, tuple(sim.events), tuple(rows), tuple(usage_rows(sim)), tuple(cubes))


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
    tree = sim.tree
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

    @property
    def failures(self) -> list[str]:
        return [f"step {s.index} ({s.title}): {f}" for s in self.steps for f in s.failures]


def run(cluster: model.Cluster, scenario, cubes: int | None = None, kueue_version: str = "v0.17.4") -> Plan:
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
    return Plan(cluster.source, scenario.source, scenario.description, tuple(dict.fromkeys(notes)), tuple(steps))


def _checked(sim: Simulator, index: int, title: str, action: str, expect) -> StepResult:
    result = snapshot(sim, index, title, action)
    if expect is None:
        return result
    from dataclasses import replace
    return replace(result, failures=tuple(expect.check(result)))
