"""The scheduler's cache: the quota each ClusterQueue and Cohort has and uses, the Workloads
holding quota as the scheduler sees them, and the per-cycle snapshot of it all (Kueue v0.17.4
pkg/cache/scheduler: cache.go, clusterqueue.go, snapshot.go). TPU reservations (tpusetup.py)
are the part of the cache that holds slices instead of quantities.

Admitted Workloads are indexed per ClusterQueue (preempt.Info) and per (ClusterQueue, flavor,
resource) in preemption candidate order, kept as Workloads come and go, so a cycle reads them
without rebuilding them."""
from __future__ import annotations

import bisect
from types import SimpleNamespace

from ..kernel import supply
from . import assign, nodes, preempt, quota, tas, tasassign, tpusetup
from .overlay import ClusterQueue
from .state import PENDING, RESERVED, State
from .store import Store


class Cache:
    def __init__(self, store: Store, cubes: int | None, cubes_source: str):
        self.store = store
        self.reservations = tpusetup.reservations(store.cluster, cubes, cubes_source, store.notes)
        self.static = tpusetup.static_pools(store.cluster, self.reservations, store.notes)
        self.tree = quota.Tree(store.cluster)
        self.infos: dict[str, dict[str, preempt.Info]] = {}
        self.ranked: dict[tuple, list[tuple]] = {}       # (cq, flavor, resource) -> preempt.rank of its admitted, sorted
        self.generation: dict[str, int] = {}             # ClusterQueue -> bumped when its quota or usage changes
        # Topology-aware flavors: their domain trees (tas_cache.go), shared by every ClusterQueue
        # using them, and the TAS usage per leaf of the Workloads holding quota.
        self.tas = nodes.snapshots(store.cluster, store.cluster.nodes, store.notes, store.rules)
        self.tas_usage: dict[str, dict[str, dict]] = {}

    def rebuild(self) -> None:
        """After a change to queues, cohorts or quotas: the quota tree anew, with the quota
        Workloads hold."""
        self.tree = quota.Tree(self.store.cluster)
        self.tas = nodes.snapshots(self.store.cluster, self.store.cluster.nodes, [], self.store.rules)
        for st in self.store.states.values():
            if st.holds_quota and st.cluster_queue in self.tree.cqs:
                quota.add(self.tree.cqs[st.cluster_queue], st.usage)
        for name in self.store.cluster.cluster_queues:
            self.generation[name] = self.generation.get(name, 0) + 1

    def assume(self, st: State, cq: ClusterQueue, a: assign.Assignment, placements: list) -> None:
        """The Workload reserves its assignment's quota (cache.AssumeWorkload)."""
        st.assignment, st.usage = a, dict(a.usage)
        st.placements = placements
        st.tas = self._tas_usage(st, cq, a)
        # waitForPodsReady: the pods of a Workload admitted now start during the step
        st.pods_ready = not self.store.cluster.config.wait_for_pods_ready
        self._tas_change(st.tas, 1)
        quota.add(self.tree.cqs[cq.name], st.usage)
        st.admitted_at = self.store.tick()
        st.cluster_queue = cq.name
        st.status = RESERVED
        st.inadmissible = st.sticky = False
        st.last_tried = None
        self.index(st)

    def forget(self, st: State) -> None:
        """The Workload's quota and slices go back (cache.DeleteWorkload); it is pending again."""
        self.unindex(st)
        if st.cluster_queue in self.tree.cqs:
            quota.remove(self.tree.cqs[st.cluster_queue], st.usage)
            self.generation[st.cluster_queue] = self.generation.get(st.cluster_queue, 0) + 1
        for res in self.reservations.values():
            res.release(st.key)
        self._tas_change(st.tas, -1)
        st.tas = ()
        st.usage, st.placements, st.admitted_at, st.assignment = {}, [], None, None
        st.status = PENDING

    def index(self, st: State) -> None:
        """The admitted Workload as the scheduler's snapshot holds it, in its queue's candidate order."""
        info = self.info(st)
        self.infos.setdefault(info.cq, {})[info.key] = info
        for fr in info.frs:
            bisect.insort(self.ranked.setdefault((info.cq, *fr), []), preempt.rank(info))

    def unindex(self, st: State) -> None:
        info = self.infos.get(st.cluster_queue or "", {}).pop(st.key, None)
        if info is not None:
            for fr in info.frs:
                ranked = self.ranked[(info.cq, *fr)]
                i = bisect.bisect_left(ranked, preempt.rank(info))
                if i < len(ranked) and ranked[i] == preempt.rank(info):
                    del ranked[i]

    @staticmethod
    def info(st: State) -> preempt.Info:
        frs = frozenset((c.flavor, r) for ps in (st.assignment.podsets if st.assignment else ())
                        for r, c in ps.flavors.items())
        return preempt.Info(st.key, st.cluster_queue or "", st.priority, st.created, st.admitted_at or 0,
                            dict(st.usage), frs, False, st.tas)

    def snapshot(self) -> preempt.Snapshot:
        """One cycle's view (cache.Snapshot): its own usage and slices, the live admitted indexes."""
        tree = _clone(self.tree)
        # The live per-queue dicts: every removal a trial makes is undone before the cycle ends
        # (restore), so nothing is copied.
        workloads = {name: self.infos.setdefault(name, {}) for name in tree.cqs}
        reservations = {f: r.copy() for f, r in self.reservations.items()}
        policies = {name: cq.preemption for name, cq in self.store.cluster.cluster_queues.items()}

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
        snap.tas, snap.tas_base = self.tas, self.tas_usage
        return snap

    def _tas_usage(self, st: State, cq: ClusterQueue, a: assign.Assignment) -> tuple:
        """(flavor, {leaf: requests}) of each TAS pod set: its topology assignment, or, for a
        Workload admitted before the plan (its recorded flavors, no domains), where Kueue's
        placement puts it now."""
        if not a.topology and self.tas:
            a.topology = self._recorded(st, cq, a)
        placed = a.topology
        return tuple((p.flavor, tas.usage_of(self.tas[p.flavor], p.request, p.assignment))
                     for p in placed if p.flavor in self.tas) + self._plain_usage(st, a)

    def _plain_usage(self, st: State, a: assign.Assignment) -> tuple:
        """Pods of pod sets Kueue does not place (no TAS flavor) that the kube-scheduler may put
        on a TAS flavor's nodes: they take room there too (tas_non_tas_pod_cache.go)."""
        if not self.tas:
            return ()
        placed = {p.index for p in a.topology}
        out: list = []
        for i, psa in enumerate(a.podsets):
            names = sorted({c.flavor for c in psa.flavors.values()})
            if i not in placed and psa.count and names and not any(n in self.tas for n in names):
                out += self._plain_pod_set(st.wl.podsets[i], psa.count, names)
        return tuple(out)

    def _plain_pod_set(self, ps, count: int, names: list[str]) -> list:
        """One such pod set: its flavors' node labels and tolerations, on each TAS flavor's nodes."""
        rfs = [self.store.cluster.flavors[n] for n in names if n in self.store.cluster.flavors]
        labels = {k: v for rf in rfs for k, v in rf.node_labels.items()}
        tolerations = supply.tolerations(ps.spec) + tuple(t for rf in rfs for t in rf.tolerations)
        single = {r: v for r, v in ps.requests.items() if r != tas.PODS}
        out = []
        for name, snap in sorted(self.tas.items()):
            leaves = snap.plain_leaves(labels, tolerations, ps.spec)
            got = snap.place_plain(leaves, single, count, self._used(name)) if leaves else {}
            if got:
                out.append((name, got))
        return out

    def _recorded(self, st: State, cq: ClusterQueue, a: assign.Assignment) -> list:
        """A Workload admitted before the plan: its recorded topology assignments, and where
        Kueue's placement puts the pod sets that have none."""
        view = SimpleNamespace(cq=cq, flavors=self.store.cluster.flavors, tas=self.tas, tas_used=self._used)
        reqs, _ = tasassign.requests(view, st.wl, a)
        recorded = st.wl.preadmitted.topology if st.wl.preadmitted else ()

        def has(i: int) -> bool:
            return i < len(recorded) and recorded[i] is not None
        placed = [tasassign.Placed(i, f, r, tas.Assignment(*recorded[i]))
                  for f, items in reqs.items() for i, r in items if has(i)]
        rest = {f: [(i, r) for i, r in items if not has(i)] for f, items in reqs.items()}
        more, _ = tasassign.find(view, {f: x for f, x in rest.items() if x})
        return placed + more

    def _used(self, flavor: str):
        usage = self.tas_usage.get(flavor, {})
        return lambda leaf: usage.get(leaf.id, {})

    def _tas_change(self, usage: tuple, sign: int) -> None:
        for flavor, leaves in usage:
            per_leaf = self.tas_usage.setdefault(flavor, {})
            for leaf, req in leaves.items():
                d = per_leaf.setdefault(leaf, {})
                for r, v in req.items():
                    d[r] = d.get(r, 0) + sign * v

    def restore(self, snap: preempt.Snapshot) -> None:
        """The snapshot shares the per-queue dicts of admitted Workloads: put back any a trial
        left removed (none should be)."""
        for key in list(snap.removed):
            st = self.store.states.get(key)
            if st is not None and st.holds_quota and st.cluster_queue:
                self.infos.setdefault(st.cluster_queue, {})[key] = self.info(st)    # still ranked


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
