"""Kueue topology-aware scheduling (TAS) on GKE GPU pools: the Topology on GKE's node
labels, and what fits inside one block or host. Read by the flavors (which name the
Topology), the spec checks (a required block that can never hold a workload) and plan
(which packs workloads block by block). No cdk8s here.

GKE's topology node labels and their source are in the catalog (catalog/labels.py); xpk's
Kueue Topology lists them outermost first, with kubernetes.io/hostname last. Kueue's
TAS example (site/static/examples/tas/sample-gpu-queues.yaml) puts the GPU toleration on the
flavor: TAS does not see tolerations a cloud webhook adds to pods, and Kueue honours node
taints only when kubernetes.io/hostname is the lowest level."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..kernel.catalog import node_labels
from . import hardware

if TYPE_CHECKING:
    from .spec import NodePool

TOPOLOGY_NAME = "gke-default"     # xpk's name for the same Topology
BLOCK_LABEL = node_labels.TOPOLOGY_BLOCK_LABEL
SUBBLOCK_LABEL = node_labels.TOPOLOGY_SUBBLOCK_LABEL
HOST_LABEL = node_labels.TOPOLOGY_HOST_LABEL
LEVELS = (BLOCK_LABEL, SUBBLOCK_LABEL, HOST_LABEL, node_labels.HOSTNAME_LABEL)
# Kueue's podset annotations (apis/kueue/v1beta2/topology_types.go at v0.17.4).
REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE_REQUIRED = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
GROUP_NAME = "kueue.x-k8s.io/podset-group-name"
# Written by the generator on a topology-aware flavor so that `plan` knows the block size
# (Kueue does not read it; nodes are counted from the spec's topologyAware.nodesPerBlock).
NODES_PER_BLOCK_ANNOTATION = "platform-generator/nodes-per-block"
# Also written on a topology-aware flavor: the pool's node count and boot disk, so that `plan`
# builds the flavor's nodes (plan/nodes.py) whatever share of them each ClusterQueue's quota holds.
NODES_ANNOTATION = "platform-generator/nodes"
BOOT_DISK_ANNOTATION = "platform-generator/boot-disk-gi"


@dataclass(frozen=True)
class Blocks:
    """One flavor's nodes as blocks: how many nodes each block holds and how many pods of a
    given size fit on one node."""
    sizes: tuple[int, ...]          # nodes per block, every block of the pool
    gpus_per_node: int              # the machine's accelerators

    def pods_per_node(self, gpus_per_pod: int) -> int:
        return self.gpus_per_node // gpus_per_pod if gpus_per_pod else 0


def blocks_of(nodes: int, nodes_per_block: int) -> tuple[int, ...]:
    """A pool of `nodes` in blocks of `nodes_per_block`: whole blocks, then the rest."""
    full, rest = divmod(nodes, nodes_per_block)
    return (nodes_per_block,) * full + ((rest,) if rest else ())


def pool_blocks(pool: NodePool) -> Blocks | None:
    """The pool's blocks, when the spec says how many nodes each holds."""
    m = hardware.machine(pool)
    aware = pool.topology_aware
    if m is None or aware is None or aware.nodes_per_block is None or not m.accelerator:
        return None
    return Blocks(blocks_of(pool.nodes, aware.nodes_per_block), m.accelerators)


def fits_in_one(free_nodes: list[int], pods: int, pods_per_node: int) -> int | None:
    """Index of the block Kueue's required placement would use: among the blocks that hold
    every pod, the one with the fewest free nodes (the tightest fit); None if none holds them."""
    need = -(-pods // pods_per_node) if pods_per_node else None
    if need is None:
        return None
    fitting = [(free, i) for i, free in enumerate(free_nodes) if free >= need]
    return min(fitting)[1] if fitting else None


def never_fits(pools: list[NodePool], pods: int, gpus_per_pod: int, level: str) -> str | None:
    """Why a required placement at `level` can never be admitted on these pools (None when it
    can, or when the pools do not say how big their blocks are)."""
    best: tuple[int, str] | None = None
    for pool in pools:
        m = hardware.machine(pool)
        if m is None:
            continue
        per_node = m.accelerators // gpus_per_pod if gpus_per_pod else 0
        if level == "host":
            capacity, unit = per_node, f"one {m.name} host holds {per_node} such pod(s)"
        elif level == "block" and pool.topology_aware and pool.topology_aware.nodes_per_block:
            nodes = min(pool.topology_aware.nodes_per_block, pool.nodes)
            capacity, unit = nodes * per_node, (f"the largest block of pool {pool.name or pool.machine_type} "
                                                f"has {nodes} nodes ({nodes * per_node} such pods)")
        else:
            return None   # sub-blocks (and blocks of unknown size): nothing to say before it runs
        if best is None or capacity > best[0]:
            best = (capacity, unit)
    if best is None or pods <= best[0]:
        return None
    return (f"{pods} pods of {gpus_per_pod} GPU(s) must share one {level}, but {best[1]}: it could never be "
            f"admitted; use `mode: preferred`, fewer nodes, or a larger {level}")
