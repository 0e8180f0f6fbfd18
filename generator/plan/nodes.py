"""The nodes behind each topology-aware (TAS) ResourceFlavor, for `plan` (plan/tas.py places
pods on them). Two sources:

- Node objects in the input (`plan --nodes nodes.yaml`, a `kubectl get nodes -o yaml` dump,
  or Nodes anywhere in the stream): a flavor's nodes are those that are Ready and
  schedulable, carry every nodeLabel of the flavor and every level label of its Topology
  (Kueue v0.17.4 pkg/cache/scheduler/tas_nodes_cache.go nodesCache.sync,
  pkg/util/tas/node.go NodeMatchesFlavor), with their status.allocatable and spec.taints.
- Otherwise the nodes the platform declares: the generator writes a topology-aware pool's
  node count, boot disk and nodes per block on its flavor (model/topology.py annotations).
  Each node gets GKE's allocatable for its machine type (model/nominal_quota.py
  node_allocatable), the machine's accelerators, 110 pods (kernel/gke.py) and GKE's GPU
  taint; nodes are numbered into blocks of nodes-per-block (all in one block when the pool
  does not say), one sub-block per block, one node per host, and kubernetes.io/hostname
  their name. Without the node-count annotation (an overlay written by hand) the count is
  the flavor's accelerators (or CPUs) in every ClusterQueue's and Cohort's nominal quota
  together, over one node's. These are the planner's assumptions (docs/plan-details.md).

Every ClusterQueue using a flavor places on the same nodes (Kueue's TAS cache is per flavor)."""
from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from ..kernel import catalog, demand, gke, quantity
from ..kernel.catalog import node_labels as L
from ..model import nominal_quota, topology as spec_topology
from . import tas

Notes = list[str]
# A flavor's declared nodes the plan builds at most (a bound on time and memory, like
# simulate.MAX_WORKLOADS); more are left out, with a note.
MAX_DECLARED_NODES = 5_000


def read_node(obj: dict, bad: Callable[[str, str], None]) -> tas.NodeInfo | None:
    """A Node object as TAS sees it; None when it is not Ready or is unschedulable (Kueue
    leaves such nodes out)."""
    meta = _map(obj.get("metadata"))
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        bad("metadata.name", "a Node needs a name")
        return None
    labels, spec, status = _map(meta.get("labels")), _map(obj.get("spec")), _map(obj.get("status"))
    if spec.get("unschedulable") is True or not _ready(status):
        return None
    alloc = _allocatable(status, bad)
    taints = tuple(t for t in spec.get("taints") or () if isinstance(t, dict)) \
        if isinstance(spec.get("taints"), list) else ()
    return tas.NodeInfo(name, {str(k): str(v) for k, v in labels.items()}, alloc, taints)


def _allocatable(status: dict, bad: Callable[[str, str], None]) -> dict[str, Decimal]:
    alloc: dict[str, Decimal] = {}
    for res, v in _map(status.get("allocatable")).items():
        try:
            alloc[str(res)] = quantity.parse(v)
        except (ValueError, ArithmeticError, TypeError):
            bad(f"status.allocatable.{res}", f"{v!r} is not a quantity")
    return alloc


def _map(v) -> dict:
    return v if isinstance(v, dict) else {}


def _ready(status: dict) -> bool:
    """utiltas.IsNodeStatusConditionTrue(conditions, NodeReady)."""
    conds = status.get("conditions")
    return isinstance(conds, list) and any(isinstance(c, dict) and c.get("type") == "Ready" and
                                           c.get("status") == "True" for c in conds)


def matches_flavor(node: tas.NodeInfo, flavor_labels: dict, levels: tuple[str, ...]) -> bool:
    """NodeMatchesFlavor."""
    return all(node.labels.get(k) == str(v) for k, v in flavor_labels.items()) and \
        all(level in node.labels for level in levels)


def snapshots(cluster, nodes: list[tas.NodeInfo] | None, notes: Notes, rules=None) -> dict[str, tas.FlavorSnapshot]:
    """The domain tree of every TAS flavor: from the Node objects when the input has any,
    else from the platform's declared pools. None when the release (plan/releases.py) or the
    configuration's featureGates turn TopologyAwareScheduling off."""
    out: dict[str, tas.FlavorSnapshot] = {}
    if not cluster.config.gate("TopologyAwareScheduling", rules.tas if rules else True):
        return out
    mixed = cluster.config.gate("TASProfileMixed", rules.tas_profile_mixed if rules else True)
    for name, rf in sorted(cluster.flavors.items()):
        if not rf.topology or rf.tpu_generation() is not None:
            continue                # TPU slices are placed by packer.py
        levels = cluster.topologies.get(rf.topology)
        if not levels:
            notes.append(f"ResourceFlavor {name} names Topology {rf.topology}, which the input does not have: "
                          "Kueue keeps its ClusterQueues inactive; the plan places nothing on it")
            continue
        if nodes:
            mine = [n for n in nodes if matches_flavor(n, rf.node_labels, levels)]
        else:
            mine = declared_nodes(cluster, rf, levels, notes)
        out[name] = tas.FlavorSnapshot(name, rf.topology, levels, tuple(rf.tolerations), mine, mixed)
        for node, usage in running_pods(cluster):
            out[name].add_non_tas_usage(node, usage)
    return out


def running_pods(cluster) -> list[tuple[str, dict]]:
    """Pods of the input already bound to a node (spec.nodeName) and not finished, with their
    requests and one `pods`: what Kueue's non-TAS pod cache counts on their nodes
    (tas_non_tas_pod_cache.go). Pods Kueue manages are Workloads of the plan instead."""
    out = []
    for o in cluster.owners:
        spec, status = _map(o.obj.get("spec")), _map(o.obj.get("status"))
        node = spec.get("nodeName")
        if o.kind != "Pod" or not isinstance(node, str) or status.get("phase") in ("Succeeded", "Failed"):
            continue
        d = demand.of(o.obj)
        if d.queue is not None:
            continue
        usage: dict[str, Decimal] = {tas.PODS: Decimal(1)}
        for ps in d.podsets:
            for r, v in ps.requests.items():
                usage[r] = usage.get(r, Decimal(0)) + v
        out.append((node, usage))
    return out


def declared_nodes(cluster, rf, levels: tuple[str, ...], notes: Notes) -> list[tas.NodeInfo]:
    """The nodes of a topology-aware pool, as the platform declares them."""
    machine = catalog.MACHINE_TYPES.get(str(rf.node_labels.get(L.MACHINE_TYPE_LABEL)))
    if machine is None:
        notes.append(f"TAS flavor {rf.name}: no known machine type ({L.MACHINE_TYPE_LABEL}) and no Node objects "
                     "in the input, so it has no nodes in this plan; give them with --nodes")
        return []
    count = rf.nodes if rf.nodes is not None else _nodes_from_quota(cluster, rf.name, machine)
    if rf.nodes is None:
        notes.append(f"TAS flavor {rf.name}: {count} {machine.name} node(s), counted from the nominal quota of "
                     "every ClusterQueue and Cohort using it (the overlay does not say; --nodes gives them)")
    if count > MAX_DECLARED_NODES:
        notes.append(f"TAS flavor {rf.name}: {count} nodes declared; the plan places on the first "
                     f"{MAX_DECLARED_NODES} only")
        count = MAX_DECLARED_NODES
    alloc = dict(nominal_quota.node_allocatable(machine, rf.boot_disk_gi or 100))
    alloc[tas.PODS] = Decimal(gke.MAX_PODS_PER_NODE)
    taints: tuple[dict, ...] = ()
    if machine.resource is not None and machine.accelerators:
        alloc[machine.resource] = Decimal(machine.accelerators)
        if machine.resource == L.GPU_RESOURCE:
            taints = ({"key": L.GPU_TAINT.key, "value": L.GPU_TAINT.value, "effect": L.GPU_TAINT.effect},)
    per_block = rf.nodes_per_block or max(count, 1)
    out = []
    for i in range(count):
        block, host = divmod(i, per_block)
        name = f"{rf.name}-b{block}-n{host}"
        values = {spec_topology.BLOCK_LABEL: f"{rf.name}-b{block}",
                  spec_topology.SUBBLOCK_LABEL: f"{rf.name}-b{block}-s0",
                  spec_topology.HOST_LABEL: f"{name}-host", L.HOSTNAME_LABEL: name}
        labels = {**{str(k): str(v) for k, v in rf.node_labels.items()},
                  **{lv: values.get(lv, rf.name) for lv in levels}}
        out.append(tas.NodeInfo(name, labels, alloc, taints))
    return out


def _nodes_from_quota(cluster, flavor: str, machine: catalog.MachineType) -> int:
    """Every ClusterQueue's and Cohort's nominal quota of the flavor, in nodes."""
    res = machine.resource if machine.resource is not None and machine.accelerators else "cpu"
    per_node = Decimal(machine.accelerators) if res != "cpu" else Decimal(machine.vcpus)
    holders = list(cluster.cluster_queues.values()) + list(cluster.cohorts.values())
    total = sum((q.nominal for h in holders for f, r, q in h.quotas() if f == flavor and r == res), Decimal(0))
    return int(-(-total // per_node)) if per_node else 0
