"""Typed builders for the serving front door of the TPU profiles: a Gateway,
an HTTPRoute to an InferencePool, the InferencePool, and GKE's HealthCheckPolicy
and GCPBackendPolicy on the pool. That they agree (selector, ports,
references) is checked by the validator's rules (GW*, IP*).

API versions come from schemas/versions.yaml. The route's backendRef group
and kind are derived from the InferencePool apiVersion emitted, so they
cannot drift apart (v1alpha2 pools lived in inference.networking.x-k8s.io)."""
from __future__ import annotations

from dataclasses import dataclass

from ..kernel import versions

POOL_KIND = "InferencePool"
LWS_WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"   # LWS sets it on every pod; the leader is "0"


def api(project: str) -> str:
    return versions.table()[project]["api"]


def pool_group() -> str:
    return api("inferencePool").rpartition("/")[0]


@dataclass(frozen=True)
class EndpointPicker:
    service: str
    port: int
    failure_mode: str


def gateway(name: str, namespace: str, class_name: str, port: int) -> dict:
    return _obj(api("gatewayApi"), "Gateway", name, namespace, spec={
        "gatewayClassName": class_name,
        # Routes from this namespace only: the pool and its route live beside the Gateway.
        "listeners": [{"name": "default", "port": port, "protocol": "HTTP",
                       "allowedRoutes": {"namespaces": {"from": "Same"}}}],
    })


def http_route(name: str, namespace: str, gateway_name: str, pool: str) -> dict:
    # No `timeouts`: llm-d's gke-l7-rilb overlay removes the route's timeouts;
    # on GKE the backend timeout is GCPBackendPolicy's timeoutSec.
    return _obj(api("gatewayApi"), "HTTPRoute", name, namespace, spec={
        "parentRefs": [{"name": gateway_name}],
        "rules": [{
            "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
            "backendRefs": [{"group": pool_group(), "kind": POOL_KIND, "name": pool}],
        }],
    })


def inference_pool(name: str, namespace: str, selector: dict, target_port: int, epp: EndpointPicker) -> dict:
    return _obj(api("inferencePool"), POOL_KIND, name, namespace, spec={
        "selector": {"matchLabels": dict(selector)},
        "targetPorts": [{"number": target_port}],
        # Required by Inference Extension v1.5.0, optional from v1.6.0; always
        # written so the pool works with either.
        "endpointPickerRef": {"name": epp.service, "port": {"number": epp.port},
                              "failureMode": epp.failure_mode},
    })


def _pool_ref(pool: str) -> dict:
    return {"group": pool_group(), "kind": POOL_KIND, "name": pool}


def health_check_policy(name: str, namespace: str, pool: str, port: int, path: str) -> dict:
    return _obj(api("gkeGatewayPolicies"), "HealthCheckPolicy", name, namespace, spec={
        "targetRef": _pool_ref(pool),
        "default": {"config": {"type": "HTTP", "httpHealthCheck": {"requestPath": path, "port": port}}},
    })


def backend_policy(name: str, namespace: str, pool: str, timeout_sec: int, logging: bool) -> dict:
    default: dict = {"timeoutSec": timeout_sec}
    if logging:
        default["logging"] = {"enabled": True}
    return _obj(api("gkeGatewayPolicies"), "GCPBackendPolicy", name, namespace, spec={
        "targetRef": _pool_ref(pool), "default": default,
    })


def _obj(api_version: str, kind: str, name: str, namespace: str, spec: dict) -> dict:
    return {"apiVersion": api_version, "kind": kind,
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}

