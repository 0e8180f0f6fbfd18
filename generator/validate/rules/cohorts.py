"""Teams sharing quota through Kueue cohorts: ClusterQueues (and Cohort
objects) whose quotas only work together.

Sources (Kueue v0.17.4): concepts/cluster_queue.md ("A ClusterQueue can only
borrow quota for flavors that the ClusterQueue defines"; namespaceSelector
"Defaults to null which is a nothing selector"), concepts/cohort.md (Cohort
parentName), pkg/webhooks/clusterqueue_webhook.go and cohort_webhook.go
(validateFlavorQuotas, validateLimit, validateLendingLimit, validateResourceQuantity:
limits need a cohort or parent, lendingLimit <= nominalQuota on ClusterQueues,
no negative quantities, each resource and flavor in one resource group only),
pkg/cache/hierarchy/cycle.go (a Cohort whose parents loop is a cycle; its
workloads are not scheduled)."""
from __future__ import annotations

from ...kernel import policy, quantity, supply
from ...kernel.labelmatch import describe, selector_matches
from ..findings import ERROR, WARNING
from . import hit, rule
from .kueue import KUEUE, resource_groups

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"   # set by the control plane on every Namespace


def cohort_of(cq) -> str | None:
    """spec.cohortName (v1beta2) or spec.cohort (v1beta1), as the supply model reads it."""
    return supply.parent_name("ClusterQueue", cq.spec)


def parent_of(cohort) -> str | None:
    """spec.parentName (v1beta2) or spec.parent (v1alpha1), as the supply model reads it."""
    return supply.parent_name("Cohort", cohort.spec)


def _parents(model) -> dict[str, str]:
    return {c.name: p for c in model.known(KUEUE, "Cohort") if (p := parent_of(c))}


def root_of(name: str, parents: dict[str, str]) -> str:
    seen = {name}
    while name in parents and parents[name] not in seen:
        name = parents[name]
        seen.add(name)
    return name


def offers(holder) -> list[tuple[str, str, tuple]]:
    """(flavor, resource, path) of each quota a ClusterQueue or Cohort defines, as the supply
    model reads them (supply.quotas_at)."""
    return [(q.flavor, q.resource, q.path) for q in supply.quotas_at(holder.spec)]


@rule("KQ013", WARNING, "a ClusterQueue in a cohort covers a resource only with flavors no other member of the "
      "cohort defines, while other members have that resource in other flavors: it can neither borrow nor lend it",
      "use the same ResourceFlavor names across the cohort for the same hardware (Kueue borrows per flavor)")
def cohort_flavors_agree(model):
    parents = _parents(model)
    members = _members_by_root(model, parents)
    for cq in model.kueue("ClusterQueue"):
        cohort = cohort_of(cq)
        if not cohort:
            continue
        others = [m for m in members.get(root_of(cohort, parents), []) if m is not cq]
        for res, flavors, theirs in _unshared_flavors(cq, others):
            where = ", ".join(sorted(f"{f!r} ({kind} {name})" for f, kind, name in theirs))
            yield hit(cq, flavors[0][1], f"covers {res} with flavor(s) {', '.join(repr(f) for f, _ in flavors)}, "
                      f"but cohort {cohort_of(cq)!r} offers {res} only in {where}: nothing to borrow or lend")


def _members_by_root(model, parents) -> dict[str, list]:
    """The ClusterQueues and Cohorts the model knows (context included) by the root of their
    cohort tree: the members that can borrow from one another."""
    members: dict[str, list] = {}
    for cq in model.known(KUEUE, "ClusterQueue"):
        if cohort := cohort_of(cq):
            members.setdefault(root_of(cohort, parents), []).append(cq)
    for c in model.known(KUEUE, "Cohort"):
        members.setdefault(root_of(c.name, parents), []).append(c)
    return members


def _unshared_flavors(cq, others):
    """(resource, cq's flavors of it with their paths, the other members' (flavor, kind, name) of it)
    for each resource the others also offer, but in none of cq's flavors."""
    mine: dict[str, list] = {}
    for flavor, res, path in offers(cq):
        mine.setdefault(res, []).append((flavor, path))
    for res, flavors in sorted(mine.items()):
        theirs = {(f, m.kind, m.name) for m in others for f, r, _ in offers(m) if r == res}
        if not theirs or any(f in {x for x, _ in flavors} for f, _, _ in theirs):
            continue
        yield res, flavors, theirs


def _limits(holder, has_parent: bool, is_cohort: bool):
    """What Kueue's webhook refuses, on the values as written (the supply model drops a negative one)."""
    where = "parent" if is_cohort else "cohort"
    for flavor, res, path in offers(holder):
        r = _resource(holder, path)
        values = {}
        for key in ("nominalQuota", "borrowingLimit", "lendingLimit"):
            if key in r:
                try:
                    values[key] = quantity.parse(r[key])
                except ValueError:
                    continue   # the schema layer reports it
                if values[key] < 0:
                    yield hit(holder, path + (key,), f"{key} {r[key]} for {flavor}/{res} is negative")
        for key in ("borrowingLimit", "lendingLimit"):
            if key in values and not has_parent:
                yield hit(holder, path + (key,), f"{key} must be unset when the {holder.kind} has no {where}")
        if (not is_cohort and "lendingLimit" in values
                and values["lendingLimit"] > values.get("nominalQuota", quantity.parse(0))):
            yield hit(holder, path + ("lendingLimit",), f"lendingLimit {r['lendingLimit']} for {flavor}/{res} is "
                      f"above the nominalQuota {r.get('nominalQuota', 0)}: a ClusterQueue lends only its own quota")


def _resource(holder, path) -> dict:
    i, j, k = path[2], path[4], path[6]
    return holder.spec["resourceGroups"][i]["flavors"][j]["resources"][k]


def _duplicates(holder):
    seen_res, seen_flavor = set(), set()
    for i, g in enumerate(resource_groups(holder)):
        for j, r in enumerate(g.get("coveredResources") or []):
            if r in seen_res:
                yield hit(holder, ("spec", "resourceGroups", i, "coveredResources", j),
                          f"{r} is covered by an earlier resource group too")
            seen_res.add(r)
        for j, f in enumerate(g.get("flavors") or []):
            name = f.get("name") if isinstance(f, dict) else None
            if name in seen_flavor:
                yield hit(holder, ("spec", "resourceGroups", i, "flavors", j, "name"),
                          f"flavor {name!r} is in an earlier resource group too")
            seen_flavor.add(name)


@rule("KQ014", ERROR, "quota limits Kueue's webhook refuses: borrowingLimit or lendingLimit without a cohort "
      "(or, on a Cohort, without a parent), lendingLimit above nominalQuota, a negative quota, a resource or "
      "flavor in two resource groups",
      "set limits only in a cohort; lend at most the nominal quota; one resource group per resource and flavor")
def quota_limits(model):
    for cq in model.kueue("ClusterQueue"):
        yield from _limits(cq, cohort_of(cq) is not None, False)
        yield from _duplicates(cq)
    for c in model.kueue("Cohort"):
        yield from _limits(c, parent_of(c) is not None, True)
        yield from _duplicates(c)


def namespace_labels(model, ns: str) -> tuple[dict, bool]:
    """The labels of a namespace and whether its Namespace object is known."""
    obj = model.get("", "Namespace", ns)
    labels = dict(obj.labels) if obj is not None else {}
    labels[NAMESPACE_NAME_LABEL] = ns
    return labels, obj is not None


@rule("KQ015", ERROR, "a LocalQueue's namespace is not selected by its ClusterQueue's namespaceSelector (an unset "
      "selector selects no namespace), so its workloads are never admitted",
      "add the namespace's label to the ClusterQueue's namespaceSelector, or `namespaceSelector: {}` for all")
def local_queue_namespace_selected(model):
    for lq in model.kueue("LocalQueue"):
        name = lq.spec.get("clusterQueue")
        cq = model.get(KUEUE, "ClusterQueue", name) if isinstance(name, str) else None
        if cq is None:
            continue   # KQ002
        selector = cq.spec.get("namespaceSelector")
        if not isinstance(selector, dict):
            yield hit(lq, ("spec", "clusterQueue"), f"ClusterQueue {name!r} has no namespaceSelector, which selects "
                      f"no namespace")
            continue
        labels, known = namespace_labels(model, lq.namespace)
        if not selector_matches(selector, labels):
            yield hit(lq, ("spec", "clusterQueue"), f"ClusterQueue {name!r} selects namespaces {describe(selector)}; "
                      f"namespace {lq.namespace!r} has {describe({'matchLabels': labels})}",
                      missing=None if known else f"Namespace {lq.namespace!r} (with its labels)")


@rule("KQ016", ERROR, "Cohorts whose parents form a cycle; Kueue schedules nothing under a cohort with a cycle",
      "make the parent chain end at a root Cohort (one without parentName)")
def cohort_cycles(model):
    """One line per cycle (generator/kernel/supply.py find_cycles), on its first Cohort in the input."""
    mine = {c.name: c for c in model.kueue("Cohort")}
    for loop in supply.find_cycles(_parents(model)):
        c = next((mine[n] for n in loop if n in mine), None)
        if c is not None:
            yield hit(c, ("spec", "parentName" if "parentName" in c.spec else "parent"), supply.cycle_message(loop))


# ---------------------------------------------------------------- policy holes (kernel/policy.py)
_POLICY_GROUPS = {"ClusterQueue": KUEUE, "HorizontalPodAutoscaler": "autoscaling", "Deployment": "apps",
                  "StatefulSet": "apps", "LeaderWorkerSet": "leaderworkerset.x-k8s.io"}


# The last folder's findings: every file of a plain folder is a stream whose context is the
# folder's other files, so each sees the same set of objects, and the findings (which read the
# whole set) are found once a folder, not once a file. The key's objects are held, so that
# their ids stay theirs.
_by_folder: list = [None, None, []]


def _findings(model) -> list:
    folder, given = model.folder, tuple(getattr(model, "_context", ()))
    key = (id(folder), tuple(map(id, given)))
    if folder is None or key != _by_folder[0]:
        bodies = [o.body for o in model.objects] + [o.body for o in model.context]
        try:
            found = policy.findings(bodies)
        except Exception:   # noqa: BLE001  inputs other rules reject (unreadable quotas): nothing to say here
            found = []
        if folder is None:
            return found
        _by_folder[:] = [key, (folder, given), found]
    return _by_folder[2]


def _policy(model, rule_id: str):
    """The policy findings of the input (with its context) on objects of the input."""
    if not any(o.body.get("kind") in _POLICY_GROUPS for o in model.objects):
        return   # every finding is on a ClusterQueue, serving or an HPA: none here (and a folder's
        # 300 single-object files would read the whole set 300 times)
    found = getattr(model, "_policy_findings", None)
    if found is None:
        found = model._policy_findings = _findings(model)
    mine = {id(o) for o in model.objects}
    for f in found:
        if f.rule != rule_id:
            continue
        o = model.get(_POLICY_GROUPS.get(f.kind, ""), f.kind, f.name, f.namespace or None)
        if o is not None and id(o) in mine:
            yield hit(o, f.parts, f.message, hint=f.hint)


@rule("KQ031", WARNING, "a ClusterQueue in a cohort holds nothing of a flavor but may borrow all of it (no "
      "borrowingLimit), so any capacity added to the cohort is lent to it",
      "give the flavor a borrowingLimit (0 to never borrow) or a nominal share")
def unlimited_borrowing(model):
    yield from _policy(model, "KQ031")


@rule("KQ032", WARNING, "a ClusterQueue lends quota other queues may borrow, but its reclaimWithinCohort is Never "
      "(Kueue's default): it cannot take its quota back",
      "set preemption.reclaimWithinCohort: Any (or LowerPriority), or a lendingLimit")
def lender_cannot_reclaim(model):
    yield from _policy(model, "KQ032")


@rule("KQ033", WARNING, "serving (a Deployment, StatefulSet or LeaderWorkerSet) can be kept waiting by lower-priority "
      "work its ClusterQueue does not preempt, or by borrowed quota it cannot reclaim",
      "preemption.withinClusterQueue: LowerPriority and reclaimWithinCohort: Any on its ClusterQueue, or a "
      "ClusterQueue of its own")
def serving_blocked(model):
    yield from _policy(model, "KQ033")


@rule("KQ034", WARNING, "an HPA's maxReplicas is more than its Deployment's ClusterQueue can ever admit (each pod "
      "is a Workload): the last replicas stay pending", "lower maxReplicas, or raise the quota")
def hpa_never_admitted(model):
    yield from _policy(model, "KQ034")
