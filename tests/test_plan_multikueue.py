"""`generator plan --group`: MultiKueue between a manager and its workers.

Each case restates a test of Kueue's own suites in our fixture format (objects
built below, a scenario as a dict) and asserts Kueue's expected outcome as
literals; the upstream file, test name and release are named on each case. The
integration suite (test/integration/multikueue/scheduler) and the e2e suite
(test/e2e/multikueue) run real schedulers on a manager and two workers, so they
pin down which worker wins; the fragmentation example is KEP 9988's. Where the
planner's model differs from what the upstream test can see, the case says so.
The example (examples/multikueue.yaml) is worked out by hand at the end."""
from __future__ import annotations

import pytest

from generator import cli
from generator.kernel import paths, yamlio
from generator.kernel.errors import SpecError
from generator.plan import dispatch, group, scenario
from tests import helpers
from tests.kueue_cases import API, NS, clusterqueue, flavor, localqueue, restates
from tests.test_plan_model import job, wpc

CPU, MEM, EPH = "cpu", "memory", "ephemeral-storage"
H100, V100S = "example.com/gpu-h100", "example.com/gpu-v100s"   # the e2e suite's extended resources
# The upstream suites the restated MultiKueue cases come from (counted by tests.kueue_cases.counts).
MK_SCHED = "kubernetes-sigs/kueue@v0.17.4 test/integration/multikueue/scheduler/scheduler_test.go"
MK_E2E = "kubernetes-sigs/kueue@v0.17.4 test/e2e/multikueue/e2e_test.go"
MK_JOBS = "kubernetes-sigs/kueue@v0.17.4 test/integration/multikueue/jobs_test.go"


# ---------------------------------------------------------------- fixtures
def mk_manager(quota: dict, workers=("worker1", "worker2"), cq="q1", check="ac1", config="multikueueconfig",
               within="LowerPriority", prios=True) -> list[dict]:
    """A manager as the upstream suites set one up: MultiKueueClusters, a MultiKueueConfig listing them,
    the MultiKueue AdmissionCheck, a ClusterQueue using it with one flavor `fl`, LocalQueue `lq`, and the
    WorkloadPriorityClasses high-workload (300) and low-workload (100)."""
    objs = [{"apiVersion": API, "kind": "MultiKueueCluster", "metadata": {"name": w},
             "spec": {"clusterSource": {"kubeConfig": {"location": f"{w}-secret", "locationType": "Secret"}}}}
            for w in workers]
    objs += [{"apiVersion": API, "kind": "MultiKueueConfig", "metadata": {"name": config},
              "spec": {"clusters": list(workers)}},
             {"apiVersion": API, "kind": "AdmissionCheck", "metadata": {"name": check},
              "spec": {"controllerName": "kueue.x-k8s.io/multikueue",
                       "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": config}}},
             clusterqueue(cq, [{"fl": quota}], within=within,
                          admissionChecksStrategy={"admissionChecks": [{"name": check}]}),
             flavor("fl"), localqueue(cq, NS, "lq")]
    if prios:
        objs += [wpc("high-workload", 300), wpc("low-workload", 100)]
    return objs


def mk_worker(quota: dict, cq="cq", lq=True, **cq_extra) -> list[dict]:
    """A worker: its own ClusterQueue (LowerPriority within), flavor `fl`, and the manager's LocalQueue lq."""
    return [clusterqueue(cq, [{"fl": quota}], within="LowerPriority", **cq_extra), flavor("fl")] \
        + ([localqueue(cq, NS, "lq")] if lq else [])


def settings(**multikueue) -> dict:
    return {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", "metadata": {"name": "config"},
            "multiKueue": multikueue}


def plan_group(manager: list[dict], workers: dict[str, list[dict]], steps=None, initial=None,
               version="v0.17.4", config: dict | None = None):
    g = group.assemble(("manager", "manager.yaml", manager), [(n, f"{n}.yaml", o) for n, o in workers.items()],
                       version, ("config.yaml", [config]) if config else None)
    clusters = {w.name: w.cluster for w in g.workers}
    if steps is None and initial is None:
        scen = scenario.default(g.manager.cluster, clusters)
    else:
        raw: dict = {"steps": steps}
        if initial is not None:
            raw["initial"] = initial
        scen = scenario.from_dict(raw, g.manager.cluster, "case.yaml", clusters, "manager")
    return dispatch.run(g, scen)


def rows(step) -> dict:
    return {r.workload: r for r in step.rows}


def where(step) -> dict[str, tuple[str, str | None]]:
    """workload -> (state, cluster it runs on)."""
    return {r.workload: (r.state, r.cluster) for r in step.rows}


def copies(step, workload: str) -> dict[str, str]:
    return dict(rows(step)[workload].copies)


def used(step, cluster: str, resource: str) -> str:
    (u,) = [u for u in step.usage if u.cluster == cluster and u.resource == resource]
    return str(u.used)


def submit(name: str) -> dict:
    return {"title": f"submit {name}", "submit": {"kind": "Job", "name": name}}


# ---------------------------------------------------------------- test/integration/multikueue/scheduler
# Setup of scheduler_test.go:139-203 (Kueue v0.17.4): manager q1 cpu 2, memory 2G, ephemeral-storage 100G;
# worker1 cq1 cpu 2, memory 1G, ephemeral-storage 15G; worker2 cq cpu 1, memory 2G, ephemeral-storage 5G;
# all withinClusterQueue LowerPriority; LocalQueue lq everywhere; WorkloadPriorityClasses on the manager only.
SCHED_MANAGER = {CPU: "2", MEM: "2G", EPH: "100G"}
SCHED_W1 = {CPU: "2", MEM: "1G", EPH: "15G"}
SCHED_W2 = {CPU: "1", MEM: "2G", EPH: "5G"}


def _scheduler_case(high_requests: dict):
    objs = mk_manager(SCHED_MANAGER) + [job("low-job", 1, {CPU: "2", MEM: "1G"}, prio="low-workload"),
                                        job("high-job", 1, high_requests, prio="high-workload")]
    return plan_group(objs, {"worker1": mk_worker(SCHED_W1, cq="cq1"), "worker2": mk_worker(SCHED_W2)},
                      initial=[{"kind": "Job", "name": "low-job"}], steps=[submit("high-job")])


@restates(f"{MK_SCHED} 'should preempt a running low-priority workload when "
          "a high-priority workload is admitted (same worker)'")
def test_T6_high_priority_preempts_on_the_manager_and_runs_on_the_same_worker():
    # Kueue v0.17.4 test/integration/multikueue/scheduler/scheduler_test.go:227 "should preempt a running
    # low-priority workload when a high-priority workload is admitted (same worker)".
    plan = _scheduler_case({CPU: "2", MEM: "1G"})
    s0, s1 = plan.steps
    # "the low-priority workload is created in worker1 and not in worker2" (worker2 has cpu 1 < 2).
    assert where(s0) == {"ns/low-job": ("admitted", "worker1")}
    assert copies(s0, "ns/low-job") == {"worker1": "admitted", "worker2": "none"}
    # The manager preempts low (cpu 2 + 2 > 2); high runs on worker1, not on worker2; low is
    # deleted from both workers.
    assert where(s1) == {"ns/high-job": ("admitted", "worker1"), "ns/low-job": ("preempted", None)}
    assert "[manager] ns/low-job preempted by ns/high-job (prioritization in the ClusterQueue; priority 100 < 300)" \
        in s1.events
    assert copies(s1, "ns/high-job") == {"worker1": "admitted", "worker2": "none"}
    assert copies(s1, "ns/low-job") == {}
    assert not any(r.workload.startswith("worker") for r in s1.rows)       # nothing else on the workers


@restates(f"{MK_SCHED} 'should preempt a running low-priority workload when "
          "a high-priority workload is admitted (other workers)'")
def test_T7_high_priority_preempts_on_the_manager_and_runs_on_the_other_worker():
    # Kueue v0.17.4 scheduler_test.go:360 "... (other workers)": high asks cpu 1, memory 2G; worker1's
    # memory quota is 1G, worker2 has cpu 1 and memory 2G.
    plan = _scheduler_case({CPU: "1", MEM: "2G"})
    s1 = plan.steps[1]
    assert where(s1) == {"ns/high-job": ("admitted", "worker2"), "ns/low-job": ("preempted", None)}
    assert copies(s1, "ns/high-job") == {"worker1": "none", "worker2": "admitted"}
    assert used(s1, "worker1", CPU) == "0" and used(s1, "worker2", MEM) == "2000000000"


# ---------------------------------------------------------------- test/e2e/multikueue
# Setup of e2e_test.go:124-232 (Kueue v0.17.4): manager cpu 2, memory 4G, ephemeral-storage 100G,
# gpu-h100 2, gpu-v100s 2; worker1 cpu 2, memory 1G, ephemeral-storage 15G, h100 2, v100s 1;
# worker2 cpu 1200m, memory 4G, ephemeral-storage 5G, h100 1, v100s 2; all LowerPriority within.
E2E_MANAGER = {CPU: "2", MEM: "4G", EPH: "100G", H100: "2", V100S: "2"}
E2E_W1 = {CPU: "2", MEM: "1G", EPH: "15G", H100: "2", V100S: "1"}
E2E_W2 = {CPU: "1200m", MEM: "4G", EPH: "5G", H100: "1", V100S: "2"}
SMALL = {CPU: "100m", MEM: "0.1G"}


def _e2e(manager_quota, low: dict, high: dict, version="v0.17.4"):
    objs = mk_manager(manager_quota) + [job("low-job", 1, low, prio="low-workload"),
                                        job("high-job", 1, high, prio="high-workload")]
    return plan_group(objs, {"worker1": mk_worker(E2E_W1), "worker2": mk_worker(E2E_W2)},
                      initial=[{"kind": "Job", "name": "low-job"}], steps=[submit("high-job")], version=version)


@restates(f"{MK_E2E} 'Should preempt a running low-priority workload when "
          "a high-priority workload is admitted (same worker)'")
def test_T14_e2e_same_worker():
    # Kueue v0.17.4 test/e2e/multikueue/e2e_test.go:1298 "Should preempt a running low-priority workload
    # when a high-priority workload is admitted (same worker)": both Jobs ask gpu-h100 2, which only
    # worker1 has; the manager (h100 2) preempts low for high.
    plan = _e2e(E2E_MANAGER, {H100: "2"}, {H100: "2"})
    s0, s1 = plan.steps
    assert where(s0) == {"ns/low-job": ("admitted", "worker1")}
    assert where(s1) == {"ns/high-job": ("admitted", "worker1"), "ns/low-job": ("preempted", None)}
    assert copies(s1, "ns/low-job") == {}


@restates(f"{MK_E2E} 'Should preempt a running low-priority workload when "
          "a high-priority workload is admitted (other workers)'")
def test_T15_e2e_other_workers():
    # Kueue v0.17.4 e2e_test.go:1462 "... (other workers)": low h100 2 + v100s 1 -> worker1 (worker2 has
    # h100 1); high h100 1 + v100s 2 -> the manager preempts low (h100 3 > 2), worker1 has v100s 1 < 2:
    # high runs on worker2, low is deleted from the workers.
    plan = _e2e(E2E_MANAGER, {**SMALL, H100: "2", V100S: "1"}, {**SMALL, H100: "1", V100S: "2"})
    s0, s1 = plan.steps
    assert where(s0) == {"ns/low-job": ("admitted", "worker1")}
    assert where(s1) == {"ns/high-job": ("admitted", "worker2"), "ns/low-job": ("preempted", None)}
    assert copies(s1, "ns/high-job") == {"worker1": "none", "worker2": "admitted"}
    assert copies(s1, "ns/low-job") == {}


@restates(f"{MK_E2E} 'Should preempt a running low-priority workload on a worker "
          "when a high-priority workload is admitted to it by manager'")
def test_T16_e2e_preemption_on_the_worker_sends_the_victim_back_to_the_manager():
    # Kueue v0.17.4 e2e_test.go:1547 "Should preempt a running low-priority workload on a worker when a
    # high-priority workload is admitted to it by manager": manager v100s raised to 4. Both Jobs ask
    # h100 1 + v100s 2. Low runs on worker2 (worker1 has v100s 1); high fits the manager without
    # preemption (h100 2 <= 2, v100s 4 <= 4), cannot fit worker1, preempts low on worker2. Low is
    # "evicted and backed off": Admitted=False; then (e2e) QuotaReserved on the manager again with
    # copies on both workers and no quota on either.
    plan = _e2e({**E2E_MANAGER, V100S: "4"}, {**SMALL, H100: "1", V100S: "2"}, {**SMALL, H100: "1", V100S: "2"})
    s0, s1 = plan.steps
    assert where(s0) == {"ns/low-job": ("admitted", "worker2")}
    assert where(s1) == {"ns/high-job": ("admitted", "worker2"), "ns/low-job": ("reserved", None)}
    assert "[worker2] ns/low-job preempted by ns/high-job (prioritization in the ClusterQueue; priority 100 < 300)" \
        in s1.events
    assert copies(s1, "ns/low-job") == {"worker1": "never", "worker2": "pending"}
    assert any("ns/low-job evicted on worker2: the manager releases its quota and queues it again (Workload "
               "evicted on worker cluster 'worker2', resetting for re-admission)" in e for e in s1.events)
    # The manager's quota above the workers' total (v100s 4 > 1 + 2) is what lets low hold it.
    assert used(s1, "manager", V100S) == "4"


@restates(f"{MK_E2E} 'Should re-do admission process when "
          "workload gets evicted in the worker'")
def test_T17_e2e_eviction_on_the_worker_redoes_admission_elsewhere():
    # Kueue v0.17.4 e2e_test.go:1377 "Should re-do admission process when workload gets evicted in the
    # worker": a Job asking h100 2 runs on worker1; worker1's h100 quota goes to 1 and worker2's to 2,
    # then worker1 evicts it: the manager's clusterName becomes worker2, where it is admitted, and
    # nothing is left on worker1.
    objs = mk_manager(E2E_MANAGER) + [job("job", 1, {**SMALL, H100: "2"}, prio="low-workload")]
    quota = {"flavor": "fl", "resource": H100, "clusterQueue": "cq"}
    plan = plan_group(objs, {"worker1": mk_worker(E2E_W1), "worker2": mk_worker(E2E_W2)}, steps=[
        {"title": "worker1 h100 to 1", "cluster": "worker1", "quota": {**quota, "nominalQuota": 1}},
        {"title": "worker2 h100 to 2", "cluster": "worker2", "quota": {**quota, "nominalQuota": 2}},
        {"title": "evict on worker1", "cluster": "worker1", "evict": {"kind": "Job", "name": "job"}}])
    s0, _s1, s2, s3 = plan.steps
    assert where(s0) == {"ns/job": ("admitted", "worker1")}
    # A quota cut evicts nothing (Kueue never does): still on worker1.
    assert where(s2) == {"ns/job": ("admitted", "worker1")}
    assert where(s3) == {"ns/job": ("admitted", "worker2")}
    assert copies(s3, "ns/job") == {"worker1": "none", "worker2": "admitted"}


def test_T17_on_v0_12_3_the_worker_admits_it_again_itself():
    # Kueue v0.12.3 has no MultiKueueRedoAdmissionOnEvictionInWorker (pkg/features/kube_features.go):
    # the copy evicted on worker1 queues again there (the research note's inferred reading of
    # K12 reconcileGroup). Here worker1 still has room, so it runs on worker1 again.
    objs = mk_manager(E2E_MANAGER) + [job("job", 1, {**SMALL, H100: "2"}, prio="low-workload")]
    plan = plan_group(objs, {"worker1": mk_worker(E2E_W1), "worker2": mk_worker(E2E_W2)}, version="v0.12.3",
                      steps=[{"title": "evict", "cluster": "worker1", "evict": {"kind": "Job", "name": "job"}}])
    assert where(plan.steps[1]) == {"ns/job": ("admitted", "worker1")}
    assert not any("releases its quota" in e for e in plan.steps[1].events)


# ---------------------------------------------------------------- KEP 9988
def _fragmentation(manager_cpu: int):
    # Kueue KEP 9988 (keps/9988-multikueue-manager-quota-automation/README.md at v0.19.2, "Divergence of
    # quota reservation"): 2 workers of 10 CPU, wl1..wl4 of 7, 7, 6, 3 CPU submitted in that order.
    objs = mk_manager({CPU: str(manager_cpu)}, prios=False) + [
        job(f"wl{i}", 1, {CPU: str(c)}) for i, c in enumerate((7, 7, 6, 3), start=1)]
    return plan_group(objs, {"worker1": mk_worker({CPU: "10"}), "worker2": mk_worker({CPU: "10"})}).steps[0]


def test_kep9988_manager_quota_of_the_workers_total_blocks_wl4():
    # "if manager quota is 10+10, wl3 will block quota on the manager and get stuck on both workers,
    # preventing wl4 from reserving quota on the manager."
    s = _fragmentation(20)
    assert where(s)["ns/wl3"] == ("reserved", None)
    assert copies(s, "ns/wl3") == {"worker1": "pending", "worker2": "pending"}
    assert where(s)["ns/wl4"] == ("pending", None)
    assert used(s, "manager", CPU) == "20"
    assert {where(s)["ns/wl1"][0], where(s)["ns/wl2"][0]} == {"admitted"}


def test_kep9988_manager_quota_of_23_lets_wl4_run():
    # "if manager quota is 23 or more, wl4 will reserve quota on the manager, and get promptly scheduled
    # on one of the workers".
    s = _fragmentation(23)
    state, cluster = where(s)["ns/wl4"]
    assert state == "admitted" and cluster in ("worker1", "worker2")
    assert where(s)["ns/wl3"] == ("reserved", None)
    assert used(s, "manager", CPU) == "23"
    # Ours, worked out: wl1 and wl4 are admitted by both workers in the first round (7 + 3 = 10 on
    # each), a tie the plan gives to worker1 (MultiKueueConfig order); worker2 then takes wl2.
    assert where(s)["ns/wl1"] == ("admitted", "worker1") and where(s)["ns/wl2"] == ("admitted", "worker2")
    assert "tie" in rows(s)["ns/wl4"].detail


# ---------------------------------------------------------------- dispatch mechanics
@restates(f"{MK_JOBS} 'Should run a job "
          "on worker if admitted'")
def test_T1_the_job_finishing_on_the_worker_finishes_it_on_the_manager():
    # Kueue v0.17.4 test/integration/multikueue/jobs_test.go:185 "Should run a job on worker if admitted":
    # copies on both workers; after worker1 admits, worker2's copy is deleted; when the worker1 Job
    # completes, the manager's Workload is Finished and the remote objects are deleted.
    objs = mk_manager({CPU: "4"}) + [job("job", 1, {CPU: "2"})]
    plan = plan_group(objs, {"worker1": mk_worker({CPU: "2"}), "worker2": mk_worker({CPU: "1"})},
                      steps=[{"title": "done", "cluster": "worker1", "finish": {"kind": "Job", "name": "job"}}])
    s0, s1 = plan.steps
    assert any(e == "[multikueue] ns/job copied to worker1, worker2" for e in s0.events)
    assert where(s0) == {"ns/job": ("admitted", "worker1")}
    assert '[manager] ns/job: AdmissionCheck ac1 Ready: The workload got reservation on "worker1"' in s0.events
    assert where(s1) == {"ns/job": ("finished", None)}
    assert copies(s1, "ns/job") == {}
    assert used(s1, "manager", CPU) == "0" and used(s1, "worker1", CPU) == "0"


@restates(f"{MK_JOBS} 'Should requeue the workload with a delay when "
          "the connection to the admitting worker is lost'")
def test_T3_worker_lost_sends_its_workload_back_then_its_stale_copy_is_removed():
    # Kueue v0.17.4 test/integration/multikueue/jobs_test.go:1483 "Should requeue the workload with a delay
    # when the connection to the admitting worker is lost": worker2 admits; the connection breaks; the
    # manager's check goes back to Pending and its Workload loses QuotaReserved; after reconnection
    # worker2's Workload is removed "since the local one no longer has a reservation". That suite has
    # no scheduler on the manager (it sets quota reservations by hand), so nothing reserves quota
    # again: restated with the manager's ClusterQueue on Hold once the job runs.
    objs = mk_manager({CPU: "4"}) + [job("job", 1, {CPU: "2"})]
    plan = plan_group(objs, {"worker1": mk_worker({CPU: "2"}, stopPolicy="Hold"), "worker2": mk_worker({CPU: "2"})},
                      steps=[{"title": "no more reservations", "stopPolicy": {"clusterQueue": "q1", "policy": "Hold"}},
                             {"title": "worker2 lost", "workerLost": "worker2"},
                             {"title": "worker2 back", "workerReconnected": "worker2"}])
    s0, _, s2, s3 = plan.steps
    assert where(s0) == {"ns/job": ("admitted", "worker2")}
    assert any("(Reserving remote lost)" in e for e in s2.events)
    assert "[manager] ns/job evicted: AdmissionCheck ac1 Retry" in s2.events
    assert where(s2) == {"ns/job": ("pending", None)}          # no QuotaReserved on the manager
    assert used(s2, "manager", CPU) == "0"
    assert used(s3, "worker2", CPU) == "0"                     # worker2's Workload is removed
    assert any(e.startswith("[worker2] ns/job copy removed") for e in s3.events)


def test_worker_lost_then_the_manager_admits_again_and_another_worker_runs_it():
    # Ours (the planner's behaviour, not an upstream test): with a scheduler on the manager, the
    # Workload sent back is admitted again at once (requeue backoff is not modelled) and worker1 runs
    # it; worker2 keeps its stale copy until it is reachable again.
    objs = mk_manager({CPU: "4"}) + [job("job", 1, {CPU: "2"})]
    plan = plan_group(objs, {"worker1": mk_worker({CPU: "2"}, stopPolicy="Hold"), "worker2": mk_worker({CPU: "2"})},
                      steps=[{"title": "worker2 lost", "workerLost": "worker2"},
                             {"title": "worker1 opens", "cluster": "worker1",
                              "stopPolicy": {"clusterQueue": "cq", "policy": "None"}},
                             {"title": "worker2 back", "workerReconnected": "worker2"}])
    s0, s1, s2, s3 = plan.steps
    assert where(s0) == {"ns/job": ("admitted", "worker2")}
    assert any("(Reserving remote lost)" in e for e in s1.events)
    assert where(s1) == {"ns/job": ("reserved", None)}
    assert copies(s1, "ns/job") == {"worker1": "pending", "worker2": "unreachable"}
    assert where(s2) == {"ns/job": ("admitted", "worker1")}
    # worker2 still runs the old copy: the manager cannot reach it to delete it.
    assert used(s2, "worker2", CPU) == "2"
    assert where(s3) == {"ns/job": ("admitted", "worker1")}
    assert used(s3, "worker2", CPU) == "0"


def test_a_workload_no_worker_can_admit_holds_manager_quota_and_is_never():
    # Research note §5.5-5.6 (e2e T16's end state, KEP 9988 wl3): the manager reserves, no worker can
    # ever admit it; it is reported with each worker's reason. Worker2 also lacks the LocalQueue.
    objs = mk_manager({CPU: "8"}) + [job("big", 1, {CPU: "4"})]
    plan = plan_group(objs, {"worker1": mk_worker({CPU: "2"}), "worker2": mk_worker({CPU: "8"}, lq=False)})
    s = plan.steps[0]
    r = rows(s)["ns/big"]
    assert r.state == "never" and r.cluster is None
    assert r.detail.startswith("holds manager quota in fl but no worker can ever admit it: worker1: can never be "
                               "admitted")
    assert "worker2: can never be admitted: LocalQueue ns/lq does not exist" in r.detail
    assert used(s, "manager", CPU) == "4"
    assert "worker worker2 has no LocalQueue ns/lq (the manager's, for ClusterQueue q1): Workloads dispatched " \
           "there wait forever" in plan.notes


def test_waiting_for_admitted_not_quota_reserved_from_v0_17():
    # Kueue docs concepts/multikueue (v0.17.4): "Workloads are only deleted from non-selected worker clusters
    # after a Workload is fully admitted (quota reserved AND all admission checks satisfied)" (gate
    # MultiKueueWaitForWorkloadAdmitted); v0.12.3 takes the first QuotaReserved (K12 workload.go
    # FirstReserving). worker1's own check (a ProvisioningRequest, say) stays Pending.
    prov = {"apiVersion": API, "kind": "AdmissionCheck", "metadata": {"name": "prov"},
            "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request",
                     "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "p"}}}
    w1 = mk_worker({CPU: "2"}, admissionChecksStrategy={"admissionChecks": [{"name": "prov"}]}) + [prov]
    objs = mk_manager({CPU: "4"}) + [job("job", 1, {CPU: "2"})]
    steps = [{"title": "provisioning pending", "cluster": "worker1",
              "admissionCheck": {"name": "prov", "state": "Pending"}}, submit("job")]
    v17 = plan_group(objs, {"worker1": w1, "worker2": mk_worker({CPU: "2"})}, initial=[], steps=steps)
    assert where(v17.steps[2]) == {"ns/job": ("admitted", "worker2")}
    v12 = plan_group(objs, {"worker1": w1, "worker2": mk_worker({CPU: "2"})}, initial=[], steps=steps,
                     version="v0.12.3")
    # Both reserve in the same round: a tie, given to worker1 by the MultiKueueConfig's order.
    assert where(v12.steps[2]) == {"ns/job": ("admitted", "worker1")}


def test_incremental_dispatch_follows_the_config_order_from_v0_19():
    # Kueue docs concepts/multikueue at v0.19.2, "Example: prioritizing clusters for cost-optimized
    # spillover": clusters worker-onprem, worker-aws, worker-gcp with stepSize 1 nominate "Round 1:
    # worker-onprem / Round 2 (after 5 minutes without admission): worker-onprem, worker-aws / Round 3 ...".
    # worker-onprem is full (it runs `first`), so `second` spills over to worker-aws in round 2 and
    # worker-gcp never gets a copy.
    workers = ("worker-onprem", "worker-aws", "worker-gcp")
    objs = mk_manager({CPU: "8"}, workers=workers) + [job("first", 1, {CPU: "2"}), job("second", 1, {CPU: "2"})]
    config = settings(dispatcherName="kueue.x-k8s.io/multikueue-dispatcher-incremental",
                      incrementalDispatcherConfig={"stepSize": 1})
    plan = plan_group(objs, {w: mk_worker({CPU: "2"}) for w in workers}, version="v0.19.2", config=config,
                      initial=[{"kind": "Job", "name": "first"}], steps=[submit("second")])
    s1 = plan.steps[1]
    assert where(s1) == {"ns/first": ("admitted", "worker-onprem"), "ns/second": ("admitted", "worker-aws")}
    assert "[multikueue] ns/second: incremental dispatch round 2 nominates worker-aws (no nominated worker " \
           "admitted it within 5 minutes)" in s1.events
    assert not any("worker-gcp" in e for e in s1.events)


def test_incremental_dispatch_sorts_names_on_v0_17():
    # Kueue v0.17.4 pkg/controller/workloaddispatcher/incrementaldispatcher.go getNextNominatedWorkers:
    # "It nominates up to 3 remotes that have not yet been nominated, in sorted order" (slices.Sort);
    # v0.19.2 follows MultiKueueConfig.spec.clusters. Config [w-d, w-c, w-b, w-a]; only w-a has room.
    workers = ("w-d", "w-c", "w-b", "w-a")
    objs = mk_manager({CPU: "8"}, workers=workers) + [job("job", 1, {CPU: "2"})]
    config = settings(dispatcherName="kueue.x-k8s.io/multikueue-dispatcher-incremental")
    room = {w: mk_worker({CPU: "2" if w == "w-a" else "1"}) for w in workers}
    v17 = plan_group(objs, room, config=config).steps[0]
    assert "[multikueue] ns/job: incremental dispatch round 1 nominates w-a, w-b, w-c" in v17.events
    assert where(v17) == {"ns/job": ("admitted", "w-a")}
    v19 = plan_group(objs, room, config=config, version="v0.19.2").steps[0]
    assert "[multikueue] ns/job: incremental dispatch round 1 nominates w-d, w-c, w-b" in v19.events
    assert "[multikueue] ns/job: incremental dispatch round 2 nominates w-a (no nominated worker admitted it " \
           "within 5 minutes)" in v19.events
    assert where(v19) == {"ns/job": ("admitted", "w-a")}


def test_scenario_expectations_name_clusters_and_copies():
    objs = mk_manager(SCHED_MANAGER) + [job("low-job", 1, {CPU: "2", MEM: "1G"}, prio="low-workload")]
    expect = {"admitted": ["low-job"], "clusters": {"low-job": "worker1"},
              "copies": {"low-job": {"worker1": "admitted", "worker2": "none"}},
              "usage": [{"cluster": "worker1", "clusterQueue": "cq1", "resource": CPU, "used": 2}]}
    ok = plan_group(objs, {"worker1": mk_worker(SCHED_W1, cq="cq1"), "worker2": mk_worker(SCHED_W2)},
                    steps=[{"title": "noop", "cluster": "worker2", "evict": {"kind": "Job", "name": "low-job"},
                            "expect": expect}])
    assert ok.failures == []
    bad = {"clusters": {"low-job": "worker2"}, "copies": {"low-job": {"worker2": "admitted"}},
           "usage": [{"cluster": "worker2", "clusterQueue": "cq", "resource": CPU, "used": 2}]}
    nope = plan_group(objs, {"worker1": mk_worker(SCHED_W1, cq="cq1"), "worker2": mk_worker(SCHED_W2)},
                      steps=[{"title": "noop", "cluster": "worker2", "evict": {"kind": "Job", "name": "low-job"},
                              "expect": bad}])
    assert nope.failures == [
        "case.yaml: step 1 (noop): expect.usage: expected cq on worker2 used cpu over all flavors = 2, got 0",
        "case.yaml: step 1 (noop): expect.clusters: expected low-job to run on worker2, but it runs on worker1",
        "case.yaml: step 1 (noop): expect.copies: expected low-job's copy on worker2 admitted, but it is none",
    ]


# ---------------------------------------------------------------- the example: examples/multikueue.yaml
@pytest.fixture(scope="module")
def example(tmp_path_factory):
    root = tmp_path_factory.mktemp("multikueue")
    helpers.synth_into(root, yamlio.load_strict((paths.ROOT / "examples" / "multikueue.yaml").read_text()))
    return root


def test_the_example_dispatches_the_l4_job_to_the_l4_spot_worker(example, capsys):
    # Worked out by hand from the example: finetune-l4 is 2 pods of cpu 8, memory 32Gi, nvidia.com/gpu 2,
    # ephemeral-storage 10Gi selecting cloud.google.com/gke-accelerator: nvidia-l4. The manager's
    # ClusterQueue `dispatch` skips flavor h100 (nodeLabels nvidia-h100-80gb) and reserves 16 cpu, 64Gi,
    # 4 GPUs, 20Gi in l4-spot (96, 384Gi, 8, 400Gi). The h100 worker's only flavor is h100: its copy can
    # never be admitted there; the l4-spot worker's `gpus` admits it in l4-spot (4 of 8 GPUs).
    o = example / "overlays"
    rc = cli.main(["plan", "--group", str(o / "manager"), str(o / "h100"), str(o / "l4-spot"), "--format", "json"])
    doc = yamlio.load_strict(capsys.readouterr().out)
    assert rc == 0
    assert doc["clusters"] == ["manager", "h100", "l4-spot"]
    (wl,) = doc["steps"][0]["workloads"]
    assert (wl["workload"], wl["state"], wl["runsOn"], wl["flavors"]) == (
        "ml/finetune-l4", "admitted", "l4-spot", {"cpu": "l4-spot", "memory": "l4-spot", "nvidia.com/gpu": "l4-spot",
                                                  "ephemeral-storage": "l4-spot"})
    usage = {(u["cluster"], u["flavor"], u["resource"]): u["used"] for u in doc["steps"][0]["usage"]}
    assert usage[("manager", "l4-spot", "nvidia.com/gpu")] == "4"
    assert usage[("manager", "h100", "nvidia.com/gpu")] == "0"
    assert usage[("l4-spot", "l4-spot", "nvidia.com/gpu")] == "4"
    assert usage[("l4-spot", "l4-spot", "cpu")] == "16"
    assert usage[("h100", "h100", "nvidia.com/gpu")] == "0"
    assert any("the other copies are removed (h100: can never be admitted" in e for e in doc["steps"][0]["events"])
    # The manager's configuration is read from controllers/manager/kueue beside overlays/manager.
    assert any("dispatch every worker at once" in n and "kueue-manager-config.yaml" in n for n in doc["notes"])


def test_the_example_with_the_l4_worker_lost_has_nowhere_to_run(example, tmp_path, capsys):
    # Same example; the l4-spot worker becomes unreachable: the Job goes back to the manager's queue, is
    # reserved again (l4-spot flavor) and copied to h100 only, where it can never run: never.
    o = example / "overlays"
    scen = tmp_path / "lost.yaml"
    scen.write_text(yamlio.dump_all([{"steps": [{"title": "l4-spot unreachable", "workerLost": "l4-spot",
                                                 "expect": {"never": ["finetune-l4"]}}]}]))
    rc = cli.main(["plan", "--group", str(o / "manager"), str(o / "h100"), str(o / "l4-spot"), "--scenario",
                   str(scen), "--strict"])
    out = capsys.readouterr().out
    assert rc == 1          # --strict: a workload can never be admitted
    assert "holds manager quota in l4-spot but no reachable worker can ever admit it: h100: can never be " \
           "admitted: pod set main may use no flavor of ClusterQueue gpus: flavor h100 doesn't match node affinity; " \
           "l4-spot: unreachable" in out


# ---------------------------------------------------------------- bad input
def _cli(capsys, *argv):
    rc = cli.main(["plan", *map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _files(tmp_path, **clusters):
    out = {}
    for name, objs in clusters.items():
        f = tmp_path / f"{name}.yaml"
        f.write_text(yamlio.dump_all(objs))
        out[name] = f
    return out


@pytest.mark.parametrize("case, expected", [
    ("no workers", ("MultiKueueConfig/multikueueconfig.spec.clusters[1]: worker 'worker2' has no overlay: add "
                   "worker2=PATH (or overlays/worker2) to the command")),
    ("unknown worker", ("--group: no MultiKueueConfig of the manager lists a cluster 'worker3' (they list: "
                       "worker1, worker2); write NAME=PATH with one of those")),
    ("not a manager", "no AdmissionCheck with controllerName kueue.x-k8s.io/multikueue: not a MultiKueue manager"),
    ("config missing", ("AdmissionCheck/ac1.spec.parameters.name: MultiKueueConfig 'multikueueconfig' is not in the "
                       "manager's overlay")),
    ("only the manager", "give the manager's overlay, then each worker's"),
    ("scenario cluster", "steps[0].cluster: no cluster 'worker9' (known: manager, worker1, worker2)"),
    ("external dispatcher", "multiKueue.dispatcherName: 'example.com/mine' is an external dispatcher"),
    ("clusters not a list", "MultiKueueConfig/multikueueconfig.spec.clusters: 'worker1' is not a list"),
    ("config not YAML", "config.yaml: <root>: not valid YAML"),
])
def test_bad_group_input_is_one_line_and_exit_2(tmp_path, capsys, case, expected):
    manager = mk_manager({CPU: "4"}) + [job("job", 1, {CPU: "1"})]
    if case == "not a manager":
        manager = mk_worker({CPU: "4"})
    if case == "config missing":
        manager = [o for o in manager if o["kind"] != "MultiKueueConfig"]
    if case == "clusters not a list":
        next(o for o in manager if o["kind"] == "MultiKueueConfig")["spec"]["clusters"] = "worker1"
    f = _files(tmp_path, manager=manager, worker1=mk_worker({CPU: "2"}), worker2=mk_worker({CPU: "2"}),
               worker3=mk_worker({CPU: "2"}))
    args = ["--group", f["manager"], f["worker1"], f["worker2"]]
    if case == "no workers":
        args = ["--group", f["manager"], f["worker1"]]
    elif case == "unknown worker":
        args.append(f["worker3"])
    elif case == "only the manager":
        args = ["--group", f["manager"]]
    elif case == "scenario cluster":
        scen = tmp_path / "s.yaml"
        scen.write_text(yamlio.dump_all([{"steps": [{"title": "x", "cluster": "worker9",
                                                     "evict": {"kind": "Job", "name": "job"}}]}]))
        args += ["--scenario", scen]
    elif case == "external dispatcher":
        cfg = tmp_path / "config.yaml"
        cfg.write_text(yamlio.dump_all([settings(dispatcherName="example.com/mine")]))
        args += ["--manager-config", cfg]
    elif case == "config not YAML":
        cfg = tmp_path / "config.yaml"
        cfg.write_text("multiKueue: [\n")
        args += ["--manager-config", cfg]
    rc, out, err = _cli(capsys, *args)
    assert (rc, out) == (2, "")
    assert len(err.strip().splitlines()) == 1 and expected in err, err
    assert "Traceback" not in err


def test_group_steps_in_a_single_cluster_plan_are_refused(tmp_path, capsys):
    f = _files(tmp_path, one=mk_worker({CPU: "2"}) + [job("job", 1, {CPU: "1"})])
    scen = tmp_path / "s.yaml"
    scen.write_text(yamlio.dump_all([{"steps": [{"title": "x", "workerLost": "w"}]}]))
    rc, _out, err = _cli(capsys, f["one"], "--scenario", scen)
    assert rc == 2 and helpers.without_positions(err).strip() == \
        f"{scen}: steps[0].workerLost: only a MultiKueue group plan (plan --group) has workers"


def test_a_manager_planned_alone_says_to_plan_the_group(tmp_path, capsys):
    f = _files(tmp_path, manager=mk_manager({CPU: "4"}) + [job("job", 1, {CPU: "1"})])
    rc, out, _ = _cli(capsys, f["manager"])
    assert rc == 0
    assert "note: ClusterQueue q1 uses a MultiKueue check (ac1): its jobs run on worker clusters" in out


def test_the_plot_has_a_panel_per_cluster(tmp_path):
    pytest.importorskip("matplotlib")
    from generator.plan import plot
    # T16 again: gpu-h100 reserved on the manager and admitted on each worker, per step.
    plan = _e2e({**E2E_MANAGER, V100S: "4"}, {**SMALL, H100: "1", V100S: "2"}, {**SMALL, H100: "1", V100S: "2"})
    assert plot.resource_of(plan, "manager") == H100
    assert plot.series(plan, H100, "manager") == (["ns/low-job", "ns/high-job"],
                                                  {"ns/low-job": [1.0, 1.0], "ns/high-job": [0.0, 1.0]}, [2.0, 2.0])
    assert plot.series(plan, H100, "worker1") == ([], {"ns/low-job": [0.0, 0.0], "ns/high-job": [0.0, 0.0]},
                                                  [2.0, 2.0])
    assert plot.series(plan, H100, "worker2") == (["ns/low-job", "ns/high-job"],
                                                  {"ns/low-job": [1.0, 0.0], "ns/high-job": [0.0, 1.0]}, [1.0, 1.0])
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    plot.write(plan, str(a))
    plot.write(plan, str(b))
    assert a.read_bytes() == b.read_bytes()


# ---------------------------------------------------------------- invariants under random steps
def _steps():
    from hypothesis import strategies as st
    jobs = st.sampled_from(["a", "b", "c"])
    workers = st.sampled_from(["worker1", "worker2"])
    ref = jobs.map(lambda n: {"kind": "Job", "name": n})
    return st.one_of(
        st.builds(lambda r, w: {"evict": r, "cluster": w}, ref, workers),
        st.builds(lambda r, w, k: {k: r, "cluster": w}, ref, workers, st.sampled_from(["delete", "finish"])),
        st.builds(lambda r, k: {k: r}, ref, st.sampled_from(["delete", "finish"])),
        st.builds(lambda r: {"evict": r}, ref),
        st.builds(lambda w: {"workerLost": w}, workers),
        st.builds(lambda w: {"workerReconnected": w}, workers),
        st.builds(lambda w, n: {"cluster": w, "quota": {"clusterQueue": "cq", "flavor": "fl", "resource": CPU,
                                                        "nominalQuota": n}}, workers, st.integers(0, 6)),
        st.builds(lambda n: {"quota": {"clusterQueue": "q1", "flavor": "fl", "resource": CPU, "nominalQuota": n}},
                  st.integers(0, 8)),
        st.builds(lambda w, p: {"cluster": w, "stopPolicy": {"clusterQueue": "cq", "policy": p}}, workers,
                  st.sampled_from(["Hold", "HoldAndDrain", "None"])))


def _check_invariants(plan):
    from decimal import Decimal
    lost: set[str] = set()
    for s in plan.steps:
        lost |= {e.split()[2] for e in s.events if e.startswith("[multikueue] worker ") and "is unreachable:" in e}
        lost -= {e.split()[2] for e in s.events if e.startswith("[multikueue] worker ") and "reachable again" in e}
        for r in s.rows:
            if r.home != "manager" or not r.copies:
                continue
            states = dict(r.copies)
            if r.state == "admitted":
                # Runs on exactly one worker, whose copy is admitted; no other reachable worker has one.
                assert states[r.cluster] == "admitted", (s.title, r)
                assert all(v in ("none", "unreachable") for w, v in states.items() if w != r.cluster), (s.title, r)
            else:
                assert r.cluster is None and r.state in ("reserved", "never"), (s.title, r)

        def cpu(rows):
            return sum((Decimal(r.demand.get(CPU, "0")) for r in rows), Decimal(0))

        def used_cpu(cluster, s=s):
            return sum((u.used for u in s.usage if u.cluster == cluster and u.resource == CPU), Decimal(0))
        # A reachable worker's usage is exactly what runs there (an unreachable one may still run old copies);
        # the manager's is what holds its quota: running on a worker, waiting for one, or stuck.
        for w in ("worker1", "worker2"):
            if w not in lost:
                assert used_cpu(w) == cpu(r for r in s.rows if r.cluster == w and r.state == "admitted"), (s.title, w)
        assert used_cpu("manager") == cpu(r for r in s.rows if r.home == "manager" and r.copies
                                          and r.state in ("admitted", "reserved", "never")), s.title


def test_random_steps_keep_the_dispatch_invariants():
    from hypothesis import HealthCheck, given, settings, strategies as st

    @settings(max_examples=60, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(steps=st.lists(_steps(), min_size=1, max_size=6), prio=st.booleans())
    def run(steps, prio):
        objs = mk_manager({CPU: "6"}) + [job("a", 1, {CPU: "2"}, prio="low-workload"),
                                         job("b", 1, {CPU: "3"}, prio="high-workload" if prio else None),
                                         job("c", 1, {CPU: "1"})]
        try:
            plan = plan_group(objs, {"worker1": mk_worker({CPU: "3"}), "worker2": mk_worker({CPU: "4"})},
                              steps=[{"title": f"s{i}", **s} for i, s in enumerate(steps)])
        except SpecError as e:      # a step naming a job deleted or finished before: refused, one line each
            assert all("running at this step" in p.message for p in e.problems), e.render()
            return
        _check_invariants(plan)
    run()


def test_a_workers_own_jobs_take_its_quota_first():
    # KEP 9988 lists "stray workloads on workers" among the reasons manager and worker quotas diverge:
    # worker1 runs its own Job (cpu 2 of 2), so the manager's job, which both workers would fit when
    # empty, runs on worker2. Worker-local workloads are listed as worker:namespace/name.
    objs = mk_manager({CPU: "4"}) + [job("job", 1, {CPU: "2"})]
    w1 = mk_worker({CPU: "2"}) + [job("local", 1, {CPU: "2"})]
    plan = plan_group(objs, {"worker1": w1, "worker2": mk_worker({CPU: "2"})},
                      initial=[{"kind": "Job", "name": "local", "cluster": "worker1"}], steps=[submit("job")])
    s0, s1 = plan.steps
    assert where(s0) == {"worker1:ns/local": ("admitted", "worker1")}
    assert where(s1) == {"worker1:ns/local": ("admitted", "worker1"), "ns/job": ("admitted", "worker2")}
    assert rows(s1)["worker1:ns/local"].home == "worker1"
