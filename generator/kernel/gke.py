"""Platform facts that are not device facts: GKE's node allocatable formula
and the namespaces Kueue must leave alone. Devices (machine types,
accelerators, TPU topologies, slicing modes, node labels) live in the device
catalog, generator/kernel/catalog."""
from __future__ import annotations

# GKE's published node reservation (docs: "Standard cluster architecture /
# node allocatable"). Tiers are (upper bound of the band, fraction reserved).
CPU_RESERVATION_TIERS = ((1, 0.06), (2, 0.01), (4, 0.005), (None, 0.0025))       # cores
MEMORY_RESERVATION_TIERS = ((4, 0.25), (8, 0.20), (16, 0.10), (128, 0.06), (None, 0.02))  # GiB
MEMORY_EVICTION_MIB = 100
# Boot disk: eviction threshold plus system reservation
# min(50% of disk, 6GiB + 35% of disk, 100GiB).
EPHEMERAL_EVICTION_FRACTION = 0.10
# Pods a Standard node runs at most unless the cluster sets another maximum (docs: "Configure
# maximum Pods per node": 110 by default); Kueue's TAS counts `pods` against it.
MAX_PODS_PER_NODE = 110

# Namespaces Kueue must never manage: GKE's and the controllers' own. The
# pod integration would otherwise gate their pods (kueue#7649, #9482).
SYSTEM_NAMESPACES = (
    "kube-system", "kube-public", "kube-node-lease", "kueue-system",
    "gke-managed-system", "gke-managed-cim", "gmp-system", "gmp-public",
    "jobset-system", "lws-system",
)
