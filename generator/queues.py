"""The Kueue objects of a profile: one ResourceFlavor per capacity source
(each node pool, the Autopilot budget, the TPU7x reservation) with the node
labels GKE puts on its nodes (from the device catalog), the ClusterQueue that
covers them with quotas computed per source, its LocalQueues, the
WorkloadPriorityClasses, and what flex-start pools and TPU7x dynamic slicing
add (a ProvisioningRequest or slice AdmissionCheck, a Topology).

Kueue copies a flavor's node labels into the pods it admits on that flavor,
so workloads state what they need (accelerator and count), and the flavor
decides where they land."""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from . import capacity, catalog, kueue, quantity, tpu
from .catalog import labels as L
from .spec import Platform, Profile
from .spec.model import NodePool

# What GKE's flex-start with queued provisioning asks of Kueue (GKE docs, "Run a
# large-scale workload with flex-start with queued provisioning": AdmissionCheck
# dws-prov on ProvisioningRequestConfig dws-config, class queued-provisioning.gke.io).
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
PROVISIONING_CLASS = "queued-provisioning.gke.io"
PROVISIONING_CHECK = "dws-prov"
PROVISIONING_CONFIG = "dws-config"
# Named as in the TPU dynamic-slicing codelab, so its kubectl commands work unchanged.
TOPOLOGY_NAME = "slice-topology"
SLICE_CHECK = "ac"
# TPU7x ClusterQueue resources, in the codelab's order, and its "no limit" quotas
# (used only where the spec asks for unlimitedQuota).
TPU_QUOTA_RESOURCES = ("google.com/tpu", "cpu", "memory")
UNLIMITED_QUOTA = {"google.com/tpu": "999999", "cpu": "999999", "memory": "999999Pi"}


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


def flavor_name(spec: Platform, profile: Profile, pool: NodePool | None) -> str:
    if pool is not None and pool.name:
        return pool.name
    name = spec.queue_for(profile.name).resource_flavor
    assert name is not None, "checked by the spec checks"
    return name


def _pool_labels(pool: NodePool, m: catalog.MachineType, pools: list[NodePool]) -> tuple[dict[str, str], tuple]:
    """What tells this pool's nodes apart: the accelerator (and TPU topology), the machine
    type, and how the nodes are provisioned."""
    labels = dict(m.device.node_labels())
    tolerations: tuple[dict, ...] = ()
    if isinstance(m.device, catalog.TpuGeneration):
        labels[L.TPU_TOPOLOGY_LABEL] = str(pool.topology)
        # TAS and Kueue cannot see tolerations GKE adds to pods: put the TPU one on the flavor.
        tolerations = (L.TPU_TAINT.toleration(),)
    labels[L.MACHINE_TYPE_LABEL] = m.name
    if pool.capacity == "flex-start":
        labels[L.FLEX_START_LABEL] = L.FLEX_START_VALUE
    elif pool.capacity == "spot":
        labels[L.SPOT_LABEL] = L.SPOT_VALUE
    elif any(p.capacity == "spot" and p.machine_type == pool.machine_type for p in pools):
        # On-demand nodes carry no spot label; beside a spot pool of the same machine,
        # select GKE's provisioning label so on-demand pods stay off the spot nodes.
        labels[L.PROVISIONING_LABEL] = L.PROVISIONING_STANDARD
    return labels, tolerations


def flavors(spec: Platform, profile: Profile) -> list[Flavor]:
    """The profile's capacity sources, in the order Kueue should try them."""
    if profile.tpu is not None:
        return [_reservation_flavor(spec, profile)]
    if profile.autopilot:
        accel = catalog.accelerator(str(profile.accelerator))
        return [Flavor(flavor_name(spec, profile, None), accel.node_labels(), capacity.budget_quota(profile))]
    out = []
    for pool, quota in capacity.capacity_sources(profile):
        m = catalog.machine(pool.machine_type)
        node_labels, tolerations = _pool_labels(pool, m, profile.pools)
        out.append(Flavor(flavor_name(spec, profile, pool), node_labels, quota, tolerations,
                          flex_start=pool.capacity == "flex-start", pool=pool))
    return out


def _reservation_flavor(spec: Platform, profile: Profile) -> Flavor:
    assert profile.tpu is not None
    gen = catalog.tpu_generation(str(profile.accelerator))
    r = profile.tpu.reservation
    res = tpu.reservation(gen, r.cubes, r.cpu_per_vm, r.memory_per_vm)
    quota = {"google.com/tpu": Decimal(res.chips), "cpu": res.cpu_per_vm * res.vms, "memory": res.memory_per_vm * res.vms}
    # The toleration sits on the flavor too: TAS cannot see tolerations the cloud
    # injects into pods, and would place no pod on the tainted TPU nodes.
    return Flavor(flavor_name(spec, profile, None), gen.node_labels(), quota, (L.TPU_TAINT.toleration(),),
                  topology=TOPOLOGY_NAME)


def _covered(fs: list[Flavor]) -> list[str]:
    return [r for r, _ in capacity.ordered({r: 0 for f in fs for r in f.quota})]


def queue_objects(ctx) -> None:
    """Every Kueue object of the profile's overlay."""
    spec, profile = ctx.spec, ctx.profile
    q = spec.queue_for(profile.name)
    k = profile.kueue
    fs = flavors(spec, profile)
    checks: list[kueue.AdmissionCheckRef] = []
    if profile.tpu is not None:
        mode = tpu.dynamic(catalog.tpu_generation(str(profile.accelerator)))
        ctx.add_custom(kueue.topology(k, TOPOLOGY_NAME, mode.topology_levels(profile.tpu.slicing == tpu.SUBSLICE)))
        ctx.add_custom(kueue.admission_check(k, SLICE_CHECK, mode.admission_check_controller))
        checks.append(kueue.AdmissionCheckRef(SLICE_CHECK))
    flex = [f.name for f in fs if f.flex_start]
    if flex:
        ctx.add_custom(kueue.provisioning_request_config(
            k, PROVISIONING_CONFIG, PROVISIONING_CLASS,
            sorted({catalog.machine(f.pool.machine_type).resource for f in fs if f.flex_start and f.pool})))
        ctx.add_custom(kueue.admission_check(k, PROVISIONING_CHECK, PROVISIONING_CONTROLLER, {
            "apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": PROVISIONING_CONFIG}))
        checks.append(kueue.AdmissionCheckRef(PROVISIONING_CHECK, tuple(flex)))
    for f in fs:
        ctx.add_custom(kueue.resource_flavor(k, f.name, node_labels=f.node_labels, topology=f.topology,
                                            tolerations=list(f.tolerations)))
    ctx.add_custom(_cluster_queue(profile, q, fs, tuple(checks)).body(k))
    for lq in q.local_queues:
        ctx.add_custom(kueue.local_queue(k, lq.namespace, lq.name, q.cluster_queue))
    for _, t in sorted(spec.priority_tiers.items()):
        w = t.workload_priority_class
        if w:
            ctx.add_custom(kueue.workload_priority_class(k, w.name, w.value, w.description))


def _cluster_queue(profile: Profile, q, fs: list[Flavor], checks: tuple) -> kueue.ClusterQueue:
    if profile.tpu is not None:
        covered = list(TPU_QUOTA_RESOURCES)
        unlimited = profile.tpu.unlimited_quota
        quotas = [(f.name, {r: UNLIMITED_QUOTA[r] if unlimited else quantity.fmt(r, f.quota[r]) for r in covered})
                  for f in fs]
    else:
        covered = _covered(fs)
        # A flavor without some covered resource holds none of it: 0, so admission fails loudly.
        quotas = [(f.name, {r: quantity.fmt(r, f.quota.get(r, Decimal(0))) for r in covered}) for f in fs]
    return kueue.ClusterQueue(
        name=q.cluster_queue,
        covered=tuple(covered),
        flavors=tuple(kueue.FlavorQuota(name, tuple(kueue.Quota(r, v[r]) for r in covered)) for name, v in quotas),
        preemption=q.preemption.body(),
        admission_checks=checks,
    )
