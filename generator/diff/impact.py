"""What a change does to capacity, overlay by overlay: the ClusterQueue (and
cohort) rows whose quota or demand moved, the workloads that now can never be
admitted (or now can), and per workload the accelerators it asks for and its
priority."""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from ..kernel import demand, kueue_api
from ..model import nominal_quota
from .capacity import ACCELERATOR_RESOURCES, Picture, accelerator_summary, hpa_ranges, never_admitted, picture, span
from .objects import Key, Unit, is_overlay, label, sort_key

Side = tuple[Decimal, Decimal, Decimal] | None   # (quota, demand at fewest, demand at most)


@dataclass(frozen=True)
class QueueRow:
    """One resource of one flavor of a ClusterQueue (or of a cohort), before and after."""
    queue: str           # "ClusterQueue cq" or "cohort c"
    flavor: str
    resource: str
    old: Side
    new: Side

    @staticmethod
    def headroom(side: Side) -> Decimal | None:
        return None if side is None else side[0] - side[2]


@dataclass(frozen=True)
class NeverRow:
    workload: Key
    now: str | None      # why it can never be admitted after the change (None: it can)
    before: str | None


@dataclass(frozen=True)
class WorkloadLine:
    what: str            # accelerators | priority
    subject: str         # the object, or "total"
    item: str            # resource or field
    old: str
    new: str


@dataclass
class UnitImpact:
    rows: list[QueueRow] = field(default_factory=list)
    never: list[NeverRow] = field(default_factory=list)
    lines: list[WorkloadLine] = field(default_factory=list)
    never_now: int = 0   # workloads that can never be admitted after the change, changed or not (as plan counts)

    def __bool__(self) -> bool:
        return bool(self.rows or self.never or self.lines or self.never_now)


def _sides(pic: Picture) -> dict[tuple[str, str, str], tuple[Decimal, Decimal, Decimal]]:
    """(queue, flavor, resource) -> (quota, demand at fewest, demand at most): a ClusterQueue's
    nominal quota per flavor, and a cohort's subtree quota (its own plus what its members lend,
    generator/kernel/supply.py) for cohorts of two or more members."""
    out = {}
    tree = pic.tree
    for name, node in tree.cqs.items():
        holder = tree.holders[name]
        for g in holder.groups:
            for fq in g.flavors:
                for r in g.covered:
                    lo, hi = pic.demand({name}, (fq.flavor, r))
                    out[(f"ClusterQueue {name}", fq.flavor, r)] = (node.nominal((fq.flavor, r)), lo, hi)
    for name in sorted(tree.cohorts):
        node = tree.cohorts[name]
        if len(node.child_cqs) + len(node.child_cohorts) < 2:
            continue
        members = {cq.name for cq in node.subtree_cqs()}
        for fr in sorted(node.subtree):
            lo, hi = pic.demand(members, fr)
            out[(f"cohort {name}", fr[0], fr[1])] = (node.subtree[fr], lo, hi)
    return out


def _flavor_rank(pic: Picture) -> dict[str, int]:
    order: list[str] = []
    for name in sorted(pic.tree.holders):
        for g in pic.tree.holders[name].groups:
            order += [fq.flavor for fq in g.flavors if fq.flavor not in order]
    return {f: i for i, f in enumerate(order)}


def queue_rows(old: Picture, new: Picture) -> list[QueueRow]:
    a, b = _sides(old), _sides(new)
    keys = list(a) + [k for k in b if k not in a]
    rows = [QueueRow(q, f, r, a.get((q, f, r)), b.get((q, f, r))) for q, f, r in keys
            if a.get((q, f, r)) != b.get((q, f, r))]
    rank = {r: i for i, r in enumerate(nominal_quota.RESOURCE_ORDER)}   # the order ClusterQueues list them
    flavors = {**_flavor_rank(old), **_flavor_rank(new)}
    return sorted(rows, key=lambda row: (row.queue.startswith("cohort"), row.queue, flavors.get(row.flavor, 1 << 30),
                                         row.flavor, rank.get(row.resource, len(rank)), row.resource))


def never_rows(old: Picture, new: Picture) -> list[NeverRow]:
    out = []
    for key in sorted(set(old.workloads) | set(new.workloads), key=sort_key):
        before = never_admitted(old, old.workloads[key]) if key in old.workloads else None
        now = never_admitted(new, new.workloads[key]) if key in new.workloads else None
        if now != before and (now or key in new.workloads):
            out.append(NeverRow(key, now, before))
    return out


def _workload_keys(old: Unit, new: Unit) -> list[Key]:
    """The workloads on either side, in listing order."""
    return sorted({k for u in (old, new) for k, loc in u.items() if demand.is_workload(loc.obj)}, key=sort_key)


def _accelerator_lines(old: Unit, new: Unit) -> list[WorkloadLine]:
    hpa = hpa_ranges(old), hpa_ranges(new)
    workloads = _workload_keys(old, new)
    lines: list[WorkloadLine] = []
    for resource in ACCELERATOR_RESOURCES:
        lines += _resource_lines(old, new, hpa, workloads, resource)
    return lines


def _resource_lines(old: Unit, new: Unit, hpa: tuple[dict[tuple, tuple[int, int]], dict[tuple, tuple[int, int]]],
                    workloads: list[Key], resource: str) -> list[WorkloadLine]:
    """One accelerator resource: a line per workload whose ask changed, then the total
    over all workloads when any changed and the total moved."""
    lines: list[WorkloadLine] = []
    totals = [[0, 0], [0, 0]]
    for key in workloads:
        a = accelerator_summary(old[key].obj, hpa[0], resource) if key in old else None
        b = accelerator_summary(new[key].obj, hpa[1], resource) if key in new else None
        for side, s in ((0, a), (1, b)):
            if s:
                totals[side][0] += s[1]
                totals[side][1] += s[2]
        if (a and a[0]) == (b and b[0]):
            continue
        lines.append(WorkloadLine("accelerators", label(key), resource,
                                  _accelerator_text(a, key in old, "(new)"),
                                  _accelerator_text(b, key in new, "(removed)")))
    if lines and totals[0] != totals[1]:
        lines.append(WorkloadLine("accelerators", "total", resource, span(*totals[0]), span(*totals[1])))
    return lines


def _accelerator_text(summary: tuple[str, int, int] | None, present: bool, absent: str) -> str:
    """A workload's ask on one side: `absent` when the workload is not on that side,
    "none" when it asks for none of the resource."""
    if summary:
        return summary[0]
    return "none" if present else absent


def _priorities(obj: dict) -> dict[str, str]:
    d = demand.of(obj)
    out = {}
    if d.priority_class_name:
        out["priorityClassName"] = d.priority_class_name
    if d.workload_priority_class:
        out[kueue_api.PRIORITY_LABEL] = d.workload_priority_class
    return out


def _priority_lines(old: Unit, new: Unit) -> list[WorkloadLine]:
    lines = []
    for key in _workload_keys(old, new):
        a = _priorities(old[key].obj) if key in old else None
        b = _priorities(new[key].obj) if key in new else None
        lines += _priority_changes(key, a, b)
    return lines + _class_value_lines(old, new)


def _priority_changes(key: Key, a: dict[str, str] | None, b: dict[str, str] | None) -> list[WorkloadLine]:
    """The priority fields of one workload that differ (None: the workload is not on that side)."""
    lines = []
    for item in sorted(set(a or {}) | set(b or {})):
        va = (a or {}).get(item, "(new)" if a is None else "(unset)")
        vb = (b or {}).get(item, "(removed)" if b is None else "(unset)")
        if va != vb:
            lines.append(WorkloadLine("priority", label(key), item, va, vb))
    return lines


def _class_value_lines(old: Unit, new: Unit) -> list[WorkloadLine]:
    """Values of classes on both sides (new and removed classes are listed as objects)."""
    lines = []
    for key in sorted({k for k in set(old) & set(new) if k[1] in ("PriorityClass", "WorkloadPriorityClass")},
                      key=sort_key):
        va, vb = str(old[key].obj.get("value")), str(new[key].obj.get("value"))
        if va != vb:
            lines.append(WorkloadLine("priority", label(key), "value", va, vb))
    return lines


def unit_impact(old: Unit, new: Unit) -> UnitImpact:
    a, b = picture(old), picture(new)
    now = sum(1 for w in b.workloads.values() if never_admitted(b, w))
    return UnitImpact(queue_rows(a, b), never_rows(a, b), _accelerator_lines(old, new) + _priority_lines(old, new), now)


def impacts(old_units: dict[str, Unit], new_units: dict[str, Unit]) -> dict[str, UnitImpact]:
    """Per overlay (a profile's cluster), what the change does to capacity; overlays with nothing to say left out."""
    out = {}
    for u in sorted(set(old_units) | set(new_units)):
        if is_overlay(u):
            impact = unit_impact(old_units.get(u, {}), new_units.get(u, {}))
            if impact:
                out[u] = impact
    return out
