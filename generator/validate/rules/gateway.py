"""Gateway API routes: every backendRef resolves, across namespaces only with a ReferenceGrant."""
from __future__ import annotations

from ..findings import ERROR
from . import hit, rule

GATEWAY = "gateway.networking.k8s.io"
ROUTES = ("HTTPRoute", "GRPCRoute")
POOL_GROUPS = ("inference.networking.k8s.io", "inference.networking.x-k8s.io")


def backend_refs(model):
    """(route, path, ref, group, kind, namespace) for every rules[].backendRefs[] of every route."""
    for kind in ROUTES:
        for route in model.all(GATEWAY, kind):
            for i, r in enumerate(route.spec.get("rules") or []):
                for j, ref in enumerate((r or {}).get("backendRefs") or []):
                    if isinstance(ref, dict):
                        yield (route, ("spec", "rules", i, "backendRefs", j), ref, ref.get("group", ""),
                               ref.get("kind", "Service"), ref.get("namespace") or route.namespace)


@rule("GW001", ERROR, "an HTTPRoute/GRPCRoute backendRef names no Service (with that port) or InferencePool",
      "fix the backendRef name, namespace and port, or create the backend")
def backends_resolve(model):
    for route, path, ref, group, kind, ns in backend_refs(model):
        name = ref.get("name")
        if group == "" and kind == "Service":
            svc = model.get("", "Service", name, ns)
            if svc is None:
                yield hit(route, path, f"no Service {name!r} in namespace {ns or '(unset)'!r}",
                          missing=f"Service {name!r} in namespace {ns!r}")
            elif "port" not in ref:
                yield hit(route, path, f"backendRef to Service {name!r} has no port (required for Services)")
            elif ref["port"] not in [p.get("port") for p in svc.spec.get("ports") or [] if isinstance(p, dict)]:
                yield hit(route, path + ("port",), f"Service {name!r} has no port {ref['port']}")
        elif group in POOL_GROUPS and kind == "InferencePool":
            if model.get(group, "InferencePool", name, ns) is None:
                yield hit(route, path, f"no InferencePool {name!r} ({group}) in namespace {ns or '(unset)'!r}",
                          missing=f"InferencePool {name!r} in namespace {ns!r}")


def _granted(model, route, group, kind, name, ns) -> bool:
    for grant in model.known(GATEWAY, "ReferenceGrant"):
        if grant.namespace != ns:
            continue
        from_ok = any(f.get("group") == GATEWAY and f.get("kind") == route.kind and f.get("namespace") == route.namespace
                      for f in grant.spec.get("from") or [] if isinstance(f, dict))
        to_ok = any(t.get("group", "") == group and t.get("kind") == kind and t.get("name") in (None, name)
                    for t in grant.spec.get("to") or [] if isinstance(t, dict))
        if from_ok and to_ok:
            return True
    return False


@rule("GW002", ERROR, "a backendRef crosses namespaces without a ReferenceGrant in the target namespace",
      "add a ReferenceGrant in the backend's namespace from this route's namespace and kind")
def cross_namespace_granted(model):
    for route, path, ref, group, kind, ns in backend_refs(model):
        if ns != route.namespace and not _granted(model, route, group, kind, ref.get("name"), ns):
            yield hit(route, path + ("namespace",), f"{kind} {ref.get('name')!r} in namespace {ns!r} is not granted "
                      f"to {route.kind} in {route.namespace or '(unset)'!r}",
                      missing=f"a ReferenceGrant in namespace {ns!r}")
