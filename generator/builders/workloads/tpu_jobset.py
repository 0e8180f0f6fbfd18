"""A JobSet of TPU slices, each Job one slice, every pod running the project's
jax-slice-check image (images/jax-slice-check): JAX is in the image, not
pip-installed at pod start. Pods per slice and google.com/tpu per pod come
from the shape and the machine type.

Two kinds of slices:
- TPU7x dynamic slicing (a reservation in cubes): Kueue admits the whole
  JobSet through the slice AdmissionCheck; the shape goes on the pod template
  only, where the slice controller's webhook reads it.
- Static node pools (v5e, v5p, v6e, TPU7x): each pool's VMs form one slice of
  its topology; pods select the accelerator and topology labels, and the
  JobSet places each Job in a node pool of its own (JobSet exclusive placement,
  `alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool`,
  as GKE's "TPU Multislice with JobSet and Kueue" tutorial does).

`spec.suspend` is not written: Kueue sets it."""
from __future__ import annotations

from ...kernel import catalog, kueue_api, tpu_slices, versions
from ...kernel.catalog import node_labels
from ...model import topology as tas
from ...model.kinds import TpuJobset
from ...model.kinds.tpu_common import slice_of
from ...model.kinds.tpu_jobset import FailurePolicy
from .. import core, embed, k8s
from .common import BuildContext

CONTAINER = "slice-check"

# The image's environment contract (images/jax-slice-check/slice_check_config.py).
ENV_TOPOLOGY = "SLICE_TOPOLOGY"
ENV_GLOBAL = "SLICE_EXPECTED_GLOBAL_DEVICES"
ENV_LOCAL = "SLICE_EXPECTED_LOCAL_DEVICES"
ENV_DISTRIBUTED = "SLICE_CHECK_DISTRIBUTED"
# JobSet exclusive placement: one Job per node pool (JobSet docs, "Exclusive Job Placement").
EXCLUSIVE_TOPOLOGY = "alpha.jobset.sigs.k8s.io/exclusive-topology"


def slice_env(shape: tpu_slices.Slice) -> dict[str, str]:
    """What the image checks: the whole slice's devices and this pod's share."""
    return {
        ENV_TOPOLOGY: shape.text,
        ENV_GLOBAL: str(shape.devices),
        ENV_LOCAL: str(shape.devices_per_pod),
        # One pod holds the whole slice only for a one-VM slice (2x2x1, 1x1, ...).
        ENV_DISTRIBUTED: "true" if shape.pods > 1 else "false",
    }


def slice_placement(accel_name: str, shape: tpu_slices.Slice, dynamic: bool) -> tuple[dict, dict, list[k8s.Toleration]]:
    """Pod-template annotations, node selector and tolerations of one slice's pods."""
    selector = core.accelerator_selector(accel_name)
    annotations: dict = {}
    if dynamic:
        # The shape on the pod template only: the slice controller's webhook
        # and Kueue TAS read it there (kueue#4122).
        mode = tpu_slices.dynamic(shape.generation)
        annotations[mode.slice_topology_annotation] = shape.text
        if mode.required_topology_annotation:
            # v6e sub-slicing: the pods name their partition level (xpk create_sub_slicing_annotations).
            annotations[tas.REQUIRED] = mode.partition_label(shape.shape)
        selector.update(mode.node_labels(shape.generation))
    else:
        selector[node_labels.TPU_TOPOLOGY_LABEL] = shape.text
    toleration = catalog.node_labels.TPU_TAINT.toleration()
    return annotations, selector, [k8s.Toleration(key=toleration["key"], operator=toleration["operator"],
                                                  effect=toleration["effect"])]


def jobset_metadata(ctx: BuildContext, w, one_job_per_pool: bool) -> dict:
    """Name, queue and priority labels, and (static TPU pools) one Job per node pool."""
    return {"name": w.name, "namespace": w.namespace, "labels": {
        kueue_api.QUEUE_LABEL: w.queue,
        kueue_api.PRIORITY_LABEL: ctx.spec.workload_priority_class(w.priority),
    }, **({"annotations": {EXCLUSIVE_TOPOLOGY: node_labels.NODE_POOL_LABEL}} if one_job_per_pool else {})}


def pod_failure_policy(policy: FailurePolicy) -> k8s.PodFailurePolicy | None:
    """A Job of a JobSet: a pod that fails with the DisruptionTarget condition (node
    maintenance, eviction, Spot reclaim) fails its Job by the pod failure policy, so the
    JobSet's rule below tells it from a failure of the program. Kubernetes allows a pod
    failure policy only with restartPolicy Never (a plain Job restarting pods in place,
    OnFailure, gets none)."""
    if not policy.ignore_disruptions:
        return None
    disrupted = k8s.PodFailurePolicyOnPodConditionsPattern(type="DisruptionTarget", status="True")
    return k8s.PodFailurePolicy(rules=[k8s.PodFailurePolicyRule(action="FailJob", on_pod_conditions=[disrupted])])


def failure_policy(policy: FailurePolicy) -> dict:
    """JobSet failurePolicy, as JobSet's host-maintenance-event-model example writes it
    (site/static/examples/failure-policy/): disruptions restart the JobSet without counting
    (RestartJobSetAndIgnoreMaxRestarts on the Job failure reason PodFailurePolicy); any other
    failure restarts it, at most maxRestarts times (no rule matches: RestartJobSet)."""
    out: dict = {"maxRestarts": policy.max_restarts}
    if policy.ignore_disruptions:
        out["rules"] = [{"name": "disruptions", "action": "RestartJobSetAndIgnoreMaxRestarts",
                         "onJobFailureReasons": ["PodFailurePolicy"]}]
    return out


def build(ctx: BuildContext, w: TpuJobset) -> None:
    profile = ctx.profile
    accel_name = ctx.accelerator(w)
    shape = slice_of(w, ctx.checks)
    assert shape is not None, "checked by the spec checks"
    dynamic = profile.tpu is not None
    container = k8s.Container(
        name=CONTAINER,
        image=ctx.image(w.image),
        env=[core.env(k, v) for k, v in slice_env(shape).items()],
        resources=core.container_resources(profile, w.resources.requests(),
                                           core.accelerator_request(accel_name, shape.tpus_per_pod)),
    )
    annotations, selector, tolerations = slice_placement(accel_name, shape, dynamic)
    metadata = k8s.ObjectMeta(annotations=annotations) if annotations else None
    pod = k8s.PodTemplateSpec(
        metadata=metadata,
        spec=k8s.PodSpec(
            containers=[container],
            node_selector=selector,
            tolerations=tolerations,
            restart_policy="Never",
        ),
    )
    job = embed.job_template(k8s.JobSpec(
        parallelism=shape.pods,
        completions=shape.pods,
        # JobSet defaults it too; GKE derives TPU_WORKER_ID from the completion index.
        completion_mode="Indexed",
        backoff_limit=w.backoff_limit,
        template=pod,
        pod_failure_policy=pod_failure_policy(w.failure_policy),
    ))
    body = {
        "apiVersion": versions.release("jobset", ctx.spec.jobset.version)["api"],
        "kind": "JobSet",
        "metadata": jobset_metadata(ctx, w, not dynamic),
        "spec": {"failurePolicy": failure_policy(w.failure_policy), "replicatedJobs": [{
            "name": w.replicated_job_name,
            "replicas": w.slices,
            "template": job,
        }]},
    }
    ctx.add_custom(body)

