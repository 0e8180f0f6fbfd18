"""Where a TPU workload's slices come from on a profile, and the checks the
TPU kinds share: a TPU7x reservation sliced dynamically (sub-slices or whole
cubes, admitted through GKE's slice controller), or static node pools whose
VMs form one slice of the pool's topology each."""
from __future__ import annotations

from dataclasses import dataclass

from ...kernel import catalog, quantity, tpu_slices
from ...kernel.errors import Problem
from .. import hardware
from ..check_context import CheckContext


@dataclass(frozen=True)
class TpuTarget:
    generation: catalog.TpuGeneration
    slicing: str                       # "subslice" | "superslice" (dynamic) | "static"
    reservation: tpu_slices.Reservation | None = None
    pools: tuple = ()                  # static: the node pools of this accelerator

    @property
    def dynamic(self) -> bool:
        return self.reservation is not None

    def slice_for(self, shape: str) -> tpu_slices.Slice:
        """The slice of this shape (ValueError when it is none of this target's)."""
        if self.reservation is not None:
            return tpu_slices.slice_of(self.generation, self.reservation.machine, shape)
        for pool in self.pools:
            if pool.topology == shape:
                return tpu_slices.slice_of(self.generation, self.generation.machine(pool.machine_type), shape)
        raise ValueError(f"no {self.generation.accelerator} node pool has topology {shape}")

    def static_slices(self, shape: str) -> int:
        """Slices of `shape` the static pools hold at once (each pool's nodes in whole slices)."""
        out = 0
        for pool in self.pools:
            if pool.topology == shape:
                machine, s = self.generation.machine(pool.machine_type), self.generation.shape(shape)
                # A topology its machine type cannot form (1x1x1 on tpu7x-standard-4t) holds no
                # slice; the node-pool check reports it in one line.
                out += pool.nodes // machine.vms(s) if machine.allows(s) else 0
        return out


def target(w, ctx: CheckContext) -> TpuTarget | None:
    """The TPU capacity the workload runs on in this profile; None when it has none. Each
    check of a TPU workload asks: worked out once per workload and context."""
    return ctx.remembered("tpu target", w, lambda: _target(w, ctx))


def _target(w, ctx: CheckContext) -> TpuTarget | None:
    p = ctx.profile
    accel = hardware.accelerator_for(w, p, ctx.platform)
    if accel is None:
        return None
    generation = catalog.tpu_generation(accel)
    if p.tpu is not None:
        if generation.dynamic is None:
            return None   # the profile checks refuse dynamic slicing of this generation
        r = p.tpu.reservation
        return TpuTarget(generation, p.tpu.slicing,
                         reservation=tpu_slices.reservation(generation, r.cubes, r.cpu_per_vm, r.memory_per_vm))
    pools = tuple(pool for pool in hardware.pools_for(p, accel) if pool.topology)
    return TpuTarget(generation, "static", pools=pools) if pools else None


def slice_of(w, ctx: CheckContext) -> tpu_slices.Slice | None:
    """The slice of the workload's `shape` on its profile; None when the profile cannot form it
    (shape_checks says why)."""
    t = target(w, ctx)
    try:
        return t.slice_for(w.shape) if t else None
    except ValueError:
        return None


def shape_checks(w, ctx: CheckContext, demand: tpu_slices.Demand | None, count_field: str) -> list[Problem]:
    """The shape fits the profile's slicing and capacity; a problem stops further checks."""
    t = target(w, ctx)
    if t is None:
        return []   # reported by the accelerator checks
    if t.reservation is not None:
        bad = tpu_slices.dynamic_shape_problem(w.shape, t.slicing, t.generation, ctx.profile.name)
        if bad:
            return [Problem("shape", bad)]
        misfit = tpu_slices.fit_problem(demand, t.reservation, t.slicing, ctx.profile.name) if demand else None
        return [Problem("shape" if misfit[0] == "shape" else count_field, misfit[1])] if misfit else []
    if w.shape in {pool.topology for pool in t.pools}:
        return []
    # Only topologies a pool can have: a pool's wrong one is reported on the profile, never suggested here.
    topologies = sorted({pool.topology for pool in t.pools if _valid_topology(t.generation, pool)})
    if not topologies:
        return []
    return [Problem("shape", f"{w.shape} is not the topology of a {t.generation.accelerator} node pool of "
                             f"profile {ctx.profile.name!r}; a static slice is a whole pool slice: use "
                             f"{', '.join(topologies)}")]


def _valid_topology(generation: catalog.TpuGeneration, pool) -> bool:
    try:
        return generation.shape(pool.topology) in generation.machine(pool.machine_type).topologies
    except (ValueError, KeyError):
        return False


def vm_fit(w, ctx: CheckContext, pod: list[tuple[str, dict]]) -> list[Problem]:
    """A pod takes one whole VM: its CPU and memory must fit what the VM offers."""
    t = target(w, ctx)
    if t is None:
        return []
    if t.reservation is not None:
        r = t.reservation
        return tpu_slices.vm_fit_problems(pod, r.machine, r.cpu_per_vm, r.memory_per_vm)
    try:
        machine = t.slice_for(w.shape).machine
    except ValueError:
        return []
    # Compute Engine publishes TPU VM memory in GB, used as GiB (as for the reservation).
    return tpu_slices.vm_fit_problems(pod, machine, quantity.parse(machine.vcpus), quantity.parse(f"{machine.memory_gb}Gi"))
