"""Controller installs per profile, kept out of the overlays so that overlay
builds stay offline: each is a kustomization over the pinned upstream release
manifests (fetched by kustomize when applied) plus generated patches."""
from __future__ import annotations

from typing import Any

from ..kernel import gke, kueue_api, versions, yamlio
from ..model import Profile
from . import cdk, core, k8s

KUEUE_NAMESPACE = "kueue-system"
KUEUE_CONFIGMAP = kueue_api.CONFIG_MAP
KUEUE_CONFIG_KEY = kueue_api.CONFIG_KEY


def kueue_configuration(profile: Profile, frameworks: list[str], fair_sharing=None, dispatcher: str | None = None,
                        profile_wait=None) -> dict:
    """The manager Configuration: upstream defaults for the pinned release, with the
    integrations `frameworks` (Platform.integrations_enabled: Kueue's default and what the
    platform uses, always written out, since Kueue defaults only a left-out list) and system
    namespaces left alone. The metrics address stays the one the upstream metrics Service
    targets (the tutorial's :8080 breaks scraping)."""
    release = profile.kueue
    unsupported = set(frameworks) - set(release.frameworks)
    if unsupported:
        raise ValueError(f"Kueue {release.version} has no integration for {sorted(unsupported)}")
    config = {
        "apiVersion": release.config_api,
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": release.metrics_bind_address},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "controller": {"groupKindConcurrency": {
            "Job.batch": 5, "Pod": 5, "Workload.kueue.x-k8s.io": 5, "LocalQueue.kueue.x-k8s.io": 1,
            "Cohort.kueue.x-k8s.io": 1, "ClusterQueue.kueue.x-k8s.io": 1, "ResourceFlavor.kueue.x-k8s.io": 1,
        }},
        "clientConnection": {"qps": 50, "burst": 100},
        "managedJobsNamespaceSelector": {"matchExpressions": [{
            "key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": list(gke.SYSTEM_NAMESPACES),
        }]},
        "integrations": {"frameworks": list(frameworks)},
    }
    if dispatcher is not None and release.is_v1beta2:
        # A MultiKueue manager: how it nominates workers (Configuration multiKueue.dispatcherName,
        # from Kueue v0.13; v0.12 always nominates every worker, and its strict config loader
        # refuses the field).
        config["multiKueue"] = {"dispatcherName": dispatcher}
    if profile_wait is not None:
        # apis/config v1beta1 WaitForPodsReady has `enable`; v1beta2 (Kueue v0.15+) dropped it
        # and requires `timeout` (configuration_types.go at v0.12.3 and v0.17.4).
        config["waitForPodsReady"] = profile_wait.body(not release.is_v1beta2)
    if fair_sharing is not None:
        # v1beta1 (Kueue v0.12) switches it on with `enable`; from v1beta2 the block's
        # presence does (apis/config configuration_types.go; cmd/kueue/main.go).
        block = {"preemptionStrategies": list(fair_sharing.preemption_strategies)}
        config["fairSharing"] = block if release.is_v1beta2 else {"enable": True, **block}
    return config


def kueue_config_map(chart, profile: Profile, frameworks: list[str], fair_sharing=None,
                     dispatcher: str | None = None, wait_for_pods_ready=None) -> None:
    cdk.typed(k8s.KubeConfigMap,
        chart, f"ConfigMap.{KUEUE_NAMESPACE}.{KUEUE_CONFIGMAP}",
        metadata=core.meta(KUEUE_CONFIGMAP, KUEUE_NAMESPACE),
        data={KUEUE_CONFIG_KEY: yamlio.dump(kueue_configuration(profile, frameworks, fair_sharing, dispatcher,
                                                                  wait_for_pods_ready))},
    )


def kustomization(resources: list[str], patches: list[dict] | None = None) -> dict:
    out: dict[str, Any] = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": resources}
    if patches:
        out["patches"] = patches
    return out


def kueue_kustomization(profile: Profile, patch_file: str) -> dict:
    return kustomization(
        [profile.kueue.manifests],
        [{"path": patch_file, "target": {"version": "v1", "kind": "ConfigMap", "name": KUEUE_CONFIGMAP}}],
    )


def release_kustomization(project: str, version: str) -> dict:
    return kustomization([versions.release(project, version)["manifests"]])
