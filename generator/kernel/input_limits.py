"""The spec's counts, checked on the YAML as read, before the typed model is built and
before anything is rendered: a spec with 100,000 namespaces or a mapping of 30,000 labels
is refused at once instead of being pushed through the model, the checks and cdk8s.
Every limit on input is listed in one table, generator/limits.py (the tool's documentation lists every limit: Limits on input)."""
from __future__ import annotations

from .errors import Problem, format_path

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



def check_spec(raw: dict) -> list[Problem]:
    """One problem per list or mapping of the spec over its limit (paths as the user wrote them);
    what is inside one over its limit is not looked at."""
    out: list[Problem] = []
    # A path is (top-level key as written, the keys below it), written out only for a problem.
    stack: list[tuple[tuple, object, int]] = [((k,), v, SPEC_COUNTS.get(k, SPEC_ENTRIES)) for k, v in raw.items()]
    while stack:
        path, value, limit = stack.pop()
        if not isinstance(value, (list, dict)):
            continue
        if len(value) > limit:
            out.append(Problem(format_path(path[1:], str(path[0])), f"{len(value):,} entries, over the limit of {limit:,} "
                                                               "(the tool's documentation lists every limit: Limits on input)"))
            continue
        items = enumerate(value) if isinstance(value, list) else value.items()
        stack += [((*path, k), v, SPEC_ENTRIES) for k, v in items if isinstance(v, (list, dict))]
    return sorted(out, key=lambda p: p.path)
