"""Where synth's time goes, in one process: imports (Node and the cdk8s assemblies
among them), spec load, jsii round trips to Node (cdk8s building and rendering the
objects), YAML writing, other Python, and writing the files. Prints one JSON object.

    python -m bench.timesplit SPEC OUT_DIR [--cprofile N]

Timers wrap jsii's requests to Node (counted by kind and method), generator.kernel.yamlio.dump and the
phases of `python -m generator synth`; with
--cprofile, the N functions with the most own time in the build are added."""
from __future__ import annotations

import time

T_START = time.perf_counter()

import argparse  # noqa: E402
import collections  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402

# jsii kernel requests, each a round trip to Node.
JSII_REQUESTS = ("create", "invoke", "sinvoke", "get", "sget", "set", "complete", "delete")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("spec")
    ap.add_argument("out")
    ap.add_argument("--cprofile", type=int, default=0)
    args = ap.parse_args()
    marks = {"start": T_START}

    import generator  # noqa: F401  (sets JSII_NODE, so it must come before jsii)
    # isort: split
    import jsii  # noqa: F401
    marks["python + jsii runtime"] = time.perf_counter()
    import cdk8s  # noqa: F401  (starts Node, loads the constructs and cdk8s assemblies)
    marks["Node start + cdk8s"] = time.perf_counter()
    import cdk8s_plus_33.k8s  # noqa: F401
    marks["cdk8s-plus-33 (typed k8s)"] = time.perf_counter()
    from generator import model as spec
    from generator.builders import tree as platform
    from generator.kernel import paths, writer, yamlio
    marks["generator modules"] = time.perf_counter()

    calls: collections.Counter = collections.Counter()
    secs: collections.defaultdict[str, float] = collections.defaultdict(float)
    provider = sys.modules["jsii._runtime"].kernel.provider
    for name in JSII_REQUESTS:
        def timed(req, _orig=getattr(provider, name), _name=name):  # noqa: B008  binds this iteration's method, on purpose
            t = time.perf_counter()
            try:
                return _orig(req)
            finally:
                what = getattr(req, "method", None) or getattr(req, "fqn", "") or ""
                key = f"{_name} {what.rsplit('.', 1)[-1]}"
                calls[key] += 1
                secs[key] += time.perf_counter() - t
        setattr(provider, name, timed)

    dump_s = [0.0]
    plain_dump = yamlio.dump

    def dump(obj):
        t = time.perf_counter()
        try:
            return plain_dump(obj)
        finally:
            dump_s[0] += time.perf_counter() - t
    yamlio.dump = dump

    parse_s = [0.0]
    plain_load_all = yamlio.load_all

    def load_all(text):
        t = time.perf_counter()
        try:
            return plain_load_all(text)
        finally:
            parse_s[0] += time.perf_counter() - t
    yamlio.load_all = load_all

    t0 = time.perf_counter()
    s = spec.load(args.spec)
    t1 = time.perf_counter()
    if args.cprofile:
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    jsii_before = sum(secs.values())  # the spec load makes no jsii calls, but be exact
    tree = platform.build(s)
    t2 = time.perf_counter()
    if args.cprofile:
        prof.disable()
    writer.write_tree(tree, args.out, paths.OUTPUT_DIRS)
    t3 = time.perf_counter()

    jsii_s = sum(secs.values()) - jsii_before
    build_s = t2 - t1
    names = list(marks)
    phases = [(names[i], marks[names[i]] - marks[names[i - 1]]) for i in range(1, len(names))]
    phases += [
        ("spec load (YAML, JSON Schema, cross-checks)", t1 - t0),
        ("build: jsii round trips to Node", jsii_s),
        ("build: YAML dump (PyYAML C emitter)", dump_s[0]),
        ("build: YAML re-parse of emitted files", parse_s[0]),
        ("build: other Python (builders, pod policy, Argo CD, checks)",
         build_s - jsii_s - dump_s[0] - parse_s[0]),
        ("write files (staging + swap)", t3 - t2),
    ]
    result = {
        "files": len(tree),
        "total_s": t3 - T_START,
        "python_cpu_s": time.process_time(),
        "phases": phases,
        "jsii": sorted(([k, calls[k], secs[k]] for k in calls), key=lambda r: -r[2]),
    }
    if args.cprofile:
        import pstats
        st = pstats.Stats(prof)
        rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[: args.cprofile]  # type: ignore[attr-defined]  # not in typeshed
        result["cprofile"] = [[f"{fn[0].rsplit('site-packages/', 1)[-1]}:{fn[1]}({fn[2]})", v[1], v[2], v[3]]
                              for fn, v in rows]
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
