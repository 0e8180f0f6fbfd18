"""The device catalog: every GKE accelerator the generator knows, and the
CPU-only machine families node pools can have, as data.

GPU families and TPU generations keyed by device type, their machine types,
TPU topologies and slicing modes, and the node labels and taints GKE puts on
their nodes; CPU families (no accelerator, no extended resource, no taint) and
their machine types; each family and generation names its sources. No cdk8s
here: cheap to import."""
from . import gpudirect, node_labels, sources
from .cpus import CPU_FAMILIES
from .gpus import GPU_FAMILIES
from .lookup import (
    ACCELERATORS,
    ATTACHED_GPUS,
    DEVICES,
    MACHINE_TYPES,
    UnknownName,
    accelerator,
    cpu_family,
    device,
    gpu_family,
    machine,
    pool_machine,
    tpu_generation,
    tpu_topologies,
    with_gpus,
)
from .shape import TpuShape, tilings
from .sources import Source
from .tpus import CUBE, STATIC, TPU7X_DYNAMIC, TPU_GENERATIONS, V6E_SUBSLICING, cube_rule
from .types import (
    CpuFamily,
    CpuMachine,
    Device,
    DynamicSlicing,
    GpuFamily,
    GpuMachine,
    MachineType,
    Slicing,
    StaticSlicing,
    TpuGeneration,
    TpuMachine,
)

__all__ = [
    "gpudirect",
    "node_labels",
    "sources",
    "ACCELERATORS",
    "CPU_FAMILIES",
    "CUBE",
    "DEVICES",
    "ATTACHED_GPUS",
    "GPU_FAMILIES",
    "MACHINE_TYPES",
    "STATIC",
    "TPU7X_DYNAMIC",
    "V6E_SUBSLICING",
    "TPU_GENERATIONS",
    "CpuFamily",
    "CpuMachine",
    "Device",
    "DynamicSlicing",
    "GpuFamily",
    "GpuMachine",
    "MachineType",
    "Slicing",
    "Source",
    "StaticSlicing",
    "TpuGeneration",
    "TpuMachine",
    "TpuShape",
    "UnknownName",
    "accelerator",
    "cpu_family",
    "cube_rule",
    "device",
    "gpu_family",
    "labels",
    "machine",
    "pool_machine",
    "sources",
    "tilings",
    "tpu_generation",
    "tpu_topologies",
    "with_gpus",
]
