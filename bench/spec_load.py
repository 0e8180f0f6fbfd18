"""What `make bench` times as "load and check the spec": the typed model read
and checked as synth, validate and plan read it (generator.model.load), in a
process that must not start Node: it fails if cdk8s or jsii was imported.

    python -m bench.spec_load SPEC"""
import sys

from generator import model as spec


def main(path: str) -> int:
    spec.load(path)
    heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("jsii", "cdk8s", "cdk8s_plus_33", "constructs"))
    if heavy:
        print(f"spec load imported {', '.join(heavy)}: it would start Node", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
