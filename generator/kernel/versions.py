"""The version pins of schemas/versions.yaml, loaded once."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from . import paths, yamlio


@dataclass(frozen=True)
class KueueRelease:
    version: str
    api: str            # apiVersion of ClusterQueue, LocalQueue, ResourceFlavor, ...
    topology_api: str   # apiVersion of Topology (v1alpha1 before v0.14)
    config_api: str     # apiVersion of the manager Configuration
    manifests: str      # release install manifests URL
    metrics_bind_address: str
    frameworks: tuple[str, ...]

    @property
    def is_v1beta2(self) -> bool:
        return self.api.endswith("/v1beta2")


@lru_cache(maxsize=1)
def table() -> dict:
    return yamlio.load_strict(paths.VERSIONS.read_text())


def kueue_release(version: str) -> KueueRelease:
    r = table()["kueue"]["releases"][version]
    return KueueRelease(version, r["api"], r["topologyApi"], r["configApi"], r["manifests"],
                        r["metricsBindAddress"], tuple(r["frameworks"]))


def known(project: str) -> list[str]:
    return sorted(table()[project]["releases"])


def default(project: str) -> str:
    return table()[project]["default"]


def release(project: str, version: str) -> dict:
    return table()[project]["releases"][version]


@dataclass(frozen=True)
class InstallScope:
    """What a controller's release manifests create (schemas/versions.yaml `install`): the
    Argo CD project that syncs the install is allowed exactly this."""
    namespaces: tuple[str, ...]                            # the first is the controller's own
    cluster_resources: tuple[tuple[str, str, str], ...]    # (group, kind, name glob)
    namespaced_kinds: tuple[tuple[str, str], ...]          # (group, kind)


def install_scope(project: str) -> InstallScope:
    s = table()[project]["install"]
    return InstallScope(tuple(s["namespaces"]),
                        tuple((r["group"], r["kind"], r["name"]) for r in s["clusterResources"]),
                        tuple((r["group"], r["kind"]) for r in s["namespacedKinds"]))
