"""Kueue's topology-aware scheduling, restated from Kueue v0.17.4's own tests: cases of
pkg/scheduler/scheduler_tas_test.go (TestScheduleForTAS, TestScheduleForTASPreemption,
TestScheduleForTASCohorts), each run as one scheduling cycle as upstream runs them, with the
nodes, Topologies, flavors, queues and Workloads of the upstream case and its expected
topology assignments (the domains and pod counts Kueue's test writes), pending reasons and
preemption targets. The expected values are Kueue's, copied from the test, never computed
here."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from generator.plan import overlay, simulate
from tests.kueue_cases import API, NOW, clusterqueue, flavor, localqueue, workload

REL = "v0.17.4"
TAS_TEST = f"kubernetes-sigs/kueue@{REL} pkg/scheduler/scheduler_tas_test.go"
SCH = f"{TAS_TEST} TestScheduleForTAS"
PRE = f"{TAS_TEST} TestScheduleForTASPreemption"
COH = f"{TAS_TEST} TestScheduleForTASCohorts"
HOST = "kubernetes.io/hostname"
BLOCK = "cloud.com/topology-block"
RACK = "cloud.provider.com/rack"
NS = "default"


def node(name, labels, cpu, memory=None, pods="10", taints=None, ready=True) -> dict:
    """testingnode.MakeNode(name).Label(...).StatusAllocatable(...).Ready()."""
    alloc = {"cpu": cpu, "pods": pods, **({"memory": memory} if memory else {})}
    obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"tas-node": "true", **labels}},
           "spec": {**({"taints": taints} if taints else {})},
           "status": {"allocatable": alloc, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}
    return obj


def topology(name, *levels) -> dict:
    return {"apiVersion": API, "kind": "Topology", "metadata": {"name": name},
            "spec": {"levels": [{"nodeLabel": lv} for lv in levels]}}


def tas_flavor(name="tas-default", topo="tas-single-level", tolerations=None) -> dict:
    f = flavor(name, {"tas-node": "true"}, tolerations=tolerations)
    f["spec"]["topologyName"] = topo
    return f


def wl(name, cq, podsets, priority=0, admitted=None, queue=None, affinity=None):
    """podsets: [(name, count, requests, topologyRequest or None)]; admitted: per pod set
    (flavors, count, [(values, count)] or None) as the upstream Admission records them."""
    w = workload(name, cq, podsets=[p[:3] for p in podsets], priority=priority, ns=NS, queue=queue or f"lq-{cq}",
                 admitted=[a[0] for a in admitted] if admitted else None,
                 counts=[a[1] for a in admitted] if admitted else None, reserved=NOW,
                 pod_spec={"affinity": affinity} if affinity else None)
    for ps, p in zip(w["spec"]["podSets"], podsets, strict=True):
        if p[3]:
            ps["topologyRequest"] = p[3]
    if admitted:
        for psa, a in zip(w["status"]["admission"]["podSetAssignments"], admitted, strict=True):
            if a[2] is not None:
                psa["topologyAssignment"] = {"levels": [HOST],
                                             "domains": [{"values": [v], "count": n} for v, n in a[2]]}
    return w


def req(level):
    return {"required": level}


def pref(level):
    return {"preferred": level}


ONE_LEVEL = topology("tas-single-level", HOST)
TWO_LEVEL = topology("tas-two-level", RACK, HOST)
SINGLE = [node("x1", {HOST: "x1"}, "1", "1Gi")]
DEFAULT_CQ = clusterqueue("tas-main", [{"tas-default": {"cpu": 50, "memory": "50Gi"}}])
ZERO_CAPACITY = [node("x1", {HOST: "x1", RACK: "r1"}, "0"), node("x2", {HOST: "x2", RACK: "r1"}, "1"),
                 node("x3", {HOST: "x3", RACK: "r1"}, "1")]
TWO_BIG = [node("x1", {HOST: "x1", RACK: "r1"}, "8"), node("y1", {HOST: "y1", RACK: "r1"}, "8")]
ONE_RG = [{"tas-default": {"cpu": 50}}]


@dataclass
class TasCase:
    source: str
    objs: list[dict]
    workloads: list[dict]
    admitted: dict[str, dict[str, list[tuple[str, int]]]] = field(default_factory=dict)   # new: pod set -> domains
    flavors: dict[str, dict[str, str]] = field(default_factory=dict)     # new: pod set -> flavor of cpu
    pending: dict[str, str] = field(default_factory=dict)                # workload -> words of Kueue's reason
    preempted: set[str] = field(default_factory=set)


def _base(nodes, topo, flavors, cqs):
    return [*nodes, topo, *flavors, *cqs, *[localqueue(c["metadata"]["name"], NS) for c in cqs]]


TAS_CASES = [
    TasCase(f"{SCH} 'initial scheduling; TAS uses podspec memory for placement'",
            _base([node("x1", {HOST: "x1"}, "4", "2Gi"), node("x2", {HOST: "x2"}, "4", "2Gi")], ONE_LEVEL,
                  [tas_flavor()], [DEFAULT_CQ]),
            [wl("foo", "tas-main", [("one", 2, {"cpu": "1", "memory": "1536Mi"}, pref(HOST))])],
            admitted={"foo": {"one": [("x1", 1), ("x2", 1)]}}),
    TasCase(f"{SCH} 'workload which does not specify TAS annotation uses the only TAS flavor'",
            _base(SINGLE, ONE_LEVEL, [tas_flavor(), flavor("default")], [clusterqueue("tas-main", ONE_RG)]),
            [wl("foo", "tas-main", [("one", 1, {"cpu": "1"}, None)])],
            admitted={"foo": {"one": [("x1", 1)]}}),
    TasCase(f"{SCH} 'workload requiring TAS skips the non-TAS flavor'",
            _base(SINGLE, ONE_LEVEL, [tas_flavor(), flavor("default")],
                  [clusterqueue("tas-main", [{"default": {"cpu": 50}, "tas-default": {"cpu": 50}}])]),
            [wl("foo", "tas-main", [("one", 1, {"cpu": "1"}, req(HOST))])],
            admitted={"foo": {"one": [("x1", 1)]}}, flavors={"foo": {"one": "tas-default"}}),
    TasCase(f"{SCH} 'workload which does not need TAS skips the TAS flavor'",
            _base(SINGLE, ONE_LEVEL, [tas_flavor(), flavor("default")],
                  [clusterqueue("tas-main", [{"tas-default": {"cpu": 50}, "default": {"cpu": 50}}])]),
            [wl("foo", "tas-main", [("one", 1, {"cpu": "1"}, None)])],
            admitted={"foo": {}}, flavors={"foo": {"one": "default"}}),
    TasCase(f"{SCH} 'workload with mixed PodSets (requiring TAS and not)'",
            _base(SINGLE, ONE_LEVEL, [tas_flavor(), flavor("default")],
                  [clusterqueue("tas-main", [{"tas-default": {"cpu": 50}, "default": {"cpu": 50}}])]),
            [wl("foo", "tas-main", [("launcher", 1, {"cpu": "500m"}, None), ("worker", 1, {"cpu": "500m"}, req(HOST))])],
            admitted={"foo": {"worker": [("x1", 1)]}}, flavors={"foo": {"launcher": "default", "worker": "tas-default"}}),
    TasCase(f"{SCH} 'workload required TAS gets scheduled'",
            _base(SINGLE, ONE_LEVEL, [tas_flavor()], [DEFAULT_CQ]),
            [wl("foo", "tas-main", [("one", 1, {"cpu": "1"}, req(HOST))])],
            admitted={"foo": {"one": [("x1", 1)]}}),
    TasCase(f"{SCH} 'workload requests topology level which is not present in topology'",
            _base(SINGLE, ONE_LEVEL, [tas_flavor()], [DEFAULT_CQ]),
            [wl("foo", "tas-main", [("one", 1, {"cpu": "1"}, req("cloud.com/non-existing"))])],
            pending={"foo": 'Flavor "tas-default" does not contain the requested level'}),
    TasCase(f"{SCH} 'workload requests topology level which is only present in second flavor'",
            _base([node("x1", {"cloud.com/custom-level": "x1"}, "1")], ONE_LEVEL,
                  [tas_flavor(), tas_flavor("tas-custom-flavor", "tas-custom-topology"),
                   topology("tas-custom-topology", "cloud.com/custom-level")],
                  [clusterqueue("tas-main", [{"tas-default": {"cpu": 50}, "tas-custom-flavor": {"cpu": 50}}])]),
            [wl("foo", "tas-main", [("one", 1, {"cpu": "1"}, req("cloud.com/custom-level"))])],
            admitted={"foo": {"one": [("x1", 1)]}}, flavors={"foo": {"one": "tas-custom-flavor"}}),
    TasCase(f"{SCH} 'workload does not get scheduled as it does not fit within the node capacity'",
            _base(SINGLE, ONE_LEVEL, [tas_flavor()], [DEFAULT_CQ]),
            [wl("foo", "tas-main", [("one", 2, {"cpu": "1"}, req(HOST))])],
            pending={"foo": 'topology "tas-single-level" allows to fit only 1 out of 2 pod(s)'}),
    TasCase(f"{SCH} 'workload does not get scheduled as the node capacity is already used by another TAS workload'",
            _base(SINGLE, ONE_LEVEL, [tas_flavor()], [DEFAULT_CQ]),
            [wl("foo", "tas-main", [("one", 1, {"cpu": "1"}, req(HOST))]),
             wl("bar-admitted", "tas-main", [("one", 1, {"cpu": "1"}, req(HOST))],
                admitted=[({"cpu": "tas-default"}, 1, [("x1", 1)])])],
            pending={"foo": 'topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). '
                            'Total nodes: 1; excluded: resource "cpu": 1'}),
    TasCase(f"{SCH} 'workload does not get scheduled as the node capacity is already used by a non-TAS pod'",
            _base(SINGLE, ONE_LEVEL, [tas_flavor()], [DEFAULT_CQ]) + [
                {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test-pending", "namespace": "test-ns"},
                 "spec": {"nodeName": "x1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "600m"}}}]},
                 "status": {"phase": "Pending"}}],
            [wl("foo", "tas-main", [("one", 1, {"cpu": "1"}, req(HOST))])],
            pending={"foo": 'topology "tas-single-level" doesn\'t allow to fit any of 1 pod(s). '
                            'Total nodes: 1; excluded: resource "cpu": 1'}),
    TasCase(f"{SCH} 'workload gets admitted next to already admitted workload, multiple resources used'",
            _base(SINGLE, ONE_LEVEL, [tas_flavor()], [DEFAULT_CQ]),
            [wl("foo", "tas-main", [("one", 1, {"cpu": "500m", "memory": "500Mi"}, req(HOST))]),
             wl("bar-admitted", "tas-main", [("one", 1, {"cpu": "500m", "memory": "500Mi"}, req(HOST))],
                admitted=[({"cpu": "tas-default", "memory": "tas-default"}, 1, [("x1", 1)])])],
            admitted={"foo": {"one": [("x1", 1)]}}),
    TasCase(f"{SCH} 'workload with multiple PodSets requesting the same TAS flavor; multiple levels'",
            _base([node("x1", {HOST: "x1", RACK: "r1"}, "3"), node("y1", {HOST: "y1", RACK: "r1"}, "3")], TWO_LEVEL,
                  [tas_flavor(topo="tas-two-level")], [clusterqueue("tas-main", ONE_RG)]),
            [wl("foo", "tas-main", [("launcher", 1, {"cpu": "1"}, pref(HOST)), ("worker", 1, {"cpu": "7"}, pref(HOST))])],
            pending={"foo": 'pod set worker: topology "tas-two-level" doesn\'t allow to fit any of 1 pod(s). '
                            'Total nodes: 2; excluded: resource "cpu": 2'}),
    TasCase(f"{SCH} 'scheduling workload with multiple PodSets requesting TAS flavor and will succeed'",
            _base(TWO_BIG, TWO_LEVEL, [tas_flavor(topo="tas-two-level")],
                  [clusterqueue("tas-main", [{"tas-default": {"cpu": 16}}])]),
            [wl("foo", "tas-main", [("launcher", 1, {"cpu": "1"}, req(HOST)), ("worker", 15, {"cpu": "1"}, pref(HOST))])],
            admitted={"foo": {"launcher": [("x1", 1)], "worker": [("x1", 7), ("y1", 8)]}}),
    TasCase(f"{SCH} 'scheduling workload with multiple PodSets requesting higher level topology'",
            _base(TWO_BIG, TWO_LEVEL, [tas_flavor(topo="tas-two-level")],
                  [clusterqueue("tas-main", [{"tas-default": {"cpu": 16}}])]),
            [wl("foo", "tas-main", [("launcher", 1, {"cpu": "1"}, req(RACK)), ("worker", 15, {"cpu": "1"}, req(RACK))])],
            admitted={"foo": {"launcher": [("x1", 1)], "worker": [("x1", 7), ("y1", 8)]}}),
    TasCase(f"{SCH} 'scheduling workload on a tainted node when the toleration is on ResourceFlavor'",
            _base([node("x1", {HOST: "x1"}, "1",
                         taints=[{"key": "example.com/gpu", "value": "present", "effect": "NoSchedule"}])],
                  ONE_LEVEL, [tas_flavor(tolerations=[{"key": "example.com/gpu", "operator": "Exists"}])],
                  [clusterqueue("tas-main", ONE_RG)]),
            [wl("foo", "tas-main", [("one", 1, {"cpu": "1"}, pref(HOST))])],
            admitted={"foo": {"one": [("x1", 1)]}}),
    TasCase(f"{SCH} 'does not admit workload when node does not match required affinity'",
            _base(SINGLE, ONE_LEVEL, [tas_flavor()], [DEFAULT_CQ]),
            [wl("foo", "tas-main", [("one", 1, {"cpu": "1"}, pref(HOST))],
                affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "unused-key", "operator": "In", "values": ["value"]}]}]}}})],
            pending={"foo": "excluded: affinity: 1"}),
    TasCase(f"{SCH} 'admits workload when node matches required affinity'",
            _base([node("x1", {HOST: "x1", "expected-label": "expected-value"}, "1", "1Gi")], ONE_LEVEL,
                  [tas_flavor()], [DEFAULT_CQ]),
            [wl("foo", "tas-main", [("one", 1, {"cpu": "1"}, pref(HOST))],
                affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "expected-label", "operator": "In",
                                           "values": ["expected-value"]}]}]}}})],
            admitted={"foo": {"one": [("x1", 1)]}}),
    *[TasCase(f"{SCH} 'admits workload when nodes are partially empty; {how}'",
              _base(ZERO_CAPACITY, TWO_LEVEL, [tas_flavor(topo="tas-two-level")], [DEFAULT_CQ]),
              [wl("foo", "tas-main", [("one", 2, {"cpu": "1"}, tr)])],
              admitted={"foo": {"one": [("x2", 1), ("x3", 1)]}})
      for how, tr in (("unconstrained", {"unconstrained": True}), ("preferred", pref(RACK)), ("required", req(RACK)))],
]

PRE_CQ = clusterqueue("tas-main", [{"tas-default": {"cpu": 50, "memory": "50Gi"}}], within="LowerPriority")
PRE_NODES = [node("x1", {HOST: "x1"}, "5", "5Gi"), node("y1", {HOST: "y1"}, "5", "5Gi")]
COH_CQ_A = clusterqueue("tas-cq-a", [{"tas-default": {"cpu": 4, "memory": "4Gi"}}], cohort="tas-cohort-main",
                        within="LowerPriority", reclaim="Any")
COH_CQ_B = clusterqueue("tas-cq-b", [{"tas-default": {"cpu": 4, "memory": "4Gi"}}], cohort="tas-cohort-main",
                        reclaim="Any")
COH_NODES = [node("x1", {HOST: "x1"}, "3", "5Gi"), node("y1", {HOST: "y1"}, "5", "3Gi")]

PREEMPTION_CASES = [
    TasCase(f"{PRE} 'low priority workload is preempted even though there is enough capacity, but fragmented'",
            _base(PRE_NODES, ONE_LEVEL, [tas_flavor()], [PRE_CQ]),
            [wl("foo", "tas-main", [("one", 2, {"cpu": "1"}, req(HOST))], priority=3),
             wl("mid-priority-admitted", "tas-main", [("one", 1, {"cpu": "4"}, req(HOST))], priority=2,
                admitted=[({"cpu": "tas-default"}, 1, [("x1", 1)])]),
             wl("low-priority-admitted", "tas-main", [("one", 1, {"cpu": "4"}, req(HOST))], priority=1,
                admitted=[({"cpu": "tas-default"}, 1, [("y1", 1)])])],
            pending={"foo": "preempting default/low-priority-admitted"}, preempted={"low-priority-admitted"}),
    TasCase(f"{PRE} 'workload with equal priority awaits for other workloads to complete'",
            _base([PRE_NODES[0]], ONE_LEVEL, [tas_flavor()], [PRE_CQ]),
            [wl("low-priority-which-would-fit", "tas-main", [("one", 1, {"cpu": "1"}, req(HOST))], priority=1),
             wl("mid-priority-waiting", "tas-main", [("one", 2, {"cpu": "1"}, req(HOST))], priority=2),
             wl("mid-priority-admitted", "tas-main", [("one", 1, {"cpu": "4"}, req(HOST))], priority=2,
                admitted=[({"cpu": "tas-default"}, 1, [("x1", 1)])])],
            pending={"mid-priority-waiting": 'topology "tas-single-level" allows to fit only 1 out of 2 pod(s)',
                     "low-priority-which-would-fit": ""}),
    TasCase(f"{COH} 'reclaim within cohort; single borrowing workload gets preempted'",
            _base(COH_NODES, ONE_LEVEL, [tas_flavor()], [COH_CQ_A, COH_CQ_B]),
            [wl("a1-admitted", "tas-cq-a", [("one", 5, {"cpu": "1"}, req(HOST))], queue="lq-tas-cq-a",
                admitted=[({"cpu": "tas-default"}, 5, [("x1", 5)])]),
             wl("b1", "tas-cq-b", [("one", 4, {"cpu": "1"}, pref(HOST))])],
            pending={"b1": ""}, preempted={"a1-admitted"}),
    TasCase(f"{COH} 'two small workloads considered; both get scheduled on different nodes'",
            _base(COH_NODES, ONE_LEVEL, [tas_flavor()], [COH_CQ_A, COH_CQ_B]),
            [wl("a1", "tas-cq-a", [("one", 1, {"cpu": "5"}, pref(HOST))], priority=2),
             wl("b1", "tas-cq-b", [("one", 1, {"memory": "5"}, pref(HOST))], priority=1)],
            admitted={"a1": {"one": [("y1", 1)]}, "b1": {"one": [("x1", 1)]}}),
    TasCase(f"{COH} 'two small workloads considered; both get scheduled on the same node'",
            _base(COH_NODES, ONE_LEVEL, [tas_flavor()], [COH_CQ_A, COH_CQ_B]),
            [wl("a1", "tas-cq-a", [("one", 1, {"cpu": "1"}, pref(HOST))], priority=2),
             wl("b1", "tas-cq-b", [("one", 2, {"cpu": "1"}, pref(HOST))], priority=1)],
            admitted={"a1": {"one": [("x1", 1)]}, "b1": {"one": [("x1", 2)]}}),
    TasCase(f"{COH} 'two small workloads considered; there is only space for one of them on the initial node'",
            _base(COH_NODES, ONE_LEVEL, [tas_flavor()], [COH_CQ_A, COH_CQ_B]),
            [wl("a1", "tas-cq-a", [("one", 1, {"cpu": "1"}, pref(HOST))], priority=2),
             wl("b1", "tas-cq-b", [("one", 3, {"cpu": "1"}, pref(HOST))], priority=1)],
            admitted={"a1": {"one": [("x1", 1)]}},
            pending={"b1": "no longer fits after another workload was admitted in the same cycle"}),
    TasCase(f"{COH} 'two workloads considered; there is enough space only for the first'",
            _base(COH_NODES, ONE_LEVEL, [tas_flavor()], [COH_CQ_A, COH_CQ_B]),
            [wl("a1", "tas-cq-a", [("one", 5, {"cpu": "1"}, pref(HOST))], priority=2),
             wl("b1", "tas-cq-b", [("one", 5, {"cpu": "1"}, pref(HOST))], priority=1)],
            admitted={"a1": {"one": [("y1", 5)]}}, pending={"b1": ""}),
]


def _cycle(case: TasCase):
    cluster = overlay.build("kueue-tas-case", case.objs + case.workloads)
    sim = simulate.Simulator(cluster)
    sim.begin_step()
    for owner in cluster.owners:
        sim.submit(owner)
    sim.cycle()
    return sim


def _domains(st) -> dict[str, list[tuple[str, int]]]:
    return {p.request.name: [(v[-1], n) for v, n in p.assignment.domains] for p in st.assignment.topology}


@pytest.mark.parametrize("case", TAS_CASES + PREEMPTION_CASES, ids=lambda c: c.source.split("'")[1])
def test_kueue_tas_case(case: TasCase):
    sim = _cycle(case)
    states = {k.split("/", 1)[1]: st for k, st in sim.states.items()}
    for name, domains in case.admitted.items():
        st = states[name]
        assert st.status == "admitted", (name, st.status, st.reason)
        assert _domains(st) == domains
        for ps, f in case.flavors.get(name, {}).items():
            psa = next(p for p in st.assignment.podsets if p.name == ps)
            assert psa.flavors["cpu"].flavor == f
    for name, words in case.pending.items():
        st = states[name]
        assert not st.holds_quota, (name, st.status)
        assert words in st.reason, (name, st.reason)
    evicted = {e.split("/", 1)[1] for e, _ in sim.store.evictions}
    assert evicted == case.preempted


def test_at_least_20_tas_cases():
    assert len(TAS_CASES) + len(PREEMPTION_CASES) >= 20


# ---------------------------------------------------------------- the placement itself
# kubernetes-sigs/kueue@v0.17.4 pkg/cache/scheduler/tas_cache_test.go TestFindTopologyAssignments: a
# flavor snapshot of the case's nodes (topology "default", flavor nodeLabels), each pod set placed in
# turn (FindTopologyAssignmentsForFlavor); a pod set without a topology request is TAS implied.
FTA = f"kubernetes-sigs/kueue@{REL} pkg/cache/scheduler/tas_cache_test.go TestFindTopologyAssignments"
TBLOCK, TRACK = "cloud.com/topology-block", "cloud.com/topology-rack"
THREE, TWO = (TBLOCK, TRACK, HOST), (TBLOCK, TRACK)


def _n(name, block, rack, host, cpu, memory="1Gi", pods="10", ready=True, labels=None):
    lab = {k: v for k, v in ((TBLOCK, block), (TRACK, rack), (HOST, host)) if v is not None}
    obj = node(name, {**lab, **(labels or {})}, cpu, memory, pods, ready=ready)
    obj["metadata"]["labels"].pop("tas-node")
    return obj


#      b1                   b2
#   /      \             /      \
#  r1       r2          r1       r2
#  |      /  |  \       |         |
#  x3    x5  x1  x6     x2       x4
DEFAULT_NODES = [_n("b1-r1-x3", "b1", "r1", "x3", "1"), _n("b1-r2-x5", "b1", "r2", "x5", "1"),
                 _n("b1-r2-x1", "b1", "r2", "x1", "1"), _n("b1-r2-x6", "b1", "r2", "x6", "1"),
                 _n("b2-r2-x2", "b2", "r1", "x2", "1"), _n("b2-r2-x4", "b2", "r2", "x4", "2", "4Gi", "40")]
SCATTERED = [_n("b1-r1-x3", "b1", "r1", "x3", "4"), _n("b1-r1-x5", "b1", "r1", "x5", "1"),
             _n("b1-r1-x1", "b1", "r1", "x1", "1"), _n("b2-r1-x6", "b2", "r1", "x6", "2"),
             _n("b2-r1-x2", "b2", "r1", "x2", "1")]
BINARY = [_n(f"{b}-{r}-{x}", b, r, x, "1") for b, r, x in (
    ("b1", "r1", "x3"), ("b1", "r1", "x5"), ("b1", "r2", "x1"), ("b1", "r2", "x6"),
    ("b2", "r1", "x2"), ("b2", "r1", "x4"), ("b2", "r2", "x7"), ("b2", "r2", "x8"))]


@dataclass
class FindCase:
    source: str
    nodes: list[dict]
    levels: tuple[str, ...]
    podsets: list[tuple[dict | None, dict, int]]       # (topologyRequest, one pod's requests, count)
    want: list                                           # per pod set: [(values, count)] or the failure reason
    node_labels: dict = field(default_factory=dict)


FIND_CASES = [
    FindCase(f"{FTA} 'choose the node that can accommodate all Pods'",
             [_n("b1-r1-x3", "b1", "r1", "x3", "2", None), _n("b1-r1-x5", "b1", "r1", "x5", "1", None),
              _n("b1-r1-x1", "b1", "r1", "x1", "1", None)], THREE,
             [(req(TBLOCK), {"cpu": "1"}, 2)], [[(("x3",), 2)]]),
    FindCase(f"{FTA} 'no annotation; implied default to unconstrained; 6 pods fit into hosts scattered across the "
             "whole datacenter even they could fit into single rack; BestFit'", SCATTERED, THREE,
             [(None, {"cpu": "1"}, 6)],
             [[(("x1",), 1), (("x3",), 1), (("x5",), 1), (("x2",), 1), (("x6",), 2)]]),
    FindCase(f"{FTA} 'unconstrained; 6 pods fit into hosts scattered across the whole datacenter even they could "
             "fit into single rack; BestFit'", SCATTERED, THREE,
             [({"unconstrained": True}, {"cpu": "1"}, 6)],
             [[(("x1",), 1), (("x3",), 1), (("x5",), 1), (("x2",), 1), (("x6",), 2)]]),
    FindCase(f"{FTA} 'unconstrained; a single pod fits into each host; BestFit'", DEFAULT_NODES, THREE,
             [({"unconstrained": True}, {"cpu": "1"}, 1)], [[(("x3",), 1)]]),
    FindCase(f"{FTA} 'block required; 4 pods fit into one host each; BestFit'", BINARY, THREE,
             [(req(TBLOCK), {"cpu": "1"}, 4)], [[(("x3",), 1), (("x5",), 1), (("x1",), 1), (("x6",), 1)]]),
    FindCase(f"{FTA} 'host required; single Pod fits in the host; BestFit'", DEFAULT_NODES, THREE,
             [(req(HOST), {"cpu": "1"}, 1)], [[(("x3",), 1)]]),
    FindCase(f"{FTA} 'rack required; single Pod fits in a rack; BestFit'", DEFAULT_NODES, TWO,
             [(req(TRACK), {"cpu": "1"}, 1)], [[(("b1", "r1"), 1)]]),
    FindCase(f"{FTA} 'rack required; multiple Pods fit in a rack; BestFit'", DEFAULT_NODES, TWO,
             [(req(TRACK), {"cpu": "1"}, 3)], [[(("b1", "r2"), 3)]]),
    FindCase(f"{FTA} 'rack required; multiple Pods fit in some racks; BestFit'", DEFAULT_NODES, TWO,
             [(req(TRACK), {"cpu": "1"}, 2)], [[(("b2", "r2"), 2)]]),
    FindCase(f"{FTA} 'rack required; too many pods to fit in any rack; BestFit'", DEFAULT_NODES, TWO,
             [(req(TRACK), {"cpu": "1"}, 4)], ['topology "default" allows to fit only 3 out of 4 pod(s)']),
    FindCase(f"{FTA} 'block required; single Pod fits in a block and a single rack; BestFit'", DEFAULT_NODES, TWO,
             [(req(TBLOCK), {"cpu": "1"}, 1)], [[(("b2", "r1"), 1)]]),
    FindCase(f"{FTA} 'block required; single Pod fits in a block spread across two racks; BestFit'", DEFAULT_NODES,
             TWO, [(req(TBLOCK), {"cpu": "1"}, 4)], [[(("b1", "r1"), 1), (("b1", "r2"), 3)]]),
    FindCase(f"{FTA} 'block required; single Pod which cannot be split; BestFit'", DEFAULT_NODES, TWO,
             [(req(TBLOCK), {"cpu": "4"}, 1)],
             ['topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 4; excluded: resource "cpu": 4']),
    FindCase(f"{FTA} 'block required; too many Pods to fit requested; BestFit'", DEFAULT_NODES, TWO,
             [(req(TBLOCK), {"cpu": "1"}, 5)], ['topology "default" allows to fit only 4 out of 5 pod(s)']),
    FindCase(f"{FTA} 'rack required; single Pod requiring memory; BestFit'", DEFAULT_NODES, TWO,
             [(req(TRACK), {"memory": "1024"}, 4)], [[(("b1", "r1"), 4)]]),
    FindCase(f"{FTA} 'rack preferred; but only block can accommodate the workload; BestFit'", DEFAULT_NODES, TWO,
             [(pref(TRACK), {"cpu": "1"}, 4)], [[(("b1", "r1"), 1), (("b1", "r2"), 3)]]),
    FindCase(f"{FTA} 'rack preferred; but only multiple blocks can accommodate the workload; BestFit'",
             DEFAULT_NODES, TWO, [(pref(TRACK), {"cpu": "1"}, 6)],
             [[(("b1", "r1"), 1), (("b1", "r2"), 3), (("b2", "r2"), 2)]]),
    FindCase(f"{FTA} 'block preferred; but only multiple blocks can accommodate the workload; BestFit'",
             DEFAULT_NODES, TWO, [(pref(TBLOCK), {"cpu": "1"}, 6)],
             [[(("b1", "r1"), 1), (("b1", "r2"), 3), (("b2", "r2"), 2)]]),
    FindCase(f"{FTA} 'block preferred; but the workload cannot be accommodate in entire topology; BestFit'",
             DEFAULT_NODES, TWO, [(pref(TBLOCK), {"cpu": "1"}, 10)],
             ['topology "default" allows to fit only 7 out of 10 pod(s)']),
    FindCase(f"{FTA} 'only nodes with matching labels are considered; no matching node; BestFit'",
             [_n("b1-r1-x3", None, None, "x3", "1", ready=False, labels={"zone": "zone-a"})], (HOST,),
             [(req(HOST), {"cpu": "1"}, 1)], ["no topology domains at level: kubernetes.io/hostname"],
             {"zone": "zone-b"}),
    FindCase(f"{FTA} 'only nodes with matching labels are considered; matching node is found; BestFit'",
             [_n("b1-r1-x3", None, None, "x3", "1", labels={"zone": "zone-a"})], (HOST,),
             [(req(HOST), {"cpu": "1"}, 1)], [[(("x3",), 1)]], {"zone": "zone-a"}),
    FindCase(f"{FTA} 'only nodes with matching levels are considered; no host label on node; BestFit'",
             [_n("b1-r1-x3", "b1", "r1", None, "1")], THREE,
             [(req(TRACK), {"cpu": "1"}, 1)], ["no topology domains at level: cloud.com/topology-rack"]),
]


def _request_annotations(tr: dict | None) -> dict:
    wl_obj = {"spec": {"podSets": [{"name": "main", **({"topologyRequest": tr} if tr else {})}]}}
    ps = overlay.PodSet("main", 1, None, {}, {}, {}, 1)
    return overlay._with_topology_requests(wl_obj, (ps,))[0].annotations


@pytest.mark.parametrize("case", FIND_CASES, ids=lambda c: c.source.split("'")[1])
def test_kueue_find_topology_assignments_case(case: FindCase):
    from decimal import Decimal

    from generator.plan import nodes, tas
    infos = [n for n in (nodes.read_node(o, lambda p, m: None) for o in case.nodes) if n is not None]
    mine = [n for n in infos if nodes.matches_flavor(n, case.node_labels, case.levels)]
    snap = tas.FlavorSnapshot("tas", "default", case.levels, (), mine)
    reqs = [tas.Request(f"ps{i}", count, {r: Decimal(str(v)) for r, v in one.items()}, _request_annotations(tr), {},
                        implied=tr is None) for i, (tr, one, count) in enumerate(case.podsets)]
    got, failure = snap.find(reqs, lambda leaf: {})
    for i, want in enumerate(case.want):
        if isinstance(want, str):
            assert failure == (f"ps{i}", want)
        else:
            assert [(v, n) for v, n in got[f"ps{i}"].domains] == want


HAS_LEVEL = f"kubernetes-sigs/kueue@{REL} pkg/cache/scheduler/tas_flavor_snapshot_test.go TestHasLevel"
HAS_LEVEL_CASES = [
    (f"{HAS_LEVEL} 'topology request nil'", None, False),
    (f"{HAS_LEVEL} 'topology request empty'", {}, False),
    (f"{HAS_LEVEL} 'required'", {"required": "level-1"}, True),
    (f"{HAS_LEVEL} 'required – invalid level'", {"required": "invalid-level"}, False),
    (f"{HAS_LEVEL} 'preferred'", {"preferred": "level-1"}, True),
    (f"{HAS_LEVEL} 'preferred – invalid level'", {"preferred": "invalid-level"}, False),
    (f"{HAS_LEVEL} 'unconstrained'", {"unconstrained": True}, True),
    (f"{HAS_LEVEL} 'slice-only'", {"podSetSliceRequiredTopology": "level-1"}, True),
    (f"{HAS_LEVEL} 'slice-only – invalid level'", {"podSetSliceRequiredTopology": "invalid-level"}, False),
]


@pytest.mark.parametrize(("source", "request_", "want"), HAS_LEVEL_CASES, ids=lambda x: str(x)[-30:])
def test_kueue_has_level_case(source, request_, want):
    from generator.plan import tas
    snap = tas.FlavorSnapshot("tas", "dummy", ("level-1", "level-2"), (), [])
    assert snap.has_level(_request_annotations(request_)) is want
