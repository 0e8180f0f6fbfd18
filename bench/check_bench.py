"""`make bench` rows for `generator check`: the committed-output check of a
synthesized tree (spec load, the model's checks, the render through cdk8s in
Node, the comparison with the files) against the floor bench/spec_floor.py
(PyYAML C load + one jsonschema validation of the spec), in alternation, as
whole processes. check renders exactly as synth does (Node started, the whole app rendered)
and writes nothing, so its target is synth's own CPU on the same spec in this run: check
may cost at most CHECK_LIMIT times as much (the comparison with the files is the rest). The
spec-load floor is shown beside it; the floor runs with no Node process possible."""
from __future__ import annotations

import sys
from pathlib import Path

from generator.kernel import paths

from . import targets

CHECK_LIMIT = 1.10   # check ÷ synth in CPU: the render is the same; comparing files costs a little


def measure(run_timed, series_cls, cases: list[tuple[str, Path, Path, float]], reps: int) -> list[str]:
    """Markdown lines for the report; cases: (label, spec, synthesized tree, synth's median CPU
    on that spec in this run)."""
    py = sys.executable
    lines = ["", "## check", "",
             "`python -O -m generator check --spec SPEC --out TREE` on the tree synth wrote from SPEC (it passes), "
             "against the floor **PyYAML C load + jsonschema validate** of the spec (bench/spec_floor.py). Whole "
             "processes (check starts Node for cdk8s; the floor cannot); seconds of wall clock min / median, and median CPU "
             "(user + system) of the process tree:", "",
             "| spec | check | floor | ÷ floor (wall) | check CPU | floor CPU | ÷ floor (CPU) | synth CPU | ÷ synth (CPU) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, spec, tree, synth_cpu in cases:
        ours = [py, "-O", "-m", "generator", "check", "--spec", str(spec), "--out", str(tree)]
        floor = [py, str(paths.ROOT / "bench" / "spec_floor.py"), str(spec), str(paths.SPEC_SCHEMA)]
        a, b = series_cls(), series_cls()
        for _ in range(reps):
            a.add(run_timed(ours)[0])
            b.add(run_timed(floor, no_node=True)[0])
        wall, cpu = a.median / b.median, a.cpu / b.cpu
        of_synth = a.cpu / synth_cpu
        lines.append(f"| {label} | {a.min:.2f} / {a.median:.2f} | {b.min:.2f} / {b.median:.2f} | {wall:.2f}× | "
                     f"{a.cpu:.2f} | {b.cpu:.2f} | {cpu:.2f}× | {synth_cpu:.2f} | {of_synth:.2f}× |")
        targets.record(f"check ÷ synth of the same spec, {label}", of_synth, CHECK_LIMIT,
                       note=f"CPU; {cpu:.2f}× the spec-load floor")
    return lines
