"""T5 translation on TorchServe (images/t5-torchserve), autoscaled on queue
latency: Deployment, Service, PodMonitoring and HorizontalPodAutoscaler,
plus the tutorial's web client and Locust load generator when the spec asks.

Queued through Kueue (pod/deployment integrations) with a priority tier, like
the TGI server: every replica the HPA adds is admitted against the
ClusterQueue's GPU quota, so the quota stays a true account of the GPUs in
use, and a high tier lets a scale-up preempt preemptible training.

No spec.replicas: the HPA owns the replica count, and a value in Git would
make Argo CD and the HPA fight over it."""
from __future__ import annotations

from ...kernel import kueue_api
from ...model.kinds import T5Inference
from .. import cdk, core, k8s
from .common import BuildContext
from .t5_autoscaling import PodMonitoring, queue_latency_hpa
from .t5_clients import client, load_generator

# TorchServe's listeners, as images/t5-torchserve/config.properties sets them.
PORTS = {"http": 8080, "management": 8081, "metrics": 8082}
# Labels the tutorial selects T5 pods by; `version` comes from the model.
FAMILY_LABELS = {"model": "t5", "machine": "gpu"}


def selector(w: T5Inference) -> dict:
    # `app` keeps two T5 workloads in one namespace apart.
    return {"app": w.name, **FAMILY_LABELS, "version": f"v{w.model.version}"}


def prediction_url(w: T5Inference) -> str:
    return f"http://{w.service}:{PORTS['http']}/predictions/{w.model.name}/{w.model.version}"


def management_url(w: T5Inference) -> str:
    # TorchServe's management API describes a model at /models/<name> (the
    # tutorial's /predictions/models/<name> on 8081 is a 404).
    return f"http://{w.service}:{PORTS['management']}/models/{w.model.name}"


def _probe(path: str, port: str, **timing) -> k8s.Probe:
    return k8s.Probe(http_get=k8s.HttpGetAction(path=path, port=core.int_or_string(port)), **timing)


def build(ctx: BuildContext, w: T5Inference) -> None:
    ns, name = w.namespace, w.name
    svc = w.service
    labels = selector(w)
    queued = {**labels, kueue_api.QUEUE_LABEL: w.queue}
    accel = ctx.accelerator(w)
    container = k8s.Container(
        name="inference",
        image=ctx.image(w.image),
        image_pull_policy="IfNotPresent",
        # No args: the image's CMD starts TorchServe with its config and flags.
        resources=core.container_resources(ctx.profile, w.resources.requests(), core.accelerator_request(accel, w.gpus)),
        ports=[k8s.ContainerPort(container_port=p, name=n) for n, p in PORTS.items()],
        # The startup probe holds the others off while the model loads, so a
        # new replica serves as soon as it is ready (no fixed initial delay).
        startup_probe=_probe("/ping", "http", period_seconds=5, failure_threshold=60),
        readiness_probe=_probe("/ping", "http", failure_threshold=10),
        liveness_probe=_probe(f"/models/{w.model.name}", "management", period_seconds=5),
    )
    cdk.typed(k8s.KubeDeployment,
        ctx.chart, f"Deployment.{ns}.{name}",
        metadata=core.meta(name, ns, labels=queued),
        spec=k8s.DeploymentSpec(
            selector=k8s.LabelSelector(match_labels=labels),
            template=k8s.PodTemplateSpec(
                metadata=k8s.ObjectMeta(labels=queued),
                spec=k8s.PodSpec(
                    priority_class_name=ctx.spec.priority_class(w.priority),
                    containers=[container],
                    node_selector=core.accelerator_selector(accel),
                ),
            ),
        ),
    )
    cdk.typed(k8s.KubeService,
        ctx.chart, f"Service.{ns}.{svc}",
        metadata=core.meta(svc, ns, labels=labels),
        spec=k8s.ServiceSpec(
            type="ClusterIP",
            selector=labels,
            ports=[k8s.ServicePort(name=n, port=p, target_port=core.int_or_string(n)) for n, p in PORTS.items()],
        ),
    )
    mon = w.monitoring
    ctx.add_custom(PodMonitoring(
        name=name, namespace=ns, selector=labels, port="metrics",
        interval=mon.interval, timeout=mon.timeout,
        labels={"app.kubernetes.io/name": "torchserve"},
    ).body())
    a = w.autoscaling
    queue_latency_hpa(ctx.chart, name, ns, name, a.min_replicas, a.max_replicas, a.queue_latency_target)
    if w.client:
        client(ctx, ns, w.client, prediction_url(w), management_url(w))
    if w.load_generator:
        load_generator(ctx, ns, w.load_generator, f"http://{svc}:{PORTS['http']}", w.model)

