"""The spec format as JSON Schema, generated from the typed model: what
editors and other tools read (schemas/platform.schema.json). `make check`
fails when the committed file is not what the model generates."""
from __future__ import annotations

import json

from ..kernel import paths
from .spec import Platform


def render() -> str:
    schema = Platform.model_json_schema(by_alias=True, mode="validation")
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema",
              "title": "ML platform spec",
              "description": "One file that describes namespaces, Kueue, priority tiers, clusters (profiles) "
                             "and their node pools, queues, images and workloads. Generated from "
                             "generator/model/ by `make schema`; do not edit.",
              **{k: v for k, v in schema.items() if k not in ("title", "description")}}
    return json.dumps(schema, indent=2, sort_keys=False) + "\n"


def is_current() -> bool:
    try:
        return paths.SPEC_SCHEMA.read_text() == render()
    except OSError:
        return False


def write() -> None:
    paths.SPEC_SCHEMA.write_text(render())
