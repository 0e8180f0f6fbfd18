"""Fair sharing in the planner, on cases taken from Kueue's own tests
(kubernetes-sigs/kueue, tag v0.17.4): the oracle is Kueue, not us.

TestFairPreemptions (pkg/scheduler/preemption/preemption_fair_test.go) hands
Kueue's preemptor an incoming Workload whose flavor needs preemption and
expects a set of targets with their reasons. Here the whole scheduler runs
with fair sharing switched on by a Configuration object: the admitted
Workloads are Workload objects with status.admission (all reserved at one
time, as upstream's `now`, so equal candidates are ordered by name as upstream
orders them by UID); the incoming one is submitted, its flavor assigned, the
targets preempted. The assertion is on the Workloads preempted by it and
Kueue's reason for each.

TestScheduleForFairSharing (pkg/scheduler/scheduler_fs_test.go) runs one
scheduling cycle; here the cases replay until nothing changes, and assert what
upstream asserts about the first cycle through the order of the events."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from tests.kueue_cases import (
    at,
    clusterqueue,
    cohort,
    fair_sharing,
    flavor,
    localqueue,
    preempted_by,
    replay,
    restates,
    workload,
)

REL = "v0.17.4"
FAIR = f"kubernetes-sigs/kueue@{REL} pkg/scheduler/preemption/preemption_fair_test.go TestFairPreemptions"
FS = f"kubernetes-sigs/kueue@{REL} pkg/scheduler/scheduler_fs_test.go TestScheduleForFairSharing"
CPU = "cpu"
LP, ANY = "LowerPriority", "Any"
RECLAIM, FAIRSHARE, IN_CQ = "InCohortReclamation", "InCohortFairSharing", "InClusterQueue"


def _base(name, nominal=3):
    return clusterqueue(name, [{"default": {CPU: nominal}}], "all", within=LP, reclaim=ANY, bwc=(LP, -3))


# TestFairPreemptions' baseCQs, restated.
BASE = [_base("a"), _base("b"), _base("c"), clusterqueue("preemptible", [{"default": {CPU: 0}}], "all")]


def _plain(name, nominal=3, cohort_name="all", weight=None, within=LP, reclaim=ANY):
    return clusterqueue(name, [{"default": {CPU: nominal}}], cohort_name, within=within, reclaim=reclaim,
                        weight=weight)


def unit(name, cq, prio=0, cpu=1):
    """An admitted Workload of `cpu` CPU in ClusterQueue `cq`, flavor default."""
    return workload(name.replace("_", "-"), cq, {CPU: cpu}, prio, admitted={CPU: "default"})


def units(cq, n, prio=0):
    return [unit(f"{cq}{i}", cq, prio) for i in range(1, n + 1)]


def incoming(cq, cpu=1, prio=0):
    return workload("in", cq, {CPU: cpu}, prio)


@dataclass
class Case:
    source: str
    queues: list[dict]
    admitted: list[dict]
    incoming: dict
    preempted: dict[str, str]              # Kueue's targets and reasons
    cohorts: list[dict] = field(default_factory=list)
    strategies: tuple[str, ...] = ()
    flavors: tuple[str, ...] = ("default",)


WEIGHTED = [_plain("a", weight=2), _plain("b"), _plain("c")]
B_ZERO = [_plain("a"), _plain("b", weight=0), _plain("c")]

CASES = [
    Case(f"{FAIR} 'reclaim nominal from user using the most'", BASE,
         units("a", 3) + units("b", 5) + units("c", 1), incoming("c"), {"b1": RECLAIM}),
    Case(f"{FAIR} 'can reclaim from queue using less, if taking the latest workload from user using the most isn't "
         "enough'", BASE,
         [unit("a1", "a", cpu=3), unit("a2", "a", cpu=1), unit("b1", "b", cpu=2), unit("b2", "b", cpu=3)],
         incoming("c", 3), {"a1": RECLAIM}),
    Case(f"{FAIR} 'reclaim borrowable quota from user using the most'", BASE,
         units("a", 3) + units("b", 5) + units("c", 1), incoming("a"), {"b1": FAIRSHARE}),
    Case(f"{FAIR} 'preempt one from each CQ borrowing'", BASE,
         [unit("a1", "a", cpu="500m"), unit("a2", "a", cpu="500m"), unit("a3", "a", cpu=3),
          unit("b1", "b", cpu="500m"), unit("b2", "b", cpu="500m"), unit("b3", "b", cpu=3)],
         incoming("c", 2), {"a1": RECLAIM, "b1": RECLAIM}),
    Case(f"{FAIR} \"can't preempt when everyone under nominal\"", BASE,
         units("a", 3) + units("b", 3) + units("c", 3), incoming("c"), {}),
    Case(f"{FAIR} \"can't preempt when it would switch the imbalance\"", BASE,
         units("a", 3) + units("b", 5), incoming("a", 2), {}),
    Case(f"{FAIR} 'can preempt lower priority workloads from same CQ'", BASE,
         [unit("a1_low", "a", -1), unit("a2_low", "a", -1), unit("a3", "a"), unit("a4", "a")] + units("b", 5),
         incoming("a", 2), {"a1-low": IN_CQ, "a2-low": IN_CQ}),
    Case(f"{FAIR} 'can preempt a combination of same CQ and highest user'", BASE,
         [unit("a_low", "a", -1), unit("a2", "a"), unit("a3", "a")] + units("b", 6),
         incoming("a", 2), {"a-low": IN_CQ, "b1": FAIRSHARE}),
    Case(f"{FAIR} 'preempt huge workload if there is no other option, as long as the target CQ gets a lower share'",
         BASE, [unit("b1", "b", cpu=9)], incoming("a", 2), {"b1": RECLAIM}),
    Case(f"{FAIR} \"can't preempt huge workload if the incoming is also huge\"", BASE,
         [unit("a1", "a", cpu=2), unit("b1", "b", cpu=7)], incoming("a", 5), {}),
    Case(f"{FAIR} \"can't preempt 2 smaller workloads if the incoming is huge\"", BASE,
         [unit("b1", "b", cpu=2), unit("b2", "b", cpu=2), unit("b3", "b", cpu=3)], incoming("a", 6), {}),
    Case(f"{FAIR} 'preempt from target and others even if over nominal'", BASE,
         [unit("a1_low", "a", -1, 2), unit("a2_low", "a", -1, 1), unit("b1", "b", cpu=3), unit("b2", "b", cpu=3)],
         incoming("a", 4), {"a1-low": IN_CQ, "b1": FAIRSHARE}),
    Case(f"{FAIR} \"prefer to preempt workloads that don't make the target CQ have the biggest share\"", BASE,
         [unit("b1", "b", cpu=2), unit("b2", "b", cpu=1), unit("b3", "b", cpu=2), unit("c1", "c", cpu=1)],
         incoming("a", "3500m"), {"b2": FAIRSHARE}),
    Case(f"{FAIR} 'preempt from different cluster queues if the end result has a smaller max share'", BASE,
         [unit("b1", "b", cpu=2), unit("b2", "b", cpu="2500m"), unit("c1", "c", cpu=2), unit("c2", "c", cpu="2500m")],
         incoming("a", "3500m"), {"b1": FAIRSHARE, "c1": FAIRSHARE}),
    Case(f"{FAIR} 'scenario above does not flap'", BASE,
         [unit("a1", "a", cpu="3500m"), unit("b2", "b", cpu="2500m"), unit("c2", "c", cpu="2500m")],
         incoming("b", 2), {}),
    Case(f"{FAIR} 'cannot preempt if it would make the candidate CQ go under nominal after preempting one element'",
         BASE, [unit("b1", "b", cpu=3), unit("b2", "b", cpu=3), unit("c1", "c", cpu=3)], incoming("a", 4), {}),
    Case(f"{FAIR} 'workloads under priority threshold not capriciously preempted'", BASE,
         units("a", 3) + units("b", 3) + units("preemptible", 3, -3), incoming("a", 2), {}),
    Case(f"{FAIR} 'preempt lower priority first, even if big'", BASE,
         [unit("a1", "a", cpu=3), unit("b_low", "b", 0, 5), unit("b_high", "b", 1, 1)],
         incoming("a"), {"b-low": FAIRSHARE}, strategies=("LessThanInitialShare",)),
    Case(f"{FAIR} \"preempt workload that doesn't transfer the imbalance, even if high priority\"", BASE,
         [unit("a1", "a", cpu=3), unit("b_low", "b", 0, 5), unit("b_high", "b", 1, 1)],
         incoming("a"), {"b-high": FAIRSHARE}, strategies=("LessThanOrEqualToFinalShare",)),
    Case(f"{FAIR} 'CQ with higher weight can preempt more'", WEIGHTED,
         units("a", 3) + units("b", 6), incoming("a", 2), {"b1": FAIRSHARE, "b2": FAIRSHARE}),
    Case(f"{FAIR} 'can preempt anything borrowing from CQ with 0 weight'", B_ZERO,
         units("a", 3) + units("b", 6), incoming("a", 3), {"b1": FAIRSHARE, "b2": FAIRSHARE, "b3": FAIRSHARE}),
    Case(f"{FAIR} \"can't preempt nominal from CQ with 0 weight\"", B_ZERO[:2],
         units("a", 3) + units("b", 3), incoming("a"), {}),
    Case(f"{FAIR} \"can't preempt nominal from Cohort with 0 weight\"",
         [_plain("left-cq", 0, "root", within=None), _plain("right-cq", 0, "right-cohort", weight=0, within=None)],
         [unit("right-1", "right-cq")], incoming("left-cq"), {},
         cohorts=[cohort("right-cohort", "root", [{"default": {CPU: 1}}], weight=0)]),
    Case(f"{FAIR} 'can preempt within cluster queue when no cohort'",
         [clusterqueue("a", [{"default": {CPU: 1}}], within=LP)],
         [unit("a1", "a")], incoming("a", 1, 1000), {"a1": IN_CQ}),
    # ROOT(5) over LEFT(5, weight 2: a weight 2, b), c, RIGHT(5: d, e weight 0.99); every CQ 1 CPU.
    Case(f"{FAIR} 'hierarchical preemption'",
         [_plain("a", 1, "LEFT", weight=2, within=None), _plain("b", 1, "LEFT", within=None, reclaim=None),
          _plain("c", 1, "ROOT", within=None, reclaim=None), _plain("d", 1, "RIGHT", within=None, reclaim=None),
          _plain("e", 1, "RIGHT", weight="0.99", within=None, reclaim=None)],
         [unit(f"{q}{p}", q, p) for q in "bcde" for p in range(1, 6)], incoming("a", 5),
         {"b1": FAIRSHARE, "b2": FAIRSHARE, "c1": FAIRSHARE, "c2": FAIRSHARE, "e1": FAIRSHARE},
         cohorts=[cohort("ROOT", groups=[{"default": {CPU: 5}}]),
                  cohort("LEFT", "ROOT", [{"default": {CPU: 5}}], weight=2),
                  cohort("RIGHT", "ROOT", [{"default": {CPU: 5}}])]),
    Case(f"{FAIR} 'borrowing cq in non-borrowing cohort is protected'",
         [_plain("a", 5, "ROOT", weight=10), _plain("b", 0, "RIGHT", weight="0.1", within=None, reclaim=None)],
         units("a", 3, -1) + [unit("b1", "b", -1)], incoming("a", 5),
         {"a1": IN_CQ, "a2": IN_CQ, "a3": IN_CQ},
         cohorts=[cohort("ROOT"), cohort("RIGHT", "ROOT", [{"default": {CPU: 1}}], weight="0.1")]),
    Case(f"{FAIR} 'forced to preempt within clusterqueue because borrowing workload too important'",
         [_plain("a", 5, "ROOT", weight=10, reclaim=LP), _plain("b", 0, "RIGHT", weight="0.1", within=None,
                                                                reclaim=None)],
         units("a", 3, -1) + [unit("b1", "b", 100, 4)], incoming("a", 4),
         {"a1": IN_CQ, "a2": IN_CQ, "a3": IN_CQ},
         cohorts=[cohort("ROOT"), cohort("RIGHT", "ROOT", [{"default": {CPU: 3}}], weight="0.1")]),
    Case(f"{FAIR} 'deep preemption'",
         [_plain("a", 0, "AAA", within=None), _plain("b", 0, "BBB", within=None, reclaim=None)],
         [unit("b1", "b")], incoming("a"), {"b1": FAIRSHARE},
         cohorts=[cohort("ROOT"), cohort("A", "ROOT", weight="1.01"), cohort("AA", "A"), cohort("AAA", "AA"),
                  cohort("B", "ROOT", weight="0.99"), cohort("BB", "B"), cohort("BBB", "BB"),
                  cohort("C", "ROOT"), cohort("CC", "C"), cohort("CCC", "CC"),
                  cohort("CCCC", "CCC", [{"default": {CPU: 1}}])]),
    Case(f"{FAIR} 'cq with zero weight can reclaim nominal quota'",
         [_plain("a", 1, "ROOT", weight="0.0", within=None), _plain("b", 0, "ROOT", weight="1.0", within=None,
                                                                      reclaim=None)],
         [unit("b1", "b")], incoming("a"), {"b1": RECLAIM}),
    Case(f"{FAIR} 'cohort with zero weight can reclaim nominal quota'",
         [_plain("a", 0, "A", weight="0.0", within=None), _plain("b", 0, "ROOT", weight="1.0", within=None,
                                                                   reclaim=None)],
         [unit("b1", "b")], incoming("a"), {"b1": FAIRSHARE},
         cohorts=[cohort("A", "ROOT", [{"default": {CPU: 1}}], weight="0.0")]),
    # a: 3 premium, 0 cheap; b: 0 premium, 6 cheap. a holds 2 premium and borrows 5 cheap; b borrows 1
    # premium. a's next CPU fits its premium nominal: it reclaims b's, despite a's higher share.
    Case(f"{FAIR} 'nominal first: workload fitting within nominal can preempt despite high aggregate DRS'",
         [clusterqueue("a", [{"premium": {CPU: 3}, "cheap": {CPU: 0}}], "all", reclaim=ANY,
                       fungibility={"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"}),
          clusterqueue("b", [{"premium": {CPU: 0}, "cheap": {CPU: 6}}], "all")],
         [workload(f"a-prem{i}", "a", {CPU: 1}, admitted={CPU: "premium"}) for i in (1, 2)]
         + [workload(f"a-cheap{i}", "a", {CPU: 1}, admitted={CPU: "cheap"}) for i in range(1, 6)]
         + [workload("b-prem1", "b", {CPU: 1}, admitted={CPU: "premium"})],
         incoming("a"), {"b-prem1": RECLAIM}, flavors=("premium", "cheap")),
]


def _objs(case: Case) -> list[dict]:
    names = [q["metadata"]["name"] for q in case.queues]
    return ([flavor(f) for f in case.flavors] + case.queues + [localqueue(n) for n in names] + case.cohorts
            + [fair_sharing(case.strategies)])


@pytest.mark.parametrize("case", CASES, ids=[c.source.split(" TestFairPreemptions ")[-1][:80] for c in CASES])
def test_kueue_fair_preemption_case(case):
    plan = replay(_objs(case), case.admitted, [case.incoming])
    s0, s1 = plan.steps[0], plan.steps[1]
    assert all(r.state == "admitted" for r in s0.rows), [(r.workload, r.detail) for r in s0.rows]
    assert preempted_by(s1, "ns/in") == case.preempted, case.source
    row = next(r for r in s1.rows if r.workload == "ns/in")
    # With targets the incoming Workload is admitted once they are gone; without, it waits.
    assert row.state == ("admitted" if case.preempted else "pending"), (case.source, row.detail)


def test_fair_sharing_is_switched_on_by_the_configuration():
    # 'reclaim borrowable quota from user using the most' without the Configuration: classical
    # preemption. a (3 of 3 used) must borrow for 1 more CPU; while borrowing it may only preempt
    # below borrowWithinCohort's maxPriorityThreshold (-3), and b's Workloads have priority 0.
    case = CASES[2]
    assert case.preempted == {"b1": FAIRSHARE}
    objs = [o for o in _objs(case) if o["kind"] != "Configuration"]
    plan = replay(objs, case.admitted, [case.incoming])
    assert "Kueue configuration: default (no kueue-manager-config in the input)" in plan.notes
    assert preempted_by(plan.steps[1], "ns/in") == {}
    on = replay(_objs(case), case.admitted, [case.incoming])
    assert "Kueue configuration: Configuration config: fair sharing on" in on.notes


# ---------------------------------------------------------------- TestScheduleForFairSharing
def _eng(extra_cqs=(), cohorts=()):
    """TestScheduleForFairSharing's eng-alpha and eng-beta (cohort eng), restated with namespaces
    eng-alpha and eng-beta (both labelled dep: eng) and their LocalQueues main."""
    sel = {"matchExpressions": [{"key": "dep", "operator": "In", "values": ["eng"]}]}
    alpha = clusterqueue("eng-alpha", [{"on-demand": {CPU: {"nominal": 50, "borrowing": 50, "lending": None}},
                                        "spot": {CPU: {"nominal": 100, "borrowing": 0, "lending": None}}}],
                         "eng", strategy="StrictFIFO", namespaceSelector=sel)
    beta = clusterqueue("eng-beta", [{"on-demand": {CPU: {"nominal": 50, "borrowing": 10, "lending": None}},
                                      "spot": {CPU: {"nominal": 0, "borrowing": 100, "lending": None}}},
                                     {"model-a": {"example.com/gpu": {"nominal": 20, "borrowing": 0,
                                                                      "lending": None}}}],
                        "eng", within=LP, reclaim=ANY, strategy="StrictFIFO", namespaceSelector=sel)
    ns = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": {"dep": "eng"}}}
          for n in ("eng-alpha", "eng-beta")]
    lqs = [localqueue("eng-alpha", "eng-alpha", "main"), localqueue("eng-beta", "eng-beta", "main")]
    return ([flavor(f) for f in ("default", "on-demand", "spot", "model-a")] + [alpha, beta, *extra_cqs]
            + ns + lqs + list(cohorts) + [fair_sharing()])


def _events_before(step, first: str, second: str) -> bool:
    """`first` happens in the step's events before anything about `second` being admitted."""
    names = [e for e in step.events if " admitted to " in e]
    firsts = [i for i, e in enumerate(names) if e.startswith(first + " ")]
    seconds = [i for i, e in enumerate(names) if e.startswith(second + " ")]
    return bool(firsts) and (not seconds or firsts[0] < seconds[0])


@restates(f"{FS} 'with fair sharing: schedule workload with lowest share first'")
def test_schedule_workload_with_lowest_share_first():
    """TestScheduleForFairSharing (see FS) 'with fair sharing: schedule workload with lowest share first':
    eng-shared adds 10 on-demand to the cohort (110). all_nominal holds 50 (alpha), borrowing 55 (beta);
    5 are left. older_new (beta, 1 CPU, created a minute earlier) and new (alpha, 5 CPU) are heads in one
    cycle: alpha's share after admitting new is lower, so new is admitted first and older_new no longer
    fits on on-demand."""
    shared = clusterqueue("eng-shared", [{"on-demand": {CPU: {"nominal": 10, "borrowing": 0, "lending": None}}}],
                          "eng")
    objs = _eng([shared])
    admitted = [workload("all-nominal", "eng-alpha", podsets=[("one", 50, {CPU: 1})], ns="eng-alpha", queue="main",
                         admitted={CPU: "on-demand"}),
                workload("borrowing", "eng-beta", podsets=[("one", 55, {CPU: 1})], ns="eng-beta", queue="main",
                         admitted={CPU: "on-demand"})]
    new = [workload("older-new", "eng-beta", podsets=[("one", 1, {CPU: 1})], ns="eng-beta", queue="main",
                    created=at(-60)),
           workload("new", "eng-alpha", podsets=[("one", 5, {CPU: 1})], ns="eng-alpha", queue="main", created=at(0))]
    s0 = replay(objs, admitted, new, together=True).steps[0]
    rows = {r.workload: r for r in s0.rows}
    assert rows["eng-alpha/new"].state == "admitted" and rows["eng-alpha/new"].flavors == {CPU: "on-demand"}
    # older_new did not get on-demand (the cohort's 110 are full); later cycles may put it on spot.
    assert rows["eng-beta/older-new"].flavors.get(CPU) != "on-demand"
    # Without fair sharing both heads borrow, so the older one goes first and takes 1 of the 5:
    # new (5) no longer fits on on-demand.
    classical = replay(objs[:-1], admitted, new, together=True).steps[0]
    rows = {r.workload: r for r in classical.rows}
    assert rows["eng-beta/older-new"].flavors == {CPU: "on-demand"}
    assert rows["eng-alpha/new"].flavors.get(CPU) != "on-demand"


def _cohort_a(quota):
    """TestScheduleForFairSharing's Cohort A (on-demand quota of its own) with ClusterQueues b and c
    of 0 CPU, their LocalQueues lq-b and lq-c in namespace eng-alpha."""
    return ([flavor("on-demand"), cohort("A", groups=[{"on-demand": {CPU: quota}}])]
            + [clusterqueue(q, [{"on-demand": {CPU: 0}}], "A") for q in ("b", "c")]
            + [localqueue(q, "eng-alpha", f"lq-{q}") for q in ("b", "c")] + [fair_sharing()])


def _wl(name, cq, cpu, prio=0, admitted=False):
    return workload(name, cq, {CPU: cpu}, prio, ns="eng-alpha", queue=f"lq-{cq}",
                    admitted={CPU: "on-demand"} if admitted else None)


ONE_CYCLE = [
    # b holds 10 of A's 100. b1 (50) would leave b at 60/100, c1 (75) c at 75/100: b1 goes first,
    # then c1 no longer fits (40 left).
    (f"{FS} 'fair sharing schedule workload with lowest drf after admission'", _cohort_a(100),
     [_wl("b0", "b", 10, admitted=True)], [_wl("b1", "b", 50), _wl("c1", "c", 75)],
     {"eng-alpha/b0", "eng-alpha/b1"}, {"eng-alpha/c1"}),
    # Equal shares after admission (10 of 10 each): the higher priority (c1, 101 > 99) goes first.
    (f"{FS} 'fair sharing schedule highest priority first'", _cohort_a(10) + [cohort("B")],
     [], [_wl("b1", "b", 10, 99), _wl("c1", "c", 10, 101)], {"eng-alpha/c1"}, {"eng-alpha/b1"}),
]


@pytest.mark.parametrize("case", ONE_CYCLE, ids=[c[0].split(" TestScheduleForFairSharing ")[-1] for c in ONE_CYCLE])
def test_kueue_fair_scheduling_order(case):
    source, objs, admitted, pending, want_admitted, want_pending = case
    s0 = replay(objs, admitted, pending, together=True).steps[0]
    states = {r.workload: r.state for r in s0.rows}
    assert {w for w, st in states.items() if st == "admitted"} == want_admitted, source
    assert {w for w, st in states.items() if st == "pending"} == want_pending, source
