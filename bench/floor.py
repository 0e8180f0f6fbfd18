"""The floor: write the objects the generator produced as plain dicts with
PyYAML's C dumper, nothing else (no cdk8s, no Node, no spec, no checks).

    python bench/floor.py OBJECTS.json OUT_DIR

OBJECTS.json maps each output path to its header comment and documents
(bench/run.py makes it from a synthesized tree). Deliberately standalone: it
imports only json, os and yaml, so its time is a whole process doing the least
work that yields the same files."""
import json
import os
import sys

import yaml


def _str(dumper, value):
    # The generator writes multi-line strings as literal blocks; so does the floor.
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


yaml.CSafeDumper.add_representer(str, _str)


def main(src: str, out: str) -> None:
    with open(src) as f:
        files = json.load(f)
    made = set()
    for rel, entry in files.items():
        path = os.path.join(out, rel)
        parent = os.path.dirname(path)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        text = yaml.dump_all(entry["docs"], Dumper=yaml.CSafeDumper, sort_keys=False,
                             default_flow_style=False, allow_unicode=True, width=4096)
        with open(path, "w") as f:
            f.write(entry["header"] + text)


if __name__ == "__main__":
    main(*sys.argv[1:])
