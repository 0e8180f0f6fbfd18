"""`python -m generator plan`: what Kueue will do with a built overlay.

model.py reads the objects, scenario.py the steps; simulate.py replays Kueue's
scheduling cycles with quota.py (quota and usage of ClusterQueues and cohorts),
assign.py (flavor assignment) and preempt.py (who is evicted); packer.py places
TPU slices; report.py prints the result and plot.py draws who holds the
accelerators at each step. With --group, group.py reads a MultiKueue manager
and its workers and dispatch.py replays MultiKueue between their simulators."""
from __future__ import annotations

import sys

from . import model, report, scenario, simulate


def plan(overlay: str | list[str], scenario_file: str | None = None, cubes: int | None = None,
         kueue_version: str = "v0.17.4") -> simulate.Plan:
    source, objs = model.load_objects(overlay)
    cluster = model.build(source, objs)
    scen = scenario.load(scenario_file, cluster) if scenario_file else scenario.default(cluster)
    result = simulate.run(cluster, scen, cubes, kueue_version)
    note = _multikueue_note(cluster)
    return result if note is None else simulate.Plan(result.source, result.scenario, result.description,
                                                     (note,) + result.notes, result.steps)


def plan_group(paths: list[str], scenario_file: str | None = None, kueue_version: str = "v0.17.4",
               manager_config: str | None = None) -> simulate.Plan:
    """A MultiKueue manager's overlay, then each worker's (NAME=PATH, or PATH named by its last part)."""
    from . import dispatch, group
    g = group.load(paths, manager_config, kueue_version)
    workers = {w.name: w.cluster for w in g.workers}
    scen = scenario.load(scenario_file, g.manager.cluster, workers, g.manager.name) if scenario_file \
        else scenario.default(g.manager.cluster, workers)
    return dispatch.run(g, scen)


def _multikueue_note(cluster: model.Cluster) -> str | None:
    """A MultiKueue manager planned alone: its check is simulated as Ready, so say what --group does."""
    from .group import CONTROLLER
    checks = {n for n, c in cluster.admission_checks.items() if c == CONTROLLER}
    queues = sorted(q.name for q in cluster.cluster_queues.values() if set(q.admission_checks) & checks)
    if not queues:
        return None
    return (f"ClusterQueue {', '.join(queues)} uses a MultiKueue check ({', '.join(sorted(checks))}): its jobs run on "
            "worker clusters, and this plan takes the check as Ready on this cluster; plan the group with "
            "--group MANAGER WORKER... to see where they run")


def run(args) -> int:
    """The CLI command; SpecError (exit 2) propagates to generator.cli."""
    from ..errors import Problem, SpecError
    if args.cubes is not None and not 0 <= args.cubes:
        raise SpecError("--cubes", [Problem("--cubes", f"{args.cubes} is not a number of cubes (0 or more)")])
    if args.plot and not args.plot.endswith(".png"):
        raise SpecError(args.plot, [Problem("--plot", "the plot is written as PNG: give a file name ending in .png")])
    if args.manager_config and not args.group:
        raise SpecError("--manager-config", [Problem("", "only a group plan (--group) reads a manager's configuration")])
    if args.group:
        if args.cubes is not None:
            raise SpecError("--cubes", [Problem("", "not with --group: give TPU cubes in each overlay's quota")])
        result = plan_group(args.overlay, args.scenario, args.kueue_version, args.manager_config)
    else:
        result = plan(args.overlay, args.scenario, args.cubes, args.kueue_version)
    if args.plot:
        from . import plot  # matplotlib only when asked for
        plot.write(result, args.plot)
    sys.stdout.write(report.render(result, args.format))
    if args.plot:
        print(f"plan: wrote {args.plot}", file=sys.stderr)
    failures = result.failures
    for f in failures:
        print(f"plan: expectation failed: {f}", file=sys.stderr)
    if failures or (args.strict and any(r.state == "never" for s in result.steps for r in s.rows)):
        return 1
    return 0
