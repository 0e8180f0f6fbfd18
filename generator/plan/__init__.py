"""`python -m generator plan`: what Kueue will do with a built overlay.

model.py reads the objects, scenario.py the steps; simulate.py replays Kueue's
scheduling cycles (state.py: a Workload as it tracks it) with queues.py (the
pending Workloads of each ClusterQueue), quota.py (quota and usage of
ClusterQueues and cohorts), assign.py (flavor assignment), preempt.py (who is
evicted) and fairorder.py (which head goes first with fair sharing), following
the rules of the Kueue release releases.py names; packer.py places TPU slices;
results.py makes each step's rows, report.py prints them, expectations.py
rewrites a scenario's `expect:` (--update-expectations) and plot.py draws who
holds the accelerators at each step. With --group, group.py reads a MultiKueue manager
and its workers and dispatch.py replays MultiKueue between their simulators."""
from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

from ..kernel.errors import printable
from . import overlay as model, releases, report, scenario, simulate


def plan(overlay: str | list[str], scenario_file: str | None = None, cubes: int | None = None,
         kueue_version: str = releases.DEFAULT) -> simulate.Plan:
    source, objs = model.load_objects(overlay)
    cluster = model.build(source, objs)
    scen = scenario.load(scenario_file, cluster) if scenario_file else scenario.default(cluster)
    result = simulate.run(cluster, scen, cubes, kueue_version)
    note = _multikueue_note(cluster)
    return result if note is None else replace(result, notes=(note,) + result.notes)


def plan_group(paths: list[str], scenario_file: str | None = None, kueue_version: str = releases.DEFAULT,
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


def platform_root() -> Path:
    """The platform repository whose scenarios `plan` without an overlay replays: the folder
    holding platform.yaml, found from the working directory up (paths.find_spec); without
    one, the working directory."""
    from ..kernel import paths
    try:
        return paths.find_spec().parent
    except paths.NoPlatform:
        return Path.cwd()


def scenario_runs(root: Path, scenario_file: str | None) -> list[tuple[str, str]]:
    """(overlay, scenario) pairs for `plan` without an overlay: every scenarios/<profile>/*.yaml
    against overlays/<profile> (what `make plan` looped over), or the one --scenario names."""
    from ..kernel.errors import Problem, SpecError
    if scenario_file:
        files = [Path(scenario_file)]
    else:
        files = sorted((root / "scenarios").glob("*/*.yaml"))
        if not files:
            raise SpecError(str(root), [Problem("", f"no overlay given and no scenarios/<profile>/*.yaml under {root}: "
                                               "give an overlay (plan overlays/PROFILE) or write a scenario")])
    out, problems = [], []
    from ..kernel import paths
    for f in files:
        paths.repository_file(f, root, "the scenario")   # a link out of the repository is refused
        profile = Path(os.path.abspath(f)).parent.name
        overlay = root / "overlays" / profile
        if not overlay.is_dir():
            problems.append(Problem(str(f), f"no overlay {_shown(overlay, root)} for this scenario's profile "
                                    f"({profile}); run synth, or give the overlay"))
        out.append((_shown(overlay, root), _shown(f, root)))
    if problems:
        raise SpecError(str(root), problems)
    return out


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def _check_group_args(args) -> None:
    from ..kernel.errors import Problem, SpecError
    if getattr(args, "nodes", None) and args.group:
        raise SpecError("--nodes", [Problem("", "not with --group: put each cluster's Node objects in its overlay")])
    if args.group and args.cubes is not None:
        raise SpecError("--cubes", [Problem("", "not with --group: give TPU cubes in each overlay's quota")])


def _check_args(args) -> None:
    from ..kernel.errors import Problem, SpecError
    many = not args.overlay
    if args.cubes is not None and not 0 <= args.cubes:
        raise SpecError("--cubes", [Problem("--cubes", f"{args.cubes} is not a number of cubes (0 or more)")])
    if args.plot:
        _check_plot(args.plot, many)
    if args.manager_config and not args.group:
        raise SpecError("--manager-config", [Problem("", "only a group plan (--group) reads a manager's configuration")])
    if args.group and not args.overlay:
        raise SpecError("--group", [Problem("", "give the manager's overlay, then each worker's")])
    _check_group_args(args)
    if args.update_expectations and args.overlay and not args.scenario:
        raise SpecError("--update-expectations", [Problem("", "there are expectations to update only in a scenario: "
                                                          "give --scenario FILE, or no overlay to update them all")])


def _check_plot(where: str, many: bool) -> None:
    """--plot: a PNG file for one plan, a folder for the repository's; matplotlib at hand. Checked
    before anything is written: no empty folder, no report without its plot."""
    from ..kernel.errors import Problem, SpecError
    from . import plot
    if not many and not where.endswith(".png"):
        raise SpecError(where, [Problem("--plot", "the plot is written as PNG: give a file name ending in .png")])
    if many and where.endswith(".png"):
        raise SpecError(where, [Problem("--plot", "without an overlay, every scenario gets its own PNG: give a "
                                                  "folder to write them into (e.g. --plot plots)")])
    if not plot.available():
        raise SpecError(where, [Problem("--plot", plot.MISSING)])


def run(args) -> int:
    """The CLI command; SpecError (exit 2) propagates to generator.cli."""
    from ..kernel import paths, writer
    _check_args(args)
    if args.overlay:
        # An overlay a synth left half switched reads as a mix of two trees: say so, plan nothing.
        busy = writer.pending_under([p.partition("=")[2] or p for p in args.overlay])
        if busy:
            raise writer.MidUpdate(busy)
        _current(args, args.overlay)
        return _run_one(args, args.overlay, args.scenario, args.plot)
    root = platform_root()
    busy = writer.pending(root)
    if busy:
        raise writer.MidUpdate(busy)
    runs = scenario_runs(root, args.scenario)
    _current(args, [str(root / o) for o, _ in runs])
    rc = 0
    for i, (overlay, scen) in enumerate(runs):
        if i:
            sys.stdout.write("\n")
        plot = None
        if args.plot:
            plot = str(Path(args.plot) / f"{Path(overlay).name}--{Path(scen).stem}.png")   # plot.write makes the folder
            paths.repository_file(args.plot, root, "the plot folder")   # a link out of the repository: refused
        rc = max(rc, _run_one(args, [str(root / overlay), *kueue_config(root, overlay)], str(root / scen), plot,
                              (overlay, scen)))
    return rc


def kueue_config(root: Path, overlay: str) -> list[str]:
    """The Kueue configuration synth generated for an overlay's profile (fair sharing and the
    rest of controllers/<profile>/kueue/kueue-manager-config.yaml), read with the overlay; none
    when there is no such file (Kueue's defaults, and the plan says so)."""
    from ..kernel import paths
    config = root / "controllers" / Path(overlay).name / "kueue" / "kueue-manager-config.yaml"
    return [paths.shown(config)] if config.is_file() else []


def _current(args, overlays: list[str]) -> None:
    """In a platform repository, when the overlays planned are its own: refuse a stale output
    (kernel/stamp.py) and a spec that does not build (--allow-stale: warn and go on)."""
    from ..kernel import paths, stamp
    root = platform_root()
    spec = root / paths.SPEC_NAME
    mine = (root / "overlays").resolve()
    # A group's members are NAME=PATH or PATH (plan_group reads them the same way).
    given = [o.split("=", 1)[1] if args.group and "=" in o and not Path(o).exists() else o for o in overlays]
    if not spec.is_file() or not given or not all(o != "-" and Path(o).resolve().parent == mine for o in given):
        return
    stamp.guard(paths.shown(spec), paths.shown(root), args.allow_stale, "plan")
    from .. import model as spec_mod
    from ..kernel.errors import SpecError
    try:
        spec_mod.load(spec)
    except SpecError as e:
        if not args.allow_stale:
            raise
        print(f"plan: warning: {paths.shown(spec)} does not build; answering from the output as it is "
              f"(--allow-stale):\n{e.render()}", file=sys.stderr)


def release_for(overlay: str, given: str | None) -> tuple[str, str]:
    """(Kueue release, who chose it): --kueue-version; else, for overlays/<profile> of the
    platform repository, the release its spec pins for that profile; else the default."""
    if given:
        return given, "--kueue-version"
    root = platform_root()
    from ..kernel import paths
    spec = root / paths.SPEC_NAME
    path = Path(overlay)
    if not (spec.is_file() and path.is_dir() and path.resolve().parent == (root / "overlays").resolve()):
        return releases.DEFAULT, "the default; the spec pins a release for overlays/<profile> only"
    from .. import model as spec_mod
    from ..kernel.errors import SpecError
    try:
        platform = spec_mod.load(spec)
    except SpecError:
        return releases.DEFAULT, f"the default: {spec.name} does not load (run validate)"
    prof = platform.profiles.get(path.name)
    if prof is None:
        return releases.DEFAULT, f"the default: {spec.name} has no profile {path.name}"
    return prof.kueue.version, f"pinned by {spec.name} for profile {path.name}"


def _replay(args, overlay: list[str], scenario_file: str | None, release: str) -> simulate.Plan:
    if args.group:
        return plan_group(overlay, scenario_file, release, args.manager_config)
    # --nodes: Node objects (kubectl get nodes -o yaml) read after the overlay, as part of its stream.
    return plan(overlay + list(getattr(args, "nodes", None) or []), scenario_file, args.cubes, release)


def _run_one(args, overlay: list[str], scenario_file: str | None, plot_file: str | None,
             shown: tuple[str, str] | None = None) -> int:
    """One plan: the report on stdout (also when an expectation fails), failures on stderr."""
    release, why = release_for(overlay[0], args.kueue_version)
    result = _replay(args, overlay, scenario_file, release)
    modelled = releases.rules(release).release
    result = replace(result, release=release, release_source=why if modelled == release
                     else f"{why}; not modelled, so {modelled}'s rules")
    if shown is not None:
        result = replace(result, source=shown[0], scenario=shown[1])
    if plot_file:
        from ..kernel import paths
        from . import plot  # matplotlib only when asked for
        # A plot inside the repository stays there: a committed link at its path is not written through.
        paths.repository_file(plot_file, paths.repository_root(), "the plot")
        plot.write(result, plot_file)
    sys.stdout.write(printable(report.render(result, args.format, getattr(args, "summary", False),
                                             getattr(args, "changes_only", False))))
    if plot_file:
        print(f"plan: wrote {plot_file}", file=sys.stderr)
    failures = result.failures
    if failures and args.update_expectations and scenario_file:
        failures = _update(args, overlay, scenario_file, release, result)
    _say_failures(failures, args, result, shown)
    if failures or (args.strict and any(r.state == "never" for s in result.steps for r in s.rows)):
        return 1
    return 0


def _update(args, overlay: list[str], scenario_file: str, release: str, result: simulate.Plan) -> list[str]:
    """--update-expectations: the scenario rewritten from this plan, then planned again; what
    still fails (nothing, unless a name became ambiguous)."""
    from . import expectations
    flags: list[str] = []
    n = expectations.rewrite(scenario_file, result, flags)
    print(f"plan: {result.scenario}: wrote the new outcome into {n} expect: block(s); "
          "review the change (git diff) and commit it", file=sys.stderr)
    for f in flags:
        print(f"plan: {result.scenario}: {f}", file=sys.stderr)
    return _replay(args, overlay, scenario_file, release).failures


def _say_failures(failures: list[str], args, result: simulate.Plan, shown: tuple[str, str] | None) -> None:
    for f in failures:
        print(f"plan: expectation failed: {f}", file=sys.stderr)
    if failures:
        print(f"plan: {result.scenario}: if the new outcome is intended, accept it with "
              f"`gke-ml-platform plan {_again(args, shown)} --update-expectations`, which rewrites "
              "the scenario's expect: blocks from this plan", file=sys.stderr)


def _again(args, shown: tuple[str, str] | None) -> str:
    """The command line that reruns this plan."""
    if shown is not None:
        return f"--scenario {shown[1]}"
    parts = (["--group"] if args.group else []) + list(args.overlay)
    if args.scenario:
        parts += ["--scenario", args.scenario]
    return " ".join(parts)
