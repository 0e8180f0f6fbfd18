"""Upstream's own test cases, restated (tests/upstream_cases/*.yaml, format in its
README): each case's findings of its rule are exactly the expected ones (the API
server's field path and message, copied from the upstream test or source), and a
valid case raises no error of any API-server rule. Also: every rule a coverage row
says is ported (generator/validate/coverage/) has restated cases, one invalid at least."""
from __future__ import annotations

import argparse
import copy
import re
import tempfile
from pathlib import Path

import pytest

from generator.kernel import apiscope, yamlio
from generator.validate import command, coverage, validate
from generator.validate.rules import RULES
from tests import helpers

CASES = Path(__file__).parent / "upstream_cases"
_CASE_KEYS = {"rule", "upstream", "pod", "container", "objects", "expect"}
# Rules whose error on a valid upstream case is a false alarm of ours.
_API_RULES = ("AS", "NM", "WH")


def load_cases() -> list[tuple[str, int, dict]]:
    out = []
    for path in sorted(CASES.glob("*.yaml")):
        doc = yamlio.load_strict(path.read_text())
        for i, case in enumerate(doc["cases"]):
            assert set(case) <= _CASE_KEYS and case.get("rule") and case.get("upstream"), f"{path.name} cases[{i}]"
            assert sum(k in case for k in ("pod", "container", "objects")) == 1, f"{path.name} cases[{i}]"
            out.append((path.stem, i, case))
    return out


ALL = load_cases()


def objects_of(case: dict, n: int) -> list[dict]:
    if "objects" in case:
        objs = copy.deepcopy(case["objects"])
        for o in objs:
            meta = o.setdefault("metadata", {})
            if not apiscope.is_cluster_scoped(str(o.get("apiVersion")), str(o.get("kind"))):
                meta.setdefault("namespace", f"case{n}")
        return objs
    spec = copy.deepcopy(case["pod"]) if "pod" in case else {"containers": [copy.deepcopy(case["container"])]}
    for key in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(key) or []):
            if isinstance(c, dict):
                c.setdefault("name", f"c{i}" if key == "containers" else f"init{i}")
                c.setdefault("image", "registry.example/app:1.0.0")
    return [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": f"case{n}"}, "spec": spec}]


def run_all() -> dict[int, list]:
    """Every case in its own file, validated file by file (one run): findings per case."""
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    with tempfile.TemporaryDirectory() as d:
        for n, (_, _, case) in enumerate(ALL):
            (Path(d) / f"case{n:04d}.yaml").write_text(yamlio.dump_all(objects_of(case, n)))
        args = parser.parse_args(["validate", "--crd-dir", str(helpers.CRD_ROOT), d])
        opts = command.options(args)
        opts.spec, opts.spec_explicit = str(Path(d) / "no-spec.yaml"), False
        report = validate(opts)
    out: dict[int, list] = {n: [] for n in range(len(ALL))}
    for f in report.findings:
        out[int(Path(f.source).stem[4:])].append(f)
    return out


@pytest.fixture(scope="module")
def results():
    return run_all()


@pytest.mark.parametrize("n", range(len(ALL)), ids=[f"{s}-{i}-{c['rule']}" for s, i, c in ALL])
def test_upstream_case(n, results):
    _, _, case = ALL[n]
    found = results[n]
    got = sorted(f"{f.path}: {f.message}" for f in found if f.rule == case["rule"])
    assert got == sorted(case["expect"] or []), case["upstream"]
    if not case["expect"]:
        alarms = [f"{f.rule} {f.path}: {f.message}" for f in found
                  if f.rule.startswith(_API_RULES) and f.severity == "error"]
        assert alarms == [], case["upstream"]


# The rules written before the coverage tables: tested function by function in
# tests/test_validate_upstream_rules.py, with hand-written manifests.
_EARLIER = re.compile(r"^(AS0\d\d|NM\d\d\d|WK\d\d\d|WH0\d\d|KQ\d\d\d)$")


def test_every_ported_rule_has_upstream_cases():
    invalid = {c["rule"] for _, _, c in ALL if c["expect"]}
    valid = {c["rule"] for _, _, c in ALL if not c["expect"]}
    ported = {r for t in coverage.tables() for row in t.ported for r in row.rules if not _EARLIER.match(r)}
    assert sorted(ported - invalid) == [], "ported rules without an invalid upstream case"
    assert sorted(ported - valid) == [], "ported rules without a valid upstream case"


def test_case_rules_exist():
    assert sorted({c["rule"] for _, _, c in ALL} - set(RULES)) == []
