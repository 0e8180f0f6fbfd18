"""Training on any accelerator, topology-aware scheduling, reservations, waitForPodsReady
and teams' own manifests (kind `manifest`): the examples gpu-training-tas.yaml and
team-jobset.yaml synthesized, their objects compared with upstream files (xpk's Kueue
Topology for GKE, Kueue's TAS example, Kueue's manager configuration) and with numbers
worked out by hand from the machine types' published shapes, and planned."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from generator import model as spec
from generator.builders import tree
from generator.kernel import paths, yamlio
from generator.kernel.errors import SpecError
from generator.plan import overlay, scenario, simulate
from tests import helpers

EXAMPLES = paths.ROOT / "examples"
TAS = EXAMPLES / "gpu-training-tas.yaml"
TEAM = EXAMPLES / "team-jobset.yaml"


def _raw(path: Path) -> dict:
    return yamlio.load_strict(path.read_text())


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, list[dict]]:
    out = {}
    for path in (TAS, TEAM):
        root = tmp_path_factory.mktemp(path.stem)
        s = helpers.synth_into(root, _raw(path), str(path))
        for profile in s.profiles:
            out[f"{path.stem}/{profile}"] = helpers.kustomize(root / "overlays" / profile)
        out[f"{path.stem}/controllers"] = [yaml.safe_load(p.read_text()) for p in
                                           sorted((root / "controllers").glob("*/kueue/kueue-manager-config.yaml"))]
    return out


def _one(objs, kind, name):
    (o,) = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    return o


def _plan(objs: list[dict], name: str, extra: tuple[dict, ...] | list[dict] = ()):
    cluster = overlay.build(name, [*objs, *extra])
    result = simulate.run(cluster, scenario.default(cluster))
    return {r.workload: r for r in result.steps[-1].rows}


# ---------------------------------------------------------------- TAS on GKE GPU pools

def test_topology_is_xpks_gke_default_and_the_flavor_names_it(built):
    objs = built["gpu-training-tas/b200-tas"]
    (ref,) = helpers.load_reference("xpk/src/xpk/templates/kueue_gke_default_topology.yaml.j2")
    topo = _one(objs, "Topology", ref["metadata"]["name"])
    assert topo["spec"]["levels"] == ref["spec"]["levels"]
    rf = _one(objs, "ResourceFlavor", "b200")
    assert rf["spec"]["topologyName"] == ref["metadata"]["name"]
    # Kueue's TAS example puts the GPU toleration on the flavor (TAS cannot see GKE's webhook).
    kueue_rf = next(o for o in helpers.load_reference("kueue@v0.17.4/site/static/examples/tas/sample-gpu-queues.yaml")
                    if o["kind"] == "ResourceFlavor")
    assert rf["spec"]["tolerations"] == kueue_rf["spec"]["tolerations"]


def test_placement_goes_on_the_pod_template_as_kueue_names_it(built):
    objs = built["gpu-training-tas/b200-tas"]
    (preferred_job,) = helpers.load_reference("kueue@v0.17.4/site/static/examples/tas/sample-job-preferred.yaml")
    (preferred_key,) = preferred_job["spec"]["template"]["metadata"]["annotations"]
    job = _one(objs, "Job", "pretrain")
    assert "annotations" not in job["metadata"] or not any(k.startswith("kueue.x-k8s.io/podset")
                                                             for k in job["metadata"]["annotations"])
    notes = job["spec"]["template"]["metadata"]["annotations"]
    assert notes["kueue.x-k8s.io/podset-required-topology"] == "cloud.google.com/gce-topology-block"
    js = _one(objs, "JobSet", "jax-sweep")
    pod = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert pod["metadata"]["annotations"][preferred_key] == "cloud.google.com/gce-topology-block"


def test_torchrun_job_is_indexed_with_a_rendezvous_on_rank_0(built):
    objs = built["gpu-training-tas/b200-tas"]
    job = _one(objs, "Job", "pretrain")
    spec_ = job["spec"]
    assert (spec_["parallelism"], spec_["completions"], spec_["completionMode"]) == (8, 8, "Indexed")
    pod = spec_["template"]["spec"]
    (c,) = pod["containers"]
    # A4 (GPUDirect-RDMA): torchrun starts after GKE's NCCL settings script (tests/test_gpudirect.py).
    assert c["command"][:4] == ["/bin/bash", "-c", 'source /usr/local/gib/scripts/set_nccl_env.sh && exec "$@"', "--"]
    assert c["command"][4:] == ["torchrun", "--nnodes=8", "--nproc_per_node=8", "--node_rank=$(JOB_COMPLETION_INDEX)",
                            "--master_addr=pretrain-0.pretrain-workers", "--master_port=29500", "train.py",
                            "--config", "configs/8b.yaml"]
    assert pod["subdomain"] == "pretrain-workers"
    svc = _one(objs, "Service", "pretrain-workers")
    assert svc["spec"]["clusterIP"] == "None" and svc["spec"]["selector"] == {"job-name": "pretrain"}
    assert c["resources"]["limits"]["nvidia.com/gpu"] == "8"
    assert pod["terminationGracePeriodSeconds"] == 600
    assert pod["priorityClassName"] == "training"
    (ckpt,) = [v for v in pod["volumes"] if v["name"] == "checkpoints"]
    assert ckpt["csi"]["driver"] == "gcsfuse.csi.storage.gke.io"
    assert ckpt["csi"]["volumeAttributes"]["bucketName"] == "example-checkpoints"
    assert job["spec"]["template"]["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true"
    assert {"name": "CHECKPOINT_DIR", "value": "/checkpoints/pretrain"} in c["env"]


def test_plan_admits_both_and_refuses_a_job_no_block_holds(built):
    objs = built["gpu-training-tas/b200-tas"]
    # a4-highgpu-8g: 8 GPUs, 224 vCPU per node; 12 nodes = 96 GPUs, 2688 CPUs. pretrain 8 x 8 GPUs and
    # jax-sweep 2 x 8 = 80 GPUs, 10 x 200 = 2000 CPUs: both fit the quota; pretrain's 8 nodes fill the
    # 8-node block exactly.
    rows = _plan(objs, "b200-tas")
    assert {w: r.state for w, r in rows.items()} == {"research/pretrain": "admitted", "research/jax-sweep": "admitted"}
    # Alone, 10 nodes x 8 GPUs = 80 GPUs fit the quota (96), but blocks hold 8 and 4 nodes.
    big = copy.deepcopy(_one(objs, "Job", "pretrain"))
    big["metadata"]["name"] = "too-big"
    big["spec"]["parallelism"] = big["spec"]["completions"] = 10
    alone = [o for o in objs if o["kind"] not in ("Job", "JobSet")]
    rows = _plan(alone, "b200-tas", [big])
    assert rows["research/too-big"].state == "never"
    # Kueue's reason (tas_flavor_snapshot.go notFitMessage): the 8-node block holds 8 of the 10 pods.
    assert 'topology "gke-default" allows to fit only 8 out of 10 pod(s)' in rows["research/too-big"].detail
    # Preferred instead of required: Kueue may spread it; quota admits it.
    pref = copy.deepcopy(big)
    notes = pref["spec"]["template"]["metadata"]["annotations"]
    notes["kueue.x-k8s.io/podset-preferred-topology"] = notes.pop("kueue.x-k8s.io/podset-required-topology")
    rows = _plan(alone, "b200-tas", [pref])
    assert rows["research/too-big"].state == "admitted"


def test_spec_refuses_a_required_block_that_can_never_hold_the_job():
    raw = _raw(TAS)
    w = next(w for w in raw["workloads"] if w["name"] == "pretrain")
    w["nodes"] = 9
    with pytest.raises(SpecError) as e:
        spec.from_dict(raw, str(TAS))
    (line,) = str(e.value).splitlines()
    assert "workloads['pretrain'].placement: 9 pods of 8 GPU(s) must share one block" in line
    w["placement"]["mode"] = "preferred"
    spec.from_dict(raw, str(TAS))


def test_placement_needs_a_topology_aware_pool_and_kueue_v014():
    raw = _raw(TAS)
    del raw["profiles"]["b200-tas"]["nodePools"][0]["topologyAware"]
    with pytest.raises(SpecError) as e:
        spec.from_dict(raw, str(TAS))
    assert "is topologyAware" in str(e.value)
    raw = _raw(TAS)
    raw["kueue"]["version"] = "v0.12.3"
    del raw["kueue"]["waitForPodsReady"]["requeuingStrategy"]
    with pytest.raises(SpecError) as e:
        spec.from_dict(raw, str(TAS))
    assert "topologyAware: topology-aware scheduling is on by default from Kueue v0.14" in str(e.value)


# ---------------------------------------------------------------- reservations

def test_reserved_flavor_selects_its_pool_and_comes_first(built):
    objs = built["gpu-training-tas/h100-reserved"]
    reserved = _one(objs, "ResourceFlavor", "h100-reserved")["spec"]["nodeLabels"]
    on_demand = _one(objs, "ResourceFlavor", "h100-on-demand")["spec"]["nodeLabels"]
    # GKE's queued-provisioning page selects its "reservation" flavor by node pool name.
    assert reserved["cloud.google.com/gke-nodepool"] == "h100-reserved"
    assert on_demand["cloud.google.com/gke-nodepool"] == "h100-on-demand"
    assert reserved != on_demand
    (group,) = _one(objs, "ClusterQueue", "h100")["spec"]["resourceGroups"]
    # The spec lists the on-demand pool first; Kueue tries the reservation first.
    assert [f["name"] for f in group["flavors"]] == ["h100-reserved", "h100-on-demand"]
    # 2 x 8 GPUs: the accelerate job fits the reservation alone, and plan puts it there.
    rows = _plan(objs, "h100-reserved")
    assert rows["research/finetune-h100"].state == "admitted"
    assert "h100-reserved" in rows["research/finetune-h100"].detail


def test_a_reservation_changes_the_output():
    # The issue: a pool's reservation changed nothing (byte-identical output with and without it).
    raw = _raw(TAS)
    del raw["profiles"]["h100-reserved"]["nodePools"][0]
    key = "overlays/h100-reserved/resourceflavor_h100-reserved.yaml"
    with_it = yaml.safe_load(helpers.render(raw)[key])["spec"]["nodeLabels"]
    del raw["profiles"]["h100-reserved"]["nodePools"][0]["reservation"]
    without = yaml.safe_load(helpers.render(raw)[key])["spec"]["nodeLabels"]
    assert with_it == {**without, "cloud.google.com/gke-nodepool": "h100-reserved"}


def test_flex_start_flavors_tolerate_the_queued_provisioning_taint():
    raw = _raw(TAS)
    raw["profiles"]["h100-reserved"]["nodePools"][0]["capacity"] = "flex-start"
    files = helpers.render(raw)
    rf = yaml.safe_load(files["overlays/h100-reserved/resourceflavor_h100-on-demand.yaml"])
    # cluster-toolkit's DWS flex-start notes: "toleration for cloud.google.com/gke-queued:NoSchedule".
    assert {"key": "cloud.google.com/gke-queued", "operator": "Exists", "effect": "NoSchedule"} \
        in rf["spec"]["tolerations"]


# ---------------------------------------------------------------- waitForPodsReady

def _upstream_wait_block() -> dict:
    """The commented waitForPodsReady block of Kueue's own manager configuration."""
    text = (helpers.REFERENCE / "kueue@v0.17.4/config/components/manager/controller_manager_config.yaml").read_text()
    lines = text.splitlines()
    start = lines.index("#waitForPodsReady:")
    block: list[str] = []
    for line in lines[start:]:
        if not line.startswith("#") or (block and not line.startswith("#  ")):
            break
        block.append(line[1:].split(" # ")[0])
    return yaml.safe_load("\n".join(block))["waitForPodsReady"]


def test_wait_for_pods_ready_is_written_with_kueues_field_names(built):
    (config_map,) = built["gpu-training-tas/controllers"][:1]
    config = yaml.safe_load(config_map["data"]["controller_manager_config.yaml"])
    wait = config["waitForPodsReady"]
    upstream = _upstream_wait_block()
    assert set(wait) <= set(upstream)
    assert set(wait["requeuingStrategy"]) <= set(upstream["requeuingStrategy"])
    assert wait["timeout"] == "10m" and wait["requeuingStrategy"]["backoffLimitCount"] == 5
    assert "enable" not in wait   # v1beta2 (Kueue v0.15+) has no `enable`


def test_wait_for_pods_ready_on_kueue_v012_is_enabled_explicitly():
    raw = _raw(TEAM)
    raw["kueue"]["version"] = "v0.12.3"
    del raw["profiles"]["b200-tas"]["nodePools"][0]["topologyAware"]
    raw["workloads"] = []   # its JobSet asks for a block: TAS needs Kueue v0.14+
    files = helpers.render(raw)
    config = yaml.safe_load(yaml.safe_load(files["controllers/b200-tas/kueue/kueue-manager-config.yaml"])
                            ["data"]["controller_manager_config.yaml"])
    assert config["waitForPodsReady"] == {"enable": True, "timeout": "15m"}


# ---------------------------------------------------------------- a team's own JobSet

def test_team_jobset_is_placed_and_otherwise_kept_as_written(built):
    objs = built["team-jobset/b200-tas"]
    mine = yaml.safe_load((EXAMPLES / "manifests/llama-jobset.yaml").read_text())
    js = _one(objs, "JobSet", "llama-ft")
    assert js["metadata"]["namespace"] == "team-a"
    assert js["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "lq", "kueue.x-k8s.io/priority-class": "batch"}
    got, want = js["spec"]["replicatedJobs"][0]["template"]["spec"], mine["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert {k: got[k] for k in ("parallelism", "completions", "backoffLimit")} == \
        {k: want[k] for k in ("parallelism", "completions", "backoffLimit")}
    pod, mine_pod = got["template"], want["template"]
    assert pod["metadata"]["annotations"] == mine_pod["metadata"]["annotations"]
    assert pod["spec"]["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-b200"}
    (c,), (mc,) = pod["spec"]["containers"], mine_pod["spec"]["containers"]
    assert (c["image"], c["command"], c["resources"]) == (mc["image"], mc["command"], mc["resources"])
    assert c["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    assert pod["spec"]["securityContext"] == {**mine_pod["spec"]["securityContext"],
                                              "seccompProfile": {"type": "RuntimeDefault"}}
    rows = _plan(objs, "b200-tas")
    assert rows["team-a/llama-ft"].state == "admitted"


def _team(tmp_path: Path, manifest: str) -> tuple[dict, str]:
    (tmp_path / "job.yaml").write_text(manifest)
    raw = _raw(TEAM)
    raw["workloads"][0]["file"] = "job.yaml"
    return raw, str(tmp_path / "platform.yaml")


def test_manifest_problems_are_one_line_each(tmp_path):
    raw, source = _team(tmp_path, "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: r}\n")
    with pytest.raises(SpecError) as e:
        spec.from_dict(raw, source)
    (line,) = str(e.value).splitlines()
    assert "workloads['llama-ft'].file: job.yaml: document 1 is a RayJob: KubeRay's CRDs are not pinned" in line
    raw, source = _team(tmp_path, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: other}\n"
                                  "spec: {template: {spec: {containers: [{name: c, image: i:1, resources: "
                                  "{requests: {nvidia.com/gpu: '1'}}}]}}}\n")
    with pytest.raises(SpecError) as e:
        spec.from_dict(raw, source)
    assert "workloads['llama-ft'].namespace: file job.yaml Job/j is in namespace 'other', the entry says 'team-a'" \
        in str(e.value)
    raw["workloads"][0]["file"] = "missing.yaml"
    with pytest.raises(SpecError) as e:
        spec.from_dict(raw, source)
    assert "workloads['llama-ft'].file: missing.yaml: cannot read the manifest" in str(e.value)


def test_manifest_demand_is_checked_against_the_queue(tmp_path):
    # 13 pods x 8 GPUs = 104 GPUs; the pool has 12 x 8 = 96.
    raw, source = _team(tmp_path, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\n"
                                  "spec: {parallelism: 13, completions: 13, template: {spec: {containers: "
                                  "[{name: c, image: i:1, resources: {requests: {nvidia.com/gpu: '8'}}}]}}}\n")
    with pytest.raises(SpecError) as e:   # synth's fit check, on the objects the manifest workload emits
        tree.render(spec.from_dict(raw, source))
    assert ("needs 104 nvidia.com/gpu for pod set main (13 pods × 8), but ClusterQueue team-a can ever get at most 96 "
            "in flavor b200") in str(e.value)


# ---------------------------------------------------------------- TPU slices, and what the kind refuses

def test_jax_training_on_static_tpu_slices_is_placed_like_a_tpu_jobset():
    raw = _raw(EXAMPLES / "tpu-v6e.yaml")
    raw["images"]["trainer"] = {"repository": "us-docker.pkg.dev/example-project/ml/trainer", "tag": "1.0.0"}
    raw["workloads"].append({"name": "maxtext", "kind": "training", "profiles": ["v6e-cluster"],
                             "namespace": "research", "queue": "lq", "priority": "default", "image": "trainer",
                             "security": {"runAsUser": 1000}, "launcher": "jax", "module": "MaxText.train",
                             "args": ["MaxText/configs/base.yml"], "tpu": {"shape": "4x4", "slices": 1},
                             "resources": {"cpu": "8", "memory": "32Gi"}})
    files = helpers.render(raw)
    ours = yaml.safe_load(files["overlays/v6e-cluster/jobset_research_maxtext.yaml"])
    theirs = yaml.safe_load(files["overlays/v6e-cluster/jobset_research_jax-4x4.yaml"])
    assert ours["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"] == \
        theirs["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/exclusive-topology"]
    job, ref = (o["spec"]["replicatedJobs"][0]["template"]["spec"] for o in (ours, theirs))
    # ct6e-standard-4t: 4 chips per VM; a 4x4 slice = 16 chips = 4 pods of 4.
    assert (job["parallelism"], job["completions"]) == (4, 4)
    pod, ref_pod = job["template"]["spec"], ref["template"]["spec"]
    assert pod["nodeSelector"] == ref_pod["nodeSelector"]
    assert pod["tolerations"] == ref_pod["tolerations"]
    (c,) = pod["containers"]
    assert c["command"] == ["python", "-m", "MaxText.train", "MaxText/configs/base.yml"]
    assert c["resources"]["limits"]["google.com/tpu"] == "4"
    assert "env" not in c   # JAX on TPU reads GKE's TPU environment; no coordinator of ours


@pytest.mark.parametrize("change, expected", [
    ({"launcher": "torchrun", "tpu": {"shape": "4x4"}, "nodes": None, "gpusPerNode": None},
     "TPU slices run JAX programs"),
    ({"module": "x", "script": None}, "runs a script: give `script`, not `module`"),
    ({"security": {}}, "workloads['pretrain'].security: the training image is yours"),
    ({"gpusPerNode": None}, "GPU training gives both `nodes` and `gpusPerNode`"),
])
def test_training_refusals_are_one_line(change, expected):
    raw = _raw(TAS)
    w = raw["workloads"][0]
    for k, v in change.items():
        if v is None:
            w.pop(k, None)
        else:
            w[k] = v
    with pytest.raises(SpecError) as e:
        spec.from_dict(raw, str(TAS))
    assert any(expected in line for line in str(e.value).splitlines()), str(e.value)


def _gpu_job(name: str, nodes: int, mode: str | None) -> dict:
    notes = {f"kueue.x-k8s.io/podset-{mode}-topology": "cloud.google.com/gce-topology-block"} if mode else {}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "research", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
            "spec": {"parallelism": nodes, "completions": nodes, "template": {
                "metadata": {"annotations": notes},
                "spec": {"restartPolicy": "Never", "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-b200"},
                         "containers": [{"name": "t", "image": "us-docker.pkg.dev/p/r/t:1", "resources": {
                             "requests": {"cpu": "100", "nvidia.com/gpu": "8"},
                             "limits": {"nvidia.com/gpu": "8"}}}]}}}}


def test_plan_packs_blocks_and_a_required_job_waits_for_one(built):
    # Blocks of 8 and 4 nodes (96 GPUs). In order: 6 nodes preferring a block take the 8-node
    # block (2 left), 3 nodes requiring one take the 4-node block (1 left); 3 more nodes requiring
    # a block fit the quota (24 of the 24 GPUs left) but no block has 3 free nodes: it waits.
    objs = [o for o in built["gpu-training-tas/b200-tas"] if o["kind"] not in ("Job", "JobSet")]
    rows = _plan(objs, "b200-tas", [_gpu_job("a", 6, "preferred"), _gpu_job("b", 3, "required"),
                                    _gpu_job("c", 3, "required")])
    assert {w: r.state for w, r in rows.items()} == {
        "research/a": "admitted", "research/b": "admitted", "research/c": "pending"}
    # Kueue's reason (notFitMessage, formatReasons): 2 free nodes in the fullest block; 9 nodes full.
    assert ('topology "gke-default" allows to fit only 2 out of 3 pod(s). Total nodes: 12; excluded: '
            'resource "nvidia.com/gpu": 9') in rows["research/c"].detail
    # Two nodes requiring a block fit the 2 left in the first block.
    rows = _plan(objs, "b200-tas", [_gpu_job("a", 6, "preferred"), _gpu_job("b", 3, "required"),
                                    _gpu_job("c", 2, "required")])
    assert rows["research/c"].state == "admitted"


def test_training_on_tpu7x_sub_slices_checks_the_slice_names_as_tpu_jobset_does():
    raw = helpers.fixture_raw()
    (tpu_profile, prof) = next((n, p) for n, p in raw["profiles"].items() if p.get("tpu", {}).get("slicing") == "subslice")
    tier = next(t for t, v in raw["priorityTiers"].items() if "workloadPriorityClass" in v)
    lq = next(lq for q in raw["queues"] if tpu_profile in q["profiles"] for lq in q.get("localQueues", []))
    raw["images"]["trainer"] = {"repository": "us-docker.pkg.dev/example-project/ml/trainer", "tag": "1.0.0"}
    w = {"name": "t" * 40, "kind": "training", "profiles": [tpu_profile], "namespace": lq["namespace"],
         "queue": lq["name"], "priority": tier, "image": "trainer", "security": {"runAsUser": 1000},
         "launcher": "jax", "module": "train", "tpu": {"shape": "2x2x2"},
         "resources": {"cpu": "8", "memory": "32Gi"}}
    raw["workloads"].append(w)
    with pytest.raises(SpecError) as e:
        spec.from_dict(raw, "test-spec.yaml")
    assert f"workloads[{w['name']!r}].name:" in str(e.value)
    w["name"] = "train"
    files = helpers.render(raw)
    (text,) = [t for p, t in files.items() if p.endswith(f"/jobset_{lq['namespace']}_train.yaml")]
    pod = yaml.safe_load(text)["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    # The dynamic slice's shape goes on the pod template (the codelab's JobSets do the same).
    (ref,) = helpers.load_reference("devrel-demos/ai-ml/dynamic-slicing/kueue-jobset-simple-subslicing.yaml")
    ref_pod = ref["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert pod["metadata"]["annotations"]["cloud.google.com/gke-tpu-slice-topology"] == "2x2x2"
    assert set(ref_pod["metadata"]["annotations"]) <= set(pod["metadata"]["annotations"])
