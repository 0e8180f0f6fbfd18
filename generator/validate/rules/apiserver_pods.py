"""What the API server checks in code, not in the OpenAPI schema, on pod templates:
k8s.io/kubernetes pkg/apis/core/validation/validation.go at the pinned minor. Each
rule names the function it follows; messages are the server's (generator/validate/
apierrors.py). A pod template inside a custom resource (JobSet, LWS, RayJob, ...) is
checked too: the controller's Job or Pod would be rejected with the same error.

The table of which upstream functions are ported: generator/validate/coverage/core.yaml
(docs/validate-rules.md)."""
from __future__ import annotations

import re

from ...kernel import quantity
from .. import apierrors as E
from ..findings import ERROR
from . import hit, rule

_EPHEMERAL = "ephemeralContainers"
_NATIVE_PREFIX = "kubernetes.io/"


def _list(v) -> list:
    return v if isinstance(v, list) else []


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _all_containers(ps):
    """(path, container) of init, regular and ephemeral containers, in the order
    validateContainers sees their names (init first, as validatePodSpec does)."""
    for key in ("initContainers", "containers", _EPHEMERAL):
        for i, c in enumerate(_list(ps.spec.get(key))):
            if isinstance(c, dict):
                yield ps.path + ("spec", key, i), c


@rule("AS001", ERROR, "two containers of a pod template share a name (API server: validateContainers, "
      "validateInitContainers)", "give every container, init container and ephemeral container its own name")
def container_names_unique(model):
    for o, ps in model.workloads():
        seen: set = set()
        for path, c in _all_containers(ps):
            name = c.get("name")
            if isinstance(name, str) and name:
                if name in seen:
                    yield hit(o, path + ("name",), E.duplicate(name))
                seen.add(name)


@rule("AS002", ERROR, "a container port is out of 1-65535, or two ports of a container share a name (API "
      "server: validateContainerPorts)", "use a port number from 1 to 65535 and a distinct name per port")
def container_ports(model):
    for o, ps in model.workloads():
        for path, c in _all_containers(ps):
            names: set = set()
            for i, p in enumerate(_list(c.get("ports"))):
                if not isinstance(p, dict):
                    continue
                at = path + ("ports", i)
                name = p.get("name")
                if isinstance(name, str) and name:
                    if name in names:
                        yield hit(o, at + ("name",), E.duplicate(name))
                    names.add(name)
                port = p.get("containerPort")
                if isinstance(port, int) and not E.port_num(port):
                    yield hit(o, at + ("containerPort",), E.invalid(port, E.PORT_RANGE))
                host = p.get("hostPort")
                if isinstance(host, int) and host != 0 and not E.port_num(host):
                    yield hit(o, at + ("hostPort",), E.invalid(host, E.PORT_RANGE))


def overcommit_allowed(resource: str) -> bool:
    """pkg/apis/core/helper IsOvercommitAllowed: native resources (no domain, or a
    kubernetes.io domain) other than huge pages; extended resources (google.com/tpu,
    nvidia.com/gpu) may not be overcommitted."""
    native = "/" not in resource or _NATIVE_PREFIX in resource
    return native and not resource.startswith("hugepages-")


def _cmp(a, b) -> int | None:
    try:
        x, y = quantity.parse(a), quantity.parse(b)
    except ValueError:
        return None   # SC001 reports a malformed quantity
    return (x > y) - (x < y)


@rule("AS003", ERROR, "a container's request exceeds its limit, or an extended resource (google.com/tpu, "
      "nvidia.com/gpu) has a request without an equal limit (API server: ValidateResourceRequirements)",
      "set limits for accelerators equal to the requests (or limits alone: the request defaults to the limit)")
def resource_requirements(model):
    for o, ps in model.workloads():
        for path, c in _all_containers(ps):
            res = _dict(c.get("resources"))
            requests, limits = _dict(res.get("requests")), _dict(res.get("limits"))
            for name, q in sorted(requests.items()):
                req_path = path + ("resources", "requests", name)
                if name in limits:
                    order = _cmp(q, limits[name])
                    if order is None:
                        continue
                    if order != 0 and not overcommit_allowed(name):
                        yield hit(o, req_path, E.invalid(str(q), f"must be equal to {name} limit of {limits[name]}"))
                    elif order > 0:
                        yield hit(o, req_path, E.invalid(str(q), f"must be less than or equal to {name} limit of "
                                                                  f"{limits[name]}"))
                elif not overcommit_allowed(name):
                    yield hit(o, path + ("resources", "limits", name),
                              E.required("Limit must be set for non overcommitable resources"))


@rule("AS004", ERROR, "two volumes of a pod template share a name, a volumeMount names no volume, or two mounts of a "
      "container share a mountPath (API server: ValidateVolumes, ValidateVolumeMounts)",
      "name each volume once and mount only volumes the pod declares, each at its own path")
def volumes_and_mounts(model):
    for o, ps in model.workloads():
        declared: set = set(claim_templates(o))
        for i, v in enumerate(_list(ps.spec.get("volumes"))):
            name = _dict(v).get("name")
            if isinstance(name, str) and name:
                if name in declared:
                    yield hit(o, ps.path + ("spec", "volumes", i, "name"), E.duplicate(name))
                declared.add(name)
        for path, c in _all_containers(ps):
            yield from _mounts(o, path, c, declared)


def claim_templates(o) -> list[str]:
    """Volumes the controller adds to the pods from claim templates: StatefulSet
    spec.volumeClaimTemplates, LWS spec.leaderWorkerTemplate.volumeClaimTemplates, JobSet
    spec.volumeClaimPolicies[].templates (each named by its metadata.name)."""
    spec = o.spec
    templates = _list(spec.get("volumeClaimTemplates")) \
        + _list(_dict(spec.get("leaderWorkerTemplate")).get("volumeClaimTemplates")) \
        + [t for policy in _list(spec.get("volumeClaimPolicies")) for t in _list(_dict(policy).get("templates"))]
    return [n for t in templates if isinstance(n := _dict(_dict(t).get("metadata")).get("name"), str)]


def _mounts(o, path, c, declared):
    points: set = set()
    for i, m in enumerate(_list(c.get("volumeMounts"))):
        m = _dict(m)
        name, mount_path = m.get("name"), m.get("mountPath")
        if isinstance(name, str) and name and name not in declared:
            yield hit(o, path + ("volumeMounts", i, "name"), E.not_found(name))
        if isinstance(mount_path, str) and mount_path:
            if mount_path in points:
                yield hit(o, path + ("volumeMounts", i, "mountPath"), E.invalid(mount_path, "must be unique"))
            points.add(mount_path)


# Integer fields the API server decodes as int32 (k8s.io/api types): a larger number never
# reaches validation; the JSON decoder refuses the object ("cannot unmarshal number ... of
# type int32"). The names are the int32 fields of the kinds users submit (core/v1 Container,
# ContainerPort, ServicePort; apps/v1 and batch/v1 specs; autoscaling/v2; scheduling/v1).
INT32_FIELDS = frozenset({
    "replicas", "parallelism", "completions", "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes",
    "containerPort", "hostPort", "port", "nodePort", "minReplicas", "maxReplicas", "minReadySeconds",
    "revisionHistoryLimit", "progressDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit",
    "averageUtilization", "initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
    "failureThreshold", "weight", "defaultMode", "mode", "priority", "value",
})
_CORE_GROUPS = frozenset({"", "apps", "batch", "autoscaling", "scheduling.k8s.io", "policy", "networking.k8s.io"})
_NUMBER = re.compile(r"^-?\d+$")


def _int32_overflows(body, path=()):
    stack = [(body, path)]
    while stack:
        v, p = stack.pop()
        if isinstance(v, dict):
            for k, x in v.items():
                if k in INT32_FIELDS and isinstance(x, int) and not isinstance(x, bool) \
                        and not -E.INT32_MAX - 1 <= x <= E.INT32_MAX:
                    yield p + (k,), x
                elif isinstance(x, (dict, list)):
                    stack.append((x, p + (k,)))
        elif isinstance(v, list):
            stack.extend((x, p + (i,)) for i, x in enumerate(v) if isinstance(x, (dict, list)))


@rule("AS005", ERROR, "an int32 field (replicas, parallelism, a port, a PriorityClass value, ...) holds a number "
      "outside the int32 range: the API server cannot decode the object",
      "use a number from -2147483648 to 2147483647 (counts and ports are far smaller)")
def int32_range(model):
    for o in model.objects:
        if o.group not in _CORE_GROUPS and not o.podsets:
            continue
        version = str(o.body.get("apiVersion") or "").rpartition("/")[2]
        for path, v in sorted(_int32_overflows(o.body), key=lambda pv: [str(x) for x in pv[0]]):
            # The server's BadRequest, as kubectl prints it ('Job in version "v1" cannot be handled as a
            # Job: json: cannot unmarshal number ... into Go struct field JobSpec.spec.parallelism of type
            # int32'), less the Go struct's name, which the manifest does not tell.
            field_path = ".".join(str(p) for p in path if not isinstance(p, int))
            yield hit(o, path, f'{o.kind} in version "{version}" cannot be handled'
                               f" as a {o.kind}: json: cannot "
                               f"unmarshal number {v} into Go struct field {field_path} of type int32"
                      if o.group in _CORE_GROUPS else
                      f"{v} is outside int32, the type of this field in the pod template (the controller's "
                      f"Job or Pod cannot be created)")


_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
# validateLivenessProbe and validateStartupProbe: "must be 1" for successThreshold.
_SUCCESS_ONE = ("livenessProbe", "startupProbe")


def _handler_ports(handler: dict, at: tuple):
    """(path, port) of the numeric ports of a probe or lifecycle handler (httpGet, tcpSocket, grpc)."""
    for action in ("httpGet", "tcpSocket", "grpc"):
        port = _dict(handler.get(action)).get("port")
        if isinstance(port, int) and not isinstance(port, bool):
            yield at + (action, "port"), port


@rule("AS006", ERROR, "a probe or lifecycle handler names a port out of 1-65535, or a liveness or startup probe sets "
      "successThreshold other than 1 (API server: validateProbe, validateHandler, validateLivenessProbe, "
      "validateStartupProbe)", "probe a container port from 1 to 65535 (or its name); liveness and startup probes "
      "succeed after one success")
def probes(model):
    for o, ps in model.workloads():
        for path, c in _all_containers(ps):
            handlers = [(path + (p,), _dict(c.get(p))) for p in _PROBES if isinstance(c.get(p), dict)]
            lifecycle = _dict(c.get("lifecycle"))
            handlers += [(path + ("lifecycle", h), _dict(lifecycle.get(h))) for h in ("postStart", "preStop")
                         if isinstance(lifecycle.get(h), dict)]
            for at, handler in handlers:
                for port_path, port in _handler_ports(handler, at):
                    if not E.port_num(port):
                        yield hit(o, port_path, E.invalid(port, E.PORT_RANGE))
                threshold = handler.get("successThreshold")
                if at[-1] in _SUCCESS_ONE and isinstance(threshold, int) and threshold != 1:
                    yield hit(o, at + ("successThreshold",), E.invalid(threshold, "must be 1"))
