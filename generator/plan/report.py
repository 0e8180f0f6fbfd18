"""A plan as text (terminal), JSON (tools) or Markdown (a pull-request comment)."""
from __future__ import annotations

import json
from decimal import Decimal

from ..kernel.quantity import show as fmt
from .simulate import Plan, StepResult, Usage

FORMATS = ("text", "json", "markdown")
STATE_LABEL = {
    "admitted": "admitted",
    "reserved": "reserved",
    "preempted": "PREEMPTED",
    "pending": "pending",
    "never": "NEVER",
    "unmanaged": "not queued",
    "finished": "finished",
}


def render(plan: Plan, form: str, summary: bool = False, changes_only: bool = False) -> str:
    if summary:
        return {"text": summary_text, "json": as_json, "markdown": summary_markdown}[form](plan)
    if form == "json" and changes_only:
        return as_json(plan, changes_only=True)
    return {"text": text, "json": as_json, "markdown": markdown}[form](plan)


def verdict_line(plan: Plan) -> str:
    return f"Verdict: {plan.scenario or plan.source}: {plan.verdict}"


def _never(plan: Plan) -> list[str]:
    """Workloads that can never be admitted, at the last step they appear (what needs attention first)."""
    seen: dict[str, str] = {}
    for s in plan.steps:
        for r in s.rows:
            if r.state == "never":
                seen[r.workload] = f"step {s.index}: {r.detail}"
    return [f"{w} can never be admitted ({why})" for w, why in seen.items()]


def summary_text(plan: Plan) -> str:
    """--summary: the header, the verdict, what needs attention, and the per-step counts."""
    out = _header(plan) + [verdict_line(plan)]
    out += [f"  - {f}" for f in plan.failures] + [f"  ! {n}" for n in _never(plan)]
    keys = _summary_states(plan)
    out += _table(["step", "title", *keys], [[str(s.index), s.title] + [str(_counts(s)[k]) for k in keys]
                                             for s in plan.steps])
    return "\n".join(out) + "\n"


def summary_markdown(plan: Plan) -> str:
    out = [f"### Kueue plan: `{plan.source}`" + (f", scenario `{plan.scenario}`" if plan.scenario else ""), "",
           f"**{verdict_line(plan)}**", ""]
    out += [f"- {f}" for f in plan.failures] + [f"- :warning: {n}" for n in _never(plan)]
    if plan.failures or _never(plan):
        out.append("")
    keys = _summary_states(plan)
    out += _md_table(["Step", "What happens", *(k.capitalize() for k in keys)],
                     [[str(s.index), s.title] + [str(_counts(s)[k]) for k in keys] for s in plan.steps])
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- shared
def _counts(step: StepResult) -> dict[str, int]:
    out = {s: 0 for s in STATE_LABEL}
    for r in step.rows:
        out[r.state] += 1
    return out


def _summary_states(plan: Plan) -> tuple[str, ...]:
    # A group plan's `reserved` is a job holding manager quota while it waits for a worker.
    return ("admitted", "reserved", "pending", "preempted", "never") if plan.clusters else \
        ("admitted", "pending", "preempted", "never")


def _q(resource: str, v: Decimal) -> str:
    return str(fmt(resource, v))


USAGE_HEADERS = ["flavor", "resource", "used", "nominal", "borrowed", "lent", "free", "use"]


def _usage_cells(u: Usage) -> list[str]:
    # What the queue could take now without preempting: its nominal quota less what it uses and
    # less what it has lent (the cohort's other queues use that part of its nominal quota).
    free = u.nominal - u.used - u.lent
    pct = f"{(u.used / u.nominal * 100):.0f}%" if u.nominal else ("-" if not u.used else "borrowed")
    free_cell = _q(u.resource, free) if free >= 0 else "0"
    borrowed = _q(u.resource, u.borrowed) if u.borrowed else "-"
    if u.borrowing_limit is not None and u.cohort:
        borrowed += f" (limit {_q(u.resource, u.borrowing_limit)})"
    lent = _q(u.resource, u.lent) if u.lent else "-"
    if u.lending_limit is not None and u.cohort:
        lent += f" (limit {_q(u.resource, u.lending_limit)})"
    return [u.flavor, u.resource, _q(u.resource, u.used), _q(u.resource, u.nominal), borrowed, lent, free_cell, pct]


def borrow_lines(step: StepResult, cq: str, cluster: str | None = None) -> list[str]:
    """Who a queue borrows from: the queues of its cohort with unused quota (and the cohort's own)."""
    out = []
    for u in step.usage:
        if u.cluster_queue != cq or u.cluster != cluster:
            continue
        if u.borrowed > 0:
            who = ", ".join(u.lenders) or "nobody with unused quota (over quota after a cut)"
            out.append(f"{u.flavor} {u.resource}: borrows {_q(u.resource, u.borrowed)} from cohort {u.cohort}: {who}")
        elif u.cohort is None and u.used > u.nominal:
            out.append(f"{u.flavor} {u.resource}: {_q(u.resource, u.used - u.nominal)} over the nominal quota, "
                       "admitted before it was cut (Kueue evicts nothing for a quota cut)")
    return out


def _cohort(step: StepResult, cq: str, cluster: str | None = None) -> str:
    c = next((u.cohort for u in step.usage if u.cluster_queue == cq and u.cluster == cluster and u.cohort), None)
    return f" (cohort {c})" if c else ""


def _queues(plan: Plan, step: StepResult) -> list[tuple[str | None, str]]:
    """(cluster, ClusterQueue) in report order: the manager's, then each worker's (None: one cluster)."""
    order: dict[str | None, int] = {c: i for i, c in enumerate(plan.clusters)}
    keys = {(u.cluster, u.cluster_queue) for u in step.usage}
    return sorted(keys, key=lambda k: (order.get(k[0], -1), k[1]))


def _runs_on(r) -> str:
    """Group plans: the cluster a workload runs on, with the flavors it holds there."""
    if not r.cluster:
        return "-"
    flavors = ", ".join(sorted(set(r.flavors.values())))
    return f"{r.cluster} ({flavors})" if flavors else r.cluster


def _where(plan: Plan, step: StepResult) -> str:
    """Group plans: how many workloads run on each cluster, and how many wait on the manager."""
    counts = {c: sum(1 for r in step.rows if r.cluster == c and r.state == "admitted") for c in plan.clusters}
    waiting = sum(1 for r in step.rows if r.home == plan.clusters[0] and r.state in ("reserved", "pending", "preempted"))
    return ", ".join(f"{c} {n}" for c, n in counts.items()) + f"; waiting on {plan.clusters[0]}: {waiting}"


def _cube_lines(step: StepResult) -> list[str]:
    lines = []
    for c in step.cubes:
        cells = []
        for i, (used, total, holders) in enumerate(c.cubes):
            who = f" [{', '.join(holders)}]" if holders else ""
            cells.append(f"cube {i}: {used}/{total} chips{who}")
        lines.append(f"{c.flavor}: " + ("; ".join(cells) if cells else "no cubes"))
    return lines


def _header(plan: Plan) -> list[str]:
    overlays = "overlays" if plan.clusters else "overlay"
    what = f"scenario {plan.scenario}" if plan.scenario else f"no scenario: everything the {overlays} declare" \
        + ("" if plan.clusters else "s")
    return [f"Kueue plan for {plan.source} ({what})"] + ([f"Rules of Kueue {plan.release} ({plan.release_source})"]
                                                        if plan.release else [])


# ---------------------------------------------------------------- text
def _table(headers: list[str], rows: list[list[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    out = [indent + "  ".join(h.upper().ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    for r in rows:
        out.append(indent + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return out


def text(plan: Plan) -> str:
    out = _header(plan)
    if plan.description:
        out.append(plan.description.strip())
    for n in plan.notes:
        out.append(f"note: {n}")
    for step in plan.steps:
        out += _text_step(plan, step)
    if plan.failures:
        out += ["", "Expectations that do not hold:"] + [f"  - {f}" for f in plan.failures]
    out += ["", verdict_line(plan), "", "Summary:"]
    keys = _summary_states(plan)
    out += _table(["step", "title", *keys], [[str(s.index), s.title] + [str(_counts(s)[k]) for k in keys]
                                             for s in plan.steps])
    return "\n".join(out) + "\n"


def _text_step(plan: Plan, step: StepResult) -> list[str]:
    out = ["", f"== Step {step.index}: {step.title}  ({step.action})"]
    if step.events:
        out.append("events:")
        out += [f"  - {e}" for e in step.events]
    out.append("workloads:")
    if plan.clusters:
        out += _table(["workload", "kind", "priority", "state", "runs on", "detail"],
                      [[r.workload, r.kind, str(r.priority), STATE_LABEL[r.state], _runs_on(r), r.detail]
                       for r in step.rows])
        out.append(f"running on: {_where(plan, step)}")
    else:
        out += _table(["workload", "kind", "priority", "state", "detail"],
                      [[r.workload, r.kind, str(r.priority), STATE_LABEL[r.state], r.detail] for r in step.rows])
    for cluster, cq in _queues(plan, step):
        on = f" on {cluster}" if cluster else ""
        out.append(f"quota of ClusterQueue {cq}{on}{_cohort(step, cq, cluster)}:")
        out += _table(USAGE_HEADERS, [_usage_cells(u) for u in step.usage
                                      if u.cluster_queue == cq and u.cluster == cluster])
        out += [f"    {ln}" for ln in borrow_lines(step, cq, cluster)]
    lines = _cube_lines(step)
    if lines:
        out.append("TPU cubes:")
        out += [f"  {ln}" for ln in lines]
    return out


# ---------------------------------------------------------------- markdown
def _md_cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def _md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
    return out


def markdown(plan: Plan) -> str:
    what = f"scenario `{plan.scenario}`" if plan.scenario else \
        "everything the overlays declare" if plan.clusters else "everything the overlay declares"
    out = [f"### Kueue plan: `{plan.source}`, {what}", ""]
    if plan.release:
        out += [f"_Rules of Kueue {plan.release} ({plan.release_source})_", ""]
    if plan.description:
        out += [plan.description.strip(), ""]
    out += [f"> {n}" for n in plan.notes] + ([""] if plan.notes else [])
    out += [f"**{verdict_line(plan)}**", ""]
    if plan.failures:
        out += ["**Expectations that do not hold:**", ""] + [f"- {f}" for f in plan.failures] + [""]
    keys = _summary_states(plan)
    out += _md_table(["Step", "What happens", *(k.capitalize() for k in keys)],
                     [[str(s.index), s.title] + [str(_counts(s)[k]) for k in keys] for s in plan.steps])
    for step in plan.steps:
        out += _md_step(plan, step)
    return "\n".join(out) + "\n"


def _md_state(state: str) -> str:
    return f"**{STATE_LABEL[state]}**" if state in ("preempted", "never") else STATE_LABEL[state]


def _md_step(plan: Plan, step: StepResult) -> list[str]:
    out = ["", f"#### Step {step.index}: {step.title}", "", f"_{step.action}_", ""]
    if step.events:
        out += [f"- {e}" for e in step.events] + [""]
    group = bool(plan.clusters)
    out += _md_table(["Workload", "Kind", "Priority", "State"] + (["Runs on"] if group else []) + ["Detail"],
                     [[f"`{r.workload}`", r.kind, str(r.priority), _md_state(r.state)]
                      + ([_runs_on(r)] if group else []) + [r.detail]
                      for r in step.rows])
    if group:
        out += ["", f"Running on: {_where(plan, step)}"]
    out.append("")
    return out + _md_usage(plan, step)


def _md_usage(plan: Plan, step: StepResult) -> list[str]:
    group = bool(plan.clusters)
    out = _md_table((["Cluster"] if group else []) + ["ClusterQueue", "Cohort", "Flavor", "Resource", "Used",
                                                        "Nominal", "Borrowed", "Lent", "Free", "Use"],
                    [([u.cluster or "-"] if group else []) + [u.cluster_queue, u.cohort or "-"] + _usage_cells(u)
                     for u in step.usage])
    lines = [f"- `{cq}`{f' on {c}' if c else ''} {ln}" for c, cq in _queues(plan, step)
             for ln in borrow_lines(step, cq, c)]
    if lines:
        out += [""] + lines
    lines = _cube_lines(step)
    if lines:
        out += [""] + [f"- TPU cubes, {ln}" for ln in lines]
    return out


# ---------------------------------------------------------------- json
def _json_row(plan: Plan, r) -> dict:
    return {
        "workload": r.workload, "kind": r.kind, "clusterQueue": r.cluster_queue,
        "priority": r.priority, "prioritySource": r.priority_source, "state": r.state,
        "detail": r.detail, "demand": r.demand, "flavors": r.flavors,
        **({"topology": r.topology} if r.topology else {}),
        **({"submittedTo": r.home, "runsOn": r.cluster, "copies": dict(r.copies)} if plan.clusters else {}),
    }


def _json_rows(plan: Plan, step: StepResult, before: StepResult | None) -> dict:
    """A step's workloads: all of them; with `before` (--changes-only), only those whose row
    changed since that step, the ones gone named, the rest counted (a report of 20 steps of
    1,000 workloads otherwise repeats each workload 20 times)."""
    if before is None:
        return {"workloads": [_json_row(plan, r) for r in step.rows]}
    old = {r.workload: r for r in before.rows}
    changed = [r for r in step.rows if old.get(r.workload) != r]
    now = {r.workload for r in step.rows}
    return {"workloads": [_json_row(plan, r) for r in changed],
            "unchangedWorkloads": len(step.rows) - len(changed),
            "goneWorkloads": sorted(w for w in old if w not in now)}


def as_json(plan: Plan, changes_only: bool = False) -> str:
    doc = {
        "overlay": plan.source,
        "scenario": plan.scenario,
        "description": plan.description,
        "notes": list(plan.notes),
        "kueueVersion": plan.release,
        "kueueVersionSource": plan.release_source,
        "verdict": plan.verdict,
        **({"clusters": list(plan.clusters)} if plan.clusters else {}),
        "steps": [{
            "index": s.index,
            "title": s.title,
            "action": s.action,
            "events": list(s.events),
            **_json_rows(plan, s, plan.steps[i - 1] if changes_only and i else None),
            "usage": [{
                **({"cluster": u.cluster} if plan.clusters else {}),
                "clusterQueue": u.cluster_queue, "cohort": u.cohort, "flavor": u.flavor, "resource": u.resource,
                "used": _q(u.resource, u.used), "nominal": _q(u.resource, u.nominal),
                "borrowed": _q(u.resource, u.borrowed), "lent": _q(u.resource, u.lent),
                "borrowingLimit": None if u.borrowing_limit is None else _q(u.resource, u.borrowing_limit),
                "lendingLimit": None if u.lending_limit is None else _q(u.resource, u.lending_limit),
                "borrowedFrom": list(u.lenders),
            } for u in s.usage],
            "expectationFailures": list(s.failures),
            "cubes": [{
                "flavor": c.flavor,
                "cubes": [{"usedChips": used, "chips": total, "holders": list(h)} for used, total, h in c.cubes],
            } for c in s.cubes],
        } for i, s in enumerate(plan.steps)],
    }
    return json.dumps(doc, indent=2) + "\n"
