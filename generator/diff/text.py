"""The plain-text review (`generator diff`, the default format): stale output
first, then the summary, controller version bumps, immutable changes, capacity
per overlay, and every object change, all in full: what can break a cluster
before what the change does to the queues."""
from __future__ import annotations

from .field_changes import MISSING, Change, show, text_diff
from .objects import label
from .phrases import (
    SYMBOLS,
    attention,
    counts_text,
    field_changes,
    never_line,
    queue_line,
    rollout_lines,
    spec_line,
    stale_blocks,
    version_line,
    why_line,
)
from .report import Report

ONE_LINE = 100   # old and new longer than this together go on lines of their own


def _multiline(v) -> bool:
    return isinstance(v, str) and "\n" in v


def change_lines(c: Change) -> list[str]:
    if _multiline(c.old) or _multiline(c.new):
        a = "" if c.old is MISSING else str(c.old)
        b = "" if c.new is MISSING else str(c.new)
        return [f"{c.path}:"] + [f"  {line}" for line in text_diff(a, b)]
    if c.member:
        return [f"{c.path}: {'+' if c.old is MISSING else '-'} {show(c.new if c.old is MISSING else c.old)}"]
    a, b = show(c.old), show(c.new)
    if len(a) + len(b) <= ONE_LINE:
        return [f"{c.path}: {a} → {b}"]
    return [f"{c.path}:", f"  - {a}", f"  + {b}"]


def _header(r: Report) -> list[str]:
    out = [f"diff: {r.base_commit[:12]} ({r.base_label}) → working tree"]
    if r.stale is not None:
        line = spec_line(r.stale)
        if line:
            out.append(line)
        for head, *details in stale_blocks(r.stale):
            out += ["", head, *(f"  {x}" for x in details)]
    out += [f"note: {n}" for n in r.notes]
    return out


def _capacity(r: Report) -> list[str]:
    if not r.capacity:
        return ["Capacity: no change"]
    out = ["Capacity"]
    for unit, impact in r.capacity.items():
        out.append(f"  {unit}")
        out += [f"    {queue_line(row)}" for row in impact.rows]
        out += [f"    {never_line(n)}" for n in impact.never]
        out += [f"    {x.what} {x.subject} {x.item}: {x.old} → {x.new}" for x in impact.lines]
    return out


def _immutable(r: Report) -> list[str]:
    if not r.immutable:
        return ["Immutable changes: none"]
    out = [f"Immutable changes ({len(r.immutable)}): the API server refuses these as updates"]
    for ic in r.immutable:
        out.append(f"  {label(ic.key)} ({', '.join(ic.sections)})")
        for f in ic.fields:
            out += [f"      {line}" for c in field_changes(f) for line in change_lines(c)]
            out.append(f"        {why_line(f)}")
        out += [f"      {x}" for x in rollout_lines(ic.rollout)]
    return out


def _objects(r: Report) -> list[str]:
    out = [f"Objects: {counts_text(r.objects, 0, 0).split(';')[0]}"]
    for section, entries in r.objects.sections.items():
        suffix = " (new overlay)" if section in r.objects.new_overlays else (
            " (overlay removed)" if section in r.objects.removed_overlays else "")
        out += ["", f"  {section}{suffix}"]
        for e in entries:
            note = f" ({e.note})" if e.note else ""
            out.append(f"    {SYMBOLS[e.status]} {label(e.key)}{note}")
            out += [f"        {line}" for c in e.changes for line in change_lines(c)]
    return out


def render(r: Report) -> str:
    out = _header(r)
    if not any(r.objects.counts().values()):
        return "\n".join(out + ["No changes to generated objects."]) + "\n"
    out += ["", "Summary: " + counts_text(r.objects, len(r.immutable), r.never), ""]
    needs = attention(r)
    if needs:
        out += [f"Needs attention ({len(needs)}):", *(f"  ! {x}" for x in needs), ""]
    if r.policy:
        out += [f"Policy warnings ({len(r.policy)})", *(f"  {x}" for x in r.policy), ""]
    if r.versions:
        out += ["Versions", *(f"  {version_line(v)}" for v in r.versions), ""]
    out += _immutable(r) + [""] + _capacity(r) + [""] + _objects(r)
    return "\n".join(out) + "\n"
