"""What the simulated cluster holds: its queue objects (the overlay's model), its Workloads, and
what a step leaves to read (events, notes, evictions). Kueue's counterpart is the API server the
controllers share: every part of the simulator (the cache, the queue manager, the workload
controller, the scheduler) holds a reference to one Store instead of copies of its fields."""
from __future__ import annotations

from . import overlay, releases
from .state import FINISHED, State


class Store:
    def __init__(self, cluster: overlay.Cluster, rules: releases.Rules):
        self.cluster = cluster
        self.rules = rules
        self.states: dict[str, State] = {}
        self.clock = 0                           # the simulation's time: creation and reservation order
        self.events: list[str] = []              # what happened in the current step
        self.notes: list[str] = list(cluster.notes)
        # Workloads that lost their quota against their will (preempted, drained, evicted), with
        # who preempted them: what MultiKueue (dispatch.py) reacts to. Read and cleared by it.
        self.evictions: list[tuple[str, str | None]] = []

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    def units(self, ref: tuple) -> list[State]:
        """The unfinished Workloads of one workload object."""
        return [s for s in self.states.values() if s.wl.owner == ref and s.status != FINISHED]

    def begin_step(self) -> None:
        self.events = []
        for st in self.states.values():
            st.preempted_by = []
            st.readmitted = False
