"""The serving engines the `serving` workload kind runs, one record each: the
image GKE's samples (or the engine's own) run, how it is launched (command,
model and tensor-parallel arguments, the multi-node launch where the engine
documents one), its port, probes, metrics endpoint and the metric GKE's
autoscaling guides scale it on.

Every fact names its source in `sources` (keyed by the field name); a test
holds every field that is set to having one. A fact no source gives is left
out (None), and the kind refuses what would need it: e.g. an HPA on an
engine with no documented metric must name its metric in the spec.

The reference samples are byte-identical copies under
../shared/reference/kubernetes-engine-samples (snapshot 2b5036514162);
paths below are relative to that repository."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Probe:
    """`path` None: a TCP check of the port."""
    path: str | None
    port: str                      # a container port name
    initial_delay_seconds: int | None = None
    period_seconds: int | None = None
    failure_threshold: int | None = None
    scheme: str | None = None      # written where the source writes it


@dataclass(frozen=True)
class Metric:
    """A server metric as Managed Prometheus exports it (name and Prometheus type)."""
    name: str
    type: str                      # gauge | counter

    @property
    def hpa_name(self) -> str:
        # The Custom Metrics Stackdriver Adapter serves prometheus.googleapis.com/<name>/<type>
        # under this '|'-separated name (GKE's HPA samples).
        return f"prometheus.googleapis.com|{self.name}|{self.type}"


@dataclass(frozen=True)
class Engine:
    key: str
    title: str
    devices: tuple[str, ...]                      # gpu, tpu
    label: str                                    # ai.gke.io/inference-server value
    image: dict[str, str | None]                  # device -> "repository:tag" the sample runs (None: no pin known)
    command: tuple[str, ...] | None               # None: the image's entrypoint
    args: tuple[str, ...]                         # {model}, {port}, {n}: accelerators of one pod (tensor parallel)
    model_env: str | None                         # env var the model id goes in (the samples' MODEL_ID)
    port: int
    port_env: str | None = None                   # env var the port goes in (TGI reads PORT)
    extra_ports: tuple[tuple[str, int], ...] = ()  # more container ports (name, number)
    metrics_port: str = "http"                    # container port name serving metrics
    metrics_path: str | None = None              # None: no documented metrics endpoint
    metrics_args: tuple[str, ...] = ()            # flags that turn the metrics endpoint on
    readiness: Probe | None = None
    liveness: Probe | None = None
    startup: Probe | None = None
    metric: Metric | None = None                  # what GKE's autoscaling guides scale it on
    token_env: str | None = None                  # env var the Hugging Face token goes in
    multi_host: dict[str, str] | None = None      # role -> shell command (LWS env vars expanded)
    script: str | None = None                     # a launch script the command runs ({n}, {model})
    shm: bool = False                             # a memory-backed /dev/shm
    hf_mount: str | None = None                   # where the Hugging Face token Secret is mounted as files
    sources: dict[str, str] = field(default_factory=dict)


VLLM_L4 = "GoogleCloudPlatform/kubernetes-engine-samples ai-ml/llm-serving-gemma/vllm/vllm-2-9b-it.yaml"
VLLM_A3 = "GoogleCloudPlatform/kubernetes-engine-samples ai-ml/llm-multihost-gpus/vllm-llama3-405b-A3.yaml"
VLLM_HPA = "GoogleCloudPlatform/kubernetes-engine-samples ai-ml/llm-multihost-gpus/vllm-hpa.yaml"
VLLM_PM = "GoogleCloudPlatform/kubernetes-engine-samples ai-ml/llm-multihost-gpus/vllm_pod_monitor.yaml"
VLLM_TPU = ("GoogleCloudPlatform/devrel-demos ai-ml/dynamic-slicing/kueue-lws-prefill-model-streamer.yaml (the TPU "
            "sample ai-ml/vllm-tpu/vllm-llama3-70b.yaml runs the tag `latest`)")
SGLANG = "sgl-project/sglang docker/k8s-sglang-service.yaml @2c7d0a5 (image tag `latest`: no pin)"
SGLANG_MULTI = "sgl-project/sglang docker/k8s-sglang-distributed-sts.yaml @622284e"
SGLANG_METRICS = "sgl-project/sglang python/sglang/srt/metrics/collector.py @00ae9c1 (Gauge sglang:num_queue_reqs)"
TGI_H100 = "GoogleCloudPlatform/kubernetes-engine-samples ai-ml/llm-serving-gemma/tgi/tgi-2b-it-h100-80gb.yaml"
TGI_MIX = "GoogleCloudPlatform/kubernetes-engine-samples ai-ml/mix-train-and-inference/workloads/tgi-gemma-2-9b-it-hp.yaml"
GKE_AUTOSCALING = ("GKE: Configure autoscaling for LLM workloads on GPUs "
                   "<https://cloud.google.com/kubernetes-engine/docs/how-to/machine-learning/inference/autoscaling> "
                   "(TGI: PodMonitoring port 8000 every 15s; HPA on prometheus.googleapis.com|tgi_queue_size|gauge)")
TRITON = "GoogleCloudPlatform/kubernetes-engine-samples ai-ml/llm-serving-gemma/trtllm/deploy-triton-server.yaml"
JETSTREAM = ("GoogleCloudPlatform/kubernetes-engine-samples "
             "ai-ml/llm-serving-tpus-jetstream/pytorch/jetstream-pytorch-gemma-7b-it-2x4.yaml")
T5_CONFIG = "GoogleCloudPlatform/kubernetes-engine-samples ai-ml/t5-model-serving/model/config.properties"
T5_HPA = "GoogleCloudPlatform/kubernetes-engine-samples ai-ml/t5-model-serving/kubernetes/hpa.yaml"
SGLANG_METRICS_PATH = ("sgl-project/sglang python/sglang/srt/utils.py add_prometheus_middleware "
                       "(mounts /metrics on the HTTP server)")
T5_PM = "GoogleCloudPlatform/kubernetes-engine-samples ai-ml/t5-model-serving/kubernetes/pod-monitoring.yaml"
TRITON_METRICS = ("Triton Inference Server: Metrics (/metrics on the metrics port) "
                  "<https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/user_guide/metrics.html>")
TORCHSERVE_PING = "TorchServe inference API: GET /ping on the inference port <https://pytorch.org/serve/inference_api.html>"

VLLM_LWS_SCRIPT = "/vllm-workspace/examples/online_serving/multi-node-serving.sh"

ENGINES: dict[str, Engine] = {e.key: e for e in (
    Engine(
        key="vllm", title="vLLM", devices=("gpu", "tpu"), label="vllm",
        image={"gpu": "docker.io/vllm/vllm-openai:v0.10.0",
               "tpu": "docker.io/vllm/vllm-tpu:nightly-20260430-18ed615-5b39b26"},
        command=("python3", "-m", "vllm.entrypoints.openai.api_server"),
        args=("--model=$(MODEL_ID)", "--tensor-parallel-size={n}", "--host=0.0.0.0", "--port={port}"),
        model_env="MODEL_ID", shm=True,
        port=8000, metrics_path="/metrics",
        readiness=Probe(None, "http", initial_delay_seconds=15, period_seconds=10),
        metric=Metric("vllm:num_requests_waiting", "gauge"),
        token_env="HUGGING_FACE_HUB_TOKEN",
        # The leader starts the Ray head and the API server with tensor parallelism over a
        # pod's GPUs and pipeline parallelism over the group's pods; workers join Ray.
        multi_host={
            "leader": (f"bash {VLLM_LWS_SCRIPT} leader --ray_cluster_size=$(LWS_GROUP_SIZE); "
                       "python3 -m vllm.entrypoints.openai.api_server --port {port} --model {model} "
                       "--tensor-parallel-size {n} --pipeline-parallel-size {hosts}"),
            "worker": f"bash {VLLM_LWS_SCRIPT} worker --ray_address=$(LWS_LEADER_ADDRESS)",
        },
        sources={"image": f"gpu: {VLLM_L4}; tpu: {VLLM_TPU}", "command": VLLM_L4, "args": VLLM_L4,
                 "model_env": VLLM_L4, "shm": VLLM_L4, "port": VLLM_L4,
                 "metrics_path": VLLM_PM, "readiness": VLLM_A3, "metric": VLLM_HPA,
                 "token_env": VLLM_L4, "multi_host": VLLM_A3},
    ),
    Engine(
        key="sglang", title="SGLang", devices=("gpu",), label="sglang",
        image={"gpu": None},
        command=("python3", "-m", "sglang.launch_server"),
        args=("--model-path", "{model}", "--host", "0.0.0.0", "--port", "{port}", "--tensor-parallel-size", "{n}"),
        model_env=None, shm=True,
        port=30000, metrics_path="/metrics",
        metrics_args=("--enable-metrics",),
        liveness=Probe("/health", "http", initial_delay_seconds=30, period_seconds=10),
        metric=Metric("sglang:num_queue_reqs", "gauge"),
        token_env="HF_TOKEN",
        # One SGLang process per node: the first pod is the rendezvous (port 5000).
        multi_host={role: ("python3 -m sglang.launch_server --model-path {model} --host 0.0.0.0 --port {port} "
                           "--tensor-parallel-size {total} --nnodes {hosts} --node-rank $(LWS_WORKER_INDEX) "
                           "--dist-init-addr $(LWS_LEADER_ADDRESS):5000")
                    for role in ("leader", "worker")},
        sources={"image": SGLANG, "command": SGLANG, "args": f"{SGLANG}; --tensor-parallel-size: {SGLANG_MULTI}",
                 "shm": SGLANG_MULTI,
                 "port": SGLANG, "metrics_args": SGLANG_MULTI,
                 "metrics_path": SGLANG_METRICS_PATH, "liveness": SGLANG, "metric": SGLANG_METRICS,
                 "token_env": SGLANG, "multi_host": SGLANG_MULTI},
    ),
    Engine(
        key="tgi", title="Text Generation Inference", devices=("gpu",), label="text-generation-inference",
        image={"gpu": None},
        command=None,
        args=("--model-id=$(MODEL_ID)", "--num-shard={n}"), model_env="MODEL_ID", shm=True,
        port=8000, port_env="PORT", metrics_path="/metrics",
        metric=Metric("tgi_queue_size", "gauge"),
        token_env="HUGGING_FACE_HUB_TOKEN",
        sources={"image": f"{TGI_H100} (a Deep Learning Container image without a tag: no pin)",
                 "args": TGI_H100, "model_env": TGI_H100, "shm": TGI_H100, "port": TGI_H100,
                 "port_env": TGI_H100, "metrics_path": GKE_AUTOSCALING, "metric": GKE_AUTOSCALING, "token_env": TGI_H100},
    ),
    Engine(
        key="triton-trtllm", title="Triton Inference Server with TensorRT-LLM", devices=("gpu",), label="triton",
        image={"gpu": "us-docker.pkg.dev/google-samples/containers/gke/tritonserver:2.42.0"},
        command=("/scripts/entrypoint.sh",),
        # The sample's ConfigMap script: launch_triton_server.py starts the servers in the
        # background, so the script keeps the container alive after it.
        args=(), model_env=None,
        script=("#!/usr/bin/bash -x\n"
                "# Launch Triton Inference server\n\n"
                "WORLD_SIZE={n}\n"
                "TRITON_MODEL_REPO={model}\n\n"
                "python3 /tensorrtllm_backend/scripts/launch_triton_server.py \\\n"
                "  --world_size ${{WORLD_SIZE}} \\\n"
                "  --model_repo ${{TRITON_MODEL_REPO}}\n\n"
                "tail -f /dev/null"),
        port=8000, extra_ports=(("grpc", 8001), ("metrics", 8002)), metrics_port="metrics",
        metrics_path="/metrics",
        readiness=Probe("/v2/health/ready", "http", initial_delay_seconds=600, period_seconds=5, failure_threshold=60),
        liveness=Probe("/v2/health/live", "http", initial_delay_seconds=600, period_seconds=5, failure_threshold=60),
        sources={"image": TRITON, "command": TRITON, "script": TRITON, "port": TRITON,
                 "extra_ports": TRITON, "metrics_port": TRITON,
                 "metrics_path": TRITON_METRICS, "readiness": TRITON, "liveness": TRITON},
    ),
    Engine(
        key="jetstream", title="JetStream (PyTorch)", devices=("tpu",), label="jetstream",
        image={"tpu": "us-docker.pkg.dev/cloud-tpu-images/inference/jetstream-pytorch-server:v0.2.4"},
        command=None,
        args=("--model_id={model}",), model_env=None,   # the server shards over its VM's chips itself
        hf_mount="/huggingface",
        port=8000, extra_ports=(("jetstream", 9000),),
        readiness=Probe("/healthcheck", "http", period_seconds=60, failure_threshold=30, scheme="HTTP"),
        liveness=Probe("/healthcheck", "http", period_seconds=60, failure_threshold=30, scheme="HTTP"),
        startup=Probe("/healthcheck", "http", initial_delay_seconds=90, period_seconds=60, failure_threshold=50,
                      scheme="HTTP"),
        sources={"image": f"{JETSTREAM} (and the HTTP front end jetstream-http:v0.2.3 beside it)",
                 "args": JETSTREAM, "hf_mount": JETSTREAM, "port": JETSTREAM, "extra_ports": JETSTREAM,
                 "readiness": JETSTREAM, "liveness": JETSTREAM, "startup": JETSTREAM},
    ),
    Engine(
        key="torchserve", title="TorchServe", devices=("gpu",), label="torchserve",
        image={"gpu": None},
        command=None,
        args=(), model_env=None,
        port=8080, extra_ports=(("management", 8081), ("metrics", 8082)), metrics_port="metrics",
        metrics_path="/metrics",
        readiness=Probe("/ping", "http"),
        metric=Metric("ts_queue_latency_microseconds", "counter"),
        sources={"image": "the model's own image (the tutorial builds it with the model archive): no upstream pin",
                 "port": T5_CONFIG, "extra_ports": T5_CONFIG, "metrics_port": T5_CONFIG,
                 "metrics_path": T5_PM, "readiness": TORCHSERVE_PING, "metric": T5_HPA},
    ),
)}

# The JetStream sample's second container: the HTTP server in front of the engine's gRPC port.
JETSTREAM_HTTP_IMAGE = "us-docker.pkg.dev/cloud-tpu-images/inference/jetstream-http:v0.2.3"
