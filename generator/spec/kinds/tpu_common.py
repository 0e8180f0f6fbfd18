"""Checks shared by the TPU kinds: the slice shape against the profile's
slicing, the reservation's size and the VM the pod takes, and the names the
slice controller derives."""
from __future__ import annotations

from ... import facts, tpu
from ...errors import Problem
from ..context import CheckContext


def tpu_type(ctx: CheckContext) -> facts.TpuType | None:
    p = ctx.profile
    return facts.TPU_TYPES.get(p.accelerator or "") if p.tpu else None


def reservation(ctx: CheckContext) -> tpu.Reservation:
    p = ctx.profile
    assert p.tpu is not None and p.accelerator is not None
    r = p.tpu.reservation
    return tpu.reservation(p.accelerator, r.cubes, r.cpu_per_vm, r.memory_per_vm)


def shape_checks(w, ctx: CheckContext, demand: tpu.Demand | None, count_field: str) -> list[Problem]:
    """The shape fits the profile's slicing and the reservation; a problem stops further checks."""
    t = tpu_type(ctx)
    p = ctx.profile
    if t is None or p.tpu is None:
        return []   # reported by the accelerator checks
    bad = tpu.shape_problem(w.shape, p.tpu.slicing, t, p.name)
    if bad:
        return [Problem("shape", bad)]
    misfit = tpu.fit_problem(demand, reservation(ctx), p.tpu.slicing, p.name) if demand else None
    if misfit:
        return [Problem("shape" if misfit[0] == "shape" else count_field, misfit[1])]
    return []


def vm_fit(ctx: CheckContext, pod: list[tuple[str, dict]]) -> list[Problem]:
    if tpu_type(ctx) is None:
        return []
    return tpu.vm_fit_problems(pod, reservation(ctx))
