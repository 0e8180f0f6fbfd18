"""Kueue's admission and preemption, replayed offline.

The rules, as Kueue documents and implements them (pinned v0.17):
- Each ClusterQueue orders its pending Workloads by priority, then creation
  time. BestEffortFIFO (the CRD default) lets a Workload that does not fit
  step aside; StrictFIFO makes it block everything behind it.
- A Workload is admitted only whole: for every resource group, a flavor in
  which every requested resource fits under nominal quota (flavors tried in
  order; the first that fits wins, else the first where preemption could help:
  flavorFungibility whenCanPreempt: TryNextFlavor). Cohort borrowing is not
  simulated.
- Preemption (withinClusterQueue LowerPriority / LowerOrNewerEqualPriority):
  candidates are admitted Workloads of the same ClusterQueue with lower
  priority (or equal and newer) that use a resource the preemptor lacks,
  ordered lowest priority first, then most recently admitted first. They are
  removed one by one until the preemptor fits, then added back in reverse
  order wherever the preemptor still fits without removing them. If even
  removing all of them is not enough, nobody is preempted.
- Preempted Workloads go back to the queue with their creation time, except
  plain pods (Deployments): their pod is deleted and the ReplicaSet makes a
  new one, which queues as new.
- TPU flavors checked by the slice controller (AdmissionCheck
  accelerator.gke.io/slice on a ResourceFlavor with a topologyName) must also
  find room for every slice in the reservation (see packer.py); preemption
  counts the room victims free as well as their quota.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from decimal import Decimal

from .. import facts
from ..labels import selector_matches
from ..errors import Problem, SpecError
from ..quantity import fmt
from . import model, packer
from .model import SLICE_CONTROLLER, UNLIMITED, ClusterQueue, Owner, Workload

ADMITTED, PENDING, NEVER, UNMANAGED = "admitted", "pending", "never", "unmanaged"
MAX_CYCLES = 20_000   # each cycle admits one Workload; far more than any scenario needs


@dataclass
class State:
    wl: Workload
    created: int
    status: str = PENDING
    reason: str = ""
    flavors: dict[str, str] = field(default_factory=dict)       # resource -> flavor, while admitted
    admitted_at: int | None = None
    placements: list[packer.Placement] = field(default_factory=list)
    cluster_queue: str | None = None
    preempted_by: list[str] = field(default_factory=list)       # during the current step
    evicted: bool = False                                       # preempted and not yet back
    readmitted: bool = False                                    # came back during the current step

    @property
    def key(self) -> str:
        return self.wl.key

    @property
    def priority(self) -> int:
        return self.wl.priority.value


@dataclass
class Attempt:
    mode: str                                   # fit | preempt | nofit
    flavors: dict[str, str]                     # resource -> flavor
    short: list[str]                            # what does not fit now
    never: list[str]                            # why it never can
    contended: set[tuple[str, str]]             # (flavor, resource) that need preemption
    shapes: dict[str, list[packer.Shape]]       # flavor -> slices


class Simulator:
    def __init__(self, cluster: model.Cluster, cubes: int | None = None, cubes_source: str = "--cubes"):
        self.cluster = copy.deepcopy(cluster)
        self.clock = 0
        self.states: dict[str, State] = {}
        self.live: dict[tuple, Owner] = {}
        self.next_index: dict[tuple, int] = {}
        self.events: list[str] = []
        self.notes: list[str] = list(cluster.notes)
        self.reservations = self._reservations(cubes, cubes_source)

    # ------------------------------------------------------------ setup
    def _reservations(self, cubes: int | None, cubes_source: str) -> dict[str, packer.Reservation]:
        out: dict[str, packer.Reservation] = {}
        problems = []
        for cq in sorted(self.cluster.cluster_queues.values(), key=lambda q: q.name):
            if not any(self.cluster.admission_checks.get(a) == SLICE_CONTROLLER for a in cq.admission_checks):
                continue
            for group in cq.groups:
                for fq in group.flavors:
                    rf = self.cluster.flavors.get(fq.flavor)
                    tpu = rf.tpu_type() if rf and rf.topology in self.cluster.topologies else None
                    if tpu is None or fq.flavor in out:
                        continue
                    resource = facts.ACCELERATORS[tpu.accelerator].resource
                    per_cube = packer.chips(tpu.cube)
                    quota = fq.nominal.get(resource)
                    if cubes is not None:
                        n = cubes
                        self.notes.append(f"flavor {fq.flavor}: reservation of {_cubes(n)} ({cubes_source})")
                    elif quota is None or quota >= UNLIMITED:
                        problems.append(Problem(
                            f"ClusterQueue/{cq.name}.flavors.{fq.flavor}.{resource}",
                            f"nominalQuota is {'missing' if quota is None else fmt(resource, quota)} (unlimited), so the "
                            f"reservation's size is unknown: pass --cubes N or set `cubes` in the scenario"))
                        continue
                    else:
                        n = int(quota // per_cube)
                        self.notes.append(f"flavor {fq.flavor}: reservation of {_cubes(n)} "
                                          f"({fmt(resource, quota)} {resource} / {per_cube} chips per cube)")
                        if quota % per_cube:
                            self.notes.append(f"flavor {fq.flavor}: {resource} quota {fmt(resource, quota)} is not "
                                              f"whole cubes; {quota % per_cube} chips cannot form slices")
                    out[fq.flavor] = packer.Reservation(tpu, n, self.cluster.topologies[rf.topology],
                                                        f"Topology {rf.topology}")
        if problems:
            raise SpecError(self.cluster.source, problems)
        if cubes is not None and not out:
            self.notes.append(f"{cubes_source} ignored: no TPU flavor with slice admission in this overlay")
        return out

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
        self.live.pop(ref)

    def set_quota(self, cq_name: str, flavor: str, resource: str, value: Decimal) -> None:
        cq = self.cluster.cluster_queues[cq_name]
        for group in cq.groups:
            for fq in group.flavors:
                if fq.flavor == flavor and resource in fq.nominal:
                    old = fq.nominal[resource]
                    fq.nominal[resource] = value
                    self.events.append(f"ClusterQueue {cq_name}: {resource} in {flavor} "
                                       f"{fmt(resource, old)} -> {fmt(resource, value)}")
        used = self.usage(cq).get((flavor, resource), Decimal(0))
        if used > value:
            # Kueue never evicts for a quota cut; admitted Workloads keep running.
            self.events.append(f"ClusterQueue {cq_name}: {fmt(resource, used)} {resource} already admitted in "
                               f"{flavor} stays over the new quota until it finishes")

    def begin_step(self) -> None:
        self.events = []
        for st in self.states.values():
            st.preempted_by = []
            st.readmitted = False

    # ------------------------------------------------------------ workloads
    def _create(self, owner: Owner) -> State:
        index = None
        if owner.kind in model.SCALABLE_KINDS:
            # Replicas are numbered in creation order (pods have random names).
            index = self.next_index.get(owner.ref, 0) + 1
            self.next_index[owner.ref] = index
        wl = model.workloads_of(self.cluster, owner, index)
        self.clock += 1
        st = State(wl, created=self.clock)
        self.states[wl.key] = st
        self.events.append(f"{wl.key} created")
        self._classify(st)
        return st

    def _units(self, ref: tuple) -> list[State]:
        return [s for s in self.states.values() if s.wl.owner == ref]

    def _scale_down_order(self, owner: Owner, units: list[State]) -> list[State]:
        if owner.kind == "LeaderWorkerSet":
            # Groups are StatefulSet ordinals: the highest goes first.
            return sorted(units, key=lambda s: -int(s.key.rsplit("#", 1)[1]))
        # ReplicaSet: pods not yet running (gated by Kueue) first, then the newest.
        return sorted(units, key=lambda s: (s.status == ADMITTED, -s.created))

    def _remove(self, st: State, why: str) -> None:
        if st.status == ADMITTED:
            self._release(st)
        del self.states[st.key]
        self.events.append(f"{st.key} {why}" + (", freeing its quota" if st.status == ADMITTED else ""))

    def _release(self, st: State) -> None:
        for flavor in set(st.flavors.values()):
            if flavor in self.reservations:
                self.reservations[flavor].release(st.key)
        st.flavors, st.placements, st.admitted_at = {}, [], None

    # ------------------------------------------------------------ queues
    def _classify(self, st: State) -> ClusterQueue | None:
        """The ClusterQueue the Workload waits in, or None with the reason set."""
        wl, c = st.wl, self.cluster
        if st.status == ADMITTED:
            return c.cluster_queues[st.cluster_queue]
        if wl.queue is None:
            st.status, st.reason = UNMANAGED, "no kueue.x-k8s.io/queue-name label: Kueue does not manage it"
            return None
        never = list(wl.problems)
        cq_name = c.local_queues.get((wl.namespace, wl.queue))
        cq = c.cluster_queues.get(cq_name) if cq_name else None
        if cq_name is None:
            never.append(f"LocalQueue {wl.namespace}/{wl.queue} does not exist")
        elif cq is None:
            never.append(f"ClusterQueue {cq_name} (of LocalQueue {wl.namespace}/{wl.queue}) does not exist")
        else:
            if not selector_matches(cq.namespace_selector, model.namespace_labels(c, wl.namespace)):
                never.append(f"namespace {wl.namespace} is not selected by ClusterQueue {cq.name}'s namespaceSelector")
            for ac in cq.admission_checks:
                if ac not in c.admission_checks:
                    never.append(f"ClusterQueue {cq.name} is inactive: AdmissionCheck {ac} does not exist")
            for g in cq.groups:
                for fq in g.flavors:
                    rf = c.flavors.get(fq.flavor)
                    if rf is None:
                        never.append(f"ClusterQueue {cq.name} is inactive: ResourceFlavor {fq.flavor} does not exist")
                    elif rf.topology and rf.topology not in c.topologies:
                        never.append(f"ClusterQueue {cq.name} is inactive: ResourceFlavor {fq.flavor} names "
                                     f"Topology {rf.topology}, which does not exist")
        st.cluster_queue = cq.name if cq else None
        if never:
            st.status, st.reason = NEVER, "; ".join(dict.fromkeys(never))
            return None
        if st.status not in (PENDING, NEVER):
            st.status = PENDING
        return cq

    def usage(self, cq: ClusterQueue, without: tuple[str, ...] = ()) -> dict[tuple[str, str], Decimal]:
        out: dict[tuple[str, str], Decimal] = {}
        for st in self.states.values():
            if st.status != ADMITTED or st.cluster_queue != cq.name or st.key in without:
                continue
            for r, v in st.wl.demand.items():
                k = (st.flavors[r], r)
                out[k] = out.get(k, Decimal(0)) + v
        return out

    def settle(self) -> None:
        """Run scheduling cycles until nothing changes."""
        for _ in range(MAX_CYCLES):
            if not self._cycle():
                return
        raise RuntimeError("the simulation did not settle; please report this scenario")

    def _cycle(self) -> bool:
        queues: dict[str, list[State]] = {}
        for st in self.states.values():
            if st.status == ADMITTED:
                continue
            cq = self._classify(st)
            if cq is not None:
                queues.setdefault(cq.name, []).append(st)
        for name in sorted(queues):
            cq = self.cluster.cluster_queues[name]
            blocker = None
            for st in sorted(queues[name], key=lambda s: (-s.priority, s.created, s.key)):
                if blocker:
                    st.status, st.reason = PENDING, f"waiting behind {blocker} (StrictFIFO)"
                    continue
                if self._try(st, cq):
                    return True
                if cq.queueing_strategy == "StrictFIFO":
                    blocker = st.key
        return False

    def _try(self, st: State, cq: ClusterQueue) -> bool:
        if cq.stop_policy not in (None, "None"):
            st.status, st.reason = PENDING, f"ClusterQueue {cq.name} is stopped (stopPolicy: {cq.stop_policy})"
            return False
        a = self._assign(st.wl, cq, self.usage(cq), self.reservations)
        if a.mode == "nofit":
            st.status, st.reason = NEVER, "; ".join(a.never)
            return False
        if a.mode == "fit":
            self._admit(st, cq, a)
            return True
        victims, why = self._victims(st, cq, a)
        if not victims:
            st.status, st.reason = PENDING, "; ".join(a.short) + f"; {why}"
            return False
        for v in victims:
            self._release(v)
            v.status = PENDING
            v.reason = f"preempted by {st.key}"
            v.preempted_by.append(st.key)
            v.evicted = True
            self.events.append(f"{v.key} preempted by {st.key} (priority {v.priority} < {st.priority})"
                               if v.priority < st.priority else
                               f"{v.key} preempted by {st.key} (same priority, newer)")
            if v.wl.owner[0] in ("Deployment", "Pod"):
                # The pod is deleted; its ReplicaSet makes a new one that queues as new.
                self.clock += 1
                v.created = self.clock
        self._admit(st, cq, a)
        return True

    def _admit(self, st: State, cq: ClusterQueue, a: Attempt) -> None:
        placements = []
        for flavor, shapes in sorted(a.shapes.items()):
            placed = self.reservations[flavor].place(st.key, shapes)
            assert placed is not None, "a fitting workload must place"
            placements += placed
        self.clock += 1
        again, st.evicted = st.evicted, False
        st.status, st.flavors, st.admitted_at = ADMITTED, dict(a.flavors), self.clock
        st.placements, st.cluster_queue = placements, cq.name
        st.reason = ""
        st.readmitted = again
        self.events.append(f"{st.key} {'re-admitted' if again else 'admitted'}"
                           f" to {'/'.join(sorted(set(a.flavors.values())))}")

    # ------------------------------------------------------------ flavor assignment
    def _assign(self, wl: Workload, cq: ClusterQueue, usage: dict, reservations: dict) -> Attempt:
        demand = wl.demand
        never, short = [], []
        chosen: dict[str, str] = {}
        contended: set[tuple[str, str]] = set()
        shapes: dict[str, list[packer.Shape]] = {}
        mode = "fit"
        for r in sorted(demand):
            if cq.group_of(r) is None:
                never.append(f"requests {fmt(r, demand[r])} {r}, which ClusterQueue {cq.name} does not cover "
                             f"(covered: {', '.join(cq.covered())})")
        for group in cq.groups:
            req = {r: demand[r] for r in group.covered if r in demand}
            if not req:
                continue
            options = []
            for fq in group.flavors:
                options.append(self._try_flavor(wl, cq, fq, req, usage, reservations))
            best = (next((o for o in options if o[0] == "fit"), None)
                    or next((o for o in options if o[0] == "preempt"), None))
            if best is None:
                for _, fq, msgs, _, _ in options:
                    never += msgs
                mode = "nofit"
                continue
            m, fq, msgs, cont, sl = best
            chosen.update({r: fq.flavor for r in req})
            if sl is not None:
                shapes[fq.flavor] = sl
            if m == "preempt":
                mode = "preempt" if mode == "fit" else mode
                short += msgs
                contended |= cont
        if never:
            mode = "nofit"
        return Attempt(mode, chosen, short, never, contended, shapes)

    def _try_flavor(self, wl, cq, fq, req, usage, reservations):
        rf = self.cluster.flavors[fq.flavor]
        mismatch = _flavor_mismatch(wl, rf)
        if mismatch:
            return ("nofit", fq, [f"flavor {fq.flavor}: {mismatch}"], set(), None)
        m, msgs, cont = "fit", [], set()
        for r, v in req.items():
            nominal = fq.nominal.get(r)
            if nominal is None:
                return ("nofit", fq, [f"flavor {fq.flavor} has no quota for {r}"], set(), None)
            used = usage.get((fq.flavor, r), Decimal(0))
            if used + v <= nominal:
                continue
            if v > nominal:
                return ("nofit", fq, [
                    f"requests {fmt(r, v)} {r}, more than ClusterQueue {cq.name}'s nominal quota "
                    f"{fmt(r, nominal)} in {fq.flavor}: short by {fmt(r, v - nominal)}"], set(), None)
            m = "preempt"
            cont.add((fq.flavor, r))
            msgs.append(f"insufficient {r}: requests {fmt(r, v)}, {fmt(r, max(nominal - used, Decimal(0)))} "
                        f"of {fmt(r, nominal)} free in {fq.flavor}")
        shapes = None
        res = reservations.get(fq.flavor)
        if res is not None:
            shapes, problems = wl.slices(res.tpu)
            if problems:
                return ("nofit", fq, problems, set(), None)
            try:
                if not res.fits_empty(shapes):
                    return ("nofit", fq, [f"its slices ({_shapes(shapes)}) do not fit in the reservation of "
                                          f"{_cubes(res.n_cubes)} even when it is empty"],
                            set(), None)
            except packer.ShapeError as e:
                return ("nofit", fq, [str(e)], set(), None)
            if not res.fits(shapes):
                m = "preempt"
                cont.add((fq.flavor, facts.ACCELERATORS[res.tpu.accelerator].resource))
                msgs.append(f"no room for {_shapes(shapes)} in {fq.flavor} "
                            f"({res.free_cubes()} of {res.n_cubes} cubes empty)")
        return (m, fq, msgs, cont, shapes)

    # ------------------------------------------------------------ preemption
    def _victims(self, st: State, cq: ClusterQueue, a: Attempt) -> tuple[list[State], str]:
        policy = cq.within_cluster_queue
        if policy not in ("LowerPriority", "LowerOrNewerEqualPriority"):
            return [], f"preemption is off (withinClusterQueue: {policy})"
        cands = []
        for o in self.states.values():
            if o.status != ADMITTED or o.cluster_queue != cq.name:
                continue
            lower = o.priority < st.priority
            newer_equal = (policy == "LowerOrNewerEqualPriority" and o.priority == st.priority
                           and st.created < o.created)
            if not (lower or newer_equal):
                continue
            if not any((o.flavors.get(r), r) in a.contended for r in o.wl.demand):
                continue
            cands.append(o)
        if not cands:
            return [], "no lower-priority workload to preempt"
        # Kueue's CandidatesOrdering: lowest priority first, then most recently admitted.
        cands.sort(key=lambda o: (o.priority, -o.admitted_at, o.key))
        removed: list[State] = []
        for c in cands:
            removed.append(c)
            if self._fits_without(st, cq, a, removed):
                break
        else:
            return [], (f"preempting every lower-priority workload ({len(cands)}) would still not make room")
        # Add back, in reverse order, those the preemptor does not need gone.
        for i in range(len(removed) - 2, -1, -1):
            trial = removed[:i] + removed[i + 1:]
            if self._fits_without(st, cq, a, trial):
                removed = trial
        return removed, ""

    def _fits_without(self, st: State, cq: ClusterQueue, a: Attempt, removed: list[State]) -> bool:
        gone = tuple(v.key for v in removed)
        usage = self.usage(cq, without=gone)
        for r, flavor in a.flavors.items():
            if usage.get((flavor, r), Decimal(0)) + st.wl.demand[r] > cq.quota(flavor, r):
                return False
        for flavor, shapes in a.shapes.items():
            res = self.reservations[flavor].copy()
            for k in gone:
                res.release(k)
            if not res.fits(shapes):
                return False
        return True


def _flavor_mismatch(wl: Workload, rf: model.ResourceFlavor) -> str | None:
    """Kueue skips a flavor whose nodeLabels contradict the pods' nodeSelector,
    or whose nodeTaints the pods do not tolerate."""
    for ps in wl.podsets:
        for k, v in ps.node_selector.items():
            if k in rf.node_labels and rf.node_labels[k] != v:
                return f"pods select {k}={v}, the flavor's nodes have {k}={rf.node_labels[k]}"
        for taint in rf.node_taints:
            if not any(_tolerates(t, taint) for t in ps.tolerations):
                return f"pods do not tolerate the flavor's taint {taint.get('key')}:{taint.get('effect')}"
    return None


def _tolerates(t: dict, taint: dict) -> bool:
    if t.get("effect") and t["effect"] != taint.get("effect"):
        return False
    if t.get("operator") == "Exists":
        return not t.get("key") or t["key"] == taint.get("key")
    return t.get("key") == taint.get("key") and t.get("value") == taint.get("value")


def _cubes(n: int) -> str:
    return f"{n} cube{'s' if n != 1 else ''}"


def _shapes(shapes: list[packer.Shape]) -> str:
    counts: dict[packer.Shape, int] = {}
    for s in shapes:
        counts[s] = counts.get(s, 0) + 1
    return ", ".join(f"{n} slices of {packer.fmt_shape(s)}" if n > 1 else f"1 slice of {packer.fmt_shape(s)}"
                     for s, n in sorted(counts.items(), key=lambda kv: -packer.chips(kv[0])))


# ---------------------------------------------------------------- results
@dataclass(frozen=True)
class Row:
    workload: str
    kind: str
    cluster_queue: str | None
    priority: int
    priority_source: str
    state: str                     # admitted | pending | preempted | never | unmanaged
    detail: str
    demand: dict[str, str]
    flavors: dict[str, str]


@dataclass(frozen=True)
class Usage:
    cluster_queue: str
    flavor: str
    resource: str
    used: Decimal
    nominal: Decimal


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


STATES = (ADMITTED, "preempted", PENDING, NEVER, UNMANAGED)


def snapshot(sim: Simulator, index: int, title: str, action: str) -> StepResult:
    rows = []
    for st in sim.states.values():
        wl = st.wl
        state, detail = st.status, st.reason
        if st.status == ADMITTED:
            detail = "admitted to " + ", ".join(sorted(set(st.flavors.values())))
            if st.placements:
                detail += ": " + _placements(st.placements)
            if st.preempted_by:
                detail = f"preempted by {', '.join(st.preempted_by)}, then re-admitted; {detail}"
            elif st.readmitted:
                detail = "re-admitted; " + detail
        elif st.preempted_by:
            state = "preempted"
            detail = f"by {', '.join(st.preempted_by)}; waiting: {st.reason}" \
                if not st.reason.startswith("preempted by") else f"by {', '.join(st.preempted_by)}"
        elif st.status == NEVER:
            detail = "can never be admitted: " + st.reason
        if wl.notes:
            detail += " (" + "; ".join(wl.notes) + ")"
        rows.append(Row(wl.key, wl.owner[0], st.cluster_queue, wl.priority.value, wl.priority.source, state, detail,
                        {r: str(fmt(r, v)) for r, v in sorted(wl.demand.items())}, dict(sorted(st.flavors.items()))))
    rows.sort(key=lambda r: (STATES.index(r.state), -r.priority, r.workload))
    usage = []
    for cq in sorted(sim.cluster.cluster_queues.values(), key=lambda q: q.name):
        used = sim.usage(cq)
        for g in cq.groups:
            for fq in g.flavors:
                for r in g.covered:
                    if r in fq.nominal:
                        usage.append(Usage(cq.name, fq.flavor, r, used.get((fq.flavor, r), Decimal(0)), fq.nominal[r]))
    cubes = []
    for flavor, res in sorted(sim.reservations.items()):
        per = []
        for i in range(res.n_cubes):
            holders = tuple(sorted({h for h in res.holders() for p in res.placements(h) if i in p.cubes}))
            per.append((res.used(i), res.cube_chips, holders))
        cubes.append(Cubes(flavor, tuple(per)))
    return StepResult(index, title, action, tuple(sim.events), tuple(rows), tuple(usage), tuple(cubes))


def _placements(placements: list[packer.Placement]) -> str:
    groups: dict[tuple, int] = {}
    for p in placements:
        k = (p.shape, p.cubes if p.origin is None else (p.cubes[0],), p.origin is None)
        groups[k] = groups.get(k, 0) + 1
    parts = []
    for (shape, cubes, whole), n in sorted(groups.items(), key=lambda kv: (-packer.chips(kv[0][0]), kv[0][1])):
        where = ("cubes " if len(cubes) > 1 else "cube ") + ",".join(map(str, cubes))
        parts.append(f"{n} slice{'s' if n > 1 else ''} {packer.fmt_shape(shape)} ({where})")
    return "; ".join(parts)


@dataclass(frozen=True)
class Plan:
    source: str
    scenario: str | None
    description: str
    notes: tuple[str, ...]
    steps: tuple[StepResult, ...]


def run(cluster: model.Cluster, scenario, cubes: int | None = None) -> Plan:
    """Replay a scenario (see scenario.py) and return the state after each step."""
    from . import scenario as scen
    n, source = (cubes, "--cubes") if cubes is not None else (scenario.cubes, "scenario `cubes`")
    sim = Simulator(cluster, n, source)
    sim.begin_step()
    for owner in scenario.initial:
        sim.submit(copy.deepcopy(owner))
    sim.settle()
    what = f"apply {len(scenario.initial)} workload object{'s' if len(scenario.initial) != 1 else ''} of the overlay"
    steps = [snapshot(sim, 0, "apply the overlay", what)]
    for i, step in enumerate(scenario.steps, start=1):
        sim.begin_step()
        a = step.action
        if isinstance(a, scen.Scale):
            sim.scale(a.ref, a.replicas)
        elif isinstance(a, scen.Submit):
            sim.submit(copy.deepcopy(a.owner))
        elif isinstance(a, scen.Delete):
            sim.delete(a.ref)
        else:
            sim.set_quota(a.cluster_queue, a.flavor, a.resource, a.value)
        sim.settle()
        steps.append(snapshot(sim, i, step.title, step.describe()))
    return Plan(cluster.source, scenario.source, scenario.description, tuple(sim.notes), tuple(steps))
