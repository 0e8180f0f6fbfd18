"""Training (kind `training`): the user's image started by its launcher on every pod.

GPU, Indexed Job: `nodes` pods with a headless Service, so pod i is
`<name>-i.<service>` and rank 0 is the rendezvous host; the node rank is the
completion index Kubernetes puts in JOB_COMPLETION_INDEX. GPU, JobSet: one
replicated Job of `nodes` pods; JobSet gives the pods DNS names
`<jobset>-<replicatedJob>-<jobIndex>-<podIndex>.<jobset>` (JobSet's default
network.enableDNSHostnames, subdomain = the JobSet's name). TPU: a JobSet of one
Job per slice, placed like `tpu-jobset` (accelerator and topology, or the
dynamic slice annotation); JAX on TPU finds its peers from GKE's TPU environment.

Launchers (arguments as each tool's documentation names them):
- torchrun --nnodes --nproc_per_node --node_rank --master_addr --master_port SCRIPT ARGS
- accelerate launch --num_machines --num_processes --machine_rank
  --main_process_ip --main_process_port SCRIPT ARGS (as the finetune kind does)
- jax: python -m MODULE ARGS, with COORDINATOR_ADDRESS, NUM_PROCESSES and
  PROCESS_ID in the environment on GPUs: the values to hand to
  jax.distributed.initialize(coordinator_address, num_processes, process_id).

Checkpoints: the profile's bucket through the GCS FUSE CSI driver at
`checkpoints.path` (CHECKPOINT_DIR=<path>/<name>); the grace period is the
program's time to save one after SIGTERM. `spec.suspend` is not written: Kueue
sets it.

GPUDirect: multi-node GPU pods on machine types GKE publishes it for get the
type's pod parts (builders/gpudirect_objects.py): NICs, daemon sidecar, plugin
volumes, NCCL settings. JobSets carry a failure policy: the gang restarts up to
maxRestarts times, not counting restarts after a node disruption."""
from __future__ import annotations

from ...kernel import demand, kueue_api, versions
from ...model.kinds.tpu_common import slice_of
from ...model.kinds.training import Training
from .. import cdk, core, embed, gpudirect_objects, k8s
from .common import BuildContext
from .finetune import MASTER_PORT
from .tpu_jobset import failure_policy, jobset_metadata, pod_failure_policy, slice_placement

CONTAINER = "trainer"
VOLUME = "checkpoints"


def rank0(w: Training) -> str:
    """DNS name of the first pod, the rendezvous host."""
    if w.is_jobset:
        return f"{w.name}-{w.replicated_job_name}-0-0.{w.name}"
    return f"{w.name}-0.{w.service}"


def command(w: Training) -> list[str]:
    """The launcher's command line; $(VAR) is expanded by Kubernetes, no shell needed."""
    nodes, gpus = w.pods, w.gpus_per_node or 0
    rank = "$(JOB_COMPLETION_INDEX)"
    if w.launcher == "torchrun":
        return ["torchrun", f"--nnodes={nodes}", f"--nproc_per_node={gpus}", f"--node_rank={rank}",
                f"--master_addr={rank0(w)}", f"--master_port={MASTER_PORT}", str(w.script), *w.args]
    if w.launcher == "accelerate":
        return ["accelerate", "launch", "--num_machines", str(nodes), "--num_processes", str(nodes * gpus),
                "--machine_rank", rank, "--main_process_ip", rank0(w), "--main_process_port", str(MASTER_PORT),
                str(w.script), *w.args]
    return ["python", "-m", str(w.module), *w.args]


def env(w: Training, ctx: BuildContext) -> list[k8s.EnvVar]:
    out = []
    if w.launcher == "jax" and w.tpu is None:
        # The rank from the completion index annotation, through the downward API, as the Job
        # controller itself sets JOB_COMPLETION_INDEX (pkg/controller/job/indexed_job_utils.go
        # addCompletionIndexEnvVariable; kubernetes.io "Indexed Job for Parallel Processing with
        # Static Work Assignment"). Not "$(JOB_COMPLETION_INDEX)": the controller appends that
        # variable after the template's own, and the kubelet expands $(VAR) in an env value only
        # from variables defined earlier in the list (pkg/kubelet/kubelet_pods.go
        # makeEnvironmentVariables), so the value would stay literal.
        out += [core.env("COORDINATOR_ADDRESS", f"{rank0(w)}:{MASTER_PORT}"),
                core.env("NUM_PROCESSES", w.pods),
                core.env_field("PROCESS_ID", f"metadata.annotations['{demand.COMPLETION_INDEX}']")]
    if w.checkpoints is not None:
        out.append(core.env("CHECKPOINT_DIR", f"{w.checkpoints.path}/{w.name}"))
    return out


def _checkpoint_volume(ctx: BuildContext, w: Training) -> tuple[list[k8s.Volume], list[k8s.VolumeMount], dict]:
    if w.checkpoints is None:
        return [], [], {}
    volume = k8s.Volume(name=VOLUME, csi=k8s.CsiVolumeSource(
        driver="gcsfuse.csi.storage.gke.io",
        volume_attributes={"bucketName": ctx.model_bucket, "mountOptions": "implicit-dirs"}))
    mount = k8s.VolumeMount(name=VOLUME, mount_path=w.checkpoints.path)
    # The GCS FUSE CSI driver injects its sidecar into pods with this annotation (GKE docs,
    # "Mount Cloud Storage buckets as CSI ephemeral volumes"; the finetune kind does the same).
    return [volume], [mount], {"gke-gcsfuse/volumes": "true"}


def _container(ctx: BuildContext, w: Training, accelerators: dict[str, int],
               mounts: list[k8s.VolumeMount], net: gpudirect_objects.PodParts) -> k8s.Container:
    """The trainer container: GPU pods rendezvous over a port and share memory; TPU pods do neither."""
    return k8s.Container(
        name=CONTAINER,
        image=ctx.image(w.image),
        command=net.command(command(w)),
        env=env(w, ctx) + net.env or None,
        ports=[k8s.ContainerPort(container_port=MASTER_PORT, name="rendezvous")] if w.tpu is None else None,
        resources=core.container_resources(ctx.profile, w.resources.requests() if w.resources else {},
                                           accelerators),
        volume_mounts=([core.shm_mount()] if w.tpu is None else []) + mounts + net.mounts or None,
        security_context=net.security_context(),
    )


def _pod(ctx: BuildContext, w: Training, priority_class: str | None) -> tuple[k8s.PodTemplateSpec, bool]:
    """The pod template, and whether it runs on a dynamically sliced TPU profile."""
    accel = ctx.accelerator(w)
    volumes, mounts, annotations = _checkpoint_volume(ctx, w)
    selector: dict = core.accelerator_selector(accel)
    tolerations: list[k8s.Toleration] = []
    dynamic = False
    if w.tpu is not None:
        shape = slice_of(w, ctx.checks)
        assert shape is not None, "checked by the spec checks"
        dynamic = ctx.profile.tpu is not None
        extra, selector, tolerations = slice_placement(accel, shape, dynamic)
        annotations = {**annotations, **extra}
        accelerators = core.accelerator_request(accel, shape.tpus_per_pod)
    else:
        accelerators = core.accelerator_request(accel, int(w.gpus_per_node or 0))
    if w.placement is not None:
        annotations[w.placement.annotation] = w.placement.label
    g = w.uses_gpudirect(ctx.checks)
    net = gpudirect_objects.pod_parts(g, ctx.profile.autopilot) if g is not None else gpudirect_objects.PodParts()
    annotations.update(net.annotations)
    spec = k8s.PodSpec(
        init_containers=net.sidecars or None,
        containers=[_container(ctx, w, accelerators, mounts, net)],
        node_selector=selector,
        tolerations=tolerations or None,
        restart_policy="Never" if w.is_jobset else "OnFailure",
        subdomain=None if w.is_jobset else w.service,
        service_account_name=ctx.profile.values.service_account if w.checkpoints else None,
        termination_grace_period_seconds=w.termination_grace_period_seconds,
        volumes=([core.shm_volume()] if w.tpu is None else []) + volumes + net.volumes or None,
        priority_class_name=priority_class,
    )
    return k8s.PodTemplateSpec(metadata=k8s.ObjectMeta(annotations=annotations or None,
                                                       labels={"app": w.name}), spec=spec), dynamic


def build(ctx: BuildContext, w: Training) -> None:
    # A JobSet names its WorkloadPriorityClass by label; a plain Job's pods carry the tier's
    # PriorityClass (as the finetune kind's).
    pod, dynamic = _pod(ctx, w, None if w.is_jobset else ctx.spec.priority_class(w.priority))
    ns, name = w.namespace, w.name
    pods, replicas = w.pods, 1
    if w.tpu is not None:
        shape = slice_of(w, ctx.checks)
        assert shape is not None, "checked by the spec checks"
        pods, replicas = shape.pods, w.tpu.slices
    job = k8s.JobSpec(parallelism=pods, completions=pods, completion_mode="Indexed",
                      backoff_limit=w.job_backoff_limit, template=pod,
                      pod_failure_policy=pod_failure_policy(w.failure_policy) if w.is_jobset else None)
    if w.is_jobset:
        ctx.add_custom({
            "apiVersion": versions.release("jobset", ctx.spec.jobset.version)["api"],
            "kind": "JobSet",
            "metadata": jobset_metadata(ctx, w, w.tpu is not None and not dynamic),
            "spec": {"failurePolicy": failure_policy(w.failure_policy),
                     "replicatedJobs": [{"name": w.replicated_job_name, "replicas": replicas,
                                         "template": embed.job_template(job)}]},
        })
        return
    cdk.typed(k8s.KubeService, ctx.chart, f"Service.{ns}.{w.service}", metadata=core.meta(w.service, ns),
                    spec=k8s.ServiceSpec(cluster_ip="None", selector={"job-name": name}))
    cdk.typed(k8s.KubeJob, ctx.chart, f"Job.{ns}.{name}", metadata=core.meta(name, ns, labels={kueue_api.QUEUE_LABEL: w.queue}),
                spec=job)
