"""Errors that end a run with a message for the user instead of a traceback."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    path: str      # dotted field path, e.g. profiles.l4-standard.nodePool.nodes
    message: str   # what is wrong and what is allowed


class SpecError(Exception):
    """The spec is invalid. Exit code 2; nothing is written."""

    def __init__(self, source: str, problems: list[Problem]):
        self.source = source
        self.problems = sorted(set(problems))
        super().__init__(self.render())

    def render(self) -> str:
        return "\n".join(f"{self.source}: {p.path or '<root>'}: {p.message}" for p in self.problems)


def problem(path, message: str) -> Problem:
    return Problem(format_path(path), message)


def format_path(parts) -> str:
    """['profiles', 'l4', 'nodes', 0] -> 'profiles.l4.nodes[0]'."""
    if isinstance(parts, str):
        return parts
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out
