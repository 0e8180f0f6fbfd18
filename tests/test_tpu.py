"""TPU7x profiles: shape facts, quotas from the reservation, the JobSet and
LWS pod counts, the image's env contract, the spec checks (exit 2 with a
path and what would fit), and the lints of generated slice workloads."""
import copy
import importlib.util

import pytest

from generator.builders import kueue_objects
from generator.builders.workloads import tpu_jobset
from generator.kernel import catalog, paths, tpu_slices, yamlio
from generator.kernel.errors import SpecError
from generator.model import cluster_queues
from tests import helpers

TPU7X = catalog.tpu_generation("tpu7x")
DYNAMIC = TPU7X.dynamic
VM = TPU7X.machine("tpu7x-standard-4t")
SUB, SUPER = "tpu7x-subslice", "tpu7x-superslice"


def _workload(raw, name):
    return next(w for w in raw["workloads"] if w["name"] == name)


def _objects(tree: dict, profile: str) -> list[dict]:
    prefix = f"overlays/{profile}/"
    return [o for path, text in sorted(tree.items())
            if path.startswith(prefix) and not path.endswith("kustomization.yaml")
            for o in yamlio.load_all(text)]


def _one(objs, kind, name=None):
    (o,) = [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    return o


def _errors(raw) -> str:
    with pytest.raises(SpecError) as e:
        helpers.specmod.from_dict(raw, "spec.yaml")
    return e.value.render()


# ---------------------------------------------------------------- facts

@pytest.mark.parametrize("shape,chips,pods,devices", [
    ("2x2x1", 4, 1, 8), ("2x2x2", 8, 2, 16), ("2x2x4", 16, 4, 32), ("2x4x4", 32, 8, 64),
    ("4x4x4", 64, 16, 128), ("4x4x8", 128, 32, 256), ("4x8x8", 256, 64, 512),
])
def test_shape_derivations(shape, chips, pods, devices):
    s = tpu_slices.slice_of(TPU7X, VM, shape)
    assert (s.chips, s.pods, s.tpus_per_pod, s.devices, s.devices_per_pod) == (chips, pods, 4, devices, 8)
    assert s.pods * s.tpus_per_pod == s.chips


def test_whole_cube_shapes_are_what_the_slice_controller_accepts():
    def texts(n):
        return [s.text for s in DYNAMIC.whole_cube_shapes(n)]
    assert texts(1) == ["4x4x4"]
    assert texts(2) == ["4x4x4", "4x4x8"]
    assert texts(4) == ["4x4x4", "4x4x8", "4x4x12", "4x4x16", "4x8x8"]
    for s in DYNAMIC.whole_cube_shapes(8):
        assert DYNAMIC.is_whole_cubes(s)


def test_topology_levels():
    block, host = "cloud.google.com/gce-topology-block", "kubernetes.io/hostname"
    cube = "cloud.google.com/gke-tpu-partition-4x4x4-id"
    assert DYNAMIC.topology_levels(subslicing=False) == [block, cube, host]
    sub = DYNAMIC.topology_levels(subslicing=True)
    assert sub[:2] == [block, cube] and sub[-1] == host
    assert sub[2:-1] == [f"cloud.google.com/gke-tpu-partition-{s}-id" for s in ("2x4x4", "2x2x4", "2x2x2", "2x2x1")]


# ---------------------------------------------------------------- quotas and pod counts follow the spec

@pytest.mark.parametrize("cubes", [1, 2, 3])
def test_quota_follows_the_reservation(cubes):
    raw = helpers.fixture_raw()
    raw["profiles"][SUB]["tpu"]["reservation"]["cubes"] = cubes
    cq = _one(_objects(helpers.render(raw), SUB), "ClusterQueue")
    vms = cubes * 16
    quotas = {r["name"]: r["nominalQuota"] for r in cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"]}
    memory = f"{vms * 960}Gi" if vms * 960 % 1024 else f"{vms * 960 // 1024}Ti"
    assert quotas == {"google.com/tpu": cubes * 64, "cpu": vms * 224, "memory": memory}
    assert cq["spec"]["resourceGroups"][0]["coveredResources"] == ["google.com/tpu", "cpu", "memory"]
    assert cq["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": kueue_objects.SLICE_CHECK}]}


def test_quota_per_vm_overrides_and_unlimited():
    raw = helpers.fixture_raw()
    raw["profiles"][SUB]["tpu"]["reservation"].update(cpuPerVm="222", memoryPerVm="900Gi")
    raw["profiles"][SUPER]["tpu"]["unlimitedQuota"] = True
    tree = helpers.render(raw)
    sub = _one(_objects(tree, SUB), "ClusterQueue")["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert [(r["name"], r["nominalQuota"]) for r in sub] == [
        ("google.com/tpu", 128), ("cpu", 32 * 222), ("memory", f"{32 * 900}Gi")]
    sup = _one(_objects(tree, SUPER), "ClusterQueue")["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert [(r["name"], r["nominalQuota"]) for r in sup] == list(cluster_queues.UNLIMITED_QUOTA.items())


@pytest.mark.parametrize("shape,slices", [("2x2x1", 6), ("2x2x2", 6), ("2x2x4", 3), ("2x4x4", 2)])
def test_subslice_jobset_follows_the_shape(shape, slices):
    raw = helpers.fixture_raw()
    _workload(raw, "jax-subslice").update(shape=shape, slices=slices)
    js = _one(_objects(helpers.render(raw), SUB), "JobSet")
    s = tpu_slices.slice_of(TPU7X, VM, shape)
    (rj,) = js["spec"]["replicatedJobs"]
    job = rj["template"]["spec"]
    pod = job["template"]
    assert rj["replicas"] == slices
    assert job["parallelism"] == job["completions"] == s.pods
    assert pod["metadata"]["annotations"] == {DYNAMIC.slice_topology_annotation: shape}
    (c,) = pod["spec"]["containers"]
    assert c["resources"]["requests"]["google.com/tpu"] == "4" == c["resources"]["limits"]["google.com/tpu"]
    env = {e["name"]: e["value"] for e in c["env"]}
    assert env["SLICE_EXPECTED_GLOBAL_DEVICES"] == str(s.chips * 2) and env["SLICE_TOPOLOGY"] == shape
    assert env["SLICE_CHECK_DISTRIBUTED"] == ("false" if s.pods == 1 else "true")
    assert helpers.rule_findings([js], ("TP",)) == []


@pytest.mark.parametrize("shape,cubes", [("4x4x4", 1), ("4x4x8", 2), ("4x4x12", 3), ("4x8x8", 4)])
def test_superslice_jobset_follows_the_shape(shape, cubes):
    raw = helpers.fixture_raw()
    raw["profiles"][SUPER]["tpu"]["reservation"]["cubes"] = cubes
    _workload(raw, "jax-superslice")["shape"] = shape
    objs = _objects(helpers.render(raw), SUPER)
    job = _one(objs, "JobSet")["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert job["parallelism"] == cubes * 16
    quotas = _one(objs, "ClusterQueue")["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert quotas[0] == {"name": "google.com/tpu", "nominalQuota": cubes * 64}


def test_lws_follows_the_shape_and_replicas():
    raw = helpers.fixture_raw()
    w = _workload(raw, "qwen")
    w.update(shape="2x2x4")
    w["prefill"]["replicas"], w["decode"]["replicas"] = 3, 5
    objs = _objects(helpers.render(raw), SUB)
    for role, replicas in (("prefill", 3), ("decode", 5)):
        lws = _one(objs, "LeaderWorkerSet", f"qwen-{role}")
        lwt = lws["spec"]["leaderWorkerTemplate"]
        assert lws["spec"]["replicas"] == replicas and lwt["size"] == 4
        for t in (lwt["leaderTemplate"], lwt["workerTemplate"]):
            assert t["metadata"]["annotations"][DYNAMIC.slice_topology_annotation] == "2x2x4"
        assert "--tensor-parallel-size=32" in lwt["leaderTemplate"]["spec"]["containers"][0]["command"][2]
    assert helpers.rule_findings(objs, ("TP",)) == []


def test_engine_env_overrides_and_adds():
    raw = helpers.fixture_raw()
    _workload(raw, "qwen")["engineEnv"] = {"VLLM_LOGGING_LEVEL": "INFO", "EXTRA": "1"}
    lws = _one(_objects(helpers.render(raw), SUB), "LeaderWorkerSet", "qwen-prefill")
    for t in ("leaderTemplate", "workerTemplate"):
        env = lws["spec"]["leaderWorkerTemplate"][t]["spec"]["containers"][0]["env"]
        names = [e["name"] for e in env]
        assert len(names) == len(set(names))
        values = {e["name"]: e.get("value") for e in env}
        assert values["VLLM_LOGGING_LEVEL"] == "INFO" and values["EXTRA"] == "1"
        assert next(e for e in env if e["name"] == "HF_TOKEN")["valueFrom"]["secretKeyRef"] == \
            {"name": "hf-secret", "key": "hf_api_token"}


# ---------------------------------------------------------------- the image's env contract

def _image_contract():
    path = paths.ROOT / "images" / "jax-slice-check" / "slice_check_config.py"
    spec = importlib.util.spec_from_file_location("slice_check_config_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_env_matches_the_image_contract():
    contract = _image_contract()
    objs = _objects(helpers.render(helpers.fixture_raw()), SUB) + _objects(helpers.render(helpers.fixture_raw()), SUPER)
    jobsets = [o for o in objs if o["kind"] == "JobSet"]
    assert len(jobsets) == 2
    for js in jobsets:
        pod = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
        (c,) = pod["spec"]["containers"]
        env = {e["name"]: e["value"] for e in c["env"]}
        assert set(env) == set(contract.ENV_VARS)
        assert set(contract.REQUIRED_ENV_VARS) <= set(env)
        assert "command" not in c and "args" not in c, "the image's entrypoint runs the check"
        # The image's own parser accepts what we set, and agrees with the shape.
        cfg = contract.parse_env(env)
        shape = tpu_slices.slice_of(TPU7X, VM, pod["metadata"]["annotations"][DYNAMIC.slice_topology_annotation])
        assert (cfg.topology, cfg.expected_global_devices, cfg.expected_local_devices) == \
            (shape.text, shape.devices, shape.devices_per_pod)
        assert cfg.should_initialize_distributed() == (shape.pods > 1)
    assert {tpu_jobset.ENV_TOPOLOGY, tpu_jobset.ENV_GLOBAL, tpu_jobset.ENV_LOCAL, tpu_jobset.ENV_DISTRIBUTED} == \
        set(contract.ENV_VARS)


# ---------------------------------------------------------------- spec checks, through the CLI

CLI_CASES = {
    "shape that is no sub-slice": (
        lambda r: _workload(r, "jax-subslice").__setitem__("shape", "2x2x3"),
        "workloads['jax-subslice'].shape: 2x2x3 is not a tpu7x sub-slice: dynamic sub-slices inside a 4x4x4 cube are "
        "2x2x1, 2x2x2, 2x2x4, 2x4x4"),
    "4x4x8 on one cube": (
        lambda r: r["profiles"][SUPER]["tpu"]["reservation"].__setitem__("cubes", 1),
        "workloads['jax-superslice'].shape: one slice has 128 chips, but profile 'tpu7x-superslice' reserves 64 chips "
        "(1 cube, 16 VMs); shapes that fit: 4x4x4, or raise tpu.reservation.cubes to 2"),
    "sub-slice shape for a super-slice workload": (
        lambda r: _workload(r, "jax-superslice").__setitem__("shape", "2x2x2"),
        "workloads['jax-superslice'].shape: 2x2x2 is a sub-slice shape, but profile 'tpu7x-superslice' super-slices whole "
        "4x4x4 cubes (its Topology has no 2x2x2 level); use whole cubes such as 4x4x4, 4x4x8, or a subslice profile"),
}


@pytest.fixture(scope="module")
def previous_output(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    helpers.synth_into(out, helpers.fixture_raw())
    return out


@pytest.mark.parametrize("case", sorted(CLI_CASES))
def test_impossible_request_refused_by_the_cli(case, tmp_path, previous_output, capsys):
    mutate, expected = CLI_CASES[case]
    raw = copy.deepcopy(helpers.fixture_raw())
    mutate(raw)
    spec_file = tmp_path / "bad.yaml"
    spec_file.write_text(yamlio.dump(raw))
    before = helpers.writer.read_tree(previous_output, paths.OUTPUT_DIRS)
    code, _, err = helpers.run_cli(capsys, "synth", "--spec", spec_file, "--out", previous_output)
    assert code == 2, err
    assert helpers.without_positions(err).strip().splitlines() == [f"{spec_file}: {expected}"], err
    assert helpers.writer.read_tree(previous_output, paths.OUTPUT_DIRS) == before


SPEC_CASES = {
    "super-slice shape not whole cubes": (
        lambda r: _workload(r, "jax-superslice").__setitem__("shape", "4x4x6"),
        ["workloads['jax-superslice'].shape: 4x4x6 is not whole 4x4x4 cubes: a super-slice needs every dimension a multiple of 4 "
         "(e.g. 4x4x4, 4x4x8)"]),
    "super-slice dimensions out of order": (
        lambda r: _workload(r, "jax-superslice").__setitem__("shape", "8x4x4"),
        ["workloads['jax-superslice'].shape: 8x4x4: the slice controller wants dimensions in non-decreasing order; "
         "write it as 4x4x8"]),
    "super-slice shape on a sub-slice profile": (
        lambda r: _workload(r, "jax-subslice").__setitem__("shape", "4x4x4"),
        ["workloads['jax-subslice'].shape: 4x4x4 is a super-slice (whole 4x4x4 cubes), but profile 'tpu7x-subslice' sub-slices "
         "its cubes; use a sub-slice shape (2x2x1, 2x2x2, 2x2x4, 2x4x4) or a superslice profile"]),
    "more slices than the reservation in one JobSet": (
        lambda r: _workload(r, "jax-subslice").__setitem__("slices", 17),
        ["workloads['jax-subslice'].slices: 17 slices of 2x2x2 are admitted together (136 chips), but profile 'tpu7x-subslice' "
         "reserves 128 chips (2 cubes, 32 VMs); at most 16 such slices fit, or raise tpu.reservation.cubes to 3"]),
    "highest tier does not fit at once": (
        lambda r: (r["profiles"][SUB]["tpu"]["reservation"].__setitem__("cubes", 1),
                   _workload(r, "qwen")["prefill"].__setitem__("replicas", 5)),
        ["profiles.tpu7x-subslice.tpu.reservation.cubes: the 'high' tier, the highest on profile 'tpu7x-subslice', "
         "needs 72 chips at once (qwen: 9 LWS groups (5 prefill + 4 decode) of 2x2x2 = 72 chips), but the "
         "reservation holds 64 chips (1 cube, 16 VMs); raise cubes to 2 or give those workloads fewer slices"]),
    "slice names over 49 characters": (
        lambda r: _workload(r, "jax-subslice").__setitem__("name", "kueue-jobset-simple-subslicing"),
        ["workloads['kueue-jobset-simple-subslicing'].name: the slice controller would name this workload's Slices like "
         "'llm-jobset-kueue-jobset-simple-subslicing-xxxxx-job-jax-5' (57 characters; xxxxx is Kueue's hash), "
         "over the 49 a Slice name may have; shorten the namespace, the workload name or replicatedJobName by 8 characters"]),
    "LWS group index lengthens the slice name": (
        lambda r: _workload(r, "qwen")["prefill"].__setitem__("replicas", 11),
        ["workloads['qwen'].name: the slice controller would name this workload's Slices like "
         "'llm-leaderworkerset-qwen-prefill-10-xxxxx-worker-0' (50 characters; xxxxx is Kueue's hash), "
         "over the 49 a Slice name may have; shorten the namespace or the prefill LeaderWorkerSet's name by 1 character"]),
    "pod bigger than a VM": (
        lambda r: _workload(r, "qwen")["resources"].__setitem__("cpu", "230"),
        ["workloads['qwen'].resources.cpu: 230 + 1 cpu per pod, but a tpu7x-standard-4t VM offers 224; one pod runs per VM"]),
    "sidecar tips the pod over the VM's memory": (
        lambda r: _workload(r, "qwen")["sidecar"]["resources"].__setitem__("memory", "111Gi"),
        ["workloads['qwen'].resources.memory: 850Gi + 111Gi memory per pod, but a tpu7x-standard-4t VM offers 960Gi; "
         "one pod runs per VM"]),
    "JobSet pod needs cpu and memory requests": (
        lambda r: _workload(r, "jax-subslice")["resources"].pop("memory"),
        ["workloads['jax-subslice'].resources: TPU pods need explicit memory requests"]),
    "engine flag the generator owns": (
        lambda r: _workload(r, "qwen")["engineArgs"].append("--tensor-parallel-size=8"),
        ["workloads['qwen'].engineArgs[9]: --tensor-parallel-size is set by the generator (from model, shape and port); "
         "remove it from engineArgs"]),
    "token value in the engine env": (
        lambda r: _workload(r, "qwen").__setitem__("engineEnv", {"HF_TOKEN": "hf_abc", "VLLM_LOGGING_LEVEL": "INFO"}),
        ["workloads['qwen'].engineEnv.HF_TOKEN: the token comes from the profile's hfTokenSecret by reference; "
         "never put its value in the spec"]),
    "sidecar and engine on one port": (
        lambda r: _workload(r, "qwen").__setitem__("decodeEnginePort", 8000),
        ["workloads['qwen'].decodeEnginePort: decode's vLLM and its routing sidecar cannot share port 8000; "
         "the sidecar takes `port` (the pool's target port)"]),
    "serving without a service account": (
        lambda r: r["profiles"][SUB]["values"].pop("serviceAccount"),
        ["profiles.tpu7x-subslice.values: profile 'tpu7x-subslice' needs values.serviceAccount for workload 'qwen'"]),
    "two stacks selecting the same pods": (
        lambda r: r["workloads"].append({**copy.deepcopy(_workload(r, "qwen")), "name": "pd2",
                                         "gateway": {"name": "gw2", "className": "gke-l7-rilb"}}),
        ["workloads['pd2'].guide: guide label 'pd-disaggregation' is also used by workloads[5] in namespace 'llm' on "
         "profile 'tpu7x-subslice'; each pool would select the other's pods"]),
    "Kueue without v1beta2": (
        lambda r: r["profiles"][SUPER].__setitem__("kueueVersion", "v0.12.3"),
        ["profiles.tpu7x-superslice.kueueVersion: TPU profile 'tpu7x-superslice' needs a Kueue serving "
         "kueue.x-k8s.io/v1beta2 (the slice controller's API), v0.12.3 does not; use v0.17.4, v0.19.2"]),
    "sidecar image unknown": (
        lambda r: _workload(r, "qwen")["sidecar"].__setitem__("image", "nope"),
        ["workloads['qwen'].sidecar.image: unknown image 'nope'"]),
}


SCHEMA_CASES: set[str] = set()


@pytest.mark.parametrize("case", sorted(SPEC_CASES))
def test_spec_check(case):
    mutate, expected = SPEC_CASES[case]
    raw = copy.deepcopy(helpers.fixture_raw())
    mutate(raw)
    lines = _errors(raw).splitlines()
    if case in SCHEMA_CASES:  # jsonschema also reports the failed if/then branch as unevaluated
        assert all(f"spec.yaml: {want}" in lines for want in expected), lines
        return
    assert len(lines) == len(expected), lines
    for line, want in zip(lines, expected, strict=True):
        assert line.startswith(f"spec.yaml: {want}"), line


def test_fixture_spec_passes_every_tpu_check():
    s = helpers.fixture_spec()
    assert {SUB, SUPER} <= set(s.profiles)


# ---------------------------------------------------------------- generated slice workloads pass the validator's TPU rules

@pytest.fixture(scope="module")
def shipped_objs():
    tree = helpers.render(helpers.fixture_raw())
    return _objects(tree, SUB) + _objects(tree, SUPER)


def test_generated_slice_workloads_pass_the_tpu_rules(shipped_objs):
    assert len([o for o in shipped_objs if o["kind"] in ("JobSet", "LeaderWorkerSet")]) == 4
    assert helpers.rule_findings(shipped_objs, ("TP",)) == []
