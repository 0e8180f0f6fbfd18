"""The queue manager: which ClusterQueue each pending Workload waits in, or why it waits in none
(its LocalQueue or ClusterQueue missing, stopped or inactive), the pending heaps (queues.py),
the inadmissible sets and when they are requeued (Kueue v0.17.4 pkg/cache/queue: manager.go,
cluster_queue.go).

Workloads that changed are classified again at the next cycle (touch); a change to queue
objects classifies all of them again (requeue_all). Freed quota sends the inadmissible
Workloads of the cohort back to their heaps (requeue_cohort, Kueue's
QueueInadmissibleWorkloads)."""
from __future__ import annotations

from typing import cast

from ..kernel.labelmatch import selector_matches
from . import overlay, queues
from .cache import Cache
from .overlay import ClusterQueue, Workload
from .state import FINISHED, NEVER, PENDING, UNMANAGED, State
from .store import Store


class QueueManager:
    def __init__(self, store: Store, cache: Cache):
        self.store, self.cache = store, cache
        self.pending: dict[str, queues.PendingQueue] = {}   # ClusterQueue -> its pending Workloads
        self.queued: dict[str, str] = {}                    # Workload key -> the queue it waits in
        self.touched: set[str] = set()                      # Workloads to classify again
        self.epoch, self.synced_epoch = 0, -1               # queue objects changed: classify all again
        self.last_heads: list[tuple[State, ClusterQueue]] = []

    def touch(self, key: str) -> None:
        self.touched.add(key)

    def requeue_cohort(self, cq_name: str | None) -> None:
        """Quota freed in the ClusterQueue: the inadmissible Workloads of its cohort try again."""
        node = self.cache.tree.cqs.get(cq_name or "")
        if node is None:
            return
        names = {n.name for n in node.root().subtree_cqs()} if node.parent else {node.name}
        for name in sorted(names):
            q = self.pending.get(name)
            if q is not None:
                q.reactivate()

    def requeue_all(self) -> None:
        for st in self.store.states.values():
            st.inadmissible = False
        self.epoch += 1

    def sync(self) -> None:
        """Classify the Workloads that changed (all of them after a change to queue objects)
        into the pending queues."""
        if self.synced_epoch != self.epoch:
            self.pending, self.queued = {}, {}
            self.touched = set(self.store.states)
            self.synced_epoch = self.epoch
        for key in self.touched:
            old = self.queued.pop(key, None)
            if old is not None and old in self.pending:
                self.pending[old].discard(key)
            st = self.store.states.get(key)
            cq = self.classify(st) if st is not None else None
            if st is not None and cq is not None:
                self.pending.setdefault(cq.name, queues.PendingQueue(cq.name)).add(st)
                self.queued[key] = cq.name
        self.touched.clear()

    def heads(self) -> list[tuple[State, ClusterQueue]]:
        """The head of every active ClusterQueue (StrictFIFO: the others wait behind it)."""
        self.sync()
        heads: list[tuple[State, ClusterQueue]] = []
        for name in sorted(self.pending):
            head = self.pending[name].head()
            if head is not None:
                heads.append((head, self.store.cluster.cluster_queues[name]))
        self.last_heads = heads
        return heads

    def mark_waiting(self) -> None:
        """StrictFIFO: the others wait behind the head (said once the cycles are over)."""
        for head, cq in self.last_heads:
            if cq.queueing_strategy == "StrictFIFO" and cq.name in self.pending:
                for s in self.pending[cq.name].active():
                    if s is not head:
                        s.status, s.reason = PENDING, f"waiting behind {head.key} (StrictFIFO)"

    def requeue_preemptor(self, st: State) -> None:
        """A head that issued preemptions is first in line now (sticky): its order changed."""
        q = self.pending.get(self.queued.get(st.key, ""))
        if q is not None and st.key in q.members and not st.inadmissible:
            q.push(st)

    def set_aside(self, st: State) -> None:
        """BestEffortFIFO: a head that does not fit waits in the inadmissible set."""
        q = self.pending.get(self.queued.get(st.key, ""))
        if q is not None:
            q.set_aside(st)
        else:
            st.inadmissible = True

    def unmanaged(self, wl) -> str:
        """Why Kueue does not manage the Workload's object ("" when it does): no queue label, or a
        kind whose integration the cluster's Kueue configuration does not enable."""
        if wl.queue is None:
            return "no kueue.x-k8s.io/queue-name label: Kueue does not manage it"
        missing = ", ".join(self.store.not_enabled(wl.owner[0]))
        if missing:
            return (f"the Kueue configuration does not enable {missing}: Kueue ignores the queue label and it "
                    f"starts at once, outside any quota (fix: enable {missing}; kueue.integrations in the spec)")
        return ""

    def classify(self, st: State) -> ClusterQueue | None:
        """The active ClusterQueue the Workload waits in, or None with the state set."""
        wl, c = st.wl, self.store.cluster
        if st.holds_quota or st.status == FINISHED:
            return None
        if st.status == NEVER and st.reason.startswith("rejected by"):
            return None
        unmanaged = self.unmanaged(wl)
        if unmanaged:
            st.status, st.reason = UNMANAGED, unmanaged
            return None
        lq = c.local_queues.get((wl.namespace, cast(str, wl.queue)))   # a queue: unmanaged() said so
        cq = c.cluster_queues.get(lq.cluster_queue) if lq else None
        st.cluster_queue = cq.name if cq else None
        never = list(wl.problems) + self.wiring_problems(wl, lq, cq)
        if never or lq is None or cq is None:
            st.status, st.reason, st.blocked = NEVER, "; ".join(dict.fromkeys(never)), True
            return None
        if lq.stop_policy not in (None, "None"):
            st.status, st.blocked = PENDING, True
            st.reason = f"LocalQueue {lq.namespace}/{lq.name} is stopped (stopPolicy: {lq.stop_policy})"
            return None
        problem = self.cq_problem(cq)
        if problem:
            (st.status, st.reason), st.blocked = problem, True
            return None
        if st.blocked or st.status not in (PENDING, NEVER):
            st.status, st.reason, st.blocked = PENDING, "", False
        return cq

    def cq_problem(self, cq: ClusterQueue) -> tuple[str, str] | None:
        """(state, why) when the ClusterQueue is inactive: it admits nothing."""
        c, tree = self.store.cluster, self.cache.tree
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
        if cq.cohort and cq.name in tree.cqs and tree.in_cycle(cq.name):
            missing.append(f"its cohort {cq.cohort} is in a cycle of parent cohorts")
        if missing:
            return NEVER, f"ClusterQueue {cq.name} is inactive: " + "; ".join(dict.fromkeys(missing))
        return None

    def wiring_problems(self, wl: Workload, lq, cq: ClusterQueue | None) -> list[str]:
        """Why the Workload's queue name leads to no ClusterQueue that takes it."""
        if lq is None:
            return [f"LocalQueue {wl.namespace}/{wl.queue} does not exist"]
        if cq is None:
            return [f"ClusterQueue {lq.cluster_queue} (of LocalQueue {wl.namespace}/{wl.queue}) does not exist"]
        if not selector_matches(cq.namespace_selector, overlay.namespace_labels(self.store.cluster, wl.namespace)):
            return [f"namespace {wl.namespace} is not selected by ClusterQueue {cq.name}'s namespaceSelector"]
        return []
