"""Deterministic, reviewable output; quotas that follow the profile; the
Kueue API versions the pinned release serves."""
import copy
import os
import shutil
import subprocess
import sys

import pytest

from generator.kernel import paths, writer, yamlio
from tests import helpers


def _synth_cli(out, seed):
    """A whole `python -m generator synth` process (its own hash seed)."""
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    args = [sys.executable, "-m", "generator", "synth", "--spec", str(helpers.FIXTURE_SPEC), "--out", str(out)]
    r = subprocess.run(args, capture_output=True, text=True, cwd=paths.ROOT, env=env, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    return writer.read_tree(out, paths.OUTPUT_DIRS)


def test_two_synths_are_byte_identical(tmp_path):
    a = _synth_cli(tmp_path / "a", seed=1)
    b = _synth_cli(tmp_path / "b", seed=2)
    assert a and a == b


def test_check_passes_then_catches_hand_edits_and_stray_files(tmp_path, capsys):
    shutil.copytree(helpers.generated(), tmp_path, dirs_exist_ok=True)
    check = ("check", "--spec", helpers.FIXTURE_SPEC, "--out", tmp_path)
    code, _, err = helpers.run_cli(capsys, *check)
    assert code == 0, err
    edited = tmp_path / "overlays" / "l4-standard" / "clusterqueue_cluster-queue.yaml"
    edited.write_text(edited.read_text().replace("nominalQuota: 6", "nominalQuota: 8"))
    (tmp_path / "base" / "configmap_extra.yaml").write_text("kind: ConfigMap\n")
    code, _, err = helpers.run_cli(capsys, *check)
    assert code == 1
    assert "differs: overlays/l4-standard/clusterqueue_cluster-queue.yaml" in err
    assert "not generated (stale or hand-added): base/configmap_extra.yaml" in err


def test_every_generated_file_carries_the_header_synth_recognises():
    """synth deletes only files it wrote; it knows them by this first line."""
    tree = writer.read_tree(helpers.generated(), paths.OUTPUT_DIRS)
    assert tree and all(text.startswith(writer.GENERATED_PREFIX) for text in tree.values())


def test_stale_files_are_removed(tmp_path, raw):
    """Files synth wrote before and the spec no longer produces disappear."""
    helpers.synth_into(tmp_path, raw)
    raw2 = copy.deepcopy(raw)
    raw2["workloads"] = [w for w in raw2["workloads"] if w["kind"] != "finetune"]
    helpers.synth_into(tmp_path, raw2)
    assert not (tmp_path / "overlays" / "l4-standard" / "job_llm_finetune-gemma-l4.yaml").exists()
    assert (tmp_path / "overlays" / "l4-standard" / "deployment_llm_tgi-gemma-deployment.yaml").exists()
    assert not [p.name for p in tmp_path.glob(".synth-*") if p.name != writer.LOCK], "staging left behind"


def test_hand_written_files_are_never_deleted(tmp_path, capsys):
    shutil.copytree(helpers.generated(), tmp_path, dirs_exist_ok=True)
    mine = tmp_path / "overlays" / "l4-standard" / "my-patch.yaml"
    mine.write_text("kind: ConfigMap\n")
    notes = tmp_path / "base" / "notes" / "README.md"
    notes.parent.mkdir()
    notes.write_text("team notes\n")
    before = writer.read_tree(tmp_path, paths.OUTPUT_DIRS)
    code, _, err = helpers.run_cli(capsys, "synth", "--spec", helpers.FIXTURE_SPEC, "--out", tmp_path)
    assert code == 2
    assert helpers.without_warnings(err) == [(
        f"synth: {tmp_path}: synth would delete 2 file(s) it did not generate: base/notes/README.md, "
        "overlays/l4-standard/my-patch.yaml; move them out of base/, overlays/, controllers/, argocd/ "
        "(keep your own manifests in a folder of your own, e.g. custom/<profile>/, whose kustomization builds on "
        "overlays/<profile>)")]
    assert writer.read_tree(tmp_path, paths.OUTPUT_DIRS) == before


README_LAYER = {
    # The "Your own additions" example of docs/changing.md: a folder synth never touches
    # that builds on the generated overlay.
    "kustomization.yaml": """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ../../overlays/l4-standard
- configmap_team-settings.yaml
patches:
- path: tgi-extra-env.yaml
""",
    "configmap_team-settings.yaml": """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: team-settings
  namespace: llm
data:
  LOG_LEVEL: debug
""",
    "tgi-extra-env.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: tgi-gemma-deployment
  namespace: llm
spec:
  template:
    spec:
      containers:
      - name: inference-server
        env:
        - name: LOG_LEVEL
          value: debug
""",
}


def test_the_docs_show_exactly_this_layer():
    readme = (paths.ROOT / "docs" / "changing.md").read_text()
    for name, text in README_LAYER.items():
        assert f"`custom/l4-standard/{name}`" in readme and f"```yaml\n{text}```" in readme, name


def test_own_additions_layer_builds_on_the_generated_overlay_and_survives_synth(tmp_path, raw):
    helpers.synth_into(tmp_path, raw)
    layer = tmp_path / "custom" / "l4-standard"
    layer.mkdir(parents=True)
    for name, text in README_LAYER.items():
        (layer / name).write_text(text)
    generated = helpers.kustomize(tmp_path / "overlays" / "l4-standard")
    built = helpers.kustomize(layer)
    keys = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in built}
    assert keys == {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in generated} | {
        ("ConfigMap", "llm", "team-settings")}
    (tgi,) = [o for o in built if o["kind"] == "Deployment" and o["metadata"]["name"] == "tgi-gemma-deployment"]
    env = {e["name"]: e for e in tgi["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["LOG_LEVEL"] == {"name": "LOG_LEVEL", "value": "debug"}
    assert "HF_TOKEN" in env, "the patch adds to the generated env, it does not replace it"
    # A later synth (here: one more node) rewrites overlays/ and leaves the layer alone.
    raw["profiles"]["l4-standard"]["nodePool"]["nodes"] = 4
    helpers.synth_into(tmp_path, raw)
    assert {p.name: p.read_text() for p in layer.iterdir()} == README_LAYER
    (cq,) = [o for o in helpers.kustomize(layer) if o["kind"] == "ClusterQueue"]
    assert {r["name"]: r["nominalQuota"] for r in cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"]}[
        "nvidia.com/gpu"] == 8


def _quota(tree, profile):
    cq = yamlio.load_strict(tree[f"overlays/{profile}/clusterqueue_cluster-queue.yaml"])
    (flavor,) = cq["spec"]["resourceGroups"][0]["flavors"]
    return {r["name"]: r["nominalQuota"] for r in flavor["resources"]}


def test_quota_from_node_pool_matches_tutorial(raw):
    # 3 x g2-standard-24 (24 vCPU, 96 GB, 2 L4), 100 GiB boot disks.
    q = _quota(helpers.render(raw), "l4-standard")
    assert q == {"cpu": 72, "memory": "288Gi", "nvidia.com/gpu": 6, "ephemeral-storage": "300Gi"}


def test_quota_follows_node_count(raw):
    raw["profiles"]["l4-standard"]["nodePool"]["nodes"] = 5
    q = _quota(helpers.render(raw), "l4-standard")
    assert q == {"cpu": 120, "memory": "480Gi", "nvidia.com/gpu": 10, "ephemeral-storage": "500Gi"}


def test_quota_from_allocatable(raw):
    """GKE's reservation formula, worked by hand for g2-standard-24:
    CPU reserved 6% of core 1 + 1% of core 2 + 0.5% of cores 3-4 + 0.25% of 20 more
      = 0.06 + 0.01 + 0.01 + 0.05 = 0.13 -> 23.87 per node -> 71.61 for 3 = 71610m.
    Memory reserved 25% of 4 + 20% of 4 + 10% of 8 + 6% of 80 GiB = 7.4 GiB, plus
      100 MiB eviction: 98304 MiB - 7577.6 MiB - 100 MiB = 90626.4 MiB -> 90626 MiB x 3 = 271878Mi.
    Boot disk 100 GiB: system min(50, 6 + 35, 100) = 41 GiB, eviction 10 GiB -> 49 GiB x 3 = 147Gi."""
    raw["profiles"]["l4-standard"]["quotaBasis"] = "allocatable"
    q = _quota(helpers.render(raw), "l4-standard")
    assert q == {"cpu": "71610m", "memory": "271878Mi", "nvidia.com/gpu": 6, "ephemeral-storage": "147Gi"}


def test_autopilot_quota_is_the_budget(raw):
    raw["profiles"]["l4-autopilot"]["budget"]["nvidia.com/gpu"] = 4
    q = _quota(helpers.render(raw), "l4-autopilot")
    assert q == {"cpu": 72, "memory": "288Gi", "nvidia.com/gpu": 4, "ephemeral-storage": "200Gi"}


def test_autopilot_and_standard_differ_where_gke_does(raw):
    tree = helpers.render(raw)
    std = yamlio.load_strict(tree["overlays/l4-standard/deployment_llm_tgi-gemma-deployment.yaml"])
    ap = yamlio.load_strict(tree["overlays/l4-autopilot/deployment_llm_tgi-gemma-deployment.yaml"])
    std_res = std["spec"]["template"]["spec"]["containers"][0]["resources"]
    ap_res = ap["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert ap_res["limits"] == ap_res["requests"], "Autopilot: limits equal requests"
    assert "cpu" not in std_res["limits"] and std_res["requests"]["cpu"] == "4", "Standard: CPU may burst"
    for d in (std, ap):
        assert d["spec"]["template"]["spec"]["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-l4"}


@pytest.mark.parametrize("version,api", [("v0.12.3", "kueue.x-k8s.io/v1beta1"),
                                         ("v0.17.4", "kueue.x-k8s.io/v1beta2"),
                                         ("v0.19.2", "kueue.x-k8s.io/v1beta2")])
def test_kueue_api_follows_pinned_release(tmp_path, raw, version, api):
    raw["kueue"]["version"] = version
    for p in raw["profiles"].values():
        p.pop("kueueVersion", None)
        if "tpu" in p and version == "v0.12.3":
            p["kueueVersion"] = "v0.17.4"   # TPU slicing needs Kueue's v1beta2 API (tests/test_tpu.py)
    spec = helpers.synth_into(tmp_path, raw)
    for profile in spec.profiles:
        if spec.profiles[profile].kueue.version != version:
            continue
        objs = helpers.kustomize(tmp_path / "overlays" / profile)
        kueue_objs = [o for o in objs if o["apiVersion"].startswith("kueue.x-k8s.io/") and o["kind"] != "Topology"]
        assert kueue_objs and {o["apiVersion"] for o in kueue_objs} == {api}
        helpers.assert_valid(helpers.schemas_for(spec, profile), objs, f"{version} {profile}")
        (cm,) = yamlio.load_all((tmp_path / "controllers" / profile / "kueue" / "kueue-manager-config.yaml").read_text())
        cfg = yamlio.load_strict(cm["data"]["controller_manager_config.yaml"])
        assert cfg["apiVersion"] == api.replace("kueue.x-k8s.io", "config.kueue.x-k8s.io")


def test_schema_oracle_rejects_wrong_api_version(tmp_path, raw):
    """The v1beta2 output must NOT pass against v0.12.3's CRDs: the check can fail."""
    spec = helpers.synth_into(tmp_path, raw)
    objs = helpers.kustomize(tmp_path / "overlays" / "l4-standard")
    old = helpers.SchemaSet(spec.kubernetes_version, [helpers.CRD_ROOT / "kueue" / "v0.12.3"])
    cq = next(o for o in objs if o["kind"] == "ClusterQueue")
    assert any("no schema" in e.message for e in old.errors(cq))
