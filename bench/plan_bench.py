"""`make bench` row for `generator plan`: how its time grows with the number of submitted
Jobs, as whole processes, beside a floor that loads the same inputs.

The input (written here, deterministic): two ClusterQueues of one cohort with two flavors
each, quota for about half of the Jobs, three priorities, and N one-pod Jobs alternating
between the queues; every tenth Job instead a GPU Job of a third ClusterQueue on a
topology-aware flavor of 64 nodes (Kueue's TAS placement, plan/tas.py). `plan` replays
them (everything the overlay declares); the floor
(bench/plan_floor.py) reads and parses the same stream and builds the planner's model of it,
without scheduling. The exponent is the slope of log(seconds) over log(Jobs)."""
from __future__ import annotations

import math
from pathlib import Path

from generator.kernel import yamlio

SIZES = (1000, 10000)
API = "kueue.x-k8s.io/v1beta2"


def objects(n: int) -> list[dict]:
    half = max(1, n // 4)             # per queue and flavor: 4 x n/4 = about n CPUs for n Jobs of 1-2 CPUs
    out: list[dict] = []
    for f in ("on-demand", "spot"):
        out.append({"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": f}, "spec": {}})
    for q in ("team-a", "team-b"):
        out.append({"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": q}, "spec": {
            "namespaceSelector": {}, "cohortName": "all",
            "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
            "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                {"name": f, "resources": [{"name": "cpu", "nominalQuota": str(half)}]} for f in ("on-demand", "spot")]}]}})
        out.append({"apiVersion": API, "kind": "LocalQueue", "metadata": {"name": q, "namespace": q},
                    "spec": {"clusterQueue": q}})
    for p, v in (("low", 10), ("mid", 100), ("high", 1000)):
        out.append({"apiVersion": API, "kind": "WorkloadPriorityClass", "metadata": {"name": p}, "value": v})
    out += tas_objects()
    for i in range(n):
        if i % TAS_EVERY == TAS_EVERY - 1:
            out.append(tas_job(i))
            continue
        q = ("team-a", "team-b")[i % 2]
        out.append({"apiVersion": "batch/v1", "kind": "Job", "metadata": {
            "name": f"job-{i}", "namespace": q, "labels": {"kueue.x-k8s.io/queue-name": q,
                                                            "kueue.x-k8s.io/priority-class": ("low", "mid", "high")[i % 3]}},
            "spec": {"parallelism": 1, "template": {"spec": {"restartPolicy": "Never", "containers": [{
                "name": "c", "image": "busybox:1.36", "resources": {"requests": {"cpu": str(1 + i % 2)}}}]}}}})
    return out


# Topology-aware scheduling: a third ClusterQueue on a TAS flavor of a fixed GPU pool (a real
# cluster's nodes do not grow with its queue), GKE's Topology levels, every TAS_EVERY-th Job a
# GPU job that requires one host or prefers one block.
TAS_EVERY = 10
TAS_NODES, TAS_PER_BLOCK = 64, 8
TAS_LEVELS = ("cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-subblock",
              "cloud.google.com/gce-topology-host", "kubernetes.io/hostname")


def tas_objects() -> list[dict]:
    return [
        {"apiVersion": API, "kind": "Topology", "metadata": {"name": "gke-default"},
         "spec": {"levels": [{"nodeLabel": lv} for lv in TAS_LEVELS]}},
        {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "b200", "annotations": {
            "platform-generator/nodes": str(TAS_NODES), "platform-generator/nodes-per-block": str(TAS_PER_BLOCK)}},
         "spec": {"nodeLabels": {"node.kubernetes.io/instance-type": "a4-highgpu-8g"}, "topologyName": "gke-default",
                  "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}},
        {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": "team-tas"}, "spec": {
            "namespaceSelector": {}, "preemption": {"withinClusterQueue": "LowerPriority"},
            "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
                {"name": "b200", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": str(TAS_NODES * 8)}]}]}]}},
        {"apiVersion": API, "kind": "LocalQueue", "metadata": {"name": "team-tas", "namespace": "team-tas"},
         "spec": {"clusterQueue": "team-tas"}},
    ]


def tas_job(i: int) -> dict:
    pods, gpus = (1 + i % 4, (1, 2, 4, 8)[i % 4])
    level = ("kueue.x-k8s.io/podset-required-topology", "cloud.google.com/gce-topology-host") if gpus < 8 else \
        ("kueue.x-k8s.io/podset-preferred-topology", "cloud.google.com/gce-topology-block")
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": f"job-{i}", "namespace": "team-tas", "labels": {
            "kueue.x-k8s.io/queue-name": "team-tas", "kueue.x-k8s.io/priority-class": ("low", "mid", "high")[i % 3]}},
        "spec": {"parallelism": pods, "completions": pods, "template": {
            "metadata": {"annotations": {level[0]: level[1]}},
            "spec": {"restartPolicy": "Never", "containers": [{
                "name": "c", "image": "busybox:1.36", "resources": {"requests": {"nvidia.com/gpu": str(gpus)}}}]}}}}


def write(n: int, dest: Path) -> Path:
    path = dest / f"plan-{n}.yaml"
    path.write_text(yamlio.dump_all(objects(n)))
    return path


def exponent(sizes: tuple[int, int], seconds: tuple[float, float]) -> float:
    return math.log(seconds[1] / seconds[0]) / math.log(sizes[1] / sizes[0])


def measure(run_timed, series_cls, work: Path, reps: int, sizes: tuple[int, ...] = SIZES) -> list[str]:
    """Markdown lines for the report."""
    import sys

    from generator.kernel import paths
    py = sys.executable
    rows, plan_s, floor_s, plan_cpu = [], [], [], []
    for n in sizes:
        f = write(n, work)
        ours, floor = series_cls(), series_cls()
        for _ in range(reps):
            ours.add(run_timed([py, "-m", "generator", "plan", str(f), "--format", "json"], no_node=True)[0])
            floor.add(run_timed([py, str(paths.ROOT / "bench" / "plan_floor.py"), str(f)], no_node=True)[0])
        plan_s.append(ours.median)
        floor_s.append(floor.median)
        plan_cpu.append(ours.user + ours.sys)
        rows.append(f"| {n:,} | {ours.min:.2f} / {ours.median:.2f} | {ours.user + ours.sys:.2f} "
                    f"| {floor.min:.2f} / {floor.median:.2f} | {ours.median / floor.median:.1f}× |")
    lines = ["", "## plan as the number of Jobs grows", "",
             "`generator plan` on N submitted Jobs (two ClusterQueues of a cohort, two flavors, quota for "
             "about half of them, three priorities; every tenth a GPU Job of a topology-aware ClusterQueue on 64 "
             "nodes; bench/plan_bench.py) beside a floor that loads the same stream "
             "and builds the planner's model without scheduling (bench/plan_floor.py). Whole processes; wall "
             "seconds min / median, CPU seconds (user + sys) median:", "",
             "| Jobs | plan wall | plan CPU | floor wall | ÷ floor |", "|---:|---:|---:|---:|---:|", *rows]
    if len(sizes) >= 2:
        lo, hi = (sizes[0], sizes[-1])
        e = exponent((lo, hi), (plan_s[0], plan_s[-1]))
        ec = exponent((lo, hi), (plan_cpu[0], plan_cpu[-1]))
        ef = exponent((lo, hi), (floor_s[0], floor_s[-1]))
        lines += ["", f"Fitted exponent from {lo:,} to {hi:,} Jobs: plan {e:.2f} (wall), {ec:.2f} (CPU); "
                  f"floor {ef:.2f}. Target ≤ 1.1: {'met' if max(e, ec) <= 1.1 else 'NOT met'}."]
        from . import targets
        targets.record(f"plan growth exponent, {lo:,} to {hi:,} Jobs", ec, 1.1, unit="",
                       note=f"CPU of the process; wall {e:.2f}")
    return lines
