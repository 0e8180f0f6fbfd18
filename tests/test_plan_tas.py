"""The planner's topology-aware placement on the nodes of each TAS flavor (plan/nodes.py,
plan/tas.py): nodes from a Node dump or from the platform's declared pools, shared by every
ClusterQueue using the flavor; pods of different workloads sharing nodes, a workload's pod sets
placed against each other, preemption only when it can make room, reclaim in a cohort when
only node room needs it. Expected outcomes are worked out by hand from Kueue v0.17.4's
algorithm (tas_flavor_snapshot.go: BestFit at the requested level, then the fewest domains
down the tree) on each case's small layout, said in each test."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from generator.plan import overlay, scenario, simulate
from tests.kueue_cases import clusterqueue, localqueue

FIX = Path(__file__).parent / "fixtures" / "tas"
ROOT = Path(__file__).parent.parent
GPU = "nvidia.com/gpu"
API = "kueue.x-k8s.io/v1beta2"
BLOCK = "cloud.google.com/gce-topology-block"
HOST_LEVEL = "cloud.google.com/gce-topology-host"
HOSTNAME = "kubernetes.io/hostname"
TOPOLOGY = {"apiVersion": API, "kind": "Topology", "metadata": {"name": "gke-default"},
            "spec": {"levels": [{"nodeLabel": lv} for lv in (BLOCK, "cloud.google.com/gce-topology-subblock",
                                                             HOST_LEVEL, HOSTNAME)]}}


def tas_flavor(nodes: int | None, per_block: int | None = None) -> dict:
    """A flavor of a4-highgpu-8g nodes (8 GPUs each), as the generator writes it."""
    notes = {}
    if nodes is not None:
        notes["platform-generator/nodes"] = str(nodes)
    if per_block is not None:
        notes["platform-generator/nodes-per-block"] = str(per_block)
    return {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "b200", "annotations": notes},
            "spec": {"nodeLabels": {"node.kubernetes.io/instance-type": "a4-highgpu-8g"},
                     "topologyName": "gke-default",
                     "tolerations": [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}]}}


def job(name, queue, pods, gpus, level=None, how="required", priority_class=None, created=None):
    meta = {"name": name, "namespace": "ns", "labels": {"kueue.x-k8s.io/queue-name": queue}}
    if priority_class:
        meta["labels"]["kueue.x-k8s.io/priority-class"] = priority_class
    if created:
        meta["creationTimestamp"] = created
    notes = {f"kueue.x-k8s.io/podset-{how}-topology": level} if level else {}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": {"parallelism": pods, "completions": pods, "template": {
                "metadata": {"annotations": notes},
                "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {GPU: str(gpus)}}}]}}}}


def wpc(name, value):
    return {"apiVersion": API, "kind": "WorkloadPriorityClass", "metadata": {"name": name}, "value": value}


def run(objs, together=True):
    cluster = overlay.build("tas-test", objs)
    return simulate.run(cluster, scenario.default(cluster))


def final(plan) -> dict[str, str]:
    return {r.workload.split("/", 1)[1]: r.state for r in plan.steps[-1].rows}


def rows(plan):
    return {r.workload.split("/", 1)[1]: r for r in plan.steps[-1].rows}


def two_queues(quota_a=8, quota_b=8):
    return [clusterqueue("a", [{"b200": {GPU: quota_a}}], cohort="all"),
            clusterqueue("b", [{"b200": {GPU: quota_b}}], cohort="all"),
            localqueue("a", "ns", "a"), localqueue("b", "ns", "b")]


# ---------------------------------------------------------------- nodes shared by every ClusterQueue
@pytest.mark.parametrize("nodes", [2, None], ids=["annotated", "from-every-queue's-quota"])
def test_two_cluster_queues_sharing_a_flavor_plan_against_its_real_node_count(nodes):
    # 2 nodes of 8 GPUs in one block; each ClusterQueue's quota is 8 GPUs (one node). A job of
    # 2 pods x 8 GPUs that must share one block borrows the other queue's 8: the block has 2 nodes.
    plan = run([TOPOLOGY, tas_flavor(nodes, 2), *two_queues(), job("big", "a", 2, 8, BLOCK)])
    assert final(plan) == {"big": "admitted"}
    assert rows(plan)["big"].topology["main"]["domains"] == [
        {"values": ["b200-b0-n0"], "count": 1}, {"values": ["b200-b0-n1"], "count": 1}]


def test_blocks_of_one_node_keep_the_job_out():
    # The negative half: blocks of 1 node each; 2 pods that must share a block never fit.
    plan = run([TOPOLOGY, tas_flavor(2, 1), *two_queues(), job("big", "a", 2, 8, BLOCK)])
    assert final(plan) == {"big": "never"}
    assert 'topology "gke-default" allows to fit only 1 out of 2 pod(s)' in rows(plan)["big"].detail


def test_the_generator_writes_the_pools_node_count_on_a_topology_aware_flavor():
    from generator.model import flavors, load
    spec = load(ROOT / "examples" / "gpu-training-tas.yaml")
    (f,) = [f for f in flavors.flavors(spec, spec.profiles["b200-tas"]) if f.topology]
    # examples/gpu-training-tas.yaml: 12 nodes, 8 to a block, the default 100 GiB boot disk.
    assert dict(f.annotations) == {"platform-generator/nodes": "12", "platform-generator/boot-disk-gi": "100",
                                   "platform-generator/nodes-per-block": "8"}


# ---------------------------------------------------------------- pods of several workloads on a node
def test_a_one_gpu_pod_shares_a_node_with_a_seven_gpu_pod():
    # One node of 8 GPUs: 7 GPUs taken by the first job leave 1 for the second (same host).
    plan = run([TOPOLOGY, tas_flavor(1), *two_queues(8, 0),
                job("seven", "a", 1, 7, HOSTNAME), job("one", "a", 1, 1, HOSTNAME)])
    assert final(plan) == {"seven": "admitted", "one": "admitted"}
    assert rows(plan)["one"].topology["main"]["domains"] == [{"values": ["b200-b0-n0"], "count": 1}]


def test_a_workloads_own_pod_sets_count_against_each_other():
    # One free node of 8 GPUs: pod sets of 8 and 7 GPUs fit the quota (16) but not the node
    # together: the second pod set finds 0 GPUs left (addAssumedUsage).
    js = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
          "metadata": {"name": "pair", "namespace": "ns", "labels": {"kueue.x-k8s.io/queue-name": "a"}},
          "spec": {"replicatedJobs": [
              {"name": n, "replicas": 1, "template": {"spec": {"parallelism": 1, "completions": 1, "template": {
                  "metadata": {"annotations": {"kueue.x-k8s.io/podset-preferred-topology": HOSTNAME}},
                  "spec": {"containers": [{"name": "c", "image": "x",
                                           "resources": {"requests": {GPU: str(g)}}}]}}}}}
              for n, g in (("big", 8), ("small", 7))]}}
    plan = run([TOPOLOGY, tas_flavor(1), *two_queues(16, 0), js])
    assert final(plan) == {"pair": "never"}
    assert "pod set small" in rows(plan)["pair"].detail
    # With 2 nodes both pod sets fit, one on each.
    plan = run([TOPOLOGY, tas_flavor(2), *two_queues(16, 0), js])
    assert final(plan) == {"pair": "admitted"}


# ---------------------------------------------------------------- preemption only where it makes room
def test_no_preemption_for_a_required_block_no_block_could_ever_hold():
    # 2 blocks of 2 nodes (32 GPUs), filled by eight 4-GPU low-priority jobs. A high-priority job
    # of 3 pods x 8 GPUs needs 24 GPUs (quota: preempt) in one block, but a block holds 2 nodes:
    # it could not fit even on empty nodes, so Kueue preempts nothing (NoFit).
    cq = clusterqueue("a", [{"b200": {GPU: 32}}], within="LowerPriority")
    low = [job(f"low-{i}", "a", 1, 4, created=f"2026-01-01T00:00:0{i}Z") for i in range(8)]
    high = job("high", "a", 3, 8, BLOCK, priority_class="high", created="2026-01-01T00:01:00Z")
    plan = run([TOPOLOGY, tas_flavor(4, 2), cq, localqueue("a", "ns", "a"), wpc("high", 100), *low, high])
    assert final(plan)["high"] == "never"
    assert not [e for s in plan.steps for e in s.events if "preempted by" in e]
    # The negative half: blocks of 4 nodes could hold it; then it preempts (six 4-GPU jobs make 3 nodes).
    plan = run([TOPOLOGY, tas_flavor(4, 4), cq, localqueue("a", "ns", "a"), wpc("high", 100), *low, high])
    assert final(plan)["high"] == "admitted"


def test_reclaim_in_a_cohort_when_only_node_room_needs_it():
    # 2 nodes of 8 GPUs; a (nominal 8) and b (nominal 8). b runs two 6-GPU pods, one per node
    # (12: borrowing 4). a's 1 pod x 4 GPUs fits the quota (16 - 12 = 4 free) but no node has 4
    # free GPUs (2 and 2): Kueue preempts one of b's borrowing workloads (reclaim) for node room.
    cqs = [clusterqueue("a", [{"b200": {GPU: 8}}], cohort="all", reclaim="Any"),
           clusterqueue("b", [{"b200": {GPU: 8}}], cohort="all"),
           localqueue("a", "ns", "a"), localqueue("b", "ns", "b")]
    objs = [TOPOLOGY, tas_flavor(2, 2), *cqs, job("b1", "b", 1, 6, HOSTNAME, created="2026-01-01T00:00:00Z"),
            job("b2", "b", 1, 6, HOSTNAME, created="2026-01-01T00:00:01Z")]
    cluster = overlay.build("tas-test", [*objs, job("a1", "a", 1, 4, HOSTNAME)])
    steps = {"initial": [{"kind": "Job", "name": "b1", "namespace": "ns"}, {"kind": "Job", "name": "b2", "namespace": "ns"}],
             "steps": [{"title": "a1", "submit": {"kind": "Job", "name": "a1", "namespace": "ns"}}]}
    plan = simulate.run(cluster, scenario.from_dict(steps, cluster, "case.yaml"))
    states = final(plan)
    assert states["a1"] == "admitted"
    assert sorted(states.values()).count("admitted") == 2       # one of b's two was reclaimed
    assert [e for e in plan.steps[-1].events if "preempted by ns/a1 (reclamation within the cohort" in e]
    # Without reclaimWithinCohort, nothing is preempted and a1 waits for node room.
    cqs[0] = clusterqueue("a", [{"b200": {GPU: 8}}], cohort="all")
    cluster = overlay.build("tas-test", [*[o for o in objs if o.get("kind") != "ClusterQueue" or
                                           o["metadata"]["name"] != "a"], cqs[0], job("a1", "a", 1, 4, HOSTNAME)])
    plan = simulate.run(cluster, scenario.from_dict(steps, cluster, "case.yaml"))
    assert final(plan)["a1"] == "pending"


# ---------------------------------------------------------------- a Node dump
def test_plan_on_a_fragmented_node_dump_shows_each_pod_sets_domains():
    out = subprocess.run([sys.executable, "-m", "generator", "plan", str(FIX / "h200-overlay.yaml"),
                          "--nodes", str(FIX / "h200-nodes.yaml"), "--format", "json"],
                         capture_output=True, text=True, cwd=ROOT, check=False)
    assert out.returncode == 0, out.stderr
    import json
    got = {w["workload"].split("/", 1)[1]: w for w in json.loads(out.stdout)["steps"][-1]["workloads"]}
    # Worked out by hand (h200-nodes.yaml): whole free nodes n1, n2 (block b1, sub-block s1), n5, n7,
    # n8 (block b2); n3 has 4 GPUs; n4 NotReady and n6 cordoned are left out. pretrain's 3 nodes fit
    # only block b2; finetune's 2 the sub-block b1-s1; eval's 4 GPUs go to n3, the fullest host that
    # holds them; sweep's 2 nodes in one block find none free, though the quota has 20 GPUs left.
    host = "gke-train-h200-pool-"

    def doms(w):
        return [(d["values"][0].removeprefix(host), d["count"]) for d in got[w]["topology"]["main"]["domains"]]
    assert {w: got[w]["state"] for w in got} == {"pretrain": "admitted", "finetune": "admitted",
                                                 "eval": "admitted", "sweep": "pending"}
    assert doms("pretrain") == [("n5", 1), ("n7", 1), ("n8", 1)]
    assert doms("finetune") == [("n1", 1), ("n2", 1)]
    assert doms("eval") == [("n3", 1)]
    assert 'topology "gke-default" doesn\'t allow to fit any of 2 pod(s). Total nodes: 6' in got["sweep"]["detail"]


def test_a_bad_node_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "nodes.yaml"
    bad.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: lots}\n"
                   "  conditions: [{type: Ready, status: 'True'}]\n")
    out = subprocess.run([sys.executable, "-m", "generator", "plan", str(FIX / "h200-overlay.yaml"),
                          "--nodes", str(bad)], capture_output=True, text=True, cwd=ROOT, check=False)
    assert out.returncode == 2
    assert "status.allocatable.cpu" in out.stderr and "Traceback" not in out.stderr


def test_kueue_v0_12_3_has_topology_aware_scheduling_off():
    # pkg/features/kube_features.go at v0.12.3: TopologyAwareScheduling alpha, off by default (beta and
    # on from v0.14): the same Node dump admits sweep by quota alone, and the header says why.
    out = subprocess.run([sys.executable, "-m", "generator", "plan", str(FIX / "h200-overlay.yaml"),
                          "--nodes", str(FIX / "h200-nodes.yaml"), "--kueue-version", "v0.12.3"],
                         capture_output=True, text=True, cwd=ROOT, check=False)
    assert out.returncode == 0, out.stderr
    assert "Kueue v0.12.3 has TopologyAwareScheduling off" in out.stdout
    assert "research/sweep     Job   0         admitted" in out.stdout


def test_declared_nodes_are_bounded():
    from generator.plan import nodes
    plan = run([TOPOLOGY, tas_flavor(1_000_000, 8), *two_queues(), job("one", "a", 1, 8, HOSTNAME)])
    assert final(plan) == {"one": "admitted"}
    assert any(f"the first {nodes.MAX_DECLARED_NODES} only" in n for n in plan.notes)


def test_pods_of_a_workload_kueue_does_not_place_take_room_on_the_nodes():
    # One 8-GPU node (a Node dump) behind two flavors: the TAS flavor of queue a and a plain flavor
    # (same pool, no Topology) of queue b. b's 4-GPU pod lands there (the kube-scheduler's
    # filters pass), so a's pod that needs the whole host waits; without b's job it is admitted.
    dump = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {
        "pool": "gpu", BLOCK: "b1", "cloud.google.com/gce-topology-subblock": "s1", HOST_LEVEL: "h1", HOSTNAME: "n1"}},
        "spec": {"taints": [{"key": GPU, "value": "present", "effect": "NoSchedule"}]},
        "status": {"allocatable": {GPU: "8", "pods": "110"}, "conditions": [{"type": "Ready", "status": "True"}]}}
    tol = [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}]
    flavors = [{"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "tas"},
                "spec": {"nodeLabels": {"pool": "gpu"}, "topologyName": "gke-default", "tolerations": tol}},
               {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "plain"},
                "spec": {"nodeLabels": {"pool": "gpu"}, "tolerations": tol}}]
    cqs = [clusterqueue("a", [{"tas": {GPU: 8}}]), clusterqueue("b", [{"plain": {GPU: 8}}]),
           localqueue("a", "ns", "a"), localqueue("b", "ns", "b")]
    plain = job("plain", "b", 1, 4, created="2026-01-01T00:00:00Z")
    whole = job("whole", "a", 1, 8, HOSTNAME, created="2026-01-01T00:00:01Z")
    cluster = overlay.build("tas-test", [TOPOLOGY, dump, *flavors, *cqs, plain, whole])
    steps = {"initial": [{"kind": "Job", "name": "plain", "namespace": "ns"}],
             "steps": [{"title": "whole", "submit": {"kind": "Job", "name": "whole", "namespace": "ns"}}]}
    plan = simulate.run(cluster, scenario.from_dict(steps, cluster, "case.yaml"))
    assert final(plan) == {"plain": "admitted", "whole": "pending"}
    plan = run([TOPOLOGY, dump, *flavors, *cqs, whole])
    assert final(plan) == {"whole": "admitted"}


def test_feature_gate_off_admits_by_quota_alone():
    # featureGates TopologyAwareScheduling: false (the configuration): no placement, so 2 pods that
    # must share a 1-node block are admitted by quota (the negative half: test_blocks_of_one_node...).
    cfg = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", "metadata": {"name": "c"},
           "featureGates": {"TopologyAwareScheduling": False}}
    plan = run([TOPOLOGY, tas_flavor(2, 1), *two_queues(), job("big", "a", 2, 8, BLOCK), cfg])
    assert final(plan) == {"big": "admitted"}
    assert any("featureGates turn TopologyAwareScheduling off" in n for n in plan.notes)
