"""Platform facts that are not device facts: GKE's node allocatable formula
and the namespaces Kueue must leave alone. Devices (machine types,
accelerators, TPU topologies, slicing modes, node labels) live in the device
catalog, generator/catalog.

Below them, a read-only view of the catalog in the older shape the planner and
the validator's TPU rules still read (ACCELERATORS, TPU_TYPES, TPU_* labels);
derived from the catalog, so no fact is written twice."""
from __future__ import annotations

from dataclasses import dataclass

from . import catalog

# GKE's published node reservation (docs: "Standard cluster architecture /
# node allocatable"). Tiers are (upper bound of the band, fraction reserved).
CPU_RESERVATION_TIERS = ((1, 0.06), (2, 0.01), (4, 0.005), (None, 0.0025))       # cores
MEMORY_RESERVATION_TIERS = ((4, 0.25), (8, 0.20), (16, 0.10), (128, 0.06), (None, 0.02))  # GiB
MEMORY_EVICTION_MIB = 100
# Boot disk: eviction threshold plus system reservation
# min(50% of disk, 6GiB + 35% of disk, 100GiB).
EPHEMERAL_EVICTION_FRACTION = 0.10

# Namespaces Kueue must never manage: GKE's and the controllers' own. The
# pod integration would otherwise gate their pods (kueue#7649, #9482).
SYSTEM_NAMESPACES = (
    "kube-system", "kube-public", "kube-node-lease", "kueue-system",
    "gke-managed-system", "gke-managed-cim", "gmp-system", "gmp-public",
    "jobset-system", "lws-system",
)


# ---------------------------------------------------------------- view of the catalog

@dataclass(frozen=True)
class Accelerator:
    name: str             # value of the node label below
    node_label: str       # label GKE puts on nodes with this accelerator
    resource: str         # extended resource pods request
    taint_key: str        # taint GKE puts on accelerator node pools


@dataclass(frozen=True)
class TpuType:
    """A dynamically sliced TPU generation on its one machine type."""
    accelerator: str
    machine_type: str
    chips_per_vm: int
    devices_per_chip: int
    cube: tuple[int, ...]
    subslice_shapes: tuple[str, ...]
    vcpus_per_vm: int
    memory_gib_per_vm: int


ACCELERATORS = {d.accelerator: Accelerator(d.accelerator, d.node_label, d.resource, d.taint.key)
                for d in catalog.DEVICES.values()}


def _tpu_type(g: catalog.TpuGeneration) -> TpuType:
    assert g.dynamic is not None
    (m,) = g.machines
    return TpuType(g.accelerator, m.name, m.chips, g.jax_devices_per_chip, g.dynamic.cube.dims,
                   tuple(s.text for s in g.dynamic.subslice_shapes), m.vcpus, m.memory_gb)


TPU_TYPES = {g.accelerator: _tpu_type(g) for g in catalog.TPU_GENERATIONS.values() if g.dynamic is not None}
_DYNAMIC = catalog.TPU7X_DYNAMIC
TPU_BLOCK_LABEL = _DYNAMIC.block_label
TPU_PARTITION_LABEL = _DYNAMIC.partition_label_template
TPU_SLICE_TOPOLOGY_ANNOTATION = _DYNAMIC.slice_topology_annotation
TPU_SLICE_LABEL = _DYNAMIC.slice_label
TPU_SLICE_CONTROLLER = _DYNAMIC.admission_check_controller
HOSTNAME_LABEL = catalog.labels.HOSTNAME_LABEL
