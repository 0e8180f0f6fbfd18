"""Topology-aware placement of GPU pod sets on GKE blocks, for `plan`: a pod set that
Kueue must keep inside one block or host (kueue.x-k8s.io/podset-required-topology on a
flavor whose Topology has GKE's levels) can never be admitted when no block of its flavor
could hold it, even empty; the rest of Kueue's quota logic is unchanged.

The flavor's block size comes from the generator's annotation (generator/model/topology.py,
NODES_PER_BLOCK_ANNOTATION; a topology-aware node pool's nodesPerBlock); nodes and
accelerators per node from its quota and instance-type label (the device catalog).

Occupancy: the workloads holding quota on the flavor are packed again, in admission order,
whole nodes per pod set: a required block (or host) in the fullest block that holds it, any
other pod set in the fullest block that holds it, else spread from the emptiest block. A
required pod set that no block holds now waits (pending, with the free nodes per block);
one that no empty block holds never fits. Approximations, said in the docs: pods of
different workloads never share a node, running pods are re-packed when others leave, and
a workload does not preempt for a block (Kueue's TAS may)."""
from __future__ import annotations

from decimal import Decimal

from ..kernel import catalog
from ..model import topology
from . import assign, overlay


def blocks(rf: overlay.ResourceFlavor, gpu_quota: Decimal | None) -> tuple[tuple[int, ...], int] | None:
    """(nodes per block, accelerators per node) of a topology-aware GPU flavor; None when
    the overlay does not say (no block size, no known machine type, no GPU quota)."""
    if rf.nodes_per_block is None or gpu_quota is None:
        return None
    m = catalog.MACHINE_TYPES.get(str(rf.node_labels.get(catalog.node_labels.MACHINE_TYPE_LABEL)))
    if m is None or not m.accelerators:
        return None
    return topology.blocks_of(int(gpu_quota) // m.accelerators, rf.nodes_per_block), m.accelerators


def _nodes(pods: int, pods_per_node: int) -> int:
    return -(-pods // pods_per_node) if pods_per_node else 0


def pack(sizes: tuple[int, ...], held: list[tuple[int, str | None]]) -> list[int]:
    """Free nodes per block after placing `held` ((nodes, required level or None), in order)."""
    free = list(sizes)
    for nodes, level in held:
        if level == topology.HOST_LABEL:
            nodes = min(nodes, 1)
        i = fits_nodes(free, nodes)
        if i is not None:
            free[i] -= nodes
            continue
        if level is not None:
            continue   # admitted before this plan could place it (e.g. pre-admitted): leave it out
        for j in sorted(range(len(free)), key=lambda k: -free[k]):
            take = min(free[j], nodes)
            free[j] -= take
            nodes -= take
    return free


def fits_nodes(free: list[int], nodes: int) -> int | None:
    """The fullest block with `nodes` free (Kueue's TAS prefers the tightest fit)."""
    fitting = [(f, i) for i, f in enumerate(free) if f >= nodes]
    return min(fitting)[1] if fitting else None


def held_on(flavor: str, rf: overlay.ResourceFlavor, holders: list[tuple[overlay.Workload, dict[str, str]]]
            ) -> list[tuple[int, str | None]]:
    """(nodes, required level) of each GPU pod set the holders have on `flavor`, in order."""
    m = catalog.MACHINE_TYPES.get(str(rf.node_labels.get(catalog.node_labels.MACHINE_TYPE_LABEL)))
    if m is None or not m.accelerators:
        return []
    out = []
    for wl, flavors in holders:
        if flavors.get(catalog.node_labels.GPU_RESOURCE) != flavor:
            continue
        for ps in wl.podsets:
            gpus = int(ps.requests.get(catalog.node_labels.GPU_RESOURCE, Decimal(0)))
            if gpus:
                out.append((_nodes(ps.count, m.accelerators // gpus), ps.annotations.get(topology.REQUIRED)))
    return out


def check(ctx: assign.Context, wl: overlay.Workload, a: assign.Assignment) -> None:
    """Force NoFit, with the reason, on a required block or host placement that no block holds:
    now (it waits), or even empty (it never fits)."""
    for i, psa in enumerate(a.podsets):
        _check_pod_set(ctx, wl.podsets[i], psa)


def _fits_empty(psa: assign.PodSetAssignment, level: str, sizes, pods_per_node: int, flavor: str) -> bool:
    """Whether the pod set fits the largest block (or a host) at all; if not, forced NoFit, with why."""
    largest = (max(sizes) if sizes else 0) if level == topology.BLOCK_LABEL else 1
    if topology.fits_in_one([largest], psa.count, pods_per_node) is not None:
        return True
    where = "block" if level == topology.BLOCK_LABEL else "host"
    psa.forced = assign.M_NOFIT
    psa.reasons.append(f"its {psa.count} pods must share one {where} (Kueue TAS, {level}), but the "
                       f"largest {where} of flavor {flavor} holds {largest} node(s), "
                       f"{largest * pods_per_node} such pods")
    return False


def _shape(ctx: assign.Context, rf, flavor: str):
    """The blocks behind a topology flavor's GPU quota (None: not a block flavor)."""
    if rf is None or not rf.topology:
        return None
    quota = next((q.nominal for f, r, q in ctx.cq.quotas() if f == flavor and r == catalog.node_labels.GPU_RESOURCE), None)
    return blocks(rf, quota)


def _check_pod_set(ctx: assign.Context, ps: overlay.PodSet, psa: assign.PodSetAssignment) -> None:
    level = ps.annotations.get(topology.REQUIRED)
    choice = psa.flavors.get(catalog.node_labels.GPU_RESOURCE)
    if level not in (topology.BLOCK_LABEL, topology.HOST_LABEL) or choice is None:
        return
    rf = ctx.flavors.get(choice.flavor)
    shape = _shape(ctx, rf, choice.flavor)
    gpus = ps.requests.get(catalog.node_labels.GPU_RESOURCE, Decimal(0))
    if shape is None or not gpus:
        return
    sizes, per_node = shape
    pods_per_node = per_node // int(gpus)
    if not _fits_empty(psa, level, sizes, pods_per_node, choice.flavor) or ctx.tas_held is None or rf is None:
        return
    where = "block" if level == topology.BLOCK_LABEL else "host"
    free = pack(sizes, held_on(choice.flavor, rf, ctx.tas_held))
    need = 1 if level == topology.HOST_LABEL else _nodes(psa.count, pods_per_node)
    if fits_nodes(free, need) is None:
        psa.forced = assign.M_NOFIT
        psa.reasons.append(f"its {psa.count} pods must share one {where}, and no {where} of flavor "
                           f"{choice.flavor} has {need} free node(s) now (free per block: "
                           f"{', '.join(map(str, free))})")
