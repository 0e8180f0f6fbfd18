"""CPU-only machine families on GKE (no accelerator), keyed by device type.

For node pools that run CPU work: batch Jobs sharing a Kueue cohort on an
on-demand and a Spot pool (GKE tutorial "Implement a Job queuing system with
quota sharing between namespaces"), or the CPU side of a mixed cluster.

Machine types, vCPUs and memory: Compute Engine "VM instance pricing"
(sources.VM_INSTANCE_PRICING), one "standard machine types" table per series,
memory in GiB. Cross-checked where they overlap against the general-purpose
machine family page (E2 standard table) and Cloud Workstations' list of machine
types (every E2, N1 and C3 standard row; N2 and N2D up to 32 vCPUs).

Only the standard shapes are here; highmem, highcpu, shared-core and custom
machine types are left out. A machine type of a known family is one line."""
from __future__ import annotations

from decimal import Decimal

from .sources import GENERAL_PURPOSE_MACHINES, GKE_NODE_POOL_AUTO_CREATION, VM_INSTANCE_PRICING, WORKSTATIONS_MACHINE_TYPES
from .types import CpuFamily, CpuMachine


def M(name: str, vcpus: int, memory_gb: int | str) -> CpuMachine:
    """One table row; memory as the table writes it ("3.75" stays exact)."""
    return CpuMachine(name, vcpus, Decimal(memory_gb))


_FAMILIES = (
    # E2 standard: 4 GiB per vCPU, up to 32 vCPUs. Same rows in the general-purpose
    # page's "E2 standard" table (vCPUs, Memory (GB)).
    CpuFamily(
        key="e2-standard", machine_series="E2", machine_family=None,
        sources=(VM_INSTANCE_PRICING, GENERAL_PURPOSE_MACHINES, WORKSTATIONS_MACHINE_TYPES),
        machines=(
            M("e2-standard-2", 2, 8),
            M("e2-standard-4", 4, 16),
            M("e2-standard-8", 8, 32),
            M("e2-standard-16", 16, 64),
            M("e2-standard-32", 32, 128),
        )),
    # N2 standard: 4 GiB per vCPU, up to 128 vCPUs. GKE "About node pool
    # auto-creation": "If you request the N2 machine series, GKE adds the
    # cloud.google.com/machine-family: n2 node label to each of the nodes."
    CpuFamily(
        key="n2-standard", machine_series="N2", machine_family="n2",
        sources=(VM_INSTANCE_PRICING, WORKSTATIONS_MACHINE_TYPES, GKE_NODE_POOL_AUTO_CREATION),
        machines=(
            M("n2-standard-2", 2, 8),
            M("n2-standard-4", 4, 16),
            M("n2-standard-8", 8, 32),
            M("n2-standard-16", 16, 64),
            M("n2-standard-32", 32, 128),
            M("n2-standard-48", 48, 192),
            M("n2-standard-64", 64, 256),
            M("n2-standard-80", 80, 320),
            M("n2-standard-96", 96, 384),
            M("n2-standard-128", 128, 512),
        )),
    # N2D standard (AMD): 4 GiB per vCPU, up to 224 vCPUs.
    CpuFamily(
        key="n2d-standard", machine_series="N2D", machine_family=None,
        sources=(VM_INSTANCE_PRICING, WORKSTATIONS_MACHINE_TYPES),
        machines=(
            M("n2d-standard-2", 2, 8),
            M("n2d-standard-4", 4, 16),
            M("n2d-standard-8", 8, 32),
            M("n2d-standard-16", 16, 64),
            M("n2d-standard-32", 32, 128),
            M("n2d-standard-48", 48, 192),
            M("n2d-standard-64", 64, 256),
            M("n2d-standard-80", 80, 320),
            M("n2d-standard-96", 96, 384),
            M("n2d-standard-128", 128, 512),
            M("n2d-standard-224", 224, 896),
        )),
    # C3 standard: 4 GiB per vCPU. The table's c3-standard-192-metal (192 vCPUs,
    # 768 GiB) is a bare-metal shape; whether GKE node pools take it was not
    # read, so it is left out.
    CpuFamily(
        key="c3-standard", machine_series="C3", machine_family=None,
        sources=(VM_INSTANCE_PRICING, WORKSTATIONS_MACHINE_TYPES),
        machines=(
            M("c3-standard-4", 4, 16),
            M("c3-standard-8", 8, 32),
            M("c3-standard-22", 22, 88),
            M("c3-standard-44", 44, 176),
            M("c3-standard-88", 88, 352),
            M("c3-standard-176", 176, 704),
        )),
    # N1 standard: "Standard machine types have 3.75 GiB of memory per vCPU";
    # n1-standard-96 is "Skylake Platform only".
    CpuFamily(
        key="n1-standard", machine_series="N1", machine_family=None,
        sources=(VM_INSTANCE_PRICING, WORKSTATIONS_MACHINE_TYPES),
        machines=(
            M("n1-standard-1", 1, "3.75"),
            M("n1-standard-2", 2, "7.5"),
            M("n1-standard-4", 4, 15),
            M("n1-standard-8", 8, 30),
            M("n1-standard-16", 16, 60),
            M("n1-standard-32", 32, 120),
            M("n1-standard-64", 64, 240),
            M("n1-standard-96", 96, 360),
        )),
)

CPU_FAMILIES: dict[str, CpuFamily] = {f.key: f for f in _FAMILIES}
