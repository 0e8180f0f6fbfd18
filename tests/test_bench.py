"""`make bench` must not rot: its tiny mode runs end to end and writes the
report, and the specs it grows are valid platforms. (Timing itself is the
benchmark's business, never asserted here.)"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench import run, scale
from generator import model as specmod
from generator.kernel import paths
from tests import helpers

NUMBER = r"\d+\.\d\d"
PAIR = rf"{NUMBER} / {NUMBER}"


def test_quick_bench_writes_the_report(tmp_path):
    """End to end, cheaply: the fixture spec only, one repetition."""
    out = tmp_path / "results.md"
    r = subprocess.run([sys.executable, "-m", "bench", "--quick", "--sizes", "--spec", str(helpers.FIXTURE_SPEC),
                        "--out", str(out)], cwd=paths.ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    text = out.read_text()
    assert re.search(r"^Measured \d{4}-\d\d-\d\d by `make bench`", text, re.MULTILINE)
    assert re.search(r"^Machine: \d+ CPUs \(nproc \d+\), .+, Python 3\.", text, re.MULTILINE)
    (row,) = re.findall(r"^\| given \|.*$", text.split("Per overlay")[0], re.MULTILINE)
    cells = [c.strip() for c in row.strip("|").split("|")]
    # spec | workloads | files | synth | floor | ratio | synth CPU | floor CPU | user ratio | kustomize | validate
    assert len(cells) == 11, row
    assert cells[1] == str(len(helpers.fixture_raw()["workloads"])) and int(cells[2]) > 0
    for cell in (cells[3], cells[4], cells[9]):
        assert re.fullmatch(PAIR, cell), cell
    for cell in (cells[6], cells[7]):
        assert re.fullmatch(rf"{NUMBER} \+ {NUMBER}", cell), cell
    for cell in (cells[5], cells[8]):
        assert re.fullmatch(r"\d+\.\d×", cell), cell
    assert re.match(PAIR, cells[10]), cells[10]   # validate ran
    assert re.search(r"^- given spec synth under 2 s: (met|NOT met) \(\d+\.\d\d s median\)$", text, re.MULTILINE)
    # The floor wrote exactly the files synth wrote, so it is the same work minus the generator.
    assert "Floor output byte-identical to synth output: yes" in text
    profiles = sorted(helpers.fixture_raw()["profiles"])
    assert f"| spec | {' | '.join(profiles)} |" in text
    # Loading the spec, beside its floor, in processes that could not start Node.
    (load,) = re.findall(r"^\| given \| .* \| .* \| \d+\.\d\d× \|$", text.split("## Loading the spec")[1], re.MULTILINE)
    assert re.search(r"^Target: within 3× of the floor, no Node process: given: (met|NOT met) \(\d+\.\d\d×\)\.$",
                     text, re.MULTILINE), load


def _case(label: str, workloads: int, files: int, synth: float, floor: float) -> run.Case:
    c = run.Case(label, Path("spec.yaml"), workloads, Path("s"), Path("f"), Path("o"), files=files,
                 profiles=["p"], floor_identical=True)
    for k in (0.9, 1.0, 1.1):   # min 0.9x, median 1x
        c.synth.add(run.Sample(synth * k, synth * 0.8, 0.1))
        c.floor.add(run.Sample(floor * k, floor * 0.8, 0.1))
        c.kustomize_all.add(run.Sample(0.2 * k, 0.1, 0.0))
        c.validate.add(run.Sample(0.5 * k, 0.4, 0.0))
    return c


def test_report_of_grown_specs():
    """The report's rows, growth table and targets for grown specs, from
    made-up timings (1,000 files more cost 1.1 s more at each step: linear)."""
    cases = [_case("shipped", 6, 100, 1.0, 0.1), _case("10 workloads", 10, 200, 1.1, 0.12),
             _case("100 workloads", 100, 1200, 2.2, 0.5), _case("1000 workloads", 1000, 11200, 13.2, 3.3)]
    for c in cases:
        c.kustomize = {"p": c.kustomize_all}
    text = run.report(cases, None, 3, 12.0, (0.5, 0.5, 0.5))
    assert "| 1000 workloads | 1000 | 11200 | 11.88 / 13.20 | 2.97 / 3.30 | 4.0× |" in text
    assert "| 100 → 1000 workloads | 1.10 |" in text and "| 10 → 100 workloads | 1.10 |" in text
    assert "- shipped spec synth under 2 s: met (1.00 s median)" in text
    # CPU: (13.2 x 0.8 + 0.1) / (3.3 x 0.8 + 0.1) = 10.66 / 2.74 = 3.9
    assert ("- 1000 workloads within 7× the floor in CPU: met (3.9× CPU; 4.0× wall clock; peak memory 0 MB, the "
            "largest process of the synth, Python or Node)") in text
    assert "- synth linear in the objects: met (1.10 then 1.10 ms per extra file)" in text


def test_grown_spec_is_a_valid_platform():
    raw = helpers.fixture_raw()
    grown = scale.scaled(raw, 100)
    s = specmod.from_dict(grown, "grown.yaml")   # schema and cross-checks pass
    assert len(s.workloads) == 100
    keys = [(w.namespace, w.name) for w in s.workloads]
    assert len(set(keys)) == 100, "every clone is distinct"
    names = [n["name"] for n in grown["namespaces"]]
    assert len(set(names)) == len(names)
    assert all(len(n) <= max(len(o["name"]) for o in raw["namespaces"]) for n in names)
    # Each clone runs on exactly one of its original's profiles, and all profiles get some.
    assert all(len(w.profiles) == 1 for w in s.workloads)
    used = {w.profiles[0] for w in s.workloads}
    assert used == {p for w in raw["workloads"] for p in w["profiles"]}


def test_team_namespaces_keep_their_length():
    taken = {"llm", "l01"}
    assert [scale.team_namespace("llm", k, taken) for k in (0, 1, 2, 35, 36)] == ["llm", "l02", "l02", "l0z", "l10"]
    with pytest.raises(ValueError, match="too short"):
        scale.team_namespace("a", 36, {"a"})
