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
              "two\nlines", "ends\n", "0x1F", "1e3", "2024-01-01", "*x", "&y", "'q'", '"d"', "@at", "%p"]
    obj = {"strings": values, "ints": [0, -1, 2**40], "floats": [0.5, 2.0, float("inf")], "bools": [True, False],
           "none": None, "empty": {"m": {}, "s": []}, "shared": [shared, shared], "again": shared,
           "tuple": (1, 2), "nested": [[{"k": [None]}]], 7: "int key"}
    fast, reference = _both(obj)
    assert fast == reference and "&id001" in fast
