"""ClusterQueue nominal quotas, computed from a hardware profile.

Standard: node pool size times machine shape, either raw capacity (as the
tutorial) or GKE node allocatable (what pods can actually be scheduled on, so
Kueue never admits a pod that then sits Pending). Autopilot: the budget."""
from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from ..kernel import catalog, gke
from ..kernel.quantity import parse

if TYPE_CHECKING:   # types only: the spec model imports this module's users
    from .spec import NodePool

GiB = Decimal(2**30)
MiB = Decimal(2**20)

# Order of resources in a ClusterQueue, as the tutorial lists them.
RESOURCE_ORDER = ("cpu", "memory", "nvidia.com/gpu", "google.com/tpu", "ephemeral-storage")


def _tiered(total: Decimal, tiers) -> Decimal:
    """Sum of fraction x band over GKE's reservation bands."""
    reserved, lower = Decimal(0), Decimal(0)
    for upper, fraction in tiers:
        top = total if upper is None else min(total, Decimal(upper))
        if top > lower:
            reserved += (top - lower) * Decimal(str(fraction))
        if upper is None or total <= upper:
            break
        lower = Decimal(upper)
    return reserved


def node_allocatable(machine: catalog.MachineType, boot_disk_gi: int) -> dict[str, Decimal]:
    cpu = Decimal(machine.vcpus) - _tiered(Decimal(machine.vcpus), gke.CPU_RESERVATION_TIERS)
    mem_gib = Decimal(machine.memory_gb)   # Compute Engine "GB", used as GiB (as the tutorials' quotas do)
    memory = (mem_gib - _tiered(mem_gib, gke.MEMORY_RESERVATION_TIERS)) * GiB - gke.MEMORY_EVICTION_MIB * MiB
    disk = Decimal(boot_disk_gi) * GiB
    system = min(disk * Decimal("0.5"), 6 * GiB + disk * Decimal("0.35"), 100 * GiB)
    ephemeral = disk - system - disk * Decimal(str(gke.EPHEMERAL_EVICTION_FRACTION))
    # Round down to what Kubernetes reports: millicores and whole MiB.
    return {
        "cpu": (cpu * 1000).to_integral_value(rounding="ROUND_FLOOR") / 1000,
        "memory": (memory / MiB).to_integral_value(rounding="ROUND_FLOOR") * MiB,
        "ephemeral-storage": (ephemeral / MiB).to_integral_value(rounding="ROUND_FLOOR") * MiB,
    }


def node_capacity(machine: catalog.MachineType, boot_disk_gi: int) -> dict[str, Decimal]:
    return {
        "cpu": Decimal(machine.vcpus),
        "memory": Decimal(machine.memory_gb) * GiB,
        "ephemeral-storage": Decimal(boot_disk_gi) * GiB,
    }


def pool_quota(pool, basis: str) -> dict[str, Decimal]:
    """What a node pool gives its flavor: nodes x the machine's shape (capacity or
    GKE allocatable), and its accelerators (none on a CPU machine type)."""
    machine = catalog.pool_machine(pool.machine_type, pool.gpus)
    per_node = (node_allocatable if basis == "allocatable" else node_capacity)(machine, pool.boot_disk_gi)
    quota = {r: v * pool.nodes for r, v in per_node.items()}
    if machine.resource is not None:
        quota[machine.resource] = Decimal(machine.accelerators * pool.nodes)
    return quota


def budget_quota(profile) -> dict[str, Decimal]:
    """Autopilot: the budget, as given."""
    return {r: parse(v) for r, v in profile.budget.quotas().items()}


def pool_sources(profile) -> list[tuple[NodePool, dict[str, Decimal]]]:
    """(node pool, quota) per node pool of a Standard GPU or CPU profile."""
    return [(pool, pool_quota(pool, profile.quota_basis)) for pool in profile.pools]


def ordered(quota: dict) -> list[tuple[str, Decimal]]:
    rank = {r: i for i, r in enumerate(RESOURCE_ORDER)}
    return sorted(quota.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))
