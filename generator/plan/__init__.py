"""`python -m generator plan`: what Kueue will do with a built overlay.

model.py reads the objects, scenario.py the steps; simulate.py replays Kueue's
scheduling cycles with quota.py (quota and usage of ClusterQueues and cohorts),
assign.py (flavor assignment) and preempt.py (who is evicted); packer.py places
TPU slices; report.py prints the result and plot.py draws who holds the
accelerators at each step."""
from __future__ import annotations

import sys

from . import model, report, scenario, simulate


def plan(overlay: str | list[str], scenario_file: str | None = None, cubes: int | None = None,
         kueue_version: str = "v0.17.4") -> simulate.Plan:
    source, objs = model.load_objects(overlay)
    cluster = model.build(source, objs)
    scen = scenario.load(scenario_file, cluster) if scenario_file else scenario.default(cluster)
    return simulate.run(cluster, scen, cubes, kueue_version)


def run(args) -> int:
    """The CLI command; SpecError (exit 2) propagates to generator.cli."""
    from ..errors import Problem, SpecError
    if args.cubes is not None and not 0 <= args.cubes:
        raise SpecError("--cubes", [Problem("--cubes", f"{args.cubes} is not a number of cubes (0 or more)")])
    if args.plot and not args.plot.endswith(".png"):
        raise SpecError(args.plot, [Problem("--plot", "the plot is written as PNG: give a file name ending in .png")])
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
