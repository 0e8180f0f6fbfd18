"""The hand-written corpus: every rule fires on its bad.yaml with the expected
object and field path (and nothing else fires), and good.yaml is clean."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from generator.validate import command, validate
from generator.validate.rules import RULES
from tests import helpers

CORPUS = Path(__file__).parent / "validate_corpus"
RULE_DIRS = sorted(d.name for d in CORPUS.iterdir() if d.is_dir())


def run(path: Path, extra: list[str]):
    """Validate one corpus file. Each file is a whole world (closed: a reference to an object
    it lacks is an error) unless its header says `# world: open`. A directory is a MultiKueue
    group: one file per cluster, named after it (validate --multikueue)."""
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    world = [] if header(path, "world") == ["open"] else ["--closed"]
    inputs = [str(f) for f in _files(path)] if path.is_dir() else [str(path)]
    group = ["--multikueue"] if path.is_dir() else []
    # No spec: the pins are versions.yaml's defaults, so platform.yaml edits cannot move the corpus.
    args = parser.parse_args(["validate", "--crd-dir", str(helpers.CRD_ROOT), *world, *group, *extra, *inputs])
    opts = command.options(args)
    opts.spec, opts.spec_explicit = str(path.parent / "no-spec.yaml"), False
    return validate(opts)


def _files(path: Path) -> list[Path]:
    return sorted(path.glob("*.yaml")) if path.is_dir() else [path]


def case(rule: str, which: str) -> Path:
    """bad.yaml / good.yaml, or the bad/ and good/ directories of a group rule."""
    d = CORPUS / rule / which
    return d if d.is_dir() else CORPUS / rule / f"{which}.yaml"


def header(path: Path, key: str) -> list[str]:
    return [line[len(f"# {key}: "):].rstrip() for f in _files(path) for line in f.read_text().splitlines()
            if line.startswith(f"# {key}: ")]


def expected(path: Path) -> set[tuple[str, str, str]]:
    """`# expect: RULE OBJECT [@ PATH]` lines as (rule, object, path)."""
    out = set()
    for line in header(path, "expect"):
        rule, _, rest = line.partition(" ")
        obj, _, field = rest.partition(" @ ")
        out.add((rule, obj, field))
    return out


def found(report) -> set[tuple[str, str, str]]:
    return {(f.rule, f.object, f.path) for f in report.findings}


# Rules whose inputs cannot be written as a pair of plain manifests; their tests are in
# tests/test_validate_robust.py.
NO_CORPUS = {"IE001", "CE003"}


def test_every_rule_has_a_corpus_entry():
    assert sorted(set(RULES) - NO_CORPUS) == RULE_DIRS


@pytest.mark.parametrize("rule", RULE_DIRS)
def test_bad_fires(rule):
    bad = case(rule, "bad")
    want = expected(bad)
    assert want and all(r == rule for r, _, _ in want), f"{bad}: header must expect {rule} only"
    report = run(bad, " ".join(header(bad, "args")).split())
    assert found(report) == want, "\n".join(f.report_line() for f in report.findings)
    severity = RULES[rule].severity
    assert all(f.severity == severity for f in report.findings if f.rule == rule)


@pytest.mark.parametrize("rule", RULE_DIRS)
def test_good_is_clean(rule):
    good = case(rule, "good")
    report = run(good, " ".join(header(good, "args") or header(case(rule, "bad"), "args")).split())
    assert report.findings == [], "\n".join(f.report_line() for f in report.findings)
    assert report.sources[0]["objects"] > 0
