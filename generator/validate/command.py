"""The `validate` subcommand: arguments and exit codes."""
from __future__ import annotations

import sys

from .. import paths


def register(sub) -> None:
    p = sub.add_parser(
        "validate", help="strict schemas and cross-object checks for overlays or any YAML",
        description="Validate Kustomize overlays, YAML files or stdin: strict schemas (core kinds at the pinned "
                    "Kubernetes version, custom resources at the pinned, hash-checked CRDs) and cross-object rules "
                    "(Kueue queues and quotas, priorities, selectors, routes, TPU slices, secrets, images). "
                    "Exit 0 clean, 1 findings, 2 could not run.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="overlay or kustomization directory, directory of YAML files, YAML file, or - for stdin "
                        "(default: every overlay under overlays/)")
    p.add_argument("--spec", default=None, help="platform spec for versions and profiles (default: platform.yaml)")
    p.add_argument("--out", default=str(paths.ROOT), help="directory holding overlays/ (default: the repository)")
    p.add_argument("--crd-dir", help="upstream CRD root (default: $CRD_DIR, else ../shared/crds, else build/shared/crds)")
    p.add_argument("--kubernetes-version", help="Kubernetes minor for core schemas, e.g. 1.33 (default: the spec's)")
    p.add_argument("--kueue-version", help="pinned Kueue release whose CRDs apply (default: the profile's, else the spec's)")
    p.add_argument("--profile", help="check non-overlay inputs as this spec profile (its Kueue version and platform)")
    p.add_argument("--autopilot", action="store_true", help="check non-overlay inputs with GKE Autopilot rules")
    p.add_argument("-n", "--namespace", help="namespace of namespaced objects that name none (as kubectl apply -n)")
    p.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    p.add_argument("--list-rules", action="store_true", help="print the rules as a Markdown table and exit")
    p.set_defaults(func=run)


def rule_table() -> str:
    from .rules import RULES

    rows = ["| rule | severity | catches | fix |", "|---|---|---|---|"]
    for r in sorted(RULES.values(), key=lambda r: r.id):
        rows.append(f"| {r.id} | {r.severity} | {r.summary.replace('|', '/')} | {r.hint.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def options(args):
    from . import Options

    return Options(paths=args.paths, spec=args.spec or str(paths.DEFAULT_SPEC), spec_explicit=args.spec is not None,
                   out=args.out, crd_dir=args.crd_dir, kubernetes_version=args.kubernetes_version,
                   kueue_version=args.kueue_version, profile=args.profile, autopilot=args.autopilot,
                   namespace=args.namespace)


def run(args) -> int:
    from .. import crds
    from . import EXIT_USAGE, validate
    from .context import UsageError
    from .findings import render_json, render_text

    if args.list_rules:
        sys.stdout.write(rule_table())
        return 0
    try:
        report = validate(options(args))
    except (UsageError, crds.CrdFileError) as e:
        print(f"validate: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.format == "json":
        sys.stdout.write(render_json(report.findings, report.summary(), report.sources))
    else:
        sys.stdout.write(render_text(report.findings, report.summary()))
    return report.exit_code(args.strict)
