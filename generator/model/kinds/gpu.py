"""Checks shared by the GPU kinds: a pod must fit one node of its pool
(accelerators, CPU and memory), on Autopilot requests must be explicit."""
from __future__ import annotations

from decimal import Decimal

from ...kernel import quantity
from ...kernel.errors import Problem
from .. import hardware, nominal_quota
from ..check_context import CheckContext
from .base import Resources, autopilot_requests


def pod_fits_a_node(w, ctx: CheckContext, gpus: int, resources: Resources | None, where: str = "") -> list[Problem]:
    """On Standard a pod runs on one node: it must fit some pool of its accelerator."""
    accel = hardware.accelerator_for(w, ctx.profile, ctx.platform)
    if accel is None or ctx.profile.autopilot:
        return []
    pools = hardware.pools_for(ctx.profile, accel)
    if not pools:
        return []
    reasons = []
    for pool in pools:
        m = hardware.machine(pool)
        assert m is not None
        if gpus > m.accelerators:
            reasons.append(f"a pod asks for {gpus} {accel} but {m.name} has {m.accelerators} per node")
            continue
        node = nominal_quota.node_capacity(m, pool.boot_disk_gi) if ctx.profile.quota_basis == "capacity" \
            else nominal_quota.node_allocatable(m, pool.boot_disk_gi)
        for r, v in (resources.requests() if resources else {}).items():
            if quantity.parse(v) > node.get(r, Decimal(0)):
                reasons.append(f"a pod asks for {v} {r} but one {m.name} node offers {quantity.show(r, node[r])}")
                break
        else:
            return []
    return [Problem(where, reasons[0] + (f" (and {len(reasons) - 1} other pool(s) do not fit either)"
                                         if len(reasons) > 1 else ""))]


def gpu_checks(w, ctx: CheckContext, gpus: int, resources: Resources | None) -> list[Problem]:
    return autopilot_requests(resources, ctx) + pod_fits_a_node(w, ctx, gpus, resources)
