"""The T5 tutorial's helpers: the fastdash web client and the Locust load
generator. Both are CPU-only and not queued through Kueue: they never run
on the accelerator nodes whose capacity the ClusterQueue describes.

Their URLs are derived from the T5 Service and model, so they cannot drift
from what the server exposes."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ...kernel import paths
from ...model.kinds.t5 import Client, LoadGenerator, T5Model
from .. import cdk, core, k8s

CLIENT_PORT = 8050          # fastdash listens here (client-app image)
LOADGEN_PORT = 8080         # Locust web UI
LOCUSTFILE = paths.LOCUSTFILE   # the installed tool's copy, or this checkout's images/t5-loadgen
LOCUSTFILE_DIR = "/mnt/locust"   # not the image's home: a ConfigMap mount there would hide it


def content_name(base: str, data: dict) -> str:
    """base-<hash of data>: a changed file gives a new ConfigMap name, so the
    Deployment that mounts it rolls (what kustomize's configMapGenerator does,
    but visible in the committed YAML and with no generator step at apply)."""
    digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()
    return f"{base}-{digest[:10]}"


def _http_service(chart, name: str, ns: str, labels: dict, port: int) -> None:
    cdk.typed(k8s.KubeService,
        chart, f"Service.{ns}.{name}",
        metadata=core.meta(name, ns, labels=labels),
        spec=k8s.ServiceSpec(
            type="ClusterIP",
            selector=labels,
            ports=[k8s.ServicePort(name="http", port=port, target_port=core.int_or_string("http"))],
        ),
    )


def _deployment(chart, name: str, ns: str, labels: dict, container: k8s.Container,
                volumes: list | None = None) -> None:
    cdk.typed(k8s.KubeDeployment,
        chart, f"Deployment.{ns}.{name}",
        metadata=core.meta(name, ns, labels=labels),
        spec=k8s.DeploymentSpec(
            replicas=1,
            selector=k8s.LabelSelector(match_labels=labels),
            template=k8s.PodTemplateSpec(
                metadata=k8s.ObjectMeta(labels=labels),
                spec=k8s.PodSpec(containers=[container], volumes=volumes),
            ),
        ),
    )


def client(ctx, ns: str, c: Client, prediction_url: str, management_url: str) -> None:
    name = c.name
    labels = {"app": name}
    container = k8s.Container(
        name="main",
        image=ctx.image(c.image),
        image_pull_policy="IfNotPresent",
        env=[core.env("MODEL_PREDICTION", prediction_url), core.env("MODEL_MANAGEMENT", management_url)],
        resources=core.container_resources(ctx.profile, c.resources.requests()),
        ports=[k8s.ContainerPort(container_port=CLIENT_PORT, name="http")],
        readiness_probe=k8s.Probe(http_get=k8s.HttpGetAction(path="/", port=core.int_or_string("http"))),
    )
    _deployment(ctx.chart, name, ns, labels, container)
    _http_service(ctx.chart, name, ns, labels, CLIENT_PORT)


def locust_files() -> dict[str, str]:
    return {"locustfile.py": Path(LOCUSTFILE).read_text()}


def load_generator(ctx, ns: str, g: LoadGenerator, host: str, model: T5Model) -> None:
    name = g.name
    labels = {"app": name}
    files = locust_files()
    cm = content_name(f"{name}-files", files)
    cdk.typed(k8s.KubeConfigMap, ctx.chart, f"ConfigMap.{ns}.{cm}", metadata=core.meta(cm, ns, labels=labels), data=files)
    # Settings as plain env (not a second ConfigMap): a change rolls the pod.
    env = {
        "LOCUST_HOST": host,
        "LOCUST_USERS": g.users,
        "LOCUST_SPAWN_RATE": g.spawn_rate,
        "LOCUST_LOGLEVEL": g.log_level,
        "LOCUST_WEB_PORT": LOADGEN_PORT,
        "MODEL_NAME": model.name,
        "MODEL_VERSION": model.version,
    }
    container = k8s.Container(
        name="loadgenerator",
        image=ctx.image(g.image),
        command=["locust", "--autostart", "--locustfile", f"{LOCUSTFILE_DIR}/locustfile.py"],
        env=[core.env(k, v) for k, v in env.items()],
        volume_mounts=[k8s.VolumeMount(name="locustfile", mount_path=LOCUSTFILE_DIR, read_only=True)],
        resources=core.container_resources(ctx.profile, g.resources.requests()),
        ports=[k8s.ContainerPort(container_port=LOADGEN_PORT, name="http")],
        readiness_probe=k8s.Probe(http_get=k8s.HttpGetAction(path="/", port=core.int_or_string("http"),
                                                             scheme="HTTP")),
    )
    _deployment(ctx.chart, name, ns, labels, container,
                volumes=[k8s.Volume(name="locustfile", config_map=k8s.ConfigMapVolumeSource(name=cm))])
    _http_service(ctx.chart, name, ns, labels, LOADGEN_PORT)
