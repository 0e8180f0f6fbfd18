"""The limits on input, in one table: each is checked before the work it bounds, so a
file over one is refused in a second or two with one line, never a hang. docs/limits.md
is generated from this table (`python -m generator.limits`), and a test keeps it current.

The spec's counts are checked on the YAML as read, before the typed model is built and
before anything is rendered: a spec with 100,000 namespaces or a mapping of 30,000 labels
is refused at once instead of being pushed through the model, the checks and cdk8s."""
from __future__ import annotations

import sys
from dataclasses import dataclass

from .kernel import yamlio
from .kernel.errors import Problem, format_path


@dataclass(frozen=True)
class Limit:
    what: str       # what is counted
    value: int
    where: str      # the commands or files it applies to
    why: str


# Top-level lists and mappings of the spec: far above any platform's (the benchmark's
# 1,000-workload spec has 167 namespaces), far below what makes a run take minutes.
SPEC_COUNTS = {
    "namespaces": 1_000,
    "profiles": 100,
    "queues": 2_000,
    "priorityTiers": 100,
    "images": 1_000,
    "teams": 1_000,
    "multiKueue": 100,
    "workloads": 2_000,
}
# Any other list or mapping in the spec (labels, env, node pools, tolerations, ...).
SPEC_ENTRIES = 1_000


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
        *(Limit(f"entries of `{key}` in the spec", n, "synth, check, validate, diff, plan --group",
                "far above any platform's; counted as the spec is read") for key, n in SPEC_COUNTS.items()),
        Limit("entries of any other list or mapping in the spec", SPEC_ENTRIES, "synth, check, validate, diff",
              "labels, env, pools: far above any platform's"),
        Limit("bytes of one generated object", guard.MAX_OBJECT_BYTES, "synth (before writing)",
              "etcd's default request limit is 1.5 MiB"),
        Limit("copies one scenario `submit` step makes", scenario.MAX_COUNT, "plan", "scenarios stay reviewable"),
        Limit("workloads simulated in one plan (more are left out, with a note)", simulate.MAX_WORKLOADS, "plan",
              "keeps a replay within seconds"),
        Limit("TPU cubes per reservation", simulate.MAX_CUBES, "plan", "the largest TPU7x reservations"),
        Limit("scheduling cycles in one plan", simulate.MAX_CYCLES, "plan", "a replay that does not settle stops"),
    ]


def check_spec(raw: dict) -> list[Problem]:
    """One problem per list or mapping of the spec over its limit (paths as the user wrote them);
    what is inside one over its limit is not looked at."""
    out: list[Problem] = []
    stack: list[tuple[str, object, int]] = [(k, v, SPEC_COUNTS.get(k, SPEC_ENTRIES)) for k, v in raw.items()]
    while stack:
        path, value, limit = stack.pop()
        if not isinstance(value, (list, dict)):
            continue
        if len(value) > limit:
            out.append(Problem(path, f"{len(value):,} entries, over the limit of {limit:,} (docs/limits.md)"))
            continue
        items = enumerate(value) if isinstance(value, list) else value.items()
        stack += [(format_path((k,), path), v, SPEC_ENTRIES) for k, v in items]
    return sorted(out, key=lambda p: p.path)


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
