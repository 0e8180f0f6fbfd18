"""Flavor assignment, as Kueue's flavor assigner does it (Kueue v0.17.4
pkg/scheduler/flavorassigner/flavorassigner.go, podset_reducer.go).

For each pod set, for each resource group it requests, the flavors are tried
in the ClusterQueue's order, starting after the one tried last time (the
Workload's last assignment, reset when the queue's quota or usage shrinks):
- a flavor is skipped when its nodeTaints are not tolerated (the pods'
  tolerations plus the flavor's own) or its nodeLabels contradict the pods'
  nodeSelector or required node affinity (only label keys the group's flavors
  use count);
- each resource is then Fit (free quota, maybe borrowed from the cohort),
  Preempt (preemption could make room: reclaim, priority, or no candidates),
  or NoFit (more than the queue could ever get);
- flavorFungibility decides whether to stop at this flavor or try the next
  (whenCanBorrow / whenCanPreempt: MayStopSearch or TryNextFlavor), and
  `preference` which of the tried ones is best.
The `pods` resource counts one per pod when the ClusterQueue covers it.
A TPU flavor checked by the slice controller must also place every slice
(packer.py): when quota fits but slices do not, the pod set needs preemption;
when they could not fit even in an empty reservation, it never fits.
Partial admission searches the largest pod counts between the full counts and
the minimums (kueue.x-k8s.io/job-min-parallelism, Workload minCount) that fit."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from ..kernel import supply
from ..kernel.catalog import TpuShape
from ..kernel.quantity import show as fmt
from . import overlay, packer, quota, tasassign
from .quota import FR, ZERO

# Granular modes, worst to best (flavorassigner.go preemptionMode).
NOFIT, NO_CANDIDATES, PREEMPT, RECLAIM, FIT = range(5)
# Representative modes (FlavorAssignmentMode).
M_NOFIT, M_PREEMPT, M_FIT = 0, 1, 2
MODE_NAMES = {M_NOFIT: "NoFit", M_PREEMPT: "Preempt", M_FIT: "Fit"}


def _mode(pm: int) -> int:
    return M_NOFIT if pm == NOFIT else M_FIT if pm == FIT else M_PREEMPT


@dataclass
class Choice:
    flavor: str
    mode: int
    borrow: int
    tried: int = -1


@dataclass
class PodSetAssignment:
    name: str
    count: int
    requests: dict[str, Decimal]           # the whole pod set, with `pods` when covered
    flavors: dict[str, Choice] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    forced: int | None = None              # mode set by the slice check

    def mode(self) -> int:
        if self.forced is not None:
            return self.forced
        if not self.reasons:
            return M_FIT
        if not self.flavors:
            return M_NOFIT
        return min(c.mode for c in self.flavors.values())


@dataclass
class Assignment:
    podsets: list[PodSetAssignment] = field(default_factory=list)
    borrowing: int = 0
    usage: dict[FR, Decimal] = field(default_factory=dict)
    last_tried: list[dict[str, int]] = field(default_factory=list)
    counts: tuple[int, ...] | None = None  # partial admission: reduced pod counts
    shapes: dict[str, list[TpuShape]] = field(default_factory=dict)   # TPU flavor -> slices
    topology: list = field(default_factory=list)       # tasassign.Placed: each TAS pod set's domains
    tas_requests: dict = field(default_factory=dict)   # TAS flavor -> (pod set, tas.Request) when preempting

    def mode(self) -> int:
        if not self.podsets:
            return M_NOFIT
        return min(ps.mode() for ps in self.podsets)

    def flavors(self) -> dict[str, str]:
        """resource -> flavor; when pod sets take different flavors for one resource, each of
        them in pod-set order ("on-demand, spot")."""
        seen: dict[str, list[str]] = {}
        for ps in self.podsets:
            for r, c in ps.flavors.items():
                names = seen.setdefault(r, [])
                if c.flavor not in names:
                    names.append(c.flavor)
        return {r: ", ".join(names) for r, names in seen.items()}

    def flavor_names(self) -> list[str]:
        """Every flavor the assignment holds quota in (pod sets may differ for one resource)."""
        return sorted({f for f, _ in self.usage} | {c.flavor for ps in self.podsets for c in ps.flavors.values()})

    def frs_need_preemption(self) -> set[FR]:
        return {(c.flavor, r) for ps in self.podsets for r, c in ps.flavors.items() if c.mode == M_PREEMPT}

    def message(self) -> str:
        parts = []
        for ps in self.podsets:
            if ps.mode() == M_FIT and not ps.reasons:
                continue
            parts.append(f"pod set {ps.name}: " + ", ".join(sorted(dict.fromkeys(ps.reasons))))
        return "; ".join(parts)

    def pending_flavors(self) -> bool:
        return any(i != -1 for d in self.last_tried for i in d.values())


@dataclass
class Context:
    """What one assignment needs: the queue, its node in the quota tree, the
    flavors, fair sharing, the TPU reservations and the preemption oracle."""
    cq: overlay.ClusterQueue
    node: quota.Node
    flavors: dict[str, overlay.ResourceFlavor]
    fair_sharing: bool
    reservations: dict[str, packer.Reservation]
    oracle: Callable[[FR, Decimal], tuple[int, int]]
    last_tried: list[dict[str, int]] | None = None
    static: dict[str, packer.StaticPool] = field(default_factory=dict)
    # TAS flavors' domain trees (plan/tas.py) and, per flavor, what is used on each leaf now.
    tas: dict = field(default_factory=dict)
    tas_used: Callable | None = None
    tas_enabled: bool = True               # feature gate TopologyAwareScheduling (beta, on since v0.14)


def assign(ctx: Context, wl: overlay.Workload, counts: tuple[int, ...] | None = None) -> Assignment:
    a = Assignment(counts=counts)
    covers_pods = ctx.cq.group_of(overlay.PODS) is not None
    for i, ps in enumerate(wl.podsets):
        count = ps.count if counts is None else counts[i]
        req = {r: v * count for r, v in ps.requests.items()}
        if covers_pods:
            req[overlay.PODS] = Decimal(count)
        psa = PodSetAssignment(ps.name, count, req)
        chosen, reasons = _pod_set_flavors(ctx, i, ps, req, a.usage)
        psa.flavors = {r: c for r, c in (chosen or {}).items() if r in req}
        psa.reasons = reasons
        _append(a, psa)
        if chosen is None:
            return a
    if a.mode() != M_NOFIT:
        _check_slices(ctx, wl, a)
        tasassign.place(ctx, wl, a)   # topology-aware pod sets on their flavor's nodes
    return a


def _pod_set_flavors(ctx: Context, i: int, ps: overlay.PodSet, req: dict[str, Decimal],
                     assumed: dict[FR, Decimal]) -> tuple[dict[str, Choice] | None, list[str]]:
    """A flavor for each resource of one pod set (a resource group's flavor covers all its
    resources); None with the reasons when one has none."""
    chosen: dict[str, Choice] = {}
    reasons: list[str] = []
    for res in sorted(req):
        if (req[res] == 0 and ctx.cq.group_of(res) is None) or res in chosen:
            continue            # zero requests of uncovered resources are ignored (#8079)
        flavors, why = _find_flavor(ctx, i, ps, req, res, assumed)
        if not flavors:
            return None, why
        chosen.update(flavors)
        reasons += why
    return chosen, reasons


def _append(a: Assignment, psa: PodSetAssignment) -> None:
    a.podsets.append(psa)
    tried = {}
    for res, c in psa.flavors.items():
        a.borrowing = max(a.borrowing, c.borrow)
        fr = (c.flavor, res)
        a.usage[fr] = a.usage.get(fr, ZERO) + psa.requests[res]
        tried[res] = c.tried
    a.last_tried.append(tried)


def _next_flavor(ctx: Context, ps_index: int, res: str) -> int:
    last = ctx.last_tried
    if last is None or ps_index >= len(last) or res not in last[ps_index]:
        return 0
    return last[ps_index][res] + 1


def _find_flavor(ctx: Context, ps_index: int, ps: overlay.PodSet, req: dict[str, Decimal], res: str,
                 assumed: dict[FR, Decimal]) -> tuple[dict[str, Choice], list[str]]:
    group = ctx.cq.group_of(res)
    if group is None:
        return {}, [(f"resource {res} unavailable in ClusterQueue {ctx.cq.name} "
                    f"(covered: {', '.join(ctx.cq.covered()) or 'none'})")]
    requests = {r: v for r, v in req.items() if r in group.covered}
    reasons: list[str] = []
    best, best_mode, attempted = _scan(ctx, group, _next_flavor(ctx, ps_index, res), ps, requests, assumed, reasons)
    for c in (best or {}).values():
        c.tried = -1 if attempted == len(group.flavors) - 1 else attempted
    if best is None:
        return {}, reasons or [f"no flavor of ClusterQueue {ctx.cq.name} left to try for {res}"]
    if best_mode[0] == FIT:
        return best, []
    return best, reasons


def _scan(ctx: Context, group, start: int, ps: overlay.PodSet, requests: dict[str, Decimal],
          assumed: dict[FR, Decimal], reasons: list[str]) -> tuple[dict[str, Choice] | None, tuple[int, int], int]:
    """The group's flavors from `start`, in order, as fungibility says: (the best choices, their
    mode, the index of the last flavor tried)."""
    label_keys = {k for f in group.flavors if f.flavor in ctx.flavors for k in ctx.flavors[f.flavor].node_labels}
    best: dict[str, Choice] | None = None
    best_mode = (NOFIT, 1 << 30)
    attempted = -1
    for idx in range(start, len(group.flavors)):
        attempted = idx
        fq = group.flavors[idx]
        mismatch = _check_flavor(ctx, fq.flavor, ps, label_keys, group.covered)
        if mismatch:
            reasons.append(mismatch)
            continue
        choices, rep = _in_flavor(ctx, fq.flavor, requests, assumed, reasons)
        if not _try_next(rep, ctx.cq.fungibility):
            return choices, rep, attempted
        if _preferred(rep, best_mode, ctx.cq.fungibility):
            best, best_mode = choices, rep
    return best, best_mode, attempted


def _in_flavor(ctx: Context, flavor: str, requests: dict[str, Decimal], assumed: dict[FR, Decimal],
               reasons: list[str]) -> tuple[dict[str, Choice], tuple[int, int]]:
    """How the requests fit one flavor: a choice per resource, and the worst (mode, borrowing)
    as the flavor's representative; stops at the first resource that does not fit."""
    choices: dict[str, Choice] = {}
    rep = (FIT, 0)
    for r in sorted(requests):
        fr = (flavor, r)
        pm, borrow, why = _fits_quota(ctx, fr, assumed.get(fr, ZERO), requests[r])
        reasons += why
        if _preferred(rep, (pm, borrow), ctx.cq.fungibility):
            rep = (pm, borrow)
        if rep[0] == NOFIT:
            break
        choices[r] = Choice(flavor, _mode(pm), borrow)
    return choices, rep


def _preferred(a: tuple[int, int], b: tuple[int, int], fung: overlay.Fungibility) -> bool:
    """isPreferred: a better than b (BorrowingOverPreemption unless told otherwise)."""
    if a[0] == NOFIT:
        return False
    if b[0] == NOFIT:
        return True
    if fung.preference == "PreemptionOverBorrowing":
        if a[1] != b[1]:
            return a[1] < b[1]
        return a[0] > b[0]
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] < b[1]


def _try_next(rep: tuple[int, int], fung: overlay.Fungibility) -> bool:
    if rep[0] in (NOFIT, NO_CANDIDATES):
        return True
    if rep[0] in (PREEMPT, RECLAIM) and fung.when_can_preempt == "TryNextFlavor":
        return True
    return rep[1] != 0 and fung.when_can_borrow == "TryNextFlavor"


def _check_flavor(ctx: Context, name: str, ps: overlay.PodSet, label_keys: set[str], covered) -> str | None:
    rf = ctx.flavors.get(name)
    if rf is None:
        return f"flavor {name} not found"
    tas_rule = tasassign.flavor_rule(ctx, ps, rf, set(covered))     # checkPodSetAndFlavorMatchForTAS first
    if tas_rule:
        return tas_rule
    return supply.flavor_mismatch(rf, ps.spec, label_keys)   # the one reading of taints and node labels


def _fits_quota(ctx: Context, fr: FR, assumed: Decimal, request: Decimal) -> tuple[int, int, list[str]]:
    node = ctx.node
    flavor, res = fr
    avail = quota.available(node, fr)
    most = quota.potential_available(node, fr)
    val = assumed + request
    if val > most:
        prev = f" (plus {fmt(res, assumed)} for the pod sets before)" if assumed else ""
        return NOFIT, 0, [f"requests {fmt(res, request)} {res}{prev}, more than ClusterQueue {ctx.cq.name}'s maximum "
                          f"capacity {fmt(res, most)} in flavor {flavor}: short by {fmt(res, val - most)}"
                          + in_slices(ctx.static.get(flavor), res, val, most)]
    borrow, may_reclaim = quota.lowest_subtree_that_fits(node, fr, val)
    if val <= avail:
        return FIT, borrow, []
    why = [f"insufficient unused quota for {res} in flavor {flavor}, {fmt(res, val - avail)} more needed"]
    pre = ctx.cq.preemption
    while_borrowing = pre.borrow != "Never" or (ctx.fair_sharing and pre.reclaim != "Never")
    if val <= node.nominal(fr) or may_reclaim or while_borrowing:
        pm, borrow_after = ctx.oracle(fr, val)
        return pm, borrow_after, why
    return NOFIT, borrow, why


def in_slices(pool: packer.StaticPool | None, res: str, want: Decimal, most: Decimal) -> str:
    """A static TPU pool's quota said in slices: 3 slices of 4x4 asked, 2 there (what only the
    planner knows, after the supply model's verdict)."""
    if pool is None or res != pool.resource or want % pool.shape.chips:
        return ""
    return (f" ({want // pool.shape.chips} slices of {pool.shape} asked; "
            f"{pool.slices_in(most)} there, {pool.shape.chips} chips each)")


def _check_slices(ctx: Context, wl: overlay.Workload, a: Assignment) -> None:
    """The TPU slices of each pod set assigned to a TPU flavor: a dynamic reservation
    of cubes, or static node pools of one slice shape."""
    by_flavor: dict[str, list[int]] = {}
    for i, psa in enumerate(a.podsets):
        for res, c in psa.flavors.items():
            pool = ctx.reservations.get(c.flavor) or ctx.static.get(c.flavor)
            if pool is not None and res == pool.resource:
                by_flavor.setdefault(c.flavor, []).append(i)
    for flavor, indices in sorted(by_flavor.items()):
        counts = tuple(a.podsets[i].count if i in indices else 0 for i in range(len(wl.podsets)))
        if flavor in ctx.reservations:
            _check_dynamic(ctx.reservations[flavor], flavor, wl, a, indices, counts)
        else:
            _check_static(ctx.static[flavor], wl, a, indices, counts)


def _check_static(pool: packer.StaticPool, wl: overlay.Workload, a: Assignment, indices: list[int],
                  counts: tuple[int, ...]) -> None:
    """Each slice group must be one whole slice of the pool's shape; quota then counts
    slices exactly (the flavor's quota is all the pools' chips)."""
    why = [p for g in wl.static_groups(pool.resource, counts) if (p := pool.problem(g))]
    if why:
        why.append("Kueue's quota would admit it, but GKE has no node pool for such pods: they would stay pending")
        for i in indices:
            a.podsets[i].forced = M_NOFIT
            a.podsets[i].reasons += why


def _check_dynamic(res: packer.Reservation, flavor: str, wl: overlay.Workload, a: Assignment, indices: list[int],
                   counts: tuple[int, ...]) -> None:
    shapes, problems = wl.slices(res.gen, counts)
    try:
        empty_ok = not problems and res.fits_empty(shapes)
    except packer.ShapeError as e:
        problems, empty_ok = [str(e)], False
    if not empty_ok:
        why = problems or [(f"its slices ({describe_shapes(shapes)}) do not fit in the reservation of "
                           f"{cubes(res.n_cubes)} even when it is empty")]
        for i in indices:
            a.podsets[i].forced = M_NOFIT
            a.podsets[i].reasons += why
        return
    a.shapes[flavor] = shapes
    if a.mode() == M_FIT and not res.fits(shapes):
        for i in indices:
            a.podsets[i].forced = M_PREEMPT
            a.podsets[i].reasons.append(f"no room for {describe_shapes(shapes)} in {flavor} "
                                        f"({res.free_cubes()} of {res.n_cubes} cubes empty)")
            for c in a.podsets[i].flavors.values():
                c.mode = M_PREEMPT
    elif a.mode() == M_PREEMPT:
        for i in indices:
            for c in a.podsets[i].flavors.values():
                if c.flavor == flavor:
                    c.mode = M_PREEMPT


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def cubes(n: int) -> str:
    return plural(n, "cube")


def describe_shapes(shapes: list[TpuShape]) -> str:
    counts: dict[TpuShape, int] = {}
    for s in shapes:
        counts[s] = counts.get(s, 0) + 1
    return ", ".join(f"{n} slices of {s}" if n > 1 else f"1 slice of {s}"
                     for s, n in sorted(counts.items(), key=lambda kv: -kv[0].chips))


# ---------------------------------------------------------------- partial admission
def reduced_counts(wl: overlay.Workload, fits: Callable[[tuple[int, ...]], bool]) -> tuple[int, ...] | None:
    """PodSetReducer.Search: binary search from the full counts down to the minimums for
    the largest counts that fit; None when no count between them does."""
    full = [ps.count for ps in wl.podsets]
    deltas = [ps.count - (ps.min_count if ps.min_count is not None else ps.count) for ps in wl.podsets]
    total = sum(deltas)
    if total == 0:
        return None

    def counts(i: int) -> tuple[int, ...]:
        return tuple(f - d * i // total for f, d in zip(full, deltas, strict=True))

    last_good, found = 0, None
    lo, hi = 0, total + 1
    while lo < hi:
        mid = (lo + hi) // 2
        c = counts(mid)
        if fits(c):
            last_good, found = mid, c
            hi = mid
        else:
            lo = mid + 1
    return found if lo == last_good else None
