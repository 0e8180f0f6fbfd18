"""The Kueue Configuration the planner honours, restated from Kueue v0.17.4's own tests:
waitForPodsReady (test/integration/singlecluster/scheduler/podsready/scheduler_test.go),
featureGates PartialAdmission (pkg/webhooks/workload_webhook.go Default; the partial-admission
cases of pkg/scheduler/scheduler_test.go TestSchedule) and the Workload webhook's pod-set rule
(pkg/webhooks/workload_webhook_test.go TestValidateWorkload, the integration suite's
test/integration/singlecluster/webhook/core/workload_test.go). Expected outcomes are the
upstream tests'."""
from __future__ import annotations

from generator.plan import overlay, scenario, simulate
from tests.kueue_cases import clusterqueue, flavor, localqueue, restates, workload

REL = "v0.17.4"
PODSREADY = f"kubernetes-sigs/kueue@{REL} test/integration/singlecluster/scheduler/podsready/scheduler_test.go"
WEBHOOK = f"kubernetes-sigs/kueue@{REL} pkg/webhooks/workload_webhook_test.go TestValidateWorkload"
WEBHOOK_INT = f"kubernetes-sigs/kueue@{REL} test/integration/singlecluster/webhook/core/workload_test.go"
SCH = f"kubernetes-sigs/kueue@{REL} pkg/scheduler/scheduler_test.go TestSchedule"
NS = "podsready"


def config(block: bool | None = True, gates: dict | None = None, api="config.kueue.x-k8s.io/v1beta2") -> dict:
    doc: dict = {"apiVersion": api, "kind": "Configuration", "metadata": {"name": "config"}}
    if block is not None:
        doc["waitForPodsReady"] = {"blockAdmission": block, "timeout": "5m",
                                   "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 1}}
    if gates:
        doc["featureGates"] = gates
    return doc


def podsready_queues() -> list[dict]:
    """The suite's JustBeforeEach: flavor default; prod-cq and dev-cq (cohort all, 5 CPUs each)."""
    return [flavor("default"),
            clusterqueue("prod-cq", [{"default": {"cpu": 5}}], cohort="all"),
            clusterqueue("dev-cq", [{"default": {"cpu": 5}}], cohort="all"),
            localqueue("prod-cq", NS, "prod-queue"), localqueue("dev-cq", NS, "dev-queue")]


TEST_CQ = clusterqueue("test-cq", [{"default": {"cpu": {"nominal": 25, "borrowing": 0, "lending": None}}}],
                       cohort="all")


def ref(name):
    return {"kind": "Workload", "name": name, "namespace": NS}


def replay(objs, initial, steps):
    cluster = overlay.build("kueue-config-case", objs)
    return simulate.run(cluster, scenario.from_dict({"initial": [ref(n) for n in initial], "steps": steps},
                                                    cluster, "case.yaml"))


def states(step) -> dict[str, tuple[str, str]]:
    return {r.workload.split("/", 1)[1]: (r.state, r.detail) for r in step.rows}


def _same_cycle(block: bool):
    """Two 11-CPU workloads wait until test-cq (25 CPUs to lend, borrowing limit 0) is created."""
    prod = workload("prod-wl", "prod-cq", {"cpu": 11}, ns=NS, queue="prod-queue", created="2025-01-01T00:00:00Z")
    dev = workload("dev-wl", "dev-cq", {"cpu": 11}, ns=NS, queue="dev-queue", created="2025-01-01T00:00:01Z")
    plan = replay([*podsready_queues(), config(block), prod, dev], ["prod-wl", "dev-wl"],
                  [{"title": "creating the cluster queue", "apply": {"manifest": TEST_CQ}}])
    # ExpectWorkloadsToBePending: no quota for 11 CPUs yet (the plan calls that "never", as the
    # cohort stands then)
    assert {s for s, _ in states(plan.steps[0]).values()} <= {"pending", "never"}
    return states(plan.steps[-1])


def test_block_admission_of_one_new_workload_if_two_are_considered_in_the_same_scheduling_cycle():
    """kubernetes-sigs/kueue@v0.17.4 test/integration/singlecluster/scheduler/podsready/scheduler_test.go
    'SchedulerWithWaitForPodsReady Long PodsReady timeout Should block admission of one new workload if two are
    considered in the same scheduling cycle': the first created is admitted, the second waits."""
    got = _same_cycle(True)
    assert got["prod-wl"][0] == "admitted"
    assert got["dev-wl"][0] == "pending"
    assert "waiting for all admitted workloads to be in PodsReady condition" in got["dev-wl"][1]


def test_not_block_admission_when_block_admission_is_false():
    """kubernetes-sigs/kueue@v0.17.4 test/integration/singlecluster/scheduler/podsready/scheduler_test.go
    'SchedulerWithWaitForPodsReadyNonblockingMode Long PodsReady timeout Should not block admission of one new
    workload if two are considered in the same scheduling cycle': both admitted."""
    got = _same_cycle(False)
    assert got["prod-wl"][0] == got["dev-wl"][0] == "admitted"


def test_unblock_admission_of_new_workloads_once_the_admitted_workload_is_deleted():
    """kubernetes-sigs/kueue@v0.17.4 test/integration/singlecluster/scheduler/podsready/scheduler_test.go
    'SchedulerWithWaitForPodsReady Long PodsReady timeout Should unblock admission of new workloads once the
    admitted workload is deleted'."""
    prod = workload("prod-wl", "prod-cq", {"cpu": 2}, ns=NS, queue="prod-queue")
    dev = workload("dev-wl", "dev-cq", {"cpu": 2}, ns=NS, queue="dev-queue")
    plan = replay([*podsready_queues(), config(True), prod, dev], [],
                  [{"title": "prod", "submit": ref("prod-wl")}, {"title": "dev", "submit": ref("dev-wl")},
                   {"title": "delete prod", "delete": ref("prod-wl")}])
    assert states(plan.steps[1])["prod-wl"][0] == "admitted"
    assert states(plan.steps[2])["dev-wl"][0] == "pending"          # ExpectWorkloadsToBeWaiting
    assert states(plan.steps[3])["dev-wl"][0] == "admitted"


def test_pods_ready_unblocks_admission_and_the_header_says_what_is_not_replayed():
    # Ours: a step `podsReady` (the PodsReady condition, which the integration suite never sets)
    # lets Kueue admit the next one; the negative half is the test above (without it, dev waits).
    prod = workload("prod-wl", "prod-cq", {"cpu": 2}, ns=NS, queue="prod-queue")
    dev = workload("dev-wl", "dev-cq", {"cpu": 2}, ns=NS, queue="dev-queue")
    plan = replay([*podsready_queues(), config(True), prod, dev], [],
                  [{"title": "prod", "submit": ref("prod-wl")}, {"title": "dev", "submit": ref("dev-wl")},
                   {"title": "prod's pods ready", "podsReady": ref("prod-wl")}])
    assert states(plan.steps[3])["dev-wl"][0] == "admitted"
    note = next(n for n in plan.notes if "waitForPodsReady" in n)
    assert "blockAdmission: true" in note and "timeout (5m)" in note and "not replayed" in note


def test_a_workload_admitted_before_the_plan_without_pods_ready_blocks_admission():
    # A Workload from a cluster (status.admission) whose PodsReady is not True keeps Kueue waiting;
    # with PodsReady True it does not (scheduler.go PodsReadyForAllAdmittedWorkloads).
    for ready, want in ((False, "pending"), (True, "admitted")):
        old = workload("old", "prod-cq", {"cpu": 1}, ns=NS, queue="prod-queue", admitted={"cpu": "default"})
        old["status"]["conditions"].append({"type": "PodsReady", "status": "True" if ready else "False"})
        new = workload("new", "dev-cq", {"cpu": 1}, ns=NS, queue="dev-queue")
        plan = replay([*podsready_queues(), config(True), old, new], ["old"], [{"title": "new", "submit": ref("new")}])
        assert states(plan.steps[-1])["new"][0] == want


# ---------------------------------------------------------------- partial admission and the webhook
@restates(f"{WEBHOOK} 'too many variable count podSets'",
          f"{WEBHOOK_INT} 'too many variable count podSets'")
def test_two_pod_sets_with_min_count_are_refused_by_the_webhook():
    w = workload("two", "prod-cq", ns=NS, queue="prod-queue",
                 podsets=[("ps1", 3, {"cpu": 1}, 2), ("ps2", 3, {"cpu": 1}, 1)])
    plan = simulate.run(overlay.build("x", [*podsready_queues(), w]),
                        scenario.default(overlay.build("x", [*podsready_queues(), w])))
    state, detail = states(plan.steps[0])["two"]
    assert state == "never"
    assert "at most one podSet can use minCount" in detail
    # One pod set with minCount is accepted (and admitted in part: 3 pods, 5 CPUs).
    w = workload("one", "prod-cq", ns=NS, queue="prod-queue", podsets=[("ps1", 3, {"cpu": 2}, 2)])
    plan = simulate.run(overlay.build("x", [*podsready_queues(), w]),
                        scenario.default(overlay.build("x", [*podsready_queues(), w])))
    assert states(plan.steps[0])["one"][0] == "admitted"


@restates(f"{SCH} 'partial admission single variable pod set'")
def test_partial_admission_off_by_feature_gate():
    # TestSchedule 'partial admission single variable pod set' admits 20 of 50 pods (quota 50 CPUs,
    # 2 CPUs a pod, minCount 20); with featureGates PartialAdmission: false the webhook drops minCount
    # (workload_webhook.go Default) and the 100-CPU workload waits instead.
    objs = [flavor("default"), clusterqueue("sales", [{"default": {"cpu": 50}}]), localqueue("sales", "sales", "main")]
    w = workload("new", "sales", ns="sales", queue="main", podsets=[("one", 50, {"cpu": 2}, 20)])
    plan = simulate.run(overlay.build("x", [*objs, w]), scenario.default(overlay.build("x", [*objs, w])))
    assert states(plan.steps[0])["new"][0] == "admitted"
    off = [*objs, config(None, {"PartialAdmission": False}), w]
    plan = simulate.run(overlay.build("x", off), scenario.default(overlay.build("x", off)))
    assert states(plan.steps[0])["new"][0] in ("pending", "never")


def test_feature_gates_not_modelled_are_named_in_the_header():
    objs = [*podsready_queues(), config(None, {"PartialAdmission": True, "ElasticJobsViaWorkloadSlices": True})]
    cluster = overlay.build("x", objs)
    plan = simulate.run(cluster, scenario.default(cluster))
    note = next(n for n in plan.notes if "featureGates" in n)
    assert "ElasticJobsViaWorkloadSlices" in note and "PartialAdmission" not in note
