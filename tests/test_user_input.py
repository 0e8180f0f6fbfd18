"""The one reader of user files (generator/kernel/yamlio.py): its limits, each shown
quiet at the limit and refusing just past it, with numbers worked out by
hand from the documented rules; and every command that reads a user file
turns a refusal into a clear message naming the file, never a traceback or
a hang."""
from __future__ import annotations

import pytest

from generator.kernel import yamlio
from tests import helpers


def _nested(depth: int) -> str:
    """`depth` nested lists: the innermost empty list is one node deep."""
    return "[" * depth + "]" * depth


def _aliases(copies: int, items: int = 999) -> str:
    """An anchored list of `items` scalars (items + 1 values) and `copies` aliases to it."""
    return ("a: &a [" + ", ".join(["x"] * items) + "]\n"
            "b: [" + ", ".join(["*a"] * copies) + "]\n")


def test_depth_limit():
    assert yamlio.load_user(_nested(yamlio.MAX_DEPTH)) is not None
    with pytest.raises(yamlio.InputError, match=f"nested more than {yamlio.MAX_DEPTH} levels deep"):
        yamlio.load_user(_nested(yamlio.MAX_DEPTH + 1))


def test_alias_expansion_limit():
    # Counted with each alias as a copy: the root mapping, keys a and b, list b (4 values), the anchored
    # list of 1,000 values, and 1,000 per alias: 998 aliases make 999,004 values (under the limit of
    # 1,000,000), 999 aliases 1,000,004 (over it).
    doc = yamlio.load_user(_aliases(998))
    assert len(doc["b"]) == 998 and doc["b"][0] is doc["a"]
    with pytest.raises(yamlio.InputError) as e:
        yamlio.load_user(_aliases(999))
    # Refused while it is read, at the alias where the count passes the limit (the 999th of line 2).
    assert str(e.value) == "line 2, column 3997: aliases expand to more than 1,000,000 values"


def test_billion_laughs_is_refused_at_once():
    levels = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    with pytest.raises(yamlio.InputError, match="aliases expand to more than"):
        yamlio.load_user("\n".join(levels) + "\n")


def test_an_alias_inside_its_own_anchor_is_refused():
    # Named at the alias itself (line 2, `*x`).
    with pytest.raises(yamlio.InputError, match="line 2, column 6: an alias refers to a value that contains it"):
        yamlio.load_user("a: &x\n  b: *x\n")


def test_size_limit(tmp_path):
    at = tmp_path / "at.yaml"
    at.write_bytes(b"#" * yamlio.MAX_BYTES)     # a comment exactly at the limit
    assert yamlio.load_user(yamlio.read_text(at)) is None
    past = tmp_path / "past.yaml"
    past.write_bytes(b"#" * (yamlio.MAX_BYTES + 1))
    with pytest.raises(yamlio.InputError, match=r"larger than the limit of 10 MiB \(10,485,761 bytes\)"):
        yamlio.read_text(past)


@pytest.mark.parametrize("data, message", [
    (b"name: caf\xe9\n", "not UTF-8 text: byte 0xe9 on line 1 cannot be decoded; save the file as UTF-8"),
    (b"a: 1\nb: \xff\xfe\n", "not UTF-8 text: byte 0xff on line 2 cannot be decoded; save the file as UTF-8"),
])
def test_text_must_be_utf8(data, message):
    with pytest.raises(yamlio.InputError) as e:
        yamlio.decode(data)
    assert str(e.value) == message
    assert yamlio.decode("\ufeffname: café\n".encode()) == "name: café\n"   # a byte-order mark is fine


@pytest.mark.parametrize("text, message", [
    ("a: 1\na: 2\n", "not valid YAML: line 2, column 1: duplicate key 'a'"),
    ("? [a, b]\n: c\n", "not valid YAML: line 1, column 3: a mapping key must be a plain value, not a list"),
    ("a: [1, 2\n", "not valid YAML: line 2, column 1: did not find expected ',' or ']'"),
    ("a: !!python/object:os.system x\n", ("not valid YAML: line 1, column 4: could not determine a constructor "
                                          "for the tag 'tag:yaml.org,2002:python/object:os.system'")),
])
def test_syntax_errors_say_where(text, message):
    with pytest.raises(yamlio.InputError) as e:
        yamlio.load_user(text)
    assert str(e.value) == message


# ---------------------------------------------------------------- every reader of user files

BAD = {
    "alias bomb": _aliases(1200).encode(),
    "too deep": f"a: {_nested(150)}\n".encode(),
    "not UTF-8": b"name: caf\xe9\n",
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_synth_refuses_the_spec(case, tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(BAD[case])
    code, out, err = helpers.run_cli(capsys, "synth", "--spec", spec, "--out", tmp_path / "out")
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert helpers.without_positions(err).startswith(f"{spec}: <root>: "), err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("case", sorted(BAD))
def test_plan_refuses_the_scenario_and_the_overlay_file(case, tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(BAD[case])
    overlay = helpers.generated() / "overlays" / "l4-standard"
    code, _, err = helpers.run_cli(capsys, "plan", overlay, "--scenario", bad)
    assert code == 2 and len(err.splitlines()) == 1 and helpers.without_positions(err).startswith(f"{bad}: <root>: "), err
    code, _, err = helpers.run_cli(capsys, "plan", bad)
    assert code == 2 and len(err.splitlines()) == 1 and helpers.without_positions(err).startswith(f"{bad}: <root>: "), err


@pytest.mark.parametrize("case", sorted(BAD))
def test_validate_reports_the_manifest(case, tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(BAD[case])
    code, out, err = helpers.run_cli(capsys, "validate", "--spec", helpers.FIXTURE_SPEC,
                                     "--crd-dir", helpers.CRD_ROOT, bad)
    # Input the validator cannot read is an input finding (IN001), as a syntax error is.
    assert code == 1 and "IN001 error" in out and bad.name in out, out + err
