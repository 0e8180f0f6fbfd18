"""examples/kueue-cohort.yaml against the GKE tutorial "Implement a Job queuing
system with quota sharing between namespaces" (../shared/reference
kubernetes-engine-samples/batch/kueue-cohort): its objects field by field,
every difference listed with its reason; then the tutorial's story replayed
with `generator plan` on the generated overlay, outcomes worked out by hand
from Kueue's rules (each job: 3 pods x 500m CPU, 512Mi)."""
from __future__ import annotations

import copy

import pytest

from generator.kernel import paths, yamlio
from generator.plan import overlay, scenario, simulate
from tests import golden, helpers

REF = "kubernetes-engine-samples/batch/kueue-cohort/"
EXAMPLE = paths.ROOT / "examples" / "kueue-cohort.yaml"
ARGO = {"metadata.annotations.argocd.argoproj.io/": "Argo CD sync wave and options, stamped by generator/builders/gitops.py"}
DISK = ("ephemeral-storage covered too: the pools' boot disks (100 GiB per node) are capacity the queues account "
        "for, so a pod asking for it is admitted, not blocked")
COMPUTED = ("quota computed from the node pools (e2-standard-4: 4 vCPU, 16 GiB) instead of typed in: the Spot pool "
            "of 10 nodes holds 40 CPU, as the tutorial, and 160Gi of memory")
LEFTOVER = ("what the teams do not hold of the on-demand pool (its memory beyond the teams' 10Gi each, and its "
            "disk) stays with the spillover queue, which lends it")

# (reference file, kind, name) -> {path prefix: reason}
INTENDED = {
    ("flavors.yaml", "ResourceFlavor", "on-demand"): {
        **ARGO, "spec.nodeLabels.node.kubernetes.io/instance-type": "the pool's machine type, from the device catalog"},
    ("flavors.yaml", "ResourceFlavor", "spot"): {
        **ARGO, "spec.nodeLabels.node.kubernetes.io/instance-type": "the pool's machine type, from the device catalog"},
    ("cq-team-a.yaml", "ClusterQueue", "cq-team-a"): {
        **ARGO, "spec.resourceGroups[0].coveredResources[2]": DISK,
        "spec.resourceGroups[0].flavors[on-demand].resources[ephemeral-storage]": DISK,
        "spec.resourceGroups[0].flavors[spot].resources[ephemeral-storage]": DISK},
    ("cq-team-a.yaml", "LocalQueue", "lq-team-a"): ARGO,
    ("cq-team-b.yaml", "ClusterQueue", "cq-team-b"): {
        **ARGO, "spec.resourceGroups[0].coveredResources[2]": DISK,
        "spec.resourceGroups[0].flavors[on-demand].resources[ephemeral-storage]": DISK,
        "spec.resourceGroups[0].flavors[spot].resources[ephemeral-storage]": DISK},
    ("cq-team-b.yaml", "LocalQueue", "lq-team-b"): ARGO,
    ("cq-spot.yaml", "ClusterQueue", "spot-cq"): {
        **ARGO, "spec.namespaceSelector": "written out: {} admits every namespace, as an absent selector does",
        "spec.resourceGroups[0].coveredResources[2]": DISK,
        "spec.resourceGroups[0].flavors[on-demand]": LEFTOVER,
        "spec.resourceGroups[0].flavors[spot].resources[memory].nominalQuota": COMPUTED,
        "spec.resourceGroups[0].flavors[spot].resources[ephemeral-storage]": DISK},
}


def _reference(file: str, kind: str, name: str) -> dict:
    (o,) = [o for o in helpers.load_reference(REF + file) if o["kind"] == kind and o["metadata"]["name"] == name]
    return o


@pytest.fixture(scope="module")
def objs(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("cohort")
    helpers.synth_into(out, yamlio.load_strict(EXAMPLE.read_text()))
    return helpers.kustomize(out / "overlays" / "batch")


def _generated(objs, kind, name) -> dict:
    (o,) = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    return o


@pytest.mark.parametrize("key", sorted(INTENDED), ids=lambda k: f"{k[1]}/{k[2]}")
def test_matches_the_tutorial_except_listed_differences(objs, key):
    found = golden.differing_paths(_reference(*key), _generated(objs, key[1], key[2]))
    reasons = INTENDED[key]
    unexplained = sorted(p for p in found if not any(p.startswith(prefix) for prefix in reasons))
    stale = sorted(prefix for prefix in reasons if not any(p.startswith(prefix) for p in found))
    assert not unexplained, f"differences without a reason: {unexplained}"
    assert not stale, f"listed differences that no longer occur: {stale}"


def test_every_tutorial_object_is_generated(objs):
    for file in ("flavors.yaml", "cq-team-a.yaml", "cq-team-b.yaml", "cq-spot.yaml"):
        for o in helpers.load_reference(REF + file):
            assert (file, o["kind"], o["metadata"]["name"]) in INTENDED


# ---------------------------------------------------------------- the story, planned

def _job(i: int, team: str) -> dict:
    """The tutorial's Job of team `team`; it creates them with generateName, here named a1, a2, ..."""
    job = copy.deepcopy(helpers.load_reference(REF + f"job-team-{team}.yaml")[0])
    job["metadata"].pop("generateName")
    job["metadata"]["name"] = f"{team}{i}"
    return job


def _states(plan, step) -> dict[str, tuple[str, str]]:
    return {r.workload: (r.state, r.detail) for r in plan.steps[step].rows}


def _run(objs, steps) -> simulate.Plan:
    cluster = overlay.build("kueue-cohort", objs)
    return simulate.run(cluster, scenario.from_dict({"description": "kueue-cohort", "steps": steps}, cluster))


def test_team_a_uses_its_nominal_then_borrows_five_cpu(objs):
    """Without spot-cq (the tutorial adds it later): team A's jobs take 1.5 CPU each. Nominal
    10 CPU holds 6 jobs (9 CPU); borrowing up to its limit of 5 CPU, from team B's idle quota,
    4 more (15 CPU); the 11th would need 16.5 CPU and waits."""
    steps = [{"title": "the tutorial starts without spot-cq",
              "remove": {"kind": "ClusterQueue", "name": "spot-cq"}}]
    steps += [{"title": f"team A job {i}", "submit": {"manifest": _job(i, "a")}} for i in range(1, 12)]
    plan = _run(objs, steps)
    last = _states(plan, len(steps))
    admitted = [w for w, (s, _) in last.items() if s == "admitted"]
    assert sorted(admitted) == sorted(f"team-a/a{i}" for i in range(1, 11))
    assert last["team-a/a11"][0] == "pending"


def test_team_b_gets_what_team_a_does_not_borrow_and_waits_without_reclaim(objs):
    """Team A holds 15 CPU (6 nominal + 4 borrowed jobs). Team B's jobs: 20 - 15 = 5 CPU are free,
    3 jobs (4.5 CPU); the 4th would need team B's lent quota back, which its queue does not
    reclaim (no reclaimWithinCohort): it waits, and nothing is preempted."""
    steps = [{"title": "no spot-cq", "remove": {"kind": "ClusterQueue", "name": "spot-cq"}}]
    steps += [{"title": f"A{i}", "submit": {"manifest": _job(i, "a")}} for i in range(1, 11)]
    steps += [{"title": f"B{i}", "submit": {"manifest": _job(i, "b")}} for i in range(1, 5)]
    plan = _run(objs, steps)
    last = _states(plan, len(steps))
    assert [last[f"team-b/b{i}"][0] for i in range(1, 5)] == ["admitted", "admitted", "admitted", "pending"]
    assert all(last[f"team-a/a{i}"][0] == "admitted" for i in range(1, 11))


def test_with_reclaim_team_b_takes_its_share_back(tmp_path):
    """reclaimWithinCohort: Any on team B: its 4th to 6th jobs (up to its 10 CPU nominal: 6 jobs
    = 9 CPU) reclaim by preempting team A's borrowed jobs, newest first; its 7th waits."""
    raw = yamlio.load_strict(EXAMPLE.read_text())
    raw["teams"][1]["preemption"] = {"reclaimWithinCohort": "Any"}
    helpers.synth_into(tmp_path, raw)
    objs = helpers.kustomize(tmp_path / "overlays" / "batch")
    steps = [{"title": "no spot-cq", "remove": {"kind": "ClusterQueue", "name": "spot-cq"}}]
    steps += [{"title": f"A{i}", "submit": {"manifest": _job(i, "a")}} for i in range(1, 11)]
    steps += [{"title": f"B{i}", "submit": {"manifest": _job(i, "b")}} for i in range(1, 8)]
    plan = _run(objs, steps)
    last = _states(plan, len(steps))
    assert [last[f"team-b/b{i}"][0] for i in range(1, 8)] == ["admitted"] * 6 + ["pending"]
    # Team A keeps its nominal 6 jobs plus what still fits; 3 of its borrowed jobs were preempted.
    a_admitted = sum(last[f"team-a/a{i}"][0] == "admitted" for i in range(1, 11))
    assert a_admitted == 7


def test_with_spot_cq_further_jobs_of_both_teams_run_on_spot(objs):
    """With the spillover queue in the cohort (the example ships it), team A's 11th job and team
    B's 4th go to the Spot flavor, borrowed from spot-cq's 40 CPU."""
    steps = [{"title": f"A{i}", "submit": {"manifest": _job(i, "a")}} for i in range(1, 12)]
    steps += [{"title": f"B{i}", "submit": {"manifest": _job(i, "b")}} for i in range(1, 5)]
    plan = _run(objs, steps)
    last = _states(plan, len(steps))
    assert last["team-a/a11"][0] == "admitted" and "spot" in last["team-a/a11"][1]
    assert last["team-b/b4"][0] == "admitted" and "spot" in last["team-b/b4"][1]
    assert all("on-demand" in last[f"team-a/a{i}"][1] for i in range(1, 11))
