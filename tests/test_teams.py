"""Teams sharing a cluster through a Kueue cohort (tests/fixtures/teams.yaml):
one ClusterQueue per team with its share, the platform queue holding what no
team holds, version-aware cohort fields, strict validation against every
pinned Kueue release, the spec refusing impossible shares, and the planner
replaying borrowing and reclaiming on the generated objects.

Capacity, worked by hand from the machine type (g2-standard-24: 24 vCPU,
96 GB, 2 L4; boot disk 100 GiB): each 4-node pool holds cpu 96, memory 384Gi,
nvidia.com/gpu 8, ephemeral-storage 400Gi."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from generator import model as spec
from generator.kernel import yamlio
from generator.kernel.errors import SpecError
from generator.kernel.schemacheck import SchemaSet
from generator.plan import overlay, scenario, simulate
from tests import helpers

FIXTURE = Path(__file__).parent / "fixtures" / "teams.yaml"
GPU = "nvidia.com/gpu"


def _raw() -> dict:
    return copy.deepcopy(yamlio.load_strict(FIXTURE.read_text()))


def _overlay(raw: dict) -> list[dict]:
    tree = helpers.render(raw)
    prefix = "overlays/shared/"
    return [o for path, text in sorted(tree.items()) if path.startswith(prefix)
            and not path.endswith("kustomization.yaml") for o in yamlio.load_all(text)]


def _cq(objs, name):
    (o,) = [o for o in objs if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == name]
    return o


def _quotas(cq) -> dict:
    (group,) = cq["spec"]["resourceGroups"]
    return {f["name"]: {r["name"]: {k: v for k, v in r.items() if k != "name"} for r in f["resources"]}
            for f in group["flavors"]}


@pytest.fixture(scope="module")
def objs():
    return _overlay(_raw())


def test_each_team_gets_its_share_and_zero_elsewhere(objs):
    a = _cq(objs, "cq-team-a")
    assert a["spec"]["cohortName"] == "gpu-teams"
    assert a["spec"]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "team-a"}}
    assert a["spec"]["preemption"] == {"reclaimWithinCohort": "Any"}
    assert _quotas(a) == {
        # memory 50% of 384Gi = 192Gi; ephemeral-storage not shared: 0.
        "on-demand": {"cpu": {"nominalQuota": 48, "borrowingLimit": 24}, "memory": {"nominalQuota": "192Gi"},
                      GPU: {"nominalQuota": 4, "borrowingLimit": 2, "lendingLimit": 2},
                      "ephemeral-storage": {"nominalQuota": 0}},
        "spot": {"cpu": {"nominalQuota": 0}, "memory": {"nominalQuota": 0}, GPU: {"nominalQuota": 0},
                 "ephemeral-storage": {"nominalQuota": 0}},
    }
    b = _cq(objs, "cq-team-b")
    assert b["spec"]["namespaceSelector"] == {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["team-b", "team-b-batch"]}]}
    assert b["spec"]["fairSharing"] == {"weight": 2}


def test_the_platform_queue_holds_what_no_team_holds(objs):
    p = _cq(objs, "platform")
    assert p["spec"]["cohortName"] == "gpu-teams" and p["spec"]["namespaceSelector"] == {}
    assert _quotas(p) == {
        # on-demand: 96 - 48 - 48 cpu, 384Gi - 2 x 192Gi, 8 - 4 - 4 GPUs, all 400Gi of disk
        "on-demand": {"cpu": {"nominalQuota": 0}, "memory": {"nominalQuota": 0}, GPU: {"nominalQuota": 0},
                      "ephemeral-storage": {"nominalQuota": "400Gi"}},
        "spot": {"cpu": {"nominalQuota": 96}, "memory": {"nominalQuota": "384Gi"}, GPU: {"nominalQuota": 8},
                 "ephemeral-storage": {"nominalQuota": "400Gi"}},
    }


def test_team_local_queues_in_every_namespace(objs):
    lqs = {(o["metadata"]["namespace"], o["metadata"]["name"]): o["spec"]["clusterQueue"]
           for o in objs if o["kind"] == "LocalQueue"}
    assert lqs == {("team-a", "lq-team-a"): "cq-team-a", ("team-b", "queue"): "cq-team-b",
                   ("team-b-batch", "queue"): "cq-team-b"}


@pytest.mark.parametrize("version, field", [("v0.12.3", "cohort"), ("v0.17.4", "cohortName"), ("v0.19.2", "cohortName")])
def test_objects_validate_strictly_against_each_kueue_release(version, field):
    raw = _raw()
    raw["kueue"]["version"] = version
    objs = _overlay(raw)
    assert _cq(objs, "cq-team-a")["spec"][field] == "gpu-teams"
    s = spec.from_dict(raw, "teams.yaml")
    schemas = SchemaSet(s.kubernetes_version, [helpers.CRD_ROOT / "kueue" / version])
    helpers.assert_valid(schemas, [o for o in objs if o["apiVersion"].startswith("kueue.x-k8s.io")], version)


def test_cohort_hierarchy_and_shared_pool_are_cohort_objects():
    raw = _raw()
    raw["queues"][0].update(cohortParent="org", unassigned="cohort")
    objs = _overlay(raw)
    (cohort,) = [o for o in objs if o["kind"] == "Cohort"]
    assert cohort["metadata"]["name"] == "gpu-teams" and cohort["spec"]["parentName"] == "org"
    (group,) = cohort["spec"]["resourceGroups"]
    spot = next(f for f in group["flavors"] if f["name"] == "spot")
    assert {r["name"]: r["nominalQuota"] for r in spot["resources"]} == {
        "cpu": 96, "memory": "384Gi", GPU: 8, "ephemeral-storage": "400Gi"}
    # The platform queue then holds nothing of its own.
    assert all(r["nominalQuota"] == 0 for f in _quotas(_cq(objs, "platform")).values() for r in f.values())
    s = spec.from_dict(raw, "teams.yaml")
    helpers.assert_valid(SchemaSet(s.kubernetes_version, [helpers.CRD_ROOT / "kueue" / "v0.17.4"]), [cohort], "cohort")


# ---------------------------------------------------------------- shares the spec refuses

def _problems(raw) -> list[str]:
    with pytest.raises(SpecError) as e:
        spec.from_dict(raw, "teams.yaml")
    return [f"{p.path}: {p.message}" for p in e.value.problems]


@pytest.mark.parametrize("edit, expected", [
    # 48 + 49 = 97 cpu, one more than the 96 the pool holds (48 + 48 = 96 fits: the fixture).
    (lambda r: r["teams"][1]["profiles"]["shared"]["quotas"]["on-demand"].__setitem__("cpu", 49),
     "teams: on profile 'shared', flavor 'on-demand', the teams' nominal cpu adds up to 97 (team-a 48 + team-b 49), "
     "more than the 96 it holds"),
    (lambda r: r["teams"][0]["profiles"]["shared"]["quotas"]["on-demand"][GPU].__setitem__("lendingLimit", 5),
     "teams[0].profiles.shared.quotas.on-demand.nvidia.com/gpu.lendingLimit: 5 is more than the nominal quota 4; "
     "a team lends at most what it holds"),
    (lambda r: r["teams"][0]["profiles"].__setitem__("nope", {"quotas": {"on-demand": {"cpu": 1}}}),
     "teams[0].profiles.nope: unknown profile 'nope' (known: shared)"),
    (lambda r: r["teams"][0]["profiles"]["shared"]["quotas"].__setitem__("h100", {"cpu": 1}),
     "teams[0].profiles.shared.quotas.h100: unknown flavor 'h100' (known: on-demand, spot)"),
    (lambda r: r["queues"][0].pop("cohort"),
     "teams[0].profiles.shared: profile 'shared' is shared by teams; give its queue entry a `cohort` (queues[0].cohort)"),
    (lambda r: r["teams"][0].__setitem__("namespaces", ["team-c"]),
     "teams[0].namespaces[0]: namespace 'team-c' is not declared in namespaces; did you mean 'team-b'? "
     "(declared: team-a, team-b, team-b-batch)"),
    (lambda r: r["teams"][0]["profiles"]["shared"]["quotas"]["on-demand"].__setitem__("memory", "101%"),
     "teams[0].profiles.shared.quotas.on-demand.memory.nominal: '101%' is not a percentage from 0% to 100%"),
])
def test_bad_team_specs_are_refused(edit, expected):
    raw = _raw()
    edit(raw)
    assert expected in _problems(raw)


def test_at_capacity_is_accepted():
    raw = _raw()
    raw["teams"][0]["profiles"]["shared"]["quotas"]["on-demand"]["cpu"] = 48   # 48 + 48 = 96
    spec.from_dict(raw, "teams.yaml")


# ---------------------------------------------------------------- what Kueue does with them

def _job(name, ns, queue, gpus, cpu="1"):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns, "labels": {"kueue.x-k8s.io/queue-name": queue}},
            "spec": {"parallelism": 1, "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "c", "image": "busybox:1.36", "resources": {"requests": {"cpu": cpu, GPU: str(gpus)}}}]}}}}


def test_plan_borrows_within_limits_then_spills_to_spot(objs):
    """By hand (Kueue v0.17.4 defaults: flavors tried in order; whenCanPreempt TryNextFlavor,
    whenCanBorrow MayStopSearch). On-demand GPUs in the cohort: team-a 4, team-b 4, platform 0;
    spot: platform 8. Team-a's 1-GPU jobs: a1..a4 on its nominal on-demand quota; a5, a6
    borrow team-b's idle on-demand GPUs up to team-a's borrowingLimit 2; a7 would borrow a
    third, past the limit, so it goes to spot, borrowed from the platform queue. Team-b then
    asks for 4: only 2 on-demand GPUs are free and team-b has no reclaimWithinCohort, so it
    cannot take its lent GPUs back; it runs on spot, borrowing 4 of the 7 left."""
    cluster = overlay.build("teams", objs)
    scen = scenario.from_dict({"description": "borrowing", "steps": [
        {"title": f"team-a job {i}", "submit": {"manifest": _job(f"a{i}", "team-a", "lq-team-a", 1)}}
        for i in range(1, 8)] + [
        {"title": "team-b wants its 4 GPUs", "submit": {"manifest": _job("b1", "team-b", "queue", 4)}}]}, cluster)
    plan = simulate.run(cluster, scen)
    after_a = {r.workload: (r.state, r.detail) for r in plan.steps[7].rows}
    for i in range(1, 7):
        assert after_a[f"team-a/a{i}"][0] == "admitted" and "on-demand" in after_a[f"team-a/a{i}"][1]
    assert after_a["team-a/a7"][0] == "admitted" and "spot" in after_a["team-a/a7"][1]
    last = {r.workload: (r.state, r.detail) for r in plan.steps[8].rows}
    assert last["team-b/b1"][0] == "admitted" and "spot" in last["team-b/b1"][1]
    assert all(state == "admitted" for state, _ in last.values())   # nothing preempted


@pytest.mark.parametrize("version, expected", [
    # Kueue's Configuration API: v1beta1 has `enable`; from v1beta2 the block's presence turns it on.
    ("v0.12.3", {"enable": True, "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}),
    ("v0.17.4", {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}),
])
def test_fair_sharing_switch_in_the_manager_config(version, expected):
    raw = _raw()
    raw["kueue"] = {"version": version, "fairSharing": {}}
    tree = helpers.render(raw)
    (cm,) = yamlio.load_all(tree["controllers/shared/kueue/kueue-manager-config.yaml"])
    config = yamlio.load_strict(cm["data"]["controller_manager_config.yaml"])
    assert config["fairSharing"] == expected
    raw["kueue"] = {"version": version}
    (cm,) = yamlio.load_all(helpers.render(raw)["controllers/shared/kueue/kueue-manager-config.yaml"])
    assert "fairSharing" not in yamlio.load_strict(cm["data"]["controller_manager_config.yaml"])


@pytest.mark.parametrize("version", ["v0.12.3", "v0.17.4", "v0.19.2"])
def test_flex_start_pool_gets_the_provisioning_admission_check(version):
    """GKE's flex-start with queued provisioning through Kueue (GKE docs: AdmissionCheck with
    controllerName kueue.x-k8s.io/provisioning-request on a ProvisioningRequestConfig of class
    queued-provisioning.gke.io), applied to the flex-start flavor only."""
    raw = _raw()
    raw["kueue"]["version"] = version
    raw["profiles"]["shared"]["nodePools"][1].update(name="flex", capacity="flex-start")
    raw["teams"] = []
    raw["queues"][0].pop("cohort")
    objs = _overlay(raw)
    (check,) = [o for o in objs if o["kind"] == "AdmissionCheck"]
    assert check["spec"] == {"controllerName": "kueue.x-k8s.io/provisioning-request", "parameters": {
        "apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "dws-config"}}
    (config,) = [o for o in objs if o["kind"] == "ProvisioningRequestConfig"]
    assert config["spec"] == {"provisioningClassName": "queued-provisioning.gke.io", "managedResources": [GPU]}
    cq = _cq(objs, "platform")
    assert cq["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "dws-prov", "onFlavors": ["flex"]}]}
    (flex,) = [o for o in objs if o["kind"] == "ResourceFlavor" and o["metadata"]["name"] == "flex"]
    assert flex["spec"]["nodeLabels"]["cloud.google.com/gke-flex-start"] == "true"


# parameters.kind has a Go RE2 pattern ((?i) inside); schemacheck runs patterns on RE2.
@pytest.mark.parametrize("version", ["v0.12.3", "v0.17.4", "v0.19.2"])
def test_flex_start_objects_validate_strictly(version):
    raw = _raw()
    raw["kueue"]["version"] = version
    raw["profiles"]["shared"]["nodePools"][1].update(name="flex", capacity="flex-start")
    raw["teams"] = []
    raw["queues"][0].pop("cohort")
    objs = _overlay(raw)
    s = spec.from_dict(raw, "teams.yaml")
    helpers.assert_valid(SchemaSet(s.kubernetes_version, [helpers.CRD_ROOT / "kueue" / version]),
                         [o for o in objs if o["apiVersion"].startswith("kueue.x-k8s.io")], version)


@pytest.mark.parametrize("edit, path", [
    (lambda r: r["namespaces"][0].__setitem__("labels", {"note": "ghp_" + "a" * 36}), "namespaces[0].labels.note"),
    (lambda r: r["priorityTiers"]["default"]["priorityClass"].__setitem__("description", "key AKIA" + "A" * 16),
     "priorityTiers.default.priorityClass.description"),
])
def test_published_token_formats_are_refused_in_any_field(edit, path):
    """GitHub's ghp_ prefix and AWS's AKIA access key IDs (their published formats)."""
    raw = _raw()
    edit(raw)
    problems = _problems(raw)
    assert any(p.startswith(f"{path}: contains a") for p in problems), problems
