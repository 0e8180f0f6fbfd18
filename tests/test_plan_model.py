"""generator.plan.overlay: objects -> queues and Workloads. Also the small
builders the other test_plan_* modules use to hand-build clusters."""
from decimal import Decimal

import pytest

from generator.kernel import demand
from generator.kernel.errors import SpecError
from generator.plan import overlay, scenario, simulate

GPU = "nvidia.com/gpu"
TPU = "google.com/tpu"
API = "kueue.x-k8s.io/v1beta2"


# ---------------------------------------------------------------- builders
def cq(name="cq", quota=None, preemption="LowerPriority", strategy=None, flavors=None, checks=(), **spec):
    """A ClusterQueue with one resource group; quota {resource: nominal} on flavor 'f'
    (or flavors=[(name, quota), ...])."""
    flavors = flavors or [("f", quota or {GPU: 6})]
    covered = list(dict.fromkeys(r for _, q in flavors for r in q))
    body = {"namespaceSelector": {}, "resourceGroups": [{
        "coveredResources": covered,
        "flavors": [{"name": f, "resources": [{"name": r, "nominalQuota": v} for r, v in q.items()]}
                    for f, q in flavors]}]}
    if preemption:
        body["preemption"] = {"withinClusterQueue": preemption}
    if strategy:
        body["queueingStrategy"] = strategy
    if checks:
        body["admissionChecksStrategy"] = {"admissionChecks": [{"name": c} for c in checks]}
    body.update(spec)
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": body}


def flavor(name="f", labels=None, topology=None):
    spec = {}
    if labels:
        spec["nodeLabels"] = labels
    if topology:
        spec["topologyName"] = topology
    return {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def lq(name="lq", ns="ns", to="cq"):
    return {"apiVersion": API, "kind": "LocalQueue", "metadata": {"name": name, "namespace": ns},
            "spec": {"clusterQueue": to}}


def wpc(name, value):
    return {"apiVersion": API, "kind": "WorkloadPriorityClass", "metadata": {"name": name}, "value": value}


def pc(name, value, default=False):
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": default}


def pod(requests, pc_name=None, annotations=None, limits=None, **spec):
    res = {"requests": {r: str(v) for r, v in requests.items()}}
    if limits:
        res["limits"] = {r: str(v) for r, v in limits.items()}
    body = {"containers": [{"name": "c", "image": "busybox:1.36", "resources": res}], **spec}
    if pc_name:
        body["priorityClassName"] = pc_name
    return {"metadata": {"annotations": annotations or {}}, "spec": body}


def _labels(queue, prio):
    labels = {}
    if queue:
        labels["kueue.x-k8s.io/queue-name"] = queue
    if prio:
        labels["kueue.x-k8s.io/priority-class"] = prio
    return labels


def deployment(name, replicas, requests, queue="lq", ns="ns", pc_name=None, pod_prio=None):
    tmpl = pod(requests, pc_name)
    if pod_prio:
        tmpl["metadata"]["labels"] = {"kueue.x-k8s.io/priority-class": pod_prio}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": _labels(queue, None)},
            "spec": {"replicas": replicas, "template": tmpl}}


def job(name, pods, requests, queue="lq", ns="ns", prio=None, pc_name=None, completions=None):
    spec = {"parallelism": pods, "template": pod(requests, pc_name)}
    if completions is not None:
        spec["completions"] = completions
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns, "labels": _labels(queue, prio)}, "spec": spec}


def jobset(name, replicas, pods, requests, shape=None, queue="lq", ns="ns", prio=None):
    ann = {"cloud.google.com/gke-tpu-slice-topology": shape} if shape else None
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "namespace": ns, "labels": _labels(queue, prio)},
            "spec": {"replicatedJobs": [{"name": "w", "replicas": replicas, "template": {"spec": {
                "parallelism": pods, "completions": pods, "template": pod(requests, annotations=ann)}}}]}}


def lws(name, replicas, size, requests, shape=None, queue="lq", ns="ns", prio=None, leader=None):
    ann = {"cloud.google.com/gke-tpu-slice-topology": shape} if shape else None
    lwt = {"size": size, "workerTemplate": pod(requests, annotations=ann)}
    if leader:
        lwt["leaderTemplate"] = pod(leader, annotations=ann)
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": {"name": name, "namespace": ns, "labels": _labels(queue, prio)},
            "spec": {"replicas": replicas, "leaderWorkerTemplate": lwt}}


def queue_objs(**cq_kw):
    return [cq(**cq_kw), flavor(), lq()]


def run(objs, steps=None, initial=None, cubes=None):
    """Build a cluster from objs and replay steps (scenario dicts)."""
    cluster = overlay.build("test-overlay", objs)
    if steps is None and initial is None:
        scen = scenario.default(cluster)
    else:
        raw = {"steps": steps or [{"title": "noop", "quota": _noop_quota(cluster)}]}
        if initial is not None:
            raw["initial"] = initial
        scen = scenario.from_dict(raw, cluster, "test-scenario.yaml")
    return simulate.run(cluster, scen, cubes)


def _noop_quota(cluster):
    q = min(cluster.cluster_queues.values(), key=lambda c: c.name)
    fq = q.groups[0].flavors[0]
    r = min(fq.nominal)
    return {"clusterQueue": q.name, "flavor": fq.flavor, "resource": r, "nominalQuota": str(fq.nominal[r])}


def states(step) -> dict[str, str]:
    return {r.workload: r.state for r in step.rows}


def detail(step, workload) -> str:
    return next(r.detail for r in step.rows if r.workload == workload)


def used(step, resource=GPU, cq_name="cq") -> Decimal:
    return sum((u.used for u in step.usage if u.resource == resource and u.cluster_queue == cq_name), Decimal(0))


# ---------------------------------------------------------------- model tests
def _workloads(objs):
    cluster = overlay.build("t", queue_objs() + objs)
    out = []
    for o in cluster.owners:
        if o.kind in overlay.SCALABLE_KINDS:
            out += [overlay.workloads_of(cluster, o, i + 1) for i in range(o.replicas)]
        else:
            out.append(overlay.workloads_of(cluster, o, None))
    return out


def test_one_workload_per_deployment_pod():
    wls = _workloads([deployment("web", 3, {"cpu": 1, GPU: 2})])
    assert [w.key for w in wls] == ["ns/web#1", "ns/web#2", "ns/web#3"]
    assert all(w.demand == {"cpu": Decimal(1), GPU: Decimal(2)} and w.pods == 1 for w in wls)


def test_job_is_one_workload_of_parallelism_pods():
    (w,) = _workloads([job("train", 2, {GPU: 2, "memory": "32Gi"})])
    assert w.pods == 2 and w.demand == {GPU: Decimal(4), "memory": Decimal(64 * 2**30)}
    # completions below parallelism: only that many pods ever run at once
    (w,) = _workloads([job("short", 4, {GPU: 1}, completions=3)])
    assert w.pods == 3 and w.demand[GPU] == 3


def test_jobset_is_one_workload_of_every_replicated_job():
    (w,) = _workloads([jobset("js", replicas=6, pods=2, requests={TPU: 4})])
    assert w.pods == 12 and w.demand == {TPU: Decimal(48)}


def test_lws_is_one_workload_per_group_with_its_leader():
    wls = _workloads([lws("srv", replicas=2, size=3, requests={"cpu": 2}, leader={"cpu": 5})])
    assert [w.key for w in wls] == ["ns/srv#1", "ns/srv#2"]
    # leader 5 + 2 workers x 2
    assert all(w.pods == 3 and w.demand == {"cpu": Decimal(9)} for w in wls)


def test_pod_requests_follow_kubernetes_rules():
    spec = {
        "containers": [
            {"name": "a", "resources": {"limits": {GPU: "1", "cpu": "2"}, "requests": {"cpu": "1"}}},
            {"name": "b", "resources": {"requests": {"cpu": "500m"}}},
        ],
        "initContainers": [
            {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "250m"}}},
            {"name": "init", "resources": {"requests": {"cpu": "4", "memory": "1Gi"}}},
        ],
        "overhead": {"cpu": "100m"},
    }
    got = demand.pod_requests(spec)
    # containers 1 + 0.5 + sidecar 0.25 = 1.75; init 4 + sidecar before it 0.25 = 4.25 wins; + overhead 0.1
    assert got["cpu"] == Decimal("4.35")
    assert got[GPU] == 1                       # a limit without a request is the request
    assert got["memory"] == Decimal(2**30)     # the init container's peak


def test_priority_sources_in_kueue_order():
    objs = queue_objs() + [wpc("w-high", 3000), pc("pc-low", 20), pc("pc-default", 10, default=True)]
    objs += [job("by-label", 1, {GPU: 1}, prio="w-high", pc_name="pc-low"),   # the label wins
             job("by-class", 1, {GPU: 1}, pc_name="pc-low"),
             job("by-default", 1, {GPU: 1})]
    cluster = overlay.build("t", objs)
    got = {o.name: overlay.workloads_of(cluster, o, None).priority for o in cluster.owners}
    assert (got["by-label"].value, got["by-label"].source) == (3000, "WorkloadPriorityClass w-high")
    assert (got["by-class"].value, got["by-class"].source) == (20, "PriorityClass pc-low")
    assert (got["by-default"].value, got["by-default"].source) == (10, "globalDefault PriorityClass pc-default")
    no_default = overlay.build("t", queue_objs() + [job("plain", 1, {GPU: 1})])
    assert overlay.workloads_of(no_default, no_default.owners[0], None).priority.value == 0


def test_missing_priority_classes_are_problems_not_fallbacks():
    cluster = overlay.build("t", queue_objs() + [job("a", 1, {GPU: 1}, prio="nope"),
                                               job("b", 1, {GPU: 1}, pc_name="gone")])
    a, b = (overlay.workloads_of(cluster, o, None) for o in cluster.owners)
    assert "WorkloadPriorityClass 'nope' does not exist" in a.problems[0]
    assert "PriorityClass 'gone' does not exist" in b.problems[0]


def test_deployment_priority_label_is_read_from_the_pod_template():
    d = deployment("web", 1, {GPU: 1}, pod_prio="w-high")
    d2 = deployment("web2", 1, {GPU: 1})
    d2["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "w-high"
    cluster = overlay.build("t", queue_objs() + [wpc("w-high", 3000), d, d2])
    w1, w2 = (overlay.workloads_of(cluster, o, 1) for o in cluster.owners)
    assert w1.priority.value == 3000
    assert w2.priority.value == 0 and "not copied to its pods" in w2.notes[0]


def test_bad_overlay_input_is_a_clear_error(tmp_path):
    bad = tmp_path / "overlay.yaml"
    bad.write_text("kind: [unclosed\n")
    with pytest.raises(SpecError) as e:
        overlay.load_objects(str(bad))
    assert str(bad) in e.value.render() and "not valid YAML" in e.value.render()
    with pytest.raises(SpecError) as e:
        overlay.build("x.yaml", [job("a", 1, {GPU: 1})])
    assert "x.yaml: <root>: no ClusterQueue in the overlay" in e.value.render()
