"""Selectors that must match some pod template, and the ports they name:
Service, PodMonitoring / ClusterPodMonitoring, InferencePool."""
from __future__ import annotations

from typing import Any

from ...kernel.errors import Problem
from ...kernel.labelmatch import describe, selector_matches as matches
from ..findings import ERROR, WARNING
from . import hit, rule

GMP = "monitoring.googleapis.com"
INFERENCE_GROUPS = ("inference.networking.k8s.io", "inference.networking.x-k8s.io")


def selected(model, selector: dict, namespace: str | None):
    """Pod sets in the namespace (None: all) whose pods the selector matches."""
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return []   # an empty selector selects everything; nothing to check
    return [ps for _, ps in model.known_workloads(namespace) if matches(selector, ps.labels)]


def _named_port(podsets, name) -> bool:
    return any(p.get("name") == name for ps in podsets for p in ps.ports())


def _numbered_port(podsets, number) -> bool:
    return any(p.get("containerPort") == number for ps in podsets for p in ps.ports())


def _services(model):
    for svc in model.all("", "Service"):
        sel = svc.spec.get("selector")
        if isinstance(sel, dict) and sel:   # no selector: endpoints are managed by hand
            yield svc, {"matchLabels": sel}


@rule("SV001", ERROR, "a Service selector matches no pod template in its namespace (open world: a note, or a warning "
      "when the Service's own file defines pods there and it selects none of them)",
      "fix the selector or the pod labels; the Service has no endpoints")
def service_selects(model):
    for svc, sel in _services(model):
        if not selected(model, sel, svc.namespace):
            yield _unselected(model, svc, sel, svc.namespace)


def _unselected(model, o, sel: dict, namespace: str | None) -> Problem:
    """The finding for a selector that matches no pod template. Closed world: an error. Open
    world: a note (the pods may be in the cluster), but a warning when the object's own file
    defines pods in that namespace and it selects none of them (an object and its workload
    written together, one label mistyped)."""
    where = f"namespace {namespace or '(unset)'!r}" if namespace is not None else "any namespace"
    text = f"selector {describe(sel)} matches no pod template in {where}"
    beside = _pods_beside(model, o, sel, namespace)
    if not model.closed and beside:
        return hit(o, ("spec", "selector"), f"{text}; the pods of its own file carry {beside} (if its pods are "
                   f"defined elsewhere, --context names where)", severity=WARNING)
    return hit(o, ("spec", "selector"), text, missing=f"a pod template matching {describe(sel)}")


def _pods_beside(model, o, sel: dict, namespace: str | None) -> str:
    """The selector's label keys on the pod templates of o's own file in that namespace ("" when none)."""
    keys = set(sel.get("matchLabels") or {}) | {e.get("key") for e in sel.get("matchExpressions") or []
                                                if isinstance(e, dict)}
    labels = [", ".join(f"{k}={v}" for k, v in sorted(ps.labels.items()) if k in keys) or "none of its keys"
              for w, ps in model.workloads() if w.source == o.source and (namespace is None or w.namespace == namespace)]
    return "; ".join(sorted(set(labels)))


@rule("SV002", ERROR, "a Service targetPort names a port no selected container declares",
      "name the container port (ports[].name) or use the number")
def service_ports(model):
    for svc, sel in _services(model):
        pods = selected(model, sel, svc.namespace)
        if not pods:
            continue
        for i, p in enumerate(svc.spec.get("ports") or []):
            target = p.get("targetPort") if isinstance(p, dict) else None
            if isinstance(target, str) and not _named_port(pods, target):
                yield hit(svc, ("spec", "ports", i, "targetPort"),
                          f"no selected container declares a port named {target!r}")


def _monitorings(model):
    for pm in model.all(GMP, "PodMonitoring"):
        yield pm, pm.namespace
    for pm in model.all(GMP, "ClusterPodMonitoring"):
        yield pm, None


@rule("PM001", ERROR, "a PodMonitoring / ClusterPodMonitoring selector matches no pod template",
      "fix spec.selector; Managed Prometheus scrapes nothing and the HPA metric never appears")
def monitoring_selects(model):
    for pm, ns in _monitorings(model):
        sel = pm.spec.get("selector") or {}
        if (sel.get("matchLabels") or sel.get("matchExpressions")) and not selected(model, sel, ns):
            yield _unselected(model, pm, sel, ns)


@rule("PM002", ERROR, "a PodMonitoring endpoint port names a port no selected container declares",
      "declare the container port with that name, or scrape by number")
def monitoring_ports(model):
    for pm, ns in _monitorings(model):
        pods = selected(model, pm.spec.get("selector") or {}, ns)
        if not pods:
            continue
        for i, ep in enumerate(pm.spec.get("endpoints") or []):
            port = ep.get("port") if isinstance(ep, dict) else None
            if isinstance(port, str) and not port.isdigit() and not _named_port(pods, port):
                yield hit(pm, ("spec", "endpoints", i, "port"), f"no selected container declares a port named {port!r}")


def _pools(model):
    for group in INFERENCE_GROUPS:
        for pool in model.all(group, "InferencePool"):
            sel = pool.spec.get("selector") or {}
            # v1: a LabelSelector with matchLabels; v1alpha2: a plain label map
            if "matchLabels" not in sel and "matchExpressions" not in sel:
                sel = {"matchLabels": sel}
            yield pool, sel


@rule("IP001", ERROR, "an InferencePool selector matches no pod template in its namespace",
      "fix spec.selector to the model server's pod labels")
def pool_selects(model):
    for pool, sel in _pools(model):
        if sel.get("matchLabels") and not selected(model, sel, pool.namespace):
            yield _unselected(model, pool, sel, pool.namespace)


@rule("IP002", ERROR, "an InferencePool target port is not a containerPort of any selected pod",
      "declare the model server's port (containers[].ports[].containerPort) or fix targetPorts")
def pool_ports(model):
    for pool, sel in _pools(model):
        pods = selected(model, sel, pool.namespace)
        if not pods:
            continue
        numbers: list[tuple[tuple, Any]] = [(("spec", "targetPorts", i, "number"), tp.get("number"))
                   for i, tp in enumerate(pool.spec.get("targetPorts") or []) if isinstance(tp, dict)]
        if "targetPortNumber" in pool.spec:   # v1alpha2
            numbers.append((("spec", "targetPortNumber"), pool.spec["targetPortNumber"]))
        for path, number in numbers:
            if isinstance(number, int) and not _numbered_port(pods, number):
                yield hit(pool, path, f"no selected container declares containerPort {number}")
