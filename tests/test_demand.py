"""One demand module, one answer: the validator, the planner and `generator diff`
read what a workload asks Kueue for from generator/kernel/demand.py, and agree.

Expected numbers are worked out by hand from Kueue's rules (Kueue v0.17.4):
pods of a Job = parallelism, or completions when fewer (job_controller.go
podsCount); a pod's request = max(sum of containers and sidecars, each init
container with the sidecars started before it) + pod overhead (Kubernetes
component-helpers PodRequests, called by workload.totalRequestsFromPodSets)."""
from __future__ import annotations

from decimal import Decimal

import pytest

from generator import diff
from generator.kernel import demand, yamlio
from generator.plan import overlay
from tests.test_validate_corpus import run

GPU = "nvidia.com/gpu"
API = "kueue.x-k8s.io/v1beta2"

# The Job of issue 12: parallelism 4, completions 2, an init container asking 3
# GPUs, a main container asking 1 GPU, pod overhead 250m CPU.
JOB = {
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "train", "namespace": "team", "labels": {demand.QUEUE_LABEL: "lq"}},
    "spec": {"parallelism": 4, "completions": 2, "template": {"spec": {
        "restartPolicy": "Never",
        "overhead": {"cpu": "250m"},
        "initContainers": [{"name": "warmup", "image": "busybox:1.36",
                            "resources": {"requests": {GPU: "3", "cpu": "500m"}, "limits": {GPU: "3"}}}],
        "containers": [{"name": "main", "image": "busybox:1.36",
                        "resources": {"requests": {GPU: "1", "cpu": "1"}, "limits": {GPU: "1"}}}],
    }}},
}
# By hand: 2 pods (completions 2 < parallelism 4); GPUs per pod max(1, 3) = 3;
# CPU per pod max(1, 0.5) + 0.25 overhead = 1.25. One Workload: 6 GPUs, 2.5 CPU.
PODS, GPU_PER_POD, CPU_PER_POD = 2, Decimal(3), Decimal("1.25")
TOTAL = {GPU: Decimal(6), "cpu": Decimal("2.5")}


def _queues(gpus: int) -> list[dict]:
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
        {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "default"}},
        {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": {
            "namespaceSelector": {},
            "resourceGroups": [{"coveredResources": ["cpu", GPU], "flavors": [{"name": "default", "resources": [
                {"name": "cpu", "nominalQuota": 10}, {"name": GPU, "nominalQuota": gpus}]}]}]}},
        {"apiVersion": API, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": "team"},
         "spec": {"clusterQueue": "cq"}},
    ]


def test_demand_module_counts_as_kueue_does():
    d = demand.of(JOB)
    (ps,) = d.podsets
    assert (ps.name, ps.count, d.copies) == ("main", PODS, 1)
    assert ps.requests == {GPU: GPU_PER_POD, "cpu": CPU_PER_POD}
    assert d.per_workload() == TOTAL
    assert d.queue == "lq"


def test_diff_reports_the_same_gpus():
    assert diff.accelerator_summary(JOB, {}, GPU) == ("3 × 2 pods = 6", 6, 6)


def test_plan_charges_the_same_demand():
    cluster = overlay.build("test", _queues(6) + [JOB])
    wl = overlay.workloads_of(cluster, cluster.owners[0], None)
    assert wl.pods == PODS
    assert wl.demand == TOTAL


@pytest.mark.parametrize("gpus, fires", [(5, True), (6, False)])
def test_validate_fit_rule_uses_the_same_demand(tmp_path, gpus, fires):
    """KQ009 fires just below the 6 GPUs of one Workload and stays quiet at 6."""
    f = tmp_path / "objects.yaml"
    f.write_text(yamlio.dump_all(_queues(gpus) + [JOB]))
    report = run(f, [])
    hits = [x for x in report.findings if x.rule == "KQ009"]
    assert bool(hits) == fires, [x.report_line() for x in report.findings]
    if fires:
        assert "6 nvidia.com/gpu" in hits[0].message


def test_minimum_for_partial_admission():
    job = {**JOB, "metadata": {**JOB["metadata"], "annotations": {demand.MIN_PARALLELISM_ANNOTATION: "1"}}}
    assert demand.of(job).podsets[0].min_count == 1
    assert demand.of(JOB).podsets[0].min_count is None


def test_bad_counts_and_quantities_are_problems_not_crashes():
    bad = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"},
           "spec": {"parallelism": "two", "template": {"spec": {"containers": [
               {"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}}}}
    d = demand.of(bad)
    assert [p.path for p in d.problems] == ["spec.parallelism", "spec.template.spec.containers[0].resources.requests.cpu"]
    assert d.podsets[0].count == 1 and d.podsets[0].requests == {}


def test_jobset_and_lws_pod_sets():
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"},
              "spec": {"replicatedJobs": [{"name": "workers", "replicas": 3, "template": {"spec": {
                  "parallelism": 2, "completions": 2,
                  "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}}}]}}
    (ps,) = demand.of(jobset).podsets
    assert (ps.name, ps.count, ps.slice_pods) == ("workers", 6, 2)       # 3 jobs x 2 pods
    lws = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": {"name": "srv"},
           "spec": {"replicas": 2, "leaderWorkerTemplate": {
               "size": 4,
               "leaderTemplate": {"spec": {"containers": [{"name": "l", "resources": {"requests": {"cpu": "2"}}}]}},
               "workerTemplate": {"spec": {"containers": [{"name": "w", "resources": {"requests": {"cpu": "1"}}}]}}}}}
    d = demand.of(lws)
    assert [(p.name, p.count) for p in d.podsets] == [("leader", 1), ("worker", 3)]
    assert d.copies == 2 and d.per_workload() == {"cpu": Decimal(5)} and d.total() == {"cpu": Decimal(10)}
