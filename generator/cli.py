"""Command line: python -m generator <command>."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import paths
from .errors import SpecError

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _render(spec_path: str) -> dict[str, str]:
    from . import platform, spec
    return platform.build(spec.load(spec_path))


def cmd_synth(args) -> int:
    from . import writer
    tree = _render(args.spec)
    writer.write_tree(tree, Path(args.out), paths.OUTPUT_DIRS)
    print(f"synth: wrote {len(tree)} files under {', '.join(d + '/' for d in paths.OUTPUT_DIRS)} of {args.out}")
    return EXIT_OK


def cmd_check(args) -> int:
    from . import writer
    expected = _render(args.spec)
    actual = writer.read_tree(Path(args.out), paths.OUTPUT_DIRS)
    problems = writer.diff_trees(expected, actual)
    if problems:
        print("check: committed output does not match the generator; run `make synth` and commit:", file=sys.stderr)
        for line in problems:
            print(f"  {line}", file=sys.stderr)
        return EXIT_FINDINGS
    print(f"check: {len(expected)} generated files match {args.spec}")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generator", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p):
        p.add_argument("--spec", default=str(paths.DEFAULT_SPEC), help="platform spec (default: platform.yaml)")
        p.add_argument("--out", default=str(paths.ROOT), help="directory holding base/, overlays/, controllers/")

    p = sub.add_parser("synth", help="generate base/, overlays/ and controllers/ from the spec")
    common(p)
    p.set_defaults(func=cmd_synth)
    p = sub.add_parser("check", help="fail if the committed output differs from what the spec generates")
    common(p)
    p.set_defaults(func=cmd_check)

    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except SpecError as e:
        print(e.render(), file=sys.stderr)
        return EXIT_USAGE
