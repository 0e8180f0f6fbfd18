"""The accelerators issue 38 added to the device catalog (GB200 on A4X, RTX PRO 6000 on G4,
TPU v4, T4, single-host TPU7x, v6e sub-slicing), each in a profile of tests/fixtures/accelerators.yaml: the spec synthesizes, the
output validates clean, and plan admits each profile's workload. The catalog facts themselves
are held to their sources in tests/test_catalog.py."""
from __future__ import annotations

import pytest

from generator import model as specmod
from generator.kernel import yamlio
from generator.kernel.errors import SpecError
from tests import helpers

FIXTURE = helpers.FIXTURES / "accelerators.yaml"
# profile -> the workload plan must admit there
PROFILES = {"gb200": "torch-gb200", "g4": "torch-g4", "t4": "torch-t4", "v4": "jax-v4",
            "tpu7x-1t": "jax-tpu7x-1t", "v6e-sub": "jax-v6e-sub"}


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    d = tmp_path_factory.mktemp("accelerators")
    (d / "platform.yaml").write_text(FIXTURE.read_text())
    return d


def test_synth_validate_plan(repo, capsys, monkeypatch):
    monkeypatch.chdir(repo)
    code, out, err = helpers.run_cli(capsys, "synth")
    assert code == 0, err
    code, out, err = helpers.run_cli(capsys, "validate")
    assert code == 0 and "0 error(s), 0 warning(s)" in out + err, out + err
    for profile, name in PROFILES.items():
        code, out, err = helpers.run_cli(capsys, "plan", f"overlays/{profile}")
        assert code == 0, out + err
        assert any(f"research/{name}" in line and " admitted " in line for line in out.splitlines()), out


def test_gb200_pods_get_a4x_rdma(repo, capsys, monkeypatch):
    monkeypatch.chdir(repo)
    helpers.run_cli(capsys, "synth")
    (js,) = yamlio.load_all((repo / "overlays/gb200/jobset_research_torch-gb200.yaml").read_text())
    pod = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert pod["spec"]["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-gb200"}
    assert '"network":"rdma-3"' in pod["metadata"]["annotations"]["networking.gke.io/interfaces"]
    assert '"network":"rdma-4"' not in pod["metadata"]["annotations"]["networking.gke.io/interfaces"]
    (ds,) = yamlio.load_all((repo / "controllers/gb200/gpudirect/daemonset_kube-system_nccl-rdma-installer-a4x.yaml")
                            .read_text())
    assert ds["spec"]["template"]["spec"]["initContainers"][0]["image"].endswith("nccl-plugin-gib-arm64:v1.1.0")


def test_v4_slice_pods_ask_for_a_vm_each(repo, capsys, monkeypatch):
    """A 2x2x2 slice of 4-chip VMs: two pods of google.com/tpu 4 (Cloud TPU v4: v4-16 is 2x2x2)."""
    monkeypatch.chdir(repo)
    helpers.run_cli(capsys, "synth")
    (js,) = yamlio.load_all((repo / "overlays/v4/jobset_research_jax-v4.yaml").read_text())
    job = js["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert job["parallelism"] == 2
    c = job["template"]["spec"]["containers"][0]
    assert c["resources"]["limits"]["google.com/tpu"] in (4, "4")
    assert job["template"]["spec"]["nodeSelector"] == {"cloud.google.com/gke-tpu-accelerator": "tpu-v4-podslice",
                                                       "cloud.google.com/gke-tpu-topology": "2x2x2"}


def test_t4_pool_gets_its_gpus_and_label(repo, capsys, monkeypatch):
    """An N1 pool with `gpus: 2` attached: its flavor selects GKE's nvidia-tesla-t4 accelerator label
    (Compute Engine GPU platforms: "N1 machine series: NVIDIA T4: nvidia-tesla-t4") and its quota
    counts 2 GPUs a node x 2 nodes; the pods select the label and ask for their 2 GPUs."""
    monkeypatch.chdir(repo)
    helpers.run_cli(capsys, "synth")
    objs = [o for f in sorted((repo / "overlays/t4").glob("*.yaml")) for o in yamlio.load_all(f.read_text())]
    (rf,) = [o for o in objs if o["kind"] == "ResourceFlavor"]
    assert rf["spec"]["nodeLabels"]["cloud.google.com/gke-accelerator"] == "nvidia-tesla-t4"
    (cq,) = [o for o in objs if o["kind"] == "ClusterQueue"]
    quotas = {r["name"]: r["nominalQuota"] for g in cq["spec"]["resourceGroups"] for f in g["flavors"]
              for r in f["resources"]}
    assert str(quotas["nvidia.com/gpu"]) == "4"
    (job,) = yamlio.load_all((repo / "overlays/t4/job_research_torch-t4.yaml").read_text())
    pod = job["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}
    assert str(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]) == "2"


@pytest.mark.parametrize("machine, gpus, why", [
    ("g2-standard-24", 2, "comes with its accelerators"),
    ("e2-standard-8", 1, "takes no attached GPUs"),
])
def test_gpus_only_on_n1(machine, gpus, why):
    """The negative half: `gpus` on a machine type whose series takes no attached GPUs is one line."""
    raw = yamlio.load_user(FIXTURE.read_text())
    raw["profiles"]["t4"]["nodePool"] = {"name": "t4", "machineType": machine, "gpus": gpus, "nodes": 2}
    with pytest.raises(SpecError) as e:
        specmod.from_dict(raw, "accelerators.yaml")
    assert any("gpus" in line and why in line for line in str(e.value).splitlines()), str(e.value)


def test_t4_pod_larger_than_the_attached_gpus_is_refused():
    """The pool's `gpus` is what a node has: a pod asking for more T4s than that is one line."""
    raw = yamlio.load_user(FIXTURE.read_text())
    (w,) = [w for w in raw["workloads"] if w["name"] == "torch-t4"]
    w["gpusPerNode"] = 4
    with pytest.raises(SpecError) as e:
        specmod.from_dict(raw, "accelerators.yaml")
    assert "asks for 4 nvidia-tesla-t4 but n1-standard-16 has 2 per node" in str(e.value), str(e.value)


def test_tpu7x_1t_slices_are_one_chip_vms(repo, capsys, monkeypatch):
    """Two 1x1x1 slices on tpu7x-standard-1t: one pod of google.com/tpu 1 per slice (xpk:
    tpu7x-standard-1t, topology 1x1x1, one VM), two JAX devices per chip (Cloud TPU TPU7x: "JAX
    expose[s] each Ironwood chip as two separate devices"); quota 2 chips, CPU 2 x 56 (GKE's
    cluster autoscaler: tpu7x-standard-1t has 56 vCPUs)."""
    monkeypatch.chdir(repo)
    helpers.run_cli(capsys, "synth")
    (js,) = yamlio.load_all((repo / "overlays/tpu7x-1t/jobset_research_jax-tpu7x-1t.yaml").read_text())
    (rj,) = js["spec"]["replicatedJobs"]
    assert rj["replicas"] == 2 and rj["template"]["spec"]["parallelism"] == 1
    pod = rj["template"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-tpu-accelerator": "tpu7x",
                                   "cloud.google.com/gke-tpu-topology": "1x1x1"}
    c = pod["containers"][0]
    assert str(c["resources"]["limits"]["google.com/tpu"]) == "1"
    assert {e["name"]: e["value"] for e in c["env"]}["SLICE_EXPECTED_LOCAL_DEVICES"] == "2"
    (cq,) = yamlio.load_all((repo / "overlays/tpu7x-1t/clusterqueue_research.yaml").read_text())
    quotas = {r["name"]: str(r["nominalQuota"]) for g in cq["spec"]["resourceGroups"] for f in g["flavors"]
              for r in f["resources"]}
    assert (quotas["google.com/tpu"], quotas["cpu"]) == ("2", "112")


@pytest.mark.parametrize("pool, want", [
    ({"machineType": "tpu7x-standard-1t", "topology": "2x2x1"},
     "2x2x1 is not a tpu7x-standard-1t node-pool topology (allowed: 1x1x1)"),
    ({"machineType": "tpu7x-standard-4t", "topology": "1x1x1"},
     "1x1x1 is not a tpu7x-standard-4t node-pool topology"),
])
def test_tpu7x_1t_topology_is_one_chip(pool, want):
    """The negative half: a 1-chip VM forms only 1x1x1, and a 4-chip VM no 1x1x1; one line each,
    no traceback from the workload that asks for the missing slice."""
    raw = yamlio.load_user(FIXTURE.read_text())
    raw["profiles"]["tpu7x-1t"]["nodePool"].update(pool)
    with pytest.raises(SpecError) as e:
        specmod.from_dict(raw, "accelerators.yaml")
    assert want in str(e.value), str(e.value)


def _overlay(repo, profile):
    return [o for f in sorted((repo / f"overlays/{profile}").glob("*.yaml")) for o in yamlio.load_all(f.read_text())]


def test_v6e_sub_slicing_objects_as_xpk_writes_them(repo, capsys, monkeypatch):
    """xpk's v6e sub-slicing, object by object (AI-Hypercomputer/xpk 367c8382):
    - kueue_manager.py: the flavor selects the accelerator and the cluster's topology
      (create_machine_label) and names the Topology; the Topology's levels are
      cloud.google.com/gke-tpu-slice-<t>-id for the SUB_SLICING_TOPOLOGIES inside 16x16,
      largest first, then kubernetes.io/hostname; no AdmissionCheck (only super-slicing adds one);
    - workload.py WORKLOAD_CREATE_YAML: no exclusive-topology annotation on a sub-slicing JobSet,
      parallelism = the sub-slice's VMs, pod annotations from create_sub_slicing_annotations,
      nodeSelector the accelerator and the cluster's topology label."""
    monkeypatch.chdir(repo)
    helpers.run_cli(capsys, "synth")
    objs = _overlay(repo, "v6e-sub")
    (rf,) = [o for o in objs if o["kind"] == "ResourceFlavor"]
    (topo,) = [o for o in objs if o["kind"] == "Topology"]
    assert rf["spec"]["nodeLabels"] == {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
                                        "cloud.google.com/gke-tpu-topology": "16x16"}
    assert rf["spec"]["topologyName"] == topo["metadata"]["name"]
    assert [lv["nodeLabel"] for lv in topo["spec"]["levels"]] == [
        "cloud.google.com/gke-tpu-slice-16x16-id", "cloud.google.com/gke-tpu-slice-8x16-id",
        "cloud.google.com/gke-tpu-slice-8x8-id", "cloud.google.com/gke-tpu-slice-4x8-id",
        "cloud.google.com/gke-tpu-slice-4x4-id", "cloud.google.com/gke-tpu-slice-2x4-id",
        "kubernetes.io/hostname"]
    assert not [o for o in objs if o["kind"] == "AdmissionCheck"]
    (cq,) = [o for o in objs if o["kind"] == "ClusterQueue"]
    assert "admissionChecks" not in cq["spec"] and "admissionChecksStrategy" not in cq["spec"]
    quotas = {r["name"]: str(r["nominalQuota"]) for g in cq["spec"]["resourceGroups"] for f in g["flavors"]
              for r in f["resources"]}
    # One 16x16 pool: 256 chips on 64 ct6e-standard-4t VMs of 180 vCPUs (Cloud TPU v6e VM types).
    assert (quotas["google.com/tpu"], quotas["cpu"]) == ("256", str(64 * 180))
    (js,) = [o for o in objs if o["kind"] == "JobSet"]
    assert "alpha.jobset.sigs.k8s.io/exclusive-topology" not in (js["metadata"].get("annotations") or {})
    (rj,) = js["spec"]["replicatedJobs"]
    job = rj["template"]["spec"]
    assert (rj["replicas"], job["parallelism"], job["completions"]) == (2, 4, 4)   # 4x4 = 16 chips = 4 VMs
    pod = job["template"]
    assert pod["metadata"]["annotations"] == {
        "kueue.x-k8s.io/podset-required-topology": "cloud.google.com/gke-tpu-slice-4x4-id",
        "cloud.google.com/gke-tpu-slice-topology": "4x4"}
    assert pod["spec"]["nodeSelector"] == {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
                                           "cloud.google.com/gke-tpu-topology": "16x16"}
    assert str(pod["spec"]["containers"][0]["resources"]["limits"]["google.com/tpu"]) == "4"


@pytest.mark.parametrize("change, want", [
    # xpk: v6e sub-slicing topologies are 2x4 ... 16x16 only; 16x8 is not one of them.
    ({"shape": "16x8"}, "16x8 is not a tpu-v6e-slice sub-slice"),
    ({"shape": "2x2"}, "2x2 is not a tpu-v6e-slice sub-slice"),
    # One reserved 16x16 pool holds 256 chips: two whole-pool slices never fit at once.
    ({"shape": "16x16", "slices": 2}, "2 slices of 16x16 are admitted together"),
])
def test_v6e_sub_slicing_refuses_what_xpk_cannot_form(change, want):
    raw = yamlio.load_user(FIXTURE.read_text())
    (w,) = [w for w in raw["workloads"] if w["name"] == "jax-v6e-sub"]
    w.update(change)
    with pytest.raises(SpecError) as e:
        specmod.from_dict(raw, "accelerators.yaml")
    assert want in str(e.value), str(e.value)


@pytest.mark.parametrize("change, want", [
    ({"tpu": {"slicing": "superslice", "reservation": {"cubes": 1}}},
     "tpu-v6e-slice slices a reservation into sub-slices only"),
    # xpk scheduling.py: _SUB_SLICING_MINIMUM_KUEUE_VERSION = Version('0.13.0').
    ({"kueueVersion": "v0.12.3"}, "tpu-v6e-slice sub-slicing needs Kueue 0.13.0 or later"),
])
def test_v6e_sub_slicing_profile_limits(change, want):
    raw = yamlio.load_user(FIXTURE.read_text())
    raw["profiles"]["v6e-sub"].update(change)
    with pytest.raises(SpecError) as e:
        specmod.from_dict(raw, "accelerators.yaml")
    assert want in str(e.value), str(e.value)


def test_v6e_sub_slice_pods_must_require_their_own_level(repo, capsys, monkeypatch):
    """The negative half for plan and validate: pods whose podset-required-topology is not their
    sub-slice's level (xpk writes the slice's own) can never be admitted as that slice; a slice
    topology annotation xpk has no shape for is TP002."""
    monkeypatch.chdir(repo)
    helpers.run_cli(capsys, "synth")
    path = repo / "overlays/v6e-sub/jobset_research_jax-v6e-sub.yaml"
    good = path.read_text()
    try:
        path.write_text(good.replace("gke-tpu-slice-4x4-id", "gke-tpu-slice-2x2-id"))
        code, out, err = helpers.run_cli(capsys, "plan", "overlays/v6e-sub")
        line = next(x for x in out.splitlines() if "research/jax-v6e-sub" in x and "NEVER" in x)
        assert "the pods require 'cloud.google.com/gke-tpu-slice-2x2-id'" in line, out
        path.write_text(good.replace("gke-tpu-slice-topology: 4x4", "gke-tpu-slice-topology: 4x2"))
        code, out, err = helpers.run_cli(capsys, "validate")
        assert code != 0 and "TP002" in out + err and "'4x2' is not a tpu-v6e-slice slice" in out + err, out + err
        assert "multiples of the 16x16 cube" not in out + err
    finally:
        path.write_text(good)


def test_no_pd_serving_on_v6e_sub_slices():
    """Prefill/decode serving places each LWS group by the TPU7x slice controller's per-slice
    label (LWS exclusive topology); v6e sub-slicing has none, so the spec refuses it in one line."""
    fixture = helpers.FIXTURES / "platform.yaml"
    raw = yamlio.load_user(fixture.read_text())
    prof = raw["profiles"]["tpu7x-subslice"]
    prof["accelerator"], prof["tpu"]["reservation"] = "tpu-v6e-slice", {"cubes": 1}
    (w,) = [w for w in raw["workloads"] if w["name"] == "qwen"]
    w["shape"] = "4x4"
    with pytest.raises(SpecError) as e:
        specmod.from_dict(raw, str(fixture))
    assert "workloads['qwen'].shape: prefill/decode serving runs on TPU7x sub-slices; tpu-v6e-slice " \
           "sub-slicing has no per-slice node label" in str(e.value), str(e.value)
