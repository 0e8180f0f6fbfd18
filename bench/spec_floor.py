"""The floor for loading the spec: PyYAML's C loader and one jsonschema
validation of the file against schemas/platform.schema.json, nothing else.

    python bench/spec_floor.py SPEC SCHEMA

Deliberately standalone (json, yaml, jsonschema): its time is a whole process
doing the least work that reads the spec and checks its shape. It does none of
the cross-checks (machine shapes, quotas, queues) that loading the model does."""
import json
import sys

import jsonschema
import yaml


def main(spec: str, schema: str) -> None:
    with open(spec) as f:
        doc = yaml.load(f, Loader=yaml.CSafeLoader)
    with open(schema) as f:
        jsonschema.Draft202012Validator(json.load(f)).validate(doc)


if __name__ == "__main__":
    main(*sys.argv[1:])
