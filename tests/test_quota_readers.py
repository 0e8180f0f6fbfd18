"""One reading of ClusterQueue and Cohort quota bodies: every tool reads spec.resourceGroups
through the supply model (generator/kernel/supply.py read_groups / quotas_at / parent_name), so the
planner's overlay reader, the MultiKueue quota rule (MK102), the cohort rules (KQ013/KQ014)
and holder_of (validate's KQ009, diff, the spec check) see the same numbers. Each test here
fails if one of them parsed a quota on its own and differently.

The tree (cpu in flavor `default`; quantities written in several forms on purpose):

    Cohort root            nominalQuota 2
    ├── Cohort child       nominalQuota 500m             (parentName: root)
    │   ├── ClusterQueue a nominalQuota "1.5", borrowingLimit "1500m", lendingLimit "500m";
    │   │                  memory nominalQuota "1.5Gi"
    │   └── ClusterQueue b nominalQuota 1
    └── ClusterQueue c     nominalQuota "1", lendingLimit "250m"

What each ClusterQueue can ever get, worked out by hand from Kueue v0.17.4's docs, not
from the code. concepts/cluster_queue.md: borrowingLimit is "the maximum amount of quota that
this ClusterQueue is allowed to borrow from the unused nominal quota of other ClusterQueues
in the same cohort" (its example: 9 + 1 = 10); lendingLimit is the most of its unused quota
a ClusterQueue lends (its example: the borrower gets 9 + 1 = 10). concepts/cohort.md: a
Cohort's nominalQuota is "additional resources on top of those defined by ClusterQueues ...
a shared pool", which "may also be lent out to parent Cohort(s)"; "ClusterQueues within a
given CohortTree may use resources within it, subject to Borrowing and Lending limits".
- a: its own 1.5; the tree holds besides b's 1 + child's 0.5 + root's 2 + what c lends
  (0.25) = 3.75, but a borrows at most 1.5 (1500m): 1.5 + 1.5 = 3 cpu.
- b: its own 1; a lends at most 0.5, child 0.5, root 2, c 0.25: 1 + 0.5 + 0.5 + 2 + 0.25
  = 4.25 cpu.
- c: its own 1; a lends 0.5, b 1, child 0.5, root 2: 1 + 0.5 + 1 + 0.5 + 2 = 5 cpu.
- a's memory: 1.5Gi = 1.5 × 2^30 = 1610612736 bytes, and nobody else has memory."""
from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace

import pytest

from generator.kernel import supply
from generator.kernel.supply import Quota
from generator.plan import overlay, quota
from generator.validate.objects import Obj
from generator.validate.rules import cohorts, multikueue_group
from tests.test_supply import API, job, one_verdict, world

D = Decimal


def resources(cpu: dict | None = None, memory=None) -> dict:
    res = [{"name": "cpu", **(cpu or {})}] + ([{"name": "memory", "nominalQuota": memory}] if memory else [])
    return {"resourceGroups": [{"coveredResources": [r["name"] for r in res],
                                "flavors": [{"name": "default", "resources": res}]}]}


def body(kind: str, name: str, link: dict, cpu: dict, memory=None) -> dict:
    return {"apiVersion": API, "kind": kind, "metadata": {"name": name},
            "spec": {**link, **resources(cpu, memory), **({"namespaceSelector": {}} if kind == "ClusterQueue" else {})}}


QUEUES = [
    body("Cohort", "root", {}, {"nominalQuota": 2}),
    body("Cohort", "child", {"parentName": "root"}, {"nominalQuota": "500m"}),
    body("ClusterQueue", "a", {"cohortName": "child"},
         {"nominalQuota": "1.5", "borrowingLimit": "1500m", "lendingLimit": "500m"}, memory="1.5Gi"),
    body("ClusterQueue", "b", {"cohortName": "child"}, {"nominalQuota": 1}),
    body("ClusterQueue", "c", {"cohortName": "root"}, {"nominalQuota": "1", "lendingLimit": "250m"}),
]

# The quotas as written, by hand: (flavor, resource) -> Quota(nominal, borrowingLimit, lendingLimit).
EXPECTED = {
    "root": {("default", "cpu"): Quota(D(2))},
    "child": {("default", "cpu"): Quota(D("0.5"))},
    "a": {("default", "cpu"): Quota(D("1.5"), D("1.5"), D("0.5")), ("default", "memory"): Quota(D(1610612736))},
    "b": {("default", "cpu"): Quota(D(1))},
    "c": {("default", "cpu"): Quota(D(1), None, D("0.25"))},
}
PARENTS = {"root": None, "child": "root", "a": "child", "b": "child", "c": "root"}
MOST_CPU = {"a": D(3), "b": D("4.25"), "c": D(5)}


def _plan_cluster() -> overlay.Cluster:
    return overlay.build("readers", world(QUEUES, []))


def _plan_holders(cluster: overlay.Cluster) -> dict:
    """name -> (parent, {(flavor, resource): Quota}) as the planner read the overlay."""
    out = {n: (cq.cohort, {(f, r): q for f, r, q in cq.quotas()}) for n, cq in cluster.cluster_queues.items()}
    out.update({n: (co.parent, {(f, r): q for f, r, q in co.quotas()}) for n, co in cluster.cohorts.items()})
    return out


def test_holder_of_reads_the_numbers_worked_out_by_hand():
    holders = {b["metadata"]["name"]: supply.holder_of(b) for b in QUEUES}
    assert {n: (h.parent, h.quotas()) for n, h in holders.items() if h} == \
        {n: (PARENTS[n], EXPECTED[n]) for n in EXPECTED}


def test_the_planner_reads_the_same_quotas_and_parents():
    assert _plan_holders(_plan_cluster()) == {n: (PARENTS[n], EXPECTED[n]) for n in EXPECTED}


def test_the_multikueue_rule_reads_the_same_nominal_quotas_at_their_paths():
    """MK102's reading: (flavor, resource) -> (nominalQuota, where it is written)."""
    for b in QUEUES:
        name = b["metadata"]["name"]
        got = multikueue_group._quotas(Obj(0, b))
        assert {k: v for k, (v, _) in got.items()} == {k: q.nominal for k, q in EXPECTED[name].items()}
        paths = {k: p for k, (_, p) in got.items()}
        assert paths[("default", "cpu")] == ("spec", "resourceGroups", 0, "flavors", 0, "resources", 0, "nominalQuota")
        if name == "a":
            assert paths[("default", "memory")] == ("spec", "resourceGroups", 0, "flavors", 0, "resources", 1,
                                                     "nominalQuota")


def test_the_cohort_rules_read_the_same_quotas_and_links():
    for b in QUEUES:
        name, o = b["metadata"]["name"], Obj(0, b)
        assert {(f, r) for f, r, _ in cohorts.offers(o)} == set(EXPECTED[name])
        link = cohorts.cohort_of(o) if b["kind"] == "ClusterQueue" else cohorts.parent_of(o)
        assert link == PARENTS[name]


def test_the_most_each_queue_can_get_is_the_same_from_every_reading():
    """supply.from_objects (validate, diff) and the planner's tree (plan) on the same bodies."""
    from_manifests = supply.from_objects(QUEUES)
    from_plan = quota.Tree(_plan_cluster())
    for cq, most in MOST_CPU.items():
        assert from_manifests.most(cq, "default", "cpu") == from_plan.most(cq, "default", "cpu") == most
    assert from_manifests.most("a", "default", "memory") == from_plan.most("a", "default", "memory") == D(1610612736)


def _msg(job_name: str, cq: str, pods: int, each: str, need: str, most: str) -> str:
    return (f"one Workload needs {need} cpu for pod set main ({pods} pods × {each}), but ClusterQueue {cq} can "
            f"ever get at most {most} in flavor default, borrowing from its cohort included")


def test_validate_plan_and_diff_give_the_verdicts_worked_out_by_hand(tmp_path):
    """At the hand-worked limits (a 3, b 4.25, c 5 cpu) a workload fits; 750m more never does."""
    jobs = [job("a-fits", "lq-a", 4, "cpu", "750m"), job("a-over", "lq-a", 5, "cpu", "750m"),
            job("b-fits", "lq-b", 17, "cpu", "250m"), job("b-over", "lq-b", 4, "cpu", "1250m"),
            job("c-fits", "lq-c", 5, "cpu", "1"), job("c-over", "lq-c", 23, "cpu", "250m")]
    assert one_verdict(world(QUEUES, jobs), tmp_path) == {
        "a-over": _msg("a-over", "a", 5, "750m", "3750m", "3"),      # 5 × 0.75 = 3.75 > 3
        "b-over": _msg("b-over", "b", 4, "1250m", "5", "4250m"),     # 4 × 1.25 = 5 > 4.25 (17 × 0.25 = 4.25 fits)
        "c-over": _msg("c-over", "c", 23, "250m", "5750m", "5"),     # 23 × 0.25 = 5.75 > 5
    }


def test_manager_quota_against_workers_written_in_other_forms():
    """MK102 sums the workers' quotas as the supply model reads them: 1.5 + 1500m = 3, so a
    manager of "3" agrees and one of 3500m is 500m above."""
    def cq(nominal) -> Obj:
        return Obj(0, body("ClusterQueue", "q", {}, {"nominalQuota": nominal}))

    workers = [(SimpleNamespace(name="w1"), multikueue_group._quotas(cq("1.5"))),
               (SimpleNamespace(name="w2"), multikueue_group._quotas(cq("1500m")))]
    assert list(multikueue_group._quota_differences(cq("3"), workers)) == []
    [hit] = multikueue_group._quota_differences(cq("3500m"), workers)
    assert hit.message == "flavor 'default' cpu: manager 3500m, above the workers' total 3 (w1 1500m, w2 1500m)"
    assert hit.parts == ("spec", "resourceGroups", 0, "flavors", 0, "resources", 0, "nominalQuota")
    assert hit.path == "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"


@pytest.mark.parametrize("quota_body, path, message", [
    ({"nominalQuota": "1.5x"}, "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
     "'1.5x' is not a quantity (e.g. 500m, 2, 16Gi)"),
    ({"nominalQuota": 1, "borrowingLimit": "-500m"}, "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit",
     "'-500m' is negative; quotas and requests are 0 or more"),
])
def test_a_bad_quota_is_one_problem_in_plan_and_nothing_in_the_lenient_reading(quota_body, path, message):
    """The planner's strict reading and holder_of's lenient one are one function: the planner
    names the field; the lenient reading (its schema layer reports the value) drops it."""
    bad = body("ClusterQueue", "q", {}, quota_body)
    with pytest.raises(overlay.SpecError) as e:
        overlay.build("bad", [bad])
    assert [(p.path, p.message) for p in e.value.problems] == [(f"ClusterQueue/q.{path}", message)]
    holder = supply.holder_of(bad)
    assert holder is not None
    q = holder.quotas()[("default", "cpu")]
    assert (q.nominal, q.borrowing) == ((D(0), None) if "1.5x" in str(quota_body) else (D(1), None))
