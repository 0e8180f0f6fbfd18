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

from ..kernel import catalog, kueue_api, tpu_slices
from ..model import Profile, topology
from ..model.cluster_queues import cluster_queues
from ..model.flavors import TOPOLOGY_NAME, Flavor, flavors
from . import multikueue_objects

# What GKE's flex-start with queued provisioning asks of Kueue (GKE docs, "Run a
# large-scale workload with flex-start with queued provisioning": AdmissionCheck
# dws-prov on ProvisioningRequestConfig dws-config, class queued-provisioning.gke.io).
PROVISIONING_CLASS = "queued-provisioning.gke.io"
PROVISIONING_CHECK = "dws-prov"
PROVISIONING_CONFIG = "dws-config"
# Named as in the TPU dynamic-slicing codelab, so its kubectl commands work unchanged.
SLICE_CHECK = "ac"


def queue_objects(ctx) -> None:
    """Every Kueue object of the profile's overlay."""
    spec, profile = ctx.spec, ctx.profile
    k = profile.kueue
    fs = flavors(spec, profile)
    checks = _slice_check(ctx, profile)
    group = spec.manager_group(profile.name)
    if group is not None:
        checks += multikueue_objects.manager_objects(ctx, group)
    if spec.worker_groups(profile.name):
        multikueue_objects.worker_objects(ctx, spec.worker_groups(profile.name))
    checks += _provisioning_check(ctx, k, fs)
    if any(f.topology == topology.TOPOLOGY_NAME for f in fs):
        ctx.add_custom(kueue_api.topology(k, topology.TOPOLOGY_NAME, list(topology.LEVELS)))
    for f in fs:
        ctx.add_custom(kueue_api.resource_flavor(k, f.name, node_labels=f.node_labels, topology=f.topology,
                                            tolerations=list(f.tolerations), annotations=dict(f.annotations)))
    for body in cluster_queues(spec, profile, fs, tuple(checks)):
        ctx.add_custom(body)
    _local_queues(ctx, spec, profile)
    for _, t in sorted(spec.priority_tiers.items()):
        w = t.workload_priority_class
        if w:
            ctx.add_custom(kueue_api.workload_priority_class(k, w.name, w.value, w.description))


def _slice_check(ctx, profile: Profile) -> list[kueue_api.AdmissionCheckRef]:
    """A TPU reservation profile's slice Topology, and the slice AdmissionCheck where its slicing
    mode has a controller (TPU7x; v6e sub-slicing has none); nothing elsewhere."""
    if profile.tpu is None:
        return []
    k = profile.kueue
    mode = tpu_slices.dynamic(catalog.tpu_generation(str(profile.accelerator)))
    ctx.add_custom(kueue_api.topology(k, TOPOLOGY_NAME, mode.topology_levels(profile.tpu.slicing == tpu_slices.SUBSLICE)))
    if mode.admission_check_controller is None:
        return []
    ctx.add_custom(kueue_api.admission_check(k, SLICE_CHECK, mode.admission_check_controller))
    return [kueue_api.AdmissionCheckRef(SLICE_CHECK)]


def _provisioning_check(ctx, k, fs: list[Flavor]) -> list[kueue_api.AdmissionCheckRef]:
    """The ProvisioningRequestConfig and AdmissionCheck that flex-start flavors need; none without them."""
    flex = [f.name for f in fs if f.flex_start]
    if not flex:
        return []
    ctx.add_custom(kueue_api.provisioning_request_config(
        k, PROVISIONING_CONFIG, PROVISIONING_CLASS,
        # A CPU pool has no accelerator resource for the ProvisioningRequest to manage.
        sorted({r for f in fs if f.flex_start and f.pool
                if (r := catalog.pool_machine(f.pool.machine_type, f.pool.gpus).resource) is not None})))
    ctx.add_custom(kueue_api.admission_check(k, PROVISIONING_CHECK, kueue_api.PROVISIONING_CONTROLLER, {
        "apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": PROVISIONING_CONFIG}))
    return [kueue_api.AdmissionCheckRef(PROVISIONING_CHECK, tuple(flex))]


def _local_queues(ctx, spec, profile: Profile) -> None:
    """The profile's own LocalQueues, then one per team namespace pointing at the team's ClusterQueue."""
    k = profile.kueue
    q = spec.queue_for(profile.name)
    for lq in q.local_queues:
        ctx.add_custom(kueue_api.local_queue(k, lq.namespace, lq.name, q.cluster_queue))
    for t in spec.teams_for(profile.name):
        for ns in t.namespaces:
            ctx.add_custom(kueue_api.local_queue(k, ns, t.queue_name, t.cq_name))


