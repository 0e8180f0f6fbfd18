"""A Workload as the simulator tracks it (State), and a head being scheduled in a cycle (Entry)."""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from . import assign, packer, preempt
from .overlay import ClusterQueue, Workload
from .quota import FR

ADMITTED, RESERVED, PENDING, NEVER, UNMANAGED, FINISHED = \
    "admitted", "reserved", "pending", "never", "unmanaged", "finished"
CHECK_STATES = ("Pending", "Ready", "Retry", "Rejected")


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
    tas: tuple = ()                                             # (TAS flavor, {leaf: requests}) it holds
    pods_ready: bool = True                                     # PodsReady (waitForPodsReady)
    cluster_queue: str | None = None
    preempted_by: list[str] = field(default_factory=list)       # during the current step
    evicted: bool = False                                       # preempted and not yet back
    readmitted: bool = False                                    # came back during the current step
    inadmissible: bool = False                                  # set aside until quota frees up
    blocked: bool = False                                       # state set by the queue wiring, not by quota
    sticky: bool = False                                        # preempted for: first in line next cycle
    last_tried: list[dict[str, int]] | None = None
    last_generation: int = -1
    last_cycle: int = -1                                        # the cycle that recorded last_tried
    heap_seq: int = -1                                          # its live entry in its queue's heap (queues.py)
    checks: dict[str, str] = field(default_factory=dict)        # per-workload admission check states
    waiting_checks: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return self.wl.key

    def order(self) -> tuple:
        """Queue order: preempted for (sticky) first, then priority, then age."""
        return (not self.sticky, -self.wl.priority.value, self.created, self.wl.key)

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
