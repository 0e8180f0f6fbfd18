"""One verdict, one message: validate (KQ009), plan (never admitted), diff (cannot be
admitted) and the spec's fit check answer "can this workload ever be admitted" from
the supply model (generator/kernel/supply.py), so the four agree on every queue set here.

The numbers are worked out by hand from Kueue v0.17.4's docs, not from the code:
- concepts/cluster_queue.md, BorrowingLimit: team-a-cq (9 cpu, borrowingLimit 1) and
  team-b-cq (12 cpu) in one cohort: "team-a-cq can admit Workloads with resources
  adding up to 9+1=10 CPUs"; "team-b-cq can use up to 12+9 CPUs".
- LendingLimit: team-a-cq (9) and team-b-cq (12, lendingLimit 1): "team-a-cq can admit
  Workloads with resources adding up to 9+1=10 CPUs"; team-b-cq "can use up to 9+12".
- concepts/cohort.md: a Cohort's nominalQuota is "a shared pool for the ClusterQueues
  within it": a ClusterQueue with nominalQuota 0 "may access the 12 shared CPUs"; in a
  Cohort tree, "ClusterQueues within a given CohortTree may use resources within it".
- No cohort: the nominal quota is all a ClusterQueue has (cluster_queue.md).
The issue's case: 4 GPUs with borrowingLimit 1 beside another ClusterQueue of 4: 4+1=5."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from generator import model as spec_package
from generator.builders import tree
from generator.diff.capacity import never_admitted, picture
from generator.diff.objects import units
from generator.kernel import demand, supply, yamlio
from generator.kernel.errors import SpecError
from generator.model import fit
from generator.plan import overlay
from tests.test_plan_model import detail, run as plan_run, states
from tests.test_validate_corpus import run as validate_run

API = "kueue.x-k8s.io/v1beta2"
GPU = "nvidia.com/gpu"
NS = "team"


def cq(name: str, resource: str, nominal, cohort: str | None = None, **limits) -> dict:
    spec: dict = {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": [resource], "flavors": [
        {"name": "default", "resources": [{"name": resource, "nominalQuota": nominal, **limits}]}]}]}
    if cohort:
        spec["cohortName"] = cohort
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def cohort(name: str, parent: str | None = None, cpu=None) -> dict:
    spec: dict = {}
    if parent:
        spec["parentName"] = parent
    if cpu is not None:
        spec["resourceGroups"] = [{"coveredResources": ["cpu"], "flavors": [
            {"name": "default", "resources": [{"name": "cpu", "nominalQuota": cpu}]}]}]
    return {"apiVersion": API, "kind": "Cohort", "metadata": {"name": name}, "spec": spec}


def job(name: str, queue: str, pods: int, resource: str, each=1) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS, "labels": {demand.QUEUE_LABEL: queue}},
            "spec": {"parallelism": pods, "completions": pods, "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "registry.example/x:1.0.0",
                                "resources": {"requests": {resource: str(each)}, "limits": {resource: str(each)}}}]}}}}


def world(queues: list[dict], jobs: list[dict]) -> list[dict]:
    lqs = [{"apiVersion": API, "kind": "LocalQueue", "metadata": {"name": f"lq-{q['metadata']['name']}", "namespace": NS},
            "spec": {"clusterQueue": q["metadata"]["name"]}} for q in queues if q["kind"] == "ClusterQueue"]
    return ([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
             {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "default"}}] + queues + lqs + jobs)


# ---------------------------------------------------------------- the three tools that read manifests

def validate_says(objs: list[dict], tmp_path: Path) -> dict[str, str]:
    f = tmp_path / "world.yaml"
    f.write_text(yamlio.dump_all(objs))
    report = validate_run(f, [])
    return {x.name: x.message for x in report.findings if x.rule == "KQ009"}


def plan_says(objs: list[dict]) -> tuple[dict[str, str], dict[str, str]]:
    """(job -> why it can never be admitted, job -> its state)."""
    step = plan_run(objs).steps[0]
    prefix = "can never be admitted: "
    never = {w.split("/")[1]: detail(step, w)[len(prefix):] for w, s in states(step).items() if s == "never"}
    return never, {w.split("/")[1]: s for w, s in states(step).items()}


def diff_says(objs: list[dict]) -> dict[str, str]:
    unit = units({"overlays/p/all.yaml": yamlio.dump_all(objs)})["overlays/p"]
    pic = picture(unit)
    return {key[3]: why for key, w in pic.workloads.items() if (why := never_admitted(pic, w))}


def one_verdict(objs: list[dict], tmp_path: Path) -> dict[str, str]:
    """The verdicts of validate, plan and diff, asserted equal; returned once."""
    v, (p, _), d = validate_says(objs, tmp_path), plan_says(objs), diff_says(objs)
    assert v == p == d, (v, p, d)
    return v


def cpu_msg(name: str, need: int, cq_name: str, most: int) -> str:
    return (f"one Workload needs {need} cpu for pod set main ({need} pods × 1), but ClusterQueue {cq_name} can "
            f"ever get at most {most} in flavor default, borrowing from its cohort included")


# Each: (id, queues, jobs, {job: expected message}) with the numbers from the docs above.
CASES = [
    ("nominal", [cq("solo", GPU, 4)], [job("six", "lq-solo", 6, GPU), job("four", "lq-solo", 4, GPU)],
     {"six": "one Workload needs 6 nvidia.com/gpu for pod set main (6 pods × 1), but ClusterQueue solo can ever "
             "get at most 4 in flavor default"}),
    ("issue-cohort-borrowing-limit", [cq("a", GPU, 4, "c", borrowingLimit=1), cq("b", GPU, 4, "c")],
     [job("six", "lq-a", 6, GPU), job("five", "lq-a", 5, GPU)],
     {"six": "one Workload needs 6 nvidia.com/gpu for pod set main (6 pods × 1), but ClusterQueue a can ever "
             "get at most 5 in flavor default, borrowing from its cohort included"}),
    ("docs-borrowing-limit", [cq("team-a-cq", "cpu", 9, "team-ab", borrowingLimit=1), cq("team-b-cq", "cpu", 12, "team-ab")],
     [job("a11", "lq-team-a-cq", 11, "cpu"), job("a10", "lq-team-a-cq", 10, "cpu"),
      job("b22", "lq-team-b-cq", 22, "cpu"), job("b21", "lq-team-b-cq", 21, "cpu")],
     {"a11": cpu_msg("a11", 11, "team-a-cq", 10), "b22": cpu_msg("b22", 22, "team-b-cq", 21)}),
    ("docs-lending-limit", [cq("team-a-cq", "cpu", 9, "team-ab"), cq("team-b-cq", "cpu", 12, "team-ab", lendingLimit=1)],
     [job("a11", "lq-team-a-cq", 11, "cpu"), job("a10", "lq-team-a-cq", 10, "cpu"),
      job("b22", "lq-team-b-cq", 22, "cpu"), job("b21", "lq-team-b-cq", 21, "cpu")],
     {"a11": cpu_msg("a11", 11, "team-a-cq", 10), "b22": cpu_msg("b22", 22, "team-b-cq", 21)}),
    ("docs-cohort-pool", [cohort("hello-cohort", cpu=12), cq("my-cluster-queue", "cpu", 0, "hello-cohort")],
     [job("c13", "lq-my-cluster-queue", 13, "cpu"), job("c12", "lq-my-cluster-queue", 12, "cpu")],
     {"c13": cpu_msg("c13", 13, "my-cluster-queue", 12)}),
    ("hierarchical-cohort", [cohort("root-cohort", cpu=12), cohort("important-org", parent="root-cohort"),
                             cq("deep", "cpu", 0, "important-org")],
     [job("c13", "lq-deep", 13, "cpu"), job("c12", "lq-deep", 12, "cpu")],
     {"c13": cpu_msg("c13", 13, "deep", 12)}),
]


@pytest.mark.parametrize("queues, jobs, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validate_plan_and_diff_give_one_verdict_and_one_message(queues, jobs, expected, tmp_path):
    assert one_verdict(world(queues, jobs), tmp_path) == expected


def test_demand_above_quota_is_pending_not_never(tmp_path):
    """The l4-autopilot report: demand at the fewest replicas (4 + 5 = 9) above a quota of 8 is
    a workload waiting, not one that can never be admitted; all three say so, and so does
    diff's count."""
    objs = world([cq("cq", GPU, 8)], [job("serve", "lq-cq", 4, GPU), job("tune", "lq-cq", 5, GPU)])
    assert one_verdict(objs, tmp_path) == {}
    _, state = plan_says(objs)
    assert sorted(state.values()) == ["admitted", "pending"]


def test_a_workload_bigger_than_every_flavor_it_may_use_names_the_one_it_may(tmp_path):
    """Flavor eligibility is part of the verdict (flavorassigner checkFlavorForPodSets): a pod
    selecting l4 nodes is never given the h100 flavor, however much it holds."""
    queue = {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": "gpus"}, "spec": {
        "namespaceSelector": {}, "resourceGroups": [{"coveredResources": [GPU], "flavors": [
            {"name": "h100", "resources": [{"name": GPU, "nominalQuota": 16}]},
            {"name": "l4", "resources": [{"name": GPU, "nominalQuota": 8}]}]}]}}
    rf = [{"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": n},
           "spec": {"nodeLabels": {"cloud.google.com/gke-accelerator": a}}}
          for n, a in (("h100", "nvidia-h100-80gb"), ("l4", "nvidia-l4"))]
    jobs = [job("big", "lq-gpus", 10, GPU), job("fits", "lq-gpus", 8, GPU)]
    for j in jobs:
        j["spec"]["template"]["spec"]["nodeSelector"] = {"cloud.google.com/gke-accelerator": "nvidia-l4"}
    objs = [o for o in world([queue], jobs) if o["kind"] != "ResourceFlavor"] + rf
    assert one_verdict(objs, tmp_path) == {
        "big": "one Workload needs 10 nvidia.com/gpu for pod set main (10 pods × 1), but ClusterQueue gpus can ever "
               "get at most 8 in flavor l4"}


# ---------------------------------------------------------------- the spec's check, on the same queues

TEAMS = Path(__file__).parent / "fixtures" / "teams.yaml"


def _team_spec(gpus: int) -> dict:
    """The teams fixture's on-demand pool alone (4 nodes x 2 L4 = 8 GPUs) with team-a at 4 GPUs,
    borrowingLimit 1, and team-b at 4: the issue's cohort. A fine-tuning Job of `gpus` pods x 1 GPU
    queues in team-a."""
    raw = yamlio.load_all(TEAMS.read_text())[0]
    raw = copy.deepcopy(raw)
    raw["profiles"]["shared"]["nodePools"] = raw["profiles"]["shared"]["nodePools"][:1]   # no Spot pool to borrow
    raw["teams"][0]["profiles"]["shared"]["quotas"]["on-demand"] = {"nvidia.com/gpu": {"nominal": 4, "borrowingLimit": 1}}
    raw["teams"][1]["profiles"]["shared"]["quotas"]["on-demand"] = {"nvidia.com/gpu": 4}
    raw["images"]["finetune"] = {"repository": "registry.example/finetune", "tag": "1.0.0"}
    raw["profiles"]["shared"].setdefault("values", {}).update(modelBucket="models", hfTokenSecret="hf-token")
    raw["workloads"] = [{
        "name": "train", "kind": "finetune", "profiles": ["shared"], "namespace": "team-a", "queue": "lq-team-a",
        "priority": "default", "image": "finetune", "model": "google/gemma-2-2b", "dataset": "b-mc2/sql-create-context",
        "nodes": gpus, "gpusPerNode": 1, "accelerator": "nvidia-l4",
        "resources": {"cpu": "1", "memory": "4Gi", "ephemeral-storage": "1Gi"}}]
    return raw


def _spec_world(raw: dict, monkeypatch) -> tuple[list[str], list[dict]]:
    """(synth's fit problems, the overlay's objects as the builders emitted them)."""
    p = spec_package.from_dict(copy.deepcopy(raw), "spec.yaml")
    found: list = []
    real = fit.problems

    def record(*args):
        found.extend(real(*args))
        return []
    monkeypatch.setattr(fit, "problems", record)
    _, emitted = tree.render(p)
    return [f"{x.path}: {x.message}" for x in found], emitted["base"] + emitted["overlays/shared"]


@pytest.mark.parametrize("gpus, never", [(6, True), (5, False)])
def test_synth_gives_the_same_verdict_and_message(gpus, never, tmp_path, monkeypatch):
    problems, objs = _spec_world(_team_spec(gpus), monkeypatch)
    others = one_verdict(objs, tmp_path)
    if not never:
        assert problems == [] and others == {}
        return
    message = ("one Workload needs 6 nvidia.com/gpu for pod set main (6 pods × 1), but ClusterQueue cq-team-a can "
               "ever get at most 5 in flavor on-demand, borrowing from its cohort included")
    assert others == {"train": message}
    assert problems == [f"workloads[0]: one Job Workload of 'train' on profile 'shared' can never be admitted: "
                        f"{message}"]


# ---------------------------------------------------------------- cohort cycles (issue 27)

CYCLE = "Cohort parents form a cycle: a -> b -> a; Kueue schedules nothing under a cohort in a cycle"


def test_find_cycles_names_each_loop_once():
    assert supply.find_cycles({"a": "b", "b": "a", "c": "a", "d": None}) == [["a", "b"]]
    assert supply.find_cycles({"x": "x"}) == [["x"]]
    assert supply.find_cycles({"a": "b", "b": "c"}) == []


def test_a_cohort_cycle_is_one_line_in_plan_and_validate(tmp_path):
    objs = world([cohort("a", parent="b"), cohort("b", parent="a"), cq("q", "cpu", 1, "a")], [job("j", "lq-q", 1, "cpu")])
    with pytest.raises(SpecError) as e:
        overlay.build("test", objs)
    assert [p.message for p in e.value.problems] == [CYCLE]
    f = tmp_path / "w.yaml"
    f.write_text(yamlio.dump_all(objs))
    assert [x.message for x in validate_run(f, []).findings if x.rule == "KQ016"] == [CYCLE]


def test_a_self_parent_is_refused_by_plan():
    with pytest.raises(SpecError) as e:
        overlay.build("test", world([cohort("a", parent="a"), cq("q", "cpu", 1, "a")], []))
    assert [p.message for p in e.value.problems] == [
        "Cohort 'a' is its own parent; Kueue schedules nothing under a cohort in a cycle"]


def test_a_cohort_cycle_in_the_spec_is_one_problem():
    raw = _team_spec(1)
    raw["queues"][0]["cohortParent"] = "gpu-teams"      # its own cohort: a self-parent
    with pytest.raises(SpecError) as e:
        spec_package.from_dict(raw)
    lines = [f"{p.path}: {p.message}" for p in e.value.problems]
    assert "queues[0].cohortParent: Cohort 'gpu-teams' is its own parent; Kueue schedules nothing under a " \
           "cohort in a cycle" in lines


def test_cohort_names_of_two_clusters_make_no_cycle():
    """Each profile is its own cluster: gpu-teams -> x on one and x -> gpu-teams on the other is no loop."""
    raw = _team_spec(1)
    raw["workloads"] = []
    raw["profiles"]["other"] = copy.deepcopy(raw["profiles"]["shared"])
    raw["queues"][0]["cohortParent"] = "x"
    raw["queues"].append({"clusterQueue": "p2", "cohort": "x", "cohortParent": "gpu-teams", "profiles": ["other"],
                          "preemption": {}})
    assert spec_package.from_dict(raw).queues[1].cohort == "x"


def test_one_message_for_a_quantity_too_large_to_count():
    """quantity.MAX_QUANTITY is the one limit; the demand module (validate, diff) and plan's
    reader say it in the same words."""
    from generator.kernel import quantity
    big = job("huge", "lq-q", 1, "cpu", each="1e16")
    problems = demand.of(big).problems
    assert {p.message for p in problems} == {quantity.too_large("1e16")}   # its request and its limit
    with pytest.raises(SpecError) as e:
        overlay.build("test", world([cq("q", "cpu", "2e16")], []))
    assert [p.message for p in e.value.problems] == [quantity.too_large("2e16")]
    assert quantity.too_large("2e16") == "'2e16' is larger than Kueue can count (at most 9223372036854775)"
