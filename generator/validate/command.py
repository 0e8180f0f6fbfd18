"""The `validate` subcommand: arguments and exit codes."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..kernel import paths
from ..kernel.stamp import add_flag as stamp_flag


def register(sub) -> None:
    p = sub.add_parser(
        "validate", help="strict schemas and cross-object checks for overlays or any YAML",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Validate Kustomize overlays, YAML files or stdin as the API server would store them (nulls "
                    "pruned, CRD and webhook defaults applied): strict schemas (core kinds at the pinned Kubernetes "
                    "version, custom resources at the pinned, hash-checked CRDs, with their CEL rules) and "
                    "cross-object rules (Kueue queues, quotas and cohorts, priorities, selectors, routes, TPU slices, "
                    "names, secrets, images, MultiKueue groups). Exit 0 clean (warnings and notes allowed), 1 errors "
                    "(or warnings with --strict), 2 could not run.",
        epilog="Open or closed world:\n"
               "  Overlays built from the spec (the default inputs) are checked closed-world: they are the whole\n"
               "  platform, so a reference to an object they lack (a LocalQueue, a ClusterQueue, a PriorityClass,\n"
               "  the pods a Service selects) is an error. Other files and streams are open-world: such a reference\n"
               "  is a note (\"LocalQueue 'lq' ... is not in the input; checked against nothing\"), since the object\n"
               "  may exist in the cluster. --context PATH (an overlay, a kustomization, a YAML file or a\n"
               "  `kubectl get -o yaml` dump; repeatable) supplies the objects that exist already and makes the\n"
               "  check closed-world; --closed does so with no context. Namespaced objects that name no\n"
               "  namespace land in `default`, or in -n NAMESPACE, as with kubectl apply.\n"
               "MultiKueue groups:\n"
               "  --multikueue checks the inputs as one group, a manager and its workers, against each other\n"
               "  (MK1xx rules): each worker has the manager's namespaces and LocalQueues, the manager's quota per\n"
               "  flavor equals the workers' total, dispatched kinds are enabled on both sides, one Kueue API\n"
               "  version. The manager is the input holding MultiKueue objects; a worker is named after its\n"
               "  MultiKueueCluster: NAME=PATH, or PATH whose directory or file (without .yaml) has that name:\n"
               "    gke-ml-platform validate --multikueue overlays/manager overlays/h100 overlays/l4-spot\n"
               "  A worker also sees what the manager dispatches to it (its Services may select those pods); its\n"
               "  Kueue Configuration and JobSet install come from its input or controllers/NAME beside\n"
               "  overlays/NAME. With no PATH, the spec's multiKueue groups are checked this way too.\n"
               "Directories:\n"
               "  A directory with a kustomization is built by kustomize: one stream. A plain directory of YAML\n"
               "  files is checked file by file, each with the other files' objects as context (references across\n"
               "  files resolve; alternative example files may define the same names). --one-stream checks it as\n"
               "  one stream, where a name defined twice is a duplicate (IN003).\n"
               "Rules: --disable RULE and --enable RULE (ids like PD002 or families like PD; comma-separated or\n"
               "  repeated), a .validate.yaml in the working directory or the platform repository (disable,\n"
               "  enable, severity), and `# validate: ignore=RULE reason` inside an object's YAML.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="overlay or kustomization directory, directory of YAML files, YAML file, or - for stdin "
                        "(default: every overlay under overlays/)")
    p.add_argument("--spec", default=None, help="platform spec for versions and profiles (default: platform.yaml "
                   "in the working directory or a folder above it)")
    p.add_argument("--out", help="directory holding overlays/ (default: the folder of the spec)")
    p.add_argument("--crd-dir", help="upstream CRD root (default: $CRD_DIR, else the per-user cache, filled from the pinned URLs "
                   "on first use; see the crds command)")
    p.add_argument("--kubernetes-version", help="Kubernetes minor for core schemas, e.g. 1.33 (default: the spec's)")
    p.add_argument("--kueue-version", help="pinned Kueue release whose CRDs apply (default: the profile's, else the spec's)")
    p.add_argument("--profile", help="check non-overlay inputs as this spec profile (its Kueue version and platform)")
    p.add_argument("--autopilot", action="store_true", help="check non-overlay inputs with GKE Autopilot rules")
    p.add_argument("-n", "--namespace", help="namespace of namespaced objects that name none (as kubectl apply -n)")
    p.add_argument("--context", action="append", default=[], metavar="PATH",
                   help="objects that exist already (overlay, kustomization, YAML file, kubectl get -o yaml dump); "
                        "references resolve against them and the check is closed-world (repeatable)")
    p.add_argument("--closed", action="store_true", help="closed world without --context: the inputs are everything")
    p.add_argument("--multikueue", action="store_true",
                   help="the inputs are one MultiKueue group (the manager and its workers, PATH or NAME=PATH): "
                        "also check them against each other (see below)")
    p.add_argument("--one-stream", action="store_true",
                   help="check a directory of YAML files (no kustomization) as one stream: a name defined in two "
                        "files is a duplicate (IN003). Default: one stream per file, the other files as context")
    p.add_argument("--disable", action="append", default=[], metavar="RULE", help="turn rules off (ids or families)")
    p.add_argument("--enable", action="append", default=[], metavar="RULE",
                   help="turn rules on that the config file turns off")
    p.add_argument("--config", help="rule selection file (default: .validate.yaml in the working directory, "
                                    "else beside the spec)")
    p.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    stamp_flag(p)
    p.add_argument("--list-rules", action="store_true", help="print the rules as a Markdown table and exit")
    p.set_defaults(func=run)


def rule_table() -> str:
    from .rules import RULES

    rows = ["| rule | severity | catches | fix |", "|---|---|---|---|"]
    for r in sorted(RULES.values(), key=lambda r: r.id):
        rows.append(f"| {r.id} | {r.severity} | {r.summary.replace('|', '/')} | {r.hint.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def options(args):
    from .run import Options

    spec = args.spec
    if spec is None:   # the platform repository's spec; without one, any YAML can still be validated
        try:
            spec = paths.shown(paths.find_spec())
        except paths.NoPlatform:
            spec = paths.SPEC_NAME
    return Options(paths=args.paths, spec=spec, spec_explicit=args.spec is not None,
                   out=args.out or paths.shown(paths.platform_dir(spec)), crd_dir=args.crd_dir,
                   kubernetes_version=args.kubernetes_version,
                   kueue_version=args.kueue_version, profile=args.profile, autopilot=args.autopilot,
                   namespace=args.namespace, context=list(args.context), closed=args.closed, config=args.config,
                   enable=_split(args.enable), disable=_split(args.disable), multikueue=args.multikueue,
                   one_stream=getattr(args, "one_stream", False))


def _split(values: list[str]) -> list[str]:
    return [v for value in values for v in value.replace(",", " ").split() if v]


def _current(args, opts) -> None:
    """The repository's own overlays (no paths, or paths that are its overlays/<profile>):
    refuse them when synth did not generate them from the spec as it is now."""
    from ..kernel import stamp
    from .context import UsageError
    mine = (Path(opts.out) / "overlays").resolve()
    # --multikueue members are NAME=PATH or PATH.
    given = [p.split("=", 1)[1] if args.multikueue and "=" in p and not Path(p).exists() else p for p in args.paths]
    if not all(p != "-" and Path(p).resolve().parent == mine for p in given):
        return
    try:
        stamp.guard(opts.spec, opts.out, args.allow_stale, "validate")
    except stamp.Stale as e:
        raise UsageError(str(e)) from None


def run(args) -> int:
    from ..kernel import crd_dirs, writer
    from .context import UsageError
    from .findings import render_json, render_text, render_usage_error
    from .run import EXIT_USAGE, validate

    if args.list_rules:
        sys.stdout.write(rule_table())
        return 0
    try:
        # The repository's own overlays, half switched by a synth that failed: say so, check nothing.
        opts = options(args)
        busy = writer.pending_under(args.paths) if args.paths else writer.pending(Path(opts.out))
        if busy:
            raise UsageError(busy)
        _current(args, opts)
        report = validate(opts)
    except (UsageError, crd_dirs.CrdFileError, paths.OutsideRepository) as e:
        for line in str(e).splitlines():   # a spec with problems: synth's lines, one per problem
            print(f"validate: {line}", file=sys.stderr)
        sys.stdout.write(render_usage_error(str(e), args.format))
        return EXIT_USAGE
    except Exception as e:   # noqa: BLE001  never a traceback: a bug, reported as one line
        if os.environ.get("GENERATOR_DEBUG"):
            raise
        message = f"internal error ({type(e).__name__}: {e}); please report it with the input"
        print(f"validate: {message}", file=sys.stderr)
        sys.stdout.write(render_usage_error(message, args.format))
        return EXIT_USAGE
    if args.format == "json":
        sys.stdout.write(render_json(report.findings, report.summary(), report.sources, report.groups))
    else:
        sys.stdout.write(render_text(report.findings, report.summary()))
    return report.exit_code(args.strict)
