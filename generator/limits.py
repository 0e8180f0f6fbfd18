"""The limits on input, in one table: each is checked before the work it bounds, so a
file over one is refused in a second or two with one line, never a hang. docs/limits.md
is generated from this table (`python -m generator.limits`), and a test keeps it current.

The spec's counts and their check live in generator/kernel/input_limits.py (the model reads
them); this module only gathers every limit into the table."""
from __future__ import annotations

import sys
from dataclasses import dataclass

from .kernel import yamlio
from .kernel.input_limits import SPEC_COUNTS, SPEC_ENTRIES


@dataclass(frozen=True)
class Limit:
    what: str       # what is counted
    value: int
    where: str      # the commands or files it applies to
    why: str


def table() -> list[Limit]:
    from .plan import scenario, simulate
    from .validate import guard
    return [
        Limit("bytes in one input file or stream", yamlio.MAX_BYTES, "every file read (spec, scenarios, manifests)",
              "the API server refuses requests over 3 MiB; a spec is a few KB"),
        Limit("nesting depth of a YAML document", yamlio.MAX_DEPTH, "every file read",
              "a CRD with its schema nests about 40 deep"),
        Limit("values a YAML document expands to through aliases", yamlio.MAX_NODES, "every file read",
              "a large CRD has some 30,000 values; 1 KB of nested aliases can expand to 10^9"),
        Limit("values aliases add across one stream of documents", yamlio.MAX_NODES, "every file read",
              "documents that each stay under the limit are still a bomb together"),
        Limit("digits of an integer", yamlio.MAX_INT_DIGITS, "every file read",
              "no field takes a number past 64 bits (19 digits); Python refuses to convert one of 4,300"),
        *(Limit(f"entries of `{key}` in the spec", n, "synth, check, validate, diff, plan --group",
                "far above any platform's; counted as the spec is read") for key, n in SPEC_COUNTS.items()),
        Limit("entries of any other list or mapping in the spec", SPEC_ENTRIES, "synth, check, validate, diff",
              "labels, env, pools: far above any platform's"),
        Limit("bytes of one generated object", guard.MAX_OBJECT_BYTES, "synth (before writing)",
              "etcd's default request limit is 1.5 MiB"),
        Limit("copies one scenario `submit` step makes", scenario.MAX_COUNT, "plan", "scenarios stay reviewable"),
        Limit("bytes of one scenario file (checked before it is parsed)", scenario.MAX_SCENARIO_BYTES, "plan",
              "the shipped scenarios are a few KB"),
        Limit("steps in one scenario", scenario.MAX_STEPS, "plan", "scenarios stay reviewable"),
        Limit("workload rows one plan simulates and reports (workloads live at each step, summed over the "
              "steps; checked on the counts as written, then on the objects read)", scenario.MAX_ROWS, "plan",
              "bounds the replay's time and the report's size (about 10 MB of JSON; `--changes-only` lists "
              "only what changed)"),
        Limit("workloads simulated in one plan (more are left out, with a note)", simulate.MAX_WORKLOADS, "plan",
              "keeps a replay within seconds"),
        Limit("TPU cubes per reservation", simulate.MAX_CUBES, "plan", "the largest TPU7x reservations"),
        Limit("scheduling cycles in one plan", simulate.MAX_CYCLES, "plan", "a replay that does not settle stops"),
    ]


def markdown() -> str:
    rows = ["# Limits on input", "",
            "Every limit is checked before the work it bounds: input over one is refused with one line (exit 2, or",
            "an `IN001` finding in `validate`), in a second or two. Generated from `generator/limits.py`",
            "(`python -m generator.limits > docs/limits.md`); a test keeps this page current.", "",
            "| what | limit | applies to | why this number |", "| --- | ---: | --- | --- |"]
    rows += [f"| {x.what} | {x.value:,} | {x.where} | {x.why} |" for x in table()]
    rows += ["", "Special files (a named pipe, a device) are refused before they are opened: reading one would block.",
             "Quantities are refused past what Kueue can count (2^63 - 1 milli-units)."]
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown())
