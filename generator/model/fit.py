"""What can never run, checked on the objects the builders emitted (not on a model of them):
synth calls this with each overlay's objects and the workload that owns each
(generator/builders/tree.py), before anything is written. The demand of an object is
kernel/demand.py's, the one place it is computed (the same module `validate` and `plan` use).

Per queued object (one Kueue reads a queue name from) of a workload, on a GPU or CPU profile:
- Autopilot: every container asks for cpu, memory and ephemeral-storage (Autopilot
  injects defaults the ClusterQueue never sees; the spec check says the same of the spec);
- one pod fits one node of a node pool its nodeSelector allows (per node as the
  ClusterQueue counts it: model/nominal_quota.py);
- one Workload fits what its ClusterQueue can ever give (kernel/supply.py's verdict on
  the ClusterQueues and Cohort the overlay holds)."""
from __future__ import annotations

from decimal import Decimal

from ..kernel import catalog, demand, supply
from ..kernel.errors import Problem
from . import checks, flavors, hardware, nominal_quota
from .check_context import CheckContext
from .kinds import Workload
from .kinds.base import AUTOPILOT_REQUIRED
from .spec import Platform, Profile

NODE_RESOURCES = ("cpu", "memory", "ephemeral-storage")


def problems(p: Platform, prof: Profile, owned: list[tuple[str, str, Workload | None, dict]]) -> list[Problem]:
    """`owned`: per emitted object of a workload or of a user's constructs: (the field path a
    problem is reported at, who made it as a message names it, the workload or None, the object)."""
    if prof.tpu is not None or checks._unknown_machines(prof):
        return []
    ctx = CheckContext(p, prof)
    tree = checks._supply(p, prof)
    pools = _pools(p, prof)
    out: list[Problem] = []
    for where, who, w, obj in owned:
        d = demand.of(obj)
        if d.queue is None or not d.podsets or (w is not None and hardware.accelerator_problems(w, ctx)):
            continue
        what = f"{d.kind} {d.name} of {who} on profile {prof.name!r}"
        if prof.autopilot:
            out += _explicit_requests(where, what, d)
        out += _node_fit(where, what, d, pools)
        cq = checks._cluster_queue_of(p, prof.name, d.namespace, d.queue)
        if tree is not None and cq in tree.cqs:
            verdict = supply.never(tree, cq, list(d.podsets))
            if verdict is not None and verdict.most is not None:
                out.append(Problem(where, f"one {obj['kind']} Workload of {who} on profile {prof.name!r} "
                                          f"can never be admitted: {verdict.message}"))
    return out


def _explicit_requests(where: str, what: str, d: demand.Demand) -> list[Problem]:
    out = []
    for ps in d.podsets:
        for _, c in ps.containers():
            asked = (c.get("resources") or {}).get("requests") or {}
            missing = [r for r in AUTOPILOT_REQUIRED if r not in asked]
            if missing:
                out.append(Problem(where, f"container {c.get('name')!r} of {what} requests no "
                                          f"{', '.join(missing)}: Autopilot would inject defaults the "
                                          "ClusterQueue never sees"))
    return out


def _pools(p: Platform, prof: Profile) -> list[tuple[str, dict[str, str], dict[str, Decimal]]]:
    """(machine type, node labels, what one node holds) per node pool of the profile."""
    out = []
    for f in flavors.flavors(p, prof):
        if f.pool is None or not f.pool.nodes:
            continue
        quota = nominal_quota.pool_quota(f.pool, prof.quota_basis)
        out.append((f.pool.machine_type, f.node_labels, {r: v / f.pool.nodes for r, v in quota.items()}))
    return out


def _node_fit(where: str, what: str, d: demand.Demand, pools) -> list[Problem]:
    out = []
    resources = {*NODE_RESOURCES, *(a.resource for a in catalog.ACCELERATORS.values() if a.resource)}
    for ps in d.podsets:
        selector = ps.spec.get("nodeSelector") or {}
        allowed = [(m, node) for m, labels, node in pools if all(labels.get(k, v) == v for k, v in selector.items())]
        asked = {r: v for r, v in ps.requests.items() if r in resources and v > 0}
        short = [_short(asked, node) for _, node in allowed]
        if short and all(short):   # some pool may hold it, and none does
            r, has = short[0][0]
            out.append(Problem(where, f"one pod of {what} (pod set {ps.name}) requests "
                                      f"{supply.show(r, asked[r])} {r}, but one {allowed[0][0]} node holds "
                                      f"{supply.show(r, has)}: it can never be scheduled"))
    return out


def _short(asked: dict[str, Decimal], node: dict[str, Decimal]) -> list[tuple[str, Decimal]]:
    """(resource, what one node holds) for each resource one node holds too little of."""
    return [(r, node.get(r, Decimal(0))) for r in sorted(asked) if node.get(r, Decimal(0)) < asked[r]]
