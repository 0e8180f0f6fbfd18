"""Every limit is checked before the work it bounds: the inputs that used to hang (a spec
with 100,000 namespaces or 30,000 labels, a 9 MB alias bomb, a FIFO, a multi-document
bomb given to validate) are refused with one line and exit 2 (validate: an IN001 finding).
Run as real processes with a generous timeout that only guards against a hang; how fast
they answer is measured by hand, not here. docs/limits.md is generated from the table."""
from __future__ import annotations

import copy
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from generator import limits
from generator.kernel import input_limits, yamlio
from generator.kernel.errors import SpecError
from generator.model import from_dict
from tests import helpers

HANG_GUARD_S = 120   # far above the second or two these take: only a hang trips it


def _run(*args, cwd=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(helpers.ROOT)}
    return subprocess.run([sys.executable, "-m", "generator", *map(str, args)], capture_output=True, text=True,
                          timeout=HANG_GUARD_S, env=env, cwd=cwd)


def _one_problem_line(err: str) -> str:
    lines = helpers.without_warnings(err)
    assert len(lines) == 1, err
    assert "internal error" not in err and "Traceback" not in err
    return lines[0]


def test_the_limits_page_is_generated_from_the_table():
    page = (helpers.ROOT / "docs" / "limits.md").read_text()
    assert page == limits.markdown(), "docs/limits.md is stale: python -m generator.limits > docs/limits.md"


@pytest.mark.slow
def test_a_spec_with_100000_namespaces_is_refused(tmp_path):
    raw = helpers.fixture_raw()
    raw["namespaces"] += [{"name": f"ns{i}"} for i in range(100_000)]
    spec = helpers.write_spec(tmp_path / "big.yaml", raw)
    r = _run("synth", "--spec", spec, "--out", tmp_path / "out")
    assert r.returncode == 2
    assert "namespaces: 100,001 entries, over the limit of 1,000" in _one_problem_line(r.stderr)
    assert not (tmp_path / "out").exists()


def test_a_mapping_of_30000_labels_is_refused(tmp_path):
    raw = helpers.fixture_raw()
    raw["namespaces"][0]["labels"] = {f"l{i}": "v" for i in range(30_000)}
    spec = helpers.write_spec(tmp_path / "labels.yaml", raw)
    r = _run("synth", "--spec", spec, "--out", tmp_path / "out")
    assert r.returncode == 2
    assert "namespaces['llm'].labels: 30,000 entries, over the limit of 1,000" in _one_problem_line(r.stderr)


def _alias_bomb(size: int) -> str:
    parts = ["specVersion: 1\nname: x\nbig:\n", "  base: &b [" + ",".join(["1"] * 50) + "]\n"]
    line = "  k{}: [*b, *b, *b, *b, *b, *b, *b, *b]\n"
    n = size // len(line.format(10**5))
    return "".join(parts + [line.format(i) for i in range(n)])


def test_a_9_mb_alias_bomb_is_refused_while_it_is_read(tmp_path):
    spec = tmp_path / "bomb.yaml"
    spec.write_text(_alias_bomb(9 * 2**20))
    r = _run("synth", "--spec", spec, "--out", tmp_path / "out")
    assert r.returncode == 2
    assert "aliases expand to more than 1,000,000 values" in _one_problem_line(r.stderr)


def test_the_streaming_check_stops_at_the_first_document_past_the_limit():
    with pytest.raises(yamlio.LimitError) as e:
        yamlio._prescan(_alias_bomb(9 * 2**20))
    assert e.value.problem_mark.line < 3000       # long before the end of the 217,000 lines


def test_documents_that_each_stay_under_the_limit_are_still_a_bomb_together(tmp_path):
    doc = "a: &a [" + ",".join(["x"] * 100) + "]\nb: [" + ",".join(["*a"] * 9000) + "]\n"
    one = yamlio.load_user(doc)                   # 900,000 values: one document is fine
    assert len(one["b"]) == 9000
    stream = tmp_path / "bombs.yaml"
    stream.write_text("---\n".join([doc] * 100))
    r = _run("validate", "--spec", helpers.FIXTURE_SPEC, stream)   # versions from the tests' own spec
    assert r.returncode == 2 or "IN001" in r.stdout, (r.stdout, r.stderr)
    assert "aliases expand to more than 1,000,000 values" in r.stdout + r.stderr


def test_aliases_without_a_bomb_still_read():
    text = "a: &a {x: 1, y: [1, 2]}\nb: *a\nc: [*a, *a]\n"
    assert yamlio.load_user(text) == {"a": {"x": 1, "y": [1, 2]}, "b": {"x": 1, "y": [1, 2]},
                                      "c": [{"x": 1, "y": [1, 2]}] * 2}
    with pytest.raises(yamlio.InputError, match="refers to a value that contains it"):
        yamlio.load_user("a: &a [1, *a]\n")


@pytest.mark.parametrize("command", ["synth", "validate", "plan"])
def test_a_fifo_is_refused_before_it_is_opened(tmp_path, command):
    fifo = tmp_path / "spec.yaml"
    os.mkfifo(fifo)
    args = {"synth": ("synth", "--spec", fifo, "--out", tmp_path / "out"),
            "validate": ("validate", "--spec", helpers.FIXTURE_SPEC, fifo),
            "plan": ("plan", helpers.generated() / "overlays" / "l4-standard", "--scenario", fifo)}[command]
    r = _run(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "named pipe (FIFO), not a regular file" in _one_problem_line(r.stderr)


# ---------------------------------------------------------------- fuzz: size edges

KEYS = sorted(input_limits.SPEC_COUNTS)


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(key=st.sampled_from(KEYS + ["labels"]), over=st.booleans())
def test_fuzz_counts_at_the_edge_of_each_limit(key, over):
    """At the limit a spec gets past the count check (other problems may follow); one past
    it, exactly one line names the field and the limit, and nothing else is looked at."""
    raw = copy.deepcopy(helpers.fixture_raw())
    limit = input_limits.SPEC_COUNTS.get(key, input_limits.SPEC_ENTRIES)
    n = limit + 1 if over else limit
    if key == "labels":
        raw["namespaces"][0]["labels"] = {f"k{i}": "v" for i in range(n)}
        path = "namespaces[0].labels"
    else:
        value = raw.get(key)
        filler = {f"x{i}": {} for i in range(n)} if isinstance(value, dict) else [{} for _ in range(n)]
        raw[key] = filler
        path = key
    found = input_limits.check_spec(raw)
    if over:
        assert [(p.path, p.message.split(" entries")[0]) for p in found] == [(path, f"{n:,}")]
        with pytest.raises(SpecError) as e:
            from_dict(raw, "fuzz.yaml")
        assert [p.path for p in e.value.problems] == [path]
    else:
        assert found == []


def test_a_key_with_dots_is_written_as_every_path_is():
    """A mapping over its limit under a key with dots and slashes: the path quotes the key
    (docs/errors.md, "The line"), so the line points at the field (a dotted path would not)."""
    raw = copy.deepcopy(helpers.fixture_raw())
    raw["namespaces"][0]["labels"] = {"example.com/big": {f"k{i}": "v" for i in range(input_limits.SPEC_ENTRIES + 1)}}
    assert [p.path for p in input_limits.check_spec(raw)] == ['namespaces[0].labels["example.com/big"]']


# ---------------------------------------------------------------- fuzz: cohort cycles

def _has_cycle(parents: dict[str, str | None]) -> bool:
    """Independent of the code under test: walk up from every cohort; a walk longer than the
    number of cohorts has gone round."""
    for start in parents:
        node: str | None = start
        for _ in range(len(parents) + 1):
            node = parents.get(node) if node is not None else None
            if node is None:
                break
        else:
            return True
    return False


NAMES = ["a", "b", "c", "d", "e"]


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parents=st.dictionaries(st.sampled_from(NAMES), st.one_of(st.none(), st.sampled_from(NAMES)), min_size=1))
def test_fuzz_cohort_graphs_in_validate_and_plan(tmp_path_factory, capsys, parents):
    """Any Cohort parent graph (self-parents, loops, chains, forests) with a ClusterQueue under
    each cohort: validate and plan answer with exit 0, 1 or 2, never an internal error, one line
    per problem, and name a cycle exactly when there is one."""
    api = "kueue.x-k8s.io/v1beta2"
    objs: list[dict] = [{"apiVersion": api, "kind": "ResourceFlavor", "metadata": {"name": "f"}}]
    for name, parent in sorted(parents.items()):
        objs.append({"apiVersion": api, "kind": "Cohort", "metadata": {"name": name},
                     "spec": {"parentName": parent} if parent else {}})
        objs.append({"apiVersion": api, "kind": "ClusterQueue", "metadata": {"name": f"cq-{name}"},
                     "spec": {"cohortName": name, "namespaceSelector": {}, "resourceGroups": [
                         {"coveredResources": ["cpu"],
                          "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": "1"}]}]}]}})
    path = tmp_path_factory.mktemp("cohorts") / "cohorts.yaml"
    path.write_text(yamlio.dump_all(objs))
    cycle = _has_cycle({k: v for k, v in parents.items()})
    # The tests' own spec and a named release: the shipped platform.yaml is never read.
    for args in (("validate", path, "--closed", "--spec", helpers.FIXTURE_SPEC), ("plan", path, "--kueue-version", "v0.17.4")):
        code, out, err = helpers.run_cli(capsys, *args)
        text = out + err
        assert code in (0, 1, 2), (args, text)
        assert "internal error" not in text and "Traceback" not in text, text
        named = "form a cycle" in text or "is its own parent" in text
        assert named == cycle, (args, parents, text)


# ---------------------------------------------------------------- integers past any field's range

HUGE = "9" * 5_001   # past Python's integer conversion limit (4,300 digits)


@pytest.mark.parametrize("command", ["synth", "validate", "plan"])
def test_an_integer_of_5001_digits_is_one_line(tmp_path, command):
    """It used to be an internal error (ValueError from int()) in synth, validate and plan."""
    spec = tmp_path / "platform.yaml"
    spec.write_text(helpers.FIXTURE_SPEC.read_text().replace("nodes: 3", f"nodes: {HUGE}", 1))
    assert HUGE in spec.read_text()
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"steps:\n- title: t\n  scale: {{kind: Deployment, name: d, replicas: {HUGE}}}\n")
    args = {"synth": ("synth", "--spec", spec, "--out", tmp_path / "out"),
            "validate": ("validate", "--spec", spec),
            "plan": ("plan", helpers.generated() / "overlays" / "l4-standard", "--scenario", scenario)}[command]
    r = _run(*args, cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    line = _one_problem_line(r.stderr)
    assert f"an integer of 5,001 digits, over the limit of {yamlio.MAX_INT_DIGITS}" in line, line
    assert "internal error" not in r.stderr


def test_integers_up_to_the_limit_still_read():
    assert yamlio.load_user(f"a: {'9' * yamlio.MAX_INT_DIGITS}\n") == {"a": int("9" * yamlio.MAX_INT_DIGITS)}
    assert yamlio.load_user("a: 0x1F\nb: -12\nc: 1_000\n") == {"a": 31, "b": -12, "c": 1000}
    with pytest.raises(yamlio.InputError, match="over the limit of"):
        yamlio.load_user(f"a: {'9' * (yamlio.MAX_INT_DIGITS + 1)}\n")
