"""TPU slicing: slice shapes and what they imply, the Kueue objects of a TPU
profile (Topology, flavor, slice AdmissionCheck, ClusterQueue), and the sums
the spec checks need (chips of a demand against a reservation, VM fit, the
names the slice controller derives).

Shapes follow GKE's slice controller (AI-Hypercomputer/xpk, slice/, branch
slice-main): a sub-slice is one of the dynamic partitions inside a cube; a
super-slice is whole cubes, every dimension a multiple of the cube's and in
non-decreasing order (the controller refuses 8x4x4, it wants 4x4x8).

No cdk8s here: checks and lints stay cheap to import."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from . import facts, kueue, quantity
from .errors import Problem

TPU_ACCELERATORS = tuple(facts.TPU_TYPES)
SUBSLICE, SUPERSLICE = "subslice", "superslice"

# Named as in the codelab, so its kubectl commands work unchanged.
TOPOLOGY_NAME = "slice-topology"
ADMISSION_CHECK_NAME = "ac"

# ClusterQueue resources, in the codelab's order.
QUOTA_RESOURCES = ("google.com/tpu", "cpu", "memory")
# The codelab's "no limit" quotas, used only where the spec asks for unlimitedQuota.
UNLIMITED_QUOTA = {"google.com/tpu": "999999", "cpu": "999999", "memory": "999999Pi"}

# The slice controller names each Slice "<namespace>-<Kueue workload>-<podset>-<slice index>";
# the llm-d dynamic-slicing guide caps Slice names at 49 characters. Newer
# controllers cut longer names and append a hash (54 by default, 49 behind
# the ShorterSliceNameLength gate); older ones fail. We keep names whole.
SLICE_NAME_MAX = 49
# Kueue names a Workload "<kind, lower case>-<owner name>-<5-char hash>"
# (jobframework.GetWorkloadNameForOwnerWithGVK); an LWS group's owner name is
# "<lws name>-<group index>".
WORKLOAD_HASH = "xxxxx"


# ---------------------------------------------------------------- shapes

@dataclass(frozen=True)
class Shape:
    dims: tuple[int, int, int]
    tpu: facts.TpuType

    @classmethod
    def parse(cls, text: str, tpu: facts.TpuType) -> "Shape":
        parts = text.split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise ValueError(f"{text!r} is not a chip grid like 2x2x2")
        return cls(tuple(int(p) for p in parts), tpu)

    @property
    def text(self) -> str:
        return "x".join(map(str, self.dims))

    @property
    def chips(self) -> int:
        a, b, c = self.dims
        return a * b * c

    @property
    def pods(self) -> int:
        """One pod per VM: a tpu7x-standard-4t pod takes all of its VM's chips."""
        return self.chips // self.tpu.chips_per_vm

    @property
    def tpus_per_pod(self) -> int:
        return self.tpu.chips_per_vm

    @property
    def devices(self) -> int:
        """JAX devices of the whole slice (TensorCores)."""
        return self.chips * self.tpu.devices_per_chip

    @property
    def devices_per_pod(self) -> int:
        return self.tpus_per_pod * self.tpu.devices_per_chip

    @property
    def cubes(self) -> int:
        return self.chips // cube_chips(self.tpu)

    @property
    def is_subslice(self) -> bool:
        return self.text in self.tpu.subslice_shapes

    @property
    def is_whole_cubes(self) -> bool:
        return (all(d % c == 0 for d, c in zip(self.dims, self.tpu.cube))
                and list(self.dims) == sorted(self.dims))


def cube_chips(tpu: facts.TpuType) -> int:
    a, b, c = tpu.cube
    return a * b * c


def whole_cube_shapes(tpu: facts.TpuType, max_cubes: int, limit: int = 6) -> list[str]:
    """The smallest super-slice shapes of at most max_cubes cubes (at most `limit`)."""
    a, b, c = tpu.cube
    out = []
    for i in range(1, max_cubes + 1):
        for j in range(1, max_cubes // i + 1):
            for k in range(1, max_cubes // (i * j) + 1):
                if i * a <= j * b <= k * c:
                    out.append((i * j * k, (i * a, j * b, k * c)))
    return ["x".join(map(str, dims)) for _, dims in sorted(out)[:limit]]


def shape_problem(text: str, slicing: str, tpu: facts.TpuType, profile_name: str) -> str | None:
    """Why a shape cannot be a slice of this profile, and what would fit; None if it can."""
    subs = ", ".join(tpu.subslice_shapes)
    try:
        shape = Shape.parse(text, tpu)
    except ValueError as e:
        return str(e)
    cube = "x".join(map(str, tpu.cube))
    if slicing == SUBSLICE:
        if shape.is_subslice:
            return None
        if shape.is_whole_cubes:
            return (f"{text} is a super-slice (whole {cube} cubes), but profile {profile_name!r} "
                    f"sub-slices its cubes; use a sub-slice shape ({subs}) or a superslice profile")
        return (f"{text} is not a {tpu.accelerator} sub-slice: dynamic sub-slices inside a {cube} "
                f"cube are {subs}")
    if shape.is_whole_cubes:
        return None
    if shape.is_subslice:
        return (f"{text} is a sub-slice shape, but profile {profile_name!r} super-slices whole "
                f"{cube} cubes (its Topology has no {text} level); use whole cubes such as "
                f"{', '.join(whole_cube_shapes(tpu, 2))}, or a subslice profile")
    if all(d % c == 0 for d, c in zip(shape.dims, tpu.cube)):
        return (f"{text}: the slice controller wants dimensions in non-decreasing order; "
                f"write it as {'x'.join(map(str, sorted(shape.dims)))}")
    return (f"{text} is not whole {cube} cubes: a super-slice needs every dimension a multiple "
            f"of {tpu.cube[0]} (e.g. {', '.join(whole_cube_shapes(tpu, 2))})")


# ---------------------------------------------------------------- reservation and quota

@dataclass(frozen=True)
class Reservation:
    tpu: facts.TpuType
    cubes: int
    cpu_per_vm: Decimal
    memory_per_vm: Decimal

    @property
    def chips(self) -> int:
        return self.cubes * cube_chips(self.tpu)

    @property
    def vms(self) -> int:
        return self.chips // self.tpu.chips_per_vm

    def describe(self) -> str:
        return f"{self.chips} chips ({self.cubes} cube{'s' if self.cubes != 1 else ''}, {self.vms} VMs)"


def reservation(accelerator: str, cubes: int, cpu_per_vm=None, memory_per_vm=None) -> Reservation:
    """A reservation of `cubes` cubes; per-VM CPU and memory default to the machine
    type's (tpu.reservation.cpuPerVm/memoryPerVm override, e.g. allocatable)."""
    t = facts.TPU_TYPES[accelerator]
    return Reservation(
        tpu=t,
        cubes=cubes,
        cpu_per_vm=quantity.parse(cpu_per_vm if cpu_per_vm is not None else t.vcpus_per_vm),
        memory_per_vm=quantity.parse(memory_per_vm if memory_per_vm is not None else f"{t.memory_gib_per_vm}Gi"),
    )


def quota(res: Reservation, unlimited: bool) -> list[tuple[str, object]]:
    if unlimited:
        return [(r, UNLIMITED_QUOTA[r]) for r in QUOTA_RESOURCES]
    totals = {"google.com/tpu": Decimal(res.chips), "cpu": res.cpu_per_vm * res.vms,
              "memory": res.memory_per_vm * res.vms}
    return [(r, quantity.fmt(r, totals[r])) for r in QUOTA_RESOURCES]


def topology_levels(tpu: facts.TpuType, slicing: str) -> list[str]:
    """Kueue Topology levels: block, cube, then (sub-slicing) each partition from
    the largest sub-slice down, then the host."""
    cube = "x".join(map(str, tpu.cube))
    levels = [facts.TPU_BLOCK_LABEL, facts.TPU_PARTITION_LABEL.format(shape=cube)]
    if slicing == SUBSLICE:
        by_size = sorted(tpu.subslice_shapes, key=lambda s: -Shape.parse(s, tpu).chips)
        levels += [facts.TPU_PARTITION_LABEL.format(shape=s) for s in by_size]
    return levels + [facts.HOSTNAME_LABEL]


def toleration(tpu: facts.TpuType) -> dict:
    return {"key": facts.ACCELERATORS[tpu.accelerator].taint_key, "operator": "Exists", "effect": "NoSchedule"}


def queue_objects(ctx, queue) -> None:
    """Topology, ResourceFlavor, AdmissionCheck and ClusterQueue of a TPU profile."""
    profile = ctx.profile
    tpu = facts.TPU_TYPES[profile.accelerator]
    accel = facts.ACCELERATORS[profile.accelerator]
    slicing = profile.tpu.slicing
    ctx.add_custom(kueue.topology(profile.kueue, TOPOLOGY_NAME, topology_levels(tpu, slicing)))
    # The toleration sits on the flavor too: TAS cannot see tolerations the
    # cloud injects into pods, and would place no pod on the tainted TPU nodes.
    ctx.add_custom(kueue.resource_flavor(profile.kueue, queue.resource_flavor,
                                         node_labels={accel.node_label: tpu.accelerator},
                                         topology=TOPOLOGY_NAME, tolerations=[toleration(tpu)]))
    ctx.add_custom(kueue.admission_check(profile.kueue, ADMISSION_CHECK_NAME, facts.TPU_SLICE_CONTROLLER))
    r = profile.tpu.reservation
    res = reservation(profile.accelerator, r.cubes, r.cpu_per_vm, r.memory_per_vm)
    quotas = quota(res, profile.tpu.unlimited_quota)
    ctx.add_custom(kueue.ClusterQueue(
        name=queue.cluster_queue,
        covered=QUOTA_RESOURCES,
        flavors=(kueue.FlavorQuota(queue.resource_flavor, tuple(quotas)),),
        preemption=queue.preemption.body(),
        admission_checks=(ADMISSION_CHECK_NAME,),
    ).body(profile.kueue))


# ---------------------------------------------------------------- spec checks

@dataclass(frozen=True)
class Demand:
    """TPU chips a workload takes: all of it at once, in one Kueue admission, per slice."""
    total_chips: int
    unit_chips: int
    slice_chips: int
    what: str           # e.g. "6 slices of 2x2x2"


def vm_fit_problems(pod: list[tuple[str, dict]], res: "Reservation") -> list[Problem]:
    """A pod takes one whole VM; the CPU and memory its containers request
    together ((field path, requests) each) must fit what a VM offers: the
    machine type's, or tpu.reservation.cpuPerVm/memoryPerVm."""
    out = []
    for r, per_vm in (("cpu", res.cpu_per_vm), ("memory", res.memory_per_vm)):
        parts = [(path, requests[r]) for path, requests in pod if r in requests]
        total = sum((quantity.parse(v) for _, v in parts), Decimal(0))
        if total > per_vm:
            what = " + ".join(str(v) for _, v in parts)
            out.append(Problem(f"{parts[0][0]}.{r}", f"{what} {r} per pod, but a {res.tpu.machine_type} VM offers "
                                                    f"{quantity.fmt(r, per_vm)}; one pod runs per VM"))
    return out


def fit_problem(demand: Demand, res: Reservation, slicing: str, profile_name: str) -> tuple[str, str] | None:
    """What one Kueue admission takes must fit the reservation, or it is never admitted.
    Returns (what to change: "shape" or "count", message)."""
    def cubes_for(chips: int) -> int:
        return -(-chips // cube_chips(res.tpu))

    if demand.slice_chips > res.chips:
        return "shape", (f"one slice has {demand.slice_chips} chips, but profile {profile_name!r} reserves "
                         f"{res.describe()}; {_what_fits(res, slicing)}, or raise "
                         f"tpu.reservation.cubes to {cubes_for(demand.slice_chips)}")
    if demand.unit_chips > res.chips:
        return "count", (f"{demand.what} are admitted together ({demand.unit_chips} chips), but profile "
                         f"{profile_name!r} reserves {res.describe()}; at most {res.chips // demand.slice_chips} "
                         f"such slices fit, or raise tpu.reservation.cubes to {cubes_for(demand.unit_chips)}")
    return None


def _what_fits(res: Reservation, slicing: str) -> str:
    if slicing == SUBSLICE:
        return f"shapes that fit: {', '.join(res.tpu.subslice_shapes)}"
    return f"shapes that fit: {', '.join(whole_cube_shapes(res.tpu, res.cubes)) or 'none'}"


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


