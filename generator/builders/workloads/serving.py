"""A model server on any engine of the engine catalog: a Deployment (one pod
per replica) or a LeaderWorkerSet (a group of pods per replica, the engine's
multi-node launch), a Service, and optionally a PodMonitoring, an HPA on the
engine's metric and the inference gateway (Gateway, HTTPRoute, InferencePool).

Every engine fact (image the samples run, arguments, ports, probes, metric)
comes from generator/kernel/catalog/engines.py; this module only assembles them.
Queued through Kueue with a priority tier: Deployment pods one by one (pod
integration), LWS groups whole (leaderworkerset integration). With
autoscaling the workload object has no replicas: the HPA owns them."""
from __future__ import annotations

import shlex

from ...kernel import catalog, kueue_api, versions
from ...kernel.catalog import node_labels
from ...kernel.catalog.engines import Engine, Metric, Probe
from ...model.kinds.serving import HF_TOKEN_KEY, Serving
from ...model.kinds.tpu_common import slice_of
from .. import cdk, core, embed, gpudirect_objects, inference_gateway, k8s
from .common import BuildContext
from .t5_autoscaling import PodMonitoring, pods_metric_hpa

ROLE_LABEL = "role"                                   # the LWS sample's leader label
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"   # LWS sets it on every pod of the set
RECREATE_GROUP = "RecreateGroupOnPodRestart"          # a lost host breaks the whole group's engine


def _fmt(template: str, **values) -> str:
    return template.format(**values)


def _probe(p: Probe | None, port: int, by_number: bool = False) -> k8s.Probe | None:
    """The catalog's probe; HTTP probes name the container port, or give its number where
    the port is another container's (JetStream's HTTP front end serves the engine's health)."""
    if p is None:
        return None
    timing = {"initial_delay_seconds": p.initial_delay_seconds, "period_seconds": p.period_seconds,
              "failure_threshold": p.failure_threshold}
    if p.path is None:
        return k8s.Probe(tcp_socket=k8s.TcpSocketAction(port=core.int_or_string(port)),
                         **timing)   # type: ignore[arg-type]
    target = core.int_or_string(port) if by_number else core.int_or_string(p.port)
    return k8s.Probe(http_get=k8s.HttpGetAction(path=p.path, port=target, scheme=p.scheme),
                     **timing)   # type: ignore[arg-type]


def _ports(e: Engine, port: int) -> list[k8s.ContainerPort]:
    return [k8s.ContainerPort(container_port=port, name="http")] + \
        [k8s.ContainerPort(container_port=n, name=name) for name, n in e.extra_ports]


def _port_number(e: Engine, w: Serving, name: str) -> int:
    return w.serving_port if name == "http" else dict(e.extra_ports)[name]


def _env(ctx: BuildContext, w: Serving, e: Engine, model_env: bool = True) -> list[k8s.EnvVar]:
    out = []
    if e.model_env and model_env:
        out.append(core.env(e.model_env, w.model))
    if e.port_env:
        out.append(core.env(e.port_env, w.serving_port))
    if e.token_env:
        out.append(core.env_secret(e.token_env, ctx.hf_token_secret, HF_TOKEN_KEY))
    return out


def _args(w: Serving, e: Engine, n: int) -> list[str]:
    base = [_fmt(a, model=w.model, port=w.serving_port, n=n) for a in e.args]
    metrics = list(e.metrics_args) if w.scrape else []
    return base + metrics + list(w.engine_args)


def _mounts_and_volumes(ctx: BuildContext, w: Serving, e: Engine) -> tuple[list, list]:
    mounts, volumes = [], []
    if e.shm:
        mounts.append(core.shm_mount())
        volumes.append(core.shm_volume())
    if e.script:
        mounts.append(k8s.VolumeMount(name="scripts-volume", mount_path="/scripts/", read_only=True))
        volumes.append(k8s.Volume(name="scripts-volume", config_map=k8s.ConfigMapVolumeSource(
            name=w.launch_config, default_mode=0o700)))
    if e.hf_mount:
        mounts.append(k8s.VolumeMount(name="huggingface-credentials", mount_path=e.hf_mount, read_only=True))
        volumes.append(k8s.Volume(name="huggingface-credentials", secret=k8s.SecretVolumeSource(
            secret_name=ctx.hf_token_secret, default_mode=0o400)))
    return mounts, volumes


def _server(ctx: BuildContext, w: Serving, e: Engine, accel: str, n: int, mounts: list) -> k8s.Container:
    req = w.resources.requests() if w.resources else {}
    front = w.http_image is not None   # the serving port is the front end's, beside this container
    ports = [k8s.ContainerPort(container_port=p, name=name) for name, p in e.extra_ports] if front \
        else _ports(e, w.serving_port)
    return k8s.Container(
        name="inference-server",
        image=ctx.image(w.image),
        command=list(e.command) if e.command else None,
        args=_args(w, e, n) or None,
        env=_env(ctx, w, e) or None,
        resources=core.container_resources(ctx.profile, req, core.accelerator_request(accel, n)),
        ports=ports,
        readiness_probe=_probe(e.readiness, w.serving_port, front),
        liveness_probe=_probe(e.liveness, w.serving_port, front),
        startup_probe=_probe(e.startup, w.serving_port, front),
        volume_mounts=mounts or None,
    )


def _selector(ctx: BuildContext, w: Serving, accel: str) -> dict:
    selector = core.accelerator_selector(accel)
    if w.device == "tpu":
        shape = slice_of(w, ctx.checks)
        assert shape is not None, "checked by the spec checks"
        selector[node_labels.TPU_TOPOLOGY_LABEL] = shape.text
    return selector


def _tolerations(w: Serving) -> list[k8s.Toleration] | None:
    if w.device != "tpu":
        return None
    t = catalog.node_labels.TPU_TAINT.toleration()
    return [k8s.Toleration(key=t["key"], operator=t["operator"], effect=t["effect"])]


def _pod_labels(w: Serving, e: Engine) -> dict:
    return {"app": w.app, "ai.gke.io/model": w.model_label, "ai.gke.io/inference-server": e.label}


def _deployment(ctx: BuildContext, w: Serving, e: Engine, accel: str, n: int) -> dict:
    """A Deployment: the engine's single-host launch. Returns the Service selector."""
    ns, name = w.namespace, w.name
    mounts, volumes = _mounts_and_volumes(ctx, w, e)
    containers = [_server(ctx, w, e, accel, n, mounts)]
    if w.http_image:
        # JetStream: the HTTP server beside the engine, which serves gRPC.
        containers.append(k8s.Container(name="jetstream-http", image=ctx.image(w.http_image),
                                        ports=[k8s.ContainerPort(container_port=w.serving_port, name="http")]))
    labels = _pod_labels(w, e)
    cdk.typed(k8s.KubeDeployment,
        ctx.chart, f"Deployment.{ns}.{name}",
        metadata=core.meta(name, ns, labels={"app": w.app, kueue_api.QUEUE_LABEL: w.queue}),
        spec=k8s.DeploymentSpec(
            replicas=None if w.autoscaling else w.replicas,
            selector=k8s.LabelSelector(match_labels={"app": w.app}),
            template=k8s.PodTemplateSpec(
                metadata=k8s.ObjectMeta(labels={**labels, kueue_api.QUEUE_LABEL: w.queue}),
                spec=k8s.PodSpec(
                    priority_class_name=ctx.spec.priority_class(w.priority),
                    containers=containers,
                    volumes=volumes or None,
                    node_selector=_selector(ctx, w, accel),
                    tolerations=_tolerations(w),
                ),
            ),
        ),
    )
    return {"app": w.app}


def _lws(ctx: BuildContext, w: Serving, e: Engine, accel: str, n: int) -> dict:
    """A LeaderWorkerSet: one group of `hosts` pods per replica, the engine's multi-node
    launch. Returns the selector of the leaders (they serve the port)."""
    launch = e.multi_host
    assert launch is not None, "checked by the spec checks"
    ns, name = w.namespace, w.name
    mounts, volumes = _mounts_and_volumes(ctx, w, e)
    req = w.resources.requests() if w.resources else {}
    resources = core.container_resources(ctx.profile, req, core.accelerator_request(accel, n))
    extra = "".join(f" {shlex.quote(a)}" for a in [*(e.metrics_args if w.scrape else ()), *w.engine_args])
    values = {"model": shlex.quote(w.model), "port": w.serving_port, "n": n, "hosts": w.hosts, "total": n * w.hosts}
    # GPUDirect on the group's GPU NICs where the machine type has it (builders/gpudirect_objects.py).
    g = w.uses_gpudirect(ctx.checks)
    net = gpudirect_objects.pod_parts(g, ctx.profile.autopilot) if g is not None else gpudirect_objects.PodParts()

    def pod(role: str) -> dict:
        leader = role == "leader"
        # Engine arguments go to the roles that start the server (their launch names the model).
        script = _fmt(launch[role], **values) + (extra if "{model}" in launch[role] else "")
        # The NCCL settings script, where the type has one, is sourced by bash before the launch.
        command = ["sh", "-c", script] if net.env_script is None else \
            ["/bin/bash", "-c", f"source {net.env_script} && {script}"]
        c = k8s.Container(
            name=f"{e.key}-{role}", image=ctx.image(w.image), command=command,
            env=_env(ctx, w, e, model_env=False) + net.env or None,   # the model is in the script
            resources=resources,
            ports=_ports(e, w.serving_port) if leader else None,
            readiness_probe=_probe(e.readiness, w.serving_port) if leader else None,
            liveness_probe=_probe(e.liveness, w.serving_port) if leader else None,
            volume_mounts=mounts + net.mounts or None, security_context=net.security_context())
        labels = {**_pod_labels(w, e), **({ROLE_LABEL: "leader"} if leader else {})}
        return embed.pod_template(k8s.PodTemplateSpec(
            metadata=k8s.ObjectMeta(labels=labels, annotations=net.annotations or None),
            spec=k8s.PodSpec(priority_class_name=ctx.spec.priority_class(w.priority), containers=[c],
                             init_containers=net.sidecars or None,
                             volumes=volumes + net.volumes or None, node_selector=_selector(ctx, w, accel),
                             tolerations=_tolerations(w))))

    spec: dict = {"leaderWorkerTemplate": {
        "size": w.hosts, "restartPolicy": RECREATE_GROUP,
        "leaderTemplate": pod("leader"), "workerTemplate": pod("worker")}}
    if not w.autoscaling:
        spec = {"replicas": w.replicas, **spec}
    ctx.add_custom({
        "apiVersion": versions.release("lws", ctx.spec.lws.version)["api"], "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": w.app, kueue_api.QUEUE_LABEL: w.queue}},
        "spec": spec,
    })
    return {LWS_NAME_LABEL: name, ROLE_LABEL: "leader"}


def _service(ctx: BuildContext, w: Serving, e: Engine, selector: dict) -> None:
    # Behind an HTTP front end the engine's own port stays inside the pod.
    ports = [("http", w.serving_port)] + ([] if w.http_image else list(e.extra_ports))
    cdk.typed(k8s.KubeService,
        ctx.chart, f"Service.{w.namespace}.{w.service}",
        metadata=core.meta(w.service, w.namespace),
        spec=k8s.ServiceSpec(
            type="ClusterIP", selector=selector,
            ports=[k8s.ServicePort(name=name, protocol="TCP", port=n, target_port=core.int_or_string(n))
                   for name, n in ports],
        ),
    )


def _launch_config(ctx: BuildContext, w: Serving, e: Engine, n: int) -> None:
    assert e.script is not None
    cdk.typed(k8s.KubeConfigMap, ctx.chart, f"ConfigMap.{w.namespace}.{w.launch_config}",
                      metadata=core.meta(w.launch_config, w.namespace),
                      data={"entrypoint.sh": _fmt(e.script, n=n, model=w.model)})


def build(ctx: BuildContext, w: Serving) -> None:
    e = w.engine_facts
    accel, n, _ = w.per_pod(ctx.checks)
    assert accel is not None, "checked by the spec checks"
    ns, name = w.namespace, w.name
    if e.script:
        _launch_config(ctx, w, e, n)
    multi = w.multi_host
    selector = _lws(ctx, w, e, accel, n) if multi else _deployment(ctx, w, e, accel, n)
    _service(ctx, w, e, selector)
    scrape = w.scrape
    if scrape:
        assert e.metrics_path is not None, "checked by the spec checks"
        ctx.add_custom(PodMonitoring(name=name, namespace=ns, selector=selector,
                                     port=_port_number(e, w, e.metrics_port), path=e.metrics_path,
                                     interval=scrape.interval).body())
    a = w.autoscaling
    if a:
        metric = Metric(a.metric, a.metric_type) if a.metric else e.metric
        assert metric is not None, "checked by the spec checks"
        target = (versions.release("lws", ctx.spec.lws.version)["api"], "LeaderWorkerSet", name) if multi \
            else ("apps/v1", "Deployment", name)
        pods_metric_hpa(ctx.chart, name, ns, target, a.min_replicas, a.max_replicas, metric.hpa_name, a.target)
    if w.gateway:
        gw, epp = w.gateway, w.gateway.endpoint_picker
        pool_selector = {LWS_NAME_LABEL: name, inference_gateway.LWS_WORKER_INDEX: "0"} if multi else {"app": w.app}
        for obj in (inference_gateway.gateway(gw.name, ns, gw.class_name, gw.port),
                    inference_gateway.inference_pool(w.pool_name, ns, pool_selector, w.serving_port,
                                           inference_gateway.EndpointPicker(epp.service, epp.port, epp.failure_mode)),
                    inference_gateway.http_route(f"{name}-route", ns, gw.name, w.pool_name)):
            ctx.add_custom(obj)
