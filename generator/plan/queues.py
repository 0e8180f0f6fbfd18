"""The pending Workloads of each ClusterQueue, kept the way Kueue's queue manager keeps them
(pkg/cache/queue/cluster_queue.go): a heap of the active ones in queue order and a set of
the inadmissible ones set aside until quota frees up. A scheduling cycle peeks at each
heap's head instead of re-reading every Workload, so it costs what changed.

Entries are never updated in place: a Workload whose order changes (or that comes back
from the inadmissible set) is pushed again with a new sequence number, and stale entries
are dropped when they reach the top."""
from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from typing import Any

_seq = itertools.count()


@dataclass
class PendingQueue:
    name: str
    heap: list = field(default_factory=list)              # (order, seq, key)
    members: dict[str, Any] = field(default_factory=dict)  # key -> State: every pending Workload here
    inadmissible: set[str] = field(default_factory=set)

    def add(self, st) -> None:
        self.members[st.key] = st
        if st.inadmissible:
            self.inadmissible.add(st.key)
        else:
            self.push(st)

    def discard(self, key: str) -> None:
        self.members.pop(key, None)
        self.inadmissible.discard(key)

    def push(self, st) -> None:
        """(Re)queue an active Workload at its current order."""
        st.heap_seq = next(_seq)
        heapq.heappush(self.heap, (st.order(), st.heap_seq, st.key))

    def set_aside(self, st) -> None:
        st.inadmissible = True
        self.inadmissible.add(st.key)

    def reactivate(self) -> None:
        """Quota freed up: the inadmissible Workloads go back to the heap (QueueInadmissibleWorkloads)."""
        for key in sorted(self.inadmissible):
            st = self.members.get(key)
            if st is not None:
                st.inadmissible = False
                self.push(st)
        self.inadmissible.clear()

    def head(self):
        """The first active Workload in queue order, or None."""
        while self.heap:
            _, seq, key = self.heap[0]
            st = self.members.get(key)
            if st is not None and st.heap_seq == seq and not st.inadmissible:
                return st
            heapq.heappop(self.heap)
        return None

    def active(self):
        return [st for st in self.members.values() if not st.inadmissible]
