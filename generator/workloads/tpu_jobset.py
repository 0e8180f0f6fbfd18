"""A JobSet of TPU7x slices, each Job one slice (sub-slice or super-slice, as
the profile slices its cubes), every pod running the project's jax-slice-check
image (images/jax-slice-check): JAX is in the image, not pip-installed at pod
start. Pods per slice and google.com/tpu per pod come from the shape.

Kueue admits the whole JobSet (all slices) at once through the slice
AdmissionCheck; the slice shape goes on the pod template only, where the slice
controller's webhook reads it. `spec.suspend` is not written: Kueue sets it."""
from __future__ import annotations

import cdk8s_plus_33.k8s as k8s

from .. import core, embed, facts, kueue, tpu, versions
from ..spec.kinds import TpuJobset
from .common import BuildContext

CONTAINER = "slice-check"

# The image's environment contract (images/jax-slice-check/slice_check_config.py).
ENV_TOPOLOGY = "SLICE_TOPOLOGY"
ENV_GLOBAL = "SLICE_EXPECTED_GLOBAL_DEVICES"
ENV_LOCAL = "SLICE_EXPECTED_LOCAL_DEVICES"
ENV_DISTRIBUTED = "SLICE_CHECK_DISTRIBUTED"


def slice_env(shape: tpu.Shape) -> dict[str, str]:
    """What the image checks: the whole slice's devices and this pod's share."""
    return {
        ENV_TOPOLOGY: shape.text,
        ENV_GLOBAL: str(shape.devices),
        ENV_LOCAL: str(shape.devices_per_pod),
        # One pod holds the whole slice only for a one-VM sub-slice (2x2x1).
        ENV_DISTRIBUTED: "true" if shape.pods > 1 else "false",
    }


def build(ctx: BuildContext, w: TpuJobset) -> None:
    profile = ctx.profile
    accel_name = ctx.accelerator(w)
    t = facts.TPU_TYPES[accel_name]
    accel = facts.ACCELERATORS[accel_name]
    shape = tpu.Shape.parse(w.shape, t)
    ns, name = w.namespace, w.name
    container = k8s.Container(
        name=CONTAINER,
        image=ctx.image(w.image),
        env=[core.env(k, v) for k, v in slice_env(shape).items()],
        resources=core.container_resources(profile, w.resources.requests(),
                                           core.accelerator_request(accel_name, shape.tpus_per_pod)),
    )
    pod = k8s.PodTemplateSpec(
        # The shape on the pod template only: the slice controller's webhook
        # and Kueue TAS read it there (kueue#4122).
        metadata=k8s.ObjectMeta(annotations={facts.TPU_SLICE_TOPOLOGY_ANNOTATION: shape.text}),
        spec=k8s.PodSpec(
            containers=[container],
            node_selector=core.accelerator_selector(accel_name),
            tolerations=[k8s.Toleration(key=accel.taint_key, operator="Exists", effect="NoSchedule")],
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
    ))
    body = {
        "apiVersion": versions.release("jobset", ctx.spec.jobset.version)["api"],
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": ns, "labels": {
            kueue.QUEUE_LABEL: w.queue,
            kueue.PRIORITY_LABEL: ctx.spec.workload_priority_class(w.priority),
        }},
        "spec": {"replicatedJobs": [{
            "name": w.replicated_job_name,
            "replicas": w.slices,
            "template": job,
        }]},
    }
    ctx.add_custom(body)

