"""Flat views of the catalog and the lookups the rest of the generator uses."""
from __future__ import annotations

from collections.abc import Iterable

from .cpus import CPU_FAMILIES
from .gpus import GPU_FAMILIES
from .shape import TpuShape
from .tpus import TPU_GENERATIONS
from .types import CpuFamily, Device, GpuFamily, MachineType, TpuGeneration


class UnknownName(KeyError):
    """A name the catalog does not have; the message lists what it has."""

    def __init__(self, what: str, name: object, choices: Iterable[object]) -> None:
        super().__init__(f"{name!r} is not a known {what}; choose one of {', '.join(sorted(map(str, choices)))}")

    def __str__(self) -> str:
        return str(self.args[0])


# Every accelerator device type: GPU families and TPU generations. CPU families
# (CPU_FAMILIES) are not devices: they have no accelerator label or resource.
DEVICES: dict[str, Device] = {**GPU_FAMILIES, **TPU_GENERATIONS}
# By GKE node-label value (cloud.google.com/gke-accelerator or gke-tpu-accelerator).
ACCELERATORS: dict[str, Device] = {d.accelerator: d for d in DEVICES.values()}


def _machine_types() -> dict[str, MachineType]:
    out: dict[str, MachineType] = {}
    for f in GPU_FAMILIES.values():
        for g in f.machines:
            out[g.name] = MachineType(g.name, g.vcpus, g.memory_gb, g.gpus, f)
    for t in TPU_GENERATIONS.values():
        for m in t.machines:
            out[m.name] = MachineType(m.name, m.vcpus, m.memory_gb, m.chips, t)
    for c in CPU_FAMILIES.values():
        for n in c.machines:
            out[n.name] = MachineType(n.name, n.vcpus, n.memory_gb, 0, c)
    return out


MACHINE_TYPES: dict[str, MachineType] = _machine_types()
# GPU families attached by count, by the machine series they attach to ("N1": T4).
ATTACHED_GPUS: dict[str, GpuFamily] = {f.attaches_to: f for f in GPU_FAMILIES.values() if f.attaches_to}


def with_gpus(m: MachineType, gpus: int | None) -> MachineType:
    """A node pool's machine: the machine type, with `gpus` attached to each node where its
    series takes GPUs by count (N1: T4); any other machine type as it is (the spec checks
    refuse `gpus` there)."""
    family = ATTACHED_GPUS.get(getattr(m.device, "machine_series", ""))
    if gpus is None or family is None or not isinstance(m.device, CpuFamily):
        return m
    return MachineType(m.name, m.vcpus, m.memory_gb, gpus, family)


def pool_machine(name: str, gpus: int | None = None) -> MachineType:
    """A node pool's machine (machine type and attached GPUs); UnknownName if the type is not known."""
    return with_gpus(machine(name), gpus)


def device(key: str) -> Device:
    """A GPU family or TPU generation by device type ("l4", "v6e", "tpu7x")."""
    try:
        return DEVICES[key]
    except KeyError:
        raise UnknownName("device type", key, DEVICES) from None


def accelerator(label_value: str) -> Device:
    """The device whose nodes GKE labels with this accelerator value
    ("nvidia-h100-80gb", "tpu-v6e-slice")."""
    try:
        return ACCELERATORS[label_value]
    except KeyError:
        raise UnknownName("GKE accelerator", label_value, ACCELERATORS) from None


def machine(name: str) -> MachineType:
    """Any machine type of the catalog: GPU, TPU or CPU-only."""
    try:
        return MACHINE_TYPES[name]
    except KeyError:
        raise UnknownName("machine type", name, MACHINE_TYPES) from None


def cpu_family(key: str) -> CpuFamily:
    """A CPU-only machine family by its key ("e2-standard", "n2-standard")."""
    try:
        return CPU_FAMILIES[key]
    except KeyError:
        raise UnknownName("CPU machine family", key, CPU_FAMILIES) from None


def gpu_family(name: str) -> GpuFamily:
    """By device type or accelerator value."""
    d = DEVICES.get(name) or ACCELERATORS.get(name)
    if not isinstance(d, GpuFamily):
        raise UnknownName("GPU", name, GPU_FAMILIES)
    return d


def tpu_generation(name: str) -> TpuGeneration:
    """By device type or accelerator value."""
    d = DEVICES.get(name) or ACCELERATORS.get(name)
    if not isinstance(d, TpuGeneration):
        raise UnknownName("TPU generation", name, TPU_GENERATIONS)
    return d


def tpu_topologies(generation: str | TpuGeneration, machine_type: str) -> tuple[TpuShape, ...]:
    """The topologies a static node pool of this machine type can have."""
    gen = generation if isinstance(generation, TpuGeneration) else tpu_generation(generation)
    try:
        return gen.machine(machine_type).topologies
    except KeyError:
        raise UnknownName(f"{gen.name} machine type", machine_type,
                          [m.name for m in gen.machines]) from None
