"""One clean line per problem (docs/errors.md): whatever the spec holds, each problem renders
as one line, without control characters, of bounded length. Seeded and bounded."""
from __future__ import annotations

import copy
import re

from hypothesis import HealthCheck, given, seed, settings, strategies as st

from generator import model as spec
from generator.kernel import yamlio
from generator.kernel.errors import MAX_MESSAGE, MAX_PLACE, SpecError
from tests import helpers
from tests.test_fuzz_spec import _paths, _set

BASE = helpers.fixture_raw()
HOSTILE = st.one_of(
    st.text(alphabet=st.sampled_from("ab-\n\r\t\x00\x1b\x7f\u2028\u2029\u0085 é'\"[]."), max_size=400),
    st.sampled_from(["x" * 5000, "line1\nline2", "\x1b[31mred\x1b[0m", "a" * 70 + "\n" + "b" * 70,
                     " ".join(["word"] * 300), "g2-standard-25\n"]),
)
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
SOURCE = "fuzz.yaml"
LIMIT = MAX_PLACE + 2 + MAX_PLACE + 2 + MAX_MESSAGE


@st.composite
def hostile_spec(draw):
    raw = copy.deepcopy(BASE)
    paths = [p for p in _paths(raw) if p]
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        path = draw(st.sampled_from(paths))
        value = draw(HOSTILE)
        try:
            if draw(st.booleans()) and isinstance(_parent(raw, path), dict):
                _parent(raw, path)[value] = "x"   # as a key
            else:
                _set(raw, path, value)
        except (KeyError, IndexError, TypeError):
            pass
    return raw


def _parent(raw, path):
    for part in path[:-1]:
        raw = raw[part]
    return raw


def _check(e: SpecError) -> None:
    lines = e.render().split("\n")
    assert len(lines) == len(e.problems), lines
    for line in lines:
        assert not CONTROL.search(line), repr(line)
        assert len(line) <= LIMIT, len(line)


@seed(20261201)
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(raw=hostile_spec())
def test_each_problem_is_one_clean_bounded_line(raw):
    try:
        spec.from_dict(raw, SOURCE)
    except SpecError as e:
        _check(e)


def test_a_file_with_hostile_values_renders_positions_and_clean_lines(tmp_path):
    raw = copy.deepcopy(BASE)
    raw["profiles"]["l4-standard"]["nodePool"]["machineType"] = "g2\x1b[31m-standard\n" + "9" * 300
    raw["kueue"]["ver\tsion"] = "x"
    path = tmp_path / "spec.yaml"
    path.write_text(yamlio.dump(raw))
    try:
        spec.load(path)
    except SpecError as e:
        _check(e)
        text = e.render()
        assert "\\x1b[31m" in text and "\\n" in text and "…" in text, text
        assert re.search(re.escape(str(path)) + r":\d+:\d+: " + re.escape('kueue["ver\\tsion"]: unknown field'), text), text
    else:
        raise AssertionError("the spec was accepted")


YAMLISH = st.one_of(
    HOSTILE,
    st.sampled_from(["a: {b: [1, {c: d}]}\n", "? [a, b]\n: c\n", "a: &x {b: 1}\nc: *x\n", "- a\n- {name: x}\n",
                     "a:\n  b.c/d: 1\n  '0': [x]\n", "1: 2\ntrue: [3]\n", "a: [unclosed\n", "---\na: 1\n---\nb: 2\n",
                     "a: !!binary aGVsbG8=\n", "\ufeffa: 1\n"]),
)
PATHS = st.sampled_from(["", "a", "a.b", "a.b[0]", "a.b[1].c", "a[\"b.c/d\"]", "a['0'][0]", "[0]", "[1].name",
                         "c.b", "1", "true[0]", "x.y.z", "a.b[99]", "a..b", "a[", "a[']"])


@seed(20261202)
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=YAMLISH, path=PATHS)
def test_any_file_and_path_render_without_error(text, path, tmp_path_factory):
    from generator.kernel.errors import Problem
    f = tmp_path_factory.mktemp("r") / "f.yaml"
    f.write_text(text)
    e = SpecError(str(f), [Problem(path, "wrong")])
    _check(e)


# ---------------------------------------------------------------- names from manifests (validate, plan)

HOSTILE_NAMES = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: "lq\\e]0;title\\a", namespace: default}
spec: {clusterQueue: cq}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: "j\\e[31mred\\nsecond line"
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: "lq"}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: "busybox:1.36"}]
"""


def _run(*args: str):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "generator", *args], capture_output=True, text=True, timeout=120)


def test_validate_prints_a_name_with_a_newline_or_escape_on_one_escaped_line(tmp_path):
    f = tmp_path / "m.yaml"
    f.write_text(HOSTILE_NAMES)
    out = _run("validate", str(f))
    findings = [line for line in out.stdout.splitlines() if line.startswith(str(f))]
    assert out.returncode == 1 and findings
    assert not [line for line in out.stdout.splitlines() if CONTROL.search(line)]
    assert any("Job/default/j\\x1b[31mred\\nsecond line: metadata.name: NM001" in line for line in findings)
    assert not [line for line in out.stdout.splitlines() if line.startswith("second line")]


def test_plan_refuses_a_name_with_a_control_character_in_one_line_each(tmp_path):
    f = tmp_path / "m.yaml"
    f.write_text(HOSTILE_NAMES)
    out = _run("plan", str(f))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.splitlines() == [
        f"{f}: [0].metadata: LocalQueue default/lq\\x1b]0;title\\x07: a name with a control character, "
        "which the API server refuses",
        f"{f}: [1].metadata: Job default/j\\x1b[31mred\\nsecond line: a name with a control character, "
        "which the API server refuses"]


def test_a_report_keeps_its_lines_and_escapes_everything_else():
    from generator.kernel.errors import printable
    assert printable("a\tb\nc\x1b[31md\x07\r\u2028") == "a\tb\nc\\x1b[31md\\x07\\r\\u2028"


def test_a_report_replaces_a_credential_it_would_quote():
    """A scenario title or a hand-written manifest quoted in plan's or diff's report: a GitHub token's
    published shape (ghp_ and 36 characters) is replaced there too."""
    from generator.kernel.errors import printable
    token = "ghp_" + "A1b2C3d4E5" * 3 + "f6G7h8"
    assert printable(f"step: rotate {token}\n") == "step: rotate <redacted>\n"
