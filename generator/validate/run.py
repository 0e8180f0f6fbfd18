"""The validator's run: read the inputs, pick each one's target and context, check every
stream (schemas, CEL, cross-object rules), then the MultiKueue groups, into one Report."""
from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..kernel.errors import Problem
from .collector import Collector
from .context import Target, UsageError
from .findings import ERROR, INFO, WARNING

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


@dataclass
class Report:
    findings: list[Problem] = field(default_factory=list)
    sources: list[dict] = field(default_factory=list)
    ignored: list[tuple[Problem, str]] = field(default_factory=list)   # (finding, reason) silenced inline

    groups: list[dict] = field(default_factory=list)   # MultiKueue groups checked: manager, workers

    @property
    def errors(self) -> int:
        return sum(f.severity == ERROR for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == WARNING for f in self.findings)

    @property
    def notes(self) -> int:
        return sum(f.severity == INFO for f in self.findings)

    def summary(self) -> dict:
        out = {"sources": len(self.sources), "objects": sum(s["objects"] for s in self.sources),
               "errors": self.errors, "warnings": self.warnings, "notes": self.notes,
               "ignored": len(self.ignored)}
        if self.groups:
            out["groups"] = len(self.groups)
        return out

    def exit_code(self, strict: bool = False) -> int:
        return EXIT_FINDINGS if self.errors or (strict and self.warnings) else EXIT_OK


_SCHEMAS: dict = {}


def schemas_for(target: Target, crd_root: Path):
    """The SchemaSet of a target, from the hash-verified pinned CRD files (crds.CrdFileError if one is off)."""
    from ..kernel import crd_dirs as crds
    from ..kernel.schemacheck import SchemaSet

    crd_root = Path(crd_root)
    key = (target.k8s, target.kueue, target.jobset, target.lws, str(crd_root))
    if key not in _SCHEMAS:
        dirs = crds.dirs_for(target.kueue, target.jobset, target.lws, crd_root)
        files = crds.pinned_files([d.relative_to(crd_root).as_posix() for d in dirs])
        _SCHEMAS[key] = SchemaSet(target.k8s, crd_files=crds.verified(crd_root, files))
    return _SCHEMAS[key]

def _guard(collector, obj, what, fn):
    """fn(), or None after an IE001 finding: one object the validator fails on must not
    hide the findings of the others (RecursionError included: nesting is capped by the
    loader, so it too would be a bug)."""
    try:
        return fn()
    except Exception as e:   # noqa: BLE001
        collector.internal(obj, what, e)
    return None


def check_stream(stream, target: Target, schemas, namespace: str = "", context: list | None = None,
                 closed: bool = True, selection=None) -> tuple[list[Problem], int, list[str], list]:
    """Problems for one input stream in document order, how many objects it held, the
    rules that could not run on it, and the findings that inline comments silenced."""
    return _check(stream, target, schemas, namespace, context, closed, selection)[:4]


def _check(stream, target: Target, schemas, namespace: str = "", context: list | None = None,
           closed: bool = True, selection=None, folder=None,
           defaulted: dict | None = None, rules: list | None = None) -> tuple[list[Problem], int, list[str], list, object]:
    """check_stream, and the Model it built (MultiKueue group rules read it). `folder`: the
    index of the other files of the stream's folder (objects.Folder), looked up as context;
    `defaulted`: the stream's objects defaulted already, for that index (_split_folders);
    `rules`: selected_rules(selection), when the caller has them."""
    from .objects import Model
    from .rules import hit
    from .selection import Selection

    selection = selection or Selection()
    collector = Collector(stream.name, closed, selection)
    objs = _read_objects(stream, schemas, collector, defaulted or {})
    for p in stream.problems:
        collector.add_problem(p)
    for o in objs:
        for rule_id, reason in o.ignores.items():
            if not reason:
                collector.add("IN005", hit(o, (), f"`# validate: ignore={rule_id}` without a reason is not applied"))
    model = Model(objs, schemas=schemas, autopilot=target.autopilot, namespace=namespace, context=context or [],
                  closed=closed, kueue_version=target.kueue, folder=folder, own=stream.name)
    schema_broken = False
    for o in objs:
        schema_broken |= _check_schema(o, schemas, collector, selection)
    skipped = _run_rules(model, collector, selection, schema_broken, rules)
    return collector.findings(), len(objs), skipped, collector.ignored, model


def _read_objects(stream, schemas, collector: Collector, done: dict) -> list:
    """The stream's objects, each with its CRD's defaults applied (as the API server stores it).
    `done`: id(object as read) -> (that object, defaulted), for those defaulted already with
    the same schemas (the objects of a folder's files, as their folder's index has them)."""
    from . import defaults, loader
    from .objects import Obj

    objs = []
    for i, body, doc in loader.objects(stream):
        o = Obj(i, body, doc.source, dict(doc.ignores))
        known = done.get(id(body))
        if known is not None and known[0] is body:
            o.body = known[1]
            objs.append(o)
            continue
        crd = _guard(collector, o, "reading the CRD schema",
                     lambda b=body: schemas.crd_schema(b.get("apiVersion"), b.get("kind")))
        defaulted = _guard(collector, o, "defaulting", lambda b=body, c=crd: defaults.apply(b, c))
        o.body = defaulted if defaulted is not None else body
        objs.append(o)
    return objs


def _check_schema(o, schemas, collector: Collector, selection) -> bool:
    """The schema and CEL findings of one object; True when its schema check failed (SC001)."""
    from . import schema

    found = _guard(collector, o, "the schema check", lambda: schema.check(schemas, o)) or []
    bad_paths = set()
    for rule_id, p in found:
        collector.add(rule_id, p)
        if rule_id == "SC001":
            bad_paths.add(p.parts)
    if selection.on("CE001") or selection.on("CE002") or selection.on("CE003"):
        for v in _guard(collector, o, "the CEL rules", lambda: _cel(schemas, o, bad_paths)) or []:
            collector.add(v.rule, dataclasses.replace(v, obj=o))   # v.rule: CE001, CE002 or CE003
    return bool(bad_paths)


def _run_rules(model, collector: Collector, selection, schema_broken: bool, rules: list | None = None) -> list[str]:
    """Every selected cross-object rule on the model (`rules`: selected_rules(selection), when
    the caller has them); the ids of those that could not run."""
    skipped = []
    for rule in selected_rules(selection) if rules is None else rules:
        try:
            hits = list(rule.check(model))
        except Exception as e:   # noqa: BLE001
            # Rules read objects as their schemas describe them. On an object the
            # schema layer already rejected, a rule may meet shapes it cannot read:
            # the schema findings explain the input. On valid input it is a bug.
            if schema_broken:
                skipped.append(rule.id)
            else:
                collector.internal(None, f"rule {rule.id}", e)
            continue
        for p in hits:
            collector.add(rule.id, p)
    return skipped


def selected_rules(selection) -> list:
    """The cross-object rules the selection turns on, in rule order (a run works them out once
    for its many streams)."""
    from .rules import RULES

    return [r for r in RULES.values() if r.check is not None and selection.on(r.id)]


def _cel(schemas, o, bad_paths):
    from . import cel
    api, kind = o.body.get("apiVersion"), o.body.get("kind")
    schema = schemas.crd_schema(api, kind)
    if schema is None:
        return []
    # A rule is left out where the schema layer found the value below it wrong.
    return cel.violations(cel.tree(schema), o.body, (),
                          skip=lambda p: any(b[:len(p)] == p for b in bad_paths))


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
    context: list[str] = field(default_factory=list)   # where the objects the inputs refer to live
    closed: bool = False                               # closed world without --context
    config: str | None = None
    enable: list[str] = field(default_factory=list)
    disable: list[str] = field(default_factory=list)
    multikueue: bool = False                           # the inputs are one MultiKueue group (NAME=PATH)
    one_stream: bool = False                           # a plain directory is one stream, not one per file


def _display(path: str) -> str:
    if path == "-":
        return "<stdin>"
    rel = os.path.relpath(Path(path).resolve(), Path.cwd())
    return rel if not rel.startswith("..") else str(Path(path).resolve())


def _context_objects(opts: Options, target: Target, schemas, crd_root: Path) -> list:
    """The objects of --context: overlays, kustomizations, YAML files or cluster dumps
    (List included). They are looked up, never reported on."""
    from . import defaults, loader
    from .objects import Obj

    out = []
    for path in opts.context:
        pend = loader.Pending(path, _display(path))
        try:
            stream = pend.collect()
        finally:
            pend.cancel()
        bad = [p for p in stream.problems if p.rule == "IN001"]
        if bad:
            raise UsageError(f"--context {path}: {bad[0].source}: {bad[0].path} {bad[0].message}")
        for _i, body, doc in loader.objects(stream):
            try:
                body = defaults.apply(body, schemas.crd_schema(body.get("apiVersion"), body.get("kind")))
            except Exception:   # noqa: BLE001  context objects are only looked up
                pass
            out.append(Obj(-1, body, doc.source))
        # Kueue's Configuration file (controller_manager_config.yaml) is not an object (no
        # metadata); MultiKueue rules read the integrations it enables.
        out += [Obj(-1, d.value, d.source) for d in stream.docs if isinstance(d.value, dict)
                and d.value.get("kind") == "Configuration"
                and str(d.value.get("apiVersion", "")).startswith("config.kueue.x-k8s.io/")
                and loader.not_an_object(d.value)]
    return out


def validate(opts: Options) -> Report:
    """Validate every input. Raises UsageError (or crds.CrdFileError) when it cannot run."""
    with _collector_paused():
        from . import context, loader, selection  # the spec model and the rules: imported with the collector off too
        from .rules import RULES

        sel = selection.load(opts.config, opts.enable, opts.disable, set(RULES))
        spec = context.read_spec(Path(opts.spec), opts.spec_explicit)
        out = Path(opts.out)
        names, paths = _inputs(opts, out)
        crd_root = _crd_root(opts)
        targets, closed, profile_of = _targets(opts, spec, paths, (out / "overlays").resolve())
        pending: list = []
        defaulted: dict = {}   # a folder's objects, defaulted once for the folder's index and their own file
        try:
            for p in paths:   # kustomize builds start now and run while the schemas load
                pending.append(loader.Pending(p, _display(p)))
            for t in targets:
                schemas_for(t, crd_root)
            streams = [pend.collect() for pend in pending]
            siblings: list[list] = [[] for _ in streams]   # per stream: objects of the other files of its folder
            if opts.paths and not opts.multikueue and not opts.one_stream:
                streams, targets, closed, siblings = _split_folders(pending, streams, targets, closed, crd_root,
                                                                defaulted)
            groups = _groups(opts, names, streams, spec, profile_of)
            beside = _beside(paths)
            results = _check_streams(opts, streams, targets, closed, siblings, groups, crd_root, sel, beside,
                                     defaulted)
            report = Report()
            for i, stream in enumerate(streams):
                findings, count, skipped, ignored, _ = results[i]
                report.findings += findings
                report.ignored += ignored
                report.sources.append({"name": stream.name, "objects": count, **targets[i].describe(),
                                       "world": "closed" if closed[i] else "open",
                                       "context": list(opts.context), "skippedRules": skipped})
            _add_groups(report, groups, paths, streams, results, closed, sel)
            if not opts.one_stream:
                report.findings = _positions(report.findings)
            return report
        finally:
            for pend in pending:
                pend.cancel()


def _positions(findings: list) -> list:
    """Findings in a file given as such (not a kustomize build, not stdin) get the line and
    column of their field, read from the file again only when it has findings."""
    from ..kernel import yamlio
    nodes: dict[str, list] = {}
    out = []
    for f in findings:
        index = f.document
        if f.line is None and index >= 0 and f.path and f.source and Path(f.source).is_file():
            if f.source not in nodes:
                nodes[f.source] = yamlio.file_documents(f.source)
            docs = nodes[f.source]
            # The object's own document (an item of a List is not: its path starts inside the item).
            mark = yamlio.locate(docs[index], f.path)[1] if index < len(docs) and _kind_of(docs[index]) in (
                f.kind, None) else None
            if mark is not None:
                f = dataclasses.replace(f, line=mark[0], column=mark[1])
        out.append(f)
    return out


def _kind_of(node) -> str | None:
    """The `kind` a document's node says, None when it says none."""
    import yaml
    if not isinstance(node, yaml.MappingNode):
        return None
    value = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == "kind"), None)
    return str(value.value) if isinstance(value, yaml.ScalarNode) else None


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the run. Nearly everything a run builds lives
    until its report (the spec's typed model, the schemas, every input's objects), and each
    collection went over all of it again: a tenth of validating 300 files against a
    1,000-workload spec, for about 3,500 objects of garbage in cycles, freed at the next
    collection after the run. Reference counting frees the rest as always. At the end, what the
    run built joins the oldest generation without a collection over it (gc.freeze resets the
    count of new objects, gc.unfreeze hands them to the oldest generation). Not when something
    else froze objects already: that program manages its own."""
    if gc.get_freeze_count() or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        gc.enable()


def _crd_root(opts: Options) -> Path:
    """The CRD directory: --crd-dir, else the pinned CRDs (downloaded where they are not yet)."""
    from ..kernel import crd_dirs as crds

    crd_root = Path(opts.crd_dir) if opts.crd_dir else crds.ensure_root()
    if not crd_root.is_dir():
        raise UsageError(f"{crd_root}: no CRD directory; run `gke-ml-platform crds` (or set CRD_DIR) or pass --crd-dir")
    return crd_root


def _groups(opts: Options, names: list[str], streams: list, spec, profile_of: dict[int, str]) -> list:
    """The MultiKueue groups to check, as (manager index, [(member index, name)]): --multikueue
    names one; `make validate` (no paths) takes the spec's."""
    from . import group

    if opts.multikueue:
        return group.from_flag(names, streams)
    return group.from_spec(spec, profile_of) if not opts.paths else []


def _beside(paths: list[str]) -> dict[str, list]:
    """By input name: what synth wrote beside an overlay (controllers/NAME/kueue's manager
    Configuration), looked up as context: the integrations the cluster's Kueue enables."""
    from . import group

    out: dict[str, list] = {}
    for p in paths:
        found = group.layout_objects(group.layout_controllers(p), _display)
        if found:
            out[_display(p)] = found
    return out


def _check_streams(opts: Options, streams: list, targets: list, closed: list[bool], siblings: list[list],
                   groups: list, crd_root: Path, sel, beside: dict[str, list] | None = None,
                   defaulted: dict | None = None) -> dict:
    """Each stream's _check result, by input index. Managers first: a worker's context holds
    what its manager dispatches to it."""
    from . import group
    from .objects import Folder

    managers_of = _managers_of(groups)
    rules = selected_rules(sel)
    folders: dict[int, Folder] = {}
    known: dict = {}
    results: dict = {}
    for i in sorted(range(len(streams)), key=lambda i: (i not in {m for m, _ in groups}, i)):
        t = targets[i]
        schemas = schemas_for(t, crd_root)
        if opts.context and t not in known:
            known[t] = _context_objects(opts, t, schemas, crd_root)
        extra = [o for m in managers_of.get(i, []) if m in results   # (a manager's manager: none in Kueue)
                 for o in group.dispatched_context(results[m][4])]
        folder = None
        if siblings[i]:   # one index per folder, shared by its files (built at its first file)
            key = id(siblings[i])
            if key not in folders:
                folders[key] = Folder(siblings[i], schemas=schemas, namespace=opts.namespace or "")
            folder = folders[key]
        extra += (beside or {}).get(streams[i].name, [])
        results[i] = _check(streams[i], t, schemas, opts.namespace or "",
                            context=known.get(t, []) + extra, closed=closed[i], selection=sel, folder=folder,
                            defaulted=defaulted if folder is not None else None, rules=rules)
    return results


def _managers_of(groups: list) -> dict[int, list[int]]:
    """Per worker input index, the manager input indexes it serves (a worker may serve several)."""
    managers_of: dict[int, list[int]] = {}
    for m, members in groups:
        for i, _ in members:
            if i != m:
                managers_of.setdefault(i, []).append(m)
    return managers_of


def _split_folders(pending, streams, targets, closed, crd_root, defaulted: dict):
    """A plain directory (no kustomization) becomes one stream per file, each checked with the
    other files' objects as context: references across files resolve, but a name defined in
    two files (alternative example files, say) is not a duplicate. --one-stream keeps the
    directory one stream, where it is. Each object defaulted here goes into `defaulted`
    (id(object as read) -> (it, defaulted)): its own file's stream takes it from there."""
    from . import defaults, loader
    from .loader import Stream
    from .objects import Obj

    out_streams: list = []
    out_targets: list = []
    out_closed: list[bool] = []
    out_siblings: list[list] = []
    for pend, stream, t, c in zip(pending, streams, targets, closed, strict=True):
        if pend.kind != "dir":
            out_streams.append(stream)
            out_targets.append(t)
            out_closed.append(c)
            out_siblings.append([])
            continue
        schemas = schemas_for(t, crd_root)
        folder: list = []
        known_problems = len(stream.problems)
        found = loader.objects(stream)
        del stream.problems[known_problems:]   # each file's own stream reports its documents (IN002)
        for _i, body, doc in found:
            try:
                done = defaults.apply(body, schemas.crd_schema(body.get("apiVersion"), body.get("kind")))
            except Exception:   # noqa: BLE001  sibling objects are only looked up; their own stream reports
                done = None
            if done is not None:
                defaulted[id(body)] = (body, done)
            folder.append(Obj(-1, done if done is not None else body, doc.source))
        by_file: dict[str, Stream] = {}
        for doc in stream.docs:
            by_file.setdefault(doc.source, Stream(doc.source)).docs.append(doc)
        for problem in stream.problems:
            by_file.setdefault(problem.source, Stream(problem.source)).problems.append(problem)
        for name in sorted(by_file):
            part = by_file[name]
            part.problems = [dataclasses.replace(pr, document=_reindex(stream, part, pr.document)) for pr in part.problems]
            out_streams.append(part)
            out_targets.append(t)
            out_closed.append(c)
            out_siblings.append(folder)
    return out_streams, out_targets, out_closed, out_siblings


def _reindex(whole, part, index: int) -> int:
    """A problem's document index in the whole stream, as an index into the file's own documents."""
    if index < 0 or index >= len(whole.docs):
        return len(part.docs) if index >= 0 else index
    doc = whole.docs[index]
    return next((i for i, d in enumerate(part.docs) if d is doc), len(part.docs))


def _inputs(opts: Options, out: Path) -> tuple[list[str], list[str]]:
    """The member names of a --multikueue group (else none) and the input paths: those
    given, else every overlay under out/overlays."""
    from . import group, loader

    paths = list(opts.paths)
    names: list[str] = []
    if opts.multikueue:
        if not paths:
            raise UsageError("--multikueue: name the group's inputs, the manager's and each worker's "
                             "(NAME=PATH, or PATH named after its MultiKueueCluster)")
        names, paths = group.split_names(paths)
    if not paths:
        overlays = out / "overlays"
        paths = sorted(str(d) for d in overlays.iterdir() if d.is_dir() and loader.is_kustomization(d)) \
            if overlays.is_dir() else []
        if not paths:
            if not opts.spec_explicit and not Path(opts.spec).exists():   # outside any platform repository
                raise UsageError(f"no {opts.spec} in {Path.cwd()} or any folder above it, and no inputs named: run "
                                 "inside a platform repository (gke-ml-platform init DIR makes one) or name the "
                                 "overlays or YAML files to check")
            raise UsageError(f"no overlays under {overlays}; run `gke-ml-platform synth` "
                             "or name the inputs")
    if paths.count("-") > 1:
        raise UsageError("stdin (-) can be read once")
    return names, paths


def _targets(opts: Options, spec, paths: list[str], overlay_root: Path) -> tuple[list, list[bool], dict[int, str]]:
    """Per input: its target (versions, Autopilot), whether it is checked closed-world, and
    (by input index) the profile of each overlay built from the spec."""
    from . import context

    targets, closed, profile_of = [], [], {}
    for i, p in enumerate(paths):
        resolved = Path(p).resolve() if p != "-" else None
        profile = opts.profile
        from_spec = False
        if resolved is not None and resolved.parent == overlay_root and resolved.name in context.profiles(spec):
            from_spec = True
            profile = resolved.name   # an overlay built from the spec: its profile decides
            profile_of[i] = profile
        targets.append(context.target(spec, opts.spec, profile, opts.kubernetes_version, opts.kueue_version,
                                      opts.autopilot))
        # Overlays built from the spec are the whole platform: closed world. Other inputs
        # are part of a cluster: open, unless the user names the rest (--context) or --closed.
        closed.append(from_spec or bool(opts.context) or opts.closed)
    return targets, closed, profile_of


def _add_groups(report: Report, groups, paths: list[str], streams: list, results: dict, closed: list[bool], sel) -> None:
    """The MultiKueue group rules of each group, over its members' checked inputs."""
    from . import group
    from .rules.multikueue_group import Group

    order = {s.name: i for i, s in enumerate(streams)}
    for m, members in groups:
        built = {name: group.member(name, paths[i], streams[i].name, results[i][4], closed[i], _display)
                 for i, name in members}
        g = Group(built.pop(next(name for i, name in members if i == m)), built)
        broken = any(f.rule == "SC001" for i, _ in members for f in results[i][0])
        found, ignored, skipped = group.findings(g, sel, order, broken)
        report.findings += found
        report.ignored += ignored
        report.groups.append({"manager": g.manager.source, "workers": [w.source for w in built.values()],
                              "skippedRules": skipped})
