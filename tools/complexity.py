"""Cyclomatic complexity gate: list every function over the limit, as radon measures it.

ruff's C90 (mccabe) and radon count differently (radon adds one per boolean operator and
comprehension clause), so the issue's limit is checked with radon itself.
Usage: python tools/complexity.py [--max N] [PATH ...]   (default: generator/ and bench/, N = 15)
Exit status: 0 when every function is within the limit, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Function

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATHS = ("generator", "bench")


def _python_files(paths: list[str]) -> Iterator[Path]:
    for name in paths:
        path = Path(name) if Path(name).is_absolute() else ROOT / name
        if path.is_dir():
            yield from sorted(path.rglob("*.py"))
        else:
            yield path


def _with_closures(function: Function) -> Iterator[Function]:
    # radon scores a nested function on its own (not in its parent's number), so it is checked too.
    yield function
    for closure in function.closures:
        yield from _with_closures(closure)


def _functions(source: str) -> Iterator[Function]:
    # cc_visit returns classes with their methods nested, plus every top-level function;
    # a class's own score is not a function's, so only its methods are reported.
    for block in cc_visit(source):
        methods = [block] if isinstance(block, Function) else block.methods
        for method in methods:
            yield from _with_closures(method)


def over_limit(paths: list[str], limit: int) -> list[str]:
    """One `file:line function complexity` line per function whose complexity exceeds `limit`."""
    lines = []
    for path in _python_files(paths):
        for function in _functions(path.read_text(encoding="utf-8")):
            if function.complexity > limit:
                shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                lines.append(f"{shown}:{function.lineno} {function.fullname} {function.complexity}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=15, help="highest complexity allowed (default 15)")
    parser.add_argument("paths", nargs="*", default=list(DEFAULT_PATHS), help="files or folders (default: generator bench)")
    args = parser.parse_args(argv)
    lines = over_limit(args.paths, args.max)
    for line in lines:
        print(line)
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
