"""Text Generation Inference server (Gemma 2 on L4): Deployment + Service.

High priority: when it scales up, Kueue preempts lower-priority work in the
same ClusterQueue. Each pod is one Kueue workload (pod/deployment integration)."""
from __future__ import annotations

from ...kernel import kueue_api
from ...model.kinds import Tgi
from .. import cdk, core, k8s
from .common import BuildContext


def build(ctx: BuildContext, w: Tgi) -> None:
    ns, name = w.namespace, w.name
    port = w.port
    app = w.app
    model = w.model
    accel = ctx.accelerator(w)
    pod_labels = {
        "app": app,
        "ai.gke.io/model": model.split("/")[-1],
        "ai.gke.io/inference-server": "text-generation-inference",
        # Deployment pods are queued one by one through the pod integration.
        kueue_api.QUEUE_LABEL: w.queue,
    }
    container = k8s.Container(
        name="inference-server",
        image=ctx.image(w.image),
        resources=core.container_resources(ctx.profile, w.resources.requests() if w.resources else {},
                                           core.accelerator_request(accel, w.gpus)),
        env=[
            core.env("PORT", port),
            core.env("NUM_SHARD", w.gpus),   # one shard per GPU of the replica
            core.env("MODEL_ID", model),
            core.env_secret("HF_TOKEN", ctx.hf_token_secret, "hf_api_token"),
        ],
        ports=[k8s.ContainerPort(container_port=port, name="http")],
        readiness_probe=k8s.Probe(http_get=k8s.HttpGetAction(path="/health", port=core.int_or_string("http")),
                                  period_seconds=10, failure_threshold=3),
        startup_probe=k8s.Probe(http_get=k8s.HttpGetAction(path="/health", port=core.int_or_string("http")),
                                period_seconds=10, failure_threshold=180),  # model download + load: up to 30 min
        volume_mounts=[core.shm_mount()],
    )
    cdk.typed(k8s.KubeDeployment,
        ctx.chart, f"Deployment.{ns}.{name}",
        metadata=core.meta(name, ns, labels={"app": app, kueue_api.QUEUE_LABEL: w.queue}),
        spec=k8s.DeploymentSpec(
            replicas=w.replicas,
            selector=k8s.LabelSelector(match_labels={"app": app}),
            template=k8s.PodTemplateSpec(
                metadata=k8s.ObjectMeta(labels=pod_labels),
                spec=k8s.PodSpec(
                    priority_class_name=ctx.spec.priority_class(w.priority),
                    containers=[container],
                    volumes=[core.shm_volume()],
                    node_selector=core.accelerator_selector(accel),
                ),
            ),
        ),
    )
    svc = w.service
    cdk.typed(k8s.KubeService,
        ctx.chart, f"Service.{ns}.{svc}",
        metadata=core.meta(svc, ns),
        spec=k8s.ServiceSpec(
            type="ClusterIP",
            selector={"app": app},
            ports=[k8s.ServicePort(protocol="TCP", port=port, target_port=core.int_or_string(port))],
        ),
    )

