"""CPU-only node pools: a profile whose pools have no accelerator synthesizes
a ClusterQueue that covers cpu, memory and ephemeral-storage only, with flavors
that select the machine type and how the nodes are provisioned.

The fixture is this file's own small spec, shaped after the GKE tutorial
"Implement a Job queuing system with quota sharing between namespaces" (CPU
Jobs on an on-demand and a Spot pool; its flavors are
kubernetes-engine-samples batch/kueue-cohort/flavors.yaml). Expected quotas are
worked out by hand from Compute Engine's published shapes ("VM instance
pricing", standard machine types: e2-standard-4 = 4 vCPUs, 16 GiB;
n1-standard-1 = 1 vCPU, 3.75 GiB) and GKE's default 100 GiB boot disk."""
from __future__ import annotations

import copy

import pytest

from generator import model as spec
from generator.kernel import yamlio
from generator.kernel.errors import SpecError
from tests import helpers
from tests.test_validate_corpus import run as validate_run

PROFILE = "cpu-cluster"


def _raw(pools: list[dict], workloads: list[dict] | None = None) -> dict:
    return {
        "specVersion": 1,
        "name": "batch-teams",
        "kubernetesVersion": "1.33",
        "kueue": {"version": "v0.17.4"},
        "namespaces": [{"name": "team-a"}],
        "priorityTiers": {"default": {"priorityClass": {"name": "default-priority", "value": 100}}},
        "profiles": {PROFILE: {
            "platform": "standard",
            "nodePools": pools,
            "values": {"projectId": "example-project", "registry": "us-docker.pkg.dev/example-project/batch",
                       "modelBucket": "example-project-models", "hfTokenSecret": "hf-secret"},
        }},
        "queues": [{"clusterQueue": "cq-team-a", "profiles": [PROFILE],
                    "localQueues": [{"name": "lq-team-a", "namespace": "team-a"}]}],
        "images": {"finetune": {"name": "finetune", "tag": "0.1.0"}},
        "workloads": workloads or [],
    }


ONE_POOL = [{"name": "cpu", "machineType": "e2-standard-4", "nodes": 5}]
ON_DEMAND_AND_SPOT = [
    {"name": "on-demand", "machineType": "e2-standard-4", "nodes": 5},
    {"name": "spot", "machineType": "e2-standard-4", "nodes": 3, "capacity": "spot"},
]


def _objects(raw: dict) -> dict[tuple[str, str], dict]:
    tree = helpers.render(raw)
    objs = [yamlio.load_strict(text) for path, text in tree.items()
            if path.startswith(f"overlays/{PROFILE}/") and not path.endswith("kustomization.yaml")]
    return {(o["kind"], o["metadata"]["name"]): o for o in objs}


def _quotas(cq: dict) -> tuple[list[str], dict[str, dict[str, object]]]:
    (group,) = cq["spec"]["resourceGroups"]
    flavors = {f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"]} for f in group["flavors"]}
    return group["coveredResources"], flavors


def test_one_cpu_pool_gives_cpu_memory_and_disk_only():
    objs = _objects(_raw(ONE_POOL))
    covered, flavors = _quotas(objs[("ClusterQueue", "cq-team-a")])
    # 5 x e2-standard-4: 5 x 4 vCPUs = 20; 5 x 16 GiB = 80Gi; 5 x 100 GiB boot disk = 500Gi.
    assert covered == ["cpu", "memory", "ephemeral-storage"]
    assert flavors == {"cpu": {"cpu": 20, "memory": "80Gi", "ephemeral-storage": "500Gi"}}
    flavor = objs[("ResourceFlavor", "cpu")]["spec"]
    # No accelerator label and no toleration: the machine type alone selects the nodes.
    assert flavor == {"nodeLabels": {"node.kubernetes.io/instance-type": "e2-standard-4"}}


def test_on_demand_and_spot_pools_as_in_the_cohort_tutorial():
    objs = _objects(_raw(ON_DEMAND_AND_SPOT))
    covered, flavors = _quotas(objs[("ClusterQueue", "cq-team-a")])
    assert covered == ["cpu", "memory", "ephemeral-storage"]
    # 3 x e2-standard-4: 12 vCPUs, 48 GiB, 300 GiB of boot disk.
    assert flavors == {
        "on-demand": {"cpu": 20, "memory": "80Gi", "ephemeral-storage": "500Gi"},
        "spot": {"cpu": 12, "memory": "48Gi", "ephemeral-storage": "300Gi"},
    }
    # The tutorial's flavors select GKE's provisioning label (standard / spot).
    assert objs[("ResourceFlavor", "on-demand")]["spec"]["nodeLabels"] == {
        "node.kubernetes.io/instance-type": "e2-standard-4", "cloud.google.com/gke-provisioning": "standard"}
    assert objs[("ResourceFlavor", "spot")]["spec"]["nodeLabels"] == {
        "node.kubernetes.io/instance-type": "e2-standard-4", "cloud.google.com/gke-provisioning": "spot"}


def test_fractional_memory_of_n1_standard():
    # 3 x n1-standard-1: 3 x 3.75 GiB = 11.25 GiB = 11520 MiB.
    objs = _objects(_raw([{"name": "n1", "machineType": "n1-standard-1", "nodes": 3}]))
    _, flavors = _quotas(objs[("ClusterQueue", "cq-team-a")])
    assert flavors == {"n1": {"cpu": 3, "memory": "11520Mi", "ephemeral-storage": "300Gi"}}


def test_allocatable_quota_of_a_cpu_pool():
    """GKE's reservation bands (generator/kernel/gke.py), worked by hand for n1-standard-1:
    CPU reserved 6% of the first core -> 0.94 per node -> 2.82 for 3 = 2820m.
    Memory reserved 25% of 3.75 GiB = 0.9375 GiB -> 2.8125 GiB = 2880 MiB, minus the
    100 MiB eviction threshold = 2780 MiB per node -> 8340Mi for 3.
    Boot disk 100 GiB: system min(50, 6 + 35, 100) = 41 GiB, eviction 10 GiB -> 49 GiB x 3 = 147Gi."""
    raw = _raw([{"name": "n1", "machineType": "n1-standard-1", "nodes": 3}])
    raw["profiles"][PROFILE]["quotaBasis"] = "allocatable"
    _, flavors = _quotas(_objects(raw)[("ClusterQueue", "cq-team-a")])
    assert flavors == {"n1": {"cpu": "2820m", "memory": "8340Mi", "ephemeral-storage": "147Gi"}}


FINETUNE = {
    "name": "ft", "kind": "finetune", "profiles": [PROFILE], "namespace": "team-a", "queue": "lq-team-a",
    "priority": "default", "image": "finetune", "model": "google/gemma-2-2b",
    "dataset": "b-mc2/sql-create-context", "nodes": 1, "gpusPerNode": 2,
    "resources": {"cpu": "8", "memory": "32Gi", "ephemeral-storage": "10Gi"},
}


def test_cpu_pool_beside_a_gpu_pool_holds_no_gpus():
    # g2-standard-24: 24 vCPUs, 96 GB, 2 L4 (Compute Engine GPU machine types, G2 table).
    pools = [{"name": "l4", "machineType": "g2-standard-24", "nodes": 2}, *copy.deepcopy(ON_DEMAND_AND_SPOT)]
    objs = _objects(_raw(pools, [FINETUNE]))
    covered, flavors = _quotas(objs[("ClusterQueue", "cq-team-a")])
    assert covered == ["cpu", "memory", "nvidia.com/gpu", "ephemeral-storage"]
    assert flavors["l4"] == {"cpu": 48, "memory": "192Gi", "nvidia.com/gpu": 4, "ephemeral-storage": "200Gi"}
    assert flavors["on-demand"]["nvidia.com/gpu"] == 0 and flavors["spot"]["nvidia.com/gpu"] == 0
    assert "cloud.google.com/gke-accelerator" not in objs[("ResourceFlavor", "on-demand")]["spec"]["nodeLabels"]


def test_a_gpu_workload_is_refused_on_a_cpu_only_profile():
    # The CPU pool is no accelerator: the GPU workload has nothing to run on.
    with pytest.raises(SpecError) as err:
        spec.from_dict(_raw(copy.deepcopy(ON_DEMAND_AND_SPOT), [FINETUNE]), "cpu.yaml")
    assert str(err.value) == "cpu.yaml: workloads['ft'].profiles[0]: a finetune workload runs on GPUs; profile " \
                             "'cpu-cluster' has none"


def test_cpu_overlay_builds_and_validates(tmp_path):
    helpers.synth_into(tmp_path, _raw(ON_DEMAND_AND_SPOT))
    objs = helpers.kustomize(tmp_path / "overlays" / PROFILE)
    f = tmp_path / "overlay.yaml"
    f.write_text(yamlio.dump_all(objs))
    report = validate_run(f, [])
    assert report.errors == 0, [x.report_line() for x in report.findings]


def test_teams_share_cpu_pools_through_a_cohort():
    # The cohort tutorial's shape: two teams with a share of the on-demand CPU pool,
    # the Spot pool left with the profile's queue. 4 x e2-standard-4 = 16 vCPUs, 64 GiB
    # per pool; each team holds 6 vCPUs and 50% of the memory (32Gi); the profile's
    # queue keeps the rest of on-demand (4 vCPUs, 0 memory) and all of Spot.
    pools = [{"name": "on-demand", "machineType": "e2-standard-4", "nodes": 4},
             {"name": "spot", "machineType": "e2-standard-4", "nodes": 4, "capacity": "spot"}]
    raw = _raw(pools)
    raw["namespaces"].append({"name": "team-b"})
    raw["queues"][0].update(clusterQueue="platform", cohort="all-teams", localQueues=[])
    raw["teams"] = [{"name": t, "namespaces": [t], "profiles": {PROFILE: {"quotas": {
        "on-demand": {"cpu": 6, "memory": "50%"}}}}} for t in ("team-a", "team-b")]
    objs = _objects(raw)
    for team in ("cq-team-a", "cq-team-b"):
        covered, flavors = _quotas(objs[("ClusterQueue", team)])
        assert covered == ["cpu", "memory", "ephemeral-storage"]
        assert {r: flavors["on-demand"][r] for r in ("cpu", "memory")} == {"cpu": 6, "memory": "32Gi"}
    _, platform = _quotas(objs[("ClusterQueue", "platform")])
    assert {r: platform["on-demand"][r] for r in ("cpu", "memory")} == {"cpu": 4, "memory": 0}
    assert {r: platform["spot"][r] for r in ("cpu", "memory")} == {"cpu": 16, "memory": "64Gi"}
