"""schemas/platform.schema.json is generated from the typed model and agrees
with it: every example spec passes it, and what the model refuses for its
shape (an unknown key, a wrong type, an unknown machine type) it refuses too.
The JSON Schema validator (jsonschema) is an independent check of the file."""
from __future__ import annotations

import copy
import json

import jsonschema
import pytest

from generator.kernel import paths, yamlio
from generator.model import json_schema

SCHEMA = json.loads(paths.SPEC_SCHEMA.read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
SPECS = sorted((paths.ROOT / "examples").glob("*.yaml")) + [paths.ROOT / "tests" / "fixtures" / "spec.yaml"]


def test_committed_schema_is_what_the_model_generates():
    assert json_schema.is_current(), "run `make schema`"


@pytest.mark.parametrize("path", [p for p in SPECS if p.exists()], ids=lambda p: p.name)
def test_valid_specs_pass_the_schema(path):
    errors = sorted(e.message for e in VALIDATOR.iter_errors(yamlio.load_strict(path.read_text())))
    assert errors == []


@pytest.mark.parametrize("edit", [
    lambda r: r.__setitem__("extra", 1),
    lambda r: r["profiles"]["gpu-cluster"]["nodePools"][0].__setitem__("nodes", "two"),
    lambda r: r["profiles"]["gpu-cluster"]["nodePools"][0].__setitem__("machineType", "g2-standard-2"),
    lambda r: r["workloads"][0].__setitem__("kind", "nope"),
    lambda r: r["workloads"][0].__setitem__("gpuz", 1),
])
def test_the_schema_refuses_what_the_model_refuses(edit):
    raw = copy.deepcopy(yamlio.load_strict((paths.ROOT / "examples" / "h100-l4-spot.yaml").read_text()))
    edit(raw)
    assert list(VALIDATOR.iter_errors(raw))
