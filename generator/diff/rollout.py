"""What it takes to roll out a change the API server refuses as an update:
the object must be deleted and created again. Argo CD does that on sync for
objects with the sync options `Force=true,Replace=true` (argo-cd
test/e2e/sync_options_test.go TestSyncWithForceReplace: a change to an
immutable field syncs once both are set); generator/builders/gitops.py sets them on
Jobs and JobSets. For anything else the sync fails with "field is immutable"
until someone deletes the object."""
from __future__ import annotations

from dataclasses import dataclass

from ..kernel import demand, supply
from ..kernel.argo import REPLACE_OPTIONS, SYNC_OPTIONS
from .objects import Key, Located, Unit, label, sort_key

# What deleting and recreating an object of a kind does, in the reviewer's terms.
EFFECTS = {
    "Job": "its running pods stop and the Job starts over; Kueue queues it again",
    "JobSet": "its running pods stop and the JobSet starts over; Kueue queues it again",
    "Deployment": "all its pods are deleted at once and recreated (no rolling update)",
    "ReplicaSet": "all its pods are deleted at once and recreated",
    "DaemonSet": "its pod on every node is deleted and recreated",
    "StatefulSet": ("its pods are deleted and recreated; to keep them, delete it by hand with "
                    "`kubectl delete statefulset --cascade=orphan` before the sync, and the new one adopts them"),
    "PriorityClass": ("no pod restarts: running pods keep the priority value they were created with; "
                      "pods created later get the new one"),
    "WorkloadPriorityClass": "no pod restarts; Workloads created later get the new value",
    "Service": "its cluster IP changes: clients holding the old address must reconnect",
    "ConfigMap": "pods that use it keep the old content until they restart",
    "Secret": "pods that use it keep the old content until they restart",
    "PersistentVolumeClaim": "deleting a bound claim can delete its volume and data (StorageClass reclaimPolicy)",
    "LocalQueue": "while it is gone, workloads queued through it are not admitted",
    "ResourceFlavor": "while it is gone, ClusterQueues that list it are inactive and admit nothing",
    "Topology": "while it is gone, ResourceFlavors that name it cannot be used",
    "AdmissionCheck": "while it is gone, ClusterQueues that name it are inactive and admit nothing",
}


@dataclass(frozen=True)
class Rollout:
    effect: str
    affects: tuple[str, ...]      # the object itself when it runs pods, else the objects that depend on it
    restarts: bool                # the object runs pods, which the recreation restarts
    argocd: bool | None           # True: the sync options replace it; False: they do not; None: no Argo CD here
    command: str                  # by hand, without Argo CD


def _pod_specs(obj: dict):
    for ps in demand.podsets(obj):
        yield ps.spec


def _uses_config(obj: dict, kind: str, name: str) -> bool:
    ref = {"ConfigMap": ("configMap", "configMapRef", "configMapKeyRef"),
           "Secret": ("secret", "secretRef", "secretKeyRef")}[kind]
    name_key = "secretName" if kind == "Secret" else "name"
    return any(_volumes_use(spec, ref[0], name_key, name) or _containers_use(spec, ref[1], ref[2], name)
               for spec in _pod_specs(obj))


def _volumes_use(spec: dict, source: str, name_key: str, name: str) -> bool:
    """A volume of the pod is the object (a Secret volume names it `secretName`, a ConfigMap one `name`)."""
    return any((v.get(source) or {}).get(name_key) == name for v in spec.get("volumes") or [])


def _containers_use(spec: dict, env_from_key: str, env_key: str, name: str) -> bool:
    """A container or init container takes the object whole (envFrom) or one key of it (env valueFrom)."""
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if any((e.get(env_from_key) or {}).get("name") == name for e in c.get("envFrom") or []):
            return True
        if any(((e.get("valueFrom") or {}).get(env_key) or {}).get("name") == name for e in c.get("env") or []):
            return True
    return False


def _cluster_queue_names(obj: dict, field: str) -> set[str]:
    spec = obj.get("spec") or {}
    if field == "flavors":
        return set(supply.flavor_names(spec))
    checks = set(spec.get("admissionChecks") or [])
    checks |= {c.get("name") for c in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []}
    return checks


def _depends(key: Key, other: Key, obj: dict) -> bool:
    """Does `obj` (at `other`) name or use the object at `key`?"""
    kind, ns, name = key[1], key[2], key[3]
    if kind in ("PriorityClass", "WorkloadPriorityClass", "LocalQueue") and demand.is_workload(obj):
        d = demand.of(obj)
        return {"PriorityClass": d.priority_class_name == name,
                "WorkloadPriorityClass": d.workload_priority_class == name,
                "LocalQueue": other[2] == ns and d.queue == name}[kind]
    if kind in ("ConfigMap", "Secret") and other[2] == ns and demand.is_workload(obj):
        return _uses_config(obj, kind, name)
    if kind == "ResourceFlavor" and other[1] == "ClusterQueue":
        return name in _cluster_queue_names(obj, "flavors")
    if kind == "AdmissionCheck" and other[1] == "ClusterQueue":
        return name in _cluster_queue_names(obj, "checks")
    if kind == "Topology" and other[1] == "ResourceFlavor":
        return (obj.get("spec") or {}).get("topologyName") == name
    return False


def affected(key: Key, unit: Unit) -> tuple[str, ...]:
    """The object itself when it runs pods, else the objects that depend on it."""
    if key in unit and demand.is_workload(unit[key].obj):
        return (label(key),)
    return tuple(label(k) for k in sorted(unit, key=sort_key) if k != key and _depends(key, k, unit[k].obj))


def _options(text) -> set[str]:
    return {o.strip() for o in str(text or "").split(",") if o.strip()}


def replaced_by_argocd(loc: Located, app_options: list[set[str]] | None) -> bool | None:
    """Whether Argo CD deletes and recreates the object on sync: its own sync-options
    annotation, or the options of every Application that syncs it. None without Argo CD."""
    if app_options is None:
        return None
    wanted = set(REPLACE_OPTIONS)
    own = _options(((loc.obj.get("metadata") or {}).get("annotations") or {}).get(SYNC_OPTIONS))
    return wanted <= own or bool(app_options) and all(wanted <= o for o in app_options)


def command(key: Key, loc: Located) -> str:
    ns = f" -n {key[2]}" if key[2] else ""
    return f"kubectl replace --force -f {loc.file}" if loc.file else f"kubectl delete {key[1].lower()} {key[3]}{ns}"


def rollout(key: Key, new: Located, unit: Unit, app_options: list[set[str]] | None) -> Rollout:
    runs_pods = demand.is_workload(new.obj)
    return Rollout(EFFECTS.get(key[1], "it is deleted and created again"), affected(key, unit), runs_pods,
                   replaced_by_argocd(new, app_options), command(key, new))
