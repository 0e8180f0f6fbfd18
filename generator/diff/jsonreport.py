"""The review as JSON (`gke-ml-platform diff --format json`), for tools: the same report
the text and Markdown renderers print, as data. Values of changed fields are the values
themselves (absent: null with `"added"`/`"removed"` in `change`); quantities are strings as
the reports print them. Keys are sorted, so the same change gives the same bytes."""
from __future__ import annotations

import json
from decimal import Decimal

from .capacity import fmt
from .field_changes import MISSING, Change
from .objects import label
from .phrases import attention, field_changes, why_line
from .report import Report


def _value(v: object) -> object:
    if v is MISSING:
        return None
    if isinstance(v, Decimal):
        return str(v)
    return v


def _change(c: Change) -> dict:
    return {"path": c.path, "change": c.tag(), "old": _value(c.old), "new": _value(c.new), "member": c.member}


def _object(key) -> dict:
    group, kind, namespace, name = key
    return {"object": label(key), "group": group, "kind": kind, "namespace": namespace, "name": name}


def _side(resource: str, side) -> dict | None:
    if side is None:
        return None
    quota, fewest, most = side
    return {"quota": str(fmt(resource, quota)), "demandFewest": str(fmt(resource, fewest)),
            "demandMost": str(fmt(resource, most)), "headroomAtMost": str(fmt(resource, quota - most))}


def _capacity(r: Report) -> dict:
    return {unit: {
        "queues": [{"queue": q.queue, "flavor": q.flavor, "resource": q.resource,
                    "before": _side(q.resource, q.old), "after": _side(q.resource, q.new)} for q in impact.rows],
        "never": [{**_object(n.workload), "now": n.now, "before": n.before} for n in impact.never],
        "workloads": [{"what": x.what, "subject": x.subject, "item": x.item, "old": x.old, "new": x.new}
                      for x in impact.lines],
        "neverAdmittedAfter": impact.never_now,
    } for unit, impact in r.capacity.items()}


def _immutable(r: Report) -> list[dict]:
    return [{**_object(ic.key), "sections": list(ic.sections),
             "fields": [{"path": f.path, "why": why_line(f), "certain": f.certain,
                         "changes": [_change(c) for c in field_changes(f)]} for f in ic.fields],
             "rollout": {"effect": ic.rollout.effect, "affects": list(ic.rollout.affects),
                         "restarts": ic.rollout.restarts, "argocd": ic.rollout.argocd, "command": ic.rollout.command}}
            for ic in r.immutable]


def render(r: Report) -> str:
    s = r.stale
    doc = {
        "base": {"commit": r.base_commit, "label": r.base_label},
        "stale": None if s is None else {"spec": s.spec, "specChanged": s.spec_changed, "stale": s.stale,
                                         "files": list(s.files), "error": s.error, "regenerated": s.regenerated},
        "summary": {**r.objects.counts(), "immutable": len(r.immutable), "neverAdmitted": r.never},
        "attention": attention(r),
        "notes": list(r.notes),
        "versions": [{"project": v.project, "old": v.old, "new": v.new, "profiles": list(v.profiles)}
                     for v in r.versions],
        "immutable": _immutable(r),
        "capacity": _capacity(r),
        "objects": [{"section": section, "status": e.status, **_object(e.key), "note": e.note,
                     "changes": [_change(c) for c in e.changes]} for section, e in r.objects.entries()],
    }
    return json.dumps(doc, indent=2, sort_keys=True, default=str) + "\n"
