"""The hardware a profile offers and a workload runs on, read from the
device catalog: which accelerators a profile has (its pools' machine types,
its Autopilot accelerator, its TPU reservation), and which one a workload
uses on it."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import facts
from .context import CheckContext

if TYPE_CHECKING:   # the model imports the kinds, which import this module
    from .model import NodePool, Profile


def machine(pool: NodePool) -> facts.MachineType | None:
    return facts.MACHINE_TYPES.get(pool.machine_type)


def accelerators(profile: Profile) -> list[str]:
    """The accelerators of the profile, in pool order (one per Autopilot or TPU-reservation profile)."""
    if profile.pools:
        out = [m.accelerator for m in (machine(p) for p in profile.pools) if m is not None]
        return list(dict.fromkeys(out))
    return [profile.accelerator] if profile.accelerator else []


def accelerator_for(w, profile: Profile) -> str | None:
    """The accelerator a workload runs on in this profile: the one it names, or the
    profile's only one. None when it cannot be told (the checks report that)."""
    have = accelerators(profile)
    if w.accelerator:
        return w.accelerator if w.accelerator in have else None
    return have[0] if len(have) == 1 else None


def pools_for(profile: Profile, accelerator: str) -> list[NodePool]:
    return [p for p in profile.pools if (m := machine(p)) is not None and m.accelerator == accelerator]


def device_of(accelerator: str) -> str:
    return "tpu" if accelerator in facts.TPU_TYPES else "gpu"


def resource_of(accelerator: str) -> str:
    return facts.ACCELERATORS[accelerator].resource


def accelerator_problems(w, ctx: CheckContext) -> list[str]:
    """Why the workload cannot tell or use its accelerator on this profile."""
    have = accelerators(ctx.profile)
    kinds = [a for a in have if device_of(a) == w.device]
    p = ctx.profile.name
    if w.accelerator is not None:
        if w.accelerator not in have:
            return [f"profile {p!r} has no {w.accelerator} (it has {', '.join(have) or 'none'})"]
        if device_of(w.accelerator) != w.device:
            return [f"a {w.kind} workload runs on {w.device.upper()}s; {w.accelerator} is not one"]
        return []
    if not kinds:
        return [f"a {w.kind} workload runs on {w.device.upper()}s; profile {p!r} has {', '.join(have) or 'none'}"]
    if len(have) > 1:
        return [f"profile {p!r} has several accelerators ({', '.join(have)}); name the one this workload "
                f"runs on with `accelerator`"]
    return []
