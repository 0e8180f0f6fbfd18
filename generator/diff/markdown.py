"""The Markdown review (`generator diff --format markdown`), for a pull-request
comment. GitHub refuses comments over 65,536 characters, so the review stays
under LIMIT: when the full text is longer it keeps the summary (stale output,
capacity, immutable changes) and lists the objects as a table, one row each;
whatever still does not fit is cut at a row boundary and the text says what
was left out."""
from __future__ import annotations

from .field_changes import MISSING, Change, show, text_diff
from .objects import label
from .phrases import (
    SYMBOLS,
    attention,
    counts_text,
    demand_cell,
    field_changes,
    headroom_cell,
    never_line,
    quota_cell,
    rollout_lines,
    spec_line,
    stale_blocks,
    version_line,
    why_line,
)
from .report import Report

LIMIT = 65_000
RESERVE = 1_000    # the closing note and the "left out" lines
FULL_REVIEW = "run `gke-ml-platform diff` locally for the full review"


def code(text: str) -> str:
    return "`" + str(text).replace("`", "'") + "`"


def cell(text: str) -> str:
    return code(text).replace("|", "\\|")


def change_lines(c: Change) -> list[str]:
    if any(isinstance(v, str) and "\n" in v for v in (c.old, c.new)):
        a = "" if c.old is MISSING else str(c.old)
        b = "" if c.new is MISSING else str(c.new)
        return [f"  - {code(c.path)}:", "    ```diff", *(f"    {x}" for x in text_diff(a, b)), "    ```"]
    if c.member:
        sign, v = ("+", c.new) if c.old is MISSING else ("-", c.old)
        return [f"  - {code(c.path)}: {sign} {code(show(v))}"]
    return [f"  - {code(c.path)}: {code(show(c.old))} → {code(show(c.new))}"]


def _header(r: Report) -> list[str]:
    out = [f"### Generated manifests: changes since {code(r.base_commit[:12])} ({r.base_label})", ""]
    if r.stale is not None:
        line = spec_line(r.stale)
        if line:
            out += [line, ""]
        for head, *details in stale_blocks(r.stale):
            out += [f"> **{head}**", *(f"> - {code(x)}" for x in details[:20])]
            if len(details) > 20:
                out.append(f"> - … and {len(details) - 20} more")
            out.append("")
    out += [f"> note: {n}" for n in r.notes] + ([""] if r.notes else [])
    return out


def _profile(unit: str) -> str:
    return unit.split("/", 1)[1]


def _capacity(r: Report) -> dict[str, list[str]]:
    """The capacity blocks: the queue table, the never-admitted list, the per-workload table."""
    rows = [f"| {_profile(u)} | {cell(row.queue)} | {cell(row.flavor)} | {cell(row.resource)} | {cell(quota_cell(row))} | "
            f"{cell(demand_cell(row))} | {cell(headroom_cell(row))} |"
            for u, impact in r.capacity.items() for row in impact.rows]
    never = [f"- **{_profile(u)}**: {never_line(n)}" for u, impact in r.capacity.items() for n in impact.never]
    lines = [f"| {_profile(u)} | {x.what} | {cell(x.subject)} | {cell(x.item)} | {cell(x.old)} | {cell(x.new)} |"
             for u, impact in r.capacity.items() for x in impact.lines]
    out = {"capacity": ["#### Capacity", ""] + ([] if r.capacity else ["No change.", ""])}
    if rows:
        out["queues"] = ["| profile | queue | flavor | resource | quota | demand (fewest–most replicas) | "
                         "headroom at most |", "|---|---|---|---|---|---|---|", *rows, ""]
    if never:
        out["never"] = [*never, ""]
    if lines:
        out["workloads"] = ["| profile | what | object | resource / field | before | after |",
                            "|---|---|---|---|---|---|", *lines, ""]
    return out


def _attention(r: Report) -> list[str]:
    """First, before any detail: what needs the reviewer's attention."""
    lines = attention(r)
    if not lines:
        return []
    return [f"#### Needs attention ({len(lines)})", "", *(f"- :warning: {_md_escape(x)}" for x in lines), ""]


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;")


def _versions(r: Report) -> list[str]:
    if not r.versions:
        return []
    return ["#### Versions", "", *(f"- {version_line(v)}" for v in r.versions), ""]


def _immutable(r: Report) -> list[str]:
    if not r.immutable:
        return ["#### Immutable changes", "", "None.", ""]
    out = ["#### Immutable changes", "", f"Refused by the API server as updates ({len(r.immutable)}):", ""]
    for ic in r.immutable:
        out.append(f"- **{ic.key[1]}** {code(label(ic.key).split(' ', 1)[1])} ({', '.join(ic.sections)})")
        for f in ic.fields:
            out += [line for c in field_changes(f) for line in change_lines(c)]
            out.append(f"  - why: {why_line(f)}")
        out += [f"  - {x}" for x in rollout_lines(ic.rollout)]
    return out + [""]


def _section_title(r: Report, section: str) -> str:
    suffix = " (new overlay)" if section in r.objects.new_overlays else (
        " (overlay removed)" if section in r.objects.removed_overlays else "")
    return f"#### {code(section)}{suffix}"


def _objects_full(r: Report) -> list[str]:
    out = []
    for section, entries in r.objects.sections.items():
        out += [_section_title(r, section), ""]
        for e in entries:
            note = f" ({e.note})" if e.note else ""
            out.append(f"- {code(SYMBOLS[e.status])} **{e.key[1]}** {code(label(e.key).split(' ', 1)[1])}{note}")
            out += [line for c in e.changes for line in change_lines(c)]
        out.append("")
    return out


def _objects_table(r: Report) -> list[str]:
    out = ["#### Objects", "", "| where | | object | field changes |", "|---|---|---|---|"]
    for section, e in r.objects.entries():
        out.append(f"| {cell(section)} | {cell(SYMBOLS[e.status])} | {cell(label(e.key))} | {len(e.changes)} |")
    return out + [""]


def _fit(block: list[str], budget: int, what: str) -> tuple[list[str], str | None]:
    """As many lines of `block` as fit in `budget` characters, and what was cut."""
    size = sum(len(x) + 1 for x in block)
    if size <= budget:
        return block, None
    kept, used = [], 0
    for line in block:
        if used + len(line) + 1 > budget:
            break
        kept.append(line)
        used += len(line) + 1
    cut = f"{len(block) - len(kept)} lines of {what}"
    return kept + ["", f"_… {cut} left out._", ""], cut


# Display order, and the order in which blocks get room when the review is too long:
# what can break the cluster first, the per-workload detail and the object list last.
ORDER = ("attention", "versions", "immutable", "capacity", "queues", "never", "workloads", "objects")
PRIORITY = ("attention", "versions", "immutable", "capacity", "queues", "never", "workloads", "objects")
NAMES = {"attention": "what needs attention", "versions": "version bumps",
         "queues": "the capacity table", "never": "never-admitted workloads", "immutable": "immutable changes",
         "workloads": "the per-workload table", "objects": "the object table"}


def _compact(r: Report, head: list[str]) -> str:
    blocks = {"attention": _attention(r), "versions": _versions(r), **_capacity(r), "immutable": _immutable(r),
              "objects": _objects_table(r)}
    budget = LIMIT - RESERVE - sum(len(x) + 1 for x in head)
    kept: dict[str, list[str]] = {}
    cuts = ["the field-level changes of each object"]
    for name in PRIORITY:
        if name not in blocks:
            continue
        # Per-workload rows may take a third of what is left: the object list needs room too.
        room = budget // 3 if name == "workloads" else budget
        kept[name], cut = _fit(blocks[name], max(room, 0), NAMES.get(name, name))
        budget -= sum(len(x) + 1 for x in kept[name])
        if cut:
            cuts.append(cut)
    out = head + [line for name in ORDER for line in kept.get(name, [])]
    out.append(f"_Left out to stay under GitHub's comment limit: {'; '.join(cuts)}; {FULL_REVIEW}._")
    return "\n".join(out) + "\n"


def render(r: Report) -> str:
    head = _header(r)
    if not any(r.objects.counts().values()):
        return "\n".join(head + ["No changes to generated objects.", ""])
    head += [counts_text(r.objects, len(r.immutable), r.never, bold=True), ""]
    if r.policy:   # kept in the head: short, and what a reviewer must weigh
        head += [f"**Policy warnings ({len(r.policy)})**", "", *(f"- {cell(x)}" for x in r.policy), ""]
    summary = _attention(r) + _versions(r) + _immutable(r) + \
        [line for block in _capacity(r).values() for line in block]
    full = "\n".join(head + summary + _objects_full(r))
    return full if len(full) <= LIMIT else _compact(r, head)
