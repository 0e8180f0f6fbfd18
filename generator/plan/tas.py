"""Kueue's topology-aware scheduling (TAS) placement, for `plan`: a port of Kueue v0.17.4
pkg/cache/scheduler/tas_flavor_snapshot.go (TASFlavorSnapshot), with the upstream function
names beside each part.

A TAS flavor (a ResourceFlavor with spec.topologyName) has a tree of topology domains built
from its nodes (plan/nodes.py: Node objects given as input, or the nodes the platform
declares): one level per label of its Topology, outermost first; the leaves are nodes when
kubernetes.io/hostname is the lowest level. Each leaf has free capacity: the nodes'
allocatable less the pods of admitted workloads not placed by TAS (non-TAS usage), less the
pods TAS placed there (TAS usage) and those the same workload's earlier pod sets take
(assumed usage). A pod set is placed in two phases (findTopologyAssignment):

1. fillInCounts: how many pods (and slices) fit in each leaf (taints against the pods' and
   the flavor's tolerations, nodeSelector and required node affinity, when nodes are the
   leaves), summed up the tree;
2. findLevelWithFitDomains: at the requested level, the domain that holds every pod (BestFit:
   among those that do, the one with the fewest); a required level fails when none does, a
   preferred one goes a level up, and at the top (or unconstrained) the pods spread over as
   many domains as needed, largest first; then, level by level down to the leaves,
   updateCountsToMinimumGeneric takes the fewest domains (BestFit for the last one).

Unconstrained pod sets (the podset-unconstrained-topology annotation, or TAS implied by a
ClusterQueue whose flavors are all TAS flavors) use LeastFreeCapacity instead: feature gate
TASProfileMixed, beta and on by default since v0.15 (pkg/features/kube_features.go at
v0.17.4). TASBalancedPlacement (alpha, off), TASMultiLayerTopology (alpha, off) and
TASHandleOverlappingFlavors (alpha, off) are off at v0.17.4 and not modelled; neither are
pod-set groups (kueue.x-k8s.io/podset-group-name, an LWS leader placed with its workers) nor
node replacement for failed nodes."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from ..kernel import labelmatch, supply
from ..kernel.catalog import node_labels
from ..model import topology as spec_topology

HOSTNAME = node_labels.HOSTNAME_LABEL
# Kueue's podset annotations (apis/kueue/v1beta2/topology_types.go at v0.17.4), in model/topology.py.
REQUIRED, PREFERRED, UNCONSTRAINED = spec_topology.REQUIRED, spec_topology.PREFERRED, spec_topology.UNCONSTRAINED
SLICE_REQUIRED, SLICE_SIZE, GROUP_NAME = spec_topology.SLICE_REQUIRED, spec_topology.SLICE_SIZE, spec_topology.GROUP_NAME
TAS_ANNOTATIONS = (REQUIRED, PREFERRED, UNCONSTRAINED, SLICE_REQUIRED, SLICE_SIZE)
PODS = "pods"
Requests = dict[str, Decimal]


@dataclass(frozen=True)
class NodeInfo:
    """A node as TAS sees it (tas_flavor.go nodeInfo): ready and schedulable only."""
    name: str
    labels: dict
    allocatable: Requests
    taints: tuple[dict, ...] = ()


@dataclass(eq=False)
class Domain:
    """domain: one topology domain; `state` is how many pods fit (phase 1) or are assigned
    (phase 2), `slice_state` how many slices."""
    id: str
    values: tuple[str, ...]
    parent: Domain | None = None
    children: list[Domain] = field(default_factory=list)
    state: int = 0
    slice_state: int = 0
    # leafDomain: the leaf's capacity and its nodes
    capacity: Requests | None = None
    nodes: list[NodeInfo] = field(default_factory=list)


@dataclass(frozen=True)
class Request:
    """TASPodSetRequests: one pod set of a workload on one TAS flavor."""
    name: str
    count: int
    single: Requests                     # one pod's requests (without `pods`)
    annotations: dict
    spec: dict                           # the pod spec: nodeSelector, affinity, tolerations
    implied: bool = False                # TAS implied by a TAS-only ClusterQueue

    def total(self) -> Requests:
        return {r: v * self.count for r, v in self.single.items()}


@dataclass(frozen=True)
class Assignment:
    """TopologyAssignment: the levels and, per domain, how many pods."""
    levels: tuple[str, ...]
    domains: tuple[tuple[tuple[str, ...], int], ...]

    def describe(self) -> str:
        return ", ".join(f"{'/'.join(v)}: {n}" for v, n in self.domains)


def requests_tas(annotations: dict) -> bool:
    """workload.IsExplicitlyRequestingTAS for one pod set."""
    return any(a in annotations for a in TAS_ANNOTATIONS)


def is_required(r: Request) -> bool:
    return REQUIRED in r.annotations


def is_slice_only(r: Request) -> bool:
    """isSliceTopologyOnlyRequest."""
    a = r.annotations
    return REQUIRED not in a and PREFERRED not in a and SLICE_REQUIRED in a


def is_unconstrained(r: Request) -> bool:
    """isUnconstrained: the annotation true, TAS implied, or a slice-only request."""
    return str(r.annotations.get(UNCONSTRAINED, "")).lower() == "true" or r.implied or is_slice_only(r)


Usage = Callable[[Domain], Requests]       # what is already used on a leaf


class FlavorSnapshot:
    """TASFlavorSnapshot: one TAS flavor's domain tree (static), placed against a usage."""

    def __init__(self, flavor: str, topology: str, levels: tuple[str, ...], tolerations: tuple[dict, ...],
                 nodes: list[NodeInfo], profile_mixed: bool = True):
        self.flavor, self.topology, self.levels = flavor, topology, levels
        self.profile_mixed = profile_mixed          # feature gate TASProfileMixed
        self.tolerations = tolerations
        self.lowest_is_node = bool(levels) and levels[-1] == HOSTNAME     # isLowestLevelNode
        self.leaves: dict[str, Domain] = {}
        self.node_leaf: dict[str, str] = {}
        self.per_level: list[dict[str, Domain]] = [{} for _ in levels]
        self.roots: dict[str, Domain] = {}
        for n in sorted(nodes, key=lambda n: n.name):
            self.node_leaf[n.name] = self._add_node(n)
        self._initialize()

    # ---------------------------------------------------------------- the tree
    def _add_node(self, node: NodeInfo) -> str:
        """addNode: the node's leaf (its hostname, or the id of its level values)."""
        values = tuple(str(node.labels.get(k, "")) for k in self.levels)
        did = values[-1] if self.lowest_is_node else ",".join(values)
        leaf = self.leaves.get(did)
        if leaf is None:
            leaf = self.leaves[did] = Domain(did, values, capacity={})
        leaf.nodes.append(node)
        assert leaf.capacity is not None
        _add(leaf.capacity, node.allocatable)           # addCapacity
        return did

    def _initialize(self) -> None:
        """initialize / initializeHelper: parents made from the leaves' level values."""
        for leaf in self.leaves.values():
            self.per_level[len(leaf.values) - 1][leaf.id] = leaf
            self._link(leaf)

    def _link(self, dom: Domain) -> None:
        if len(dom.values) == 1:
            self.roots[dom.id] = dom
            return
        pvalues = dom.values[:-1]
        pid = ",".join(pvalues)
        parent = self.per_level[len(pvalues) - 1].get(pid)
        if parent is None:
            parent = self.per_level[len(pvalues) - 1][pid] = Domain(pid, pvalues)
            self._link(parent)
        dom.parent = parent
        parent.children.append(dom)

    def plain_leaves(self, labels: dict, tolerations: tuple[dict, ...], spec: dict) -> list[Domain]:
        """The nodes a pod Kueue does not place (no TAS) may land on: the kube-scheduler's
        filters (its flavors' node labels, nodeSelector and required affinity, taints)."""
        key = repr((sorted(labels.items()), tolerations, spec.get("nodeSelector"), spec.get("affinity")))
        cache = self.__dict__.setdefault("_plain", {})
        if key not in cache:
            cache[key] = [leaf for _, leaf in sorted(self.leaves.items()) if self.lowest_is_node and
                          all(leaf.nodes[0].labels.get(k) == str(v) for k, v in labels.items()) and
                          labelmatch.untolerated_taint(leaf.nodes[0].taints, tolerations) is None and
                          labelmatch.node_matches(spec, leaf.nodes[0].labels)]
        return cache[key]

    @staticmethod
    def place_plain(leaves: list[Domain], single: Requests, count: int, used: Usage) -> dict[str, Requests]:
        """Where the kube-scheduler puts pods Kueue does not place, approximated: each on the
        node with room for the most such pods (the least allocated); pods no node holds stay
        pending and take nothing."""
        one = {**single, PODS: single.get(PODS, Decimal(0)) + 1}
        free = {}
        for leaf in leaves:
            f = dict(leaf.capacity or {})
            _sub(f, used(leaf))
            free[leaf.id] = f
        out: dict[str, Requests] = {}
        for _ in range(count):
            best, most = "", 0
            for leaf in leaves:                     # in name order: the first of equals
                n = _count_in(one, free[leaf.id])[0]
                if n > most:
                    best, most = leaf.id, n
            if not most:
                break
            _sub(free[best], one)
            _add(out.setdefault(best, {}), one)
        return out

    def add_non_tas_usage(self, node: str, usage: Requests) -> None:
        """addNonTASUsage: a running pod Kueue's TAS did not place takes room on its node."""
        leaf = self.leaves.get(self.node_leaf.get(node, ""))
        if leaf is not None and leaf.capacity is not None:
            _sub(leaf.capacity, usage)

    def has_level(self, annotations: dict) -> bool:
        """HasLevel: the requested level (and the slice level) are levels of the Topology."""
        key = self._level_key(annotations)
        if key is None:
            return False
        return key in self.levels and annotations.get(SLICE_REQUIRED, self.levels[-1]) in self.levels

    def _level_key(self, a: dict) -> str | None:
        """levelKey."""
        if REQUIRED in a:
            return str(a[REQUIRED])
        if PREFERRED in a:
            return str(a[PREFERRED])
        if SLICE_REQUIRED in a:
            return self.levels[0]
        if str(a.get(UNCONSTRAINED, "")).lower() == "true":
            return self.levels[-1]
        return None

    # ---------------------------------------------------------------- placing
    def find(self, requests: list[Request], used: Usage, simulate_empty: bool = False
             ) -> tuple[dict[str, Assignment], tuple[str, str] | None]:
        """FindTopologyAssignmentsForFlavor: each pod set in order, against the usage and what
        the earlier pod sets took (assumed usage). Returns the assignments and, on the first
        pod set that does not fit, (its name, why)."""
        assumed: dict[str, Requests] = {}
        out: dict[str, Assignment] = {}
        for r in requests:
            got, reason = self.find_one(r, used, assumed, simulate_empty)
            if got is None:
                return out, (r.name, reason)
            out[r.name] = got
            for values, n in got.domains:                  # addAssumedUsage
                leaf = self.leaf_of(values)
                _add(assumed.setdefault(leaf, {}), _scaled(r.single, n, with_pods=True))
        return out, None

    def leaf_of(self, values: tuple[str, ...]) -> str:
        return values[-1] if self.lowest_is_node else ",".join(values)

    def find_one(self, r: Request, used: Usage, assumed: dict[str, Requests], simulate_empty: bool
                 ) -> tuple[Assignment | None, str]:
        """findTopologyAssignment for a pod set without a leader."""
        slice_size, why = _slice_size(r)
        if why:
            return None, why
        key = self._level_key(r.annotations) or (self.levels[-1] if r.implied else None)
        if key is None:
            return None, "topology level not specified"
        if key not in self.levels:
            return None, f"no requested topology level: {key}"
        slice_key = str(r.annotations.get(SLICE_REQUIRED, self.levels[-1]))
        if slice_key not in self.levels:
            return None, f"no requested topology level for slices: {slice_key}"
        level, slice_level = self.levels.index(key), self.levels.index(slice_key)
        if level > slice_level:
            return None, f"podset slice topology {slice_key} is above the podset topology {key}"
        st = _State(r.count, slice_size, slice_level, is_required(r), is_unconstrained(r),
                    least_free=is_unconstrained(r) and self.profile_mixed)
        self._fill_in_counts(r, used, assumed, simulate_empty, st)
        fit_level, fit, reason = self._find_level_with_fit_domains(level, st)
        if reason:
            return None, reason
        fit = self._update_counts(fit, st.count, slice_size, st.least_free, True)
        cur = fit_level
        while cur < min(len(self.levels) - 1, slice_level):
            fit = self._update_counts(self._sorted(_children(fit), st.least_free), st.count, slice_size,
                                      st.least_free, True)
            cur += 1
        while cur < len(self.levels) - 1:
            nxt: list[Domain] = []
            for dom in fit:
                nxt += self._update_counts(self._sorted(dom.children, st.least_free), dom.state, 1,
                                           st.least_free, False)
            fit = nxt
            cur += 1
        return self._build_assignment(fit), ""

    def _fill_in_counts(self, r: Request, used: Usage, assumed: dict[str, Requests], simulate_empty: bool,
                        st: _State) -> None:
        """fillInCounts: pods per leaf, then per domain up the tree (fillInCountsHelper)."""
        for doms in self.per_level:
            for d in doms.values():
                d.state = d.slice_state = 0
        single = dict(r.single)
        single[PODS] = single.get(PODS, Decimal(0)) + 1
        tolerations = supply.tolerations(r.spec) + tuple(self.tolerations)
        for leaf in self.leaves.values():
            st.total_nodes += 1
            if self.lowest_is_node and not self._node_ok(leaf.nodes[0], r.spec, tolerations, st):
                continue
            free = dict(leaf.capacity or {})
            if not simulate_empty:
                _sub(free, used(leaf))
            _sub(free, assumed.get(leaf.id, {}))
            leaf.state, limiting = _count_in(single, free)
            if leaf.state == 0 and limiting:
                st.excluded[f"resource \"{limiting}\""] = st.excluded.get(f"resource \"{limiting}\"", 0) + 1
        for root in self.roots.values():
            _fill_helper(root, st.slice_size, st.slice_level, 0)

    @staticmethod
    def _node_ok(node: NodeInfo, spec: dict, tolerations: tuple[dict, ...], st: _State) -> bool:
        """The node's taints tolerated, its labels matching nodeSelector and required node affinity."""
        taint = labelmatch.untolerated_taint(node.taints, tolerations)
        if taint is not None:
            what = f"taint \"{taint.get('key')}{'=' + str(taint['value']) if taint.get('value') else ''}:" \
                   f"{taint.get('effect')}\""     # Taint.ToString, quoted
            st.excluded[what] = st.excluded.get(what, 0) + 1
            return False
        selector = spec.get("nodeSelector") if isinstance(spec.get("nodeSelector"), dict) else {}
        if not labelmatch.node_matches({"nodeSelector": selector}, node.labels):
            st.excluded["nodeSelector"] = st.excluded.get("nodeSelector", 0) + 1
            return False
        if not labelmatch.node_matches({"affinity": spec.get("affinity")}, node.labels):
            st.excluded["affinity"] = st.excluded.get("affinity", 0) + 1
            return False
        return True

    def _find_level_with_fit_domains(self, level: int, st: _State) -> tuple[int, list[Domain], str]:
        """findLevelWithFitDomains."""
        domains = list(self.per_level[level].values())
        if not domains:
            return 0, [], f"no topology domains at level: {self.levels[level]}"
        ordered = self._sorted(domains, st.least_free)
        top = ordered[0]
        slices = st.count // st.slice_size
        least_free = st.least_free                  # useLeastFreeCapacityAlgorithm
        if not least_free and top.slice_state >= slices:
            top = _best_fit(ordered, slices, lambda d: d.slice_state)      # optimize the potentially last domain
        if least_free:
            for d in ordered:
                if d.slice_state >= slices:
                    return level, [d], ""
            if st.required:
                return 0, [], self._not_fit(ordered[-1].state, slices, st)
        if top.slice_state >= slices:
            return level, [top], ""
        if st.required:
            return 0, [], self._not_fit(top.slice_state, slices, st)
        if level > 0 and not st.unconstrained:
            return self._find_level_with_fit_domains(level - 1, st)
        return self._spread(level, ordered, slices, st)

    def _spread(self, level: int, ordered: list[Domain], slices: int, st: _State) -> tuple[int, list[Domain], str]:
        """findLevelWithFitDomains at the top (or unconstrained): as many domains as needed,
        in order, BestFit for the last one."""
        least_free = st.least_free
        results: list[Domain] = []
        remaining = slices
        for i, d in enumerate(ordered):
            if remaining <= 0:
                break
            if not least_free and d.slice_state >= remaining:
                d = _best_fit(ordered[i:], remaining, lambda x: x.slice_state)   # optimize the last domain
            results.append(d)
            remaining -= d.slice_state
        if remaining > 0:
            return 0, [], self._not_fit(slices - remaining, slices, st)
        return level, results, ""

    def _not_fit(self, fit: int, total: int, st: _State) -> str:
        """notFitMessage."""
        unit = "pod" if st.slice_size == 1 else "slice"
        if fit == 0:
            msg = f"topology \"{self.topology}\" doesn't allow to fit any of {total} {unit}(s)"
        else:
            msg = f"topology \"{self.topology}\" allows to fit only {fit} out of {total} {unit}(s)"
        if st.excluded:
            reasons = ", ".join(sorted(f"{what}: {n}" for what, n in st.excluded.items()))   # formatReasons
            msg += f". Total nodes: {st.total_nodes}; excluded: {reasons}"
        return msg

    @staticmethod
    def _sorted(domains: list[Domain], least_free: bool) -> list[Domain]:
        """sortedDomains: BestFit sliceState descending (LeastFreeCapacity: ascending), then
        state ascending, then level values."""
        sign = 1 if least_free else -1
        return sorted(domains, key=lambda d: (sign * d.slice_state, d.state, d.values))

    @staticmethod
    def _update_counts(domains: list[Domain], count: int, slice_size: int, least_free: bool,
                       slices: bool) -> list[Domain]:
        """updateCountsToMinimumGeneric without leaders: the fewest domains that hold `count`."""
        result: list[Domain] = []
        remaining = count // slice_size if slices else count
        for i, dom in enumerate(domains):
            have = dom.slice_state if slices else dom.state
            if not least_free and have >= remaining:                # useBestFitAlgorithm
                dom = _best_fit(domains[i:], remaining, (lambda d: d.slice_state) if slices else (lambda d: d.state))
                have = dom.slice_state if slices else dom.state
            if have >= remaining:
                if slices:
                    dom.state, dom.slice_state = remaining * slice_size, remaining
                else:
                    dom.state = remaining
                result.append(dom)
                return result
            if slices:
                dom.state = dom.slice_state * slice_size
            remaining -= have
            result.append(dom)
        return result

    def _build_assignment(self, domains: list[Domain]) -> Assignment:
        """buildAssignment: domains in level-value order; only hostnames when nodes are the leaves."""
        start = len(self.levels) - 1 if self.lowest_is_node else 0
        doms = sorted((d for d in domains if d.state), key=lambda d: d.values)
        return Assignment(self.levels[start:], tuple((d.values[start:], d.state) for d in doms))


@dataclass
class _State:
    """findTopologyAssignmentState (without leaders)."""
    count: int
    slice_size: int
    slice_level: int
    required: bool
    unconstrained: bool
    least_free: bool = False              # LeastFreeCapacity (unconstrained, TASProfileMixed) else BestFit
    total_nodes: int = 0
    excluded: dict[str, int] = field(default_factory=dict)


def _slice_size(r: Request) -> tuple[int, str]:
    """getSliceSizeWithSinglePodAsDefault."""
    if SLICE_REQUIRED not in r.annotations:
        return 1, ""
    raw = r.annotations.get(SLICE_SIZE)
    if raw is None:
        return 0, "slice topology requested, but slice size not provided"
    try:
        size = int(str(raw))
    except ValueError:
        return 0, f"slice size {raw!r} is not a whole number"
    return (size, "") if size > 0 else (0, f"slice size {raw!r} is not a positive number")


def _fill_helper(dom: Domain, slice_size: int, slice_level: int, level: int) -> None:
    """fillInCountsHelper (no leaders, no inner slice layers)."""
    if not dom.children:
        if level == slice_level:
            dom.slice_state = dom.state // slice_size
        return
    state = slices = 0
    for child in dom.children:
        _fill_helper(child, slice_size, slice_level, level + 1)
        state += child.state
        slices += child.slice_state
    dom.state = state
    dom.slice_state = state // slice_size if level == slice_level else slices


def _best_fit(domains: list[Domain], needed: int, state: Callable[[Domain], int]) -> Domain:
    """findBestFitDomainBy: the first domain with the lowest state still >= needed (else the first)."""
    best = domains[0]
    for d in domains:
        if needed <= state(d) < state(best):
            best = d
    return best


def _children(domains: list[Domain]) -> list[Domain]:
    """lowerLevelDomains."""
    return [c for d in domains for c in d.children]


def _count_in(single: Requests, free: Requests) -> tuple[int, str]:
    """Requests.CountInWithLimitingResource: how many pods fit, and the resource that limits."""
    best, limiting = None, ""
    for r, v in sorted(single.items()):
        if v <= 0:
            continue
        n = int(max(free.get(r, Decimal(0)), Decimal(0)) // v)
        if best is None or n < best:
            best, limiting = n, r
    return (best if best is not None else 0), limiting


def _add(into: Requests, other: Requests) -> None:
    for r, v in other.items():
        into[r] = into.get(r, Decimal(0)) + v


def _sub(into: Requests, other: Requests) -> None:
    for r, v in other.items():
        into[r] = into.get(r, Decimal(0)) - v


def _scaled(single: Requests, n: int, with_pods: bool = False) -> Requests:
    out = {r: v * n for r, v in single.items()}
    if with_pods:
        out[PODS] = out.get(PODS, Decimal(0)) + n
    return out


def usage_of(snap: FlavorSnapshot, r: Request, a: Assignment) -> dict[str, Requests]:
    """What an assignment takes per leaf (ComputeTASNetUsage, with `pods`)."""
    out: dict[str, Requests] = {}
    for values, n in a.domains:
        _add(out.setdefault(snap.leaf_of(values), {}), _scaled(r.single, n, with_pods=True))
    return out
