"""Argo CD: sync waves on every object synth emits, and the argocd/ tree.

argocd/            bootstrap: an AppProject that may only manage Applications and
                   AppProjects, and the root Application (app of apps) syncing argocd/apps
argocd/apps/       the platform's AppProjects and one Application per controller install
                   (controllers/<profile>/<controller>) and per overlay (overlays/<profile>)
argocd/install/    the pinned Argo CD release with the health check that makes the
                   root Application wait for each wave of child Applications

Order, from the root Application's sync waves: AppProjects, then the installs
that Kueue integrates with (JobSet, LWS), then Kueue, then any other install
(they build on Kueue), then the overlays. Inside an overlay (waves of
`annotate`): Namespaces, cluster-scoped config, flavors and admission
checks, ClusterQueues, namespaced config and LocalQueues, workloads last."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..kernel import versions, yamlio
from ..kernel.argo import COMPARE_OPTIONS, REPLACE_OPTIONS, SYNC_OPTIONS, SYNC_WAVE
from . import cdk

IN_CLUSTER = "https://kubernetes.default.svc"
PROFILE_LABEL = "gke-ml-platform.dev/profile"
# Argo CD tracks resources by application name, which a label value must hold.
# user:password@ or token@ in an https URL, user:password@ in an ssh URL.

# Waves inside an overlay Application (base objects included).
WAVE_NAMESPACES = 0
WAVE_CLUSTER_CONFIG = 1      # referenced, referencing nothing: priorities, topologies, cohorts
WAVE_FLAVORS = 2             # ResourceFlavors (name a Topology), AdmissionChecks (name their parameters)
WAVE_CLUSTER_QUEUES = 3      # name flavors, admission checks, cohorts
WAVE_NAMESPACED_CONFIG = 4   # LocalQueues, Services, ConfigMaps, monitoring, routes
WAVE_WORKLOADS = 5           # last: nothing waits for a Job to finish

KIND_WAVES = {
    "Namespace": WAVE_NAMESPACES,
    "ResourceFlavor": WAVE_FLAVORS,
    "AdmissionCheck": WAVE_FLAVORS,
    "ClusterQueue": WAVE_CLUSTER_QUEUES,
    "LocalQueue": WAVE_NAMESPACED_CONFIG,
    # The HPA joins its target's wave: a later wave would wait for the target to be healthy.
    **{k: WAVE_WORKLOADS for k in ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod",
                                   "JobSet", "LeaderWorkerSet", "HorizontalPodAutoscaler")},
}

# Jobs and JobSets are immutable once created (kubernetes#89657): Argo CD deletes
# and recreates them when Git changes them, and keeps their stable names.
IMMUTABLE_KINDS = frozenset({"Job", "JobSet"})
SKIP_DRY_RUN = "SkipDryRunOnMissingResource=true"

# API groups the API server serves itself; any other group is a custom resource
# whose CRD a controller install (or GKE) brings.
BUILTIN_GROUPS = frozenset({
    "", "apps", "batch", "autoscaling", "policy", "networking.k8s.io", "rbac.authorization.k8s.io",
    "scheduling.k8s.io", "storage.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io",
    "coordination.k8s.io", "discovery.k8s.io", "node.k8s.io", "certificates.k8s.io", "events.k8s.io",
    "flowcontrol.apiserver.k8s.io", "resource.k8s.io", "apiregistration.k8s.io",
})

# Who provides the CRDs of each custom-resource group an overlay may use: a
# controller install generated under controllers/<profile>/<dir>, or GKE itself.
CRD_PROVIDERS = {
    "kueue.x-k8s.io": "kueue",
    "jobset.x-k8s.io": "jobset",
    "leaderworkerset.x-k8s.io": "lws",
    "monitoring.googleapis.com": "gke",         # Managed Service for Prometheus
    "gateway.networking.k8s.io": "gke",         # GKE Gateway controller
    "networking.gke.io": "gke",
    "inference.networking.k8s.io": "gke",       # GKE Inference Gateway
    "accelerator.gke.io": "gke",                # managed TPU slice controller
}

# Waves of the root Application. Kueue starts after the frameworks it integrates
# with, so their CRDs exist when its integrations start; other installs (slice
# controllers and the like) build on Kueue; overlays come last, once every
# install is healthy (the health check in argocd/install makes waves wait).
APP_WAVE_PROJECTS = -1
CONTROLLER_WAVES = {"jobset": 0, "lws": 0, "kueue": 1}
APP_WAVE_OTHER_CONTROLLERS = 2
APP_WAVE_OVERLAYS = 3
# A MultiKueue manager's overlay after its workers': their LocalQueues and the identity
# the manager's kubeconfig uses exist before the manager starts dispatching to them.
APP_WAVE_MANAGER_OVERLAYS = 4

# Gate-grade health of a child Application: Healthy only once its last sync
# succeeded and it is Synced and Healthy (Argo CD relays no Application health
# since 1.8, so without this the root would not wait between waves).
APPLICATION_HEALTH_LUA = """\
hs = {status = "Progressing", message = "waiting for the first sync"}
if obj.status == nil then
  return hs
end
local op = obj.status.operationState
if op ~= nil and (op.phase == "Failed" or op.phase == "Error") then
  hs.status = "Degraded"
  hs.message = op.message or "sync failed"
  return hs
end
if op ~= nil and op.phase ~= "Succeeded" then
  hs.message = "sync " .. (op.phase or "pending")
  return hs
end
if obj.status.sync == nil or obj.status.sync.status ~= "Synced" then
  hs.message = "not synced yet"
  return hs
end
if obj.status.health ~= nil and obj.status.health.status ~= nil then
  hs.status = obj.status.health.status
  hs.message = obj.status.health.message or ""
end
return hs
"""
HEALTH_KEY = "resource.customizations.health.argoproj.io_Application"


# ---------------------------------------------------------------- annotations

def api_group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def is_custom_resource(obj: dict) -> bool:
    return api_group(obj["apiVersion"]) not in BUILTIN_GROUPS


def wave(obj: dict) -> int:
    kind = obj["kind"]
    if kind in KIND_WAVES:
        return KIND_WAVES[kind]
    return WAVE_NAMESPACED_CONFIG if obj["metadata"].get("namespace") else WAVE_CLUSTER_CONFIG


def sync_options(obj: dict) -> tuple[str, ...]:
    opts = []
    if is_custom_resource(obj):
        opts.append(SKIP_DRY_RUN)
    if obj["kind"] in IMMUTABLE_KINDS:
        opts += REPLACE_OPTIONS
    return tuple(opts)


def annotate(objs: list[dict]) -> list[dict]:
    """Stamp the sync wave (and sync options) on each synthesized object, in place.
    The one place where overlay objects get their Argo CD annotations."""
    for obj in objs:
        notes = obj["metadata"].setdefault("annotations", {})
        notes[SYNC_WAVE] = str(wave(obj))
        opts = sync_options(obj)
        if opts:
            notes[SYNC_OPTIONS] = ",".join(opts)
    return objs


# ---------------------------------------------------------------- builders

@dataclass(frozen=True)
class Destination:
    server: str | None = None
    name: str | None = None
    namespace: str | None = None

    def body(self) -> dict:
        out = {}
        if self.server:
            out["server"] = self.server
        if self.name:
            out["name"] = self.name
        if self.namespace:
            out["namespace"] = self.namespace
        return out

    def label(self) -> str:
        return self.server or f"cluster {self.name}"


@dataclass(frozen=True)
class IgnoreRule:
    """One ignoreDifferences entry: fields another controller owns."""
    group: str
    kind: str
    json_pointers: tuple[str, ...] = ()
    jq_paths: tuple[str, ...] = ()
    name: str | None = None
    namespace: str | None = None

    def body(self) -> dict:
        out: dict = {"group": self.group, "kind": self.kind}
        if self.name:
            out["name"] = self.name
        if self.namespace:
            out["namespace"] = self.namespace
        if self.json_pointers:
            out["jsonPointers"] = list(self.json_pointers)
        if self.jq_paths:
            out["jqPathExpressions"] = list(self.jq_paths)
        return out


@dataclass(frozen=True)
class Application:
    name: str
    namespace: str
    project: str
    repo_url: str
    revision: str
    path: str
    destination: Destination
    wave: int
    prune: bool
    sync_options: tuple[str, ...] = ()
    ignore: tuple[IgnoreRule, ...] = ()
    labels: dict = field(default_factory=dict)
    compare_options: tuple[str, ...] = ()

    def body(self, api: str) -> dict:
        notes = {SYNC_WAVE: str(self.wave)}
        if self.compare_options:
            notes[COMPARE_OPTIONS] = ",".join(self.compare_options)
        spec: dict = {
            "project": self.project,
            "source": {"repoURL": self.repo_url, "targetRevision": self.revision, "path": self.path},
            "destination": self.destination.body(),
        }
        if self.ignore:
            spec["ignoreDifferences"] = [r.body() for r in self.ignore]
        spec["syncPolicy"] = {
            "automated": {"prune": self.prune, "selfHeal": True},
            "syncOptions": list(self.sync_options),
            # CRDs and webhooks of another Application may still be starting.
            "retry": {"limit": 10, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "5m"}},
        }
        return {
            "apiVersion": api,
            "kind": "Application",
            "metadata": {"name": self.name, "namespace": self.namespace, "labels": dict(self.labels),
                         "annotations": notes},
            "spec": spec,
        }


@dataclass(frozen=True)
class AppProject:
    name: str
    namespace: str
    description: str
    source_repos: tuple[str, ...]
    destinations: tuple[Destination, ...]
    cluster_kinds: tuple[tuple[str, str, str | None], ...] = ()  # (group, kind, name glob or None: any name)
    namespaced_kinds: tuple[tuple[str, str], ...] | None = None  # None: any namespaced kind
    labels: dict = field(default_factory=dict)
    wave: int | None = None

    def body(self, api: str) -> dict:
        spec: dict = {
            "description": self.description,
            "sourceRepos": list(self.source_repos),
            "destinations": [d.body() for d in self.destinations],
        }
        if self.cluster_kinds:
            spec["clusterResourceWhitelist"] = [{"group": g, "kind": k, **({"name": n} if n else {})}
                                                for g, k, n in self.cluster_kinds]
        if self.namespaced_kinds is not None:
            spec["namespaceResourceWhitelist"] = [{"group": g, "kind": k} for g, k in self.namespaced_kinds]
        meta: dict = {"name": self.name, "namespace": self.namespace, "labels": dict(self.labels)}
        if self.wave is not None:
            meta["annotations"] = {SYNC_WAVE: str(self.wave)}
        return {"apiVersion": api, "kind": "AppProject", "metadata": meta, "spec": spec}


# ---------------------------------------------------------------- settings

@dataclass(frozen=True)
class Settings:
    repo_url: str
    revision: str
    namespace: str
    project: str
    clusters: dict[str, Destination]   # profile -> where its overlay and installs go


def settings(spec) -> Settings | None:
    """The spec's `gitops` block (checked with the spec); None when absent."""
    g = spec.gitops
    if g is None:
        return None
    clusters = {p: Destination(server=d.server, name=d.name) for p, d in sorted(g.clusters.items())}
    return Settings(g.repo_url, g.target_revision, g.argocd_namespace, g.project or spec.name, clusters)


# ---------------------------------------------------------------- the tree

def _objects(tree: dict[str, str], directory: str, emitted: dict[str, list[dict]] | None = None) -> list[dict]:
    if emitted is not None and directory in emitted:
        return list(emitted[directory])   # the same objects, without parsing their YAML back
    out = []
    for path in sorted(tree):
        head, _, file = path.rpartition("/")
        if head == directory and file != "kustomization.yaml" and file.endswith(".yaml"):
            out += [d for d in yamlio.load_all(tree[path]) if isinstance(d, dict)]
    return out


def controller_dirs(tree: dict[str, str], profile: str) -> list[str]:
    """Controller install directories synth generated for a profile (sorted)."""
    prefix = f"controllers/{profile}/"
    return sorted({p[len(prefix):].split("/")[0] for p in tree
                   if p.startswith(prefix) and p.endswith("/kustomization.yaml") and p.count("/") == 3})


def overlay_ignores(objs: list[dict]) -> tuple[IgnoreRule, ...]:
    """Fields of overlay objects that controllers own, so Argo CD neither reports
    nor reverts them: Kueue's spec.suspend on Jobs and JobSets, and spec.replicas
    of every HPA target."""
    rules = []
    kinds = sorted({(api_group(o["apiVersion"]), o["kind"]) for o in objs if o["kind"] in IMMUTABLE_KINDS})
    for group, kind in kinds:
        rules.append(IgnoreRule(group, kind, json_pointers=("/spec/suspend",)))
    for o in sorted((o for o in objs if o["kind"] == "HorizontalPodAutoscaler"),
                    key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"])):
        ref = o["spec"]["scaleTargetRef"]
        rules.append(IgnoreRule(api_group(ref.get("apiVersion", "apps/v1")), ref["kind"],
                                json_pointers=("/spec/replicas",), name=ref["name"],
                                namespace=o["metadata"]["namespace"]))
    return tuple(rules)


# Installs: webhook and conversion CA bundles are injected by the controllers' cert managers.
INSTALL_IGNORES = (
    IgnoreRule("admissionregistration.k8s.io", "MutatingWebhookConfiguration",
               jq_paths=(".webhooks[]?.clientConfig.caBundle",)),
    IgnoreRule("admissionregistration.k8s.io", "ValidatingWebhookConfiguration",
               jq_paths=(".webhooks[]?.clientConfig.caBundle",)),
    IgnoreRule("apiextensions.k8s.io", "CustomResourceDefinition",
               json_pointers=("/spec/conversion/webhook/clientConfig/caBundle",)),
)


# ---------------------------------------------------------------- project scopes
# Each AppProject allows exactly what its Applications sync: destinations per cluster and
# namespace, cluster-scoped objects by name (Argo CD v3 matches `name` in
# clusterResourceWhitelist; namespaced kinds it matches by group and kind only), plus what the
# spec's `gitops.allow` adds on purpose. Argo CD checks namespaced objects against the
# destinations and cluster-scoped ones against the whitelist (controller/sync.go,
# WithPermissionValidator), and the Application's own destination against the destinations.

@dataclass
class Scope:
    namespaces: dict[str, set[str]] = field(default_factory=dict)   # profile -> namespaces
    cluster: set[tuple[str, str, str | None]] = field(default_factory=set)
    namespaced: set[tuple[str, str]] = field(default_factory=set)

    def add_objects(self, profile: str, objs: list[dict]) -> None:
        names = self.namespaces.setdefault(profile, set())
        for o in objs:
            gk = (api_group(o["apiVersion"]), o["kind"])
            ns = o["metadata"].get("namespace")
            if ns:
                names.add(ns)
                self.namespaced.add(gk)
            else:
                self.cluster.add((*gk, o["metadata"]["name"]))

    def add_install(self, profile: str, install: versions.InstallScope) -> None:
        self.namespaces.setdefault(profile, set()).update(install.namespaces)
        self.cluster.update(install.cluster_resources)
        self.namespaced.update(install.namespaced_kinds)

    def widen(self, allow) -> None:
        for names in self.namespaces.values():
            names.update(allow.namespaces)
        self.cluster.update((r.group, r.kind, r.name) for r in allow.cluster_resources)
        self.namespaced.update((r.group, r.kind) for r in allow.namespaced_kinds)

    def destinations(self, clusters: dict[str, Destination]) -> tuple[Destination, ...]:
        return tuple(Destination(clusters[p].server, clusters[p].name, ns)
                     for p in sorted(self.namespaces) for ns in sorted(self.namespaces[p]))

    def cluster_kinds(self) -> tuple[tuple[str, str, str | None], ...]:
        # A name-less entry (from `allow`) covers every name of its kind.
        wide = {(g, k) for g, k, n in self.cluster if n is None}
        return tuple(sorted((x for x in self.cluster if x[2] is None or x[:2] not in wide),
                            key=lambda x: (x[0], x[1], x[2] or "")))


def overlay_namespace(objs: list[dict], fallback: str) -> str:
    """The Application's destination namespace: Argo CD checks it against the project's
    destinations, so it is one the overlay uses (every object names its own namespace)."""
    return min((o["metadata"]["namespace"] for o in objs if o["metadata"].get("namespace")), default=fallback)


def build(app, spec, tree: dict[str, str], header: str, emit,
          emitted: dict[str, list[dict]] | None = None) -> None:
    """Add argocd/ to the tree (nothing when the spec has no gitops block).
    `emit(tree, directory, objects, header, extra_resources)` writes one directory;
    `emitted` maps directories already emitted to their objects (else parsed from the tree)."""
    s = settings(spec)
    if s is None:
        return
    api = versions.release("argocd", versions.default("argocd"))["api"]
    labels = {"app.kubernetes.io/part-of": spec.name, "app.kubernetes.io/managed-by": "ml-platform-generator"}
    workloads_project, installs_project, bootstrap_project = s.project, f"{s.project}-controllers", f"{s.project}-bootstrap"
    base = _objects(tree, "base", emitted)

    apps: list[Application] = []
    overlays, installs = Scope(), Scope()
    for profile, dest in s.clusters.items():
        objs = base + _objects(tree, f"overlays/{profile}", emitted)
        overlays.add_objects(profile, objs)
        for ctl in controller_dirs(tree, profile):
            install = versions.install_scope(ctl)
            installs.add_install(profile, install)
            apps.append(Application(
                name=f"{s.project}-{profile}-{ctl}", namespace=s.namespace, project=installs_project,
                repo_url=s.repo_url, revision=s.revision, path=f"controllers/{profile}/{ctl}",
                destination=Destination(dest.server, dest.name, install.namespaces[0]),
                wave=CONTROLLER_WAVES.get(ctl, APP_WAVE_OTHER_CONTROLLERS),
                # Pruning an install would delete its CRDs and with them every queue and job.
                prune=False,
                # Server-side apply: the big CRDs overflow the last-applied annotation.
                sync_options=("ServerSideApply=true", "RespectIgnoreDifferences=true"),
                ignore=INSTALL_IGNORES,
                # Compare only the fields Argo CD applied: controllers rewrite parts of their own
                # install (certificates, defaults), and a drifting install would hold the overlays back.
                compare_options=("ServerSideDiff=true",),
                labels={**labels, "app.kubernetes.io/component": "controller", PROFILE_LABEL: profile},
            ))
        apps.append(Application(
            name=f"{s.project}-{profile}", namespace=s.namespace, project=workloads_project,
            repo_url=s.repo_url, revision=s.revision, path=f"overlays/{profile}",
            destination=Destination(dest.server, dest.name, overlay_namespace(objs, spec.namespaces[0].name)),
            wave=APP_WAVE_MANAGER_OVERLAYS if spec.manager_group(profile) else APP_WAVE_OVERLAYS,
            prune=True,
            sync_options=("RespectIgnoreDifferences=true", "FailOnSharedResource=true"),
            ignore=overlay_ignores(objs),
            labels={**labels, "app.kubernetes.io/component": "overlay", PROFILE_LABEL: profile},
        ))

    overlays.widen(spec.gitops.allow.overlays)
    installs.widen(spec.gitops.allow.controllers)
    projects = [
        AppProject(workloads_project, s.namespace,
                   "Overlays: the namespaces, cluster-scoped objects (by name) and kinds the overlays sync.",
                   (s.repo_url,), overlays.destinations(s.clusters),
                   cluster_kinds=overlays.cluster_kinds(), namespaced_kinds=tuple(sorted(overlays.namespaced)),
                   labels=labels, wave=APP_WAVE_PROJECTS),
    ]
    if installs.namespaces:
        projects.append(AppProject(
            installs_project, s.namespace,
            "Controller installs: what the pinned releases' manifests create (CRDs, webhooks, RBAC, namespaces).",
            (s.repo_url,), installs.destinations(s.clusters),
            cluster_kinds=installs.cluster_kinds(), namespaced_kinds=tuple(sorted(installs.namespaced)),
            labels=labels, wave=APP_WAVE_PROJECTS))
    chart = cdk.chart(app, "argocd/apps")
    for p in projects:
        cdk.custom(chart, p.body(api))
    for a in apps:
        cdk.custom(chart, a.body(api))
    emit(tree, "argocd/apps", cdk.manifests(chart), header, [])

    # Bootstrap: applied once with kubectl; the root Application then syncs argocd/apps.
    here = Destination(IN_CLUSTER, namespace=s.namespace)
    chart = cdk.chart(app, "argocd")
    cdk.custom(chart, AppProject(
        bootstrap_project, s.namespace,
        "The root Application: may only manage Applications and AppProjects in the Argo CD namespace.",
        (s.repo_url,), (here,), namespaced_kinds=(("argoproj.io", "Application"), ("argoproj.io", "AppProject")),
        labels=labels).body(api))
    root = Application(
        name=f"{s.project}-root", namespace=s.namespace, project=bootstrap_project,
        repo_url=s.repo_url, revision=s.revision, path="argocd/apps", destination=here,
        wave=0, prune=True, sync_options=(), labels={**labels, "app.kubernetes.io/component": "bootstrap"})
    cdk.custom(chart, root.body(api))
    emit(tree, "argocd", cdk.manifests(chart), header, [])
    _install(app, tree, s, header)


def _install(app, tree: dict[str, str], s: Settings, header: str) -> None:
    """argocd/install: the pinned Argo CD release in the chosen namespace, plus
    the Application health check (a ConfigMap patch)."""
    from . import core, k8s

    chart = cdk.chart(app, "argocd/install")
    cdk.typed(k8s.KubeConfigMap, chart, f"ConfigMap.{s.namespace}.argocd-cm",
                      metadata=core.meta("argocd-cm", s.namespace),
                      data={HEALTH_KEY: APPLICATION_HEALTH_LUA})
    (patch,) = cdk.manifests(chart)
    patch_file = "argocd-cm-patch.yaml"
    tree[f"argocd/install/{patch_file}"] = header + yamlio.dump(patch)
    release = versions.release("argocd", versions.default("argocd"))
    tree["argocd/install/kustomization.yaml"] = header + yamlio.dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [release["manifests"]],
        "patches": [{"path": patch_file, "target": {"version": "v1", "kind": "ConfigMap", "name": "argocd-cm"}}],
        # Upstream's RoleBindings name ServiceAccounts in `argocd`; move them along with the namespace.
        "transformers": [yamlio.dump({
            "apiVersion": "builtin", "kind": "NamespaceTransformer",
            "metadata": {"name": "argocd-namespace", "namespace": s.namespace},
            "setRoleBindingSubjects": "allServiceAccounts",
            "fieldSpecs": [{"path": "metadata/namespace", "create": True}],
        })],
    })
