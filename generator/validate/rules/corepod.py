"""The API server's validation of a pod spec's containers, ported from Kubernetes v1.31.1
pkg/apis/core/validation/validation.go (the function named beside each piece). Plain
functions over the manifest's dicts, each appending (rule, path, message) to `out` with
the server's field path and message (generator/validate/apierrors.py words them).

The server validates the object after defaulting (pkg/apis/core/v1/defaults.go): a field
the manifest leaves out is taken at its default here (probe thresholds, httpGet scheme and
path, imagePullPolicy, terminationMessagePolicy, port protocol, fieldRef apiVersion), so an
absent field is never an error. A value of the wrong type is the schema's (SC001) to report,
and is skipped here.

Which function each rule follows, and which are not ported: generator/validate/coverage/core.yaml."""
from __future__ import annotations

from decimal import Decimal
from typing import TypeGuard

from ...kernel import quantity
from .. import apierrors as E

# Rule ids (registered in rules/apiserver_core.py).
CONTAINER, PROBE, ENV, MOUNT, RESOURCE, PORT = "AS110", "AS120", "AS130", "AS141", "AS150", "AS180"

MAX_INT32 = 2**31 - 1


def _list(v) -> list:
    return v if isinstance(v, list) else []


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _str(v) -> str:
    return v if isinstance(v, str) else ""


def _int(v) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def _supported(allowed) -> list[str]:
    """sets.List: the allowed values sorted, as NotSupported lists them."""
    return sorted(allowed)


# ---------------------------------------------------------------- containers


def validate_containers(spec: dict, base: tuple, volumes: dict, claims: set, out: list, is_pod: bool) -> None:
    """validateContainers, validateInitContainers, validateEphemeralContainers (the parts not in AS001)."""
    grace = spec.get("terminationGracePeriodSeconds", 30)   # SetDefaults_PodSpec
    restart = spec.get("restartPolicy", "Always")
    for i, c in enumerate(_list(spec.get("containers"))):
        if not isinstance(c, dict):
            continue
        at = base + ("containers", i)
        validate_container_common(c, at, volumes, claims, restart, out, is_pod)
        if isinstance(c.get("lifecycle"), dict):
            validate_lifecycle(c["lifecycle"], grace, at + ("lifecycle",), out)
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            if isinstance(c.get(probe), dict):
                validate_probe(probe, c[probe], grace, at + (probe,), out)
        if c.get("restartPolicy") is not None:
            out.append((CONTAINER, at + ("restartPolicy",), E.forbidden("may not be set for non-init containers")))
    check_host_port_conflicts(_list(spec.get("containers")), base + ("containers",), out)
    for i, c in enumerate(_list(spec.get("initContainers"))):
        if isinstance(c, dict):
            _init_container(c, base + ("initContainers", i), base + ("initContainers",), volumes, claims, restart,
                            grace, out, is_pod)
    _ephemeral(spec, base, volumes, claims, restart, out)


def _init_container(c, at, list_path, volumes, claims, restart, grace, out, is_pod):
    validate_container_common(c, at, volumes, claims, restart, out, is_pod)
    policy = c.get("restartPolicy")
    if policy is not None and policy != "Always":   # validateInitContainerRestartPolicy
        out.append((CONTAINER, at + ("restartPolicy",), E.not_supported(policy, ["Always"])))
    check_host_port_conflicts([c], list_path, out)
    if policy == "Always":
        if isinstance(c.get("lifecycle"), dict):
            validate_lifecycle(c["lifecycle"], grace, at + ("lifecycle",), out)
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            if isinstance(c.get(probe), dict):
                validate_probe(probe, c[probe], grace, at + (probe,), out)
    else:
        for key in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
            if c.get(key) is not None:
                out.append((CONTAINER, at + (key,),
                            E.forbidden("may not be set for init containers without restartPolicy=Always")))
    if _list(c.get("resizePolicy")):
        out.append((CONTAINER, at + ("resizePolicy",), E.invalid(c["resizePolicy"], "must not be set for init containers")))


# validateEphemeralContainers: allowedEphemeralContainerFields leaves these out.
_EPHEMERAL_FORBIDDEN = ("ports", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "resources",
                        "resizePolicy", "restartPolicy")


def _ephemeral(spec, base, volumes, claims, restart, out):
    others = {c.get("name") for key in ("containers", "initContainers") for c in _list(spec.get(key))
              if isinstance(c, dict)}
    names = set(others)
    for i, c in enumerate(_list(spec.get("ephemeralContainers"))):
        if not isinstance(c, dict):
            continue
        at = base + ("ephemeralContainers", i)
        validate_container_common(c, at, volumes, claims, restart, out, True)
        target = _str(c.get("targetContainerName"))
        if target and target not in others:
            out.append((CONTAINER, at + ("targetContainerName",), E.not_found(target)))
        for key in _EPHEMERAL_FORBIDDEN:
            if c.get(key) not in (None, [], {}):
                out.append((CONTAINER, at + (key,), E.forbidden("cannot be set for an Ephemeral Container")))
        for j, m in enumerate(_list(c.get("volumeMounts"))):
            for key in ("subPath", "subPathExpr"):
                if _str(_dict(m).get(key)):
                    out.append((CONTAINER, at + ("volumeMounts", j, key),
                                E.forbidden("cannot be set for an Ephemeral Container")))
        names.add(c.get("name"))


_TERMINATION_MESSAGE = ("File", "FallbackToLogsOnError")
_PULL = ("Always", "IfNotPresent", "Never")


def validate_container_common(c, at, volumes, claims, restart, out, is_pod) -> None:
    """validateContainerCommon (name, image, terminationMessagePolicy, then the functions it calls),
    and validateContainerOnlyForPod for a Pod."""
    name = c.get("name")
    if isinstance(name, str) and name:
        out.extend((CONTAINER, at + ("name",), E.invalid(name, m)) for m in E.is_dns1123_label(name))
    image = c.get("image")
    if image == "" or image is None:   # optional in the schema, required here, in templates too
        out.append((CONTAINER, at + ("image",), E.required()))
    if is_pod and isinstance(image, str) and image != image.strip():
        out.append((CONTAINER, at + ("image",), E.invalid(image, "must not have leading or trailing whitespace")))
    policy = c.get("terminationMessagePolicy", "File")
    if isinstance(policy, str) and policy not in _TERMINATION_MESSAGE:
        out.append((CONTAINER, at + ("terminationMessagePolicy",),
                    E.required() if not policy else E.not_supported(policy, _TERMINATION_MESSAGE)))
    validate_container_ports(_list(c.get("ports")), at + ("ports",), out)
    validate_env(_list(c.get("env")), at + ("env",), out)
    validate_env_from(_list(c.get("envFrom")), at + ("envFrom",), out)
    validate_volume_mounts(c, at + ("volumeMounts",), volumes, out)
    pull = c.get("imagePullPolicy")
    if isinstance(pull, str) and pull not in _PULL:   # validatePullPolicy; unset defaults (Always or IfNotPresent)
        out.append((CONTAINER, at + ("imagePullPolicy",), E.required() if not pull else E.not_supported(pull, _PULL)))
    validate_resource_requirements(_dict(c.get("resources")), claims, at + ("resources",), out)
    validate_resize_policy(_list(c.get("resizePolicy")), at + ("resizePolicy",), restart, out)


def validate_resize_policy(policies, at, restart, out) -> None:
    """validateResizePolicy."""
    seen: set = set()
    for i, p in enumerate(policies):
        p = _dict(p)
        res, pol = p.get("resourceName"), p.get("restartPolicy")
        if res in seen:
            out.append((CONTAINER, at + (i,), E.duplicate(res)))
        seen.add(res)
        if isinstance(res, str) and res not in ("cpu", "memory"):
            out.append((CONTAINER, at, E.required() if not res else E.not_supported(res, ["cpu", "memory"])))
        if isinstance(pol, str) and pol not in ("NotRequired", "RestartContainer"):
            out.append((CONTAINER, at, E.required() if not pol else E.not_supported(pol, ["NotRequired",
                                                                                           "RestartContainer"])))
        if restart == "Never" and isinstance(pol, str) and pol != "NotRequired":
            out.append((CONTAINER, at, E.invalid(pol, "must be 'NotRequired' when `restartPolicy` is 'Never'")))


def check_host_port_conflicts(containers, at, out) -> None:
    """checkHostPortConflicts, AccumulateUniqueHostPorts: protocol/hostIP/hostPort once per list."""
    seen: set = set()
    for ci, c in enumerate(containers):
        for pi, p in enumerate(_list(_dict(c).get("ports"))):
            p = _dict(p)
            host = p.get("hostPort")
            if not _int(host) or host == 0:
                continue
            key = f"{p.get('protocol', 'TCP')}/{p.get('hostIP', '')}/{host}"
            if key in seen:
                out.append((PORT, at + (ci, "ports", pi, "hostPort"), E.duplicate(key)))
            seen.add(key)


_PROTOCOLS = ("SCTP", "TCP", "UDP")


def validate_container_ports(ports, at, out) -> None:
    """validateContainerPorts: the protocol, and containerPort 0. Numbers out of range and duplicate
    names are AS002, invalid names NM002 (rules written before these)."""
    for i, p in enumerate(ports):
        if not isinstance(p, dict):
            continue
        if p.get("containerPort") == 0:
            out.append((PORT, at + (i, "containerPort"), E.required()))
        proto = p.get("protocol", "TCP")
        if isinstance(proto, str) and proto not in _PROTOCOLS:
            out.append((PORT, at + (i, "protocol"), E.required() if not proto else E.not_supported(proto, _PROTOCOLS)))


# ---------------------------------------------------------------- probes and handlers


def validate_probe(kind: str, probe: dict, grace, at: tuple, out: list) -> None:
    """validateLivenessProbe, validateReadinessProbe, validateStartupProbe and validateProbe. The
    liveness and startup successThreshold (must be 1) and numeric ports out of range are AS006."""
    validate_handler(probe, grace, at, out, ("exec", "httpGet", "tcpSocket", "grpc"))
    for key in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        v = probe.get(key)
        if _int(v) and v < 0:
            out.append((PROBE, at + (key,), E.invalid(v, E.NEGATIVE)))
    grace_s = probe.get("terminationGracePeriodSeconds")
    if kind == "readinessProbe" and grace_s is not None:
        out.append((PROBE, at + ("terminationGracePeriodSeconds",), E.invalid(grace_s, "must not be set for "
                                                                                       "readinessProbes")))
    elif _int(grace_s) and grace_s <= 0:
        out.append((PROBE, at + ("terminationGracePeriodSeconds",), E.invalid(grace_s, "must be greater than 0")))


def validate_lifecycle(lifecycle: dict, grace, at: tuple, out: list) -> None:
    """validateLifecycle: each hook's handler (exec, httpGet, tcpSocket or sleep)."""
    for hook in ("postStart", "preStop"):
        if isinstance(lifecycle.get(hook), dict):
            validate_handler(lifecycle[hook], grace, at + (hook,), out, ("exec", "httpGet", "tcpSocket", "sleep"))


def validate_handler(handler: dict, grace, at: tuple, out: list, kinds: tuple) -> None:
    """validateHandler: exactly one handler type, then that handler's own check
    (validateExecAction, validateHTTPGetAction, validateTCPSocketAction, validateGRPCAction,
    validateSleepAction). Handler keys a probe cannot hold (sleep) are the schema's."""
    count = 0
    for kind in kinds:
        action = handler.get(kind)
        if action is None:
            continue
        if count:
            out.append((PROBE, at + (kind,), E.forbidden("may not specify more than 1 handler type")))
            continue
        count += 1
        if isinstance(action, dict):
            _action(kind, action, grace, at + (kind,), out)
    if count == 0:
        out.append((PROBE, at, E.required("must specify a handler type")))


def _action(kind, action, grace, at, out):
    if kind == "exec" and not _list(action.get("command")):
        out.append((PROBE, at + ("command",), E.required()))
    elif kind in ("httpGet", "tcpSocket"):
        _port_num_or_name(action.get("port"), at + ("port",), out)
        if kind == "httpGet":
            _http_get(action, at, out)
    elif kind == "sleep":
        seconds = action.get("seconds")
        if _int(seconds) and _int(grace) and (seconds <= 0 or seconds > grace):
            out.append((PROBE, at, E.invalid(seconds, f"must be greater than 0 and less than "
                                                      f"terminationGracePeriodSeconds ({grace})")))


def _port_num_or_name(port, at, out):
    """ValidatePortNumOrName for a name; numbers out of range are AS006."""
    if isinstance(port, str):
        out.extend((PROBE, at, E.invalid(port, m)) for m in E.is_valid_port_name(port))


def _http_get(action, at, out):
    scheme = action.get("scheme", "HTTP")   # SetDefaults_HTTPGetAction: path "/", scheme HTTP
    if isinstance(scheme, str) and scheme not in ("HTTP", "HTTPS"):
        out.append((PROBE, at + ("scheme",), E.not_supported(scheme, ["HTTP", "HTTPS"])))
    for h in _list(action.get("httpHeaders")):
        name = _dict(h).get("name")
        if isinstance(name, str):
            out.extend((PROBE, at + ("httpHeaders",), E.invalid(name, m)) for m in E.is_http_header_name(name))


def probe_named_ports(c: dict, at: tuple, out: list) -> None:
    """A probe's httpGet or tcpSocket port given by name must be one of the container's port names:
    the kubelet resolves it there (pkg/probe/util.go ResolveContainerPort: findPortByName, then a number), so the
    probe fails on every try and the container is restarted or never ready. The API server does not
    check it; the rule warns."""
    names = {p.get("name") for p in _list(c.get("ports")) if isinstance(p, dict)}
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        for kind in ("httpGet", "tcpSocket"):
            port = _dict(_dict(c.get(probe)).get(kind)).get("port")
            if isinstance(port, str) and not port.isdigit() and not E.is_valid_port_name(port) and port not in names:
                out.append(("AS121", at + (probe, kind, "port"),
                            f"port {port!r} is not a name of this container's ports "
                            f"({', '.join(sorted(n for n in names if isinstance(n, str))) or 'it names none'})"))


# ---------------------------------------------------------------- env


def validate_env(env: list, at: tuple, out: list) -> None:
    """ValidateEnv (names with IsRelaxedEnvVarName: the RelaxedEnvironmentVariableValidation gate is on by
    default from 1.32, and the strict 1.31 check would refuse names newer servers take) and
    validateEnvVarValueFrom."""
    for i, ev in enumerate(env):
        if not isinstance(ev, dict):
            continue
        name = ev.get("name")
        if name == "":
            out.append((ENV, at + (i, "name"), E.required()))
        elif isinstance(name, str):
            out.extend((ENV, at + (i, "name"), E.invalid(name, m)) for m in E.is_relaxed_env_var_name(name))
        if isinstance(ev.get("valueFrom"), dict):
            _value_from(ev, ev["valueFrom"], at + (i, "valueFrom"), out)


_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef")
# validEnvDownwardAPIFieldPathExpressions and validContainerResourceFieldPathExpressions.
ENV_FIELD_PATHS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
                   "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")
RESOURCE_FIELD_PATHS = ("limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu",
                        "requests.ephemeral-storage", "requests.memory")
# pkg/apis/core/pods/helpers.go ConvertDownwardAPIFieldLabel: the v1 field labels.
_FIELD_LABELS = ("metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid",
                 "spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName",
                 "status.phase", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs", "spec.host")


def _value_from(ev, vf, at, out):
    given = [s for s in _SOURCES if vf.get(s) is not None]
    for s in given:
        src = _dict(vf[s])
        if s == "fieldRef":
            validate_object_field_selector(src, ENV_FIELD_PATHS, at + (s,), out, ENV)
        elif s == "resourceFieldRef":
            validate_resource_field_selector(src, at + (s,), out, ENV, volume=False)
        else:
            _key_selector(src, at + (s,), out)
    if not given:
        out.append((ENV, at, E.invalid("", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` "
                                           "or `secretKeyRef`")))
    elif _str(ev.get("value")):
        out.append((ENV, at, E.invalid("", "may not be specified when `value` is not empty")))
    elif len(given) > 1:
        out.append((ENV, at, E.invalid("", "may not have more than one field specified at a time")))


def _key_selector(src, at, out):
    """validateConfigMapKeySelector, validateSecretKeySelector: both check the name as a Secret name
    (ValidateNameFunc(ValidateSecretName): a DNS-1123 subdomain) and the key as a config key."""
    name = src.get("name", "")
    if isinstance(name, str):
        out.extend((ENV, at + ("name",), E.invalid(name, m)) for m in _name_msgs(name))
    key = src.get("key")
    if key == "":
        out.append((ENV, at + ("key",), E.required()))
    elif isinstance(key, str):
        out.extend((ENV, at + ("key",), E.invalid(key, m)) for m in E.is_config_map_key(key))


def _name_msgs(name: str) -> list[str]:
    """ValidateNameFunc(ValidateSecretName)(name, false): an empty name fails the DNS check too."""
    return E.is_dns1123_subdomain(name)


def validate_object_field_selector(fs: dict, allowed: tuple, at: tuple, out: list, rule: str) -> None:
    """validateObjectFieldSelector (apiVersion defaults to v1: SetDefaults_ObjectFieldSelector)."""
    version, path = fs.get("apiVersion", "v1"), fs.get("fieldPath")
    if version == "":
        out.append((rule, at + ("apiVersion",), E.required()))
        return
    if path == "":
        out.append((rule, at + ("fieldPath",), E.required()))
        return
    if not isinstance(path, str) or not isinstance(version, str):
        return
    base, sub = _split_subscript(path)
    if version != "v1":
        err = f"unsupported pod version: {version}"
    elif sub is not None:
        err = "" if base in ("metadata.annotations", "metadata.labels") else \
            f"field label does not support subscript: {path}"
    else:
        err = "" if path in _FIELD_LABELS else f"field label not supported: {path}"
    if err:
        out.append((rule, at + ("fieldPath",), E.invalid(path, f"error converting fieldPath: {err}")))
        return
    if sub is not None:
        key = sub.lower() if base == "metadata.annotations" else sub
        out.extend((rule, at, E.invalid(key, m)) for m in E.is_qualified_name(key))
    elif (path if path != "spec.host" else "spec.nodeName") not in allowed:
        out.append((rule, at + ("fieldPath",), E.not_supported(path, sorted(allowed))))


def _split_subscript(path: str) -> tuple[str, str | None]:
    """fieldpath.SplitMaybeSubscriptedPath: metadata.labels['key']."""
    if path.endswith("']") and "['" in path:
        base, _, rest = path.partition("['")
        return base, rest[:-2]
    return path, None


_DIVISORS = ("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")


def validate_resource_field_selector(fs: dict, at: tuple, out: list, rule: str, volume: bool) -> None:
    """validateContainerResourceFieldSelector and validateContainerResourceDivisor."""
    resource = fs.get("resource")
    if volume and not _str(fs.get("containerName")):
        out.append((rule, at + ("containerName",), E.required()))
    elif resource == "" or resource is None:
        out.append((rule, at + ("resource",), E.required()))
    elif isinstance(resource, str) and resource not in RESOURCE_FIELD_PATHS \
            and not resource.startswith(("requests.hugepages-", "limits.hugepages-")):
        out.append((rule, at + ("resource",), E.not_supported(resource, RESOURCE_FIELD_PATHS)))
    if isinstance(resource, str) and fs.get("divisor") is not None:
        _divisor(resource, fs["divisor"], at, out, rule)


def _divisor(resource, divisor, at, out, rule):
    """validateContainerResourceDivisor."""
    try:
        value = quantity.parse(divisor)
    except ValueError:
        return
    if value == 0:
        return
    text = _canonical_divisor(value)
    if resource in ("limits.cpu", "requests.cpu"):
        if text not in ("1m", "1"):
            out.append((rule, at + ("divisor",), E.invalid(resource, "only divisor's values 1m and 1 are supported "
                                                                     "with the cpu resource")))
        return
    kinds = {"limits.memory": "memory", "requests.memory": "memory", "limits.ephemeral-storage":
             "local ephemeral storage", "requests.ephemeral-storage": "local ephemeral storage"}
    what = kinds.get(resource) or ("hugepages" if resource.startswith(("requests.hugepages-", "limits.hugepages-"))
                                   else None)
    if what and text not in _DIVISORS:
        out.append((rule, at + ("divisor",), E.invalid(resource, f"only divisor's values {', '.join(_DIVISORS)} are "
                                                                 f"supported with the {what} resource")))


def _canonical_divisor(value: Decimal) -> str:
    """The divisor as Quantity.String() writes the values the server allows (1m, 1, 1k, 1Ki, ...)."""
    if value == Decimal("0.001"):
        return "1m"
    for suffix, n in (("Ki", 2**10), ("Mi", 2**20), ("Gi", 2**30), ("Ti", 2**40), ("Pi", 2**50), ("Ei", 2**60),
                      ("k", 10**3), ("M", 10**6), ("G", 10**9), ("T", 10**12), ("P", 10**15), ("E", 10**18)):
        if value == n:
            return "1" + suffix
    return "1" if value == 1 else str(value)


def validate_env_from(env_from: list, at: tuple, out: list) -> None:
    """ValidateEnvFrom, validateConfigMapEnvSource, validateSecretEnvSource."""
    for i, ev in enumerate(env_from):
        if not isinstance(ev, dict):
            continue
        prefix = ev.get("prefix")
        if isinstance(prefix, str) and prefix:
            out.extend((ENV, at + (i, "prefix"), E.invalid(prefix, m)) for m in E.is_relaxed_env_var_name(prefix))
        given = [s for s in ("configMapRef", "secretRef") if ev.get(s) is not None]
        for s in given:
            name = _dict(ev[s]).get("name", "")
            if name == "":
                out.append((ENV, at + (i, s, "name"), E.required()))
            elif isinstance(name, str):
                # ValidateConfigMapName / ValidateSecretName with prefix=true: a trailing '-' is allowed.
                check = name[:-1] + "a" if name.endswith("-") else name
                out.extend((ENV, at + (i, s, "name"), E.invalid(name, m)) for m in E.is_dns1123_subdomain(check))
        if not given:
            out.append((ENV, at, E.invalid("", "must specify one of: `configMapRef` or `secretRef`")))
        elif len(given) > 1:
            out.append((ENV, at, E.invalid("", "may not have more than one field specified at a time")))


# ---------------------------------------------------------------- volume mounts


def validate_volume_mounts(c: dict, at: tuple, volumes: dict, out: list) -> None:
    """ValidateVolumeMounts beyond AS004 (which reports unknown volumes and repeated mount paths):
    volumeDevices overlap, subPath / subPathExpr, mountPropagation (validateMountPropagation),
    recursiveReadOnly (validateMountRecursiveReadOnly); and ValidateVolumeDevices."""
    devices = {_dict(d).get("name"): _dict(d).get("devicePath") for d in _list(c.get("volumeDevices"))}
    privileged = _dict(c.get("securityContext")).get("privileged") is True
    for i, m in enumerate(_list(c.get("volumeMounts"))):
        if not isinstance(m, dict):
            continue
        idx = at + (i,)
        name, path = m.get("name"), m.get("mountPath")
        if name in devices:
            out.append((MOUNT, idx + ("name",), E.invalid(name, "must not already exist in volumeDevices")))
        if path in devices.values():
            out.append((MOUNT, idx + ("mountPath",), E.invalid(path, "must not already exist as a path in "
                                                                     "volumeDevices")))
        sub, expr = _str(m.get("subPath")), _str(m.get("subPathExpr"))
        if sub:   # upstream reports these at volumeMounts.subPath (fldPath.Child), not at the item
            validate_local_descending_path(sub, at + ("subPath",), out, MOUNT)
        if expr:
            if sub:
                out.append((MOUNT, idx + ("subPathExpr",), E.invalid(expr, "subPathExpr and subPath are mutually "
                                                                           "exclusive")))
            validate_local_descending_path(expr, at + ("subPathExpr",), out, MOUNT)
        prop = m.get("mountPropagation")
        if isinstance(prop, str):
            if prop not in ("Bidirectional", "HostToContainer", "None"):
                out.append((MOUNT, at + ("mountPropagation",), E.not_supported(prop, ["Bidirectional",
                                                                                      "HostToContainer", "None"])))
            if prop == "Bidirectional" and not privileged:
                out.append((MOUNT, at + ("mountPropagation",), E.forbidden(
                    "Bidirectional mount propagation is available only to privileged containers")))
        _recursive_read_only(m, at + ("recursiveReadOnly",), out)
    _devices(c, at[:-1] + ("volumeDevices",), volumes, {_dict(m).get("name"): _dict(m).get("mountPath")
                                                        for m in _list(c.get("volumeMounts"))}, out)


def _recursive_read_only(m, at, out):
    rro = m.get("recursiveReadOnly")
    if not isinstance(rro, str) or rro == "Disabled":
        return
    if rro in ("Enabled", "IfPossible"):
        if m.get("readOnly") is not True:
            out.append((MOUNT, at, E.forbidden("may only be specified when readOnly is true")))
        if m.get("mountPropagation", "None") != "None":
            out.append((MOUNT, at, E.forbidden("may only be specified when mountPropagation is None or not "
                                               "specified")))
    else:
        out.append((MOUNT, at, E.not_supported(rro, ["Disabled", "Enabled", "IfPossible"])))


def _devices(c, at, volumes, mounts, out):
    """ValidateVolumeDevices."""
    names: set = set()
    paths: set = set()
    for i, d in enumerate(_list(c.get("volumeDevices"))):
        d = _dict(d)
        idx = at + (i,)
        name, path = _str(d.get("name")), _str(d.get("devicePath"))
        if not name:
            out.append((MOUNT, idx + ("name",), E.required()))
        if name in names:
            out.append((MOUNT, idx + ("name",), E.invalid(name, "must be unique")))
        source = volumes.get(name)
        if source is not None and source not in ("persistentVolumeClaim", "ephemeral"):
            out.append((MOUNT, idx + ("name",), E.invalid(name, "can only use volume source type of "
                                                                "PersistentVolumeClaim or Ephemeral for block mode")))
        if name and source is None:
            out.append((MOUNT, idx + ("name",), E.not_found(name)))
        _device_path(path, idx, paths, mounts, out)
        if name in mounts:
            out.append((MOUNT, idx + ("name",), E.invalid(name, "must not already exist in volumeMounts")))
        if name:
            names.add(name)


def _device_path(path, idx, paths, mounts, out):
    if not path:
        out.append((MOUNT, idx + ("devicePath",), E.required()))
    if path in paths:
        out.append((MOUNT, idx + ("devicePath",), E.invalid(path, "must be unique")))
    if path and ".." in path.replace("\\", "/").split("/"):
        out.append((MOUNT, idx + ("devicePath",), E.invalid(path, "can not contain backsteps ('..')")))
    else:
        paths.add(path)
    if path and path in mounts.values():
        out.append((MOUNT, idx + ("devicePath",), E.invalid(path, "must not already exist as a path in "
                                                                  "volumeMounts")))


def validate_local_descending_path(target: str, at: tuple, out: list, rule: str) -> None:
    """validateLocalDescendingPath and validatePathNoBacksteps."""
    if target.startswith("/"):
        out.append((rule, at, E.invalid(target, "must be a relative path")))
    if ".." in target.split("/"):
        out.append((rule, at, E.invalid(target, "must not contain '..'")))


# ---------------------------------------------------------------- resources

# helper.IsStandardResourceName's standardResources (pkg/apis/core/helper/helpers.go).
_STANDARD = {"cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
             "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "services", "replicationcontrollers",
             "resourcequotas", "secrets", "persistentvolumeclaims", "storage", "requests.storage", "configmaps",
             "services.nodeports", "services.loadbalancers"}
_CONTAINER_STANDARD = {"cpu", "memory", "ephemeral-storage"}


def _native(name: str) -> bool:
    """helper.IsNativeResource: no domain, or a kubernetes.io domain."""
    return "/" not in name or "kubernetes.io/" in name


def _extended(name: str) -> bool:
    """helper.IsExtendedResourceName."""
    return not _native(name) and not name.startswith("requests.") and not E.is_qualified_name("requests." + name)


def validate_container_resource_name(name: str, at: tuple, out: list) -> None:
    """validateContainerResourceName and validateResourceName."""
    msgs = E.is_qualified_name(name)
    if msgs:
        out.extend((RESOURCE, at, E.invalid(name, m)) for m in msgs)
    elif "/" not in name and name not in _STANDARD and not name.startswith("hugepages-") \
            and not name.startswith("requests.hugepages-"):
        out.append((RESOURCE, at, E.invalid(name, "must be a standard resource type or fully qualified")))
    if "/" not in name:
        if name not in _CONTAINER_STANDARD and not name.startswith("hugepages-"):
            out.append((RESOURCE, at, E.invalid(name, "must be a standard resource for containers")))
    elif not _native(name) and not _extended(name):
        out.append((RESOURCE, at, E.invalid(name, "doesn't follow extended resource name standard")))


def validate_resource_requirements(res: dict, claims: set, at: tuple, out: list) -> None:
    """ValidateResourceRequirements beyond AS003 (request against limit): resource names, negative or
    fractional quantities (ValidateResourceQuantityValue), huge pages (validateResourceQuantityHugePageValue,
    "HugePages require cpu or memory") and claims (validateResourceClaimNames)."""
    has_compute = False
    has_huge = False
    for key in ("limits", "requests"):
        for name, q in sorted(_dict(res.get(key)).items()):
            if not isinstance(name, str):
                continue
            path = at + (key, name)
            validate_container_resource_name(name, path, out)
            validate_quantity_value(name, q, path, out)
            has_compute |= name in ("cpu", "memory")
            has_huge |= name.startswith("hugepages-")
    if has_huge and not has_compute:
        out.append((RESOURCE, at, E.forbidden("HugePages require cpu or memory")))
    _claim_names(_list(res.get("claims")), claims, at + ("claims",), out)


def _claim_names(items, pod_claims, at, out):
    names: set = set()
    for i, c in enumerate(items):
        c = _dict(c)
        name, request = _str(c.get("name")), _str(c.get("request"))
        if not name:
            out.append((RESOURCE, at + (i,), E.required()))
            continue
        if name in names:
            out.append((RESOURCE, at + (i,), E.duplicate(name)))
        else:
            key = name
            if request:
                out.extend((RESOURCE, at + (i, "request"), E.invalid(request, m)) for m in E.is_dns1123_label(request))
                key += "/" + request
            if key in names:
                out.append((RESOURCE, at + (i,), E.duplicate(key)))
            elif not request and any(k.partition("/")[0] == name for k in names if "/" in k):
                out.append((RESOURCE, at + (i,), E.duplicate(name)))
            names.add(key)
        if name not in pod_claims:
            listed = ": " + ", ".join(sorted(pod_claims)) if pod_claims else " which is empty"
            out.append((RESOURCE, at + (i,), f"Not found: {E.value(name)}: must be one of the names in "
                                             f"pod.spec.resourceClaims{listed}"))


def validate_quantity_value(name: str, q, at: tuple, out: list) -> None:
    """ValidateResourceQuantityValue (not negative; an integer for integer resources: extended
    resources and the object counts) and validateResourceQuantityHugePageValue."""
    try:
        value = quantity.parse(q)
    except ValueError:
        return   # SC001 reports a malformed quantity
    if value < 0:
        out.append((RESOURCE, at, E.invalid(str(q), E.NEGATIVE)))
    integer = _extended(name) or name in ("pods", "services", "replicationcontrollers", "resourcequotas", "secrets",
                                          "configmaps", "persistentvolumeclaims", "services.nodeports",
                                          "services.loadbalancers")
    if integer and (value * 1000) % 1000 != 0:
        out.append((RESOURCE, at, E.invalid(str(q), "must be an integer")))
    if name.startswith("hugepages-"):
        try:
            size = quantity.parse(name[len("hugepages-"):])
        except ValueError:
            return
        if size > 0 and value % size != 0:
            out.append((RESOURCE, at, E.invalid(str(q), f"{q} is not positive integer multiple of {name}")))
