"""Who holds the accelerators at each step: one stacked bar per step, one
colour per workload, the nominal quota as a line, preemptions marked."""
from __future__ import annotations

import textwrap
from decimal import Decimal
from pathlib import Path

from .. import catalog
from ..errors import Problem, SpecError
from .simulate import Plan

ACCELERATOR_RESOURCES = tuple(dict.fromkeys(d.resource for d in catalog.DEVICES.values()))


def resource_of(plan: Plan) -> str:
    """The accelerator resource the ClusterQueues cover (first one found), else cpu."""
    covered = {u.resource for s in plan.steps for u in s.usage}
    return next((r for r in ACCELERATOR_RESOURCES if r in covered), "cpu")


def series(plan: Plan, resource: str) -> tuple[list[str], dict[str, list[float]], list[float]]:
    """Workloads in first-seen order, the amount each holds per step, and the quota per step."""
    order: list[str] = []
    held: dict[str, list[float]] = {}
    for i, step in enumerate(plan.steps):
        for row in step.rows:
            if row.workload not in held and resource in row.demand:
                order.append(row.workload)
                held[row.workload] = [0.0] * len(plan.steps)
            if row.state == "admitted" and resource in row.demand:
                held[row.workload][i] = float(Decimal(row.demand[resource]))
    # Workloads that never held any (they only waited) get no colour.
    order = [w for w in order if any(held[w])]
    quota = [float(sum((u.nominal for u in s.usage if u.resource == resource), Decimal(0))) for s in plan.steps]
    return order, held, quota


def write(plan: Plan, path: str) -> None:
    if not path.endswith(".png"):
        raise SpecError(path, [Problem("--plot", "the plot is written as PNG: give a file name ending in .png")])
    try:
        import matplotlib
    except ImportError:
        raise SpecError(path, [Problem("--plot", "matplotlib is not installed; `make install-test` installs it")])
    matplotlib.use("Agg")  # no display, deterministic
    import matplotlib.pyplot as plt

    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SpecError(path, [Problem("--plot", f"cannot create the folder: {e.strerror or e}")])
    resource = resource_of(plan)
    order, held, quota = series(plan, resource)
    n = len(plan.steps)
    xs = list(range(n))
    fig, ax = plt.subplots(figsize=(max(7.0, 1.6 * n + 4), 5.2), dpi=110)
    cmap = plt.get_cmap("tab20")
    bottom = [0.0] * n
    for k, name in enumerate(order):
        vals = held[name]
        ax.bar(xs, vals, bottom=bottom, color=cmap(k % 20), edgecolor="white", linewidth=0.8, label=name, width=0.62)
        for x in xs:
            if vals[x]:
                ax.text(x, bottom[x] + vals[x] / 2, _short(name), ha="center", va="center", fontsize=7)
        bottom = [b + v for b, v in zip(bottom, vals)]
    # Nominal quota, step-wise (a scenario may change it).
    ax.step([x - 0.5 for x in xs] + [n - 0.5], quota + quota[-1:], where="post", color="black",
            linestyle="--", linewidth=1.2, label="nominal quota")
    for x, step in enumerate(plan.steps):
        marks = [e for e in step.events if " preempted by " in e]
        back = [e for e in step.events if " re-admitted" in e]
        notes = [f"preempted: {_short(e.split(' preempted by ')[0])}" for e in marks]
        notes += [f"back: {_short(e.split(' re-admitted')[0])}" for e in back]
        anchor = (x, max(bottom[x], quota[x]))
        if notes:
            ax.annotate("\n".join(notes), anchor, xytext=(0, 6), textcoords="offset points",
                        ha="center", va="bottom", fontsize=7, color="firebrick")
        waiting = [_short(r.workload) for r in step.rows
                   if r.state in ("pending", "preempted", "reserved") and resource in r.demand]
        never = [_short(r.workload) for r in step.rows if r.state == "never" and resource in r.demand]
        offset = 8 + 9 * len(notes)
        for label, names, colour in (("waiting", waiting, "dimgray"), ("never admitted", never, "black")):
            if not names:
                continue
            shown = names[:3] + ([f"+{len(names) - 3} more"] if len(names) > 3 else [])
            ax.annotate(f"{label}: " + "\n".join(shown), anchor, xytext=(0, offset),
                        textcoords="offset points", ha="center", va="bottom", fontsize=7, color=colour)
            offset += 9 * (len(shown) + 1)
    ax.set_xticks(xs, ["\n".join(textwrap.wrap(f"{s.index}. {s.title}", 18)) for s in plan.steps], fontsize=8)
    ax.set_ylabel(f"{resource} admitted")
    top = max(max(bottom, default=0), max(quota, default=0)) or 1
    ax.set_ylim(0, top * 1.5)
    ax.set_title(f"Kueue plan: {Path(plan.source).name}" + (f" / {Path(plan.scenario).stem}" if plan.scenario else ""),
                 fontsize=10)
    handles, labels = ax.get_legend_handles_labels()
    # Top of the stack first, like the bars; the quota line last.
    bars = [(h, lb) for h, lb in zip(handles, labels) if lb != "nominal quota"][::-1]
    line = [(h, lb) for h, lb in zip(handles, labels) if lb == "nominal quota"]
    ax.legend(*zip(*(bars + line)), loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    # No timestamps in the file: the same plan draws the same PNG.
    try:
        fig.savefig(path, metadata={"Software": None})
    except OSError as e:
        raise SpecError(path, [Problem("--plot", f"cannot write the plot: {e.strerror or e}")])
    plt.close(fig)


def _short(workload: str) -> str:
    return workload.split("/", 1)[-1]
