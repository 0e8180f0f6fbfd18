"""Who holds the accelerators at each step: one panel per accelerator (the flavor of the
accelerator resource: H100s and L4s are both nvidia.com/gpu, never one total), and for a
MultiKueue group per cluster; one stacked bar per step, one colour per workload, the nominal
quota as a line, preemptions marked. matplotlib is the `plot` extra
(pip install 'gke-ml-platform[plot]')."""
from __future__ import annotations

import textwrap
from decimal import Decimal
from pathlib import Path

from ..kernel import catalog
from ..kernel.errors import Problem, SpecError
from ..kernel.quantity import parse
from .simulate import Plan

ACCELERATOR_RESOURCES = tuple(dict.fromkeys(d.resource for d in catalog.DEVICES.values()))


def resource_of(plan: Plan, cluster: str | None = None) -> str:
    """The accelerator resource the ClusterQueues cover (first one found), else cpu."""
    covered = {u.resource for s in plan.steps for u in s.usage if cluster is None or u.cluster == cluster}
    extended = sorted(covered - {"cpu", "memory", "ephemeral-storage", "pods"})
    return next((r for r in ACCELERATOR_RESOURCES if r in covered), extended[0] if extended else "cpu")


def holds(plan: Plan, row, cluster: str | None) -> bool:
    """Whether the row's workload holds quota on `cluster` (None: the only one). On a group's
    manager: quota reserved there, whether it runs on a worker, waits for one, or none can run it."""
    if cluster is None:
        return row.state == "admitted"
    if cluster == plan.clusters[0]:
        return row.home == cluster and bool(row.copies or row.cluster == cluster) \
            and row.state in ("admitted", "reserved", "never")
    return row.cluster == cluster and row.state == "admitted"


def flavors_of(plan: Plan, resource: str, cluster: str | None = None) -> list[str | None]:
    """The flavors that give `resource` on `cluster`, in first-seen order: one panel each (None: one panel)."""
    names = dict.fromkeys(u.flavor for s in plan.steps for u in s.usage if u.resource == resource
                          and (cluster is None or u.cluster == cluster))
    return list(names) or [None]


def _asks(row, resource: str, flavor: str | None) -> bool:
    """Whether a row asks for `resource` (of `flavor`, when it has been given one)."""
    return resource in row.demand and (flavor is None or row.flavors.get(resource, flavor) == flavor)


def series(plan: Plan, resource: str, cluster: str | None = None, flavor: str | None = None
           ) -> tuple[list[str], dict[str, list[float]], list[float]]:
    """Workloads in first-seen order, the amount each holds per step (on `cluster`, for a group
    plan; of `flavor`, when given), and the quota per step."""
    order: list[str] = []
    held: dict[str, list[float]] = {}
    for i, step in enumerate(plan.steps):
        for row in step.rows:
            if not _asks(row, resource, flavor):
                continue
            if row.workload not in held:
                order.append(row.workload)
                held[row.workload] = [0.0] * len(plan.steps)
            if holds(plan, row, cluster) and (flavor is None or row.flavors.get(resource) == flavor):
                held[row.workload][i] = float(parse(row.demand[resource]))
    # Workloads that never held any (they only waited) get no colour.
    order = [w for w in order if any(held[w])]
    return order, held, [_quota(s, resource, cluster, flavor) for s in plan.steps]


def _quota(step, resource: str, cluster: str | None, flavor: str | None) -> float:
    """The nominal quota of `resource` (of `flavor`) on `cluster` at a step."""
    return float(sum((u.nominal for u in step.usage if u.resource == resource and u.cluster == cluster
                      and (flavor is None or u.flavor == flavor)), Decimal(0)))


def available() -> bool:
    """Whether matplotlib can be imported (checked before any output is written)."""
    import importlib.util
    return importlib.util.find_spec("matplotlib") is not None


MISSING = "matplotlib is not installed; pip install 'gke-ml-platform[plot]' installs it"


def write(plan: Plan, path: str) -> None:
    if not path.endswith(".png"):
        raise SpecError(path, [Problem("--plot", "the plot is written as PNG: give a file name ending in .png")])
    try:
        import matplotlib
    except ImportError:
        raise SpecError(path, [Problem("--plot", MISSING)]) from None
    matplotlib.use("Agg")  # no display, deterministic
    import matplotlib.pyplot as plt

    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SpecError(path, [Problem("--plot", f"cannot create the folder: {e.strerror or e}")]) from e
    # One panel per accelerator flavor, and for a MultiKueue group per cluster: the manager's
    # reserved quota, then what runs on each worker.
    clusters: list[str | None] = [*plan.clusters] or [None]
    panels = [(cluster, resource_of(plan, cluster), flavor) for cluster in clusters
              for flavor in flavors_of(plan, resource_of(plan, cluster), cluster)]
    n = len(plan.steps)
    fig, axes = plt.subplots(len(panels), 1, figsize=(max(7.0, 1.6 * n + 4), 5.2 * len(panels)), dpi=110,
                             squeeze=False)
    # A workload keeps its colour from panel to panel.
    colours = {w: i for i, w in enumerate(dict.fromkeys(r.workload for s in plan.steps for r in s.rows))}
    for ax, (cluster, resource, flavor) in zip(axes[:, 0], panels, strict=True):
        _panel(ax, plt, plan, cluster, colours, resource, flavor)
    fig.tight_layout()
    # No timestamps in the file: the same plan draws the same PNG.
    try:
        fig.savefig(path, metadata={"Software": None})
    except OSError as e:
        raise SpecError(path, [Problem("--plot", f"cannot write the plot: {e.strerror or e}")]) from e
    plt.close(fig)


def _panel(ax, plt, plan: Plan, cluster: str | None, colours: dict[str, int] | None, resource: str,
           flavor: str | None) -> None:
    order, held, quota = series(plan, resource, cluster, flavor)
    n = len(plan.steps)
    xs = list(range(n))
    cmap = plt.get_cmap("tab20")
    bottom = [0.0] * n
    for k, name in enumerate(order):
        vals = held[name]
        ax.bar(xs, vals, bottom=bottom, color=cmap((colours[name] if colours else k) % 20), edgecolor="white", linewidth=0.8,
               label=name, width=0.62)
        for x in xs:
            if vals[x]:
                ax.text(x, bottom[x] + vals[x] / 2, _short(name), ha="center", va="center", fontsize=7)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    # Nominal quota, step-wise (a scenario may change it).
    ax.step([x - 0.5 for x in xs] + [n - 0.5], quota + quota[-1:], where="post", color="black",
            linestyle="--", linewidth=1.2, label="nominal quota")
    for x, step in enumerate(plan.steps):
        _marks(ax, plan, step, x, (x, max(bottom[x], quota[x])), resource, cluster)
    _axes(ax, plan, cluster, resource, max(max(bottom, default=0), max(quota, default=0)) or 1, flavor)


def _axes(ax, plan: Plan, cluster: str | None, resource: str, top: float, flavor: str | None = None) -> None:
    """Ticks, labels, title and legend of one panel."""
    ax.set_xticks(list(range(len(plan.steps))),
                  ["\n".join(textwrap.wrap(f"{s.index}. {s.title}", 18)) for s in plan.steps], fontsize=8)
    what = "reserved on the manager" if plan.clusters and cluster == plan.clusters[0] else "admitted"
    ax.set_ylabel(f"{resource} {what}" + (f"\n(flavor {flavor})" if flavor else ""))
    ax.set_ylim(0, top * 1.5)
    title = f"Kueue plan: {Path(plan.source).name}" if cluster is None else f"{cluster}"
    ax.set_title(title + (f" / {Path(plan.scenario).stem}" if plan.scenario else ""), fontsize=10)
    handles, labels = ax.get_legend_handles_labels()
    # Top of the stack first, like the bars; the quota line last.
    bars = [(h, lb) for h, lb in zip(handles, labels, strict=True) if lb != "nominal quota"][::-1]
    line = [(h, lb) for h, lb in zip(handles, labels, strict=True) if lb == "nominal quota"]
    ax.legend(*zip(*(bars + line), strict=True), loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.grid(axis="y", alpha=0.3)


def _marks(ax, plan: Plan, step, x: int, anchor, resource: str, cluster: str | None) -> None:
    """Preemptions and re-admissions on this cluster, and who waits (on the manager, for a group)."""
    notes = _event_notes(step, cluster)
    if notes:
        ax.annotate("\n".join(notes), anchor, xytext=(0, 6), textcoords="offset points",
                    ha="center", va="bottom", fontsize=7, color="firebrick")
    if plan.clusters and cluster != plan.clusters[0]:
        return
    mine = [r for r in step.rows if resource in r.demand and (cluster is None or r.home == cluster)]
    waiting = [_short(r.workload) for r in mine if r.state in ("pending", "preempted", "reserved")]
    never = [_short(r.workload) for r in mine if r.state == "never"]
    offset = 8 + 9 * len(notes)
    for label, names, colour in (("waiting", waiting, "dimgray"), ("never admitted", never, "black")):
        if names:
            shown = names[:3] + ([f"+{len(names) - 3} more"] if len(names) > 3 else [])
            ax.annotate(f"{label}: " + "\n".join(shown), anchor, xytext=(0, offset),
                        textcoords="offset points", ha="center", va="bottom", fontsize=7, color=colour)
            offset += 9 * (len(shown) + 1)


def _event_notes(step, cluster: str | None) -> list[str]:
    """Who was preempted and who came back in this step, on this cluster."""
    tag = f"[{cluster}] " if cluster else ""
    events = [e[len(tag):] for e in step.events if e.startswith(tag)]
    return [f"preempted: {_short(e.split(' preempted by ')[0])}" for e in events if " preempted by " in e] + \
        [f"back: {_short(e.split(' re-admitted')[0])}" for e in events if " re-admitted" in e]


def _short(workload: str) -> str:
    return workload.split("/", 1)[-1]
