"""The words both renderers use: capacity cells, immutable-change lines,
headlines. Kept in one place so text and Markdown say the same thing."""
from __future__ import annotations

from decimal import Decimal

from .capacity import fmt, span
from .compare import ObjectChanges
from .field_changes import Change, field_changes as field_changes_of
from .immutable import Immutable
from .impact import NeverRow, QueueRow
from .objects import label
from .rollout import Rollout
from .stale import HEADLINE, REMEDY, Staleness

SYMBOLS = {"added": "+", "removed": "-", "changed": "~", "moved": ">", "renamed": ">"}


def _delta(resource: str, a: Decimal, b: Decimal) -> str:
    d = b - a
    return "" if d == 0 else f" ({'+' if d > 0 else '-'}{fmt(resource, abs(d))})"


def quota_cell(row: QueueRow) -> str:
    a = fmt(row.resource, row.old[0]) if row.old else "(none)"
    b = fmt(row.resource, row.new[0]) if row.new else "(none)"
    if a == b:
        return a
    extra = _delta(row.resource, row.old[0], row.new[0]) if row.old and row.new else ""
    return f"{a} → {b}{extra}"


def _demand(resource: str, side) -> str:
    return "(none)" if side is None else span(fmt(resource, side[1]), fmt(resource, side[2]))


def demand_cell(row: QueueRow) -> str:
    a, b = _demand(row.resource, row.old), _demand(row.resource, row.new)
    return a if a == b else f"{a} → {b}"


def headroom_cell(row: QueueRow) -> str:
    a, b = QueueRow.headroom(row.old), QueueRow.headroom(row.new)
    ta = "(none)" if a is None else fmt(row.resource, a)
    tb = "(none)" if b is None else fmt(row.resource, b)
    return ta if ta == tb else f"{ta} → {tb}"


def queue_line(row: QueueRow) -> str:
    return (f"{row.queue}, flavor {row.flavor}, {row.resource}: quota {quota_cell(row)}; demand {demand_cell(row)}; "
            f"headroom {headroom_cell(row)}")


def version_line(v) -> str:
    return f"{v.project} {v.old} → {v.new} on {len(v.profiles)} cluster{'s' if len(v.profiles) != 1 else ''} " \
           f"({', '.join(v.profiles)})"


def never_line(n: NeverRow) -> str:
    if n.now:
        return f"cannot be admitted: {label(n.workload)}: {n.now}"
    return f"can be admitted again: {label(n.workload)} (was: {n.before})"


def field_changes(f: Immutable) -> list[Change]:
    """The refused change, down to the fields that differ inside it (a Job's whole template
    is immutable; the reviewer wants the one environment variable that changed)."""
    return field_changes_of(f.old, f.new, f.path, f.key[1]) or [Change(f.path, f.old, f.new)]


def why_line(f: Immutable) -> str:
    lead = "" if f.certain else "may be refused (rule not evaluated here): "
    note = f"; {f.note}" if f.note else ""
    return f"{lead}{f.why} [{f.source}]{note}"


def argocd_line(r: Rollout) -> str:
    if r.argocd is None:
        return "Argo CD: not synced by Argo CD here"
    if r.argocd:
        return "Argo CD: handled: its sync options Force=true,Replace=true make Argo CD delete and recreate it"
    return ("Argo CD: NOT handled by the generated sync options: the sync fails (\"field is immutable\") "
            "until the object is deleted; delete it before syncing, or give it "
            "argocd.argoproj.io/sync-options: Force=true,Replace=true")


def rollout_lines(r: Rollout) -> list[str]:
    out = [f"rollout: delete and recreate; {r.effect}"]
    if r.affects:
        out.append(("restarts: " if r.restarts else "affects: ") + ", ".join(r.affects))
    return out + [argocd_line(r), f"by hand: {r.command}"]


def stale_blocks(s: Staleness) -> list[list[str]]:
    """[headline, details...] when the output is stale, and when it could not be regenerated."""
    out = []
    if s.stale:
        out.append([f"STALE: {HEADLINE}; {REMEDY}", *s.files])
    if s.error:
        out.append([f"Stale check not done: {s.error.splitlines()[0]}", *s.error.splitlines()[1:]])
    return out


def spec_line(s: Staleness) -> str | None:
    if s.spec_changed is None:
        return None
    return f"spec {s.spec}: {'changed' if s.spec_changed else 'unchanged'} since the base"


def counts_text(objects: ObjectChanges, immutable: int, never: int, bold: bool = False) -> str:
    def n(x) -> str:
        return f"**{x}**" if bold else str(x)
    parts = [", ".join(f"{n(v)} {k}" for k, v in objects.counts().items())]
    parts.append(f"{n(immutable)} immutable change{'s' if immutable != 1 else ''}")
    parts.append(f"{n(never)} workload{'s' if never != 1 else ''} can never be admitted")
    return "; ".join(parts)


def attention(r) -> list[str]:
    """What a reviewer must look at first, one line each: stale output, workloads that can never
    be admitted, queues whose demand at the most replicas (an HPA's maximum) exceeds the quota,
    changes the API server refuses as updates, and the policy warnings the change brings."""
    out = []
    if r.stale is not None and r.stale.stale:
        out.append(f"stale output: {HEADLINE}; {REMEDY}")
    for unit, impact in r.capacity.items():
        where = unit.split("/", 1)[-1]
        out += [f"{where}: {never_line(n)}" for n in impact.never if n.now]
        for row in impact.rows:
            room = QueueRow.headroom(row.new)
            if room is not None and room < 0:
                out.append(f"{where}: negative headroom: {queue_line(row)} (at the most replicas the demand "
                           "exceeds the quota: what is over it is never admitted)")
    for ic in r.immutable:
        out.append(f"immutable change: {label(ic.key)} ({', '.join(ic.sections)}): the API server refuses it as "
                   "an update; it is deleted and recreated")
    out += [f"policy warning: {x}" for x in r.policy if x.endswith("(new)")]   # the ones this change brings
    return out
