"""Topology-aware scheduling in flavor assignment, as Kueue v0.17.4 does it
(pkg/scheduler/flavorassigner/tas_flavorassigner.go and the TAS part of
flavorassigner.go Assign; pkg/scheduler/scheduler.go updateAssignmentForTAS):

- checkPodSetAndFlavorMatchForTAS: a pod set that asks for TAS (a podset topology
  annotation) skips flavors without a Topology, unless the group covers none of its
  resources, and flavors whose Topology lacks the level it asks for; a pod set that does not
  ask skips TAS flavors, unless every flavor of the ClusterQueue is a TAS flavor (then TAS is
  implied: unconstrained, at the lowest level);
- after quota: when every pod set fits the quota, each TAS pod set is placed on its flavor's
  free nodes; one that does not fit turns the assignment into Preempt, with Kueue's reason;
  when preemption is needed, the pod sets are placed on empty nodes: one that does not fit
  even then is NoFit (never preempt for nothing), otherwise every TAS pod set needs
  preemption (nodes may need freeing even where quota is free).
- the preemption oracle checks, after each candidate it removes, that the pod sets then fit
  the nodes (preemption.go workloadFits)."""
from __future__ import annotations

from dataclasses import dataclass

from . import tas

M_NOFIT, M_PREEMPT, M_FIT = 0, 1, 2      # assign.py's representative modes


@dataclass(frozen=True)
class Placed:
    """One pod set's place on a TAS flavor: its request and its topology assignment."""
    index: int
    flavor: str
    request: tas.Request
    assignment: tas.Assignment


def modelled(rf) -> bool:
    """A flavor this module places on: a Topology, and not TPU slices (packer.py places those)."""
    return bool(rf.topology) and rf.tpu_generation() is None


def tas_only(cq, flavors: dict) -> bool:
    """ClusterQueueSnapshot.IsTASOnly: every flavor of the queue has a Topology."""
    names = cq.flavor_names()
    return bool(names) and all(f in flavors and modelled(flavors[f]) for f in names)


def requested(ps, cq, flavors: dict) -> bool:
    """isTASRequested: asked for, or implied by a TAS-only ClusterQueue."""
    return tas.requests_tas(ps.annotations) or tas_only(cq, flavors)


def flavor_rule(ctx, ps, rf, covered: set[str]) -> str | None:
    """checkPodSetAndFlavorMatchForTAS: why this flavor is skipped for this pod set, or None."""
    if not ctx.tas_enabled or (rf.topology and not modelled(rf)):
        return None                                              # TAS off; TPU slices: packer.py
    if requested(ps, ctx.cq, ctx.flavors):
        if not tas.requests_tas(ps.annotations):
            return None                                          # isTASImplied
        if not rf.topology:
            if not any(r in covered for r in ps.requests):       # hasOverlapWithPodRequestedResources
                return None
            return f"Flavor \"{rf.name}\" does not support TopologyAwareScheduling"
        snap = ctx.tas.get(rf.name)
        if snap is None:
            return f"Flavor \"{rf.name}\" information missing in TAS cache"
        if not snap.has_level(ps.annotations):
            return f"Flavor \"{rf.name}\" does not contain the requested level"
        return None
    if rf.topology:
        return f"Flavor \"{rf.name}\" supports only TopologyAwareScheduling"
    return None


def requests(ctx, wl, a) -> tuple[dict[str, list[tuple[int, tas.Request]]], list[tuple[int, str]]]:
    """WorkloadsTopologyRequests: per TAS flavor, the pod sets placed there, in order; and the
    pod sets whose request cannot be made (more than one TAS flavor)."""
    out: dict[str, list[tuple[int, tas.Request]]] = {}
    errors: list[tuple[int, str]] = []
    implied_cq = tas_only(ctx.cq, ctx.flavors)
    for i, ps in enumerate(wl.podsets):
        psa = a.podsets[i] if i < len(a.podsets) else None
        if psa is None or psa.count == 0 or not (tas.requests_tas(ps.annotations) or implied_cq):
            continue
        names = sorted({c.flavor for c in psa.flavors.values() if c.flavor in ctx.tas})
        if not names:
            if not psa.flavors:
                continue
            errors.append((i, "no TAS flavor assigned"))
            continue
        if len(names) > 1:
            errors.append((i, f"more than one TAS flavor assigned: {', '.join(names)}"))
            continue
        single = {r: v for r, v in ps.requests.items() if r != "pods"}
        req = tas.Request(ps.name, psa.count, single, dict(ps.annotations), dict(ps.spec),
                          implied=not tas.requests_tas(ps.annotations))
        out.setdefault(names[0], []).append((i, req))
    return out, errors


def find(ctx, reqs: dict[str, list[tuple[int, tas.Request]]], simulate_empty: bool = False
         ) -> tuple[list[Placed], tuple[int, str] | None]:
    """ClusterQueueSnapshot.FindTopologyAssignmentsForWorkload: flavor by flavor (sorted)."""
    placed: list[Placed] = []
    for flavor in sorted(reqs):
        snap = ctx.tas[flavor]
        items = reqs[flavor]
        got, failure = snap.find([r for _, r in items], ctx.tas_used(flavor), simulate_empty)
        for i, r in items:
            if r.name in got:
                placed.append(Placed(i, flavor, r, got[r.name]))
        if failure is not None:
            index = next(i for i, r in items if r.name == failure[0])
            return placed, (index, failure[1])
    return placed, None


def place(ctx, wl, a) -> None:
    """The TAS step of Assign, after quota (modes are the assignment's)."""
    if not ctx.tas:
        return
    reqs, errors = requests(ctx, wl, a)
    for i, why in errors:
        a.podsets[i].forced = M_NOFIT
        a.podsets[i].reasons.append(why)
    if errors or not reqs:
        return
    if a.mode() == M_FIT:
        placed, failure = find(ctx, reqs)
        if failure is None:
            a.topology = placed
            return
        psa = a.podsets[failure[0]]
        psa.reasons.append(failure[1])
        _set_mode(psa, M_PREEMPT)
    if a.mode() == M_PREEMPT:
        placed, failure = find(ctx, reqs, simulate_empty=True)
        if failure is not None:
            psa = a.podsets[failure[0]]
            if failure[1] not in psa.reasons:
                psa.reasons.append(failure[1])
            psa.forced = M_NOFIT
            return
        a.tas_requests = reqs
        for items in reqs.values():
            for i, _ in items:
                _set_mode(a.podsets[i], M_PREEMPT)


def _set_mode(psa, mode: int) -> None:
    """PodSetAssignment.updateMode: every flavor of the pod set takes the mode."""
    for c in psa.flavors.values():
        c.mode = mode
    psa.forced = mode
    if not psa.reasons:
        psa.reasons.append("needs room on the topology's nodes")


def after_targets(ctx, a, removed: list, snap) -> None:
    """updateAssignmentForTAS: a workload that preempts gets its topology assignment as if
    its targets were gone (none: as if the nodes were empty), to reserve those nodes."""
    if not a.tas_requests:
        return
    for t in removed:
        snap.remove(t.info)
    placed, failure = find(ctx, a.tas_requests, simulate_empty=not removed)
    for t in removed:
        snap.add(t.info)
    a.topology = placed if failure is None else []


def fits_now(ctx, reqs) -> bool:
    """preemption.go workloadFits: the TAS part, against the snapshot as it is."""
    return find(ctx, reqs)[1] is None


def describe(placed: list[Placed]) -> str:
    """Each TAS pod set's domains, for the report: `pod set main on b200 at kubernetes.io/hostname
    node-1: 2, node-2: 2`."""
    return "; ".join(f"pod set {p.request.name} on {p.flavor} at {'/'.join(p.assignment.levels)} "
                     f"{p.assignment.describe()}" for p in placed)


def as_json(placed: list[Placed]) -> dict:
    return {p.request.name: {"flavor": p.flavor, "levels": list(p.assignment.levels),
                             "domains": [{"values": list(v), "count": n} for v, n in p.assignment.domains]}
            for p in placed}
