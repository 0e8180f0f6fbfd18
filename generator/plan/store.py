"""What the simulated cluster holds: its queue objects (the overlay's model), its Workloads, and
what a step leaves to read (events, notes, evictions). Kueue's counterpart is the API server the
controllers share: every part of the simulator (the cache, the queue manager, the workload
controller, the scheduler) holds a reference to one Store instead of copies of its fields."""
from __future__ import annotations

from ..kernel import kueue_api, versions
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

    def not_enabled(self, kind: str) -> tuple[str, ...]:
        """The integrations a workload object of `kind` needs that the cluster's Kueue configuration
        (when the input has one) leaves off, defaulted as the release's apis/config defaults.go does."""
        config = self.cluster.config
        if not config.read or self.rules.release not in versions.known("kueue"):
            return ()
        doc = {} if config.frameworks is None else {"integrations": {"frameworks": list(config.frameworks)}}
        enabled = kueue_api.enabled_integrations(doc, versions.kueue_release(self.rules.release))
        group = next((g for g, k in kueue_api.MANAGED_BY if k == kind), None)
        return kueue_api.unmanaged(group, kind, enabled) or () if group is not None else ()

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
