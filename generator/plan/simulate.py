"""Kueue's scheduler, replayed offline: the Simulator every plan runs, a thin front over
the parts it is made of, each cut as Kueue cuts it (v0.17.4):

- store.py (Store): the queue objects and Workloads the parts share, and what a step leaves to read;
- cache.py (Cache): quota, usage and the admitted Workloads, and each cycle's snapshot (pkg/cache/scheduler);
- queue_manager.py (QueueManager): the pending heaps, the inadmissible sets, requeueing (pkg/cache/queue);
- workload_controller.py (WorkloadController): Workloads made, scaled, deleted, finished, evicted;
  quota held and released; admission checks (pkg/controller/jobframework, pkg/controller/core);
- scheduler.py (Scheduler): the scheduling cycle, run until nothing changes (pkg/scheduler);
- actions.py: the scenario steps that change queue objects, as Kueue's controllers would.

Sizes are capped (MAX_WORKLOADS, MAX_CUBES) so any input is simulated in bounded time and
memory; the plan says what was left out."""
from __future__ import annotations

import copy

from . import actions, overlay, releases
from .cache import Cache
from .overlay import Owner
from .queue_manager import QueueManager
from .results import STATES, Cubes, Plan, Row, StepResult, Usage, snapshot, usage_rows  # noqa: F401 (re-exported)
from .scheduler import MAX_CYCLES, MODELLED_GATES, Scheduler  # noqa: F401 (re-exported)
from .state import ADMITTED, FINISHED, NEVER, PENDING, RESERVED, UNMANAGED, Entry, State  # noqa: F401 (re-exported)
from .store import Store
from .tpusetup import MAX_CUBES  # noqa: F401 (re-exported)
from .workload_controller import WorkloadController

MAX_WORKLOADS = 10_000      # Workloads simulated in one plan; more are left out, with a note


def config_notes(config: overlay.Config) -> list[str]:
    """What the Kueue configuration asks for that the plan follows only in part, said up front."""
    out = []
    if config.wait_for_pods_ready:
        out.append("Kueue configuration: waitForPodsReady on (blockAdmission: "
                   f"{'true' if config.block_admission else 'false'}): the pods of a Workload the plan admits are "
                   "ready after a scenario step `podsReady` names it (a Workload admitted before the plan: when "
                   "its PodsReady condition is True)"
                   + ("; until then Kueue admits nothing else" if config.block_admission else "")
                   + "; the timeout" + (f" ({config.pods_ready_timeout})" if config.pods_ready_timeout else "")
                   + ", its eviction and requeuing with backoff are not replayed (the plan has no clock; "
                   "a step `evict` shows one)")
    unmodelled = [n for n, _ in config.feature_gates if n not in MODELLED_GATES]
    if unmodelled:
        out.append("Kueue configuration: featureGates not modelled by the plan (taken at the release's default): "
                   + ", ".join(unmodelled))
    return out


class Simulator:
    """One cluster's Kueue: the parts, wired by reference, and the steps a scenario takes."""

    def __init__(self, cluster: overlay.Cluster, cubes: int | None = None, cubes_source: str = "--cubes",
                 kueue_version: str = "v0.17.4"):
        self.store = Store(copy.deepcopy(cluster), releases.rules(kueue_version))
        self.cache = Cache(self.store, cubes, cubes_source)
        self.queues = QueueManager(self.store, self.cache)
        self.workloads = WorkloadController(self.store, self.cache, self.queues, MAX_WORKLOADS)
        self.scheduler = Scheduler(self.store, self.cache, self.queues, self.workloads)
        # The same objects as the store's (neither is ever replaced): what readers and tests use.
        self.cluster, self.states = self.store.cluster, self.store.states
        c = self.cluster
        if c.config.fair_sharing or any(q.cohort for q in c.cluster_queues.values()):
            self.store.notes.append(f"Kueue configuration: {c.config.source}")
        self.store.notes += config_notes(c.config)
        topology_flavors = sorted(f.name for f in c.flavors.values() if f.topology and f.tpu_generation() is None)
        if topology_flavors and not c.config.gate("TopologyAwareScheduling", self.store.rules.tas):
            why = "the configuration's featureGates turn" if "TopologyAwareScheduling" in dict(c.config.feature_gates) \
                else f"Kueue {self.store.rules.release} has"
            self.store.notes.append(f"{why} TopologyAwareScheduling off, so {', '.join(topology_flavors)} "
                                    "admit by quota alone (no placement on nodes)")

    # Steps that change queue objects (actions.py).
    set_quota = actions.set_quota
    set_stop_policy = actions.set_stop_policy
    set_namespace_labels = actions.set_namespace_labels
    apply = actions.apply
    remove_object = actions.remove_object
    set_check = actions.set_check

    def rebuild(self) -> None:
        """After a change to queues, cohorts or quotas: the quota tree anew, with the
        quota Workloads hold; every Workload is classified again and may try again."""
        self.cache.rebuild()
        self.queues.requeue_all()

    # Steps on workload objects (workload_controller.py).
    def submit(self, owner: Owner) -> None:
        self.workloads.submit(owner)

    def scale(self, ref: tuple, replicas: int) -> None:
        self.workloads.scale(ref, replicas)

    def delete(self, ref: tuple) -> None:
        self.workloads.delete(ref)

    def finish(self, ref: tuple) -> None:
        self.workloads.finish(ref)

    def evict(self, ref: tuple, why: str = "evicted by the scenario") -> None:
        self.workloads.evict(ref, why)

    def pods_ready(self, ref: tuple) -> None:
        """The scenario's `podsReady`: the object's admitted Workloads have their pods ready."""
        for st in self.store.units(ref):
            if st.holds_quota and not st.pods_ready:
                st.pods_ready = True
                self.store.events.append(f"{st.key} pods ready (PodsReady)")

    # Steps and cycles (scheduler.py).
    def begin_step(self) -> None:
        self.store.begin_step()

    def settle(self) -> None:
        self.scheduler.settle()

    def cycle(self) -> None:
        self.scheduler.cycle()


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
    notes = list(sim.store.notes)
    dropped = sim.workloads.dropped
    if dropped:
        notes.append(f"only the first {MAX_WORKLOADS} Workloads are simulated; {dropped} more were left out "
                     "(the plan is capped to stay bounded)")
    return Plan(cluster.source, scenario.source, scenario.description, tuple(dict.fromkeys(notes)), tuple(steps),
                release=sim.store.rules.release)


def _checked(sim: Simulator, index: int, title: str, action: str, expect) -> StepResult:
    result = snapshot(sim, index, title, action)
    if expect is None:
        return result
    from dataclasses import replace
    return replace(result, failures=tuple(expect.check(result)), checked=True)
