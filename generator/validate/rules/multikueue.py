"""MultiKueue: a manager cluster dispatches the Jobs and JobSets it admits to
worker clusters (Kueue docs at v0.12.3, v0.17.4, v0.19.2: concepts/multikueue.md,
tasks/manage/setup_multikueue.md).

The MK0xx rules here run on one input like every other rule: what the manager's
own objects get wrong (a kubeconfig in Git, an AdmissionCheck -> MultiKueueConfig
-> MultiKueueCluster chain that breaks, a ClusterQueue Kueue keeps inactive, a
Configuration field the release lacks). The MK1xx rules over a group of inputs are
in multikueue_group.py; the helpers below serve both."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ...kernel import kueue_api, versions, yamlio
from ...kernel.errors import Problem
from ..findings import ERROR, WARNING
from ..objects import Model, Obj, describe
from . import hit, rule
from .kueue import KUEUE, QUEUE_LABEL, _labelled, admission_checks, queued

# The Secret key Kueue reads a worker's kubeconfig from (apis/kueue/v1beta2/multikueue_types.go
# MultiKueueConfigSecretKey, v0.17.4; the same key in v0.12.3's v1beta1).
KUBECONFIG_KEY = "kubeconfig"


def controller_of(model: Model, check: str) -> str | None:
    ac = model.get(KUEUE, "AdmissionCheck", check)
    name = ac.spec.get("controllerName") if ac else None
    return name if isinstance(name, str) else None


def multikueue_checks(model: Model, cq: Obj) -> list[str]:
    """The MultiKueue admission checks a ClusterQueue names (those whose AdmissionCheck is known)."""
    return [name for _, name in admission_checks(cq) if controller_of(model, name) == kueue_api.MULTIKUEUE_CONTROLLER]


def config_of(model: Model, check: str) -> Obj | None:
    """The MultiKueueConfig a MultiKueue AdmissionCheck's parameters name, if known."""
    ac = model.get(KUEUE, "AdmissionCheck", check)
    params = ac.spec.get("parameters") if ac else None
    if not isinstance(params, dict) or params.get("kind") != "MultiKueueConfig" or not params.get("name"):
        return None
    return model.get(KUEUE, "MultiKueueConfig", params["name"])


def clusters_of(config: Obj) -> list[str]:
    clusters = config.spec.get("clusters")
    return [c for c in clusters if isinstance(c, str)] if isinstance(clusters, list) else []


def dispatching_queues(model: Model) -> list[tuple[Obj, Obj]]:
    """(ClusterQueue, MultiKueueConfig) for each ClusterQueue of the input whose first
    MultiKueue check resolves to a config (MK005 reports queues with several)."""
    out = []
    for cq in model.kueue("ClusterQueue"):
        checks = multikueue_checks(model, cq)
        config = config_of(model, checks[0]) if checks else None
        if config is not None:
            out.append((cq, config))
    return out


def dispatched(model: Model) -> list[tuple[Obj, Obj]]:
    """(object, ClusterQueue) of the queued objects of the input that MultiKueue dispatches."""
    return [(o, cq) for o, cq in queued(model) if multikueue_checks(model, cq)]


# ---------------------------------------------------------------- the manager's Kueue Configuration
@dataclass(frozen=True)
class KueueConfig:
    """Kueue's manager Configuration, as a ConfigMap kueue-manager-config or a Configuration object."""
    obj: Obj
    doc: dict
    path: tuple    # where the Configuration sits in obj (("data", key) in the ConfigMap)

    @property
    def where(self) -> str:
        what = " ".join(p for p in (self.obj.kind, self.obj.name) if p)
        return f"{what} ({self.obj.source})" if self.obj.source else what

    @property
    def frameworks(self) -> list[str]:
        integrations = self.doc.get("integrations")
        frameworks = integrations.get("frameworks") if isinstance(integrations, dict) else None
        return [f for f in frameworks or [] if isinstance(f, str)]


def kueue_config(objs: Iterable[Obj]) -> KueueConfig | None:
    """The first Kueue Configuration among objs; None when there is none, or it is not YAML (the
    controller would not start: a finding for the controller's own rollout, not for queues)."""
    for o in objs:
        if o.kind == "Configuration" and o.group.startswith("config.kueue.x-k8s.io"):
            return KueueConfig(o, o.body, ())
        data = o.body.get("data")
        if (o.group, o.kind) == ("", "ConfigMap") and o.name == kueue_api.CONFIG_MAP and isinstance(data, dict):
            text = data.get(kueue_api.CONFIG_KEY)
            try:
                doc = yamlio.load_strict(text) if isinstance(text, str) else None
            except Exception:   # noqa: BLE001  any parse failure: no configuration to read
                doc = None
            if isinstance(doc, dict):
                return KueueConfig(o, doc, ("data", kueue_api.CONFIG_KEY))
    return None


def _maybe_config(o: Obj) -> bool:
    """What kueue_config may read (its first test, in short): objects of a folder, filtered once."""
    return o.kind == "Configuration" or (o.kind == "ConfigMap" and o.name == kueue_api.CONFIG_MAP)


def dispatcher_hits(config: KueueConfig, kueue_version: str) -> Iterable[Problem]:
    mk = config.doc.get("multiKueue")
    if isinstance(mk, dict) and "dispatcherName" in mk and versions.number(kueue_version) and \
            versions.number(kueue_version) < (0, 13):
        yield hit(config.obj, config.path, f"multiKueue.dispatcherName is set, but Kueue {kueue_version} has no "
                  f"dispatcher choice (it nominates every worker at once); its strict config loader refuses the "
                  f"field and the controller does not start")


# ---------------------------------------------------------------- one input
@rule("MK001", ERROR, "a Secret in the manifests holds a kubeconfig (key `kubeconfig`): a cluster's credentials "
      "in Git",
      "create it out of band (`kubectl create secret generic NAME -n kueue-system --from-file=kubeconfig=FILE`, "
      "Kueue docs setup_multikueue) and reference it by name from the MultiKueueCluster")
def kubeconfig_in_git(model):
    for o in model.all("", "Secret"):
        key = inlined_kubeconfig(o)
        if key:
            users = [c.name for c in model.known(KUEUE, "MultiKueueCluster")
                     if _kubeconfig_source(c)[1].get("location") == o.name]
            used = f" (MultiKueueCluster {', '.join(users)} reads it)" if users else ""
            yield hit(o, (key, KUBECONFIG_KEY), f"Secret holds a kubeconfig in {key}{used}; values not shown")


def inlined_kubeconfig(o: Obj) -> str | None:
    """'data' or 'stringData' when a Secret carries a non-empty `kubeconfig` there."""
    for key in ("data", "stringData"):
        values = o.body.get(key)
        if isinstance(values, dict) and values.get(KUBECONFIG_KEY):
            return key
    return None


def _kubeconfig_source(mkc: Obj) -> tuple[tuple, dict]:
    """(path, kubeConfig) of a MultiKueueCluster: spec.clusterSource.kubeConfig (v1beta2) or
    spec.kubeConfig (v1beta1)."""
    source = mkc.spec.get("clusterSource")
    if isinstance(source, dict):
        kc = source.get("kubeConfig")
        return ("spec", "clusterSource", "kubeConfig"), kc if isinstance(kc, dict) else {}
    kc = mkc.spec.get("kubeConfig")
    return ("spec", "kubeConfig"), kc if isinstance(kc, dict) else {}


@rule("MK002", WARNING, "a MultiKueueCluster reads its kubeconfig from a file in the Kueue controller's pod "
      "(locationType: Path), not from a Secret",
      "reference a Secret in the Kueue namespace (locationType: Secret, key `kubeconfig`), or a ClusterProfile "
      "(clusterProfileRef, Kueue v0.15 and later); a file needs a volume patched into Kueue's Deployment")
def kubeconfig_by_path(model):
    for c in model.kueue("MultiKueueCluster"):
        path, kc = _kubeconfig_source(c)
        if kc.get("locationType") == "Path":
            yield hit(c, path + ("locationType",), f"kubeconfig read from path {kc.get('location')!r}")


@rule("MK003", ERROR, "a MultiKueue AdmissionCheck's parameters name no MultiKueueConfig",
      "set parameters {apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: ...} naming an existing config; "
      "until then Kueue keeps the check inactive (BadConfig) and its ClusterQueues admit nothing")
def check_names_config(model):
    for ac in model.kueue("AdmissionCheck"):
        if ac.spec.get("controllerName") != kueue_api.MULTIKUEUE_CONTROLLER:
            continue
        params = ac.spec.get("parameters")
        if not isinstance(params, dict):
            yield hit(ac, ("spec",), "no parameters: Kueue reports \"missing parameters reference\"")
        elif params.get("apiGroup") != KUEUE or params.get("kind") != "MultiKueueConfig":
            yield hit(ac, ("spec", "parameters"), f"parameters name a {params.get('kind')!r} of group "
                      f"{params.get('apiGroup')!r}: Kueue reports \"bad parameters reference\"")
        elif model.get(KUEUE, "MultiKueueConfig", params.get("name")) is None:
            yield hit(ac, ("spec", "parameters", "name"), f"no MultiKueueConfig {params.get('name')!r} "
                      f"(MultiKueueConfigs: {describe(model.names(KUEUE, 'MultiKueueConfig'))})",
                      missing=f"MultiKueueConfig {params.get('name')!r}")


@rule("MK004", ERROR, "a MultiKueueConfig lists a cluster that is no MultiKueueCluster",
      "create the MultiKueueCluster (cluster-scoped, named as listed) or drop it from spec.clusters; Kueue never "
      "dispatches to it (\"Missing clusters\")")
def config_clusters_exist(model):
    for config in model.kueue("MultiKueueConfig"):
        clusters = config.spec.get("clusters")
        for i, name in enumerate(clusters if isinstance(clusters, list) else []):
            if isinstance(name, str) and model.get(KUEUE, "MultiKueueCluster", name) is None:
                yield hit(config, ("spec", "clusters", i), f"no MultiKueueCluster {name!r} (MultiKueueClusters: "
                          f"{describe(model.names(KUEUE, 'MultiKueueCluster'))})",
                          missing=f"MultiKueueCluster {name!r}")


@rule("MK005", ERROR, "a ClusterQueue's MultiKueue admission check is one Kueue refuses: two MultiKueue checks, a "
      "MultiKueue check limited to some flavors (onFlavors), or beside a ProvisioningRequest check (v0.16 and later)",
      "give the manager's ClusterQueue exactly one MultiKueue check, for every flavor; put ProvisioningRequest "
      "checks on the workers' ClusterQueues. Kueue keeps such a ClusterQueue inactive")
def multikueue_check_shape(model):
    # Kueue's ClusterQueue soft validation (pkg/cache/scheduler/clusterqueue.go at v0.17.4, pkg/cache/
    # clusterqueue.go at v0.12.3): MultipleMultiKueueAdmissionChecks, MultiKueueAdmissionCheckAppliedPerFlavor,
    # and MultiKueueWithProvisioningRequest (added in v0.16.0).
    with_provisioning = versions.number(model.kueue_version) >= (0, 16)
    for cq in model.kueue("ClusterQueue"):
        checks = list(admission_checks(cq))
        mk = [(p, n) for p, n in checks if controller_of(model, n) == kueue_api.MULTIKUEUE_CONTROLLER]
        if not mk:
            continue
        if len(mk) > 1:
            yield hit(cq, mk[1][0], f"MultiKueue checks {', '.join(n for _, n in mk)}: Kueue reports \"Cannot use "
                      f"multiple MultiKueue AdmissionChecks on the same ClusterQueue\"")
        yield from _multikueue_per_flavor(model, cq)
        prov = [(p, n) for p, n in checks if controller_of(model, n) == kueue_api.PROVISIONING_CONTROLLER]
        if prov and with_provisioning:
            yield hit(cq, prov[0][0], f"ProvisioningRequest check {prov[0][1]!r} beside MultiKueue check "
                      f"{mk[0][1]!r}: Kueue {model.kueue_version} reports \"Cannot use both MultiKueue and "
                      f"ProvisioningRequest AdmissionChecks together\"")


def _multikueue_per_flavor(model, cq):
    """MultiKueue checks of the ClusterQueue's admissionChecksStrategy limited to some flavors (onFlavors)."""
    strategy = cq.spec.get("admissionChecksStrategy") or {}
    for i, entry in enumerate(strategy.get("admissionChecks") or []):
        name = entry.get("name") if isinstance(entry, dict) else None
        if isinstance(name, str) and entry.get("onFlavors") and controller_of(model, name) == kueue_api.MULTIKUEUE_CONTROLLER:
            yield hit(cq, ("spec", "admissionChecksStrategy", "admissionChecks", i, "onFlavors"),
                      f"MultiKueue check {entry.get('name')!r} limited to flavors {entry['onFlavors']}: Kueue "
                      f"reports \"Cannot specify MultiKueue AdmissionCheck per flavor\"")


@rule("MK006", ERROR, "the Kueue Configuration sets multiKueue.dispatcherName on a release without dispatchers "
      "(before v0.13), whose strict config loader refuses it",
      "drop multiKueue.dispatcherName, or pin Kueue v0.13 or later")
def dispatcher_needs_release(model):
    for o in model.objects:
        config = kueue_config([o])
        if config is not None:
            yield from dispatcher_hits(config, model.kueue_version)


# ---------------------------------------------------------------- kinds the Configuration leaves unmanaged
@rule("KQ030", WARNING, "an object carries the queue label, but the cluster's Kueue Configuration does not enable "
      "the integration that manages its kind: Kueue ignores it, so it starts at once, outside any quota",
      "enable the integration in the Configuration's integrations.frameworks (in a platform repository: add it to "
      "kueue.integrations in the spec, or leave kueue.integrations out for Kueue's default plus what the platform "
      "uses), or submit the work as a kind that is managed")
def integration_enabled(model):
    # Checked only where the Configuration is known: in the input, in --context, or beside an
    # overlay (controllers/NAME/kueue, as synth writes it). Defaulting as the release's
    # apis/config defaults.go does (kueue_api.enabled_integrations).
    config = kueue_config(model.objects) or kueue_config(model.context_where("kueue config", _maybe_config))
    if config is None or model.kueue_version not in versions.known("kueue"):
        return
    enabled = kueue_api.enabled_integrations(config.doc, versions.kueue_release(model.kueue_version))
    sent = {id(o) for o, _ in dispatched(model)}   # MK104 reports those, as errors
    for o, path, _ in _labelled(model, QUEUE_LABEL):
        if id(o) in sent:
            continue
        group, kind = ("batch", "Job") if (o.group, o.kind) == ("batch", "CronJob") else (o.group, o.kind)
        missing = kueue_api.unmanaged(group, kind, enabled)
        if missing:
            yield hit(o, path, f"{o.kind} carries the queue label, but the Kueue Configuration ({config.where}) "
                               f"does not enable {', '.join(missing)}: Kueue ignores it and it starts outside any "
                               f"quota (enabled: {', '.join(enabled) or 'none'})")
