"""The capacity sources of a profile as Kueue sees them: one ResourceFlavor
per node pool, Autopilot budget or TPU7x reservation, with the node labels GKE
puts on its nodes (from the device catalog) and the quota it holds. Read by
the queue builders and by the spec checks (team shares, what fits), so no
cdk8s here."""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING

from ..kernel import catalog, tpu_slices
from ..kernel.catalog import node_labels as L
from . import nominal_quota, topology as tas

if TYPE_CHECKING:   # the spec checks import this module
    from .spec import NodePool, Platform, Profile

# Named as in the TPU dynamic-slicing codelab, so its kubectl commands work unchanged.
TOPOLOGY_NAME = "slice-topology"


@dataclass(frozen=True)
class Flavor:
    """A capacity source as Kueue sees it: a ResourceFlavor and the quota it holds."""
    name: str
    node_labels: dict[str, str]
    quota: dict[str, Decimal]
    tolerations: tuple[dict, ...] = ()
    flex_start: bool = False
    topology: str | None = None
    pool: NodePool | None = field(default=None, compare=False)
    annotations: tuple[tuple[str, str], ...] = ()
    capacity: str = "on-demand"   # reserved, on-demand, spot or flex-start (kinds.base.CAPACITIES)


def pool_capacity(pool: NodePool) -> str:
    return "reserved" if pool.reservation else pool.capacity


def flavor_name(spec: Platform, profile: Profile, pool: NodePool | None) -> str:
    if pool is not None and pool.name:
        return pool.name
    name = spec.queue_for(profile.name).resource_flavor
    assert name is not None, "checked by the spec checks"
    return name


def _pool_labels(pool: NodePool, m: catalog.MachineType, pools: list[NodePool],
                 shut: frozenset[str] = frozenset()) -> tuple[dict[str, str], tuple]:
    """What tells this pool's nodes apart: the accelerator (and TPU topology), the machine
    type, and how the nodes are provisioned."""
    labels = dict(m.device.node_labels())
    tolerations: tuple[dict, ...] = ()
    if isinstance(m.device, catalog.TpuGeneration):
        labels[L.TPU_TOPOLOGY_LABEL] = str(pool.topology)
        # TAS and Kueue cannot see tolerations GKE adds to pods: put the TPU one on the flavor.
        tolerations = (L.TPU_TAINT.toleration(),)
    labels[L.MACHINE_TYPE_LABEL] = m.name
    if pool.name and (pool.reservation or any(p.reservation and p.machine_type == pool.machine_type
                                              for p in pools if p is not pool)
                      or pool_capacity(pool) in shut):
        # A reserved pool, and any pool of the same machine type beside one, is told apart by
        # its node pool name, as GKE's flex-start with queued provisioning page selects its
        # "reservation" flavor (cloud.google.com/gke-nodepool: reservation-nodepool). So is a
        # pool whose kind of capacity some workload of the profile may not use (`shut`): those
        # pods are kept off it by name (capacity_affinity).
        labels[L.NODE_POOL_LABEL] = pool.name
    if pool.capacity == "flex-start":
        labels[L.FLEX_START_LABEL] = L.FLEX_START_VALUE
        # Queued-provisioning nodes carry the cloud.google.com/gke-queued NoSchedule taint; Kueue
        # adds a flavor's tolerations to the pods it admits on it (catalog: QUEUED_TAINT).
        tolerations = (*tolerations, L.QUEUED_TAINT.toleration())
    elif pool.capacity == "spot":
        # GKE labels Spot nodes cloud.google.com/gke-provisioning=spot (and gke-spot=true);
        # the provisioning label, as the kueue-cohort tutorial's flavors select it.
        labels[L.PROVISIONING_LABEL] = L.PROVISIONING_SPOT
    elif any(p.capacity == "spot" and p.machine_type == pool.machine_type for p in pools):
        # On-demand nodes carry no spot label; beside a spot pool of the same machine,
        # select GKE's provisioning label so on-demand pods stay off the spot nodes.
        labels[L.PROVISIONING_LABEL] = L.PROVISIONING_STANDARD
    return labels, tolerations


def flavors(spec: Platform, profile: Profile) -> list[Flavor]:
    """The profile's capacity sources, in the order Kueue should try them. A MultiKueue
    manager's are its workers' flavors by name, each holding their total (Kueue docs: the
    manager's quota should equal the workers' total)."""
    group = spec.manager_group(profile.name)
    if group is not None:
        return _manager_flavors(spec, group)
    if profile.tpu is not None:
        return [_reservation_flavor(spec, profile)]
    if profile.autopilot:
        accel = catalog.accelerator(str(profile.accelerator))
        return [Flavor(flavor_name(spec, profile, None), accel.node_labels(), nominal_quota.budget_quota(profile))]
    out = []
    # Reserved and on-demand capacity some workload may not use: told apart by node pool name
    # (Spot and flex-start pools carry labels of their own).
    shut = frozenset(c for w in spec.workloads_for(profile.name) for c in ("reserved", "on-demand")
                     if c not in spec.capacity_of(w))
    for pool, quota in _reserved_first(nominal_quota.pool_sources(profile)):
        m = catalog.pool_machine(pool.machine_type, pool.gpus)
        node_labels, tolerations = _pool_labels(pool, m, profile.pools, shut)
        topology: str | None = None
        annotations: tuple[tuple[str, str], ...] = ()
        if pool.topology_aware is not None and isinstance(m.device, catalog.GpuFamily):
            # TAS cannot see the GPU toleration GKE's webhook adds to pods: the flavor carries it
            # (Kueue's site/static/examples/tas/sample-gpu-queues.yaml).
            topology, tolerations = tas.TOPOLOGY_NAME, (*tolerations, L.GPU_TAINT.toleration())
            annotations = ((tas.NODES_ANNOTATION, str(pool.nodes)), (tas.BOOT_DISK_ANNOTATION, str(pool.boot_disk_gi)))
            if pool.topology_aware.nodes_per_block:
                annotations += ((tas.NODES_PER_BLOCK_ANNOTATION, str(pool.topology_aware.nodes_per_block)),)
        out.append(Flavor(flavor_name(spec, profile, pool), node_labels, quota, tolerations,
                          flex_start=pool.capacity == "flex-start", topology=topology, pool=pool,
                          annotations=annotations, capacity=pool_capacity(pool)))
    return out


def _apart(f: Flavor, kept: set[tuple[str, str]]) -> tuple[str, str] | None:
    """The first of the flavor's capacity labels that no allowed flavor carries with that value."""
    return next(((k, f.node_labels[k]) for k in (L.PROVISIONING_LABEL, L.FLEX_START_LABEL, L.NODE_POOL_LABEL)
                 if k in f.node_labels and (k, f.node_labels[k]) not in kept), None)


def capacity_affinity(fs: list[Flavor], allowed: tuple[str, ...]) -> tuple[list[dict], list[Flavor]]:
    """(node selector requirements that keep pods off the flavors whose capacity is not
    `allowed`, the flavors that stay open to them). Kueue's flavor assigner matches a pod's
    required node affinity against each flavor's nodeLabels, keys the flavors use only
    (pkg/scheduler/flavorassigner/flavorassigner.go flavorSelector, v0.12.3 to v0.19.2), and a
    NotIn matches a flavor without the key, so each requirement shuts exactly the flavors
    that carry the label: Spot by GKE's provisioning label, flex-start by its flex-start label,
    others by node pool name (flavors' nodeLabels, _pool_labels)."""
    shut = [f for f in fs if f.capacity not in allowed]
    if not shut:
        return [], list(fs)
    kept = {(k, v) for f in fs if f.capacity in allowed for k, v in f.node_labels.items()}
    values: dict[str, list[str]] = {}
    for f in shut:
        found = _apart(f, kept)
        if found is None:
            continue   # nothing tells it apart: left open (the spec checks say so)
        key, value = found
        if value not in values.setdefault(key, []):
            values[key].append(value)
    requirements: list[dict] = [{"key": k, "operator": "NotIn", "values": v} for k, v in values.items()]
    open_ = [f for f in fs if not any(f.node_labels.get(k) in v for k, v in values.items())]
    return requirements, open_


def _reserved_first(sources: list) -> list:
    """Pools in spec order, except that a pool consuming a reservation moves ahead of the
    first other pool of its accelerator (or machine family), so Kueue tries the reservation
    before on-demand, Spot or flex-start capacity of the same device (GKE's queued
    provisioning page: "first we try reservation")."""
    def device(pool) -> str:
        m = catalog.pool_machine(pool.machine_type, pool.gpus)
        return m.accelerator or m.name

    out: list = []
    for pool, quota in sources:
        if pool.reservation:
            first = next((i for i, (p, _) in enumerate(out) if device(p) == device(pool) and not p.reservation),
                         len(out))
            out.insert(first, (pool, quota))
        else:
            out.append((pool, quota))
    return out


def _manager_flavors(spec: Platform, group) -> list[Flavor]:
    out: dict[str, Flavor] = {}
    for worker in group.worker_profiles:
        if spec.manager_group(worker) is not None:
            continue   # a manager listed as a worker: refused by the spec checks
        for f in flavors(spec, spec.profiles[worker]):
            have = out.get(f.name)
            quota = {r: have.quota.get(r, Decimal(0)) + f.quota.get(r, Decimal(0))
                     for r in (have.quota.keys() | f.quota.keys())} if have else dict(f.quota)
            out[f.name] = Flavor(f.name, f.node_labels, quota, f.tolerations, topology=None, capacity=f.capacity)
    return list(out.values())


def _reservation_flavor(spec: Platform, profile: Profile) -> Flavor:
    assert profile.tpu is not None
    gen = catalog.tpu_generation(str(profile.accelerator))
    r = profile.tpu.reservation
    res = tpu_slices.reservation(gen, r.cubes, r.cpu_per_vm, r.memory_per_vm)
    quota = {"google.com/tpu": Decimal(res.chips), "cpu": res.cpu_per_vm * res.vms, "memory": res.memory_per_vm * res.vms}
    # The toleration sits on the flavor too: TAS cannot see tolerations the cloud
    # injects into pods, and would place no pod on the tainted TPU nodes.
    return Flavor(flavor_name(spec, profile, None), tpu_slices.dynamic(gen).node_labels(gen), quota,
                  (L.TPU_TAINT.toleration(),),
                  topology=TOPOLOGY_NAME, capacity="reserved")
