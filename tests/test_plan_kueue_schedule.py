"""Flavor assignment and scheduling checked against Kueue's own tests
(kubernetes-sigs/kueue, tag v0.17.4): the oracle is Kueue, not us.

- TestSchedule (pkg/scheduler/scheduler_test.go) runs one scheduling cycle on
  its ClusterQueues (sales, eng-alpha, eng-beta, lend-a, lend-b), restated
  below; here too one cycle runs (Simulator.cycle), and the Workloads admitted
  (with the flavor of each resource of each pod set, and pod counts under
  partial admission), left pending, and preempted are Kueue's.
- TestAssignFlavors (pkg/scheduler/flavorassigner/flavorassigner_test.go):
  node selectors and affinity against flavor labels, taints and tolerations,
  the `pods` resource.
- test/integration/singlecluster/scheduler/scheduler_test.go: multi-step
  stories (pods quota, StrictFIFO, stop policies, taints, affinity), replayed
  as scenarios.

Upstream Workloads are restated as Workload objects (tests/kueue_cases.py);
those already admitted carry status.admission and a QuotaReserved time."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from generator.plan import overlay, scenario, simulate
from tests.kueue_cases import (
    NOW,
    at,
    clusterqueue,
    cohort,
    flavor,
    localqueue,
    one_cycle,
    rq,
    workload,
)

REL = "v0.17.4"
SCH = f"kubernetes-sigs/kueue@{REL} pkg/scheduler/scheduler_test.go TestSchedule"
FA = f"kubernetes-sigs/kueue@{REL} pkg/scheduler/flavorassigner/flavorassigner_test.go TestAssignFlavors"
INT = f"kubernetes-sigs/kueue@{REL} test/integration/singlecluster/scheduler/scheduler_test.go"
CPU, GPU, PODS = "cpu", "example.com/gpu", "pods"
LP, ANY = "LowerPriority", "Any"


def _ns(name, dep):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {"dep": dep}}}


def _sel(dep):
    return {"matchExpressions": [{"key": "dep", "operator": "In", "values": [dep]}]}


# TestSchedule's resourceFlavors, clusterQueues, queues and namespaces, restated.
BASE = [
    *(flavor(f) for f in ("default", "on-demand", "spot", "model-a")),
    clusterqueue("sales", [{"default": {CPU: rq(50, 0)}}], strategy="StrictFIFO", namespaceSelector=_sel("sales")),
    clusterqueue("eng-alpha", [{"on-demand": {CPU: rq(50, 50)}, "spot": {CPU: rq(100, 0)}}], "eng",
                 strategy="StrictFIFO", namespaceSelector=_sel("eng")),
    clusterqueue("eng-beta", [{"on-demand": {CPU: rq(50, 10)}, "spot": {CPU: rq(0, 100)}},
                              {"model-a": {GPU: rq(20, 0)}}], "eng", within=LP, reclaim=ANY,
                 strategy="StrictFIFO", namespaceSelector=_sel("eng")),
    clusterqueue("lend-a", [{"default": {CPU: rq(3, None, 2)}}], "lend", namespaceSelector=_sel("lend")),
    clusterqueue("lend-b", [{"default": {CPU: rq(2, None, 2)}}], "lend", namespaceSelector=_sel("lend")),
    localqueue("sales", "sales", "main"), localqueue("eng-alpha", "sales", "blocked"),
    localqueue("eng-alpha", "eng-alpha", "main"), localqueue("eng-beta", "eng-beta", "main"),
    localqueue("lend-a", "lend", "lend-a-queue"), localqueue("lend-b", "lend", "lend-b-queue"),
    _ns("eng-alpha", "eng"), _ns("eng-beta", "eng"), _ns("sales", "sales"), _ns("lend", "lend"),
]


def pending(name, ns, cpu=None, queue="main", prio=0, podsets=None, **kw):
    req = {CPU: cpu} if cpu is not None else {}
    return workload(name, ns, req, prio, podsets=podsets, ns=ns, queue=queue, **kw)


def admitted(name, ns, cq, flavors, cpu=None, prio=0, podsets=None, queue="main", **kw):
    req = {CPU: cpu} if cpu is not None else {}
    return workload(name, cq, req, prio, podsets=podsets, ns=ns, queue=queue, admitted=flavors, **kw)


def check(name="check"):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck", "metadata": {"name": name},
            "spec": {"controllerName": "example.com/check"}}


def with_check(cq_name: str, objs: list[dict]) -> list[dict]:
    """The queue with an AdmissionCheck "check" (Kueue's unit test sets the check's state on the
    Workload only; here the ClusterQueue lists it, so the planner takes the Workload's state)."""
    out = []
    for o in objs:
        if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == cq_name:
            o = {**o, "spec": {**o["spec"], "admissionChecksStrategy": {"admissionChecks": [{"name": "check"}]}}}
        out.append(o)
    return out + [check()]


def checked(state):
    return {"admissionChecks": [{"name": "check", "state": state}]}


@dataclass
class Sched:
    source: str
    workloads: list[dict]
    admitted: dict[str, list[dict]]                   # workload -> per pod set {resource: flavor}
    pending: set[str] = field(default_factory=set)
    preempted: dict[str, str] = field(default_factory=dict)     # workload -> Kueue's reason
    counts: dict[str, tuple[int, ...]] = field(default_factory=dict)
    reserved: set[str] = field(default_factory=set)   # quota reserved, admission checks pending
    objs: list[dict] = field(default_factory=lambda: BASE)


OTHER_ALPHA = clusterqueue("other-alpha", [{"on-demand": {CPU: rq(50, 50)}, "spot": {CPU: rq(100, 0)}}],
                           within=LP, fungibility={"whenCanPreempt": "MayStopSearch"})
PREEMPT_ATTEMPTS = clusterqueue("preempt-attempts-cq", [{"on-demand": {CPU: 1}, "spot": {CPU: 1}}], within=LP,
                                fungibility={"whenCanPreempt": "TryNextFlavor"})


def _preference(prefix, preference):
    return [clusterqueue(f"{prefix}-cq", [{"on-demand": {CPU: rq(5, 0)}, "spot": {CPU: rq(0, 5)}}],
                         f"{prefix}-cohort", within=LP,
                         fungibility={"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor",
                                      "preference": preference}),
            clusterqueue(f"{prefix}-lender", [{"on-demand": {CPU: 0}, "spot": {CPU: 5}}], f"{prefix}-cohort"),
            localqueue(f"{prefix}-cq", "default", f"{prefix}-queue")]


def _three_cqs():
    rg = [{"default": {"r1": rq(10, 10), "r2": rq(10, 10)}}]
    return [clusterqueue(f"cq{i}", rg, "co", within=LP, reclaim=ANY) for i in (1, 2, 3)] + \
        [localqueue(f"cq{i}", "sales", f"lq{i}") for i in (1, 2, 3)]


def _lenders(reclaim):
    pre = {"reclaim": reclaim} if reclaim else {}
    return [clusterqueue("ClusterQueueA", [{"on-demand": {"gpu": 2}}], "root", **pre),
            clusterqueue("ClusterQueueB", [{"on-demand": {"gpu": 0}}], "root"),
            localqueue("ClusterQueueA", "eng-alpha", "lq"), localqueue("ClusterQueueB", "eng-beta", "lq")]


def _lending_case(reclaim, blocked):
    what = {"Any": "capacity not blocked when lending clusterqueue can reclaim (ReclaimWithinCohort=Any)",
            LP: "capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort="
                "LowerPriority)",
            "Never": "capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort="
                     "Never)"}[reclaim]
    # A holds 1 of its 2 GPUs; a2 (2) needs preemption but has no candidates. Unless A may reclaim
    # anything later (Any), it keeps its nominal quota back this cycle and B cannot borrow it.
    # Upstream sets no creation time on a2 (Go's zero time) and `now` on b1: a2 is older.
    loads = [workload("a1-admitted", "ClusterQueueA", {"gpu": 1}, ns="eng-alpha", queue="lq",
                      admitted={"gpu": "on-demand"}),
             workload("a2-pending", "ClusterQueueA", {"gpu": 2}, ns="eng-alpha", queue="lq",
                      created="0001-01-01T00:00:00Z"),
             workload("b1-pending", "ClusterQueueB", {"gpu": 1}, ns="eng-beta", queue="lq", created=NOW)]
    adm = {"eng-alpha/a1-admitted": [{"gpu": "on-demand"}]}
    if not blocked:
        adm["eng-beta/b1-pending"] = [{"gpu": "on-demand"}]
    return Sched(f"{SCH} '{what}'", loads, adm,
                 pending={"eng-alpha/a2-pending"} | ({"eng-beta/b1-pending"} if blocked else set()),
                 objs=BASE + _lenders(reclaim if reclaim != "Never" else "Never"))


SCHEDULE = [
    Sched(f"{SCH} 'use second flavor when the first has no preemption candidates; WhenCanPreempt: MayStopSearch'",
          [admitted("admitted", "eng-alpha", "other-alpha", {CPU: "on-demand"}, 50, queue="other"),
           pending("new", "eng-alpha", 20, queue="other")],
          {"eng-alpha/admitted": [{CPU: "on-demand"}], "eng-alpha/new": [{CPU: "spot"}]},
          objs=BASE + [OTHER_ALPHA, localqueue("other-alpha", "eng-alpha", "other")]),
    Sched(f"{SCH} 'workload fits in single clusterQueue, with check state ready'",
          [pending("foo", "sales", podsets=[("one", 10, {CPU: 1})], status=checked("Ready"))],
          {"sales/foo": [{CPU: "default"}]}, counts={"sales/foo": (10,)}, objs=with_check("sales", BASE)),
    Sched(f"{SCH} 'workload fits in single clusterQueue, with check state pending'",
          [pending("foo", "sales", podsets=[("one", 10, {CPU: 1})], status=checked("Pending"))],
          {"sales/foo": [{CPU: "default"}]}, reserved={"sales/foo"}, objs=with_check("sales", BASE)),
    Sched(f"{SCH} 'single clusterQueue full'",
          [pending("new", "sales", podsets=[("one", 11, {CPU: 1})]),
           admitted("assigned", "sales", "sales", {CPU: "default"}, podsets=[("one", 40, {CPU: 1})], queue=None)],
          {"sales/assigned": [{CPU: "default"}]}, pending={"sales/new"}),
    Sched(f"{SCH} 'failed to match clusterQueue selector'",
          [pending("new", "sales", podsets=[("one", 1, {CPU: 1})], queue="blocked")], {}, pending={"sales/new"}),
    Sched(f"{SCH} 'admit in different cohorts'",
          [pending("new", "sales", podsets=[("one", 1, {CPU: 1})]),
           pending("new", "eng-alpha", podsets=[("one", 51, {CPU: 1})])],
          {"sales/new": [{CPU: "default"}], "eng-alpha/new": [{CPU: "on-demand"}]}),
    Sched(f"{SCH} 'admit in same cohort with no borrowing'",
          [pending("new", "eng-alpha", podsets=[("one", 40, {CPU: 1})]),
           pending("new", "eng-beta", podsets=[("one", 40, {CPU: 1})])],
          {"eng-alpha/new": [{CPU: "on-demand"}], "eng-beta/new": [{CPU: "on-demand"}]}),
    Sched(f"{SCH} 'assign multiple resources and flavors'",
          [pending("new", "eng-beta", podsets=[("one", 10, {CPU: 6, GPU: 1}), ("two", 40, {CPU: 1})])],
          {"eng-beta/new": [{CPU: "on-demand", GPU: "model-a"}, {CPU: "spot"}]}),
    Sched(f"{SCH} 'cannot borrow if cohort was assigned and would result in overadmission'",
          [pending("new", "eng-alpha", podsets=[("one", 45, {CPU: 1})]),
           pending("new", "eng-beta", podsets=[("one", 56, {CPU: 1})])],
          {"eng-alpha/new": [{CPU: "on-demand"}]}, pending={"eng-beta/new"}),
    Sched(f"{SCH} 'can borrow if cohort was assigned and will not result in overadmission'",
          [pending("new", "eng-alpha", podsets=[("one", 45, {CPU: 1})]),
           pending("new", "eng-beta", podsets=[("one", 55, {CPU: 1})])],
          {"eng-alpha/new": [{CPU: "on-demand"}], "eng-beta/new": [{CPU: "on-demand"}]}),
    Sched(f"{SCH} 'can borrow if needs reclaim from cohort in different flavor'",
          [pending("can-reclaim", "eng-alpha", 100), pending("needs-to-borrow", "eng-beta", 1),
           admitted("user-on-demand", "eng-beta", "eng-beta", {CPU: "on-demand"}, 50, queue=None),
           admitted("user-spot", "eng-beta", "eng-beta", {CPU: "spot"}, 1, queue=None)],
          {"eng-beta/needs-to-borrow": [{CPU: "on-demand"}], "eng-beta/user-on-demand": [{CPU: "on-demand"}],
           "eng-beta/user-spot": [{CPU: "spot"}]}, pending={"eng-alpha/can-reclaim"}),
    Sched(f"{SCH} 'workload exceeds lending limit when borrow in cohort'",
          [admitted("a", "lend", "lend-b", {CPU: "default"}, 2, queue=None), pending("b", "lend", 3, "lend-b-queue")],
          {"lend/a": [{CPU: "default"}]}, pending={"lend/b"}),
    Sched(f"{SCH} 'preempt workloads in ClusterQueue and cohort'",
          [pending("preemptor", "eng-beta", 20),
           admitted("use-all-spot", "eng-alpha", "eng-alpha", {CPU: "spot"}, 100, queue=None),
           admitted("low-1", "eng-beta", "eng-beta", {CPU: "on-demand"}, 30, -1, queue=None),
           admitted("low-2", "eng-beta", "eng-beta", {CPU: "on-demand"}, 10, -2, queue=None),
           admitted("borrower", "eng-alpha", "eng-alpha", {CPU: "on-demand"}, 60, queue=None)],
          {"eng-alpha/use-all-spot": [{CPU: "spot"}], "eng-beta/low-1": [{CPU: "on-demand"}]},
          pending={"eng-beta/preemptor"},
          preempted={"eng-alpha/borrower": "InCohortReclamation", "eng-beta/low-2": "InClusterQueue"}),
    Sched(f"{SCH} 'not enough resources to borrow, fallback to next flavor; WhenCanPreempt: TryNextFlavor'",
          [pending("new", "eng-alpha", podsets=[("one", 60, {CPU: 1})]),
           admitted("existing", "eng-beta", "eng-beta", {CPU: "on-demand"}, podsets=[("one", 45, {CPU: 1})],
                    queue=None)],
          {"eng-alpha/new": [{CPU: "spot"}], "eng-beta/existing": [{CPU: "on-demand"}]}),
    Sched(f"{SCH} 'partial admission single variable pod set'",
          [pending("new", "sales", podsets=[("one", 50, {CPU: 2}, 20)])],
          {"sales/new": [{CPU: "default"}]}, counts={"sales/new": (25,)}),
    Sched(f"{SCH} 'partial admission single variable pod set, preempt first'",
          [pending("new", "eng-beta", prio=4, podsets=[("one", 20, {GPU: 1}, 10)]),
           admitted("old", "eng-beta", "eng-beta", {GPU: "model-a"}, prio=-4, podsets=[("one", 10, {GPU: 1})],
                    queue=None)],
          {}, pending={"eng-beta/new"}, preempted={"eng-beta/old": "InClusterQueue"}),
    Sched(f"{SCH} 'partial admission single variable pod set, preempt with partial admission'",
          [pending("new", "eng-beta", prio=4, podsets=[("one", 30, {GPU: 1}, 10)]),
           admitted("old", "eng-beta", "eng-beta", {GPU: "model-a"}, prio=-4, podsets=[("one", 10, {GPU: 1})],
                    queue=None)],
          {}, pending={"eng-beta/new"}, preempted={"eng-beta/old": "InClusterQueue"}),
    Sched(f"{SCH} 'pending admission check with nofit and fit flavors'",
          [pending("pending-check", "eng-beta", 80, status=checked("Pending"))],
          {"eng-beta/pending-check": [{CPU: "spot"}]}, reserved={"eng-beta/pending-check"},
          objs=with_check("eng-beta", BASE)),
    Sched(f"{SCH} 'admit to second flavor when first needs preemption; WhenCanPreempt: TryNextFlavor'",
          [admitted("blocker", "eng-alpha", "preempt-attempts-cq", {CPU: "on-demand"}, 1, 50,
                    queue="preempt-attempts-lq"),
           pending("test-wl", "eng-alpha", 1, "preempt-attempts-lq", 100)],
          {"eng-alpha/blocker": [{CPU: "on-demand"}], "eng-alpha/test-wl": [{CPU: "spot"}]},
          objs=BASE + [PREEMPT_ATTEMPTS, localqueue("preempt-attempts-cq", "eng-alpha", "preempt-attempts-lq")]),
    Sched(f"{SCH} 'admit workload with zero-quantity request for resource not in ClusterQueue'",
          [workload("zero-resource-wl", "sales", {CPU: 1, GPU: 0}, ns="sales", queue="main")],
          {"sales/zero-resource-wl": [{CPU: "default"}]}),
    Sched(f"{SCH} 'PreemptionOverBorrowing preference: preempt in first flavor instead of borrowing in second'",
          [admitted("low-pob", "default", "pob-cq", {CPU: "on-demand"}, 5, -1, queue="pob-queue"),
           pending("high-pob", "default", 5, "pob-queue")],
          {}, pending={"default/high-pob"}, preempted={"default/low-pob": "InClusterQueue"},
          objs=BASE + _preference("pob", "PreemptionOverBorrowing")),
    Sched(f"{SCH} 'multiple CQs need preemption'",
          [pending("preemptor", "eng-beta", 1, "other", -1), pending("pending", "eng-alpha", 1, "other", 1),
           admitted("use-all", "eng-alpha", "other-alpha", {CPU: "on-demand"}, 100, queue=None)],
          {}, pending={"eng-beta/preemptor", "eng-alpha/pending"},
          preempted={"eng-alpha/use-all": "InCohortReclamation"},
          objs=BASE + [clusterqueue("other-alpha", [{"on-demand": {CPU: rq(50, 50)}}], "other"),
                       clusterqueue("other-beta", [{"on-demand": {CPU: rq(50, 10)}}], "other", within=LP,
                                    reclaim=ANY),
                       localqueue("other-alpha", "eng-alpha", "other"), localqueue("other-beta", "eng-beta", "other")]),
    Sched(f"{SCH} 'two workloads can borrow different resources from the same flavor in the same cycle'",
          [workload("wl1", "cq1", {"r1": 16}, -1, ns="sales", queue="lq1"),
           workload("wl2", "cq2", {"r2": 16}, -2, ns="sales", queue="lq2")],
          {"sales/wl1": [{"r1": "default"}], "sales/wl2": [{"r2": "default"}]}, objs=BASE + _three_cqs()),
    Sched(f"{SCH} 'only one workload can borrow one resources from the same flavor in the same cycle if cohort "
          "quota cannot fit'",
          [workload("wl1", "cq1", {"r1": 16}, -1, ns="sales", queue="lq1"),
           workload("wl2", "cq2", {"r1": 16}, -2, ns="sales", queue="lq2")],
          {"sales/wl1": [{"r1": "default"}]}, pending={"sales/wl2"}, objs=BASE + _three_cqs()),
    _lending_case("Any", blocked=False),
    _lending_case(LP, blocked=True),
    _lending_case("Never", blocked=True),
    # guaranteed borrows inside its own Cohort (4 CPU), best-effort from the root: the one borrowing
    # less goes first despite its lower priority, and the root's 4 CPU are then used up.
    Sched(f"{SCH} 'in a hierarchical cohort, workload borrowing less is scheduled first'",
          [workload("guaranteed", "guaranteed", podsets=[("one", 1, {CPU: 4})], ns="eng-alpha",
                    queue="lq-guaranteed"),
           workload("best-effort", "best-effort", priority=3, podsets=[("one", 1, {CPU: 4})], ns="eng-alpha",
                    queue="lq-best-effort")],
          {"eng-alpha/guaranteed": [{CPU: "default"}]}, pending={"eng-alpha/best-effort"},
          objs=BASE + [cohort("root"), cohort("guaranteed", "root", [{"default": {CPU: 4}}]),
                       clusterqueue("guaranteed", [{"default": {CPU: 0}}], "guaranteed"),
                       clusterqueue("best-effort", [{"default": {CPU: 0}}], "root"),
                       localqueue("guaranteed", "eng-alpha", "lq-guaranteed"),
                       localqueue("best-effort", "eng-alpha", "lq-best-effort")]),
    Sched(f"{SCH} \"don't assign flavor if there are no candidates for preemption\"",
          [workload("admitted", "cq2", {CPU: 1}, ns="eng-alpha", queue="lq2", admitted={CPU: "on-demand"},
                    reserved=at(-1)),
           workload("new", "cq1", {CPU: 1}, 100, ns="eng-alpha", queue="lq1")],
          {"eng-alpha/admitted": [{CPU: "on-demand"}], "eng-alpha/new": [{CPU: "spot"}]},
          objs=BASE + [clusterqueue("cq1", [{"on-demand": {CPU: rq(0, 1)}, "spot": {CPU: rq(0, 1)}}], "cohort",
                                    within=LP, reclaim=ANY, bwc=(LP, None),
                                    fungibility={"whenCanPreempt": "MayStopSearch", "whenCanBorrow": "MayStopSearch"}),
                       clusterqueue("cq2", [{"on-demand": {CPU: 1}, "spot": {CPU: 1}}], "cohort"),
                       localqueue("cq1", "eng-alpha", "lq1"), localqueue("cq2", "eng-alpha", "lq2")]),
    Sched(f"{SCH} 'BorrowingOverPreemption preference: borrow in second flavor instead of preempting in first'",
          [admitted("low-bop", "default", "bop-cq", {CPU: "on-demand"}, 5, -1, queue="bop-queue"),
           pending("high-bop", "default", 5, "bop-queue")],
          {"default/low-bop": [{CPU: "on-demand"}], "default/high-bop": [{CPU: "spot"}]},
          objs=BASE + _preference("bop", "BorrowingOverPreemption")),
]


def _flavors(sim: simulate.Simulator, key: str) -> list[dict]:
    a = sim.states[key].assignment
    return [{r: c.flavor for r, c in ps.flavors.items()} for ps in (a.podsets if a else ())]


def preemptions(step) -> dict[str, str]:
    from tests.kueue_cases import REASONS
    out = {}
    for e in step.events:
        if " preempted by " in e:
            why = e.split(" (", 1)[1].split(";")[0]
            out[e.split(" preempted by ")[0]] = next(k for k, v in REASONS.items() if v == why)
    return out


def _check(case: Sched, sim: simulate.Simulator, step) -> None:
    rows = {r.workload: r for r in step.rows}
    for key, flavors in case.admitted.items():
        want = "reserved" if key in case.reserved else "admitted"
        assert rows[key].state == want, (case.source, key, rows[key].detail)
        assert _flavors(sim, key) == flavors, (case.source, key)
    for key, counts in case.counts.items():
        a = sim.states[key].assignment
        assert a is not None and tuple(ps.count for ps in a.podsets) == counts, (case.source, key)
    for key in case.pending:
        assert not sim.states[key].holds_quota, (case.source, key, rows[key].detail)
    assert preemptions(step) == case.preempted, case.source
    holding = {k for k, st in sim.states.items() if st.holds_quota}
    assert holding == set(case.admitted), case.source


@pytest.mark.parametrize("case", SCHEDULE, ids=[c.source.split(" TestSchedule ")[-1][:90] for c in SCHEDULE])
def test_kueue_schedule_case(case: Sched):
    sim, step = one_cycle(case.objs + case.workloads)
    _check(case, sim, step)


def test_selector_mismatch_says_why():
    # 'failed to match clusterQueue selector': Kueue keeps it inadmissible; the plan says why.
    _, step = one_cycle(BASE + SCHEDULE[4].workloads)
    row = next(r for r in step.rows if r.workload == "sales/new")
    assert "namespace sales is not selected by ClusterQueue eng-alpha's namespaceSelector" in row.detail


def test_at_least_10_schedule_cases():
    assert len(SCHEDULE) >= 10


# ---------------------------------------------------------------- TestAssignFlavors
TYPE_ONE, TYPE_TWO = {"type": "one"}, {"type": "two"}
TAINT = {"key": "instance", "value": "spot", "effect": "NoSchedule"}
TOLERATION = {"key": "instance", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}
FLAVORS = [flavor("default"), flavor("one", TYPE_ONE), flavor("two", TYPE_TWO),
           flavor("tainted", taints=[TAINT]), flavor("taint_and_toleration".replace("_", "-"), taints=[TAINT],
                                                      tolerations=[TOLERATION])]


def _affinity(*terms):
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": k, "operator": "In", "values": [v]} for k, v in t]} for t in terms]}}}}


ASSIGN = [
    (f"{FA} 'single flavor, fits tainted flavor'", {"tainted": {CPU: 4}}, {CPU: 1},
     {"tolerations": [TOLERATION]}, 1, {CPU: "tainted"}),
    (f"{FA} 'single flavor, fits tainted flavor with toleration'", {"taint-and-toleration": {CPU: 4}}, {CPU: 1},
     {}, 1, {CPU: "taint-and-toleration"}),
    (f"{FA} 'multiple flavors, fits while skipping tainted flavor'", {"tainted": {CPU: 4}, "two": {CPU: 4}},
     {CPU: 3}, {}, 1, {CPU: "two"}),
    (f"{FA} 'multiple flavors, fits a node selector'", {"one": {CPU: 4}, "two": {CPU: 4}}, {CPU: 1},
     {"nodeSelector": {"type": "two", "ignored1": "foo"}, **_affinity([("ignored2", "bar")])}, 1, {CPU: "two"}),
    (f"{FA} 'multiple flavors, fits with node affinity'", {"one": {CPU: 4, "memory": "1Gi"},
                                                            "two": {CPU: 4, "memory": "1Gi"}},
     {CPU: 1, "memory": "1Mi"}, {"nodeSelector": {"ignored1": "foo"}, **_affinity([("type", "two")])}, 1,
     {CPU: "two", "memory": "two"}),
    (f"{FA} 'multiple flavors, node affinity fits any flavor'", {"one": {CPU: 4}, "two": {CPU: 4}}, {CPU: 1},
     _affinity([("ignored2", "bar")], [("cpuType", "two")]), 1, {CPU: "one"}),
    (f"{FA} \"multiple flavors, doesn't fit node affinity\"", {"one": {CPU: 4}, "two": {CPU: 4}}, {CPU: 1},
     _affinity([("type", "three")]), 1, None),
    (f"{FA} 'num pods fit'", {"default": {PODS: 3, CPU: 10}}, {CPU: 1}, {}, 3, {CPU: "default", PODS: "default"}),
    (f"{FA} \"num pods don't fit\"", {"default": {PODS: 2, CPU: 10}}, {CPU: 1}, {}, 3, None),
]


@pytest.mark.parametrize("case", ASSIGN, ids=[c[0].split(" TestAssignFlavors ")[-1] for c in ASSIGN])
def test_kueue_assign_flavors_case(case):
    source, quotas, requests, pod_spec, count, want = case
    objs = FLAVORS + [clusterqueue("test-clusterqueue", [quotas]), localqueue("test-clusterqueue")]
    wl = workload("wl", "test-clusterqueue", podsets=[("main", count, requests)], pod_spec=pod_spec)
    sim, step = one_cycle(objs + [wl])
    row = next(r for r in step.rows if r.workload == "ns/wl")
    if want is None:
        assert row.state == "never", (source, row.detail)
    else:
        assert row.state == "admitted" and _flavors(sim, "ns/wl") == [want], (source, row.detail)


def test_assign_flavors_reasons_are_kueues():
    # The NoFit reasons Kueue's TestAssignFlavors expects, as the plan words them.
    objs = FLAVORS + [clusterqueue("q", [{"one": {CPU: 4}, "two": {CPU: 4}}]), localqueue("q")]
    _, step = one_cycle(objs + [workload("wl", "q", {CPU: 1}, pod_spec=_affinity([("type", "three")]))])
    detail = step.rows[0].detail
    assert "flavor one doesn't match node affinity" in detail and "flavor two doesn't match node affinity" in detail
    objs = FLAVORS + [clusterqueue("q", [{"tainted": {CPU: 4}}]), localqueue("q")]
    _, step = one_cycle(objs + [workload("wl", "q", {CPU: 1})])
    assert "untolerated taint instance=spot:NoSchedule in flavor tainted" in step.rows[0].detail


# ---------------------------------------------------------------- integration stories
ON_DEMAND = flavor("on-demand", {"cloud.provider.com/instance": "on-demand"})
SPOT_TAINT = {"key": "cloud.provider.com/instance", "value": "spot-tainted", "effect": "NoSchedule"}
SPOT_TAINTED = flavor("spot-tainted", {"cloud.provider.com/instance": "spot-tainted"}, taints=[SPOT_TAINT])
SPOT_UNTAINTED = flavor("spot-untainted", {"cloud.provider.com/instance": "spot-untainted"})
SPOT_TOLERATION = {**SPOT_TAINT, "operator": "Equal"}


def story(objs: list[dict], workloads: list[dict], steps: list[dict], initial: list[str] | None = None):
    """A scenario: `initial` Workloads (all when None), then steps."""
    cluster = overlay.build("kueue-integration", objs + workloads)
    names = initial if initial is not None else [w["metadata"]["name"] for w in workloads]
    raw = {"initial": [{"kind": "Workload", "name": n} for n in names], "steps": steps}
    return simulate.run(cluster, scenario.from_dict(raw, cluster, "story.yaml"))


def submit(name):
    return {"title": f"create {name}", "submit": {"kind": "Workload", "name": name}}


def finish(*names):
    return [{"title": f"{n} finishes", "finish": {"kind": "Workload", "name": n}} for n in names]


def states(step) -> dict[str, str]:
    return {r.workload.split("/", 1)[1]: r.state for r in step.rows}


def wl(name, cq, cpu, prio=0, count=1):
    return workload(name, cq, priority=prio, podsets=[("main", count, {CPU: cpu})])


def test_pods_quota():
    """kubernetes-sigs/kueue@v0.17.4 test/integration/singlecluster/scheduler/scheduler_test.go
    'Scheduling workloads on clusterQueues' / 'Should admit workloads as number of pods allows it':
    pods-count-cq covers cpu 100 and pods 5. wl1 (3 pods) is admitted; of wl2 (3) and wl3 (2) only wl3
    fits the 2 pods left; when wl1 finishes, wl2 is admitted."""
    objs = [ON_DEMAND, clusterqueue("pods-count-cq", [{"on-demand": {CPU: 100, PODS: 5}}]),
            localqueue("pods-count-cq")]
    plan = story(objs, [wl("wl1", "pods-count-cq", 2, count=3), wl("wl2", "pods-count-cq", 2, count=3),
                        wl("wl3", "pods-count-cq", 2, count=2)],
                 [submit("wl2"), submit("wl3"), *finish("wl1")], initial=["wl1"])
    s = plan.steps
    assert states(s[0]) == {"wl1": "admitted"}
    assert next(u for u in s[0].usage if u.resource == PODS).used == 3
    assert states(s[2]) == {"wl1": "admitted", "wl3": "admitted", "wl2": "pending"}
    assert states(s[3]) == {"wl2": "admitted", "wl3": "admitted", "wl1": "finished"}


def test_strict_fifo_blocks_behind_its_head():
    """kubernetes-sigs/kueue@v0.17.4 test/integration/singlecluster/scheduler/scheduler_test.go
    'Queueing with StrictFIFO' / 'Should schedule workloads by their priority strictly': 5 CPU;
    wl1 (2, priority 100), wl2 (5, priority 10) and wl3 (1, priority 1) are created before their
    LocalQueue, so all three enter the queue at once and its priority order decides: wl1 is
    admitted, wl2 waits, and wl3 waits behind it although it would fit. With BestEffortFIFO (the
    contrast, reasoned from Kueue's docs) wl3 runs."""
    def objs(strategy):
        return [ON_DEMAND, clusterqueue("strict-fifo-cq", [{"on-demand": {CPU: rq(5, 0)}}], "cohort",
                                        strategy=strategy, namespaceSelector=_sel("eng")),
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns", "labels": {"dep": "eng"}}}]
    # Created in upstream's order; the queue sees them together only when it exists.
    loads = [wl("wl1", "strict-fifo-cq", 2, 100), wl("wl2", "strict-fifo-cq", 5, 10), wl("wl3", "strict-fifo-cq", 1, 1)]
    create_queue = {"title": "create the LocalQueue", "apply": {"manifest": localqueue("strict-fifo-cq")}}
    s1 = story(objs("StrictFIFO"), loads, [create_queue]).steps[-1]
    assert states(s1) == {"wl1": "admitted", "wl2": "pending", "wl3": "pending"}
    assert "waiting behind ns/wl2 (StrictFIFO)" in next(r.detail for r in s1.rows if r.workload == "ns/wl3")
    # The priority order, not the creation order: wl3 created first still waits behind wl2.
    s1 = story(objs("StrictFIFO"), loads[::-1], [create_queue]).steps[-1]
    assert states(s1) == {"wl1": "admitted", "wl2": "pending", "wl3": "pending"}
    s1 = story(objs("BestEffortFIFO"), loads, [create_queue]).steps[-1]
    assert states(s1) == {"wl1": "admitted", "wl3": "admitted", "wl2": "pending"}


def test_hold_at_startup_then_admit_by_priority():
    """kubernetes-sigs/kueue@v0.17.4 test/integration/singlecluster/scheduler/scheduler_test.go
    'Hold ClusterQueue at startup' / 'Should admit workloads according to their priorities':
    prod-cq (spot-tainted 5, on-demand 5) held; five 2-CPU Workloads wait. Unheld, the two high ones take
    4 of on-demand's 5 (none tolerates spot-tainted); when they finish the two mid ones do; low waits."""
    objs = [ON_DEMAND, SPOT_TAINTED,
            clusterqueue("prod-cq", [{"spot-tainted": {CPU: rq(5, 5)}, "on-demand": {CPU: 5}}], "prod-cohort",
                         stopPolicy="Hold"), localqueue("prod-cq")]
    loads = [wl("wl-low-priority", "prod-cq", 2, 0), wl("wl-mid-priority-1", "prod-cq", 2, 10),
             wl("wl-mid-priority-2", "prod-cq", 2, 10), wl("wl-high-priority-1", "prod-cq", 2, 100),
             wl("wl-high-priority-2", "prod-cq", 2, 100)]
    plan = story(objs, loads, [{"title": "unhold", "stopPolicy": {"clusterQueue": "prod-cq", "policy": "None"}},
                               *finish("wl-high-priority-1", "wl-high-priority-2")])
    s = plan.steps
    assert set(states(s[0]).values()) == {"pending"}
    assert states(s[1]) == {"wl-high-priority-1": "admitted", "wl-high-priority-2": "admitted",
                            "wl-mid-priority-1": "pending", "wl-mid-priority-2": "pending",
                            "wl-low-priority": "pending"}
    assert {k for k, v in states(s[3]).items() if v == "admitted"} == {"wl-mid-priority-1", "wl-mid-priority-2"}
    assert states(s[3])["wl-low-priority"] == "pending"


def test_stop_policy_drain_evicts_and_resume_admits():
    """kubernetes-sigs/kueue@v0.17.4 test/integration/singlecluster/scheduler/scheduler_test.go
    'Using clusterQueue stop policy' / 'Should evict workloads when stop policy is drain': one is
    admitted; HoldAndDrain evicts it; two is created and waits; with the policy removed both run."""
    objs = [ON_DEMAND, clusterqueue("cluster-queue", [{"on-demand": {CPU: rq(5, 5)}}], "cohort"),
            localqueue("cluster-queue", name="queue")]
    loads = [workload("one", "cluster-queue", queue="queue"), workload("two", "cluster-queue", queue="queue")]
    plan = story(objs, loads, [
        {"title": "drain", "stopPolicy": {"clusterQueue": "cluster-queue", "policy": "HoldAndDrain"}},
        submit("two"), {"title": "resume", "stopPolicy": {"clusterQueue": "cluster-queue", "policy": "None"}}],
        initial=["one"])
    s = plan.steps
    assert states(s[0]) == {"one": "admitted"}
    assert states(s[1]) == {"one": "pending"} and "is stopped (stopPolicy: HoldAndDrain)" in s[1].rows[0].detail
    assert states(s[2]) == {"one": "pending", "two": "pending"}
    assert states(s[3]) == {"one": "admitted", "two": "admitted"}


def test_taints_in_resource_flavors():
    """kubernetes-sigs/kueue@v0.17.4 test/integration/singlecluster/scheduler/scheduler_test.go
    'Using taints in resourceFlavors' / 'Should schedule workloads on tolerated flavors':
    spot-tainted (5) then on-demand (5). A 5-CPU Workload without the toleration goes to on-demand, a
    second waits, a third that tolerates the taint goes to spot-tainted."""
    objs = [ON_DEMAND, SPOT_TAINTED, clusterqueue("cluster-queue", [{"spot-tainted": {CPU: rq(5, 5)},
                                                                     "on-demand": {CPU: 5}}], "cohort"),
            localqueue("cluster-queue", name="queue")]
    loads = [workload(n, "cluster-queue", {CPU: 5}, queue="queue", pod_spec=spec) for n, spec in
             (("on-demand-wl1", None), ("on-demand-wl2", None), ("on-demand-wl3", {"tolerations": [SPOT_TOLERATION]}))]
    plan = story(objs, loads, [submit("on-demand-wl2"), submit("on-demand-wl3")], initial=["on-demand-wl1"])
    s = plan.steps
    assert s[0].rows[0].flavors == {CPU: "on-demand"}
    assert states(s[1]) == {"on-demand-wl1": "admitted", "on-demand-wl2": "pending"}
    row = next(r for r in s[2].rows if r.workload == "ns/on-demand-wl3")
    assert row.state == "admitted" and row.flavors == {CPU: "spot-tainted"}


def test_affinity_in_resource_flavors():
    """kubernetes-sigs/kueue@v0.17.4 test/integration/singlecluster/scheduler/scheduler_test.go
    'Using affinity in resourceFlavors' / 'Should admit workloads with affinity to specific
    flavor': without a selector the first flavor (spot-untainted); selecting on-demand (plus a label no
    flavor has, which is ignored) gets on-demand."""
    objs = [ON_DEMAND, SPOT_UNTAINTED, clusterqueue("cluster-queue", [{"spot-untainted": {CPU: 5},
                                                                       "on-demand": {CPU: 5}}]),
            localqueue("cluster-queue", name="queue")]
    sel = {"nodeSelector": {"cloud.provider.com/instance": "on-demand", "foo": "bar"}}
    loads = [workload("no-affinity-workload", "cluster-queue", {CPU: 1}, queue="queue"),
             workload("affinity-wl", "cluster-queue", {CPU: 1}, queue="queue", pod_spec=sel)]
    plan = story(objs, loads, [submit("affinity-wl")], initial=["no-affinity-workload"])
    rows = {r.workload: r for r in plan.steps[1].rows}
    assert rows["ns/no-affinity-workload"].flavors == {CPU: "spot-untainted"}
    assert rows["ns/affinity-wl"].state == "admitted" and rows["ns/affinity-wl"].flavors == {CPU: "on-demand"}


def test_creation_time_orders_the_queue():
    # Kueue orders a queue by priority, then creation time: an older Workload object goes first even
    # when the scenario lists it second. 3 CPU, two 2-CPU Workloads: only the older one fits.
    objs = [ON_DEMAND, clusterqueue("q", [{"on-demand": {CPU: 3}}]), localqueue("q")]
    loads = [workload("newer", "q", {CPU: 2}, created=at(10)), workload("older", "q", {CPU: 2}, created=at(0))]
    plan = story(objs, loads, [submit("older")], initial=["newer"])
    assert states(plan.steps[0]) == {"newer": "admitted"}
    cluster = overlay.build("order", objs + loads)
    both = simulate.run(cluster, scenario.default(cluster)).steps[0]
    assert states(both) == {"older": "admitted", "newer": "pending"}


# ---------------------------------------------------------------- what the planner cannot express
NOT_EXPRESSED_IN = SCH          # the upstream test whose cases these are
NOT_EXPRESSED = {
    "partial admission multiple variable pod sets": "the unit test builds a Workload with two pod sets using "
    "minCount, which Kueue's Workload webhook refuses (pkg/webhooks/workload_webhook.go ValidateWorkload; "
    "tests/test_plan_kueue_config.py): the planner reads Workloads as the API server would admit them",
    "error during admission": "it injects an API error into the admission call; the planner has no API server",
    "container does not satisfy limitRange constraints": "LimitRange objects are not read by the planner",
    "container resource requests exceed limits": "the planner takes requests as given and does not check them "
                                                 "against limits",
    "workload-slice fits in single clusterQueue": "elastic workload slices (ElasticJobsViaWorkloadSlices) are "
                                                  "not modelled",
    "block preemptions and signal `BlockedOnPreemptionGates` when a preemption gate is present":
        "preemption gates (MultiKueue orchestrated preemption) are not modelled",
    "prevent integer overflow when sum of requests over podsets exceeds MaxInt64":
        "the planner refuses quantities Kueue cannot count when it reads the input (exit 2), so such a Workload "
        "never reaches its scheduler",
}


@pytest.mark.parametrize("name", sorted(NOT_EXPRESSED))
def test_kueue_schedule_cases_not_expressed(name):
    pytest.skip(f"{SCH} '{name}': {NOT_EXPRESSED[name]}")


# ---------------------------------------------------------------- after issuing preemptions
def test_mark_preemption_outcome_clears_the_last_tried_flavor():
    """kubernetes-sigs/kueue@v0.17.4 pkg/scheduler/scheduler_test.go TestEntryMarkPreemptionOutcome
    'pending preemption': after IssuePreemptions the entry's LastAssignment is nil, so the next
    cycle tries every flavor again (scheduler.go markPreemptionOutcome). Restated on a cohort: a
    (flavors f1, f2; whenCanPreempt MayStopSearch) and b (f1 only, nothing of its own) share f1;
    v (b, borrowing f1) and q (a, f2) hold 2 CPU each. p (a, priority 100) stops at f1, where it
    may reclaim v; once v is gone, p tries f1 first again and is admitted there; q is untouched.
    Kept, the last tried flavor would send p on to f2, preempting q, and v back to f1."""
    objs = [clusterqueue("a", [{"f1": {CPU: 2}, "f2": {CPU: 2}}], "co", within="LowerPriority", reclaim="Any",
                         fungibility={"whenCanPreempt": "MayStopSearch"}),
            clusterqueue("b", [{"f1": {CPU: 0}}], "co"), flavor("f1"), flavor("f2"), localqueue("a"), localqueue("b")]
    admitted = [workload("v", "b", {CPU: 2}, admitted={CPU: "f1"}), workload("q", "a", {CPU: 2}, admitted={CPU: "f2"})]
    cluster = overlay.build("kueue-case", objs + admitted + [workload("p", "a", {CPU: 2}, priority=100)])
    sim = simulate.Simulator(cluster)
    sim.begin_step()
    for owner in cluster.owners:
        sim.submit(owner)
    sim.cycle()
    p = sim.states["ns/p"]
    assert p.reason == "preempting ns/v" and p.last_tried is None      # wantLastAssignmentNil
    sim.settle()
    step = simulate.snapshot(sim, 0, "settled", "")
    assert {r.workload: (r.state, r.flavors.get(CPU)) for r in step.rows} == {
        "ns/p": ("admitted", "f1"), "ns/q": ("admitted", "f2"), "ns/v": ("preempted", None)}
