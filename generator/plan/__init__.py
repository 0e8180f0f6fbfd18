"""`python -m generator plan`: what Kueue will do with a built overlay.

model.py reads the objects, scenario.py the steps, simulate.py replays Kueue's
admission and preemption (packer.py places TPU slices), report.py prints the
result and plot.py draws who holds the accelerators at each step."""
from __future__ import annotations

import sys

from . import model, report, scenario, simulate


def plan(overlay: str, scenario_file: str | None = None, cubes: int | None = None) -> simulate.Plan:
    source, objs = model.load_objects(overlay)
    cluster = model.build(source, objs)
    scen = scenario.load(scenario_file, cluster) if scenario_file else scenario.default(cluster)
    return simulate.run(cluster, scen, cubes)


def run(args) -> int:
    """The CLI command; SpecError (exit 2) propagates to generator.cli."""
    result = plan(args.overlay, args.scenario, args.cubes)
    if args.plot:
        from . import plot  # matplotlib only when asked for
        plot.write(result, args.plot)
    sys.stdout.write(report.render(result, args.format))
    if args.plot:
        print(f"plan: wrote {args.plot}", file=sys.stderr)
    if args.strict and any(r.state == "never" for s in result.steps for r in s.rows):
        return 1
    return 0
