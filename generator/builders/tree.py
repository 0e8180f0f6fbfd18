"""From a validated Spec to the output tree: path -> file text.

base/: what every cluster shares (namespaces, PriorityClasses).
overlays/<profile>/: base plus the profile's Kueue objects and workloads.
controllers/<profile>/<controller>/: the controller installs (see controllers.py)."""
from __future__ import annotations

from pathlib import Path

from ..kernel import apiscope, paths, writer, yamlio
from ..model import Platform, Profile
from ..model.multikueue import DISPATCHERS
from . import cdk, controllers, core, gitops, k8s, kueue_objects, podpolicy
from .workloads import BUILDERS
from .workloads.common import BuildContext

HEADER = writer.HEADER   # one line, the same in every file synth writes


def build_base(spec: Platform, chart) -> None:
    for ns in spec.namespaces:
        k8s.KubeNamespace(chart, f"Namespace._.{ns.name}", metadata=core.meta(ns.name, labels=ns.labels))
    for _, t in sorted(spec.priority_tiers.items()):
        pc = t.priority_class
        if not pc:
            continue
        k8s.KubePriorityClass(
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


def render(spec: Platform) -> tuple[dict[str, str], dict[str, list[dict]]]:
    """Every output file, and the objects of base/ and each overlay as emitted (so that
    checks on them need not parse the YAML again)."""
    app = cdk.new_app()
    header = HEADER.format(source=_source_name(spec))
    tree: dict[str, str] = {}

    # The objects of base/ and each overlay, as emitted: Argo CD's projects and
    # ignore rules are derived from them (re-parsing the YAML cost seconds at scale).
    emitted: dict[str, list[dict]] = {}
    base = cdk.chart(app, "base")
    build_base(spec, base)
    emitted["base"] = gitops.annotate(cdk.manifests(base))
    _emit(tree, "base", emitted["base"], header, extra_resources=[])

    for name, profile in spec.profiles.items():
        overlay = cdk.chart(app, f"overlays/{name}")
        ctx = BuildContext(spec, profile, overlay)
        kueue_objects.queue_objects(ctx)
        workloads = spec.workloads_for(name)
        for w in workloads:
            BUILDERS[w.kind](ctx, w)
        _dispatched_companions(app, spec, ctx)
        objs = cdk.manifests(overlay)
        podpolicy.apply(objs, spec, ctx.checks)
        emitted[f"overlays/{name}"] = gitops.annotate(objs)
        _emit(tree, f"overlays/{name}", emitted[f"overlays/{name}"], header,
              extra_resources=["../../base"])
        _controllers(app, tree, spec, profile, workloads, header)
    gitops.build(app, spec, tree, header, _emit, emitted)   # argocd/, from the tree above
    return tree, emitted


def _dispatched_companions(app, spec: Platform, ctx: BuildContext) -> None:
    """On a MultiKueue worker: what the workloads submitted to its managers need beside the
    job MultiKueue copies over (a fine-tuning Job's headless Service, which gives rank 0 its
    DNS name): built as on the manager, every object but the queued ones."""
    for group in spec.worker_groups(ctx.profile.name):
        manager = spec.profiles[group.manager]
        for w in spec.workloads_for(group.manager):
            scratch = BuildContext(spec, manager, cdk.chart(app, f"companions/{ctx.profile.name}/{w.name}"))
            BUILDERS[w.kind](scratch, w)
            queued = {(o["kind"], o["metadata"]["name"]) for o in w.demand_objects(scratch.checks)}
            for obj in cdk.manifests(scratch.chart):
                if (obj["kind"], obj["metadata"]["name"]) not in queued:
                    ctx.add_custom(obj)


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
