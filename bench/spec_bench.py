"""`make bench` rows for loading and checking the spec (the typed model, every
cross-check) against the floor bench/spec_floor.py (PyYAML C load + one
jsonschema validation of the same file), in alternation, as whole processes.
Both run with JSII_NODE pointing at a file that does not exist, so a Node
start would fail the run: "no Node process" is checked, not assumed."""
from __future__ import annotations

import sys
from pathlib import Path

from generator.kernel import paths

from . import targets


def measure(run_timed, series_cls, specs: list[tuple[str, Path]], reps: int) -> list[str]:
    """Markdown lines for the report; specs: (label, path) pairs."""
    py = sys.executable
    lines = ["", "## Loading the spec", "",
             "`generator.model.load` (YAML through the bounded reader, the typed model, every cross-check: "
             "what synth, validate and plan do first; bench/spec_load.py, which fails if cdk8s or jsii was "
             "imported) against the floor **PyYAML C load + jsonschema validate** of the same file against "
             "schemas/platform.schema.json (bench/spec_floor.py). Whole processes, seconds of wall clock, "
             "min / median; both with JSII_NODE pointing nowhere, so no Node process can start.", "",
             "| spec | spec load | floor | ÷ floor |", "|---|---:|---:|---:|"]
    verdicts = []
    for label, spec in specs:
        ours = [py, "-m", "bench.spec_load", str(spec)]
        floor = [py, str(paths.ROOT / "bench" / "spec_floor.py"), str(spec), str(paths.SPEC_SCHEMA)]
        a, b = series_cls(), series_cls()
        for _ in range(reps):
            a.add(run_timed(ours, no_node=True)[0])
            b.add(run_timed(floor, no_node=True)[0])
        ratio = a.median / b.median
        lines.append(f"| {label} | {a.min:.2f} / {a.median:.2f} | {b.min:.2f} / {b.median:.2f} | {ratio:.2f}× |")
        verdicts.append(f"{label}: {'met' if ratio <= 3 else 'NOT met'} ({ratio:.2f}×)")
        targets.record(f"spec load ÷ floor, {label}", ratio, 3, note="wall")
    lines += ["", "Target: within 3× of the floor, no Node process: " + "; ".join(verdicts) + "."]
    return lines
