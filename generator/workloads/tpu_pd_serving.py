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

import cdk8s_plus_33.k8s as k8s

from .. import core, embed, facts, gateway, kueue, tpu, versions
from ..errors import Problem
from . import WorkloadKind
from .common import BuildContext, required_values

ROLES = ("prefill", "decode")
# llm-d labels: the EPP's prefill/decode filters read the role.
GUIDE_LABEL, MODEL_LABEL, ROLE_LABEL = "llm-d.ai/guide", "llm-d.ai/model", "llm-d.ai/role"
ENGINE_LABEL = "inference.networking.k8s.io/engine-type"
EXCLUSIVE_TOPOLOGY = "leaderworkerset.sigs.k8s.io/exclusive-topology"
GCSFUSE_ANNOTATION = "gke-gcsfuse/volumes"

# KV-cache transfer between prefill and decode (tpu_inference's TPU connector).
KV_TRANSFER_PORT, SIDE_CHANNEL_PORT = 9100, 9600
KV_CONNECTOR = {"kv_connector": "TPUConnectorHMA",
                "kv_connector_module_path": "tpu_inference.distributed.tpu_connector_hma"}
KV_ROLE = {"prefill": "kv_producer", "decode": "kv_consumer"}
# Flags the generator sets itself; the spec's engineArgs may not repeat them.
OWN_FLAGS = ("--model", "--load-format", "--served-model-name", "--tensor-parallel-size",
             "--kv-transfer-config", "--port", "--disable-access-log-for-endpoints")
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


def lws_name(w: dict, role: str) -> str:
    return w.get(role, {}).get("name", f"{w['name']}-{role}")


def model_label(w: dict) -> str:
    return w["model"]["servedName"].rsplit("/", 1)[-1]


def demand(w: dict, tpu_type: facts.TpuType) -> tpu.Demand | None:
    try:
        shape = tpu.Shape.parse(w["shape"], tpu_type)
    except ValueError:
        return None
    # Each LWS group is its own Kueue workload: admitted one slice at a time,
    # but every replica is wanted at once.
    slices = sum(w[r]["replicas"] for r in ROLES)
    split = " + ".join(f"{w[r]['replicas']} {r}" for r in ROLES)
    return tpu.Demand(slices * shape.chips, shape.chips, shape.chips, f"{slices} LWS groups ({split}) of {shape.text}")


tpu.DEMANDS["tpu-pd-serving"] = demand


# ---------------------------------------------------------------- checks

def check(w: dict, profile: dict, profile_name: str) -> list[Problem]:
    out = required_values(profile, ("modelBucket", "serviceAccount", "hfTokenSecret"), profile_name)
    if "tpu" not in profile:
        return out
    t = facts.TPU_TYPES[profile["accelerator"]]
    bad = tpu.shape_problem(w["shape"], profile["tpu"]["slicing"], t, profile_name)
    if bad:
        return out + [Problem("shape", bad)]
    misfit = tpu.fit_problem(demand(w, t), profile, profile_name)
    if misfit:  # each LWS group is admitted alone: only the shape can be too big
        out.append(Problem("shape", misfit[1]))
    for role in ROLES:
        longest = tpu.slice_name_problem(w["namespace"], "LeaderWorkerSet",
                                         f"{lws_name(w, role)}-{max(w[role]['replicas'] - 1, 0)}",
                                         "worker", 0, f"the namespace or the {role} LeaderWorkerSet's name")
        if longest:
            out.append(Problem(f"{role}.name" if "name" in w[role] else "name", longest))
    out += _check_engine(w)
    out += _check_ports(w)
    # Decode leaders carry the routing sidecar too: the biggest pod.
    pod = [("resources", w["resources"]), ("sidecar.resources", w["sidecar"]["resources"])]
    return out + tpu.vm_fit_problems(pod, tpu.reservation(profile["accelerator"], profile["tpu"]))


def _check_engine(w: dict) -> list[Problem]:
    out = []
    for i, arg in enumerate(w.get("engineArgs", [])):
        flag = arg.split("=", 1)[0]
        if flag in OWN_FLAGS:
            out.append(Problem(f"engineArgs[{i}]", f"{flag} is set by the generator (from model, shape and "
                                                   f"port); remove it from engineArgs"))
    for key in sorted(w.get("engineEnv", {})):
        if key == "HF_TOKEN":
            out.append(Problem(f"engineEnv.{key}", "the token comes from the profile's hfTokenSecret by reference; "
                                                   "never put its value in the spec"))
        elif key in ("TPU_KV_TRANSFER_PORT", "TPU_SIDE_CHANNEL_PORT"):
            out.append(Problem(f"engineEnv.{key}", f"the generator sets {key} to match the pods' container ports"))
    label = model_label(w)
    if len(label) > 63 or not label.replace("-", "").replace(".", "").replace("_", "").isalnum():
        out.append(Problem("model.servedName", f"the last part {label!r} becomes the {MODEL_LABEL} label, "
                                               "which must be at most 63 letters, digits, '-', '_' or '.'"))
    return out


def _check_ports(w: dict) -> list[Problem]:
    port, engine = w.get("port", 8000), w.get("decodeEnginePort", 8200)
    reserved = {KV_TRANSFER_PORT: "the KV transfer port", SIDE_CHANNEL_PORT: "the KV side channel"}
    out = []
    if port == engine:
        out.append(Problem("decodeEnginePort", f"decode's vLLM and its routing sidecar cannot share port {port}; "
                                               "the sidecar takes `port` (the pool's target port)"))
    for field, value in (("port", port), ("decodeEnginePort", engine)):
        if value in reserved:
            out.append(Problem(field, f"{value} is {reserved[value]} of the TPU connector; pick another port"))
    return out


def check_guides(raw: dict) -> list[Problem]:
    """Two serving stacks in one namespace with the same guide label would share pods."""
    seen: dict[tuple, int] = {}
    out = []
    for i, w in enumerate(raw["workloads"]):
        if w["kind"] != KIND.name:
            continue
        for prof in w["profiles"]:
            key = (prof, w["namespace"], w.get("guide", w["name"]))
            if key in seen:
                out.append(Problem(f"workloads[{i}].guide",
                                   f"guide label {key[2]!r} is also used by workloads[{seen[key]}] in namespace "
                                   f"{key[1]!r} on profile {prof!r}; each pool would select the other's pods"))
            seen.setdefault(key, i)
    return out


tpu.PROFILE_CHECKS.append(check_guides)


# ---------------------------------------------------------------- build

def _serve_script(w: dict, bucket: str, role: str, shape: tpu.Shape, port: int) -> str:
    args = [f"--model=gs://{bucket}/{w['model']['path']}", "--load-format=runai_streamer",
            f"--served-model-name={w['model']['servedName']}",
            *w.get("engineArgs", []),
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


def _env(ctx: BuildContext, w: dict, bucket: str) -> list[k8s.EnvVar]:
    values = dict(ENGINE_ENV)
    values["VLLM_XLA_CACHE_PATH"] = f"gs://{bucket}/xla_cache"
    values.update(w.get("engineEnv", {}))
    return ([core.env_secret("HF_TOKEN", ctx.profile.values["hfTokenSecret"], HF_TOKEN_KEY)]
            + [core.env(k, v) for k, v in values.items()])


def _port(number: int, name: str) -> k8s.ContainerPort:
    return k8s.ContainerPort(container_port=number, name=name)


def _pod(ctx: BuildContext, w: dict, role: str, labels: dict, shape: tpu.Shape, leader: bool) -> k8s.PodTemplateSpec:
    profile, values = ctx.profile, ctx.profile.values
    bucket = values["modelBucket"]
    port, engine_port = w.get("port", 8000), w.get("decodeEnginePort", 8200)
    kv_ports = [_port(KV_TRANSFER_PORT, "tpu-kv-transfer"), _port(SIDE_CHANNEL_PORT, "tpu-pd-coord")]
    mounts = [core.shm_mount(), k8s.VolumeMount(name="gcs-fuse-csi-ephemeral", mount_path=MOUNT)]
    resources = core.container_resources(profile, w["resources"], shape.tpus_per_pod)
    init = []
    if leader:
        serve_port = engine_port if role == "decode" else port
        ports = [_port(engine_port, "vllm") if role == "decode" else _port(port, "modelserver")] + kv_ports
        container = k8s.Container(
            name="vllm-leader", image=ctx.image(w["image"]), env=_env(ctx, w, bucket),
            command=["sh", "-c", _serve_script(w, bucket, role, shape, serve_port)],
            resources=resources, ports=ports, volume_mounts=mounts)
        if role == "decode":
            # The llm-d routing sidecar takes the pool's port and sends prefill
            # to the prefill pod the EPP picked, decode to the local vLLM.
            init.append(k8s.Container(
                name="routing-proxy", image=ctx.image(w["sidecar"]["image"]),
                args=[f"--port={port}", f"--vllm-port={engine_port}", *SIDECAR_ARGS],
                ports=[k8s.ContainerPort(container_port=port, name="modelserver", protocol="TCP")],
                resources=core.container_resources(ctx.profile, w["sidecar"]["resources"]),
                restart_policy="Always",
                security_context=k8s.SecurityContext(allow_privilege_escalation=False, run_as_non_root=True)))
    else:
        container = k8s.Container(
            name="vllm-worker", image=ctx.image(w["image"]), command=["sh", "-c", _worker_script()],
            resources=resources, env=_env(ctx, w, bucket), ports=kv_ports, volume_mounts=mounts)
    return k8s.PodTemplateSpec(
        metadata=k8s.ObjectMeta(labels=labels, annotations={
            facts.TPU_SLICE_TOPOLOGY_ANNOTATION: shape.text,   # pod templates only
            GCSFUSE_ANNOTATION: "true",
        }),
        spec=k8s.PodSpec(
            service_account_name=values["serviceAccount"],
            node_selector=core.accelerator_selector(profile),
            tolerations=[k8s.Toleration(effect="NoSchedule", key=profile.accel.taint_key, operator="Exists")],
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


def _lws(ctx: BuildContext, w: dict, role: str, shape: tpu.Shape) -> dict:
    guide = w.get("guide", w["name"])
    pod_labels = {GUIDE_LABEL: guide, MODEL_LABEL: model_label(w), ROLE_LABEL: role, ENGINE_LABEL: "vllm"}
    return {
        "apiVersion": versions.release("lws", ctx.spec.lws_version)["api"],
        "kind": "LeaderWorkerSet",
        "metadata": {
            "name": lws_name(w, role), "namespace": w["namespace"],
            # One LWS group per formed slice.
            "annotations": {EXCLUSIVE_TOPOLOGY: facts.TPU_SLICE_LABEL},
            "labels": {**pod_labels, kueue.QUEUE_LABEL: w["queue"],
                       kueue.PRIORITY_LABEL: ctx.spec.workload_priority_class(w["priority"])},
        },
        "spec": {
            "replicas": w[role]["replicas"],
            "leaderWorkerTemplate": {
                "size": shape.pods,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": embed.pod_template(_pod(ctx, w, role, pod_labels, shape, leader=True)),
                "workerTemplate": embed.pod_template(_pod(ctx, w, role, pod_labels, shape, leader=False)),
            },
        },
    }


def build(ctx: BuildContext, w: dict) -> None:
    t = facts.TPU_TYPES[ctx.profile.accelerator]
    shape = tpu.Shape.parse(w["shape"], t)
    ns, name = w["namespace"], w["name"]
    port = w.get("port", 8000)
    gw, epp = w["gateway"], w["endpointPicker"]
    objs = [_lws(ctx, w, role, shape) for role in ROLES]
    objs.append(gateway.gateway(gw["name"], ns, gw["className"], gw.get("port", 80)))
    objs.append(gateway.inference_pool(
        name, ns, {GUIDE_LABEL: w.get("guide", name), gateway.LWS_WORKER_INDEX: "0"}, port,
        gateway.EndpointPicker(epp["service"], epp.get("port", 9002), epp.get("failureMode", "FailOpen"))))
    objs.append(gateway.http_route(f"{name}-route", ns, gw["name"], name))
    if "healthCheck" in w:
        objs.append(gateway.health_check_policy(f"{name}-health", ns, name, port, w["healthCheck"].get("path", "/health")))
    if "backendPolicy" in w:
        bp = w["backendPolicy"]
        objs.append(gateway.backend_policy(f"{name}-backend", ns, name, bp["timeoutSec"], bp.get("logging", False)))
    problems = tpu.lint(objs) + gateway.lint(objs)
    if problems:  # the spec checks should make this impossible: a generator bug
        raise AssertionError("; ".join(problems))
    for o in objs:
        ctx.add_custom(o)


KIND = WorkloadKind(
    name="tpu-pd-serving",
    accelerators=tpu.TPU_ACCELERATORS,
    priority_kind="workloadPriorityClass",
    frameworks=("pod", "leaderworkerset.x-k8s.io/leaderworkerset"),
    controllers=("lws",),
    check=check,
    build=build,
)
