"""Values left over from the shipped example spec: accepted (the example must
synthesize), but worth a warning before they reach a cluster."""
from __future__ import annotations

from typing import Any

from ..kernel.errors import Problem, format_path

# The example's stand-ins for a user's own project, organisation and bucket names.
PLACEHOLDERS = ("my-ml-project", "my-org", "example-project")


def _walk(node: Any, path: tuple):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _walk(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, path + (i,))
    elif isinstance(node, str):
        yield path, node


def warnings(raw: dict) -> list[Problem]:
    """One warning per placeholder still in the spec, naming where (the first few fields)."""
    where: dict[str, list[str]] = {}
    for path, value in _walk(raw, ()):
        for p in PLACEHOLDERS:
            if p in value:
                where.setdefault(p, []).append(format_path(list(path)))
    out = []
    for p, paths in where.items():
        more = f" and {len(paths) - 3} more" if len(paths) > 3 else ""
        out.append(Problem(paths[0], f"{p!r}, a placeholder of the example spec, is still in {len(paths)} "
                                     f"field{'s' if len(paths) > 1 else ''} ({', '.join(paths[:3])}{more}); "
                                     "put your own values there before applying"))
    return out
