"""The one reader of user files (generator/kernel/yamlio.py): its limits, each shown
quiet at the limit and refusing just past it, with numbers worked out by
hand from the documented rules; and every command that reads a user file
turns a refusal into a clear message naming the file, never a traceback or
a hang."""
from __future__ import annotations

import pytest
import yaml

from generator.kernel import paths, versions, yamlio
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


@pytest.mark.slow   # a deliberately huge input: a million values composed and counted
def test_node_limit_without_aliases():
    # A flow list of n scalars is n + 1 values (the list and its items): 1,000,000 items are
    # 1,000,001 values, one past the limit, with no alias in the text.
    with pytest.raises(yamlio.InputError, match="more than 1,000,000 values"):
        yamlio.load_user("[" + "0," * 1_000_000 + "]\n")


def _typed(value):
    """A value with the type of every part spelled out (1, 1.0 and True compare equal in Python)."""
    if isinstance(value, dict):
        return ("dict", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    if isinstance(value, set):
        return ("set", sorted(repr(v) for v in value))
    return (type(value).__name__, repr(value))


# One text per way PyYAML's safe loader builds a value: each tag of YAML 1.1 it resolves or
# accepts explicitly, an anchor shared by two keys, empty documents. (Merge keys, `<<`, are
# refused by this reader: it checks keys for duplicates before PyYAML would merge them.)
PYYAML_CASES = [
    "a: text\nb: 'quoted'\nc: |\n  block\nd: ''\n",
    "i: 12\nj: 0x1F\nk: 0o17\nl: 1_000\nm: 1:30\nn: -3\nb: !!int '12'\n",
    "f: 1.5\ng: .inf\nh: -.Inf\nx: 1e3\ny: !!float 1\n",
    "t: true\nu: No\nv: yes\nw: ~\nz: null\n? !!null\n: empty key\n",
    "day: 2002-12-14\nat: 2001-12-14t21:59:43.10-05:00\nbin: !!binary aGVsbG8=\n",
    "s: !!set {a, b}\no: !!omap [a: 1, b: 2]\np: !!pairs [a: 1, a: 2]\n",
    "base: &b {x: 1}\nuse: [*b, *b]\nsame: *b\n",
    "[a, [b, [c, {d: e, '1': f, 1: g, 1.5: h}]]]\n",
    "--- 1\n--- [a]\n---\n---\n{}\n",
]


@pytest.mark.parametrize("text", PYYAML_CASES)
def test_values_are_what_pyyaml_builds(text):
    expected = [d for d in yaml.safe_load_all(text) if d is not None]
    assert _typed(yamlio.load_user_all(text)) == _typed(expected)


def _repeats_a_key(f) -> bool:
    """GKE's GPUDirect-RDMA test workloads (container-engine-accelerators@992db81 gpudirect-rdma/nccl-test*.yaml)
    write `resources:` twice in their test container."""
    return f.parent.name == "gpudirect-rdma" and f.name.startswith("nccl-test")


def test_upstream_manifests_read_as_pyyaml_reads_them():
    # Real manifests (../shared/reference): the same values as PyYAML's own safe loader
    # (templates that are not YAML yet are left out).
    compared = 0
    for f in sorted(helpers.REFERENCE.rglob("*.yaml")):
        text = f.read_text()
        try:
            expected = [d for d in yaml.safe_load_all(text) if d is not None]
        except yaml.YAMLError:
            continue
        if _repeats_a_key(f):
            # PyYAML keeps the last of a repeated key; the reader refuses the file instead.
            with pytest.raises(yamlio.InputError, match="duplicate key"):
                yamlio.load_user_all(text)
            continue
        assert _typed(yamlio.load_user_all(text)) == _typed(expected), f
        compared += 1
    assert compared > 20


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


def test_the_versions_table_kept_as_json_is_what_the_reader_reads(tmp_path, monkeypatch):
    # versions.table() keeps its parse in the cache (generator/kernel/versions.py): the same table as
    # the reader's, read back while the file is unchanged, parsed again once it is edited.
    monkeypatch.setenv("GENERATOR_CACHE_DIR", str(tmp_path / "cache"))
    pins = tmp_path / "versions.yaml"
    pins.write_text(paths.VERSIONS.read_text())
    monkeypatch.setattr(paths, "VERSIONS", pins)
    versions.table.cache_clear()
    try:
        first = versions.table()
        assert first == yamlio.load_strict(pins.read_text())
        assert len(list((tmp_path / "cache").iterdir())) == 1
        versions.table.cache_clear()
        assert versions.table() == first
        pins.write_text(pins.read_text() + "edited: 1\n")
        versions.table.cache_clear()
        assert versions.table() == {**first, "edited": 1}
    finally:
        versions.table.cache_clear()   # the rest of the session reads the real file
