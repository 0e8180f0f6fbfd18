"""Seeded property tests over specs: mutated fixture specs are either refused
(SpecError: one line per problem, never another exception) or accepted, and
then everything synth writes passes the API server's rules that need no
schemas (generator/validate/guard.py) and the validator finds no error in it.
Bounded: a fixed seed and a fixed number of examples."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings, strategies as st

from generator import model as spec
from generator.builders import tree as platform
from generator.kernel import yamlio
from generator.kernel.errors import SpecError
from generator.validate import guard
from tests.test_validate_corpus import run as validate_run

FIXTURES = [Path(__file__).parent / "fixtures" / "teams.yaml",
            Path(__file__).parent.parent / "examples" / "h100-l4-spot.yaml",
            Path(__file__).parent.parent / "examples" / "tpu-v6e.yaml"]
BASES = [yamlio.load_strict(p.read_text()) for p in FIXTURES]

# Values that have broken generators before: floats for integers, huge numbers, names that
# start with a digit or run long, label-hostile text, credentials, nesting, wrong types.
ODD: st.SearchStrategy = st.one_of(
    st.sampled_from([0, -1, 1, 2, 3.0, 2.5, 2**31, 2**63, 10**30, "", "x", "9name", "A=B", "a" * 64, "a" * 300,
                     "has space", "latest", "1e999999999", "lots", "50%", "101%", None, True, [], {}, {"a": 1},
                     "hf_abcdefghijklmnopqrstuvwxyz012345", "https://u:p@host/x", "--hf-token=abc123456789"]),
    st.integers(min_value=-2**40, max_value=2**40),
    st.text(max_size=20),
)


def _paths(node, prefix=()):
    """Every path to a value in the spec, parents first."""
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


def _set(node, path, value):
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


@st.composite
def mutated(draw):
    raw = copy.deepcopy(draw(st.sampled_from(BASES)))
    paths = [p for p in _paths(raw) if p]
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(paths))
        try:
            _set(raw, path, draw(ODD))
        except (KeyError, IndexError, TypeError):
            pass
    return raw


def _accepted(raw):
    try:
        return spec.from_dict(raw, "fuzz.yaml")
    except SpecError as e:
        assert e.problems, "a SpecError names at least one problem"
        assert all(p.message for p in e.problems)
        return None


@seed(20261130)
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(doc=mutated())
def test_specs_are_refused_cleanly_or_accepted(doc):
    _accepted(doc)   # any exception but SpecError fails the test


# Mutations a user makes on purpose: other counts, names, sizes, within what the spec allows.
PLAUSIBLE = [1, 2, 3, 4, 8, "1", "2", "4Gi", "500m", "a1", "team-x", "v2", "0.2.0", True, False]


def test_what_accepted_specs_write_is_valid(tmp_path):
    """Deterministic (seeded) plausible mutations: most are accepted, and every accepted one
    writes only objects the API-server guard and the validator accept."""
    import random
    rnd = random.Random(20261130)
    accepted = 0
    for n in range(12):
        raw = copy.deepcopy(rnd.choice(BASES))
        paths = [p for p in _paths(raw) if p and not isinstance(_value(raw, p), (dict, list))]
        for _ in range(rnd.randint(1, 2)):
            path = rnd.choice(paths)
            if type(_value(raw, path)) is type(value := rnd.choice(PLAUSIBLE)):
                _set(raw, path, value)
        s = _accepted(raw)
        if s is None:
            continue
        try:
            tree = platform.build(s)
        except SpecError:
            continue   # a refusal only the built objects show is a clean refusal too
        accepted += 1
        assert guard.problems(tree) == []
        base = [text for path, text in sorted(tree.items()) if path.startswith("base/")
                and not path.endswith("kustomization.yaml")]
        for profile in s.profiles:
            texts = [text for path, text in sorted(tree.items()) if path.startswith(f"overlays/{profile}/")
                     and not path.endswith("kustomization.yaml")]
            out = tmp_path / f"{n}-{profile}.yaml"
            out.write_text("\n---\n".join(base + texts))
            report = validate_run(out, [])
            assert [f.report_line() for f in report.findings if f.severity == "error"] == []
    assert accepted >= 4, f"only {accepted} of 12 plausible mutations were accepted: the test would prove little"


def _value(node, path):
    for part in path:
        node = node[part]
    return node


def _lists(node, prefix=()):
    """The path of every non-empty list in the spec."""
    if isinstance(node, list) and node:
        yield prefix
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        yield from _lists(v, prefix + (k,))


# Lists where an entry may repeat: words of a command line.
REPEATABLE = {"args", "command", "engineArgs"}


# Every fixture and example spec (the files their manifest workloads name made absolute).
ALL_SPECS = {p.stem: p for p in [*sorted((Path(__file__).parent / "fixtures").glob("*.yaml")),
                                 *sorted((Path(__file__).parent.parent / "examples").glob("*.yaml"))]}


def _duplicated():
    for name, path in ALL_SPECS.items():
        for where in _lists(yamlio.load_strict(path.read_text())):
            if where[-1] not in REPEATABLE:
                yield pytest.param(name, where, id=f"{name}:{'.'.join(map(str, where))}")


@pytest.mark.parametrize(("base", "path"), list(_duplicated()))
def test_every_list_with_an_entry_twice_is_refused_in_one_line_or_built(base, path):
    """Every list of the fixtures with its first entry listed twice (a team's namespace, a
    queue's profile, a node pool, a worker, ...): a SpecError naming the list, never another
    exception, never output that holds the same object twice."""
    from tests import helpers
    raw = helpers.example_raw(ALL_SPECS[base])
    items = _value(raw, path)
    items.append(copy.deepcopy(items[0]))
    s = _accepted(raw)
    if s is None:
        return
    tree = platform.build(s)   # an internal error fails the test
    assert guard.problems(tree) == []
