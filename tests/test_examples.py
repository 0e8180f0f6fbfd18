"""The example specs under examples/: each synthesizes, every overlay builds
with kustomize, validates with no errors, and `plan` admits what it should.
Expected numbers come from the machine types' published shapes (Compute
Engine GPU and TPU machine-type tables) and are worked out by hand below; and
the spec refuses what cannot run on those clusters (named accelerators,
static slice topologies, whole slices)."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from generator import model as spec
from generator.builders import tree
from generator.kernel import paths, yamlio
from generator.kernel.errors import SpecError
from generator.plan import overlay, scenario, simulate
from tests import helpers
from tests.test_validate_corpus import run as validate_run

EXAMPLES = paths.ROOT / "examples"
H100_L4 = EXAMPLES / "h100-l4-spot.yaml"
V6E = EXAMPLES / "tpu-v6e.yaml"
VLLM_GATEWAY = EXAMPLES / "h100-vllm-gateway.yaml"
SAMPLES = helpers.REFERENCE / "kubernetes-engine-samples" / "ai-ml"


def _raw(path: Path) -> dict:
    return yamlio.load_strict(path.read_text())


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, list[dict]]:
    """profile -> objects of its overlay built with kustomize, for every example."""
    out = {}
    for path in sorted(EXAMPLES.glob("*.yaml")):
        root = tmp_path_factory.mktemp(path.stem)
        s = helpers.synth_into(root, _raw(path), str(path))
        for profile in s.profiles:
            out[profile] = helpers.kustomize(root / "overlays" / profile)
    return out


def _one(objs, kind, name):
    (o,) = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    return o


def _quotas(cq: dict) -> dict[str, dict[str, object]]:
    (group,) = cq["spec"]["resourceGroups"]
    return {f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"]} for f in group["flavors"]}


def test_every_example_is_listed_in_the_examples_readme():
    readme = (EXAMPLES / "README.md").read_text()
    for path in EXAMPLES.glob("*.yaml"):
        assert f"`{path.name}`" in readme, path.name


def test_every_overlay_validates_with_no_errors(built, tmp_path):
    # A MultiKueue worker runs the Jobs its manager dispatches: the manager's overlay is its context.
    managers = {w["profile"]: g["manager"] for path in EXAMPLES.glob("*.yaml")
                for g in _raw(path).get("multiKueue", []) for w in g["workers"]}
    for profile, objs in built.items():
        f = tmp_path / f"{profile}.yaml"
        f.write_text(yamlio.dump_all(objs))
        extra = []
        if profile in managers:
            context = tmp_path / f"{profile}-context.yaml"
            context.write_text(yamlio.dump_all(built[managers[profile]]))
            extra = ["--context", str(context)]
        report = validate_run(f, extra)
        assert report.errors == 0, [x.report_line() for x in report.findings]


def test_h100_and_l4_spot_pools_are_two_flavors_of_one_queue(built):
    objs = built["gpu-cluster"]
    # Compute Engine: a3-highgpu-8g = 208 vCPU, 1872 GB, 8 H100; g2-standard-24 = 24 vCPU, 96 GB, 2 L4.
    assert _quotas(_one(objs, "ClusterQueue", "gpus")) == {
        "h100": {"cpu": 416, "memory": "3744Gi", "nvidia.com/gpu": 16, "ephemeral-storage": "200Gi"},
        "l4-spot": {"cpu": 96, "memory": "384Gi", "nvidia.com/gpu": 8, "ephemeral-storage": "400Gi"},
    }
    assert _one(objs, "ResourceFlavor", "h100")["spec"]["nodeLabels"] == {
        "cloud.google.com/gke-accelerator": "nvidia-h100-80gb", "node.kubernetes.io/instance-type": "a3-highgpu-8g"}
    assert _one(objs, "ResourceFlavor", "l4-spot")["spec"]["nodeLabels"] == {
        "cloud.google.com/gke-accelerator": "nvidia-l4", "node.kubernetes.io/instance-type": "g2-standard-24",
        "cloud.google.com/gke-provisioning": "spot"}
    tgi = _one(objs, "Deployment", "llama-serving")["spec"]["template"]["spec"]
    (c,) = tgi["containers"]
    assert {e["name"]: e.get("value") for e in c["env"]}["NUM_SHARD"] == "8"
    assert c["resources"]["limits"]["nvidia.com/gpu"] == "8"
    assert tgi["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}
    job = _one(objs, "Job", "finetune-spot")["spec"]["template"]["spec"]
    assert job["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-l4"}


def test_v6e_static_slices(built):
    objs = built["v6e-cluster"]
    # 8 x ct6e-standard-4t (4 chips, 180 vCPU, 720 GB each): 32 chips, two 4x4 slices of 4 VMs.
    assert _quotas(_one(objs, "ClusterQueue", "tpu")) == {
        "v6e-4x4": {"cpu": 1440, "memory": "5760Gi", "google.com/tpu": 32, "ephemeral-storage": "800Gi"}}
    assert _one(objs, "ResourceFlavor", "v6e-4x4")["spec"]["nodeLabels"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "4x4",
        "node.kubernetes.io/instance-type": "ct6e-standard-4t"}
    js = _one(objs, "JobSet", "jax-4x4")
    assert js["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"] == "cloud.google.com/gke-nodepool"
    (rj,) = js["spec"]["replicatedJobs"]
    job = rj["template"]["spec"]
    assert (rj["replicas"], job["parallelism"], job["completions"]) == (1, 4, 4)
    pod = job["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
                                   "cloud.google.com/gke-tpu-topology": "4x4"}
    assert pod["containers"][0]["resources"]["limits"]["google.com/tpu"] == "4"
    env = {e["name"]: e["value"] for e in pod["containers"][0]["env"]}
    # v6e: one TensorCore, one JAX device per chip: 16 in the slice, 4 per pod.
    assert (env["SLICE_EXPECTED_GLOBAL_DEVICES"], env["SLICE_EXPECTED_LOCAL_DEVICES"]) == ("16", "4")
    assert "metadata" not in job["template"] or "annotations" not in job["template"]["metadata"]


@pytest.mark.parametrize("profile, admitted", [
    ("gpu-cluster", {"ml/llama-serving#1": "h100", "ml/finetune-spot": "l4-spot"}),
    ("v6e-cluster", {"research/jax-4x4": "v6e-4x4"}),
    # The HPA target has no spec.replicas: plan starts it at the API server's default, 1.
    ("h100-cluster", {"serving/llama-vllm#1": "h100", "serving/finetune-low": "h100"}),
])
def test_plan_admits_each_workload_on_its_pool(built, profile, admitted):
    cluster = overlay.build(profile, built[profile])
    plan = simulate.run(cluster, scenario.default(cluster))
    rows = {r.workload: r for r in plan.steps[-1].rows}
    assert {w: r.state for w, r in rows.items()} == {w: "admitted" for w in admitted}
    for w, flavor in admitted.items():
        assert flavor in rows[w].detail


def test_vllm_behind_the_gateway_autoscales_on_the_samples_metric(built):
    objs = built["h100-cluster"]
    deploy = _one(objs, "Deployment", "llama-vllm")
    assert "replicas" not in deploy["spec"]   # the HPA owns them
    pod = deploy["spec"]["template"]
    (server,) = pod["spec"]["containers"]
    assert server["image"] == "docker.io/vllm/vllm-openai:v0.10.0"
    assert "--tensor-parallel-size=1" in server["args"]
    assert server["resources"]["limits"]["nvidia.com/gpu"] == "1"
    # GKE's multi-host vLLM HPA sample: the metric, its type and the target kind.
    (sample_metric,) = yamlio.load_all((SAMPLES / "llm-multihost-gpus" / "vllm-hpa.yaml").read_text())[0]["spec"][
        "metrics"]
    hpa = _one(objs, "HorizontalPodAutoscaler", "llama-vllm")
    (metric,) = hpa["spec"]["metrics"]
    assert metric["pods"]["metric"] == sample_metric["pods"]["metric"]
    assert metric["pods"]["target"]["type"] == "AverageValue" and metric["pods"]["target"]["averageValue"] == "5"
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "llama-vllm"}
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (1, 12)
    # Managed Prometheus scrapes the port and path GKE's vLLM sample on port 8000 does.
    (sample_pm,) = yamlio.load_all((SAMPLES / "vllm-tpu" / "vllm_pod_monitor.yaml").read_text())
    pm = _one(objs, "PodMonitoring", "llama-vllm")
    assert pm["spec"]["endpoints"] == [{k: sample_pm["spec"]["endpoints"][0][k] for k in ("port", "path", "interval")}]
    assert pm["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    # The gateway: route -> pool -> the server's pods on its port, the EPP by name.
    pool = _one(objs, "InferencePool", "llama-vllm")
    assert pool["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert pool["spec"]["targetPorts"] == [{"number": server["ports"][0]["containerPort"]}]
    assert pool["spec"]["endpointPickerRef"]["name"] == "llama-vllm-epp"
    route = _one(objs, "HTTPRoute", "llama-vllm-route")
    assert route["spec"]["parentRefs"] == [{"name": "inference-gateway"}]
    assert route["spec"]["rules"][0]["backendRefs"][0]["name"] == "llama-vllm"
    assert _one(objs, "Gateway", "inference-gateway")["spec"]["gatewayClassName"] == "gke-l7-regional-internal-managed"


def test_vllm_scale_up_to_the_hpa_maximum_preempts_fine_tuning(built):
    """Worked out by hand: 2 x a3-highgpu-8g = 16 H100s. Fine-tuning holds 8; up to 8 server
    pods (1 H100 each) run beside it (16 of 16). The ninth needs a GPU only preemption frees: the
    Job (low) goes, and all 12 server pods run on 12 H100s."""
    cluster = overlay.build("h100-cluster", built["h100-cluster"])
    sc = scenario.from_dict({
        "initial": [{"kind": "Deployment", "namespace": "serving", "name": "llama-vllm"},
                    {"kind": "Job", "namespace": "serving", "name": "finetune-low"}],
        "steps": [{"title": "8 replicas", "scale": {"kind": "Deployment", "namespace": "serving",
                                                    "name": "llama-vllm", "replicas": 8}},
                  {"title": "12 replicas", "scale": {"kind": "Deployment", "namespace": "serving",
                                                     "name": "llama-vllm", "replicas": 12}}],
    }, cluster)
    plan = simulate.run(cluster, sc)
    states = [{r.workload: r.state for r in step.rows} for step in plan.steps]
    server = [f"serving/llama-vllm#{i}" for i in range(1, 13)]
    assert states[1] == {**{w: "admitted" for w in server[:8]}, "serving/finetune-low": "admitted"}
    assert states[2] == {**{w: "admitted" for w in server}, "serving/finetune-low": "preempted"}


# ---------------------------------------------------------------- what the spec refuses on these clusters

def _problems(raw: dict) -> list[str]:
    """What the spec checks refuse, or else what synth refuses on the objects it built."""
    with pytest.raises(SpecError) as e:
        tree.render(spec.from_dict(raw, "example.yaml"))
    return [f"{p.path}: {p.message}" for p in e.value.problems]


def _workload(raw: dict, name: str) -> dict:
    return next(w for w in raw["workloads"] if w["name"] == name)


def test_a_workload_must_name_its_gpu_where_a_cluster_has_two():
    raw = copy.deepcopy(_raw(H100_L4))
    _workload(raw, "llama-serving").pop("accelerator")
    assert _problems(raw) == ["workloads[0].profiles[0]: profile 'gpu-cluster' has several GPUs (nvidia-h100-80gb, "
                              "nvidia-l4); name the one this workload runs on with `accelerator`"]


def test_a_pod_larger_than_the_named_gpu_machine_is_refused():
    raw = copy.deepcopy(_raw(H100_L4))
    _workload(raw, "finetune-spot")["gpusPerNode"] = 4     # g2-standard-24 has 2 L4
    assert _problems(raw) == ["workloads[1]: a pod asks for 4 nvidia-l4 but g2-standard-24 has 2 per node"]


def test_a_workload_bigger_than_its_pools_is_refused():
    raw = copy.deepcopy(_raw(H100_L4))
    _workload(raw, "finetune-spot")["nodes"] = 5           # 5 pods x 2 L4 = 10 > 4 nodes x 2
    (p,) = _problems(raw)
    assert p == ("workloads[1]: one Job Workload of 'finetune-spot' on profile 'gpu-cluster' can never be admitted: "
                 "one Workload needs 10 nvidia.com/gpu for pod set main (5 pods × 2), but ClusterQueue gpus can ever "
                 "get at most 8 in flavor l4-spot")


@pytest.mark.parametrize("edit, expected", [
    (lambda r: _workload(r, "jax-4x4").__setitem__("shape", "2x4"),
     "workloads[0].shape: 2x4 is not the topology of a tpu-v6e-slice node pool of profile 'v6e-cluster'; "
     "a static slice is a whole pool slice: use 4x4"),
    (lambda r: _workload(r, "jax-4x4").__setitem__("slices", 3),
     "workloads[0].slices: 3 slices of 4x4 are admitted together, but profile 'v6e-cluster' has node pools "
     "for 2; it could never be admitted"),
    (lambda r: r["profiles"]["v6e-cluster"]["nodePools"][0].__setitem__("nodes", 6),
     "profiles.v6e-cluster.nodePools[0].nodes: a 4x4 slice of ct6e-standard-4t is 4 VMs; 6 nodes are not whole "
     "slices (use a multiple of 4)"),
    (lambda r: r["profiles"]["v6e-cluster"]["nodePools"][0].__setitem__("topology", "4x4x4"),
     "profiles.v6e-cluster.nodePools[0].topology: 4x4x4 has 3 dimensions, this TPU needs 2 (like 2x2)"),
])
def test_static_tpu_mistakes_are_refused(edit, expected):
    raw = copy.deepcopy(_raw(V6E))
    edit(raw)
    assert expected in _problems(raw)
