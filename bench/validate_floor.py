"""The core-schema floor for `generator validate`: kubernetes-validate run on the
same objects in one process (PyYAML's C loader, then kubernetes_validate.validate
with strict schemas for each object; custom resources have no schema there and
only cost the look-up).

    python bench/validate_floor.py DIR KUBERNETES_MINOR

Deliberately standalone (yaml and kubernetes_validate only): its time is a whole
process doing the least work that checks the same objects against the same core
schemas. Prints how many objects it checked and how many it found invalid."""
import os
import sys

import kubernetes_validate
import yaml


def main(root: str, minor: str) -> None:
    checked = invalid = 0
    for dirpath, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            if not name.endswith((".yaml", ".yml")):
                continue
            with open(os.path.join(dirpath, name)) as f:
                docs = [d for d in yaml.load_all(f, Loader=yaml.CSafeLoader) if isinstance(d, dict)]
            for doc in docs:
                checked += 1
                try:
                    kubernetes_validate.validate(doc, minor, strict=True)
                except Exception:   # ValidationError, SchemaNotFoundError for custom resources
                    invalid += 1
    print(f"{checked} objects, {invalid} not valid or without a core schema")


if __name__ == "__main__":
    main(*sys.argv[1:])
