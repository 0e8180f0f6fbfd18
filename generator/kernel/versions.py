"""The version pins of schemas/versions.yaml, loaded once."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from . import diskcache, paths, yamlio


@dataclass(frozen=True)
class KueueRelease:
    version: str
    api: str            # apiVersion of ClusterQueue, LocalQueue, ResourceFlavor, ...
    topology_api: str   # apiVersion of Topology (v1alpha1 before v0.14)
    config_api: str     # apiVersion of the manager Configuration
    manifests: str      # release install manifests URL
    metrics_bind_address: str
    frameworks: tuple[str, ...]           # the integrations the generator may enable
    default_frameworks: tuple[str, ...] = ("batch/job",)   # what Kueue fills in (defaults.go)
    defaults_empty_frameworks: bool = True  # False: only a left-out list is defaulted (v0.12)

    @property
    def is_v1beta2(self) -> bool:
        return self.api.endswith("/v1beta2")


_CACHE_FORMAT = "versions-1"


@lru_cache(maxsize=1)
def table() -> dict:
    """schemas/versions.yaml as parsed by the bounded reader. Every command reads it, and with
    its alias it takes the reader's slow path (about 12 ms): the parse is kept as JSON in the
    per-user cache under a digest of the file and of the reader (under 1 ms to read back)."""
    text = paths.VERSIONS.read_text()
    kept = _kept(text)
    if kept is not None and (cached := diskcache.read(kept)) is not None:
        try:
            return json.loads(cached)
        except ValueError:
            pass
    parsed = yamlio.load_strict(text)
    if kept is not None:
        _keep(kept, parsed)
    return parsed


def _kept(text: str) -> Path | None:
    """Where the parse of `text` is kept; None when the reader's source is not there to digest."""
    try:
        reader = (paths.PACKAGE / "kernel" / "yamlio.py").read_text()
    except OSError:
        return None
    return diskcache.entry(_CACHE_FORMAT, hashlib.sha256("\0".join((_CACHE_FORMAT, reader, text)).encode()).hexdigest())


def _keep(kept: Path, parsed: dict) -> None:
    """Only a table JSON holds exactly."""
    try:
        text = json.dumps(parsed)
    except (TypeError, ValueError):
        return
    if json.loads(text) == parsed:
        diskcache.keep(kept, text)


def kueue_release(version: str) -> KueueRelease:
    r = table()["kueue"]["releases"][version]
    return KueueRelease(version, r["api"], r["topologyApi"], r["configApi"], r["manifests"],
                        r["metricsBindAddress"], tuple(r["frameworks"]), tuple(r["defaultFrameworks"]),
                        r["frameworksDefaultedWhen"] == "empty")


def number(version: str) -> tuple[int, ...]:
    """'v0.17.4' -> (0, 17, 4), for ordering releases; () when the text is not dotted numbers."""
    try:
        return tuple(int(p) for p in version.lstrip("v").split("."))
    except ValueError:
        return ()


def kueue_downgrade(old: str, new: str) -> str | None:
    """Why the API server refuses Kueue `new`'s CRDs over `old`'s, or None. Once a release whose
    CRDs store v1beta2 has run, each Kueue CRD's status.storedVersions lists v1beta2, and a CRD
    whose spec.versions lacks a stored version is invalid ("must appear in spec.versions":
    apiextensions-apiserver pkg/apis/apiextensions/validation/validation.go
    ValidateCustomResourceDefinitionStoredVersions). The pinned v0.17.4 and v0.19.2 CRDs list
    v1beta1 and v1beta2 and store v1beta2; v0.12.3's list v1beta1 only (config/components/crd)."""
    if old not in table()["kueue"]["releases"] or new not in table()["kueue"]["releases"]:
        return None
    if kueue_release(old).is_v1beta2 and not kueue_release(new).is_v1beta2:
        return (f"Kueue {old} -> {new} is a downgrade the API server refuses: the Kueue CRDs' storedVersions "
                f"include v1beta2, which {new}'s CRDs do not serve. Keep {old}, or follow the documentation page "
                "'Kueue upgrades' and synth with --allow-kueue-downgrade")
    return None


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
