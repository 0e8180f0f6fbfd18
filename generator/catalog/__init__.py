"""The device catalog: every GKE accelerator the generator knows, as data.

GPU families and TPU generations keyed by device type, their machine types,
TPU topologies and slicing modes, and the node labels and taints GKE puts on
their nodes; each family and generation names its sources. No cdk8s here:
cheap to import."""
from . import labels, sources
from .gpus import GPU_FAMILIES
from .lookup import (
    ACCELERATORS,
    DEVICES,
    MACHINE_TYPES,
    UnknownName,
    accelerator,
    device,
    gpu_family,
    machine,
    tpu_generation,
    tpu_topologies,
)
from .model import (
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
from .shape import TpuShape, tilings
from .sources import Source
from .tpus import CUBE, STATIC, TPU7X_DYNAMIC, TPU_GENERATIONS, cube_rule

__all__ = [
    "ACCELERATORS",
    "CUBE",
    "DEVICES",
    "GPU_FAMILIES",
    "MACHINE_TYPES",
    "STATIC",
    "TPU7X_DYNAMIC",
    "TPU_GENERATIONS",
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
    "cube_rule",
    "device",
    "gpu_family",
    "labels",
    "machine",
    "sources",
    "tilings",
    "tpu_generation",
    "tpu_topologies",
]
