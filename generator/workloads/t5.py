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

import cdk8s_plus_33.k8s as k8s

from .. import core, kueue
from ..errors import Problem
from . import WorkloadKind
from .common import BuildContext, autopilot_requests, fits_one_node
from .t5_autoscaling import PodMonitoring, duration_ms, queue_latency_hpa
from .t5_clients import client, load_generator

# TorchServe's listeners, as images/t5-torchserve/config.properties sets them.
PORTS = {"http": 8080, "management": 8081, "metrics": 8082}
RUN_AS = 1000   # the image's user and group (Dockerfile: USER 1000:1000)
# Labels the tutorial selects T5 pods by; `version` comes from the model.
FAMILY_LABELS = {"model": "t5", "machine": "gpu"}


def selector(w: dict) -> dict:
    # `app` keeps two T5 workloads in one namespace apart.
    return {"app": w["name"], **FAMILY_LABELS, "version": f"v{w['model']['version']}"}


def prediction_url(w: dict) -> str:
    m = w["model"]
    return f"http://{w.get('serviceName', w['name'])}:{PORTS['http']}/predictions/{m['name']}/{m['version']}"


def management_url(w: dict) -> str:
    # TorchServe's management API describes a model at /models/<name> (the
    # tutorial's /predictions/models/<name> on 8081 is a 404).
    return f"http://{w.get('serviceName', w['name'])}:{PORTS['management']}/models/{w['model']['name']}"


def check(w: dict, profile: dict, profile_name: str) -> list[Problem]:
    out = autopilot_requests(w, profile) + fits_one_node(w, profile, w["gpus"])
    for block in ("client", "loadGenerator"):
        if block in w:
            out += [Problem(f"{block}.{p.path}", p.message) for p in autopilot_requests(w[block], profile)]
    a = w["autoscaling"]
    if a["minReplicas"] > a["maxReplicas"]:
        out.append(Problem("autoscaling.minReplicas", f"{a['minReplicas']} is more than maxReplicas ({a['maxReplicas']})"))
    m = w["monitoring"]
    if duration_ms(m["timeout"]) > duration_ms(m["interval"]):
        out.append(Problem("monitoring.timeout", f"{m['timeout']} is longer than the scrape interval ({m['interval']})"))
    return out


def _probe(path: str, port: str, **timing) -> k8s.Probe:
    return k8s.Probe(http_get=k8s.HttpGetAction(path=path, port=k8s.IntOrString.from_string(port)), **timing)


def build(ctx: BuildContext, w: dict) -> None:
    ns, name = w["namespace"], w["name"]
    svc = w.get("serviceName", name)
    labels = selector(w)
    queued = {**labels, kueue.QUEUE_LABEL: w["queue"]}
    container = k8s.Container(
        name="inference",
        image=ctx.image(w["image"]),
        image_pull_policy="IfNotPresent",
        # No args: the image's CMD starts TorchServe with its config and flags.
        resources=core.container_resources(ctx.profile, w["resources"], w["gpus"]),
        ports=[k8s.ContainerPort(container_port=p, name=n) for n, p in PORTS.items()],
        # The startup probe holds the others off while the model loads, so a
        # new replica serves as soon as it is ready (no fixed initial delay).
        startup_probe=_probe("/ping", "http", period_seconds=5, failure_threshold=60),
        readiness_probe=_probe("/ping", "http", failure_threshold=10),
        liveness_probe=_probe(f"/models/{w['model']['name']}", "management", period_seconds=5),
        security_context=core.container_security(),
    )
    k8s.KubeDeployment(
        ctx.chart, f"Deployment.{ns}.{name}",
        metadata=core.meta(name, ns, labels=queued),
        spec=k8s.DeploymentSpec(
            selector=k8s.LabelSelector(match_labels=labels),
            template=k8s.PodTemplateSpec(
                metadata=k8s.ObjectMeta(labels=queued),
                spec=k8s.PodSpec(
                    priority_class_name=ctx.spec.priority_class(w["priority"]),
                    containers=[container],
                    node_selector=core.accelerator_selector(ctx.profile),
                    security_context=core.pod_security(RUN_AS),
                ),
            ),
        ),
    )
    k8s.KubeService(
        ctx.chart, f"Service.{ns}.{svc}",
        metadata=core.meta(svc, ns, labels=labels),
        spec=k8s.ServiceSpec(
            type="ClusterIP",
            selector=labels,
            ports=[k8s.ServicePort(name=n, port=p, target_port=k8s.IntOrString.from_string(n)) for n, p in PORTS.items()],
        ),
    )
    mon = w["monitoring"]
    ctx.add_custom(PodMonitoring(
        name=name, namespace=ns, selector=labels, port="metrics",
        interval=mon["interval"], timeout=mon["timeout"],
        labels={"app.kubernetes.io/name": "torchserve"},
    ).body())
    a = w["autoscaling"]
    queue_latency_hpa(ctx.chart, name, ns, name, a["minReplicas"], a["maxReplicas"], a["queueLatencyTarget"])
    if "client" in w:
        client(ctx, ns, w["client"], prediction_url(w), management_url(w))
    if "loadGenerator" in w:
        load_generator(ctx, ns, w["loadGenerator"], f"http://{svc}:{PORTS['http']}", w["model"])


KIND = WorkloadKind(
    name="t5-inference",
    accelerators=("nvidia-l4",),
    priority_kind="priorityClass",
    frameworks=("pod", "deployment"),
    controllers=(),
    check=check,
    build=build,
)
