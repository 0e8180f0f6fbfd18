"""`make bench` must not rot: its tiny mode runs end to end and writes the
report, and the specs it grows are valid platforms. (Timing itself is the
benchmark's business, never asserted here.)"""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from bench import scale
from generator import paths, spec as specmod
from tests import helpers

NUMBER = r"\d+\.\d\d"
PAIR = rf"{NUMBER} / {NUMBER}"


def test_quick_bench_writes_the_report(tmp_path):
    out = tmp_path / "results.md"
    r = subprocess.run([sys.executable, "-m", "bench", "--quick", "--out", str(out)],
                       cwd=paths.ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    text = out.read_text()
    assert re.search(r"^Measured \d{4}-\d\d-\d\d by `make bench`", text, re.M)
    assert re.search(r"^Machine: \d+ CPUs \(nproc \d+\), .+, Python 3\.", text, re.M)
    main_table = text.split("Per overlay")[0]
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| (shipped|10 workloads) \|.*$", main_table, re.M)}
    assert set(rows) == {"shipped", "10 workloads"}, text
    n_shipped = len(helpers.fixture_raw()["workloads"])
    for label, row in rows.items():
        cells = [c.strip() for c in row.strip("|").split("|")]
        # spec | workloads | files | synth | floor | ratio | synth CPU | floor CPU | user ratio | kustomize | validate
        assert len(cells) == 11, row
        assert cells[1] == str(10 if label == "10 workloads" else n_shipped)
        assert int(cells[2]) > 0
        for cell in (cells[3], cells[4], cells[9]):
            assert re.fullmatch(PAIR, cell), (label, cell)
        for cell in (cells[6], cells[7]):
            assert re.fullmatch(rf"{NUMBER} \+ {NUMBER}", cell), (label, cell)
        for cell in (cells[5], cells[8]):
            assert re.fullmatch(r"\d+\.\d×", cell), (label, cell)
        assert re.match(PAIR, cells[10]), cells[10]   # validate ran (it exists in this tree)
    assert re.search(r"^- shipped spec synth under 2 s: (met|NOT met) \(\d+\.\d\d s median\)$", text, re.M)
    # The floor wrote exactly the files synth wrote, so it is the same work minus the generator.
    assert "Floor output byte-identical to synth output: yes" in text
    # One kustomize column per overlay of the shipped spec.
    profiles = sorted(helpers.fixture_raw()["profiles"])
    assert f"| spec | {' | '.join(profiles)} |" in text


def test_grown_spec_is_a_valid_platform():
    raw = helpers.fixture_raw()
    grown = scale.scaled(raw, 100)
    s = specmod.from_dict(grown, "grown.yaml")   # schema and cross-checks pass
    assert len(s.workloads) == 100
    keys = [(w["namespace"], w["name"]) for w in s.workloads]
    assert len(set(keys)) == 100, "every clone is distinct"
    names = [n["name"] for n in grown["namespaces"]]
    assert len(set(names)) == len(names)
    assert all(len(n) <= max(len(o["name"]) for o in raw["namespaces"]) for n in names)
    # Each clone runs on exactly one of its original's profiles, and all profiles get some.
    assert all(len(w["profiles"]) == 1 for w in s.workloads)
    used = {w["profiles"][0] for w in s.workloads}
    assert used == {p for w in raw["workloads"] for p in w["profiles"]}


def test_team_namespaces_keep_their_length():
    taken = {"llm", "l01"}
    assert [scale.team_namespace("llm", k, taken) for k in (0, 1, 2, 35, 36)] == ["llm", "l02", "l02", "l0z", "l10"]
    with pytest.raises(ValueError, match="too short"):
        scale.team_namespace("a", 36, {"a"})
