"""Disaggregated (prefill/decode) vLLM serving on TPU7x sub-slices, as in the
TPU dynamic-slicing codelab: two LeaderWorkerSets, one LWS group per slice
(size = pods of the shape), and in front of them a Gateway, an HTTPRoute to
an InferencePool, and optional GKE health-check and backend policies.

The llm-d endpoint picker (EPP) is not generated: it comes from the llm-d
router Helm chart, and the pool names its Service in endpointPickerRef. The
pool selects only LWS leaders (worker index "0"): they serve the target port
(prefill: vLLM; decode: the llm-d routing sidecar), workers serve none.

Model path, bucket, served name, service account and Secret come from the
spec and the profile's values; nothing is left for sed to fill in."""
from __future__ import annotations

import json
import shlex

from ...kernel import catalog, kueue_api, tpu_slices, versions
from ...model.kinds import TpuPdServing
from ...model.kinds.tpu_common import slice_of
from ...model.kinds.tpu_pd_serving import KV_TRANSFER_PORT, MODEL_LABEL, ROLES, SIDE_CHANNEL_PORT
from .. import core, embed, inference_gateway, k8s
from .common import BuildContext

# llm-d labels: the EPP's prefill/decode filters read the role.
GUIDE_LABEL, ROLE_LABEL = "llm-d.ai/guide", "llm-d.ai/role"
ENGINE_LABEL = "inference.networking.k8s.io/engine-type"
EXCLUSIVE_TOPOLOGY = "leaderworkerset.sigs.k8s.io/exclusive-topology"
GCSFUSE_ANNOTATION = "gke-gcsfuse/volumes"

# KV-cache transfer between prefill and decode (tpu_inference's TPU connector).
KV_CONNECTOR = {"kv_connector": "TPUConnectorHMA",
                "kv_connector_module_path": "tpu_inference.distributed.tpu_connector_hma"}
KV_ROLE = {"prefill": "kv_producer", "decode": "kv_consumer"}
LWS_SCRIPT = "/workspace/vllm/examples/online_serving/multi-node-serving.sh"
RAY_INIT_TIMEOUT = 1800
MOUNT = "/data"
GCSFUSE_MOUNT_OPTIONS = ("implicit-dirs,file-cache:enable-parallel-downloads:true,"
                         "file-cache:parallel-downloads-per-file:100,file-cache:max-parallel-downloads:-1,"
                         "file-cache:download-chunk-size-mb:10,file-cache:max-size-mb:-1")
SHM_SIZE = "100Gi"
HF_TOKEN_KEY = "hf_api_token"   # the platform's Secret contract (README "Secrets")
SIDECAR_ARGS = ("--connector=nixlv2", "--zap-log-level=1", "--secure-proxy=false")

# vLLM TPU engine environment, as the codelab runs it; engineEnv in the spec
# overrides or adds entries. TPU_NODE_ID is the pod's index in the LWS group.
ENGINE_ENV = (
    ("HF_HOME", "/usr/vllm"),
    ("TPU_MULTIHOST_BACKEND", "ray"),
    ("SKIP_JAX_PRECOMPILE", "1"),
    ("TPU_NODE_ID", "$(LWS_WORKER_INDEX)"),
    ("JAX_PLATFORMS", ""),
    ("MODEL_IMPL_TYPE", "vllm"),
    ("TPU_BACKEND_TYPE", "jax"),
    ("PJRT_DEVICE", "TPU"),
    ("USE_MOE_EP_KERNEL", "0"),
    ("VLLM_DISABLE_SHARED_EXPERTS_STREAM", "1"),
    ("VLLM_LOGGING_LEVEL", "DEBUG"),
    ("VLLM_MLA_DISABLE", "1"),
    ("VLLM_ENGINE_CLIENT_STARTUP_TIMEOUT", "1800"),
    ("USE_BATCHED_RPA_KERNEL", "0"),
    ("RAY_RESERVE_CPU_FOR_RAYLET", "1"),
    ("RAY_heartbeat_timeout_milliseconds", "300000"),
    ("RAY_initial_reconstruction_timeout_milliseconds", "300000"),
    ("RAY_external_storage_heartbeat_timeout_ms", "60000"),
    ("RAY_grpc_server_thread_pool_size", "100"),
    ("RAY_max_pending_lease_requests_per_scheduling_category", "1000"),
    ("RAY_rpc_server_listen_quiet_period_ms", "3600000"),
    ("RAY_gcs_server_request_timeout_seconds", "3600"),
    ("TPU_SIDE_CHANNEL_PORT", str(SIDE_CHANNEL_PORT)),
    ("TPU_KV_TRANSFER_PORT", str(KV_TRANSFER_PORT)),
)


# ---------------------------------------------------------------- build

def _serve_script(w: TpuPdServing, bucket: str, role: str, shape: tpu_slices.Slice, port: int) -> str:
    args = [f"--model=gs://{bucket}/{w.model.path}", "--load-format=runai_streamer",
            f"--served-model-name={w.model.served_name}",
            *w.engine_args,
            # Tensor parallelism over every TensorCore of the slice.
            f"--tensor-parallel-size={shape.devices}",
            "--kv-transfer-config", json.dumps({**KV_CONNECTOR, "kv_role": KV_ROLE[role]}, separators=(",", ":")),
            f"--port={port}", "--disable-access-log-for-endpoints=/health,/metrics,/v1/models"]
    return (f"chmod +x {LWS_SCRIPT}\n"
            f"bash {LWS_SCRIPT} leader --ray_cluster_size=$(LWS_GROUP_SIZE) --ray_init_timeout={RAY_INIT_TIMEOUT}\n"
            f"vllm serve {' '.join(shlex.quote(a) for a in args)}\n")


def _worker_script() -> str:
    return (f"chmod +x {LWS_SCRIPT}\n"
            f"{LWS_SCRIPT} worker --ray_address=$(LWS_LEADER_ADDRESS) --ray_init_timeout={RAY_INIT_TIMEOUT}\n")


def _env(ctx: BuildContext, w: TpuPdServing, bucket: str) -> list[k8s.EnvVar]:
    values = dict(ENGINE_ENV)
    values["VLLM_XLA_CACHE_PATH"] = f"gs://{bucket}/xla_cache"
    values.update(w.engine_env)
    return ([core.env_secret("HF_TOKEN", ctx.hf_token_secret, HF_TOKEN_KEY)]
            + [core.env(k, v) for k, v in values.items()])


def _port(number: int, name: str) -> k8s.ContainerPort:
    return k8s.ContainerPort(container_port=number, name=name)


def _pod(ctx: BuildContext, w: TpuPdServing, role: str, labels: dict, shape: tpu_slices.Slice,
         leader: bool) -> k8s.PodTemplateSpec:
    profile, values = ctx.profile, ctx.profile.values
    bucket = ctx.model_bucket
    port, engine_port = w.port, w.decode_engine_port
    accel = ctx.accelerator(w)
    kv_ports = [_port(KV_TRANSFER_PORT, "tpu-kv-transfer"), _port(SIDE_CHANNEL_PORT, "tpu-pd-coord")]
    mounts = [core.shm_mount(), k8s.VolumeMount(name="gcs-fuse-csi-ephemeral", mount_path=MOUNT)]
    resources = core.container_resources(profile, w.resources.requests(),
                                         core.accelerator_request(accel, shape.tpus_per_pod))
    init = []
    if leader:
        serve_port = engine_port if role == "decode" else port
        ports = [_port(engine_port, "vllm") if role == "decode" else _port(port, "modelserver")] + kv_ports
        container = k8s.Container(
            name="vllm-leader", image=ctx.image(w.image), env=_env(ctx, w, bucket),
            command=["sh", "-c", _serve_script(w, bucket, role, shape, serve_port)],
            resources=resources, ports=ports, volume_mounts=mounts)
        if role == "decode":
            # The llm-d routing sidecar takes the pool's port and sends prefill
            # to the prefill pod the EPP picked, decode to the local vLLM.
            init.append(k8s.Container(
                name="routing-proxy", image=ctx.image(w.sidecar.image),
                args=[f"--port={port}", f"--vllm-port={engine_port}", *SIDECAR_ARGS],
                ports=[k8s.ContainerPort(container_port=port, name="modelserver", protocol="TCP")],
                resources=core.container_resources(ctx.profile, w.sidecar.resources.requests()),
                restart_policy="Always",
                security_context=k8s.SecurityContext(allow_privilege_escalation=False, run_as_non_root=True)))
    else:
        container = k8s.Container(
            name="vllm-worker", image=ctx.image(w.image), command=["sh", "-c", _worker_script()],
            resources=resources, env=_env(ctx, w, bucket), ports=kv_ports, volume_mounts=mounts)
    return k8s.PodTemplateSpec(
        metadata=k8s.ObjectMeta(labels=labels, annotations={
            tpu_slices.dynamic(shape.generation).slice_topology_annotation: shape.text,   # pod templates only
            GCSFUSE_ANNOTATION: "true",
        }),
        spec=k8s.PodSpec(
            service_account_name=values.service_account,
            node_selector=core.accelerator_selector(accel),
            tolerations=[k8s.Toleration(effect="NoSchedule", key=catalog.node_labels.TPU_TAINT.key, operator="Exists")],
            init_containers=init or None,
            containers=[container],
            volumes=[
                k8s.Volume(name="dshm", empty_dir=k8s.EmptyDirVolumeSource(medium="Memory", size_limit=core.qty(SHM_SIZE))),
                k8s.Volume(name="gcs-fuse-csi-ephemeral", csi=k8s.CsiVolumeSource(
                    driver="gcsfuse.csi.storage.gke.io",
                    volume_attributes={"bucketName": bucket, "mountOptions": GCSFUSE_MOUNT_OPTIONS})),
            ],
        ),
    )


def _lws(ctx: BuildContext, w: TpuPdServing, role: str, shape: tpu_slices.Slice) -> dict:
    pod_labels = {GUIDE_LABEL: w.guide_label, MODEL_LABEL: w.model_label, ROLE_LABEL: role, ENGINE_LABEL: "vllm"}
    return {
        "apiVersion": versions.release("lws", ctx.spec.lws.version)["api"],
        "kind": "LeaderWorkerSet",
        "metadata": {
            "name": w.lws_name(role), "namespace": w.namespace,
            # One LWS group per formed slice.
            "annotations": {EXCLUSIVE_TOPOLOGY: tpu_slices.dynamic(shape.generation).slice_label},
            "labels": {**pod_labels, kueue_api.QUEUE_LABEL: w.queue,
                       kueue_api.PRIORITY_LABEL: ctx.spec.workload_priority_class(w.priority)},
        },
        "spec": {
            "replicas": w.role(role).replicas,
            "leaderWorkerTemplate": {
                "size": shape.pods,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": embed.pod_template(_pod(ctx, w, role, pod_labels, shape, leader=True)),
                "workerTemplate": embed.pod_template(_pod(ctx, w, role, pod_labels, shape, leader=False)),
            },
        },
    }


def build(ctx: BuildContext, w: TpuPdServing) -> None:
    shape = slice_of(w, ctx.checks)
    assert shape is not None, "checked by the spec checks"
    ns, name = w.namespace, w.name
    port = w.port
    gw, epp = w.gateway, w.endpoint_picker
    objs = [_lws(ctx, w, role, shape) for role in ROLES]
    objs.append(inference_gateway.gateway(gw.name, ns, gw.class_name, gw.port))
    objs.append(inference_gateway.inference_pool(
        name, ns, {GUIDE_LABEL: w.guide_label, inference_gateway.LWS_WORKER_INDEX: "0"}, port,
        inference_gateway.EndpointPicker(epp.service, epp.port, epp.failure_mode)))
    objs.append(inference_gateway.http_route(f"{name}-route", ns, gw.name, name))
    if w.health_check:
        objs.append(inference_gateway.health_check_policy(f"{name}-health", ns, name, port, w.health_check.path))
    if w.backend_policy:
        bp = w.backend_policy
        objs.append(inference_gateway.backend_policy(f"{name}-backend", ns, name, bp.timeout_sec, bp.logging))
    for o in objs:
        ctx.add_custom(o)

