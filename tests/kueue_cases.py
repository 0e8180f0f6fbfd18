"""Fixture builders for planner cases taken from Kueue's own tests: queues and
Workload objects in our own compact form. A case lists the ClusterQueues (by
name from a table), the Workloads already admitted (with the flavors Kueue's
test gives them, written as status.admission), the incoming Workload and what
Kueue's test expects."""
from __future__ import annotations

from dataclasses import dataclass, field

API = "kueue.x-k8s.io/v1beta2"
NS = "ns"


def rq(nominal, borrowing=None, lending=None) -> dict:
    return {"nominal": nominal, "borrowing": borrowing, "lending": lending}


def clusterqueue(name, groups, cohort=None, within=None, reclaim=None, bwc=None, fungibility=None, strategy=None,
                 weight=None, **extra) -> dict:
    """groups: [{flavor: {resource: quota}}]; a quota is a number/string or rq(...)."""
    rgs = []
    for g in groups:
        covered = list(dict.fromkeys(r for res in g.values() for r in res))
        flavors = []
        for f, res in g.items():
            resources = []
            for r, q in res.items():
                q = q if isinstance(q, dict) else rq(q)
                entry = {"name": r, "nominalQuota": str(q["nominal"])}
                if q["borrowing"] is not None:
                    entry["borrowingLimit"] = str(q["borrowing"])
                if q["lending"] is not None:
                    entry["lendingLimit"] = str(q["lending"])
                resources.append(entry)
            flavors.append({"name": f, "resources": resources})
        rgs.append({"coveredResources": covered, "flavors": flavors})
    spec: dict = {"namespaceSelector": {}, "resourceGroups": rgs}
    if cohort:
        spec["cohortName"] = cohort
    pre = {}
    if within:
        pre["withinClusterQueue"] = within
    if reclaim:
        pre["reclaimWithinCohort"] = reclaim
    if bwc:
        pre["borrowWithinCohort"] = {"policy": bwc[0], **({"maxPriorityThreshold": bwc[1]} if bwc[1] is not None else {})}
    if pre:
        spec["preemption"] = pre
    if fungibility:
        spec["flavorFungibility"] = fungibility
    if strategy:
        spec["queueingStrategy"] = strategy
    if weight is not None:
        spec["fairSharing"] = {"weight": str(weight)}
    spec.update(extra)
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def cohort(name, parent=None, groups=None, weight=None) -> dict:
    spec: dict = {}
    if parent:
        spec["parentName"] = parent
    if groups:
        spec["resourceGroups"] = clusterqueue("x", groups)["spec"]["resourceGroups"]
    if weight is not None:
        spec["fairSharing"] = {"weight": str(weight)}
    return {"apiVersion": API, "kind": "Cohort", "metadata": {"name": name}, "spec": spec}


def flavor(name, labels=None, taints=None, tolerations=None) -> dict:
    spec: dict = {}
    if labels:
        spec["nodeLabels"] = labels
    if taints:
        spec["nodeTaints"] = taints
    if tolerations:
        spec["tolerations"] = tolerations
    return {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def localqueue(cq, ns=NS, name=None) -> dict:
    return {"apiVersion": API, "kind": "LocalQueue", "metadata": {"name": name or f"lq-{cq}", "namespace": ns},
            "spec": {"clusterQueue": cq}}


def workload(name, cq, requests=None, priority=0, podsets=None, admitted=None, ns=NS, pod_spec=None,
             queue=None) -> dict:
    """requests: one pod set "main" of one pod; podsets: [(name, count, requests[, minCount])].
    admitted: {resource: flavor} (every pod set) or [ {resource: flavor} per pod set ]."""
    sets = podsets or [("main", 1, requests or {})]
    ps = []
    for s in sets:
        name_, count, req = s[0], s[1], s[2]
        spec = {"containers": [{"name": "c", "resources": {"requests": {r: str(v) for r, v in req.items()}}}],
                **(pod_spec or {})}
        entry = {"name": name_, "count": count, "template": {"spec": spec}}
        if len(s) > 3:
            entry["minCount"] = s[3]
        ps.append(entry)
    obj = {"apiVersion": API, "kind": "Workload", "metadata": {"name": name, "namespace": ns},
           "spec": {"queueName": queue or f"lq-{cq}", "priority": priority, "podSets": ps}}
    if admitted is not None:
        per = admitted if isinstance(admitted, list) else [admitted] * len(ps)
        obj["status"] = {"admission": {"clusterQueue": cq, "podSetAssignments": [
            {"name": p["name"], "count": p["count"], "flavors": dict(f)} for p, f in zip(ps, per)]}}
    return obj


@dataclass
class Case:
    source: str                         # upstream file, test function, case name, release
    queues: list[str]                   # ClusterQueue names from the table
    admitted: list[dict]                # Workload objects with status.admission
    incoming: dict
    preempted: set[str]                 # Kueue's expected targets
    admitted_in: bool | None = None     # is the incoming admitted once the targets are gone (None: not checked)
    flavors: dict = field(default_factory=dict)   # incoming's expected flavors (resource -> flavor)
    cohorts: list[dict] = field(default_factory=list)
    extra: list[dict] = field(default_factory=list)
