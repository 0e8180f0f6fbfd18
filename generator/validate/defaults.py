"""What the API server would store: the defaulting that happens before an
object is validated, applied before the validator's own checks, so that a
manifest is not faulted for what the server or a controller's webhook fills in.

In order, each with its source:

1. JSON, as kubectl sends it: YAML timestamps become strings, map keys become
   strings (kubectl converts YAML to JSON with sigs.k8s.io/yaml).
2. Nulls pruned: "null values for fields that either don't specify the nullable
   flag, or give it a false value, will be pruned before defaulting happens"
   (Kubernetes docs, Extend the Kubernetes API with CustomResourceDefinitions,
   "Defaulting and Nullable"); a built-in type decodes a JSON null to the unset
   Go value, so the same holds for core kinds.
3. Structural defaults: every `default` of the CRD's openAPIV3Schema, for fields
   that are absent (same page, "Defaulting").
4. Built-in defaulting the strict schemas would otherwise fault:
   RoleBinding / ClusterRoleBinding roleRef.apiGroup and subjects[].apiGroup
   (kubernetes pkg/apis/rbac/v1/defaults.go, SetDefaults_RoleBinding,
   SetDefaults_ClusterRoleBinding, SetDefaults_Subject).
5. Controllers' mutating webhooks at the pinned releases:
   JobSet v0.11.1 and v0.12.0, pkg/webhooks/jobset_webhook.go Default():
   successPolicy {operator: All}, startupPolicy {startupPolicyOrder: AnyOrder},
   each replicated Job's completionMode Indexed and its pods' restartPolicy
   OnFailure, network.enableDNSHostnames and publishNotReadyAddresses true,
   failurePolicy.rules[i].name "failurePolicyRule<i>", volumeClaimPolicies'
   retentionPolicy {whenDeleted: Delete}.
   Kueue v0.17.4 pkg/webhooks (clusterqueue_webhook.go, resourceflavor_webhook.go,
   cohort_webhook.go): its own objects' webhooks add only the resource-in-use
   finalizer; every other Kueue default is a CRD schema default (step 3).
   A webhook default is applied only where the pinned CRD has the field."""
from __future__ import annotations

import copy
import datetime
from typing import Any

RBAC = "rbac.authorization.k8s.io"
JOBSET = "jobset.x-k8s.io"
# JobSet's defaultRuleNameFmt (pkg/webhooks/jobset_webhook.go, v0.11.1 and v0.12.0).
JOBSET_RULE_NAME = "failurePolicyRule{}"


def normalize(value: Any) -> Any:
    """JSON types only, as kubectl would send the object."""
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else _key(k)): normalize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize(v) for v in value]
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):   # !!binary
        return value.decode("latin-1")
    return value


def _key(k: Any) -> str:
    if isinstance(k, bool):
        return "true" if k else "false"
    if k is None:
        return "null"
    return str(k)


def prune_nulls(value: Any, schema: dict | None = None) -> Any:
    """Drop map entries whose value is null, except fields the CRD marks nullable."""
    if isinstance(value, dict):
        props = (schema or {}).get("properties") or {}
        extra = (schema or {}).get("additionalProperties")
        out = {}
        for k, v in value.items():
            sub = props.get(k) if k in props else (extra if isinstance(extra, dict) else None)
            if v is None and not (sub or {}).get("nullable"):
                continue
            out[k] = prune_nulls(v, sub)
        return out
    if isinstance(value, list):
        items = (schema or {}).get("items")
        return [prune_nulls(v, items if isinstance(items, dict) else None) for v in value]
    return value


def structural_defaults(value: Any, schema: dict | None) -> None:
    """Fill absent fields that carry a schema `default`, in place, top down."""
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for k, sub in props.items():
            if k not in value and isinstance(sub, dict) and "default" in sub:
                value[k] = copy.deepcopy(sub["default"])
        for k, v in value.items():
            if k in props:
                structural_defaults(v, props[k])
            elif isinstance(schema.get("additionalProperties"), dict):
                structural_defaults(v, schema["additionalProperties"])
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for v in value:
            structural_defaults(v, schema["items"])


def _has(schema: dict | None, *path: str) -> bool:
    """Does the CRD schema have this field (a property path, `[]` for list items)?"""
    node = schema
    for part in path:
        if not isinstance(node, dict):
            return False
        node = node.get("items") if part == "[]" else (node.get("properties") or {}).get(part)
    return isinstance(node, dict)


def _rbac(body: dict) -> None:
    ref = body.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = RBAC
    for s in body.get("subjects") or []:
        if isinstance(s, dict) and not s.get("apiGroup"):
            if s.get("kind") == "ServiceAccount":
                s["apiGroup"] = ""
            elif s.get("kind") in ("User", "Group"):
                s["apiGroup"] = RBAC


def _setdefault(obj: dict, key: str, value: Any) -> Any:
    if not isinstance(obj.get(key), type(value)):
        if key not in obj:
            obj[key] = value
    return obj.get(key)


def _jobset(body: dict, schema: dict | None) -> None:
    spec = body.get("spec")
    if not isinstance(spec, dict):
        return
    if _has(schema, "spec", "successPolicy"):
        _setdefault(spec, "successPolicy", {"operator": "All"})
    if _has(schema, "spec", "startupPolicy"):
        _setdefault(spec, "startupPolicy", {"startupPolicyOrder": "AnyOrder"})
    _jobset_jobs(spec)
    if _has(schema, "spec", "network"):
        _jobset_network(spec, schema)
    policy = spec.get("failurePolicy")
    if isinstance(policy, dict):
        for i, r in enumerate(policy.get("rules") or []):
            if isinstance(r, dict) and not r.get("name"):
                r["name"] = JOBSET_RULE_NAME.format(i)
    if _has(schema, "spec", "volumeClaimPolicies", "[]", "retentionPolicy"):
        for p in spec.get("volumeClaimPolicies") or []:
            if isinstance(p, dict) and "retentionPolicy" not in p:
                p["retentionPolicy"] = {"whenDeleted": "Delete"}


def _jobset_jobs(spec: dict) -> None:
    """The defaults of each replicated Job's template: an Indexed Job whose pods restart on failure."""
    for rj in spec.get("replicatedJobs") or []:
        job = ((rj or {}).get("template") or {}).get("spec") if isinstance(rj, dict) else None
        if isinstance(job, dict):
            job.setdefault("completionMode", "Indexed")
            pod = (job.get("template") or {}).get("spec")
            if isinstance(pod, dict) and not pod.get("restartPolicy"):
                pod["restartPolicy"] = "OnFailure"


def _jobset_network(spec: dict, schema: dict | None) -> None:
    network = _setdefault(spec, "network", {})
    if isinstance(network, dict):
        for key in ("enableDNSHostnames", "publishNotReadyAddresses"):
            if _has(schema, "spec", "network", key):
                network.setdefault(key, True)


def apply(body: dict, crd_schema: dict | None) -> dict:
    """The object as the API server would store it (see the module docstring)."""
    body = prune_nulls(normalize(body), crd_schema)
    if crd_schema is not None:
        structural_defaults(body, crd_schema)
    api = body.get("apiVersion")
    group = api.rpartition("/")[0] if isinstance(api, str) else ""
    kind = body.get("kind")
    if group == RBAC and kind in ("RoleBinding", "ClusterRoleBinding"):
        _rbac(body)
    elif group == JOBSET and kind == "JobSet":
        _jobset(body, crd_schema)
    return body
