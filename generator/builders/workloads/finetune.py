"""Preemptible fine-tuning: an Indexed Job (one pod per machine) launched by
`accelerate launch`, plus the headless Service that gives rank 0 a stable DNS
name. Low priority: Kueue evicts it when inference needs the GPUs and admits
it again later; the image (images/finetune) resumes from its checkpoint in
the bucket.

`spec.suspend` is not written: Kueue's webhook sets it, and a value in Git
would make Argo CD fight Kueue."""
from __future__ import annotations

from ...kernel import kueue_api
from ...model.kinds import Finetune
from ...model.kinds.finetune import MOUNT
from .. import cdk, core, k8s
from .common import BuildContext

MASTER_PORT = 29500
VOLUME = "gcs-fuse-csi-ephemeral"
IMAGE_UID = Finetune.image_contract.uid   # the image's user; the bucket mount is writable to it


def env_for(w: Finetune, hf_secret: str) -> list[k8s.EnvVar]:
    """Environment of the training container; names are the ones images/finetune reads."""
    return ([core.env(k, v) for k, v in w.env().items()]
            + [core.env_secret("HF_TOKEN", hf_secret, "hf_api_token")])


def build(ctx: BuildContext, w: Finetune) -> None:
    ns, name = w.namespace, w.name
    svc = w.service
    nodes, gpus = w.nodes, w.gpus_per_node
    values = ctx.profile.values
    accel = ctx.accelerator(w)
    # The image's entrypoint (launch.py) stays PID 1 and relays SIGTERM to the
    # training processes only, so a Kueue eviction ends in a checkpoint and exit 0
    # (plain `accelerate launch` would let torch's elastic agent kill them after 30 s).
    # Kubernetes expands $(JOB_COMPLETION_INDEX) itself; no shell needed.
    launch_args = [
        "accelerate", "launch", "--config_file", "fsdp_config.yaml",
        "--main_process_ip", f"{name}-0.{svc}", "--main_process_port", str(MASTER_PORT),
        "--machine_rank", "$(JOB_COMPLETION_INDEX)",
        "--num_processes", str(nodes * gpus), "--num_machines", str(nodes),
        "fine_tune.py",
    ]
    cdk.typed(k8s.KubeService,
        ctx.chart, f"Service.{ns}.{svc}",
        metadata=core.meta(svc, ns),
        spec=k8s.ServiceSpec(cluster_ip="None", selector={"job-name": name}),
    )
    container = k8s.Container(
        name="gpu-job",
        image=ctx.image(w.image),
        args=launch_args,
        env=env_for(w, ctx.hf_token_secret),
        ports=[k8s.ContainerPort(container_port=MASTER_PORT, name="rendezvous")],
        resources=core.container_resources(ctx.profile, w.resources.requests() if w.resources else {},
                                           core.accelerator_request(accel, gpus)),
        volume_mounts=[core.shm_mount(),
                       k8s.VolumeMount(name=VOLUME, mount_path=MOUNT, read_only=False)],
    )
    cdk.typed(k8s.KubeJob,
        ctx.chart, f"Job.{ns}.{name}",
        metadata=core.meta(name, ns, labels={kueue_api.QUEUE_LABEL: w.queue}),
        spec=k8s.JobSpec(
            backoff_limit=w.backoff_limit,
            completions=nodes,
            parallelism=nodes,
            completion_mode="Indexed",
            template=k8s.PodTemplateSpec(
                metadata=k8s.ObjectMeta(
                    labels={"app": w.app},
                    # GCS FUSE sidecar; the checkpoint lives in the bucket so it survives eviction.
                    annotations={"gke-gcsfuse/volumes": "true", "gke-gcsfuse/memory-limit": "35Gi"},
                ),
                spec=k8s.PodSpec(
                    priority_class_name=ctx.spec.priority_class(w.priority),
                    containers=[container],
                    node_selector=core.accelerator_selector(accel),
                    restart_policy="OnFailure",
                    service_account_name=values.service_account or "default",
                    subdomain=svc,
                    # The trainer checkpoints on SIGTERM; this is its time to do so.
                    termination_grace_period_seconds=w.termination_grace_period_seconds,
                    volumes=[
                        core.shm_volume(),
                        k8s.Volume(name=VOLUME, csi=k8s.CsiVolumeSource(
                            driver="gcsfuse.csi.storage.gke.io",
                            volume_attributes={"bucketName": ctx.model_bucket,
                                               # the image runs as uid/gid 1000 and writes checkpoints here
                                               "mountOptions": f"implicit-dirs,uid={IMAGE_UID},gid={IMAGE_UID}",
                                               "gcsfuseLoggingSeverity": "warning"})),
                    ],
                ),
            ),
        ),
    )

