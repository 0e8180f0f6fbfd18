"""Hardware facts, as data. One table per fact family; nothing else in the
generator hard-codes a machine shape, an accelerator label or a chip count.

Sources: GKE machine-type docs (G2 series), GKE accelerator docs, GKE node
allocatable docs, TPU7x (Ironwood) dynamic slicing docs.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Accelerator:
    name: str             # value of the node label below
    node_label: str       # label GKE puts on nodes with this accelerator
    resource: str         # extended resource pods request
    taint_key: str        # taint GKE puts on accelerator node pools


@dataclass(frozen=True)
class MachineType:
    name: str
    vcpus: int
    memory_gib: int
    accelerator: str
    accelerators: int


ACCELERATORS = {
    "nvidia-l4": Accelerator("nvidia-l4", "cloud.google.com/gke-accelerator", "nvidia.com/gpu", "nvidia.com/gpu"),
    "tpu7x": Accelerator("tpu7x", "cloud.google.com/gke-tpu-accelerator", "google.com/tpu", "google.com/tpu"),
}

# G2 (L4) machine types: vCPUs, memory (GB as GKE publishes them, used as GiB
# by the tutorial's quotas), GPUs per VM.
MACHINE_TYPES = {m.name: m for m in (
    MachineType("g2-standard-4", 4, 16, "nvidia-l4", 1),
    MachineType("g2-standard-8", 8, 32, "nvidia-l4", 1),
    MachineType("g2-standard-12", 12, 48, "nvidia-l4", 1),
    MachineType("g2-standard-16", 16, 64, "nvidia-l4", 1),
    MachineType("g2-standard-24", 24, 96, "nvidia-l4", 2),
    MachineType("g2-standard-32", 32, 128, "nvidia-l4", 1),
    MachineType("g2-standard-48", 48, 192, "nvidia-l4", 4),
    MachineType("g2-standard-96", 96, 384, "nvidia-l4", 8),
)}

# GKE's published node reservation (docs: "Standard cluster architecture /
# node allocatable"). Tiers are (upper bound of the band, fraction reserved).
CPU_RESERVATION_TIERS = ((1, 0.06), (2, 0.01), (4, 0.005), (None, 0.0025))       # cores
MEMORY_RESERVATION_TIERS = ((4, 0.25), (8, 0.20), (16, 0.10), (128, 0.06), (None, 0.02))  # GiB
MEMORY_EVICTION_MIB = 100
# Boot disk: eviction threshold plus system reservation
# min(50% of disk, 6GiB + 35% of disk, 100GiB).
EPHEMERAL_EVICTION_FRACTION = 0.10


@dataclass(frozen=True)
class TpuType:
    accelerator: str            # cloud.google.com/gke-tpu-accelerator value
    machine_type: str
    chips_per_vm: int
    devices_per_chip: int       # JAX devices (TensorCores) per chip
    cube: tuple[int, int, int]  # chips per dimension of one cube
    subslice_shapes: tuple[str, ...]  # dynamic sub-slices inside one cube
    vcpus_per_vm: int           # machine type's vCPUs (capacity, not allocatable)
    memory_gib_per_vm: int      # machine type's memory; Compute Engine's "GB" are GiB


TPU_TYPES = {
    "tpu7x": TpuType(
        accelerator="tpu7x",
        machine_type="tpu7x-standard-4t",
        chips_per_vm=4,
        devices_per_chip=2,
        cube=(4, 4, 4),
        subslice_shapes=("2x2x1", "2x2x2", "2x2x4", "2x4x4"),
        # Cloud TPU docs, "TPU7x (Ironwood)" system architecture table: 224 vCPUs
        # and 960 GB RAM per 4-chip VM.
        vcpus_per_vm=224,
        memory_gib_per_vm=960,
    ),
}

# Node labels GKE sets for TPU slicing; Kueue Topology levels are built from these.
TPU_BLOCK_LABEL = "cloud.google.com/gce-topology-block"
TPU_PARTITION_LABEL = "cloud.google.com/gke-tpu-partition-{shape}-id"
TPU_SLICE_TOPOLOGY_ANNOTATION = "cloud.google.com/gke-tpu-slice-topology"
TPU_SLICE_LABEL = "cloud.google.com/gke-tpu-slice"   # one value per formed slice (LWS exclusive topology)
TPU_SLICE_CONTROLLER = "accelerator.gke.io/slice"    # AdmissionCheck controllerName of GKE's slice controller
HOSTNAME_LABEL = "kubernetes.io/hostname"

# Namespaces Kueue must never manage: GKE's and the controllers' own. The
# pod integration would otherwise gate their pods (kueue#7649, #9482).
SYSTEM_NAMESPACES = (
    "kube-system", "kube-public", "kube-node-lease", "kueue-system",
    "gke-managed-system", "gke-managed-cim", "gmp-system", "gmp-public",
    "jobset-system", "lws-system",
)
