"""The hardware a profile offers and a workload runs on, read from the device
catalog: which accelerators a profile has (its node pools' machine types, its
Autopilot accelerator, its TPU reservation), and which one a workload uses."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..kernel import catalog
from .check_context import CheckContext

if TYPE_CHECKING:   # the model imports the kinds, which import this module
    from .spec import NodePool, Platform, Profile


def machine(pool: NodePool) -> catalog.MachineType | None:
    """The pool's machine: its machine type, with the GPUs attached to an N1 pool (`gpus`)."""
    m = catalog.MACHINE_TYPES.get(pool.machine_type)
    return None if m is None else catalog.with_gpus(m, pool.gpus)


def accelerators(profile: Profile, platform: Platform | None = None) -> list[str]:
    """The accelerators of the profile (GKE label values), in pool order; CPU pools have none.
    A MultiKueue manager offers its workers' (it dispatches to them and runs nothing itself)."""
    group = platform.manager_group(profile.name) if platform is not None else None
    if group is not None and platform is not None:
        return list(dict.fromkeys(a for w in group.worker_profiles if w in platform.profiles
                                  for a in accelerators(platform.profiles[w])))
    if profile.pools:
        return list(dict.fromkeys(m.accelerator for m in (machine(p) for p in profile.pools)
                                  if m is not None and m.accelerator is not None))
    return [profile.accelerator] if profile.accelerator else []


def accelerator_for(w, profile: Profile, platform: Platform | None = None) -> str | None:
    """The accelerator a workload runs on in this profile: the one it names, or the
    profile's only one of the workload's device family. None when it cannot be told."""
    have = [a for a in accelerators(profile, platform) if device_of(a) == w.device]
    if w.accelerator:
        return w.accelerator if w.accelerator in have else None
    return have[0] if len(have) == 1 else None


def pools_for(profile: Profile, accelerator: str) -> list[NodePool]:
    return [p for p in profile.pools if (m := machine(p)) is not None and m.accelerator == accelerator]


def device(accelerator: str) -> catalog.Device | None:
    return catalog.ACCELERATORS.get(accelerator)


def device_of(accelerator: str) -> str | None:
    d = device(accelerator)
    return d.kind if d else None


def resource_of(accelerator: str) -> str:
    return catalog.accelerator(accelerator).resource


def accelerator_problems(w, ctx: CheckContext) -> list[str]:
    """Why the workload cannot tell or use its accelerator on this profile."""
    have = accelerators(ctx.profile, ctx.platform)
    mine = [a for a in have if device_of(a) == w.device]
    p = ctx.profile.name
    if w.accelerator is not None:
        if w.accelerator not in have:
            return [f"profile {p!r} has no {w.accelerator} (it has {', '.join(have) or 'none'})"]
        if device_of(w.accelerator) != w.device:
            return [f"a {w.kind} workload runs on {w.device.upper()}s; {w.accelerator} is not one"]
        return []
    if not mine:
        return [f"a {w.kind} workload runs on {w.device.upper()}s; profile {p!r} has {', '.join(have) or 'none'}"]
    if len(mine) > 1:
        return [f"profile {p!r} has several {w.device.upper()}s ({', '.join(mine)}); name the one this "
                f"workload runs on with `accelerator`"]
    return []


def gpudirect_for(w, profile: Profile, platform: Platform | None = None) -> catalog.gpudirect.GpuDirect | None:
    """The GPUDirect networking the workload's GPU pools have: one type when every pool of
    its accelerator is a machine type GKE publishes it for (a3-highgpu-8g, a3-megagpu-8g,
    a3-ultragpu-8g, a4-highgpu-8g, a4x-highgpu-4g), on Autopilot its accelerator's, else None (a pool of a3-highgpu-4g
    beside one of a3-highgpu-8g: the pods may land where it does not exist)."""
    accel = accelerator_for(w, profile, platform)
    if accel is None:
        return None
    if profile.autopilot:   # GKE picks the machine type from the accelerator (and the GPU count)
        return catalog.gpudirect.AUTOPILOT.get(accel)
    types = [catalog.gpudirect.for_machine(p.machine_type) for p in pools_for(profile, accel)]
    if not types or any(t is None or t.key != types[0].key for t in types):   # type: ignore[union-attr]
        return None
    return types[0]
