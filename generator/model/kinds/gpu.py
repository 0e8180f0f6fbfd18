"""Checks shared by the GPU kinds: a pod must fit one node of its pool
(accelerators, CPU and memory), on Autopilot requests must be explicit."""
from __future__ import annotations

from decimal import Decimal

from ...kernel import catalog, quantity
from ...kernel.catalog.gpudirect import GpuDirect
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


# ---------------------------------------------------------------- GPUDirect

def gpudirect_of(w, ctx: CheckContext, pods: int, gpus_per_pod: int, switch: bool | None) -> GpuDirect | None:
    """The GPUDirect networking pods of a multi-node GPU workload get: where its pools (on
    Autopilot its accelerator) have it, unless `gpudirect: false`."""
    if switch is False or pods < 2 or w.device != "gpu":
        return None
    g = hardware.gpudirect_for(w, ctx.profile, ctx.platform)
    # Autopilot: only pods of a whole node land on the machine type that has it (8 H100s:
    # an a3-highgpu-8g; fewer, a smaller A3 High).
    if g is not None and ctx.profile.autopilot and gpus_per_pod != catalog.machine(g.machine_types[0]).accelerators:
        return None
    return g


def gpudirect_problems(w, ctx: CheckContext, pods: int, gpus_per_pod: int, switch: bool | None,
                       gpus_field: str) -> list[Problem]:
    """`gpudirect: true` where the profile cannot give it: one line saying why."""
    if switch is not True or pods < 2 or gpudirect_of(w, ctx, pods, gpus_per_pod, switch) is not None:
        return []
    if ctx.profile.autopilot:
        why = (f"GKE publishes GPUDirect on Autopilot for pods of all 8 GPUs of "
               f"{', '.join(sorted(catalog.gpudirect.AUTOPILOT))}; profile {ctx.profile.name!r} and "
               f"{gpus_field} {gpus_per_pod} are not that")
    else:
        why = (f"no GPU pool of profile {ctx.profile.name!r} is a machine type GKE publishes GPUDirect for "
               f"({', '.join(catalog.gpudirect.BY_MACHINE_TYPE)}), or its pools mix such types")
    return [Problem("gpudirect", why)]
