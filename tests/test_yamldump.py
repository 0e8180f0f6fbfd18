"""generator/kernel/yamldump.py writes what PyYAML's own path writes for the same
dumper, byte for byte: on every file the fixture platforms generate, and on
values chosen to hit each of its paths (shared objects become anchors)."""
from __future__ import annotations

import pytest
import yaml

from generator import model as specmod
from generator.builders import tree
from generator.kernel import yamlio

from .helpers import FIXTURES


def _both(obj) -> tuple[str, str]:
    return tuple(yaml.dump(obj, Dumper=d, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096)
                 for d in (yamlio._FastDumper, yamlio._Dumper))  # type: ignore[return-value]  # two, by construction


@pytest.mark.parametrize("spec", sorted(FIXTURES.glob("*.yaml")), ids=lambda p: p.name)
def test_generated_files_are_written_as_pyyaml_writes_them(spec):
    _, emitted = tree.render(specmod.load(spec))
    for objs in emitted.values():
        for obj in objs:
            fast, reference = _both(obj)
            assert fast == reference


def test_each_path_matches_pyyaml():
    shared = {"a": 1}
    values = ["", "4", "1.0", "true", "no", "null", "~", "a: b", "- x", "#c", " lead", "trail ", "é ü 中",
              "two\nlines", "ends\n", "0x1F", "2024-01-01", "*x", "&y", "'q'", '"d"', "@at", "%p"]
    obj = {"strings": values, "ints": [0, -1, 2**40], "floats": [0.5, 2.0, float("inf")], "bools": [True, False],
           "none": None, "empty": {"m": {}, "s": []}, "shared": [shared, shared], "again": shared,
           "tuple": (1, 2), "nested": [[{"k": [None]}]], 7: "int key"}
    fast, reference = _both(obj)
    assert fast == reference and "&id001" in fast


# ---------------------------------------------------------------- any YAML reader decodes the same strings

# The oracle, restated from the specifications (never from generator/kernel/yamldump.py):
# YAML 1.1's implicit types (yaml.org/type/bool.html, null.html, int.html, float.html), and
# go-yaml v2 (resolve.go), which kubectl and Argo CD read YAML with (sigs.k8s.io/yaml): its
# word table, then strconv.ParseInt(s, 0, 64) with `_` removed and ParseFloat for
# yamlStyleFloat = ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$.
import re  # noqa: E402

from hypothesis import given, settings, strategies as st  # noqa: E402

YAML11 = [
    r"y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF",        # bool
    r"~|null|Null|NULL|",                                                                          # null
    r"[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+",  # int
    r"[-+]?([0-9][0-9_]*)?\.[0-9.]*([eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*"
    r"|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)",                                                      # float
]
GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
GO_INT = re.compile(r"[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")


def _read_as_non_string(word: str) -> bool:
    if any(re.fullmatch(p, word) for p in YAML11[:3]):
        return True
    if re.fullmatch(YAML11[3], word) and _float(word):
        return True   # the spec's float pattern also matches "1.2.3" and ".", which no reader can make a float of
    plain = word.replace("_", "")
    return bool(word[:1] in "0123456789+-." and (GO_INT.fullmatch(plain) or GO_FLOAT.fullmatch(plain)))


def _float(word: str) -> bool:
    try:
        float(word.replace("_", "").lstrip("."))
    except ValueError:
        return word.lower().lstrip("+-") in (".inf", ".nan")
    return True


def _plain_scalars(text: str) -> list[str]:
    """Every scalar the text writes plain (unquoted), keys included."""
    out = []
    for doc in yaml.compose_all(text, Loader=yaml.SafeLoader):
        stack = [doc]
        while stack:
            node = stack.pop()
            if isinstance(node, yaml.ScalarNode):
                if node.style is None and node.tag == "tag:yaml.org,2002:str":
                    out.append(node.value)
            elif isinstance(node, yaml.MappingNode):
                stack += [n for pair in node.value for n in pair]
            elif isinstance(node, yaml.SequenceNode):
                stack += node.value
    return out


WORDS = ["y", "Y", "n", "N", "yes", "no", "on", "off", "On", "OFF", "null", "~", "", "0o7", "0O17", "1e3", "1E-3",
         "0x1F", "1_000", "12:30", "190:20:30", "0b101", "017", "1.", ".5", "+1", "-0", ".inf", "-.Inf", ".NaN",
         "2024-01-01", "true", "False", "5", "0.5"]


@pytest.mark.parametrize("word", WORDS)
def test_words_other_readers_take_for_numbers_or_booleans_are_quoted(word):
    for obj in ({"k": word}, {word: "v"}, [word], {"k": [word, {"n": word}]}):
        text = yamlio.dump(obj)
        assert yaml.safe_load(text) == obj, text                # PyYAML (YAML 1.1) reads the same string
        assert word not in _plain_scalars(text), text            # and no other reader gets it plain
    assert _read_as_non_string(word) or word == "2024-01-01"     # the oracle agrees each word is at risk


@pytest.mark.parametrize("word", ["abc", "v1", "10Gi", "500m", "1.2.3", "e3", "1e", "+", "a:b", "nope", "y2"])
def test_plain_words_stay_plain(word):
    # The negative half: the oracle says these are strings to every reader, and they stay unquoted.
    assert not _read_as_non_string(word)
    assert word in _plain_scalars(yamlio.dump({"k": word}))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet="0123456789+-._:eExXoObBabcfyYnN~", min_size=0, max_size=8))
def test_fuzz_no_string_is_written_plain_where_a_reader_sees_another_type(word):
    text = yamlio.dump({"k": word, word: [word]})
    assert yaml.safe_load(text) == {"k": word, word: [word]}
    assert not [w for w in _plain_scalars(text) if _read_as_non_string(w)], text


def test_synth_output_of_every_example_has_no_ambiguous_plain_scalar():
    from tests import helpers
    from tests.test_fuzz_spec import ALL_SPECS

    checked = 0
    for path in ALL_SPECS.values():
        s = specmod.from_dict(helpers.example_raw(path), str(path))
        for name, text in tree.build(s).items():
            bad = [w for w in _plain_scalars(text) if _read_as_non_string(w)]
            assert not bad, (path.name, name, bad)
            checked += 1
    assert checked > 300
