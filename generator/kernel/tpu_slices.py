"""TPU slices: what a slice of a given shape takes on a given machine type
(pods, chips and devices per pod), the sizes of a TPU7x reservation counted in
cubes, and the names GKE's slice controller derives.

The topology maths (N-dimensional shapes, cubes, sub-slices) and every TPU
fact live in the device catalog (generator/kernel/catalog); the dynamic-slicing
vocabulary in its slicing mode (catalog.TPU7X_DYNAMIC). No cdk8s here."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from . import catalog, quantity
from .catalog import DynamicSlicing, TpuGeneration, TpuMachine, TpuShape
from .errors import Problem

SUBSLICE, SUPERSLICE = "subslice", "superslice"
TPU_RESOURCE = catalog.node_labels.TPU_RESOURCE

# The slice controller names each Slice "<namespace>-<Kueue workload>-<podset>-<slice index>";
# the llm-d dynamic-slicing guide caps Slice names at 49 characters. Newer
# controllers cut longer names and append a hash (54 by default, 49 behind
# the ShorterSliceNameLength gate); older ones fail. We keep names whole.
SLICE_NAME_MAX = 49
# Kueue names a Workload "<kind, lower case>-<owner name>-<5-char hash>"
# (jobframework.GetWorkloadNameForOwnerWithGVK); an LWS group's owner name is
# "<lws name>-<group index>".
WORKLOAD_HASH = "xxxxx"


@dataclass(frozen=True)
class Slice:
    """One slice of `shape` on `machine` VMs: one pod per VM, each taking all of its VM's chips."""
    generation: TpuGeneration
    machine: TpuMachine
    shape: TpuShape

    @property
    def text(self) -> str:
        return self.shape.text

    @property
    def chips(self) -> int:
        return self.shape.chips

    @property
    def pods(self) -> int:
        return self.machine.vms(self.shape)

    @property
    def tpus_per_pod(self) -> int:
        return self.machine.chips

    @property
    def devices(self) -> int:
        """JAX devices of the whole slice."""
        return self.chips * self.generation.jax_devices_per_chip

    @property
    def devices_per_pod(self) -> int:
        return self.tpus_per_pod * self.generation.jax_devices_per_chip


def dynamic(generation: TpuGeneration) -> DynamicSlicing:
    mode = generation.dynamic
    if mode is None:
        raise ValueError(f"{generation.name} has no dynamic slicing")
    return mode


def dynamic_machine(generation: TpuGeneration) -> TpuMachine:
    """The one machine type a dynamically sliced reservation is made of."""
    return generation.dynamic_machine()


def slice_of(generation: TpuGeneration, machine: TpuMachine, text: str) -> Slice:
    """The slice `text` on `machine`; ValueError when the text is no shape of this generation
    or does not make whole VMs."""
    shape = generation.shape(text)
    machine.vms(shape)
    return Slice(generation, machine, shape)


def dynamic_shape_problem(text: str, slicing: str, generation: TpuGeneration, profile: str) -> str | None:
    """Why a shape cannot be a dynamic slice of this profile, and what would fit; None if it can."""
    mode = dynamic(generation)
    subs = ", ".join(s.text for s in mode.subslice_shapes)
    cube = mode.cube.text
    try:
        shape = generation.shape(text)
    except ValueError as e:
        return str(e)
    two_cubes = ", ".join(s.text for s in mode.whole_cube_shapes(2))
    kind = mode.kind(shape)
    if kind == slicing:
        return None
    if slicing == SUBSLICE:
        if kind == SUPERSLICE:
            return (f"{text} is a super-slice (whole {cube} cubes), but profile {profile!r} "
                    f"sub-slices its cubes; use a sub-slice shape ({subs}) or a superslice profile")
        return f"{text} is not a {generation.accelerator} sub-slice: dynamic sub-slices inside a {cube} cube are {subs}"
    if kind == SUBSLICE:
        return (f"{text} is a sub-slice shape, but profile {profile!r} super-slices whole {cube} cubes "
                f"(its Topology has no {text} level); use whole cubes such as {two_cubes}, or a subslice profile")
    if shape.is_multiple_of(mode.cube):
        return (f"{text}: the slice controller wants dimensions in non-decreasing order; "
                f"write it as {shape.sorted().text}")
    return (f"{text} is not whole {cube} cubes: a super-slice needs every dimension a multiple "
            f"of {mode.cube.dims[0]} (e.g. {two_cubes})")


# ---------------------------------------------------------------- a reservation counted in cubes

@dataclass(frozen=True)
class Reservation:
    generation: TpuGeneration
    cubes: int
    cpu_per_vm: Decimal
    memory_per_vm: Decimal

    @property
    def machine(self) -> TpuMachine:
        return dynamic_machine(self.generation)

    @property
    def chips(self) -> int:
        return self.cubes * dynamic(self.generation).cube.chips

    @property
    def vms(self) -> int:
        return self.chips // self.machine.chips

    def describe(self) -> str:
        return f"{self.chips} chips ({self.cubes} cube{'s' if self.cubes != 1 else ''}, {self.vms} VMs)"

    def cubes_for(self, chips: int) -> int:
        return -(-chips // dynamic(self.generation).cube.chips)


def reservation(generation: TpuGeneration, cubes: int, cpu_per_vm=None, memory_per_vm=None) -> Reservation:
    """A reservation of `cubes` cubes; per-VM CPU and memory default to the machine
    type's (tpu.reservation.cpuPerVm/memoryPerVm override, e.g. allocatable)."""
    m = dynamic_machine(generation)
    return Reservation(
        generation=generation,
        cubes=cubes,
        cpu_per_vm=quantity.parse(cpu_per_vm if cpu_per_vm is not None else m.vcpus),
        # Compute Engine publishes TPU VM memory in GB, used as GiB (as GKE's quota examples do).
        memory_per_vm=quantity.parse(memory_per_vm if memory_per_vm is not None else f"{m.memory_gb}Gi"),
    )


@dataclass(frozen=True)
class Demand:
    """TPU chips a workload takes: all of it at once, in one Kueue admission, per slice."""
    total_chips: int
    unit_chips: int
    slice_chips: int
    what: str           # e.g. "6 slices of 2x2x2"


def fit_problem(demand: Demand, res: Reservation, slicing: str, profile: str) -> tuple[str, str] | None:
    """What one Kueue admission takes must fit the reservation, or it is never admitted.
    Returns (what to change: "shape" or "count", message)."""
    if demand.slice_chips > res.chips:
        return "shape", (f"one slice has {demand.slice_chips} chips, but profile {profile!r} reserves "
                         f"{res.describe()}; {_what_fits(res, slicing)}, or raise "
                         f"tpu.reservation.cubes to {res.cubes_for(demand.slice_chips)}")
    if demand.unit_chips > res.chips:
        return "count", (f"{demand.what} are admitted together ({demand.unit_chips} chips), but profile "
                         f"{profile!r} reserves {res.describe()}; at most {res.chips // demand.slice_chips} "
                         f"such slices fit, or raise tpu.reservation.cubes to {res.cubes_for(demand.unit_chips)}")
    return None


def _what_fits(res: Reservation, slicing: str) -> str:
    mode = dynamic(res.generation)
    shapes = mode.subslice_shapes if slicing == SUBSLICE else mode.whole_cube_shapes(res.cubes)
    return f"shapes that fit: {', '.join(s.text for s in shapes) or 'none'}"


def vm_fit_problems(pod: list[tuple[str, dict]], machine: TpuMachine, cpu_per_vm: Decimal,
                    memory_per_vm: Decimal) -> list[Problem]:
    """A pod takes one whole VM; the CPU and memory its containers request
    together ((field path, requests) each) must fit what a VM offers."""
    out = []
    for r, per_vm in (("cpu", cpu_per_vm), ("memory", memory_per_vm)):
        parts = [(path, requests[r]) for path, requests in pod if r in requests]
        total = sum((quantity.parse(v) for _, v in parts), Decimal(0))
        if total > per_vm:
            what = " + ".join(str(v) for _, v in parts)
            out.append(Problem(f"{parts[0][0]}.{r}", f"{what} {r} per pod, but a {machine.name} VM offers "
                                                    f"{quantity.show(r, per_vm)}; one pod runs per VM"))
    return out


# ---------------------------------------------------------------- names the slice controller derives

def slice_name(namespace: str, owner_kind: str, owner: str, podset: str, index: int) -> str:
    workload = f"{owner_kind.lower()}-{owner}-{WORKLOAD_HASH}"
    return f"{namespace}-{workload}-{podset}-{index}"


def slice_name_problem(namespace: str, owner_kind: str, owner: str, podset: str, index: int,
                       shorten: str) -> str | None:
    """The longest Slice name the controller derives must stay within SLICE_NAME_MAX."""
    name = slice_name(namespace, owner_kind, owner, podset, index)
    over = len(name) - SLICE_NAME_MAX
    if over <= 0:
        return None
    return (f"the slice controller would name this workload's Slices like {name!r} "
            f"({len(name)} characters; {WORKLOAD_HASH} is Kueue's hash), over the "
            f"{SLICE_NAME_MAX} a Slice name may have; shorten {shorten} by {over} character{'s' if over > 1 else ''}")
