"""The catalog's types: GPU families and their machine types, TPU generations,
their machine types and slicing modes, CPU-only machine families, and the flat
machine-type view."""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import ClassVar

from . import node_labels as labels
from .shape import TpuShape, tilings
from .sources import Source

# ---------------------------------------------------------------- GPUs


@dataclass(frozen=True)
class GpuMachine:
    """One machine type, as Compute Engine's table publishes it."""
    name: str
    vcpus: int
    memory_gb: int                      # "Instance memory (GB)" as published
    gpus: int
    local_ssd_gib: int | None = None    # Local SSD the machine type comes with (bundled)
    max_local_ssd_gib: int | None = None  # optional Local SSD it can take, where a maximum is published


@dataclass(frozen=True)
class GpuFamily:
    """One GKE accelerator (cloud.google.com/gke-accelerator value) and the machine
    types it comes on."""
    key: str                 # device type, e.g. "h100-80gb"
    accelerator: str         # cloud.google.com/gke-accelerator value
    model: str               # GPU model as the docs name it
    gpu_memory_gb: int       # per GPU
    gpu_memory_type: str | None   # e.g. "HBM3"; None where the page read does not say
    machine_series: str      # Compute Engine machine series, e.g. "A3 High"
    machine_family: str | None   # cloud.google.com/machine-family value (see labels.MACHINE_FAMILY_LABEL); None: not read
    autopilot: bool          # listed among Autopilot's GPU types
    machines: tuple[GpuMachine, ...]
    source: Source
    local_ssd_optional: bool = False   # "Local SSD supported: Yes" without a bundled size
    # A machine series (e.g. "N1") whose general-purpose machine types take these GPUs by count
    # (a node pool's `gpus`); None where the machine type comes with its GPUs.
    attaches_to: str | None = None

    resource = labels.GPU_RESOURCE
    node_label = labels.GPU_ACCELERATOR_LABEL
    taint = labels.GPU_TAINT
    kind = "gpu"

    def node_labels(self) -> dict[str, str]:
        return {self.node_label: self.accelerator}


# ---------------------------------------------------------------- TPUs


@dataclass(frozen=True)
class TpuMachine:
    name: str
    chips: int                              # TPU chips per VM
    vcpus: int
    memory_gb: int                          # RAM per VM as the Cloud TPU docs publish it
    topologies: tuple[TpuShape, ...]        # what a node pool of this machine type can have

    def allows(self, shape: TpuShape) -> bool:
        return shape in self.topologies

    def vms(self, shape: TpuShape) -> int:
        """VMs (nodes, one pod each) a slice of this shape takes."""
        return shape.vms(self.chips)


@dataclass(frozen=True)
class StaticSlicing:
    """A node pool created with one topology: its VMs form one slice, and GKE
    labels every node with the accelerator and the topology. No admission check."""
    name: str = "static"
    accelerator_label: str = labels.TPU_ACCELERATOR_LABEL
    topology_label: str = labels.TPU_TOPOLOGY_LABEL
    admission_check_controller: str | None = None

    def node_labels(self, generation: TpuGeneration, shape: TpuShape) -> dict[str, str]:
        return {self.accelerator_label: generation.accelerator, self.topology_label: shape.text}


@dataclass(frozen=True)
class DynamicSlicing:
    """Slices formed on demand inside reserved capacity, placed by Kueue's topology-aware
    scheduling on the partition labels GKE puts on each node. TPU7x (GKE's slice controller):
    sub-slices are fixed partitions inside one cube, super-slices whole cubes, and Kueue admits
    through the controller's AdmissionCheck. v6e sub-slicing (xpk --sub-slicing): partitions of
    a whole 16x16 node pool, no AdmissionCheck, pods name their partition level themselves."""
    cube: TpuShape
    subslice_shapes: tuple[TpuShape, ...]
    partition_label_template: str
    block_label: str | None             # a Topology level above the cube (None: the cube is the top)
    slice_label: str | None             # LWS exclusive topology of one slice (None: no LWS serving)
    slice_topology_annotation: str
    admission_check_controller: str | None   # None: Kueue admits without a slice AdmissionCheck
    machine_type: str                   # the machine type the reserved cubes are made of
    host_label: str = labels.HOSTNAME_LABEL
    name: str = "dynamic"
    superslicing: bool = True           # whole cubes stitched together into one slice
    cube_topology_label: bool = False   # nodes (and the flavor) carry the pool's topology label = cube
    # Pods carry kueue.x-k8s.io/podset-required-topology: <partition label of their shape>.
    required_topology_annotation: bool = False
    min_kueue: str | None = None        # the oldest Kueue release that can admit these slices

    def partition_label(self, shape: TpuShape) -> str:
        return self.partition_label_template.format(shape=shape.text)

    def is_subslice(self, shape: TpuShape) -> bool:
        return shape in self.subslice_shapes

    def is_whole_cubes(self, shape: TpuShape) -> bool:
        """Whole cubes, sides in non-decreasing order: the controller refuses
        8x4x4 and wants 4x4x8."""
        return shape.is_multiple_of(self.cube) and shape.is_nondecreasing

    def cubes(self, shape: TpuShape) -> int:
        return shape.units(self.cube)

    def kind(self, shape: TpuShape) -> str | None:
        """"subslice", "superslice", or None for a shape the controller cannot form."""
        if self.is_subslice(shape):
            return "subslice"
        if self.superslicing and self.is_whole_cubes(shape):
            return "superslice"
        return None

    def whole_cube_shapes(self, max_cubes: int, limit: int = 6) -> list[TpuShape]:
        """The smallest super-slice shapes of at most max_cubes cubes (at most `limit`)."""
        return tilings(self.cube, max_cubes)[:limit]

    def topology_levels(self, subslicing: bool, top: TpuShape | None = None) -> list[str]:
        """Kueue Topology levels: block (where there is one), the cube (or `top`, a pool
        topology that holds the partitions), then (sub-slicing) each partition inside it
        from the largest sub-slice down, then the host."""
        top = top or self.cube
        levels = [self.block_label] if self.block_label else []
        levels.append(self.partition_label(top))
        if subslicing:
            inside = [s for s in self.subslice_shapes if s != top and len(s.dims) == len(top.dims)
                      and all(a <= b for a, b in zip(s.dims, top.dims, strict=True))]
            levels += [self.partition_label(s) for s in sorted(inside, key=lambda s: -s.chips)]
        return levels + [self.host_label]

    def node_labels(self, generation: TpuGeneration) -> dict[str, str]:
        """What the reserved capacity's flavor selects: the accelerator, and the pools'
        topology where the nodes carry it."""
        out = generation.node_labels()
        if self.cube_topology_label:
            out[labels.TPU_TOPOLOGY_LABEL] = self.cube.text
        return out


Slicing = StaticSlicing | DynamicSlicing


@dataclass(frozen=True)
class TpuGeneration:
    key: str                          # device type, e.g. "v6e"
    name: str                         # as the Cloud TPU docs title it
    accelerator: str                  # cloud.google.com/gke-tpu-accelerator value
    dims: int                         # topology dimensionality: 2 or 3
    tensorcores_per_chip: int
    jax_devices_per_chip: int         # devices JAX shows per chip
    machines: tuple[TpuMachine, ...]
    slicing: tuple[Slicing, ...]      # static first
    autopilot: bool | None            # None: the docs read do not say
    sources: tuple[Source, ...]
    cube: TpuShape | None = None      # 4x4x4 for 3-D generations
    max_chips: int | None = None      # largest slice the docs give

    resource = labels.TPU_RESOURCE
    node_label = labels.TPU_ACCELERATOR_LABEL
    taint = labels.TPU_TAINT
    kind = "tpu"

    @property
    def source(self) -> Source:
        return self.sources[0]

    @property
    def static(self) -> StaticSlicing:
        return next(s for s in self.slicing if isinstance(s, StaticSlicing))

    @property
    def dynamic(self) -> DynamicSlicing | None:
        return next((s for s in self.slicing if isinstance(s, DynamicSlicing)), None)

    def dynamic_machine(self) -> TpuMachine:
        """The machine type dynamic slices are made of (TPU7x: tpu7x-standard-4t, not
        the single-chip tpu7x-standard-1t)."""
        mode = self.dynamic
        if mode is None:
            raise ValueError(f"{self.name} has no dynamic slicing")
        return self.machine(mode.machine_type)

    def machine(self, name: str) -> TpuMachine:
        for m in self.machines:
            if m.name == name:
                return m
        raise KeyError(f"{name!r} is not a {self.name} machine type; "
                       f"choose one of {', '.join(m.name for m in self.machines)}")

    def shape(self, text: object) -> TpuShape:
        """Parse a topology of this generation's dimensionality."""
        return TpuShape.parse(text, self.dims)

    def machines_for(self, shape: TpuShape) -> tuple[TpuMachine, ...]:
        """Machine types a node pool of this topology can use (v6e 2x4: one 8-chip
        VM or two 4-chip VMs)."""
        return tuple(m for m in self.machines if m.allows(shape))

    def node_labels(self) -> dict[str, str]:
        return {self.node_label: self.accelerator}


Device = GpuFamily | TpuGeneration


# ---------------------------------------------------------------- CPUs


@dataclass(frozen=True)
class CpuMachine:
    name: str
    vcpus: int
    memory_gb: Decimal       # as published; N1 has fractions (n1-standard-1: 3.75)


@dataclass(frozen=True)
class CpuFamily:
    """A Compute Engine machine series without accelerators (e2-standard-4, n2-standard-8):
    its nodes carry no accelerator label, no extended resource and no taint, so a
    node pool of it gives its flavor cpu, memory and ephemeral-storage only."""
    key: str                         # e.g. "n2-standard"
    machine_series: str              # Compute Engine machine series, e.g. "N2"
    machine_family: str | None       # cloud.google.com/machine-family value, where a GKE page gives it
    machines: tuple[CpuMachine, ...]
    sources: tuple[Source, ...]

    kind = "cpu"
    # What GPU families and TPU generations have and a CPU machine has not.
    accelerator: ClassVar[None] = None
    resource: ClassVar[None] = None
    node_label: ClassVar[None] = None
    taint: ClassVar[None] = None

    @property
    def source(self) -> Source:
        return self.sources[0]

    def node_labels(self) -> dict[str, str]:
        """No accelerator label: the machine type label tells its nodes apart."""
        return {}


@dataclass(frozen=True)
class MachineType:
    """Any machine type a node pool can have, flat: what a node pool of it offers."""
    name: str
    vcpus: int
    memory_gb: int | Decimal
    accelerators: int                  # GPUs or TPU chips per VM; 0 for CPU machine types
    device: Device | CpuFamily = field(repr=False)

    @property
    def accelerator(self) -> str | None:
        """The GKE accelerator label value; None for a CPU machine type."""
        return self.device.accelerator

    @property
    def resource(self) -> str | None:
        """The extended resource its accelerators are requested as; None for a CPU machine type."""
        return self.device.resource

