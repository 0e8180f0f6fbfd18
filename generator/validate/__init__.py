"""`python -m generator validate`: strict schemas plus the cross-object checks
that kubeconform, kube-linter and Pluto cannot do (a queue label that names a
LocalQueue whose ClusterQueue covers what the pods ask for, selectors that
select something, TPU slices whose chips add up, ...).

Kept light on purpose: no cdk8s, no kubernetes client, one CRD index (cached
by content hash), validators built once per (apiVersion, kind)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .context import Target, UsageError
from .findings import ERROR, WARNING, Finding

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    sources: list[dict] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(f.severity == ERROR for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == WARNING for f in self.findings)

    def summary(self) -> dict:
        return {"sources": len(self.sources), "objects": sum(s["objects"] for s in self.sources),
                "errors": self.errors, "warnings": self.warnings}

    def exit_code(self, strict: bool = False) -> int:
        return EXIT_FINDINGS if self.errors or (strict and self.warnings) else EXIT_OK


_SCHEMAS: dict = {}


def schemas_for(target: Target, crd_root: Path):
    """The SchemaSet of a target, from the hash-verified pinned CRD files (crds.CrdFileError if one is off)."""
    from .. import crds
    from ..schemacheck import SchemaSet

    crd_root = Path(crd_root)
    key = (target.k8s, target.kueue, target.jobset, target.lws, str(crd_root))
    if key not in _SCHEMAS:
        dirs = crds.dirs_for(target.kueue, target.jobset, target.lws, crd_root)
        files = crds.pinned_files([d.relative_to(crd_root).as_posix() for d in dirs])
        _SCHEMAS[key] = SchemaSet(target.k8s, crd_files=crds.verified(crd_root, files))
    return _SCHEMAS[key]


def check_stream(stream, target: Target, schemas, namespace: str = "") -> tuple[list[Finding], int, list[str]]:
    """Findings for one input stream in document order, how many objects it held,
    and the rules that could not run on it (only ever when its schema is broken)."""
    from . import loader, schema
    from .findings import format_path
    from .objects import Model, Obj
    from .rules import RULES

    objs = [Obj(i, body) for i, body in loader.objects(stream)]
    model = Model(objs, schemas=schemas, autopilot=target.autopilot, namespace=namespace)
    keyed = []   # (document index, rule, path, finding)

    def add(rule_id, hit):
        rule, o = RULES[rule_id], hit.obj
        keyed.append((o.index, rule_id, hit.path, Finding(
            source=stream.name, rule=rule_id, severity=hit.severity or rule.severity,
            kind=o.kind, namespace=o.namespace, name=o.name, path=format_path(hit.path),
            message=hit.message, hint=hit.hint if hit.hint is not None else rule.hint)))

    for p in stream.problems:
        rule = RULES[p.rule]
        keyed.append((p.index, p.rule, (), Finding(stream.name, p.rule, rule.severity, "", "", p.where, "",
                                                   p.message, rule.hint)))
    for o in objs:
        for rule_id, hit in schema.check(schemas, o):
            add(rule_id, hit)
    schema_broken = any(k[1] in ("SC001", "SC002") for k in keyed)
    skipped = []
    for rule in RULES.values():
        if rule.check is None:
            continue
        try:
            for hit in rule.check(model):
                add(rule.id, hit)
        except (AttributeError, TypeError, ValueError, KeyError, IndexError):
            # Rules read objects as their schemas describe them. On an object the
            # schema layer already rejected, a rule may meet shapes it cannot read:
            # the schema findings explain the input. On valid input it is a bug.
            if not schema_broken:
                raise
            skipped.append(rule.id)
    keyed.sort(key=lambda k: (k[0], k[1], [str(p) for p in k[2]], k[3].message))
    return [k[3] for k in keyed], len(objs), skipped


@dataclass
class Options:
    paths: list[str]
    spec: str
    spec_explicit: bool
    out: str
    crd_dir: str | None = None
    kubernetes_version: str | None = None
    kueue_version: str | None = None
    profile: str | None = None
    autopilot: bool = False
    namespace: str | None = None


def _display(path: str) -> str:
    if path == "-":
        return "<stdin>"
    rel = os.path.relpath(Path(path).resolve(), Path.cwd())
    return rel if not rel.startswith("..") else str(Path(path).resolve())


def validate(opts: Options) -> Report:
    """Validate every input. Raises UsageError (or crds.CrdFileError) when it cannot run."""
    from . import context, loader
    from .. import crds

    spec = context.read_spec(Path(opts.spec), opts.spec_explicit)
    out = Path(opts.out)
    paths = list(opts.paths)
    if not paths:
        overlays = out / "overlays"
        paths = sorted(str(d) for d in overlays.iterdir() if d.is_dir() and loader.is_kustomization(d)) \
            if overlays.is_dir() else []
        if not paths:
            raise UsageError(f"no overlays under {overlays}; run `make synth` or name the inputs")
    if paths.count("-") > 1:
        raise UsageError("stdin (-) can be read once")
    crd_root = Path(opts.crd_dir) if opts.crd_dir else crds.default_root()
    if not crd_root.is_dir():
        raise UsageError(f"{crd_root}: no CRD directory; run `make crds` (CRD_DIR=...) or pass --crd-dir")

    overlay_root = (out / "overlays").resolve()
    targets, pending = [], []
    for p in paths:
        resolved = Path(p).resolve() if p != "-" else None
        profile = opts.profile
        if resolved is not None and resolved.parent == overlay_root and resolved.name in context.profiles(spec):
            profile = resolved.name   # an overlay built from the spec: its profile decides
        targets.append(context.target(spec, opts.spec, profile, opts.kubernetes_version, opts.kueue_version,
                                      opts.autopilot))
    try:
        for p in paths:   # kustomize builds start now and run while the schemas load
            pending.append(loader.Pending(p, _display(p)))
        report = Report()
        for t, pend in zip(targets, pending):
            schemas = schemas_for(t, crd_root)
            stream = pend.collect()
            findings, count, skipped = check_stream(stream, t, schemas, opts.namespace or "")
            report.findings += findings
            report.sources.append({"name": stream.name, "objects": count, **t.describe(),
                                   "skippedRules": skipped})
        return report
    finally:
        for pend in pending:
            pend.cancel()
