"""Fixture builders for planner cases taken from Kueue's own tests: queues and
Workload objects in our own compact form. A case lists the ClusterQueues (by
name from a table), the Workloads already admitted (with the flavors Kueue's
test gives them, written as status.admission), the incoming Workload and what
Kueue's test expects."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from generator.plan import overlay, scenario, simulate

API = "kueue.x-k8s.io/v1beta2"
NS = "ns"
# Kueue's unit tests reserve quota for every admitted Workload at one `now`; the
# candidates are then ordered by UID (their name). Restated as a fixed time.
NOW = "2025-01-01T00:00:00Z"


def at(seconds: int) -> str:
    """NOW plus (or minus) some seconds, as the API server writes times."""
    from datetime import datetime, timedelta
    t = datetime.fromisoformat(NOW) + timedelta(seconds=seconds)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


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
             queue=None, created=None, reserved=NOW, counts=None, status=None) -> dict:
    """requests: one pod set "main" of one pod; podsets: [(name, count, requests[, minCount])].
    admitted: {resource: flavor} (every pod set) or [ {resource: flavor} per pod set ], with the
    quota reserved at `reserved` and, with partial admission, `counts` pods per pod set.
    created: metadata.creationTimestamp; status: more of the Workload's status (admissionChecks)."""
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
    obj: dict[str, Any] = {"apiVersion": API, "kind": "Workload", "metadata": {"name": name, "namespace": ns},
                           "spec": {"queueName": queue or f"lq-{cq}", "priority": priority, "podSets": ps}}
    if created is not None:
        obj["metadata"]["creationTimestamp"] = created
    if admitted is not None:
        per = admitted if isinstance(admitted, list) else [admitted] * len(ps)
        n = counts or [p["count"] for p in ps]
        obj["status"] = {"admission": {"clusterQueue": cq, "podSetAssignments": [
            {"name": p["name"], "count": c, "flavors": dict(f)} for p, f, c in zip(ps, per, n, strict=True)]},
            "conditions": [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                            "lastTransitionTime": reserved}]}
    if status:
        obj["status"] = {**obj.get("status", {}), **status}
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


def fair_sharing(strategies=None) -> dict:
    """Kueue's manager configuration with fair sharing on (config v1beta2: the block's presence)."""
    fs = {"preemptionStrategies": list(strategies)} if strategies else {}
    return {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", "metadata": {"name": "config"},
            "fairSharing": fs}


def replay(objs: list[dict], admitted: list[dict], incoming: list[dict], together: bool = False) -> simulate.Plan:
    """Step 0: the admitted Workloads; then one step per incoming Workload. together: the
    incoming ones are there from step 0 too, so the first scheduling cycle sees them all
    (as a unit test of Kueue's scheduler does)."""
    cluster = overlay.build("kueue-case", objs + admitted + incoming)
    if together:
        return simulate.run(cluster, scenario.default(cluster))

    def ref(o):
        return {"kind": "Workload", "name": o["metadata"]["name"], "namespace": o["metadata"]["namespace"]}
    steps = [{"title": "incoming", "submit": ref(o)} for o in incoming]
    return simulate.run(cluster, scenario.from_dict({"initial": [ref(o) for o in admitted], "steps": steps},
                                                    cluster, "case.yaml"))


# Kueue's preemption reasons (kueue.InClusterQueueReason, ...) as the plan words them.
REASONS = {"InClusterQueue": "prioritization in the ClusterQueue",
           "InCohortReclamation": "reclamation within the cohort",
           "InCohortReclaimWhileBorrowing": "reclamation within the cohort while borrowing",
           "InCohortFairSharing": "fair sharing within the cohort"}


def preempted_by(step, preemptor: str) -> dict[str, str]:
    """Workload name -> Kueue's reason, for those preempted by `preemptor` in this step."""
    out = {}
    for e in step.events:
        if f" preempted by {preemptor} (" in e:
            why = e.split(f" preempted by {preemptor} (", 1)[1].split(";")[0]
            out[e.split(" preempted by ")[0].split("/", 1)[1]] = next(k for k, v in REASONS.items() if v == why)
    return out


def one_cycle(objs: list[dict]) -> tuple[simulate.Simulator, simulate.StepResult]:
    """Every object at once, then one scheduling cycle: what a TestSchedule case runs."""
    cluster = overlay.build("kueue-case", objs)
    sim = simulate.Simulator(cluster)
    sim.begin_step()
    for owner in cluster.owners:
        sim.submit(owner)
    sim.cycle()
    return sim, simulate.snapshot(sim, 0, "one scheduling cycle", "")


# ---------------------------------------------------------------- restated cases, counted
# Every restated case names its upstream source as "kubernetes-sigs/kueue@REL PATH [TestFunc] 'case'":
# a case table's `source` (or a tuple's first string), a test's docstring, or `restates(...)` on a
# test. `counts()` reads them from the test modules themselves, so the docs' table is generated.
UPSTREAM = "kubernetes-sigs/kueue@"
CASE_MODULES = ("tests.test_plan_kueue_cases", "tests.test_plan_kueue_fair", "tests.test_plan_kueue_schedule",
                "tests.test_plan_multikueue", "tests.test_plan_semantics", "tests.test_plan_cohort_tutorial",
                "tests.test_plan_kueue_tas", "tests.test_plan_kueue_config")
COUNTS_BEGIN, COUNTS_END = "<!-- restated-cases:begin -->", "<!-- restated-cases:end -->"


def restates(*sources: str):
    """Mark a test as the restatement of upstream test cases (full source strings)."""
    def mark(fn):
        fn.restates = sources
        return fn
    return mark


def _source(text: str) -> tuple[str, str, str, str] | None:
    """(release, path, test function or '', case) of a source string, or None."""
    if not isinstance(text, str) or not text.startswith(UPSTREAM):
        return None
    words = " ".join(text.split()).split(" ", 3)
    if len(words) < 3:
        return None
    release, path = words[0][len(UPSTREAM):], words[1]
    func = words[2] if words[2].startswith("Test") else ""
    case = (words[3] if len(words) > 3 else "") if func else " ".join(words[2:])
    if not case or case[0] not in "'\"":
        return None                 # a prefix (file and function) without a case
    return release, path, func, case


def _found(value, depth: int = 0):
    """Source strings in a module global: tables of cases (lists, tuples, dicts, dataclasses)."""
    if depth > 3:
        return
    if isinstance(value, str):
        yield value
    elif hasattr(value, "source") and isinstance(value.source, str):
        yield value.source
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _found(v, depth + 1)


def counts() -> dict[tuple[str, str], dict[str, int]]:
    """(upstream file, test function) -> {"restated": n, "not expressed": m}, read from the test modules."""
    import importlib
    seen: set[tuple[str, str, str, str]] = set()
    skipped: dict[tuple[str, str], int] = {}
    for name in CASE_MODULES:
        mod = importlib.import_module(name)
        texts: list[str] = []
        for attr, value in vars(mod).items():
            if attr.startswith("test_") and callable(value):
                texts += list(getattr(value, "restates", ()))
                doc = (value.__doc__ or "").strip()
                texts.append(" ".join(doc.split("\n", 2)[:2]).split(": ", 1)[0] if doc.startswith(UPSTREAM) else "")
            elif attr.isupper() and attr != "NOT_EXPRESSED":
                texts += list(_found(value))
        for t in texts:
            src = _source(t)
            if src is not None:
                seen.add(src)
        not_expressed = getattr(mod, "NOT_EXPRESSED", {})
        if not_expressed:
            src = _source(f"{mod.NOT_EXPRESSED_IN} 'x'")
            assert src is not None, f"{name}.NOT_EXPRESSED_IN is not a source prefix"
            skipped[(src[1], src[2])] = skipped.get((src[1], src[2]), 0) + len(not_expressed)
    out: dict[tuple[str, str], dict[str, int]] = {}
    for _, path, func, _ in seen:
        out.setdefault((path, func), {"restated": 0, "not expressed": 0})["restated"] += 1
    for key, n in skipped.items():
        out.setdefault(key, {"restated": 0, "not expressed": 0})["not expressed"] += n
    return dict(sorted(out.items()))


def counts_table() -> str:
    """The counts as the Markdown table docs/plan.md carries."""
    rows = counts()
    lines = ["| Upstream file (kubernetes-sigs/kueue) | Test | Restated | Not expressible (skipped) |",
             "|---|---|---|---|"]
    for (path, func), n in rows.items():
        lines.append(f"| `{path}` | {f'`{func}`' if func else '(suite)'} | {n['restated']} | {n['not expressed']} |")
    total = sum(n["restated"] for n in rows.values()), sum(n["not expressed"] for n in rows.values())
    lines.append(f"| all | | {total[0]} | {total[1]} |")
    return "\n".join(lines) + "\n"


def write_counts(page: str) -> bool:
    """Replace the table between the markers in a docs page; True when it changed."""
    from pathlib import Path
    p = Path(page)
    text = p.read_text()
    head, rest = text.split(COUNTS_BEGIN, 1)
    _, tail = rest.split(COUNTS_END, 1)
    new = f"{head}{COUNTS_BEGIN}\n{counts_table()}{COUNTS_END}{tail}"
    if new != text:
        p.write_text(new)
    return new != text


if __name__ == "__main__":
    import sys
    if sys.argv[1:2] == ["--counts"]:
        sys.stdout.write(counts_table())
    elif sys.argv[1:2] == ["--write"] and len(sys.argv) == 3:
        print(f"{sys.argv[2]}: {'updated' if write_counts(sys.argv[2]) else 'unchanged'}")
    else:
        sys.exit("usage: python -m tests.kueue_cases --counts | --write docs/plan.md")
