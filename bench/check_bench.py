"""`make bench` rows for `generator check`: the committed-output check of a
synthesized tree (spec load, the model's checks, the render in Python, the
comparison with the files) against the floor bench/spec_floor.py (PyYAML C load
+ one jsonschema validation of the spec), in alternation, as whole processes.
Both run with JSII_NODE pointing at a file that does not exist: check starts no
Node process, and a run that tried would fail."""
from __future__ import annotations

import sys
from pathlib import Path

from generator.kernel import paths

from . import targets


def measure(run_timed, series_cls, cases: list[tuple[str, Path, Path]], reps: int) -> list[str]:
    """Markdown lines for the report; cases: (label, spec, synthesized tree)."""
    py = sys.executable
    lines = ["", "## check", "",
             "`python -O -m generator check --spec SPEC --out TREE` on the tree synth wrote from SPEC (it passes), "
             "against the floor **PyYAML C load + jsonschema validate** of the spec (bench/spec_floor.py). Whole "
             "processes, both with no Node process possible; seconds of wall clock min / median, and median CPU "
             "(user + system) of the process tree:", "",
             "| spec | check | floor | ÷ floor (wall) | check CPU | floor CPU | ÷ floor (CPU) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for label, spec, tree in cases:
        ours = [py, "-O", "-m", "generator", "check", "--spec", str(spec), "--out", str(tree)]
        floor = [py, str(paths.ROOT / "bench" / "spec_floor.py"), str(spec), str(paths.SPEC_SCHEMA)]
        a, b = series_cls(), series_cls()
        for _ in range(reps):
            a.add(run_timed(ours, no_node=True)[0])
            b.add(run_timed(floor, no_node=True)[0])
        wall, cpu = a.median / b.median, a.cpu / b.cpu
        lines.append(f"| {label} | {a.min:.2f} / {a.median:.2f} | {b.min:.2f} / {b.median:.2f} | {wall:.2f}× | "
                     f"{a.cpu:.2f} | {b.cpu:.2f} | {cpu:.2f}× |")
        targets.record(f"check ÷ floor, {label}", cpu, 3, note=f"CPU; wall {wall:.2f}×")
    return lines
