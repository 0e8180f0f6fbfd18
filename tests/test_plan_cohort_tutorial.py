"""GKE's tutorial "Implement a Job queuing system with quota sharing between
namespaces" (kueue-cohort), replayed with the planner on the tutorial's own
manifests, read at test time from ../shared/reference (never copied).

Facts the reasoning uses, from those manifests: cq-team-a and cq-team-b are in
cohort all-teams, each with on-demand cpu 10 (borrowingLimit 5) and memory
10Gi (borrowingLimit 15Gi), and spot 0; spot-cq (cohort all-teams) has spot
cpu 40 and memory 144Gi; a Job is 3 pods of 500m / 512Mi: 1500m cpu, 1536Mi.
The queues set no preemption, so Kueue's defaults apply: withinClusterQueue
and reclaimWithinCohort Never. CPU is the tighter resource throughout.
Expected outcomes are worked out by hand from Kueue's rules (cluster_queue.md:
borrowing up to borrowingLimit from unused quota of the cohort; preemption.md:
reclaimWithinCohort) and written as literals."""
import copy
from decimal import Decimal

import pytest

from generator.kernel import yamlio
from generator.plan import overlay, scenario, simulate
from tests import helpers
from tests.test_plan_model import states

TUTORIAL = "kubernetes-engine-samples/batch/kueue-cohort"


@pytest.fixture(scope="module")
def ref():
    base = helpers.REFERENCE / TUTORIAL
    if not base.is_dir():
        pytest.skip(f"{base} is not there (the tutorial's manifests come from ../shared)")
    return base


def _objs(ref, *names):
    out = []
    for n in names:
        out += [d for d in yamlio.load_all((ref / n).read_text()) if d]
    return out


def _play(ref, steps, reclaim=None):
    objs = _objs(ref, "flavors.yaml", "cq-team-a.yaml", "cq-team-b.yaml")
    if reclaim:
        for o in objs:
            if o["kind"] == "ClusterQueue":
                o["spec"]["preemption"] = {"reclaimWithinCohort": reclaim}
    cluster = overlay.build("kueue-cohort", objs)
    raw = {"steps": copy.deepcopy(steps)}
    sc = scenario.from_dict(raw, cluster, str(ref / "scenario.yaml"))
    return simulate.run(cluster, sc)


def _jobs(team, n):
    return {"title": f"team {team} submits {n} jobs", "submit": {"file": f"job-team-{team}.yaml", "count": n}}


def _usage(step, cq, flavor="on-demand", resource="cpu"):
    return next(u for u in step.usage if u.cluster_queue == cq and u.flavor == flavor and u.resource == resource)


def _of(step, team, state):
    return sorted((w for w, s in states(step).items() if w.startswith(f"team-{team}/") and s == state),
                  key=lambda w: int(w.rsplit("-", 1)[1]))


def A(*ns):
    return [f"team-a/sample-job-team-a-{n}" for n in ns]


def B(*ns):
    return [f"team-b/sample-job-team-b-{n}" for n in ns]


def test_manifest_facts(ref):
    cluster = overlay.build("t", _objs(ref, "flavors.yaml", "cq-team-a.yaml", "cq-team-b.yaml", "cq-spot.yaml"))
    a = cluster.cluster_queues["cq-team-a"]
    assert a.cohort == "all-teams" and a.quota("on-demand", "cpu").nominal == 10
    assert a.quota("on-demand", "cpu").borrowing == 5 and a.quota("spot", "cpu").nominal == 0
    assert a.preemption.reclaim == "Never" and a.preemption.within == "Never"
    assert cluster.cluster_queues["spot-cq"].quota("spot", "cpu").nominal == 40
    job = _objs(ref, "job-team-a.yaml")[0]
    assert job["spec"]["parallelism"] == 3 and "name" not in job["metadata"]


def test_team_a_alone_uses_its_10_cpu_then_borrows_5(ref):
    plan = _play(ref, [_jobs("a", 6), _jobs("a", 5)])
    s1, s2 = plan.steps[1], plan.steps[2]
    # 6 jobs = 9 cpu, within team A's nominal 10: nothing borrowed.
    assert _of(s1, "a", "admitted") == A(1, 2, 3, 4, 5, 6)
    assert _usage(s1, "cq-team-a").used == 9 and _usage(s1, "cq-team-a").borrowed == 0
    # 5 more: 10.5, 12, 13.5, 15 borrow from team B's unused quota up to borrowingLimit 5;
    # the 11th (16.5) is past nominal + limit: it waits (on-demand over the limit, spot has nothing).
    assert _of(s2, "a", "admitted") == A(*range(1, 11))
    assert _of(s2, "a", "pending") == A(11)
    assert _usage(s2, "cq-team-a").used == 15 and _usage(s2, "cq-team-a").borrowed == 5
    assert _usage(s2, "cq-team-b").lent == 5
    assert all(r.flavors == {"cpu": "on-demand", "memory": "on-demand"} for r in s2.rows if r.state == "admitted")


def test_team_b_gets_what_team_a_does_not_borrow_and_waits_for_the_rest(ref):
    plan = _play(ref, [_jobs("a", 11), _jobs("b", 7)])
    s = plan.steps[2]
    # 20 cpu in the cohort, team A holds 15: 5 left, 3 jobs of team B (4.5). The 4th would
    # fit team B's nominal 10, but nobody may be preempted (reclaimWithinCohort: Never).
    assert _of(s, "b", "admitted") == B(1, 2, 3)
    assert _of(s, "b", "pending") == B(4, 5, 6, 7)
    assert _of(s, "a", "admitted") == A(*range(1, 11))
    assert not [w for w, st in states(s).items() if st == "preempted"]
    assert _usage(s, "cq-team-b").used == Decimal("4.5") and _usage(s, "cq-team-a").borrowed == 5


def test_with_reclaim_team_b_takes_its_nominal_share_back(ref):
    plan = _play(ref, [_jobs("a", 11), _jobs("b", 7)], reclaim="Any")
    s = plan.steps[2]
    # Each team B job past the 3 that fit reclaims team A's most recently admitted borrowed
    # job (A10, then A9, A8): B4..B6 bring team B to 9 cpu. B7 would make 10.5, past team B's
    # nominal, and needs borrowing: team A (10.5) still borrows 0.5 but the cohort has only
    # 0.5 free: B7 waits. Team A keeps A1..A7 (10.5); the evicted jobs cannot come back.
    assert _of(s, "b", "admitted") == B(1, 2, 3, 4, 5, 6)
    assert _of(s, "b", "pending") == B(7)
    assert _of(s, "a", "admitted") == A(*range(1, 8))
    assert _of(s, "a", "preempted") == A(8, 9, 10)
    assert "team-a/sample-job-team-a-10 preempted by team-b/sample-job-team-b-4 (reclamation within the cohort; " \
        "priority 0 = 0)" in s.events
    assert _usage(s, "cq-team-b").used == 9 and _usage(s, "cq-team-a").used == Decimal("10.5")


def test_spot_queue_added_further_jobs_of_both_teams_run_on_spot(ref):
    spot = {"title": "spot-cq joins the cohort", "apply": {"file": "cq-spot.yaml"}}
    plan = _play(ref, [_jobs("a", 11), _jobs("b", 7), spot, _jobs("a", 2), _jobs("b", 2)])
    s3, s5 = plan.steps[3], plan.steps[5]
    # The waiting jobs now borrow spot capacity from spot-cq (whenCanBorrow: the first flavor
    # that fits, borrowing included; on-demand cannot take them).
    assert _of(s3, "a", "pending") == [] and _of(s3, "b", "pending") == []
    flavors = {r.workload: r.flavors.get("cpu") for r in s5.rows}
    assert {flavors[w] for w in A(11, 12, 13) + B(4, 5, 6, 7, 8, 9)} == {"spot"}
    assert {flavors[w] for w in A(*range(1, 11)) + B(1, 2, 3)} == {"on-demand"}
    assert _usage(s5, "cq-team-a", "spot").used == Decimal("4.5")
    assert _usage(s5, "cq-team-b", "spot").used == 9
    assert _usage(s5, "spot-cq", "spot").lent == Decimal("13.5")
