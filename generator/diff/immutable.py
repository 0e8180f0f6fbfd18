"""Changes the API server refuses as updates: the documented immutable fields
of core kinds, and the webhooks of the controllers this project installs.

Each guard names the upstream code that enforces it (Kubernetes
k8s.io/kubernetes at the release this project pins, or the controller's
webhook). CRD fields guarded by transition rules are in transitions.py."""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from .field_changes import MISSING
from .objects import Key

K8S_CORE = "kubernetes pkg/apis/core/validation/validation.go"
K8S_APPS = "kubernetes pkg/apis/apps/validation/validation.go"
K8S_BATCH = "kubernetes pkg/apis/batch/validation/validation.go ValidateJobSpecUpdate"


@dataclass(frozen=True)
class Immutable:
    """One refused change: the field, both values, why, and who says so."""
    key: Key
    path: str
    old: object
    new: object
    why: str
    source: str
    certain: bool = True     # False: a rule that could not be evaluated here; the update may be refused
    note: str = ""


@dataclass(frozen=True)
class Guard:
    fields: tuple[str, ...]                  # dotted paths, or ("spec",) with `but`
    why: str
    source: str
    but: tuple[str, ...] = ()                # dotted paths under the field that may change
    when: Callable[[dict, dict], bool] | None = None


def _get(obj, path: str):
    for part in path.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return MISSING
        obj = obj[part]
    return obj


def _without(value, paths: tuple[str, ...]):
    """`value` (a mapping) with the dotted `paths` removed."""
    if not isinstance(value, dict):
        return value
    out = copy.deepcopy(value)
    for path in paths:
        *parents, last = path.split(".")
        node: dict | None = out
        for p in parents:
            node = node.get(p) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(last, None)
    return out


def _immutable_flag(old: dict, new: dict) -> bool:
    return old.get("immutable") is True


def _not_external_name(old: dict, new: dict) -> bool:
    # ValidateServiceUpdate: clusterIP is fixed for every type but ExternalName.
    return "ExternalName" not in (_get(old, "spec.type"), _get(new, "spec.type"))


def _completions_fixed(old: dict, new: dict) -> bool:
    # validateCompletions: an Indexed Job may change completions in tandem with
    # parallelism (ElasticIndexedJob: beta and on by default from 1.27, GA in 1.31).
    spec = new.get("spec") or {}
    return not (spec.get("completionMode") == "Indexed" and spec.get("completions") == spec.get("parallelism"))


_JOB = "Job fields fixed at creation"
_SELECTOR = "the selector is fixed at creation"
GUARDS: dict[tuple[str, str], tuple[Guard, ...]] = {
    ("scheduling.k8s.io", "PriorityClass"): (
        Guard(("value", "preemptionPolicy"), "a PriorityClass's value and preemptionPolicy are fixed at creation",
              "kubernetes pkg/apis/scheduling/validation/validation.go ValidatePriorityClassUpdate"),),
    ("batch", "Job"): (
        Guard(("spec.selector", "spec.template", "spec.completionMode", "spec.podFailurePolicy",
               "spec.backoffLimitPerIndex", "spec.managedBy", "spec.successPolicy"), _JOB, K8S_BATCH),
        Guard(("spec.completions",), _JOB, K8S_BATCH + " (validateCompletions)", when=_completions_fixed),
    ),
    ("apps", "Deployment"): (
        Guard(("spec.selector",), _SELECTOR, "kubernetes pkg/registry/apps/deployment/strategy.go ValidateUpdate"),),
    ("apps", "ReplicaSet"): (
        Guard(("spec.selector",), _SELECTOR, "kubernetes pkg/registry/apps/replicaset/strategy.go ValidateUpdate"),),
    ("apps", "DaemonSet"): (
        Guard(("spec.selector",), _SELECTOR, "kubernetes pkg/registry/apps/daemonset/strategy.go ValidateUpdate"),),
    ("apps", "StatefulSet"): (
        Guard(("spec",), "a StatefulSet may change only replicas, ordinals, template, updateStrategy, "
              "persistentVolumeClaimRetentionPolicy and minReadySeconds",
              K8S_APPS + " ValidateStatefulSetUpdate",
              but=("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                   "minReadySeconds")),),
    ("", "Service"): (
        Guard(("spec.clusterIP", "spec.clusterIPs"), "a Service's cluster IP is fixed once allocated",
              K8S_CORE + " ValidateServiceUpdate", when=_not_external_name),),
    ("", "PersistentVolumeClaim"): (
        Guard(("spec",), "a claim's spec is fixed after creation except resources.requests and "
              "volumeAttributesClassName", K8S_CORE + " ValidatePersistentVolumeClaimUpdate",
              but=("resources.requests", "volumeAttributesClassName")),),
    ("", "ConfigMap"): (
        Guard(("data", "binaryData", "immutable"), "the ConfigMap is `immutable: true`",
              K8S_CORE + " ValidateConfigMapUpdate", when=_immutable_flag),),
    ("", "Secret"): (
        Guard(("data", "stringData", "immutable"), "the Secret is `immutable: true`",
              K8S_CORE + " ValidateSecretUpdate", when=_immutable_flag),
        Guard(("type",), "a Secret's type is fixed at creation", K8S_CORE + " ValidateSecretUpdate"),
    ),
    ("rbac.authorization.k8s.io", "RoleBinding"): (
        Guard(("roleRef",), "roleRef is fixed at creation",
              "kubernetes pkg/apis/rbac/validation/validation.go ValidateRoleBindingUpdate"),),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): (
        Guard(("roleRef",), "roleRef is fixed at creation",
              "kubernetes pkg/apis/rbac/validation/validation.go ValidateClusterRoleBindingUpdate"),),
    # JobSet's validating webhook: replicatedJobs may not change (only some pod
    # template fields while the JobSet is suspended, for Kueue).
    ("jobset.x-k8s.io", "JobSet"): (
        Guard(("spec.replicatedJobs",), "a JobSet's replicatedJobs are fixed at creation (JobSet webhook)",
              "kubernetes-sigs/jobset pkg/webhooks/jobset_webhook.go ValidateUpdate (v0.11.1, v0.12.0)"),),
}

# Pod template fields a Job may change while it is suspended and has never
# started (validatePodTemplateUpdate, AllowMutableSchedulingDirectives): a Job
# Kueue has not admitted yet.
_SCHEDULING_DIRECTIVES = ("metadata.labels", "metadata.annotations", "spec.nodeSelector", "spec.tolerations",
                          "spec.schedulingGates", "spec.affinity.nodeAffinity")


def _job_note(path: str, old, new) -> str:
    if path == "spec.template" and _without(old, _SCHEDULING_DIRECTIVES) == _without(new, _SCHEDULING_DIRECTIVES):
        return ("only scheduling directives changed: allowed while the Job is suspended and never started "
                "(queued, not yet admitted by Kueue), refused once it runs")
    return ""


def _check(key: Key, guard: Guard, old: dict, new: dict) -> list[Immutable]:
    if guard.when is not None and not guard.when(old, new):
        return []
    out = []
    for path in guard.fields:
        a, b = _get(old, path), _get(new, path)
        if guard.but:
            a, b = _without(a, guard.but), _without(b, guard.but)
            fields = sorted(set(a if isinstance(a, dict) else {}) | set(b if isinstance(b, dict) else {}))
            out += [Immutable(key, f"{path}.{f}", _get(a, f), _get(b, f), guard.why, guard.source)
                    for f in fields if _get(a, f) != _get(b, f)]
        elif a != b:
            note = _job_note(path, a, b) if key[1] == "Job" else ""
            out.append(Immutable(key, path, a, b, guard.why, guard.source, note=note))
    return out


def core_violations(key: Key, old: dict, new: dict) -> list[Immutable]:
    """Every change from `old` to `new` that the API server (or an installed webhook) refuses."""
    return [v for guard in GUARDS.get((key[0], key[1]), ()) for v in _check(key, guard, old, new)]
