"""The `serving` kind and its engine catalog: every engine fact names its source and
agrees with the sample it cites; every overlay of the serving fixture is strictly
valid against the pinned schemas and clean under the validator's rules; the
demand the spec checks count is the demand of the built objects; each engine
launches as its source documents; and the spec refuses what an engine cannot do."""
from __future__ import annotations

import dataclasses
import shlex
import tempfile
from pathlib import Path

import pytest

from generator import model as specmod
from generator.builders import tree as platform
from generator.kernel import paths, writer, yamlio
from generator.kernel.catalog.engines import ENGINES, JETSTREAM_HTTP_IMAGE
from generator.kernel.errors import SpecError
from tests import helpers
from tests.test_validate_corpus import run as validate_run

FIXTURE = Path(__file__).parent / "fixtures" / "serving.yaml"
SAMPLES = helpers.REFERENCE / "kubernetes-engine-samples" / "ai-ml"
PROFILES = ("l4", "a3", "v6e", "v5e", "a100")
# Fields that are facts (everything but the key and the bookkeeping).
FACTS = [f.name for f in dataclasses.fields(next(iter(ENGINES.values())))
         if f.name not in ("key", "title", "devices", "label", "sources")]


def _raw() -> dict:
    return yamlio.load_strict(FIXTURE.read_text())


@pytest.fixture(scope="module")
def tree() -> Path:
    out = Path(tempfile.mkdtemp(prefix="serving-"))
    writer.write_tree(platform.build(specmod.load(FIXTURE)), out, paths.OUTPUT_DIRS)
    return out


@pytest.fixture(scope="module")
def overlays(tree) -> dict[str, list[dict]]:
    return {p: helpers.kustomize(tree / "overlays" / p) for p in PROFILES}


def _one(objs, kind, name):
    (o,) = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    return o


# ---------------------------------------------------------------- the engine catalog

@pytest.mark.parametrize("key", sorted(ENGINES))
def test_every_engine_fact_names_its_source(key):
    e = ENGINES[key]
    have = {f for f in FACTS if getattr(e, f) not in (None, (), {}, False)}
    if e.metrics_port == "http":
        have.discard("metrics_port")   # the serving port: metrics_path's source says so
    missing = sorted(f for f in have if f not in e.sources)
    assert not missing, f"{key}: facts without a source: {missing}"
    assert not set(e.sources) - set(FACTS), f"{key}: sources for facts it does not have"
    for image in e.image.values():
        assert image is None or (":" in image.rsplit("/", 1)[-1] and not image.endswith(":latest")), image


@pytest.mark.parametrize("key, sample", [
    ("vllm", "llm-serving-gemma/vllm/vllm-2-9b-it.yaml"),
    ("triton-trtllm", "llm-serving-gemma/trtllm/deploy-triton-server.yaml"),
    ("jetstream", "llm-serving-tpus-jetstream/pytorch/jetstream-pytorch-gemma-7b-it-2x4.yaml"),
])
def test_catalog_images_are_the_samples(key, sample):
    text = (SAMPLES / sample).read_text()
    gpu_or_tpu = [i for i in ENGINES[key].image.values() if i and "vllm-tpu" not in i]
    assert gpu_or_tpu and all(f"image: {i}" in text for i in gpu_or_tpu)
    if key == "jetstream":
        assert f"image: {JETSTREAM_HTTP_IMAGE}" in text


def test_catalog_metrics_are_the_samples_hpa_metrics():
    for key, sample in (("vllm", "llm-multihost-gpus/vllm-hpa.yaml"), ("vllm", "vllm-tpu/vllm-hpa.yaml"),
                        ("torchserve", "t5-model-serving/kubernetes/hpa.yaml")):
        (hpa,) = yamlio.load_all((SAMPLES / sample).read_text())
        names = [m["pods"]["metric"]["name"] for m in hpa["spec"]["metrics"] if m["type"] == "Pods"]
        metric = ENGINES[key].metric
        assert metric is not None and names == [metric.hpa_name], sample


def test_vllm_multi_host_launch_is_the_a3_samples():
    (lws, _) = yamlio.load_all((SAMPLES / "llm-multihost-gpus/vllm-llama3-405b-A3.yaml").read_text())
    t = lws["spec"]["leaderWorkerTemplate"]
    launch = ENGINES["vllm"].multi_host
    assert launch is not None
    leader = launch["leader"].format(port=8080, model="meta-llama/Meta-Llama-3.1-405B-Instruct", n=8, hosts=2)
    assert t["leaderTemplate"]["spec"]["containers"][0]["command"] == ["sh", "-c", leader]
    assert t["workerTemplate"]["spec"]["containers"][0]["command"] == ["sh", "-c", launch["worker"]]


# ---------------------------------------------------------------- the overlays

@pytest.mark.parametrize("profile", PROFILES)
def test_overlays_are_strictly_valid(overlays, profile):
    s = specmod.load(FIXTURE)
    helpers.assert_valid(helpers.schemas_for(s, profile), overlays[profile], f"overlays/{profile}")


@pytest.mark.parametrize("profile", PROFILES)
def test_overlays_pass_the_validators_rules(overlays, profile, tmp_path):
    f = tmp_path / f"{profile}.yaml"
    f.write_text(yamlio.dump_all(overlays[profile]))
    report = validate_run(f, [])
    assert report.errors == 0, [x.report_line() for x in report.findings]


def test_lws_is_installed_and_queued_only_where_a_server_spans_hosts(tree):
    for profile, lws in (("l4", False), ("a3", True), ("v6e", False)):
        (cm,) = yamlio.load_all((tree / "controllers" / profile / "kueue" / "kueue-manager-config.yaml").read_text())
        assert ("leaderworkerset.x-k8s.io/leaderworkerset" in cm["data"]["controller_manager_config.yaml"]) == lws
        assert (tree / "controllers" / profile / "lws").is_dir() == lws


# ---------------------------------------------------------------- each engine as its source launches it

def _serving(**fields) -> dict:
    base = {"kind": "serving", "profiles": ["a3"], "namespace": "llm", "queue": "lq", "priority": "high",
            "security": {"runAsRoot": True}}
    return {**base, **fields}


def _build(*workloads: dict, images: dict | None = None) -> dict[str, list[dict]]:
    raw = _raw()
    raw["workloads"] = list(workloads)
    raw["images"].update(images or {})
    out = Path(tempfile.mkdtemp(prefix="serving-case-"))
    helpers.synth_into(out, raw)
    return {p: helpers.kustomize(out / "overlays" / p) for p in PROFILES if (out / "overlays" / p).is_dir()}


def test_sglang_multi_host_runs_one_process_per_node_with_its_rank():
    objs = _build(_serving(name="sg", engine="sglang", image="sglang", model="meta-llama/Llama-3.1-70B-Instruct",
                           accelerators=8, hosts=2, autoscaling={"minReplicas": 1, "maxReplicas": 2, "target": 5}),
                  # a tag llmaz's SGLang BackendRuntime pins (SGLang's own manifests run `latest`)
                  images={"sglang": {"repository": "docker.io/lmsysorg/sglang", "tag": "v0.4.5-cu121"}})["a3"]
    lws = _one(objs, "LeaderWorkerSet", "sg")
    t = lws["spec"]["leaderWorkerTemplate"]
    assert t["size"] == 2
    for role in ("leader", "worker"):
        (c,) = t[f"{role}Template"]["spec"]["containers"]
        words = shlex.split(c["command"][2])
        # sgl-project/sglang docker/k8s-sglang-distributed-sts.yaml: the same launch on every node.
        for flag, value in (("--tensor-parallel-size", "16"), ("--nnodes", "2"), ("--node-rank", "$(LWS_WORKER_INDEX)"),
                            ("--dist-init-addr", "$(LWS_LEADER_ADDRESS):5000"), ("--port", "30000")):
            assert words[words.index(flag) + 1] == value, (role, flag)
        assert "--enable-metrics" in words   # the HPA's metric needs it
    hpa = _one(objs, "HorizontalPodAutoscaler", "sg")
    assert hpa["spec"]["metrics"][0]["pods"]["metric"]["name"] == "prometheus.googleapis.com|sglang:num_queue_reqs|gauge"
    assert hpa["spec"]["scaleTargetRef"]["kind"] == "LeaderWorkerSet"
    assert _one(objs, "PodMonitoring", "sg")["spec"]["selector"]["matchLabels"] == {
        "leaderworkerset.sigs.k8s.io/name": "sg", "role": "leader"}


def test_tgi_shards_over_the_pods_gpus_and_reads_its_port_from_env():
    objs = _build(_serving(name="tgi", engine="tgi", image="tgi", model="google/gemma-2b-it", accelerators=8),
                  images={"tgi": {"repository": "ghcr.io/huggingface/text-generation-inference", "tag": "2.4.1"}})["a3"]
    (c,) = _one(objs, "Deployment", "tgi")["spec"]["template"]["spec"]["containers"]
    # ai-ml/llm-serving-gemma/tgi/tgi-2b-it-h100-80gb.yaml
    assert c["args"] == ["--model-id=$(MODEL_ID)", "--num-shard=8"]
    assert {e["name"]: e.get("value") for e in c["env"]}["PORT"] == "8000"


def test_jetstream_runs_the_engine_and_its_http_front_end_on_a_v6e_slice():
    objs = _build(_serving(name="js", engine="jetstream", profiles=["v6e"], image="js", httpImage="js-http",
                           model="google/gemma-7b-it", shape="2x4", resources={"cpu": "100", "memory": "500Gi"},
                           engineArgs=["--override_batch_size=30", "--enable_model_warmup=True"]),
                  images={"js": {"repository": "us-docker.pkg.dev/cloud-tpu-images/inference/jetstream-pytorch-server",
                                 "tag": "v0.2.4"},
                          "js-http": {"repository": "us-docker.pkg.dev/cloud-tpu-images/inference/jetstream-http",
                                      "tag": "v0.2.3"}})["v6e"]
    pod = _one(objs, "Deployment", "js")["spec"]["template"]["spec"]
    server, http = pod["containers"]
    assert server["args"] == ["--model_id=google/gemma-7b-it", "--override_batch_size=30", "--enable_model_warmup=True"]
    assert server["resources"]["limits"]["google.com/tpu"] == "8"
    assert http["image"].endswith("jetstream-http:v0.2.3")
    assert pod["nodeSelector"] == {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
                                   "cloud.google.com/gke-tpu-topology": "2x4"}
    # The front end serves the engine's health on 8000: the probes name the number, since a port name
    # resolves only among the probed container's own ports.
    assert server["readinessProbe"]["httpGet"] == {"path": "/healthcheck", "port": 8000, "scheme": "HTTP"}
    assert [p["containerPort"] for p in server["ports"]] == [9000] and http["ports"] == [
        {"containerPort": 8000, "name": "http"}]


# ---------------------------------------------------------------- what the spec refuses

def _problems(*workloads: dict) -> list[str]:
    raw = _raw()
    raw["workloads"] = list(workloads)
    raw["images"]["any"] = {"repository": "example.com/any", "tag": "1.0"}
    with pytest.raises(SpecError) as e:
        specmod.from_dict(raw, "serving.yaml")
    return [f"{p.path}: {p.message}" for p in e.value.problems]


def _w(**fields) -> dict:
    return _serving(name="s", image="any", model="org/model", **fields)


@pytest.mark.parametrize("fields, expected", [
    ({"engine": "tgi", "accelerators": 8, "hosts": 2}, "workloads[0].hosts: Text Generation Inference has no "
                                                       "multi-node launch"),
    ({"engine": "jetstream", "profiles": ["v6e"], "shape": "2x4", "resources": {"cpu": "1", "memory": "1Gi"}},
     "workloads[0].httpImage: JetStream needs its HTTP front end"),
    ({"engine": "sglang", "profiles": ["v6e"], "shape": "2x4", "resources": {"cpu": "1", "memory": "1Gi"}},
     "workloads[0].engine: SGLang runs on GPUs here; this workload runs on TPUs"),
    ({"engine": "triton-trtllm", "accelerators": 1, "autoscaling": {"minReplicas": 1, "maxReplicas": 2, "target": 1}},
     "workloads[0].autoscaling.metric: the engine catalog has no autoscaling metric"),
    ({"engine": "vllm", "accelerators": 1, "engineArgs": ["--port=9000"]},
     "workloads[0].engineArgs[0]: --port is set by the generator"),
    ({"engine": "vllm"}, "workloads[0].accelerators: give the GPUs of one pod"),
    ({"engine": "vllm", "accelerators": 16}, "workloads[0]: a pod asks for 16 nvidia-h100-80gb but a3-highgpu-8g has 8"),
    ({"engine": "vllm", "accelerators": 1, "autoscaling": {"minReplicas": 3, "maxReplicas": 2, "target": 5}},
     "workloads[0].autoscaling.minReplicas: 3 is more than maxReplicas (2)"),
    ({"engine": "vllm", "profiles": ["v6e"], "shape": "4x4", "resources": {"cpu": "1", "memory": "1Gi"}},
     "workloads[0].shape: 4x4 is not the topology of a tpu-v6e-slice node pool"),
])
def test_refuses_what_the_engine_or_cluster_cannot_do(fields, expected):
    problems = _problems(_w(**fields))
    assert any(p.startswith(expected) for p in problems), problems


def test_a_valid_server_is_accepted():
    raw = _raw()
    raw["images"]["any"] = {"repository": "example.com/any", "tag": "1.0"}
    raw["workloads"] = [_w(engine="vllm", accelerators=8, hosts=2)]
    specmod.from_dict(raw, "serving.yaml")   # no SpecError: the negative cases above can fail


def test_docs_list_every_engine():
    text = (paths.ROOT / "docs" / "serving.md").read_text()
    for key in ENGINES:
        assert f"| `{key}` |" in text, key


def test_torchserve_scales_on_the_t5_tutorials_metric_and_scrapes_its_metrics_port():
    objs = _build(_serving(name="ts", engine="torchserve", image="ts", model="t5-small", accelerators=1,
                           autoscaling={"minReplicas": 1, "maxReplicas": 5, "target": 30000}),
                  images={"ts": {"name": "t5-torchserve", "tag": "0.1.0"}})["a3"]
    (hpa,) = yamlio.load_all((SAMPLES / "t5-model-serving/kubernetes/hpa.yaml").read_text())
    ours = _one(objs, "HorizontalPodAutoscaler", "ts")
    assert ours["spec"]["metrics"][0]["pods"]["metric"] == hpa["spec"]["metrics"][0]["pods"]["metric"]
    # config.properties: metrics_address on 8082; the tutorial's PodMonitoring scrapes /metrics there.
    assert _one(objs, "PodMonitoring", "ts")["spec"]["endpoints"][0]["port"] == 8082
    (c,) = _one(objs, "Deployment", "ts")["spec"]["template"]["spec"]["containers"]
    assert "args" not in c and "command" not in c   # the image's CMD starts TorchServe
