"""The version pins of schemas/versions.yaml, loaded once."""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

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


_CACHE_FORMAT = "versions-1"


@lru_cache(maxsize=1)
def table() -> dict:
    """schemas/versions.yaml as parsed by the bounded reader. Every command reads it, and with
    its alias it takes the reader's slow path (about 12 ms): the parse is kept as JSON in the
    per-user cache under a digest of the file and of the reader (under 1 ms to read back);
    only a table that JSON holds exactly is kept."""
    text = paths.VERSIONS.read_text()
    key = hashlib.sha256("\0".join((_CACHE_FORMAT, Path(yamlio.__file__).read_text(), text)).encode()).hexdigest()
    cached = paths.cache_dir() / f"{_CACHE_FORMAT}-{key}.json"
    try:
        return json.loads(cached.read_text())
    except (OSError, ValueError):
        pass
    parsed = yamlio.load_strict(text)
    try:
        exact = json.loads(json.dumps(parsed)) == parsed
        if exact:   # best effort: a read-only cache only costs speed
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(parsed))
            os.replace(tmp, cached)   # readers never see a partial table
    except (OSError, TypeError, ValueError):
        pass
    return parsed


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
