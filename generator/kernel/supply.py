"""What the queues can give: the other half of every admission question
(demand.py is the first). ClusterQueues and Cohorts form trees; each node has,
per (flavor, resource), a nominal quota and optional borrowing and lending
limits. From them this module computes what a ClusterQueue can get at most,
and answers the one question every tool asks: can this workload ever be
admitted, and if not, why.

It follows Kueue v0.17.4 (pkg/cache/scheduler/resource_node.go):
- `local_quota` is resourceNode.localQuota: what a node keeps to itself
  because of its lendingLimit (subtree quota - lendingLimit, at least 0);
- `_subtree` is updateCohortResourceNode + accumulateFromChild: a node's
  subtree quota is its own nominal quota plus what each child lends up
  (child subtree - child local quota);
- `potential_available` is potentialAvailable: the most a node could hold,
  were nothing else used: at the root its subtree quota; below it, its local
  quota plus its parent's potential, capped by subtree + borrowingLimit;
- cycles follow pkg/cache/hierarchy/cycle.go HasCycle: a Cohort whose parent
  chain comes back to itself. Kueue leaves such a tree unscheduled; here it is
  an input error, one line per cycle.
The verdict follows the NoFit branch of pkg/scheduler/flavorassigner
fitsResourceQuota: a pod set's request in a flavor, plus what earlier pod sets
of the same Workload took there, above the flavor's potentialAvailable, does
not fit that flavor; a pod set no flavor of its resource group fits makes the
Workload never admissible. With partial admission (a minimum pod count) the
question is asked at the fewest pods. Taints, node affinity and TPU slice
placement are the planner's business (plan/assign.py): this is quota alone.

The validator (KQ009), the planner (never admitted), `generator diff` and the
spec's checks all read it, and every tool reads a ClusterQueue's or Cohort's
resourceGroups and cohort link here (read_groups, quotas_at, parent_name;
docs/supply.md lists the readers)."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol

from . import quantity
from .labelmatch import node_matches, required_node_affinity, untolerated_taint

FR = tuple[str, str]            # (flavor, resource)
ZERO = Decimal(0)
PODS = "pods"                   # Kueue's reserved resource: one per pod, when a ClusterQueue covers it
KUEUE_GROUP = "kueue.x-k8s.io"


# ---------------------------------------------------------------- what the input says

@dataclass
class Quota:
    nominal: Decimal
    borrowing: Decimal | None = None       # borrowingLimit: None = no limit
    lending: Decimal | None = None         # lendingLimit: None = lends everything


@dataclass
class FlavorQuota:
    flavor: str
    resources: dict[str, Quota]            # mutable: plan scenarios change quotas

    @property
    def nominal(self) -> dict[str, Decimal]:
        return {r: q.nominal for r, q in self.resources.items()}


@dataclass
class Group:
    covered: tuple[str, ...]
    flavors: list[FlavorQuota]


@dataclass
class Holder:
    """A ClusterQueue (parent: its cohort) or a Cohort (parent: its parent Cohort)."""
    name: str
    parent: str | None
    groups: Sequence[Any]                  # Group (read_groups), or anything shaped like it
    weight: Decimal = Decimal(1)
    declared: bool = True                  # a Cohort object; False: only named by ClusterQueues

    def quotas(self) -> dict[FR, Any]:
        return {(fq.flavor, r): q for g in self.groups for fq in g.flavors for r, q in fq.resources.items()}

    def covered(self) -> list[str]:
        """Covered resources, in the order the ClusterQueue lists them."""
        return list(dict.fromkeys(r for g in self.groups for r in g.covered))

    def group_of(self, resource: str):
        return next((g for g in self.groups if resource in g.covered), None)


@dataclass(frozen=True)
class Flavor:
    """What of a ResourceFlavor decides which pods may use it (flavorassigner.go
    checkFlavorForPodSets): its nodeLabels against the pods' node selector and required
    affinity, its nodeTaints against the pods' tolerations plus its own."""
    name: str
    node_labels: Mapping = field(default_factory=dict)
    node_taints: tuple = ()
    tolerations: tuple = ()


class _Quota(Protocol):
    nominal: Decimal
    borrowing: Decimal | None
    lending: Decimal | None


# ---------------------------------------------------------------- the tree

@dataclass(eq=False)
class Node:
    name: str
    is_cq: bool
    quotas: dict[FR, Any] = field(default_factory=dict)
    subtree: dict[FR, Decimal] = field(default_factory=dict)
    usage: dict[FR, Decimal] = field(default_factory=dict)
    parent: Node | None = None
    child_cohorts: list[Node] = field(default_factory=list)
    child_cqs: list[Node] = field(default_factory=list)
    weight: Decimal = Decimal(1)

    def __repr__(self) -> str:
        return f"{'CQ' if self.is_cq else 'Cohort'}({self.name})"

    def ancestors(self):
        """Parent to root."""
        a = self.parent
        while a is not None:
            yield a
            a = a.parent

    def root(self) -> Node:
        n = self
        while n.parent is not None:
            n = n.parent
        return n

    def subtree_cqs(self):
        yield from self.child_cqs
        for c in self.child_cohorts:
            yield from c.subtree_cqs()

    def nominal(self, fr: FR) -> Decimal:
        q = self.quotas.get(fr)
        return q.nominal if q else ZERO


def local_quota(n: Node, fr: FR) -> Decimal:
    """resourceNode.localQuota: capacity only this subtree sees (its lendingLimit keeps it)."""
    q = n.quotas.get(fr)
    if q is not None and q.lending is not None:
        return max(ZERO, n.subtree.get(fr, ZERO) - q.lending)
    return ZERO


def potential_available(n: Node, fr: FR) -> Decimal:
    """potentialAvailable: the most the node could ever hold, were nothing else used."""
    if n.parent is None:
        return n.subtree.get(fr, ZERO)
    avail = local_quota(n, fr) + potential_available(n.parent, fr)
    q = n.quotas.get(fr)
    if q is not None and q.borrowing is not None:
        avail = min(n.subtree.get(fr, ZERO) + q.borrowing, avail)
    return avail


def find_cycles(parents: Mapping[str, str | None]) -> list[list[str]]:
    """Each loop of a child -> parent map once (hierarchy.HasCycle), as the names around it,
    starting at the smallest; a self-parent is a loop of one."""
    out: list[list[str]] = []
    seen: set[str] = set()
    for start in sorted(parents):
        chain: list[str] = []
        name: str | None = start
        while name is not None and name not in seen and name not in chain:
            chain.append(name)
            name = parents.get(name)
        if name is not None and name in chain:
            loop = chain[chain.index(name):]
            i = loop.index(min(loop))
            out.append(loop[i:] + loop[:i])
        seen.update(chain)
    return out


def cycle_message(loop: Sequence[str]) -> str:
    """The one line every tool prints for a cohort cycle."""
    if len(loop) == 1:
        return f"Cohort {loop[0]!r} is its own parent; Kueue schedules nothing under a cohort in a cycle"
    return (f"Cohort parents form a cycle: {' -> '.join(list(loop) + [loop[0]])}; Kueue schedules nothing "
            f"under a cohort in a cycle")


class Tree:
    """All ClusterQueues and Cohorts of one cluster as Kueue's cache holds them. Cohorts
    named by ClusterQueues but without a Cohort object are roots without quota of their own.
    A cohort in a cycle is cut from its parent (so every walk ends); `cycles` lists them."""

    def __init__(self, cluster_queues: Iterable[Holder], cohorts: Iterable[Holder] = (),
                 flavors: Mapping[str, Any] | None = None):
        # ResourceFlavors by name (Flavor or anything shaped like it); a flavor not here is
        # taken as open to every pod (its absence is a reference error reported elsewhere).
        self.flavors: Mapping[str, Any] = flavors or {}
        self.holders: dict[str, Holder] = {}
        self.cqs: dict[str, Node] = {}
        self.cohorts: dict[str, Node] = {}
        self._add_cohorts(list(cohorts))
        self._add_cluster_queues(cluster_queues)
        self._fill_subtrees()

    def _add_cohorts(self, cohorts: list[Holder]) -> None:
        """Cohort objects with their quotas, then their parent links; a cohort in a cycle keeps
        no parent, so every walk up the tree ends."""
        for co in cohorts:
            node = self._cohort(co.name)
            node.quotas, node.weight = co.quotas(), co.weight
        parents = {co.name: co.parent for co in cohorts if co.parent}
        self.loops = find_cycles(parents)
        self.cycles: set[str] = {n for loop in self.loops for n in loop}   # their queues are inactive
        for co in cohorts:
            if co.parent and co.name not in self.cycles:
                child, parent = self._cohort(co.name), self._cohort(co.parent)
                child.parent = parent
                parent.child_cohorts.append(child)

    def _add_cluster_queues(self, cluster_queues: Iterable[Holder]) -> None:
        """ClusterQueues in name order, each hung under its cohort (created if only named)."""
        for cq in sorted(cluster_queues, key=lambda q: q.name):
            node = Node(cq.name, True, cq.quotas(), weight=cq.weight)
            self.holders[cq.name] = cq
            self.cqs[cq.name] = node
            if cq.parent:
                parent = self._cohort(cq.parent)
                node.parent = parent
                parent.child_cqs.append(node)

    def _fill_subtrees(self) -> None:
        """Subtree quotas from the leaves up; a ClusterQueue without a cohort is its own subtree."""
        for root in [c for c in self.cohorts.values() if c.parent is None]:
            _subtree(root)
        for node in self.cqs.values():
            if node.parent is None:
                node.subtree = {fr: q.nominal for fr, q in node.quotas.items()}

    def _cohort(self, name: str) -> Node:
        if name not in self.cohorts:
            self.cohorts[name] = Node(name, False)
        return self.cohorts[name]

    def in_cycle(self, cq: str) -> bool:
        node = self.cqs[cq]
        return any(a.name in self.cycles for a in node.ancestors())

    def most(self, cq: str, flavor: str, resource: str) -> Decimal:
        """What ClusterQueue `cq` can get at most of `resource` in `flavor`, borrowing included
        (0 for a flavor or resource the ClusterQueue does not define)."""
        node = self.cqs[cq]
        if (flavor, resource) not in node.quotas:
            return ZERO
        return potential_available(node, (flavor, resource))


def _subtree(cohort: Node) -> None:
    """updateCohortResourceNode: subtree quota and usage from the leaves up."""
    cohort.subtree = {fr: q.nominal for fr, q in cohort.quotas.items()}
    cohort.usage = {}
    for child in cohort.child_cohorts:
        _subtree(child)
        _accumulate(cohort, child)
    for child in cohort.child_cqs:
        child.subtree = {fr: q.nominal for fr, q in child.quotas.items()}
        _accumulate(cohort, child)


def _accumulate(parent: Node, child: Node) -> None:
    """accumulateFromChild."""
    for fr, q in child.subtree.items():
        parent.subtree[fr] = parent.subtree.get(fr, ZERO) + q - local_quota(child, fr)
    for fr, u in child.usage.items():
        parent.usage[fr] = parent.usage.get(fr, ZERO) + max(ZERO, u - local_quota(child, fr))


# ---------------------------------------------------------------- reading manifests

Report = Callable[[tuple, str], None]    # (path inside the object, what is wrong)


@dataclass(frozen=True)
class QuotaAt:
    """One quota of a ClusterQueue or Cohort body with where it is written (validate points there)."""
    path: tuple                # ("spec", "resourceGroups", i, "flavors", j, "resources", k)
    flavor: str
    resource: str
    quota: Quota


def quota_value(value: Any, report: Callable[[str], None] | None = None) -> Decimal | None:
    """A quota's quantity (nominalQuota, borrowingLimit, lendingLimit; a plan scenario's too), or
    None when it is not a quantity or is negative. With `report` (the planner: a bad quota stops
    it) each problem is reported, a value past quantity.MAX_QUANTITY among them; without it
    (validate, diff, the spec check: their schema layer reports the value) such a value is kept."""
    try:
        q = quantity.parse(value)
    except (ValueError, ArithmeticError, TypeError):
        if report is not None:
            report(f"{quantity.brief(value)} is not a quantity (e.g. 500m, 2, 16Gi)")
        return None
    if q < 0:
        if report is not None:
            report(f"{quantity.brief(value)} is negative; quotas and requests are 0 or more")
        return None
    if q > quantity.MAX_QUANTITY and report is not None:
        report(quantity.too_large(value))
        return None
    return q


class _Read:
    """Typed access to a body's fields; each wrong type goes to `report` (when there is one)
    and a safe default comes back."""

    def __init__(self, report: Report | None):
        self.report = report

    def bad(self, path: tuple, message: str) -> None:
        if self.report is not None:
            self.report(path, message)

    def list(self, obj: Any, key: str, path: tuple) -> list:
        v = obj.get(key) if isinstance(obj, Mapping) else None
        if v is None:
            return []
        if not isinstance(v, list):
            self.bad(path, f"{quantity.brief(v)} is not a list")
            return []
        return v

    def name(self, obj: Any, path: tuple, missing: str) -> str | None:
        """obj["name"]: a string that is not empty, else None with `missing` reported."""
        v = obj.get("name") if isinstance(obj, Mapping) else None
        if v is not None and not isinstance(v, str):
            self.bad(path, f"{quantity.brief(v)} is not a string")
        if isinstance(v, str) and v:
            return v
        self.bad(path, missing)
        return None

    def qty(self, obj: Mapping, key: str, path: tuple) -> Decimal | None:
        v = obj.get(key)
        return None if v is None else quota_value(v, None if self.report is None else lambda m: self.bad(path, m))


def _read(spec: Mapping, report: Report | None) -> tuple[list[Group], list[QuotaAt]]:
    """The one reading of spec.resourceGroups (every tool's): the groups, and each quota with
    its path. Items without a name are left out (with a problem when `report` is given)."""
    r, groups, where = _Read(report), [], []
    top = ("spec", "resourceGroups")
    for gi, g in enumerate(r.list(spec, "resourceGroups", top)):
        gp = (*top, gi)
        if not isinstance(g, Mapping):
            r.bad(gp, "a resource group is a mapping")
            continue
        covered = tuple(x for x in r.list(g, "coveredResources", (*gp, "coveredResources")) if isinstance(x, str))
        flavors = []
        for fi, f in enumerate(r.list(g, "flavors", (*gp, "flavors"))):
            fp = (*gp, "flavors", fi)
            fname = r.name(f, (*fp, "name"), "a flavor names a ResourceFlavor")
            if fname is None:
                continue
            res: dict[str, Quota] = {}
            for ri, q in enumerate(r.list(f, "resources", (*fp, "resources"))):
                qp = (*fp, "resources", ri)
                rname = r.name(q, (*qp, "name"), "a resource quota names its resource")
                if rname is None:
                    continue
                nominal = r.qty(q, "nominalQuota", (*qp, "nominalQuota"))
                res[rname] = Quota(ZERO if nominal is None else nominal, r.qty(q, "borrowingLimit", (*qp, "borrowingLimit")),
                                   r.qty(q, "lendingLimit", (*qp, "lendingLimit")))
                where.append(QuotaAt(qp, fname, rname, res[rname]))
            flavors.append(FlavorQuota(fname, res))
        groups.append(Group(covered, flavors))
    return groups, where


def read_groups(spec: Any, report: Report | None = None) -> list[Group]:
    """A ClusterQueue's or Cohort's spec.resourceGroups as Groups: the planner's reading (with
    `report`), holder_of's (validate, diff, the spec check) and every rule's."""
    return _read(spec if isinstance(spec, Mapping) else {}, report)[0]


def quotas_at(spec: Any) -> list[QuotaAt]:
    """Each quota of a ClusterQueue's or Cohort's spec with its path, in the order written."""
    return _read(spec if isinstance(spec, Mapping) else {}, None)[1]


def flavor_names(spec: Any) -> list[str]:
    """The flavors a ClusterQueue's or Cohort's spec names, in order."""
    return [f.flavor for g in read_groups(spec) for f in g.flavors]


def _map(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _name(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def parent_name(kind: str, spec: Mapping, report: Report | None = None) -> str | None:
    """A ClusterQueue's cohort or a Cohort's parent: v1beta2 `cohortName` / `parentName`,
    v1beta1 `cohort` / `parent` (the first that names one)."""
    for key in ("cohortName", "cohort") if kind == "ClusterQueue" else ("parentName", "parent"):
        v = spec.get(key)
        if v is not None and not isinstance(v, str):
            _Read(report).bad(("spec", key), f"{quantity.brief(v)} is not a string")
        elif v:
            return v
    return None


def holder_of(obj: Mapping) -> Holder | None:
    """A ClusterQueue or Cohort manifest as a Holder (None for any other object). v1beta2
    names the parent `cohortName` / `parentName`, v1beta1 `cohort` / `parent`."""
    api, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api, str) or api.rpartition("/")[0] != KUEUE_GROUP or kind not in ("ClusterQueue", "Cohort"):
        return None
    meta, spec = _map(obj.get("metadata")), _map(obj.get("spec"))
    name = _name(meta.get("name"))
    if name is None:
        return None
    return Holder(name, parent_name(kind, spec), read_groups(spec))


def flavor_of(obj: Mapping) -> Flavor | None:
    api, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api, str) or api.rpartition("/")[0] != KUEUE_GROUP or kind != "ResourceFlavor":
        return None
    meta, spec = _map(obj.get("metadata")), _map(obj.get("spec"))
    name = _name(meta.get("name"))
    if name is None:
        return None
    labels = _map(spec.get("nodeLabels"))
    return Flavor(name, labels, *(tuple(x for x in spec.get(k) or [] if isinstance(x, dict))
                                  if isinstance(spec.get(k), list) else () for k in ("nodeTaints", "tolerations")))


def from_objects(objs: Iterable[Mapping]) -> Tree:
    """The tree of every ClusterQueue and Cohort among `objs` (manifests), with their ResourceFlavors."""
    cqs: list[Holder] = []
    cohorts: list[Holder] = []
    flavors: dict[str, Flavor] = {}
    for o in objs:
        h = holder_of(o)
        if h is not None:
            (cqs if o.get("kind") == "ClusterQueue" else cohorts).append(h)
        elif (f := flavor_of(o)) is not None:
            flavors[f.name] = f
    return Tree(cqs, cohorts, flavors)


# ---------------------------------------------------------------- which flavors a pod set may use

def restricted(spec: Mapping, keys: set[str]) -> dict:
    """flavorSelector: the pod's nodeSelector and required node affinity, keeping only
    label keys the resource group's flavors use (others are the scheduler's business)."""
    out: dict = {}
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict):
        out["nodeSelector"] = {k: v for k, v in selector.items() if k in keys}
    terms = required_node_affinity(spec)
    kept: list[dict] = []
    for t in terms or ():
        exprs = [e for e in t.get("matchExpressions") or [] if isinstance(e, dict) and e.get("key") in keys]
        if not exprs:
            kept = []          # an empty term matches every flavor: the terms are ORed
            break
        kept.append({"matchExpressions": exprs})
    if terms and kept:
        out["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": kept}}}
    return out


def tolerations(spec: Mapping) -> tuple[dict, ...]:
    tols = spec.get("tolerations")
    return tuple(t for t in tols if isinstance(t, dict)) if isinstance(tols, list) else ()


def flavor_mismatch(rf: Any, spec: Mapping, label_keys: set[str]) -> str | None:
    """Why pods with this spec may not use ResourceFlavor `rf`, or None."""
    taint = untolerated_taint(rf.node_taints, tolerations(spec) + tuple(rf.tolerations))
    if taint is not None:
        value = f"={taint.get('value')}" if taint.get("value") else ""
        return f"untolerated taint {taint.get('key')}{value}:{taint.get('effect')} in flavor {rf.name}"
    if not node_matches(restricted(spec, label_keys), rf.node_labels):
        return f"flavor {rf.name} doesn't match node affinity"
    return None


def _eligible(tree: Tree, g, ps) -> tuple[list[str], list[str]]:
    """(flavors of group `g` the pod set may use, in order; why the others are not)."""
    known = [tree.flavors[f.flavor] for f in g.flavors if f.flavor in tree.flavors]
    keys = {k for rf in known for k in rf.node_labels}
    spec = ps.spec if isinstance(getattr(ps, "spec", None), Mapping) else {}
    ok, why = [], []
    for f in g.flavors:
        rf = tree.flavors.get(f.flavor)
        reason = flavor_mismatch(rf, spec, keys) if rf is not None else None
        if reason:
            why.append(reason)
        else:
            ok.append(f.flavor)
    return ok, why


# ---------------------------------------------------------------- the verdict

def eligible_flavors(tree: Tree, g, ps) -> list[str]:
    """The flavors of resource group `g` a pod set may use (taints and node labels)."""
    return _eligible(tree, g, ps)[0]


class _PodSet(Protocol):
    """demand.PodSet or the planner's model.PodSet: one pod's requests, counts, the pod spec."""
    @property
    def name(self) -> str: ...
    @property
    def count(self) -> int: ...
    @property
    def min_count(self) -> int | None: ...
    @property
    def requests(self) -> dict[str, Decimal]: ...
    @property
    def spec(self) -> dict: ...


@dataclass(frozen=True)
class Verdict:
    """Why a Workload can never be admitted to a ClusterQueue."""
    cluster_queue: str
    podset: str
    resource: str
    need: Decimal              # what the pod set asks (with earlier pod sets in the same flavor)
    most: Decimal | None       # the most any flavor can give; None: the resource is not covered
    message: str
    flavor: str | None = None  # the flavor that can give the most


def fewest(podsets: Sequence[_PodSet]) -> tuple[int, ...]:
    """The pod counts Kueue could admit at the least: the partial-admission minimum where a
    pod set has one (kueue.x-k8s.io/job-min-parallelism, Workload minCount), else all pods."""
    return tuple(ps.min_count if ps.min_count is not None else ps.count for ps in podsets)


def show(resource: str, value: Decimal) -> str:
    return quantity.show(resource, value)


def _pods(n: int) -> str:
    return f"{n} pod" if n == 1 else f"{n} pods"


def _needs(holder: Holder, podsets: Sequence[_PodSet], counts: Sequence[int]):
    """(pod set, count, what it asks at that count) with Kueue's `pods` when covered."""
    covered = holder.covered()
    for ps, count in zip(podsets, counts, strict=True):
        need = {r: v * count for r, v in ps.requests.items() if v > 0}
        if PODS in covered and count:
            need[PODS] = Decimal(count)
        yield ps, count, need


def _first_fit(tree: Tree, cq: str, g, ps, asked: dict[str, Decimal], taken: dict[FR, Decimal]):
    """(the first flavor of group `g` the pod set may use that can ever hold `asked`, or None;
    room left per flavor it may use; why it may not use the others)."""
    ok, why = _eligible(tree, g, ps)
    room = {f: {r: tree.most(cq, f, r) - taken.get((f, r), ZERO) for r in asked} for f in ok}
    return next((f for f, left in room.items() if all(v <= left[r] for r, v in asked.items())), None), room, why


def placement(tree: Tree, cq: str, podsets: Sequence[_PodSet]) -> list[dict[str, str]]:
    """Per pod set, resource -> the flavor Kueue would give it in an empty cluster (the first
    that can ever hold it, after the Workload's earlier pod sets; the group's first flavor
    when none can)."""
    holder = tree.holders[cq]
    taken: dict[FR, Decimal] = {}
    out = []
    for ps, _, need in _needs(holder, podsets, [ps.count for ps in podsets]):
        chosen: dict[str, str] = {}
        for g in holder.groups:
            asked = {r: v for r, v in need.items() if r in g.covered}
            if not asked or not g.flavors:
                continue
            flavor, _, _ = _first_fit(tree, cq, g, ps, asked, taken)
            flavor = flavor or g.flavors[0].flavor
            for r, v in asked.items():
                taken[(flavor, r)] = taken.get((flavor, r), ZERO) + v
                chosen[r] = flavor
        out.append(chosen)
    return out


def never(tree: Tree, cq: str, podsets: Sequence[_PodSet]) -> Verdict | None:
    """Why one Workload with these pod sets can never be admitted to ClusterQueue `cq`
    (were the cluster empty), or None when some flavor assignment fits."""
    holder, node = tree.holders[cq], tree.cqs[cq]
    covered = holder.covered()
    taken: dict[FR, Decimal] = {}
    for ps, count, need in _needs(holder, podsets, fewest(podsets)):
        for r in sorted(need):
            if r not in covered:
                return Verdict(cq, ps.name, r, need[r], None,
                               f"pod set {ps.name} requests {r}, which ClusterQueue {cq} does not cover "
                               f"(covered: {', '.join(covered) or 'none'})")
        for g in holder.groups:
            asked = {r: v for r, v in need.items() if r in g.covered}
            if not asked:
                continue
            flavor, room, why = _first_fit(tree, cq, g, ps, asked, taken)
            if flavor is not None:
                for r, v in asked.items():
                    taken[(flavor, r)] = taken.get((flavor, r), ZERO) + v
                continue
            if not room:
                r = sorted(asked)[0]
                return Verdict(cq, ps.name, r, asked[r], ZERO,
                               f"pod set {ps.name} may use no flavor of ClusterQueue {cq}: "
                               f"{'; '.join(why) or 'the resource group lists none'}")
            return _no_flavor(cq, ps, count, asked, room, node.parent is not None, bool(taken))
    return None


def _no_flavor(cq: str, ps: _PodSet, count: int, asked: dict[str, Decimal], room: dict[str, dict[str, Decimal]],
               in_cohort: bool, earlier: bool) -> Verdict:
    best = {r: max((left[r] for left in room.values()), default=ZERO) for r in asked}
    short = [r for r in sorted(asked) if best[r] < asked[r]]
    after = " after the Workload's earlier pod sets" if earlier else ""
    borrowing = ", borrowing from its cohort included" if in_cohort else ""
    if not short:
        wanted = ", ".join(f"{show(r, v)} {r}" for r, v in sorted(asked.items()))
        first = sorted(asked)[0]
        return Verdict(cq, ps.name, first, asked[first], best[first],
                       f"one Workload needs {wanted} for pod set {ps.name}, but no single flavor of ClusterQueue "
                       f"{cq} can ever give all of it{after}{borrowing}")
    r = short[0]
    most = max(best[r], ZERO)
    per = ps.requests.get(r, Decimal(1) if r == PODS else ZERO)
    where = f" in flavor {next(iter(room))}" if len(room) == 1 else f" in any of its {len(room)} flavors"
    return Verdict(cq, ps.name, r, asked[r], most,
                   f"one Workload needs {show(r, asked[r])} {r} for pod set {ps.name} ({_pods(count)} × "
                   f"{show(r, per)}), but ClusterQueue {cq} can ever get at most {show(r, most)}{where}{after}"
                   f"{borrowing}", next((f for f, left in room.items() if left[r] == best[r]), None))
