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
from ..errors import Problem
from . import WorkloadKind
from .common import BuildContext

DEFAULT_JOB = "job-jax"
CONTAINER = "slice-check"

# The image's environment contract (images/jax-slice-check/slice_check_config.py).
ENV_TOPOLOGY = "SLICE_TOPOLOGY"
ENV_GLOBAL = "SLICE_EXPECTED_GLOBAL_DEVICES"
ENV_LOCAL = "SLICE_EXPECTED_LOCAL_DEVICES"
ENV_DISTRIBUTED = "SLICE_CHECK_DISTRIBUTED"


def _tpu_type(profile: dict) -> facts.TpuType:
    return facts.TPU_TYPES[profile["accelerator"]]


def demand(w: dict, tpu_type: facts.TpuType) -> tpu.Demand | None:
    try:
        shape = tpu.Shape.parse(w["shape"], tpu_type)
    except ValueError:
        return None
    # Kueue admits a JobSet whole: every slice at once.
    chips = w["slices"] * shape.chips
    return tpu.Demand(chips, chips, shape.chips, f"{w['slices']} slice{'s' if w['slices'] != 1 else ''} of {shape.text}")


tpu.DEMANDS["tpu-jobset"] = demand


def check(w: dict, profile: dict, profile_name: str) -> list[Problem]:
    if "tpu" not in profile:
        return []   # reported on the profile
    t = _tpu_type(profile)
    bad = tpu.shape_problem(w["shape"], profile["tpu"]["slicing"], t, profile_name)
    if bad:
        return [Problem("shape", bad)]
    out = []
    misfit = tpu.fit_problem(demand(w, t), profile, profile_name)
    if misfit:
        out.append(Problem("shape" if misfit[0] == "shape" else "slices", misfit[1]))
    job = w.get("replicatedJobName", DEFAULT_JOB)
    long_name = tpu.slice_name_problem(w["namespace"], "JobSet", w["name"], job, w["slices"] - 1,
                                       "the namespace, the workload name or replicatedJobName")
    if long_name:
        out.append(Problem("name", long_name))
    out += tpu.vm_fit_problems([("resources", w["resources"])], tpu.reservation(profile["accelerator"], profile["tpu"]))
    return out


def slice_env(shape: tpu.Shape) -> dict[str, str]:
    """What the image checks: the whole slice's devices and this pod's share."""
    return {
        ENV_TOPOLOGY: shape.text,
        ENV_GLOBAL: str(shape.devices),
        ENV_LOCAL: str(shape.devices_per_pod),
        # One pod holds the whole slice only for a one-VM sub-slice (2x2x1).
        ENV_DISTRIBUTED: "true" if shape.pods > 1 else "false",
    }


def build(ctx: BuildContext, w: dict) -> None:
    profile = ctx.profile
    t = facts.TPU_TYPES[profile.accelerator]
    accel = profile.accel
    shape = tpu.Shape.parse(w["shape"], t)
    ns, name = w["namespace"], w["name"]
    container = k8s.Container(
        name=CONTAINER,
        image=ctx.image(w["image"]),
        env=[core.env(k, v) for k, v in slice_env(shape).items()],
        resources=core.container_resources(profile, w["resources"], shape.tpus_per_pod),
    )
    pod = k8s.PodTemplateSpec(
        # The shape on the pod template only: the slice controller's webhook
        # and Kueue TAS read it there (kueue#4122).
        metadata=k8s.ObjectMeta(annotations={facts.TPU_SLICE_TOPOLOGY_ANNOTATION: shape.text}),
        spec=k8s.PodSpec(
            containers=[container],
            node_selector=core.accelerator_selector(profile),
            tolerations=[k8s.Toleration(key=accel.taint_key, operator="Exists", effect="NoSchedule")],
            restart_policy="Never",
        ),
    )
    job = embed.job_template(k8s.JobSpec(
        parallelism=shape.pods,
        completions=shape.pods,
        # JobSet defaults it too; GKE derives TPU_WORKER_ID from the completion index.
        completion_mode="Indexed",
        backoff_limit=w.get("backoffLimit", 10),
        template=pod,
    ))
    body = {
        "apiVersion": versions.release("jobset", ctx.spec.jobset_version)["api"],
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": ns, "labels": {
            kueue.QUEUE_LABEL: w["queue"],
            kueue.PRIORITY_LABEL: ctx.spec.workload_priority_class(w["priority"]),
        }},
        "spec": {"replicatedJobs": [{
            "name": w.get("replicatedJobName", DEFAULT_JOB),
            "replicas": w["slices"],
            "template": job,
        }]},
    }
    problems = tpu.lint([body])
    if problems:  # the checks above should make this impossible: a generator bug
        raise AssertionError("; ".join(problems))
    ctx.add_custom(body)


KIND = WorkloadKind(
    name="tpu-jobset",
    accelerators=tpu.TPU_ACCELERATORS,
    priority_kind="workloadPriorityClass",
    frameworks=("jobset.x-k8s.io/jobset",),
    controllers=("jobset",),
    check=check,
    build=build,
)
