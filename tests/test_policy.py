"""Cohort policy warnings (generator/kernel/policy.py) in synth, validate (KQ031-KQ034; corpus
under tests/validate_corpus), diff's summary, and plan's pending reason, on the teams fixture
(tests/fixtures/teams.yaml: team-a and team-b share an on-demand L4 pool; the platform queue
keeps the Spot pool and lends it).

By hand, from Kueue's API defaults (apis/kueue/v1beta2 clusterqueue_types.go, v0.17.4): a flavor
a team does not list has nominalQuota 0 and no borrowingLimit, which means no limit; a
ClusterQueue without preemption.reclaimWithinCohort has Never. So team-a and team-b may each
borrow the whole Spot pool, and team-b and the platform queue lend quota they cannot reclaim
(team-a sets reclaimWithinCohort: Any)."""
from __future__ import annotations

import copy
from pathlib import Path

from generator.diff import markdown, report
from generator.kernel import policy, yamlio
from generator.plan import overlay, scenario, simulate
from tests import helpers

FIXTURE = Path(__file__).parent / "fixtures" / "teams.yaml"
GPU = "nvidia.com/gpu"
# A flavor listed with nothing nominal and borrowingLimit 0 for every resource the queues cover.
NEVER_BORROW = {r: {"nominal": 0, "borrowingLimit": 0} for r in ("cpu", "memory", GPU, "ephemeral-storage")}


def _raw() -> dict:
    return copy.deepcopy(yamlio.load_strict(FIXTURE.read_text()))


def _objs(raw: dict) -> list[dict]:
    tree = helpers.render(raw)
    return [o for path, text in sorted(tree.items()) if path.startswith(("overlays/shared/", "base/"))
            and not path.endswith("kustomization.yaml") for o in yamlio.load_all(text) if isinstance(o, dict)]


def _found(raw: dict) -> set[tuple[str, str]]:
    return {(f.rule, f.name) for f in policy.findings(_objs(raw))}


def test_the_fixture_has_the_holes_worked_out_by_hand():
    assert _found(_raw()) == {("KQ031", "cq-team-a"), ("KQ031", "cq-team-b"),
                              ("KQ032", "cq-team-b"), ("KQ032", "platform")}


def test_each_fix_removes_its_warning():
    raw = _raw()
    for team in raw["teams"]:
        team["profiles"]["shared"]["quotas"]["spot"] = NEVER_BORROW
        team["preemption"] = {"reclaimWithinCohort": "Any"}
    raw["queues"][0]["preemption"] = {"reclaimWithinCohort": "LowerPriority"}
    assert _found(raw) == set()


def test_every_finding_says_the_fix():
    for f in policy.findings(_objs(_raw())):
        assert f.hint and "Fix: " in policy.line(f), f


def test_synth_warns_with_the_fix(capsys, tmp_path):
    spec = helpers.write_spec(tmp_path / "platform.yaml", _raw())
    code, _, err = helpers.run_cli(capsys, "synth", "--spec", spec, "--out", tmp_path)
    assert code == 0, err
    lines = [x for x in err.splitlines() if "ClusterQueue/cq-team-a" in x]
    assert lines == [lines[0]] and lines[0].startswith("warning: overlays/shared: ClusterQueue/cq-team-a: holds "
                                                        "nothing of flavor spot but may borrow all of it")
    assert "Fix: give those flavors a borrowingLimit" in lines[0]


def test_serving_blocked_and_an_hpa_that_never_fits():
    """Hand-made objects: a Deployment (priority 1000) and a Job (100) share ClusterQueue q of 8
    CPUs with withinClusterQueue Never; an HPA lets the Deployment grow to 3 pods of 4 CPUs."""
    objs = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "hi"}, "value": 1000},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "lo"}, "value": 100},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "f"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "q"}, "spec": {
            "namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                {"name": "f", "resources": [{"name": "cpu", "nominalQuota": "8"}]}]}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": "ns"},
         "spec": {"clusterQueue": "q"}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ns"}, "spec": {
            "replicas": 1, "template": {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "lq"}}, "spec": {
                "priorityClassName": "hi", "containers": [{"name": "c", "resources": {"requests": {"cpu": "4"}}}]}}}},
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "etl", "namespace": "ns",
                                                                 "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
         "spec": {"template": {"spec": {"priorityClassName": "lo", "containers": [
             {"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}},
        {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web", "namespace": "ns"},
         "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                  "minReplicas": 1, "maxReplicas": 3}},
    ]
    found = {f.rule: f for f in policy.findings(objs)}
    assert set(found) == {"KQ033", "KQ034"}
    assert "Job etl" in found["KQ033"].message and "withinClusterQueue: Never" in found["KQ033"].message
    assert "maxReplicas 3" in found["KQ034"].message and "can ever admit 2 pods" in found["KQ034"].message
    # The negative half: the queue preempts lower priority, and the HPA stops at 2.
    objs[3]["spec"]["preemption"] = {"withinClusterQueue": "LowerPriority"}
    objs[-1]["spec"]["maxReplicas"] = 2
    assert policy.findings(objs) == []


def test_diff_summary_lists_the_warnings_a_change_brings():
    fixed = _raw()
    for team in fixed["teams"]:
        team["profiles"]["shared"]["quotas"]["spot"] = NEVER_BORROW
    before, after = helpers.render(fixed), helpers.render(_raw())
    r = report.compare(before, after, "0" * 40, "test")
    new = [x for x in r.policy if x.endswith("(new)") and "holds nothing of flavor spot" in x]
    assert [x.split(": ")[1] for x in new] == ["ClusterQueue/cq-team-a", "ClusterQueue/cq-team-b"]
    assert not any(x.endswith("(new)") for x in report.compare(after, after, "0" * 40, "test").policy)
    assert "**Policy warnings (4)**" in markdown.render(r)


def _job(name, ns, queue, gpus, on_demand=False):
    spec = {"restartPolicy": "Never", "containers": [
        {"name": "c", "image": "busybox:1.36", "resources": {"requests": {"cpu": "1", GPU: str(gpus)}}}]}
    if on_demand:   # only the on-demand flavor (its nodeLabels: cloud.google.com/gke-provisioning=standard)
        spec["nodeSelector"] = {"cloud.google.com/gke-provisioning": "standard"}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns, "labels": {"kueue.x-k8s.io/queue-name": queue}},
            "spec": {"parallelism": 1, "template": {"spec": spec}}}


def test_plan_names_the_policy_and_the_borrower():
    """Team-a (4 GPUs nominal, borrowingLimit 2) runs 6 one-GPU jobs: 2 borrowed from team-b.
    Team-b then asks for its 4 on-demand GPUs: 2 are free, and its reclaimWithinCohort is Never."""
    cluster = overlay.build("teams", [o for o in _objs(_raw()) if o["kind"] != "HorizontalPodAutoscaler"])
    scen = scenario.from_dict({"description": "reclaim", "steps": [
        {"title": f"team-a job {i}", "submit": {"manifest": _job(f"a{i}", "team-a", "lq-team-a", 1, True)}}
        for i in range(1, 7)] + [
        {"title": "team-b wants its 4 GPUs", "submit": {"manifest": _job("b1", "team-b", "queue", 4, True)}}]},
        cluster)
    plan = simulate.run(cluster, scen)
    last = {r.workload: (r.state, r.detail) for r in plan.steps[-1].rows}
    state, detail = last["team-b/b1"]
    assert state == "pending"
    assert ("cq-team-a borrows the quota and ClusterQueue cq-team-b may not reclaim it (reclaimWithinCohort: "
            "Never; fix: Any or LowerPriority)") in detail
    # The negative half: with reclaimWithinCohort: Any, team-b takes its GPUs back.
    raw = _raw()
    raw["teams"][1]["preemption"] = {"reclaimWithinCohort": "Any"}
    cluster = overlay.build("teams", _objs(raw))
    plan = simulate.run(cluster, scenario.from_dict({"description": "reclaim", "steps": scen_steps()}, cluster))
    assert {r.workload: r.state for r in plan.steps[-1].rows}["team-b/b1"] == "admitted"


def scen_steps() -> list[dict]:
    return [{"title": f"team-a job {i}", "submit": {"manifest": _job(f"a{i}", "team-a", "lq-team-a", 1, True)}}
            for i in range(1, 7)] + [
        {"title": "team-b wants its 4 GPUs", "submit": {"manifest": _job("b1", "team-b", "queue", 4, True)}}]


def test_a_folder_of_one_object_files_gets_the_findings_of_the_whole_set(capsys, tmp_path, monkeypatch):
    """validate on a plain folder checks each file with the others as context, and the policy
    findings are read once for the folder (validate/rules/cohorts.py): each file still gets
    exactly the hand-worked findings of its own objects, and a second folder with the holes
    fixed gets none (no answer kept from the first)."""
    import json

    from generator import cli

    monkeypatch.chdir(tmp_path)   # loose files, outside any platform repository

    def by_file(raw: dict, folder: Path) -> set[tuple[str, str]]:
        folder.mkdir()
        for i, o in enumerate(_objs(raw)):
            (folder / f"{i:03d}.yaml").write_text(yamlio.dump(o))
        cli.main(["validate", "--crd-dir", str(helpers.CRD_ROOT), str(folder), "--format", "json"])
        doc = json.loads(capsys.readouterr().out)
        return {(f["rule"], f["name"]) for f in doc["findings"] if f["rule"] in ("KQ031", "KQ032", "KQ033", "KQ034")}

    assert by_file(_raw(), tmp_path / "holes") == {("KQ031", "cq-team-a"), ("KQ031", "cq-team-b"),
                                                   ("KQ032", "cq-team-b"), ("KQ032", "platform")}
    fixed = _raw()
    for team in fixed["teams"]:
        team["profiles"]["shared"]["quotas"]["spot"] = NEVER_BORROW
        team["preemption"] = {"reclaimWithinCohort": "Any"}
    fixed["queues"][0]["preemption"] = {"reclaimWithinCohort": "LowerPriority"}
    assert by_file(fixed, tmp_path / "fixed") == set()
