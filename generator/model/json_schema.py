"""The spec format as JSON Schema, generated from the typed model: what
editors and other tools read (schemas/platform.schema.json). `make check`
fails when the committed file is not what the model generates."""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pydantic
import pydantic_core

from ..kernel import diskcache, paths
from .spec import Platform

_STAMP_FORMAT = "spec-schema-1"


def render() -> str:
    schema = Platform.model_json_schema(by_alias=True, mode="validation")
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema",
              "title": "ML platform spec",
              "description": "One file that describes namespaces, Kueue, priority tiers, clusters (profiles) "
                             "and their node pools, queues, images and workloads. Generated from "
                             "generator/model/ by `gke-ml-platform schema`; do not edit.",
              **{k: v for k, v in schema.items() if k not in ("title", "description")}}
    return json.dumps(schema, indent=2, sort_keys=False) + "\n"


def is_current() -> bool:
    """Is the committed schema exactly what render() returns? Rendering is about a tenth of
    a passing `check` on the shipped spec, so the digest of what it returned is kept in the
    per-user cache under a digest of everything it depends on (model_digest); the committed
    file is compared with that digest, and rendered again whenever any of it changed."""
    try:
        committed = paths.SPEC_SCHEMA.read_text()
    except OSError:
        return False
    stamp = diskcache.entry(_STAMP_FORMAT, model_digest(), "sha256")
    rendered = diskcache.read(stamp)
    if rendered is None:
        rendered = _digest(render())
        diskcache.keep(stamp, rendered)
    return _digest(committed) == rendered


def model_digest(package: Path = paths.PACKAGE) -> str:
    """sha256 of what render() depends on: every Python file of the generator package (the
    model, the catalogs its enums list, whatever they import), the versions table, and the
    Python and pydantic releases that turn the model into JSON Schema."""
    h = hashlib.sha256(f"{_STAMP_FORMAT} {sys.version} {pydantic.VERSION} {pydantic_core.__version__}".encode())
    for path in sorted(package.rglob("*.py")):
        h.update(f"\0{path.relative_to(package).as_posix()}\0".encode())
        h.update(path.read_bytes())
    h.update(b"\0versions.yaml\0" + paths.VERSIONS.read_bytes())
    return h.hexdigest()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def write() -> None:
    paths.SPEC_SCHEMA.write_text(render())
