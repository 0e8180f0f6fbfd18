"""Planner cases taken from Kueue's own tests (kubernetes-sigs/kueue, tag v0.17.4):
the oracle is Kueue, not us. Each case names the upstream file, test function
and case name; queues, admitted Workloads and the incoming Workload are
restated in our fixture form (tests/kueue_cases.py), and the expected
preemption targets are Kueue's.

Upstream unit tests call the preemptor once; here the whole scheduler runs:
the incoming Workload is submitted, its flavors are assigned, the targets
preempted, and it is admitted in the next cycle. The assertion is on the
Workloads preempted *by the incoming one*, and on its admission."""
import pytest

from tests.kueue_cases import (
    NOW,
    Case,
    at,
    clusterqueue,
    cohort,
    flavor,
    localqueue,
    preempted_by,
    replay,
    rq,
    workload,
)

REL = "v0.17.4"
PRE = f"kubernetes-sigs/kueue@{REL} pkg/scheduler/preemption/preemption_test.go TestPreemption"
SCH = f"kubernetes-sigs/kueue@{REL} pkg/scheduler/scheduler_test.go TestSchedule"
FAIR = f"kubernetes-sigs/kueue@{REL} pkg/scheduler/preemption/preemption_fair_test.go TestFairPreemptions"
CPU, MEM = "cpu", "memory"
LP, ANY, LONEP = "LowerPriority", "Any", "LowerOrNewerEqualPriority"
BWC = ("LowerPriority", 0)

# TestPreemption's defaultClusterQueues, restated.
QUEUES = {q["metadata"]["name"]: q for q in [
    clusterqueue("standalone", [{"default": {CPU: 6}}, {"alpha": {MEM: "3Gi"}, "beta": {MEM: "3Gi"}}], within=LP),
    clusterqueue("c1", [{"default": {CPU: rq(6, 6), MEM: rq("3Gi", "3Gi")}}], "cohort", within=LP, reclaim=LP),
    clusterqueue("c2", [{"default": {CPU: rq(6, 6), MEM: rq("3Gi", "3Gi")}}], "cohort", within="Never", reclaim=ANY),
    clusterqueue("d1", [{"default": {CPU: 6, MEM: "3Gi"}}], "cohort-no-limits", within=LP, reclaim=LP),
    clusterqueue("d2", [{"default": {CPU: 6, MEM: "3Gi"}}], "cohort-no-limits", within="Never", reclaim=ANY),
    clusterqueue("l1", [{"default": {CPU: rq(6, 12), MEM: rq("3Gi", "6Gi")}}], "legion", within=LP, reclaim=LP),
    clusterqueue("preventStarvation", [{"default": {CPU: 6}}], within=LONEP),
    clusterqueue("a_standard", [{"default": {CPU: rq(1, 12)}}], "with_shared_cq", within="Never", reclaim=LP, bwc=BWC),
    clusterqueue("b_standard", [{"default": {CPU: rq(1, 12)}}], "with_shared_cq", within=LP, reclaim=ANY, bwc=BWC),
    clusterqueue("a_best_effort", [{"default": {CPU: rq(1, 12)}}], "with_shared_cq", within="Never", reclaim=LP,
                 bwc=BWC),
    clusterqueue("b_best_effort", [{"default": {CPU: rq(0, 13)}}], "with_shared_cq", within="Never", reclaim=LP,
                 bwc=BWC),
    clusterqueue("shared", [{"default": {CPU: 10}}], "with_shared_cq"),
    clusterqueue("lend1", [{"default": {CPU: rq(6, None, 4)}}], "cohort-lend", within=LP, reclaim=LP),
    clusterqueue("lend2", [{"default": {CPU: rq(6, None, 2)}}], "cohort-lend", within=LP, reclaim=LP),
    clusterqueue("a", [{"default": {CPU: 2, MEM: 2}}], "cohort-three", within=LP, reclaim=ANY),
    clusterqueue("b", [{"default": {CPU: 2, MEM: 2}}], "cohort-three"),
    clusterqueue("c", [{"default": {CPU: 2, MEM: 2}}], "cohort-three"),
    clusterqueue("cq-left", [{"default": {CPU: 10}}], "cohort-left", reclaim=ANY),
    clusterqueue("cq-right", [{"default": {CPU: 0}}], "cohort-right"),
]}
COHORT = ["c1", "c2"]
THREE = ["a", "b", "c"]
SHARED = ["a_standard", "b_standard", "a_best_effort", "b_best_effort", "shared"]
D = {CPU: "default"}


def w(name, cq, cpu=None, prio=0, mem=None, fl=None, **kw):
    # Kubernetes names have no underscores; Kueue's unit tests do not go through the API server.
    name = name.replace("_", "-")
    req = {}
    if cpu is not None:
        req[CPU] = cpu
    if mem is not None:
        req[MEM] = mem
    return workload(name, cq, req, prio, admitted=fl if fl is not None else {r: "default" for r in req}, **kw)


def incoming(cq, cpu=None, prio=0, mem=None, podsets=None, pod_spec=None):
    req = {}
    if cpu is not None:
        req[CPU] = cpu
    if mem is not None:
        req[MEM] = mem
    return workload("in", cq, req, prio, podsets=podsets, pod_spec=pod_spec)


CASES = [
    Case(f"{PRE} 'preempt lowest priority'", ["standalone"],
         [w("low", "standalone", 2, -1), w("mid", "standalone", 2), w("high", "standalone", 2, 1)],
         incoming("standalone", 2, 1), {"low"}, True),
    Case(f"{PRE} 'preempt multiple'", ["standalone"],
         [w("low", "standalone", 2, -1), w("mid", "standalone", 2), w("high", "standalone", 2, 1)],
         incoming("standalone", 3, 1), {"low", "mid"}, True),
    Case(f"{PRE} 'no preemption for low priority'", ["standalone"],
         [w("low", "standalone", 3, -1), w("mid", "standalone", 3)],
         incoming("standalone", 1, -1), set(), False),
    Case(f"{PRE} 'not enough low priority workloads'", ["standalone"],
         [w("low", "standalone", 3, -1), w("mid", "standalone", 3)],
         incoming("standalone", 4, 0), set(), False),
    Case(f"{PRE} 'some free quota, preempt low priority'", ["standalone"],
         [w("low", "standalone", 1, -1), w("mid", "standalone", 1), w("high", "standalone", 3, 1)],
         incoming("standalone", 2, 1), {"low"}, True),
    Case(f"{PRE} 'minimal set excludes low priority'", ["standalone"],
         [w("low", "standalone", 1, -1), w("mid", "standalone", 2), w("high", "standalone", 3, 1)],
         incoming("standalone", 2, 1), {"mid"}, True),
    Case(f"{PRE} 'only preempt workloads using the chosen flavor'", ["standalone"],
         [w("low", "standalone", None, -1, "2Gi", {MEM: "alpha"}), w("mid", "standalone", None, 0, "1Gi", {MEM: "beta"}),
          w("high", "standalone", None, 1, "1Gi", {MEM: "beta"})],
         # Upstream hands the preemptor an assignment on beta; alpha would need a preemption too and comes
         # first, so here the flavors carry labels and the incoming Workload selects beta.
         incoming("standalone", 1, 1, "2Gi", pod_spec={"nodeSelector": {"pool": "beta"}}), {"mid"}, True,
         {CPU: "default", MEM: "beta"}),
    Case(f"{PRE} 'reclaim quota from borrower'", COHORT,
         [w("c1-low", "c1", 3, -1), w("c2-mid", "c2", 3), w("c2-high", "c2", 6, 1)],
         incoming("c1", 3, 1), {"c2-mid"}, True),
    Case(f"{PRE} 'reclaim quota if workload requests 0 resources for a resource at nominal quota'", COHORT,
         [w("c1-low", "c1", 3, -1, "3Gi"), w("c2-mid", "c2", 3), w("c2-high", "c2", 6, 1)],
         incoming("c1", 3, 1, "0"), {"c2-mid"}, True),
    # Upstream asks the preemptor for targets with an assignment in Preempt mode; the flavor
    # assigner finds that c1 can borrow 2 of c2's unused quota, so the Workload is admitted
    # without preempting: no targets, as upstream expects.
    Case(f"{PRE} 'no workloads borrowing'", COHORT,
         [w("c1-high", "c1", 4, 1), w("c2-low-1", "c2", 4, -1)],
         incoming("c1", 4, 1), set(), True),
    Case(f"{PRE} 'not enough workloads borrowing'", COHORT,
         [w("c1-high", "c1", 4, 1), w("c2-low-1", "c2", 4, -1), w("c2-low-2", "c2", 4, -1)],
         incoming("c1", 4, 1), set(), False),
    Case(f"{PRE} 'preempting locally and borrowing other resources in cohort, without cohort candidates'", COHORT,
         [w("c1-low", "c1", 4, -1), w("c2-low-1", "c2", 4, -1), w("c2-high-2", "c2", 4, 1)],
         incoming("c1", 4, 1, "5Gi"), {"c1-low"}, True),
    Case(f"{PRE} 'preempting locally and borrowing same resource in cohort'", COHORT,
         [w("c1-med", "c1", 4, 0), w("c1-low", "c1", 4, -1), w("c2-low-1", "c2", 4, -1)],
         incoming("c1", 4, 1), {"c1-low"}, True),
    Case(f"{PRE} 'preempting locally and borrowing same resource in cohort; no borrowing limit in the cohort'",
         ["d1", "d2"], [w("d1-med", "d1", 4, 0), w("d1-low", "d1", 4, -1), w("d2-low-1", "d2", 4, -1)],
         incoming("d1", 4, 1), {"d1-low"}, True),
    Case(f"{PRE} 'preempting locally and borrowing other resources in cohort, with cohort candidates'", COHORT,
         [w("c1-med", "c1", 4, 0), w("c2-low-1", "c2", 5, -1), w("c2-low-2", "c2", 1, -1), w("c2-low-3", "c2", 1, -1)],
         incoming("c1", 2, 1, "5Gi"), {"c1-med"}, True),
    Case(f"{PRE} 'preempting locally and not borrowing same resource in 1-queue cohort'", ["l1"],
         [w("l1-med", "l1", 4, 0), w("l1-low", "l1", 2, -1)],
         incoming("l1", 4, 1), {"l1-med"}, True),
    Case(f"{PRE} 'do not reclaim borrowed quota from same priority for withinCohort=ReclaimFromLowerPriority'", COHORT,
         [w("c1", "c1", 2), w("c2-1", "c2", 4), w("c2-2", "c2", 4)],
         incoming("c1", 4), set(), False),
    Case(f"{PRE} 'reclaim borrowed quota from same priority for withinCohort=ReclaimFromAny'", COHORT,
         [w("c1-1", "c1", 4), w("c1-2", "c1", 4, 1), w("c2", "c2", 2)],
         incoming("c2", 4), {"c1-1"}, True),
    Case(f"{PRE} 'preempt from all ClusterQueues in cohort'", COHORT,
         [w("c1-low", "c1", 3, -1), w("c1-mid", "c1", 2), w("c2-low", "c2", 3, -1), w("c2-mid", "c2", 4)],
         incoming("c1", 4), {"c1-low", "c2-low"}, True),
    Case(f"{PRE} \"can't preempt workloads in ClusterQueue for withinClusterQueue=Never\"", COHORT,
         [w("c2-low", "c2", 3, -1)],
         incoming("c2", 4, 1), set(), True),
    Case(f"{PRE} 'each podset preempts a different flavor'", ["standalone"],
         [w("low-alpha", "standalone", None, -1, "2Gi", {MEM: "alpha"}),
          w("low-beta", "standalone", None, -1, "2Gi", {MEM: "beta"})],
         incoming("standalone", podsets=[("launcher", 1, {MEM: "2Gi"}), ("workers", 2, {MEM: "1Gi"})]),
         {"low-alpha", "low-beta"}, True),
    Case(f"{PRE} 'use BorrowWithinCohort; allow preempting a lower-priority workload from another ClusterQueue "
         "while borrowing'", SHARED,
         [w("a_best_effort_low", "a_best_effort", 10, -1), w("b_best_effort_low", "b_best_effort", 1, -1)],
         incoming("a_standard", 10, 0), {"a_best_effort_low"}, True),
    Case(f"{PRE} \"use BorrowWithinCohort; don't allow preempting a lower-priority workload with priority above "
         "MaxPriorityThreshold, if borrowing is required even after the preemption\"", SHARED,
         [w("b_standard", "b_standard", 10, 1)],
         incoming("a_standard", 10, 2), set(), False),
    Case(f"{PRE} 'use BorrowWithinCohort; allow preempting a lower-priority workload with priority above "
         "MaxPriorityThreshold, if borrowing is not required after the preemption'", SHARED,
         [w("b_standard", "b_standard", 13, 1)],
         incoming("a_standard", 1, 2), {"b_standard"}, True),
    Case(f"{PRE} \"use BorrowWithinCohort; don't allow for preemption of lower-priority workload from the same "
         "ClusterQueue\"", SHARED,
         [w("a_standard", "a_standard", 13, 1)],
         incoming("a_standard", 1, 2), set(), False),
    Case(f"{PRE} 'use BorrowWithinCohort; only preempt from CQ if no workloads below threshold and already above "
         "nominal'", SHARED,
         [w("a_standard_1", "a_standard", 10, 1), w("a_standard_2", "a_standard", 1, 1),
          w("b_standard_1", "b_standard", 1, 1), w("b_standard_2", "b_standard", 1, 2)],
         incoming("b_standard", 1, 3), {"b_standard_1"}, True),
    Case(f"{PRE} 'use BorrowWithinCohort; preempt from CQ and from other CQs with workloads below threshold'", SHARED,
         [w("b_standard_high", "b_standard", 10, 2), w("b_standard_mid", "b_standard", 1, 1),
          w("a_best_effort_low", "a_best_effort", 1, -1), w("a_best_effort_lower", "a_best_effort", 1, -2)],
         incoming("b_standard", 2, 2), {"b_standard_mid", "a_best_effort_lower"}, True),
    Case(f"{PRE} 'reclaim quota from lender'", ["lend1", "lend2"],
         [w("lend1-low", "lend1", 3, -1), w("lend2-mid", "lend2", 3), w("lend2-high", "lend2", 4, 1)],
         incoming("lend1", 3, 1), {"lend2-mid"}, True),
    Case(f"{PRE} 'preempt from all ClusterQueues in cohort-lend'", ["lend1", "lend2"],
         [w("lend1-low", "lend1", 3, -1), w("lend1-mid", "lend1", 2), w("lend2-low", "lend2", 3, -1),
          w("lend2-mid", "lend2", 4)],
         incoming("lend1", 4), {"lend1-low", "lend2-low"}, True),
    Case(f"{PRE} 'cannot preempt from other ClusterQueues if exceeds requestable quota including lending limit'",
         ["lend1", "lend2"], [w("lend2-low", "lend2", 10, -1)],
         incoming("lend1", 9), set(), False),
    Case(f"{PRE} 'preemptions from cq when target queue is exhausted for the single requested resource'", THREE,
         [w("a1", "a", 1, -2), w("a2", "a", 1, -2), w("a3", "a", 1, -1),
          w("b1", "b", 1), w("b2", "b", 1), w("b3", "b", 1)],
         incoming("a", 2), {"a1", "a2"}, True),
    Case(f"{PRE} 'preemptions from cq when target queue is exhausted for two requested resources'", THREE,
         [w("a1", "a", 1, -2, 1), w("a2", "a", 1, -2, 1), w("a3", "a", 1, -1, 1),
          w("b1", "b", 1, 0, 1), w("b2", "b", 1, 0, 1), w("b3", "b", 1, 0, 1)],
         incoming("a", 2, 0, 2), {"a1", "a2"}, True),
    Case(f"{PRE} 'preemptions from cq when target queue is exhausted for one requested resource, but not the "
         "other'", THREE,
         [w("a1", "a", 1, -2), w("a2", "a", 1, -2), w("a3", "a", 1, -1),
          w("b1", "b", 1), w("b2", "b", 1), w("b3", "b", 1)],
         incoming("a", 2, 0, 2), {"a1", "a2"}, True),
    Case(f"{PRE} 'allow preemption from other cluster queues if target cq is not exhausted for the requested "
         "resource'", THREE,
         [w("a1", "a", 1, -1), w("b1", "b", 1), w("b2", "b", 1), w("b3", "b", 1), w("b4", "b", 1),
          w("b5", "b", 1, -1)],
         incoming("a", 2), {"a1", "b5"}, True),
    # Creation and quota reservation times as upstream sets them: the incoming Workload was created
    # 15 s before wl2 and wl3; wl2 reserved quota 1 s after wl3, so it is the newer candidate.
    Case(f"{PRE} 'preempt newer workloads with the same priority'", ["preventStarvation"],
         [w("wl1", "preventStarvation", 2, 2), w("wl2", "preventStarvation", 2, 1, created=NOW, reserved=at(1)),
          w("wl3", "preventStarvation", 2, 1, created=NOW)],
         workload("in", "preventStarvation", priority=1, podsets=[("launcher", 1, {CPU: 2})], created=at(-15)),
         {"wl2"}, True),
    Case(f"{PRE} 'long range preemption'", ["cq-left", "cq-right"],
         [w("to-be-preempted", "cq-right", 5)],
         incoming("cq-left", 8), {"to-be-preempted"}, True,
         cohorts=[cohort("cohort-left", "root"), cohort("cohort-right", "root")]),
]


def _run(case: Case):
    objs = [flavor("default"), flavor("alpha", {"pool": "alpha"}), flavor("beta", {"pool": "beta"})]
    objs += [QUEUES[q] for q in case.queues] + [localqueue(q) for q in case.queues]
    return replay(objs + case.cohorts + case.extra, case.admitted, [case.incoming])


@pytest.mark.parametrize("case", CASES, ids=[c.source.split(" TestPreemption ")[-1][:80] for c in CASES])
def test_kueue_preemption_case(case):
    plan = _run(case)
    s0, s1 = plan.steps[0], plan.steps[1]
    assert {r.workload for r in s0.rows if r.state == "admitted"} == {f"ns/{o['metadata']['name']}"
                                                                       for o in case.admitted}, case.source
    assert set(preempted_by(s1, "ns/in")) == {n.replace("_", "-") for n in case.preempted}, case.source
    row = next(r for r in s1.rows if r.workload == "ns/in")
    if case.admitted_in is not None:
        assert (row.state == "admitted") == case.admitted_in, (case.source, row.detail)
    if case.flavors:
        assert row.flavors == case.flavors, case.source


def test_at_least_25_cases_and_10_in_cohorts():
    assert len(CASES) >= 25
    assert sum(1 for c in CASES if any(QUEUES[q]["spec"].get("cohortName") for q in c.queues)) >= 10
