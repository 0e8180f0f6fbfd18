"""schemas/platform.schema.json is generated from the typed model and agrees
with it: every example spec passes it, and what the model refuses for its
shape (an unknown key, a wrong type, an unknown machine type) it refuses too.
The JSON Schema validator (jsonschema) is an independent check of the file."""
from __future__ import annotations

import copy
import json
import shutil

import jsonschema
import pytest

from generator.kernel import paths, yamlio
from generator.model import json_schema

SCHEMA = json.loads(paths.SPEC_SCHEMA.read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
SPECS = sorted((paths.ROOT / "examples").glob("*.yaml")) + [paths.ROOT / "tests" / "fixtures" / "spec.yaml"]


def test_committed_schema_is_what_the_model_generates():
    assert paths.SPEC_SCHEMA.read_text() == json_schema.render(), "run `gke-ml-platform schema`"
    assert json_schema.is_current()


def test_a_kept_verdict_still_catches_an_edited_file(tmp_path, monkeypatch):
    # is_current keeps the digest of what the model renders (generator/spec/schema.py); the
    # committed file is compared with it every time.
    monkeypatch.setenv("GENERATOR_CACHE_DIR", str(tmp_path / "cache"))
    committed = tmp_path / "platform.schema.json"
    committed.write_text(json_schema.render())
    monkeypatch.setattr(paths, "SPEC_SCHEMA", committed)
    assert json_schema.is_current()
    assert len(list((tmp_path / "cache").iterdir())) == 1   # the digest, kept
    assert json_schema.is_current()
    committed.write_text(committed.read_text().replace('"title": "ML platform spec"', '"title": "edited"', 1))
    assert not json_schema.is_current()
    committed.unlink()
    assert not json_schema.is_current()


@pytest.mark.parametrize("module", ["model/spec.py", "kernel/catalog/gpus.py", "kernel/quantity.py"])
def test_the_model_digest_changes_with_any_module(tmp_path, module):
    # Whatever the model imports may change the schema: an edit anywhere in the package renders again.
    package = tmp_path / "generator"
    shutil.copytree(paths.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__", "_data"))
    before = json_schema.model_digest(package)
    assert json_schema.model_digest(package) == before
    (package / module).write_text((package / module).read_text() + "\n# edited\n")
    assert json_schema.model_digest(package) != before


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
