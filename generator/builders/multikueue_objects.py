"""The objects of a MultiKueue group (Kueue docs: tasks/manage/setup_multikueue).

On the manager: one MultiKueueCluster per worker, reached through the
kubeconfig Secret the spec names (key `kubeconfig` in the Kueue namespace,
created out of band: never in Git), a MultiKueueConfig listing them in
preference order, and the AdmissionCheck (controller kueue.x-k8s.io/multikueue)
its ClusterQueue uses; the queue's quota is its workers' total per flavor
(generator/model/flavors.py).

On each worker: the manager's LocalQueues, mirrored into the worker's own
ClusterQueue (MultiKueue sends a job to the LocalQueue of the same name in the
same namespace), and the identity the manager's kubeconfig uses: the
ServiceAccount, ClusterRole and binding of Kueue's create-multikueue-kubeconfig.sh
(v0.19.2, which adds `update` on workloads that the controller needs) and an
empty service-account-token Secret that Kubernetes fills in."""
from __future__ import annotations

from ..kernel import kueue_api
from ..model.multikueue import MultiKueueGroup
from . import cdk, core, k8s

KUEUE_NAMESPACE = "kueue-system"
# Names as Kueue's create-multikueue-kubeconfig.sh creates them.
SERVICE_ACCOUNT = "multikueue-sa"
ROLE = "multikueue-sa-role"
BINDING = "multikueue-sa-crb"
_VERBS = ["create", "delete", "get", "list", "watch"]
# What the manager does on a worker, per dispatched integration (create-multikueue-kubeconfig.sh).
_KIND_RULES = {
    "batch/job": [("batch", "jobs", _VERBS), ("batch", "jobs/status", ["get"])],
    "jobset.x-k8s.io/jobset": [("jobset.x-k8s.io", "jobsets", _VERBS), ("jobset.x-k8s.io", "jobsets/status", ["get"])],
}
_COMMON_RULES = [
    ("", "pods", _VERBS),
    ("kueue.x-k8s.io", "workloads", _VERBS + ["update", "patch"]),
    ("kueue.x-k8s.io", "workloads/status", ["get", "patch", "update"]),
    ("kueue.x-k8s.io", "clusterqueues", ["get", "list", "watch"]),
    ("kueue.x-k8s.io", "localqueues", ["get", "list", "watch"]),
]


def manager_objects(ctx, group: MultiKueueGroup) -> list[kueue_api.AdmissionCheckRef]:
    """The manager's MultiKueue objects; returns the admission check its ClusterQueue uses."""
    k = ctx.profile.kueue
    for w in group.workers:
        ctx.add_custom(kueue_api.multikueue_cluster(k, w.profile, w.kubeconfig_secret))
    ctx.add_custom(kueue_api.multikueue_config(k, group.name, group.worker_profiles))
    ctx.add_custom(kueue_api.admission_check(k, group.name, kueue_api.MULTIKUEUE_CONTROLLER, {
        "apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": group.name}))
    return [kueue_api.AdmissionCheckRef(group.name)]


def worker_objects(ctx, groups: list[MultiKueueGroup]) -> None:
    """What a worker of these groups needs: their managers' LocalQueues and the managers' identity."""
    spec, profile = ctx.spec, ctx.profile
    own = spec.queue_for(profile.name)
    have = {(lq.namespace, lq.name) for lq in own.local_queues}
    for group in groups:
        for lq in spec.queue_for(group.manager).local_queues:
            if (lq.namespace, lq.name) not in have:
                ctx.add_custom(kueue_api.local_queue(profile.kueue, lq.namespace, lq.name, own.cluster_queue))
                have.add((lq.namespace, lq.name))
    kinds = sorted({kind for group in groups for kind in group.job_kinds})
    rules = [rule for kind in kinds for rule in _KIND_RULES[kind]] + _COMMON_RULES
    cdk.typed(k8s.KubeServiceAccount, ctx.chart, f"ServiceAccount.{KUEUE_NAMESPACE}.{SERVICE_ACCOUNT}",
                           metadata=core.meta(SERVICE_ACCOUNT, KUEUE_NAMESPACE))
    cdk.typed(k8s.KubeClusterRole, ctx.chart, f"ClusterRole._.{ROLE}", metadata=core.meta(ROLE), rules=[
        k8s.PolicyRule(api_groups=[group_], resources=[resource], verbs=list(verbs))
        for group_, resource, verbs in rules])
    cdk.typed(k8s.KubeClusterRoleBinding,
        ctx.chart, f"ClusterRoleBinding._.{BINDING}", metadata=core.meta(BINDING),
        role_ref=k8s.RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=ROLE),
        subjects=[k8s.Subject(kind="ServiceAccount", name=SERVICE_ACCOUNT, namespace=KUEUE_NAMESPACE)])
    # Kubernetes fills in the token; the kubeconfig built from it stays out of Git.
    cdk.typed(k8s.KubeSecret, ctx.chart, f"Secret.{KUEUE_NAMESPACE}.{SERVICE_ACCOUNT}",
                   metadata=core.meta(SERVICE_ACCOUNT, KUEUE_NAMESPACE,
                                      annotations={"kubernetes.io/service-account.name": SERVICE_ACCOUNT}),
                   type="kubernetes.io/service-account-token")
