"""From a validated Spec to the output tree: path -> file text, through one cdk8s app.

base/: what every cluster shares (namespaces, PriorityClasses).
overlays/<profile>/: base plus the profile's Kueue objects and workloads.
controllers/<profile>/<controller>/: the controller installs (see controllers.py).

The charts of base/ and the overlays are built first, each workload's objects under a scope
of their own, then a repository's own constructs run (user.py), then each chart is rendered
by cdk8s with the owner of every object. Pod hardening, the workloads' `pod:` additions, the
MultiKueue companions and the fit checks (model/fit.py) read those emitted objects; any
problem is raised before anything is returned, so nothing is written."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

import cdk8s

from ..kernel import apiscope, credentials, demand, paths, writer, yamlio
from ..kernel.errors import Problem, SpecError, format_path
from ..model import Platform, Profile, fit
from ..model.check_context import CheckContext
from ..model.kinds import Workload
from ..model.multikueue import DISPATCHERS
from . import cdk, controllers, core, gitops, gpudirect_objects, k8s, kueue_objects, podpolicy, user
from .workloads import BUILDERS
from .workloads.common import BuildContext

HEADER = writer.HEADER   # one line, the same in every file synth writes


def build_base(spec: Platform, chart) -> None:
    for ns in spec.namespaces:
        cdk.typed(k8s.KubeNamespace, chart, f"Namespace._.{ns.name}", metadata=core.meta(ns.name, labels=ns.labels))
    for _, t in sorted(spec.priority_tiers.items()):
        pc = t.priority_class
        if not pc:
            continue
        cdk.typed(k8s.KubePriorityClass,
            chart, f"PriorityClass._.{pc.name}",
            metadata=core.meta(pc.name),
            value=pc.value,
            global_default=pc.global_default,
            preemption_policy=pc.preemption_policy,
            description=pc.description,
        )


def build(spec: Platform) -> dict[str, str]:
    """Render every output file. Raises before anything is written."""
    return render(spec)[0]


Owner = tuple[int, Workload]   # the workload's index in the spec, and the workload
USER = "constructs"            # the owner of what a user's constructs add (generator/builders/user.py)


@dataclass
class Folder:
    """The chart of one output folder (base/, an overlay), with a scope per owner: the
    generator's objects of no workload (owner None), each workload's objects, the companions
    copied from a MultiKueue manager; what comes after the "end" scope is a user's (USER)."""
    chart: cdk8s.Chart
    profile: Profile | None = None
    owners: dict[int, Owner | str | None] = field(default_factory=dict)   # id(scope) -> its owner
    scopes: list = field(default_factory=list)                            # keeps the scopes alive
    rendered: list[tuple[dict, Owner | str | None]] | None = None

    def scope(self, id_: str, owner: Owner | str | None):
        s = cdk.scope(self.chart, id_)
        self.owners[id(s)] = owner
        self.scopes.append(s)
        self.rendered = None
        return s

    def render(self, exact: bool) -> list[tuple[dict, Owner | str | None]]:
        if self.rendered is None:
            self.rendered = cdk.rendered_with_owners(self.chart, self.owners, exact)
        return self.rendered


def _build_base(app, spec: Platform) -> Folder:
    base = Folder(cdk.chart(app, "base"))
    build_base(spec, base.scope("platform", None))
    base.scope("end", USER)
    return base


def _build_overlay(app, spec: Platform, name: str, profile: Profile) -> Folder:
    ov = Folder(cdk.chart(app, f"overlays/{name}"), profile)
    kueue_objects.queue_objects(BuildContext(spec, profile, ov.scope("queues", None)))
    for w in spec.workloads_for(name):
        i = spec.index_of(w)
        BUILDERS[w.kind](BuildContext(spec, profile, ov.scope(f"workloads[{i}]", (i, w))), w)
    ov.scope("end", USER)
    return ov


def render(spec: Platform) -> tuple[dict[str, str], dict[str, list[dict]]]:
    """Every output file, and the objects of base/ and each overlay as emitted (so that
    checks on them need not parse the YAML again)."""
    app = cdk.new_app()
    header = HEADER.format(source=_source_name(spec))
    tree: dict[str, str] = {}

    base = _build_base(app, spec)
    overlays = {name: _build_overlay(app, spec, name, profile) for name, profile in spec.profiles.items()}
    cdk.flush()   # the custom resources' bodies first: a user's JSON patches apply after them
    user.run(spec, app, {"base": base.chart, **{f"overlays/{n}": ov.chart for n, ov in overlays.items()}})
    exact = bool(spec.constructs)   # a user's constructs may add dependencies, which reorder cdk8s' output
    _dispatched_companions(spec, overlays, exact)

    # The objects of base/ and each overlay, as emitted: Argo CD's projects and
    # ignore rules are derived from them (re-parsing the YAML cost seconds at scale).
    emitted: dict[str, list[dict]] = {}
    problems: list[Problem] = []
    for folder, f in {"base": base, **{f"overlays/{n}": ov for n, ov in overlays.items()}}.items():
        pairs = f.render(exact)
        keep_off = podpolicy.keep_off_for(spec, f.profile) if f.profile else None
        problems += podpolicy.apply(pairs, keep_off) + _user_credentials(pairs)
        if f.profile is not None:
            problems += fit.problems(spec, f.profile, [_owned(obj, o) for obj, o in pairs if o is not None])
        emitted[folder] = gitops.annotate([obj for obj, _ in pairs])
        _emit(tree, folder, emitted[folder], header, extra_resources=["../../base"] if f.profile else [])
        if f.profile is not None:
            _controllers(app, tree, spec, f.profile, spec.workloads_for(f.profile.name), header)
    if problems:
        raise SpecError(spec.source, problems)
    gitops.build(app, spec, tree, header, _emit, emitted)   # argocd/, from the tree above
    return tree, emitted


def _user_credentials(pairs: list[tuple[dict, Owner | str | None]]) -> list[Problem]:
    """What a user's constructs add goes through the credential check the spec and its manifest files get."""
    out = []
    for obj, owner in pairs:
        if owner == USER:
            where = f"{obj.get('kind')}/{(obj.get('metadata') or {}).get('name')}"
            out += [Problem(USER, f"{where}: {format_path(list(path)) or '<root>'}: {what}")
                    for path, what in credentials.scan(obj)]
    return out


def _owned(obj: dict, owner: Owner | str) -> tuple[str, str, Workload | None, dict]:
    """(where a problem is reported, who made the object, its workload) for the fit checks."""
    if isinstance(owner, tuple):
        i, w = owner
        return f"workloads[{i}]", repr(w.name), w, obj
    return "constructs", "your constructs", None, obj


def _queued(obj: dict) -> bool:
    """An object Kueue admits (it reads a queue name from it): MultiKueue copies it to a worker."""
    return demand.is_workload(obj) and demand.of(obj).queue is not None


def _dispatched_companions(spec: Platform, overlays: dict[str, Folder], exact: bool) -> None:
    """On a MultiKueue worker: what the workloads submitted to its managers need beside the
    job MultiKueue copies over (a fine-tuning Job's headless Service, which gives rank 0 its
    DNS name): the objects the manager's overlay holds for each of them, but the queued ones."""
    for name, ov in overlays.items():
        for group in spec.worker_groups(name):
            manager = overlays[group.manager]
            by_owner: dict[int, list[dict]] = {}
            for obj, owner in manager.render(exact):
                if isinstance(owner, tuple) and not _queued(obj):
                    by_owner.setdefault(owner[0], []).append(copy.deepcopy(obj))
            for w in spec.workloads_for(group.manager):
                i = spec.index_of(w)
                scope = ov.scope(f"companions.{group.manager}.{i}", (i, w))
                for obj in by_owner.get(i, []):
                    cdk.custom(scope, obj)
            ov.scope(f"end.{group.manager}", USER)


def _controllers(app, tree, spec: Platform, profile: Profile, workloads: list, header: str) -> None:
    _, needed = spec.integrations_needed(profile.name)
    frameworks = spec.integrations_enabled(profile)
    group = spec.manager_group(profile.name)
    root = f"controllers/{profile.name}"
    chart = cdk.chart(app, f"{root}/kueue")
    controllers.kueue_config_map(chart, profile, frameworks, spec.kueue.fair_sharing,
                                 DISPATCHERS[group.dispatcher] if group else None, spec.kueue.wait_for_pods_ready)
    (patch,) = cdk.manifests(chart)
    patch_file = "kueue-manager-config.yaml"
    tree[f"{root}/kueue/{patch_file}"] = header + yamlio.dump(patch)
    tree[f"{root}/kueue/kustomization.yaml"] = header + yamlio.dump(
        controllers.kueue_kustomization(profile, patch_file))
    pins = {"jobset": spec.jobset.version, "lws": spec.lws.version}
    for project in sorted(needed):
        tree[f"{root}/{project}/kustomization.yaml"] = header + yamlio.dump(
            controllers.release_kustomization(project, pins[project]))
    _gpudirect(app, tree, spec, profile, workloads, header)


def _gpudirect(app, tree, spec: Platform, profile: Profile, workloads: list, header: str) -> None:
    """controllers/<profile>/gpudirect/: the NCCL plugin installers and multi-networking objects
    the profile's GPUDirect workloads need (none: no directory)."""
    checks = CheckContext(spec, profile)
    types = {g.key: g for w in workloads if (g := w.uses_gpudirect(checks)) is not None}
    if not types:
        return
    chart = cdk.chart(app, f"controllers/{profile.name}/gpudirect")
    for obj in gpudirect_objects.cluster_objects([types[k] for k in sorted(types)],
                                         profile.values.network_prefix or profile.name):
        cdk.custom(chart, obj)
    _emit(tree, f"controllers/{profile.name}/gpudirect", cdk.manifests(chart), header, extra_resources=[])


def _emit(tree: dict, directory: str, objs: list[dict], header: str, extra_resources: list[str]) -> None:
    files: dict[str, dict] = {}
    for obj in objs:
        if apiscope.is_cluster_scoped(obj["apiVersion"], obj["kind"]) and obj["metadata"].get("namespace"):
            raise ValueError(f"{obj['kind']}/{obj['metadata']['name']} is cluster-scoped but has a namespace")
        name = paths.file_name(obj)
        if name in files:
            raise ValueError(f"two objects would be written to {directory}/{name}")
        files[name] = obj
    for name in sorted(files):
        tree[f"{directory}/{name}"] = header + yamlio.dump(files[name])
    tree[f"{directory}/kustomization.yaml"] = header + yamlio.dump(
        controllers.kustomization(extra_resources + sorted(files)))


def _source_name(spec: Platform) -> str:
    """The spec as the generated files' header names it: relative to this checkout for its own specs
    (tests/fixtures/...), else its file name (platform.yaml beside the output in a platform repository)."""
    p = Path(spec.source)
    try:
        return str(p.resolve().relative_to(paths.ROOT)) if not paths.INSTALLED else p.name
    except ValueError:
        return p.name
