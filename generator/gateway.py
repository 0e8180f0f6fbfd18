"""Typed builders for the serving front door of the TPU profiles: a Gateway,
an HTTPRoute to an InferencePool, the InferencePool, and GKE's HealthCheckPolicy
and GCPBackendPolicy on the pool; plus a lint that the pool, the route, the
policies and the pods agree (selector, ports, references).

API versions come from schemas/versions.yaml. The route's backendRef group
and kind are derived from the InferencePool apiVersion emitted, so they
cannot drift apart (v1alpha2 pools lived in inference.networking.x-k8s.io)."""
from __future__ import annotations

from dataclasses import dataclass

from . import versions

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


# ---------------------------------------------------------------- lint

def _pod_templates(objs: list[dict]):
    """(namespace, what, labels the pods get, ports they serve) of each LWS pod template;
    LWS adds the worker index label: "0" on the leader, 1.. on workers."""
    for o in objs:
        if o["kind"] != "LeaderWorkerSet":
            continue
        ns, lwt = o["metadata"].get("namespace"), o["spec"]["leaderWorkerTemplate"]
        templates = []
        if "leaderTemplate" in lwt:
            templates.append(("leader", lwt["leaderTemplate"], "0"))
            if lwt.get("size", 1) > 1:
                templates.append(("worker", lwt["workerTemplate"], "1"))
        else:
            templates.append(("worker", lwt["workerTemplate"], "0"))
        for role, t, index in templates:
            labels = {**t.get("metadata", {}).get("labels", {}), LWS_WORKER_INDEX: index}
            pod = t.get("spec", {})
            serving = [c for c in pod.get("containers", [])]
            serving += [c for c in pod.get("initContainers", []) if c.get("restartPolicy") == "Always"]
            ports = {p["containerPort"] for c in serving for p in c.get("ports", [])}
            yield ns, f"LeaderWorkerSet/{o['metadata']['name']} {role}", labels, ports


def lint(objs: list[dict]) -> list[str]:
    out = []
    pools = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objs if o["kind"] == POOL_KIND}
    gateways = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs if o["kind"] == "Gateway"}
    pods = list(_pod_templates(objs))
    for (ns, name), pool in sorted(pools.items()):
        spec = pool["spec"]
        selector = spec["selector"]["matchLabels"]
        ports = {p["number"] for p in spec["targetPorts"]}
        matched = [(what, served) for pns, what, labels, served in pods
                   if pns == ns and all(labels.get(k) == v for k, v in selector.items())]
        if not matched:
            out.append(f"InferencePool/{name}: selector {selector} matches no pod template")
        for what, served in matched:
            if not ports <= served:
                out.append(f"InferencePool/{name}: selector {selector} matches {what}, which does not "
                           f"serve target port(s) {sorted(ports - served)}")
        if "endpointPickerRef" not in spec:
            out.append(f"InferencePool/{name}: no endpointPickerRef (Inference Extension v1.5.0 requires it)")
    group = pool_group()
    for o in objs:
        ns, name = o["metadata"].get("namespace"), f"{o['kind']}/{o['metadata']['name']}"
        if o["kind"] == "HTTPRoute":
            for ref in o["spec"].get("parentRefs", []):
                if ref.get("kind", "Gateway") == "Gateway" and (ref.get("namespace", ns), ref["name"]) not in gateways:
                    out.append(f"{name}: parent Gateway {ref['name']!r} is not generated")
            for rule in o["spec"].get("rules", []):
                for ref in rule.get("backendRefs", []):
                    if ref.get("kind") != POOL_KIND:
                        continue
                    if ref.get("group") != group:
                        out.append(f"{name}: backendRef group {ref.get('group')!r} is not the InferencePool "
                                   f"API group {group!r} that is generated")
                    if (ref.get("namespace", ns), ref["name"]) not in pools:
                        out.append(f"{name}: backendRef InferencePool {ref['name']!r} is not generated")
        if o["kind"] in ("HealthCheckPolicy", "GCPBackendPolicy"):
            ref = o["spec"]["targetRef"]
            pool = pools.get((ref.get("namespace", ns), ref["name"])) if ref["kind"] == POOL_KIND else None
            if pool is None or ref["group"] != group:
                out.append(f"{name}: targetRef {ref} is not a generated InferencePool")
            elif o["kind"] == "HealthCheckPolicy":
                hc = o["spec"]["default"]["config"].get("httpHealthCheck", {})
                targets = {p["number"] for p in pool["spec"]["targetPorts"]}
                if hc.get("port") not in targets:
                    out.append(f"{name}: health checks port {hc.get('port')}, the pool serves {sorted(targets)}")
    return out
