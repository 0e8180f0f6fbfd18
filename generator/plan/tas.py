"""Topology-aware placement of GPU pod sets on GKE blocks, for `plan`: a pod set that
Kueue must keep inside one block or host (kueue.x-k8s.io/podset-required-topology on a
flavor whose Topology has GKE's levels) can never be admitted when no block of its flavor
could hold it, even empty; the rest of Kueue's quota logic is unchanged.

The flavor's block size comes from the generator's annotation (generator/tas.py,
NODES_PER_BLOCK_ANNOTATION; a topology-aware node pool's nodesPerBlock); nodes and
accelerators per node from its quota and instance-type label (the device catalog). Which
block each admitted workload occupies over time is not simulated: a workload that fits an
empty block is admitted on quota alone."""
from __future__ import annotations

from decimal import Decimal

from .. import catalog, tas
from . import assign, model


def blocks(rf: model.ResourceFlavor, gpu_quota: Decimal | None) -> tuple[tuple[int, ...], int] | None:
    """(nodes per block, accelerators per node) of a topology-aware GPU flavor; None when
    the overlay does not say (no block size, no known machine type, no GPU quota)."""
    if rf.nodes_per_block is None or gpu_quota is None:
        return None
    m = catalog.MACHINE_TYPES.get(str(rf.node_labels.get(catalog.labels.MACHINE_TYPE_LABEL)))
    if m is None or not m.accelerators:
        return None
    return tas.blocks_of(int(gpu_quota) // m.accelerators, rf.nodes_per_block), m.accelerators


def check(ctx: assign.Context, wl: model.Workload, a: assign.Assignment) -> None:
    """Force NoFit, with the reason, on a required block or host placement no empty block holds."""
    for i, psa in enumerate(a.podsets):
        ps = wl.podsets[i]
        level = ps.annotations.get(tas.REQUIRED)
        choice = psa.flavors.get(catalog.labels.GPU_RESOURCE)
        if level not in (tas.BLOCK_LABEL, tas.HOST_LABEL) or choice is None:
            continue
        rf = ctx.flavors.get(choice.flavor)
        quota = next((q.nominal for f, r, q in ctx.cq.quotas() if f == choice.flavor and r == catalog.labels.GPU_RESOURCE),
                     None)
        shape = blocks(rf, quota) if rf is not None and rf.topology else None
        gpus = ps.requests.get(catalog.labels.GPU_RESOURCE, Decimal(0))
        if shape is None or not gpus:
            continue
        sizes, per_node = shape
        pods_per_node = per_node // int(gpus)
        largest = (max(sizes) if sizes else 0) if level == tas.BLOCK_LABEL else 1
        where = "block" if level == tas.BLOCK_LABEL else "host"
        if tas.fits_in_one([largest], psa.count, pods_per_node) is None:
            psa.forced = assign.M_NOFIT
            psa.reasons.append(f"its {psa.count} pods must share one {where} (Kueue TAS, {level}), but the "
                               f"largest {where} of flavor {choice.flavor} holds {largest} node(s), "
                               f"{largest * pods_per_node} such pods")
