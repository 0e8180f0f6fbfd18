"""The API server's create-time validation of core/v1 objects (Kubernetes v1.31.1
pkg/apis/core/validation/validation.go), ported function by function in corepod.py,
corespec.py, corevolumes.py and coresecurity.py (pod specs) and here (Service, ConfigMap,
Secret, Namespace, ReplicationController, object metadata). The rules below each report one
family of those functions; generator/validate/coverage/core.yaml maps every upstream
function to its rule. Every pod template is checked, in every kind (a JobSet's or an LWS's
template too: the controller's Job or Pod would be refused the same way).

One walk of the model computes every family's problems (cached per model); each rule
reports its own."""
from __future__ import annotations

import base64
import json
import weakref

from ...kernel import apiscope
from .. import apierrors as E
from ..findings import ERROR, WARNING
from . import hit, rule
from .corepod import (
    _dict,
    _int,
    _list,
    _str,
    probe_named_ports,
    validate_containers,
    validate_pod_resource_claims,
    validate_resource_requirements,
)
from .coresecurity import (
    validate_annotations,
    validate_container_security,
    validate_pod_annotations,
    validate_pod_security_context,
    validate_profile_annotations_match,
)
from .corespec import (
    validate_affinity,
    validate_dns_config,
    validate_labels,
    validate_pod_spec,
    validate_tolerations,
    validate_topology_spread,
)
from .corevolumes import pv_spec, pvc_spec, validate_volumes

SERVICE, DATA, OBJECTS, CLAIMS, PVS = "AS200", "AS210", "AS220", "AS230", "AS231"

_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _problems(model) -> dict:
    """rule id -> [(object, path, message)], from one walk of the model."""
    try:
        return _CACHE[model]
    except KeyError:
        pass
    by_rule: dict = {}
    # A template's problems depend on nothing but the template and where it sits in its object
    # (a Pod's own spec is checked as a Pod): identical templates (a team's copies of one
    # workload, each in its namespace) are checked once. repr() tells JSON values apart exactly
    # (1, True and 1.0 differ) and costs a fraction of the check.
    seen: dict = {}
    for o, ps in model.workloads():
        key = (ps.path, repr(ps.template))
        out = seen.get(key)
        if out is None:
            out = seen[key] = []
            _pod_template(ps, out)
        for rule_id, path, message in out:
            by_rule.setdefault(rule_id, []).append((o, path, message))
    for o in model.objects:
        out = []
        _object(o, out)
        for rule_id, path, message in out:
            by_rule.setdefault(rule_id, []).append((o, path, message))
    _CACHE[model] = by_rule
    return by_rule


def _report(model, rule_id):
    seen = set()
    for o, path, message in _problems(model).get(rule_id, []):
        key = (id(o), path, message)   # a template seen twice (two pod sets of one object) reports once
        if key not in seen:
            seen.add(key)
            yield hit(o, path, message)


def _pod_template(ps, out) -> None:
    """ValidatePodTemplateSpec (or, for a Pod, validatePodMetadataAndSpec) on one pod template."""
    spec, base = ps.spec, ps.path + ("spec",)
    is_pod = not ps.path
    meta = _dict(ps.template.get("metadata"))
    if not is_pod:
        validate_annotations(_dict(meta.get("annotations")), ps.path + ("metadata", "annotations"), out)
        if _list(spec.get("ephemeralContainers")):
            out.append(("AS100", base + ("ephemeralContainers",),
                        E.forbidden("ephemeral containers not allowed in pod template")))
    else:   # ValidatePodCreate
        if _list(spec.get("ephemeralContainers")):
            out.append(("AS100", base + ("ephemeralContainers",), E.forbidden("cannot be set on create")))
        if _str(spec.get("nodeName")) and _list(spec.get("schedulingGates")):
            out.append(("AS100", base + ("nodeName",), E.forbidden("cannot be set until all schedulingGates have "
                                                                  "been cleared")))
    validate_pod_annotations(_dict(meta.get("annotations")), spec, ps.path + ("metadata", "annotations"), out)
    if isinstance(spec.get("overhead"), dict):   # validateOverhead: ValidateResourceRequirements on the limits
        validate_resource_requirements({"limits": spec["overhead"]}, set(), base + ("overhead",), out)
    pod_name = _str(meta.get("name")) if is_pod else ""
    volumes = validate_volumes(spec, base, pod_name, out)
    claims = {_dict(c).get("name") for c in _list(spec.get("resourceClaims")) if _dict(c).get("name")}
    validate_pod_resource_claims(_list(spec.get("resourceClaims")), base + ("resourceClaims",), out)
    validate_containers(spec, base, volumes, claims, out, is_pod)
    validate_pod_spec(spec, base, out, is_pod)
    validate_dns_config(spec, base, out)
    validate_affinity(spec, base, out)
    validate_tolerations(_list(spec.get("tolerations")), base + ("tolerations",), out)
    validate_topology_spread(_list(spec.get("topologySpreadConstraints")), base + ("topologySpreadConstraints",), out)
    validate_pod_security_context(spec, base, out)
    validate_container_security(spec, base, out)
    validate_profile_annotations_match(_dict(meta.get("annotations")), spec, base, out)
    for key in ("containers", "initContainers"):
        for i, c in enumerate(_list(spec.get(key))):
            if isinstance(c, dict):
                probe_named_ports(c, base + (key, i), out)


def _namespace(o, out) -> None:
    for f in _list(o.spec.get("finalizers")):
        if isinstance(f, str):
            validate_finalizer_name(f, ("spec", "finalizers"), out)


def _claim(o, out) -> None:
    """ValidatePersistentVolumeClaim: its spec as ValidatePersistentVolumeClaimSpec checks it (the same
    checks as a pod's ephemeral claim template, AS140, reported here for the PersistentVolumeClaim
    object; its name is NM001's)."""
    found: list = []
    pvc_spec(_dict(o.body.get("spec")), ("spec",), found)
    out.extend((CLAIMS, path, message) for _, path, message in found)


def _volume(o, out) -> None:
    """ValidatePersistentVolume: ValidatePersistentVolumeSpec on the spec (its name is NM001's)."""
    found: list = []
    pv_spec(_dict(o.body.get("spec")), ("spec",), found)
    out.extend((PVS, path, message) for _, path, message in found)


_CORE_OBJECTS = {
    "PersistentVolume": _volume,
    "PersistentVolumeClaim": _claim,
    "Service": lambda o, out: validate_service(o.body, out),
    "Secret": lambda o, out: validate_secret(o.body, out),
    "ConfigMap": lambda o, out: validate_config_map(o.body, out),
    "Namespace": _namespace,
    "ReplicationController": lambda o, out: validate_rc_spec(o.spec, out),
}


def _object(o, out) -> None:
    check = _CORE_OBJECTS.get(o.kind) if o.group == "" else None
    if check:
        check(o, out)
    validate_metadata_finalizers(_list(_dict(o.body.get("metadata")).get("finalizers")),
                                 apiscope.is_in_tree_group(o.group), out)
    # ValidateObjectMeta's annotations, every object (a Pod's included: its template walk checks only the
    # pod-specific annotations)
    validate_annotations(_dict(_dict(o.body.get("metadata")).get("annotations")), ("metadata", "annotations"), out)


# ---------------------------------------------------------------- Service

_SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
KUBELET_PORT = 10250   # pkg/cluster/ports KubeletPort


def validate_service(body: dict, out: list) -> None:
    """ValidateService beyond AS010 (port numbers, names required and unique, (port, protocol) once,
    nodePort on ClusterIP): type-specific fields, selector labels, session affinity, cluster IPs, external
    IPs, source ranges, traffic policies, load balancer class, and validateServicePort's protocol,
    name format, named targetPort and appProtocol. Defaults (SetDefaults_Service) stand for absent
    fields: type ClusterIP, sessionAffinity None, protocol TCP, targetPort = port,
    externalTrafficPolicy Cluster where externally accessible, internalTrafficPolicy Cluster; cluster
    IPs and node ports are allocated before validation."""
    spec = _dict(body.get("spec"))
    kind = spec.get("type", "ClusterIP")
    headless = _list(spec.get("clusterIPs"))[:1] == ["None"] or spec.get("clusterIP") == "None"
    if isinstance(kind, str) and kind not in _SERVICE_TYPES:
        out.append((SERVICE, ("spec", "type"), E.required() if not kind else E.not_supported(kind, _SERVICE_TYPES)))
    ports = _list(spec.get("ports"))
    if not ports and not headless and kind != "ExternalName":
        out.append((SERVICE, ("spec", "ports"), E.required()))
    _type_fields(spec, kind, headless, out)
    for i, p in enumerate(ports):
        if isinstance(p, dict):
            _service_port(p, ("spec", "ports", i), out)
        if kind == "LoadBalancer" and _dict(p).get("port") == KUBELET_PORT:
            out.append((SERVICE, ("spec", "ports", i), E.invalid(KUBELET_PORT, f"may not expose port {KUBELET_PORT} "
                                                                               f"externally since it is used by "
                                                                               f"kubelet")))
    _node_ports(ports, out)
    if isinstance(spec.get("selector"), dict):
        validate_labels(spec["selector"], ("spec", "selector"), out, SERVICE)
    _session_affinity(spec, out)
    _cluster_ips(spec, kind, headless, out)
    _external(body, spec, kind, out)


def _node_ports(ports, out):
    """ValidateService: a (protocol, nodePort) once."""
    seen: set = set()
    for i, p in enumerate(ports):
        p = _dict(p)
        if _int(p.get("nodePort")) and p["nodePort"] != 0:
            key = (p.get("protocol", "TCP"), p["nodePort"])
            if key in seen:
                out.append((SERVICE, ("spec", "ports", i, "nodePort"), E.duplicate(p["nodePort"])))
            seen.add(key)


def _type_fields(spec, kind, headless, out):
    if kind in ("LoadBalancer", "NodePort") and headless:
        out.append((SERVICE, ("spec", "clusterIPs", 0), E.invalid("None", f"may not be set to 'None' for {kind} "
                                                                          f"services")))
    if kind == "ExternalName":
        for key in ("clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if spec.get(key) not in (None, []):
                out.append((SERVICE, ("spec", key), E.forbidden("may not be set for ExternalName services")))
        cname = _str(spec.get("externalName")).removesuffix(".")
        if cname:
            out.extend((SERVICE, ("spec", "externalName"), E.invalid(cname, m)) for m in E.is_dns1123_subdomain(cname))
        else:
            out.append((SERVICE, ("spec", "externalName"), E.required()))
    lb_class = spec.get("loadBalancerClass")   # validateLoadBalancerClassField
    if isinstance(lb_class, str):
        if kind == "LoadBalancer":
            out.extend((SERVICE, ("spec", "loadBalancerClass"), E.invalid(lb_class, m))
                       for m in E.is_qualified_name(lb_class))
        else:
            out.append((SERVICE, ("spec", "loadBalancerClass"), E.forbidden("may only be used when `type` is "
                                                                            "'LoadBalancer'")))
    if spec.get("allocateLoadBalancerNodePorts") is not None and kind != "LoadBalancer":
        out.append((SERVICE, ("spec", "allocateLoadBalancerNodePorts"), E.forbidden("may only be used when `type` is "
                                                                                    "'LoadBalancer'")))


_PROTOCOLS = ("SCTP", "TCP", "UDP")


def _service_port(p, at, out):
    """validateServicePort: the name's format, the protocol, a targetPort given as a string
    (ValidatePortNumOrName: a string is a port name, so a quoted number is refused: "must contain at
    least one letter"; other bad names are NM002's) and appProtocol."""
    name = p.get("name")
    if isinstance(name, str) and name:
        out.extend((SERVICE, at + ("name",), E.invalid(name, m)) for m in E.is_dns1123_label(name))
    proto = p.get("protocol", "TCP")
    if isinstance(proto, str) and proto not in _PROTOCOLS:
        out.append((SERVICE, at + ("protocol",), E.required() if not proto else E.not_supported(proto, _PROTOCOLS)))
    target = p.get("targetPort")
    if isinstance(target, str) and (target.isdigit() or not target):
        out.extend((SERVICE, at + ("targetPort",), E.invalid(target, m)) for m in E.is_valid_port_name(target))
    app = p.get("appProtocol")
    if isinstance(app, str):
        out.extend((SERVICE, at + ("appProtocol",), E.invalid(app, m)) for m in E.is_qualified_name(app))


def _session_affinity(spec, out):
    affinity = spec.get("sessionAffinity", "None")
    if isinstance(affinity, str) and affinity not in ("ClientIP", "None"):
        out.append((SERVICE, ("spec", "sessionAffinity"), E.required() if not affinity else
                    E.not_supported(affinity, ["ClientIP", "None"])))
    config = spec.get("sessionAffinityConfig")
    if affinity == "None" and config is not None:
        out.append((SERVICE, ("spec", "sessionAffinityConfig"), E.forbidden("must not be set when session affinity "
                                                                            "is None")))
    elif affinity == "ClientIP":
        # validateClientIPAffinityConfig, after SetDefaults_Service's timeoutSeconds (10800)
        timeout = _dict(_dict(config).get("clientIP")).get("timeoutSeconds", 10800)
        if _int(timeout) and not 0 < timeout <= 86400:
            out.append((SERVICE, ("spec", "sessionAffinityConfig", "clientIP", "timeoutSeconds"),
                        E.invalid(timeout, "must be greater than 0 and less than 86400")))


def _cluster_ips(spec, kind, headless, out):
    """ValidateServiceClusterIPsRelatedFields (clusterIPs is defaulted from clusterIP)."""
    if kind == "ExternalName":
        return
    ip, ips = spec.get("clusterIP"), _list(spec.get("clusterIPs"))
    at = ("spec", "clusterIPs")
    if _str(ip) and ips and ips[0] != ip:
        out.append((SERVICE, at, E.invalid(ips, "first value must match `clusterIP`")))
    if not ips and _str(ip):
        ips = [ip]
    seen: set = set()
    for i, fam in enumerate(_list(spec.get("ipFamilies"))):
        if isinstance(fam, str) and fam not in ("IPv4", "IPv6"):
            out.append((SERVICE, ("spec", "ipFamilies", i), E.not_supported(fam, ["IPv4", "IPv6"])))
        if fam in seen:
            out.append((SERVICE, ("spec", "ipFamilies", i), E.duplicate(fam)))
        seen.add(fam)
    policy = spec.get("ipFamilyPolicy")
    if isinstance(policy, str) and policy not in ("PreferDualStack", "RequireDualStack", "SingleStack"):
        out.append((SERVICE, ("spec", "ipFamilyPolicy"), E.not_supported(policy, ["PreferDualStack",
                                                                                  "RequireDualStack", "SingleStack"])))
    _cluster_ip_values(spec, ips, headless, at, out)


def _cluster_ip_values(spec, ips, headless, at, out):
    bad = False
    for i, v in enumerate(ips):
        if i == 0 and v == "None":
            if len(ips) > 1:
                bad = True
                out.append((SERVICE, at, E.invalid(ips, "'None' must be the first and only value")))
            continue
        if isinstance(v, str) and not E.is_valid_ip(v):
            bad = True
            out.append((SERVICE, at + (i,), E.invalid(v, E.IP_MESSAGE)))
    if len(ips) > 2:
        out.append((SERVICE, at, E.invalid(ips, "may only hold up to 2 values")))
    if not bad:
        _families(spec, ips, headless, at, out)


def _families(spec, ips, headless, at, out):
    if len(ips) > 1 and (":" in str(ips[0])) == (":" in str(ips[1])):
        out.append((SERVICE, at, E.invalid(ips, "may specify no more than one IP for each IP family")))
    families = _list(spec.get("ipFamilies"))
    if not headless:
        for i, v in enumerate(ips[:len(families)]):
            v6 = ":" in str(v)
            if families[i] == "IPv4" and v6 or families[i] == "IPv6" and not v6:
                want = "IPv4" if families[i] == "IPv4" else "IPv6"
                out.append((SERVICE, at + (i,), E.invalid(v, f"expected an {want} value as indicated by "
                                                             f"`ipFamilies[{i}]`")))


def _special_ip(v: str):
    """ValidateNonSpecialIP."""
    import ipaddress
    try:
        ip = ipaddress.ip_address(".".join(str(int(x)) for x in v.split(".")) if "." in v and ":" not in v else v)
    except ValueError:
        return "must be a valid IP address"
    if ip.is_unspecified:
        return f"may not be unspecified ({v})"
    if ip.is_loopback:
        return "may not be in the loopback range (127.0.0.0/8, ::1/128)"
    if ip.is_link_local:
        return "may not be in the link-local range (169.254.0.0/16, fe80::/10)"
    if ip.is_multicast and (ip in ipaddress.ip_network("224.0.0.0/24") if ip.version == 4
                            else ip in ipaddress.ip_network("ff02::/16")):
        return "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"
    return None


def _external(body, spec, kind, out):
    _external_ips(spec, out)
    _source_ranges(body, spec, kind, out)
    _traffic(body, spec, kind, out)


def _external_ips(spec, out):
    for i, ip in enumerate(_list(spec.get("externalIPs"))):
        if not isinstance(ip, str):
            continue
        if not E.is_valid_ip(ip):
            out.append((SERVICE, ("spec", "externalIPs", i), E.invalid(ip, E.IP_MESSAGE)))
        elif _special_ip(ip):
            out.append((SERVICE, ("spec", "externalIPs", i), E.invalid(ip, _special_ip(ip))))


def _source_ranges(body, spec, kind, out):
    ranges = _list(spec.get("loadBalancerSourceRanges"))
    annotation = _dict(_dict(body.get("metadata")).get("annotations")).get(
        "service.beta.kubernetes.io/load-balancer-source-ranges")
    if ranges:
        if kind != "LoadBalancer":
            out.append((SERVICE, ("spec", "LoadBalancerSourceRanges"), E.forbidden("may only be used when `type` is "
                                                                                   "'LoadBalancer'")))
        for i, r in enumerate(ranges):
            if isinstance(r, str) and not _cidr(r.strip()):
                out.append((SERVICE, ("spec", "LoadBalancerSourceRanges", i), E.invalid(
                    r.strip(), "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")))
    elif isinstance(annotation, str):
        at = ("metadata", "annotations", "service.beta.kubernetes.io/load-balancer-source-ranges")
        if kind != "LoadBalancer":
            out.append((SERVICE, at, E.forbidden("may only be used when `type` is 'LoadBalancer'")))
        for r in annotation.strip().split(",") if annotation.strip() else []:
            if not _cidr(r.strip()):
                out.append((SERVICE, at, E.invalid(r.strip(), "must be a valid CIDR value, (e.g. 10.9.8.0/24 or "
                                                              "2001:db8::/64)")))


def _traffic(body, spec, kind, out):
    """validateServiceExternalTrafficPolicy, validateServiceInternalTrafficFieldsValue,
    validateServiceTrafficDistribution, and the topology annotations of ValidateService."""
    accessible = kind in ("LoadBalancer", "NodePort") or (kind == "ClusterIP" and _list(spec.get("externalIPs")))
    policy = spec.get("externalTrafficPolicy")
    if isinstance(policy, str):   # validateServiceExternalTrafficPolicy
        if not accessible:
            out.append((SERVICE, ("spec", "externalTrafficPolicy"), E.invalid(policy, "may only be set for "
                                                                                      "externally-accessible services")))
        elif policy not in ("Cluster", "Local"):
            out.append((SERVICE, ("spec", "externalTrafficPolicy"), E.required() if not policy else
                        E.not_supported(policy, ["Cluster", "Local"])))
    _health_check(spec, kind, policy, out)
    _internal(body, spec, out)


def _health_check(spec, kind, policy, out):
    health = spec.get("healthCheckNodePort")
    if _int(health) and health != 0:
        if not (kind == "LoadBalancer" and policy == "Local"):
            out.append((SERVICE, ("spec", "healthCheckNodePort"), E.invalid(health, "may only be set when `type` is "
                                                                                    "'LoadBalancer' and "
                                                                                    "`externalTrafficPolicy` is "
                                                                                    "'Local'")))
        elif not E.port_num(health):
            out.append((SERVICE, ("spec", "healthCheckNodePort"), E.invalid(health, E.PORT_RANGE)))


def _internal(body, spec, out):
    internal = spec.get("internalTrafficPolicy")
    if isinstance(internal, str) and internal not in ("Cluster", "Local"):
        out.append((SERVICE, ("spec", "internalTrafficPolicy"), E.not_supported(internal, ["Cluster", "Local"])))
    dist = spec.get("trafficDistribution")
    if isinstance(dist, str) and dist != "PreferClose":
        out.append((SERVICE, ("spec", "trafficDistribution"), E.not_supported(dist, ["PreferClose"])))
    annotations = _dict(_dict(body.get("metadata")).get("annotations"))
    hints, mode = annotations.get("service.kubernetes.io/topology-aware-hints"), \
        annotations.get("service.kubernetes.io/topology-mode")
    if hints is not None and mode is not None and hints != mode:
        out.append((SERVICE, ("metadata", "annotations", "service.kubernetes.io/topology-mode"),
                    E.invalid(mode, "must match annotations[service.kubernetes.io/topology-aware-hints] when both are "
                                    "specified")))


def _cidr(v: str) -> bool:
    """IsValidCIDR (netutils.ParseCIDRSloppy)."""
    import ipaddress
    addr, slash, bits = v.partition("/")
    if not slash or not bits.isdigit() or not E.is_valid_ip(addr):
        return False
    return int(bits) <= (128 if ":" in addr else 32) and bool(ipaddress) is True


# ---------------------------------------------------------------- ConfigMap, Secret

MAX_SECRET = 1024 * 1024   # core.MaxSecretSize


def b64_error(text: str) -> str | None:
    """Go's base64.StdEncoding decoding of a JSON []byte field: the message of its
    CorruptInputError ("illegal base64 data at input byte N"), or None when it decodes.
    Carriage returns and newlines are skipped, as Go skips them."""
    chars = [(i, ch) for i, ch in enumerate(text) if ch not in "\r\n"]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    k = 0
    while k < len(chars):
        quantum = chars[k:k + 4]
        for j, (i, ch) in enumerate(quantum):
            if ch in alphabet:
                continue
            if ch != "=" or j < 2:
                return f"illegal base64 data at input byte {i}"
            rest = chars[k + j:]
            want = 2 if j == 2 else 1
            if len(rest) < want or any(c != "=" for _, c in rest[:want]):
                return f"illegal base64 data at input byte {rest[1][0] if len(rest) > 1 else len(text)}"
            if len(rest) > want:
                return f"illegal base64 data at input byte {rest[want][0]}"
            return None
        if len(quantum) < 4:
            return f"illegal base64 data at input byte {quantum[0][0]}"
        k += 4
    return None


def validate_secret(body: dict, out: list) -> None:
    """The decoding of `data` (base64, before validation) and ValidateSecret beyond AS015 (keys, size
    and the TLS / dockerconfigjson keys): the service-account-token annotation, dockercfg and
    dockerconfigjson contents as JSON, basic-auth and ssh-auth keys. stringData is merged into data
    before validation."""
    data = _dict(body.get("data"))
    decoded: dict = {}
    for key, value in sorted(data.items(), key=lambda kv: str(kv[0])):
        if not isinstance(value, str):
            continue
        err = b64_error(value)
        if err:
            out.append((DATA, ("data", key), f'Secret in version "v1" cannot be handled as a Secret: {err}'))
        else:
            decoded[key] = base64.b64decode(value.replace("\n", "").replace("\r", ""))
    for key, value in _dict(body.get("stringData")).items():
        decoded[key] = str(value).encode()
    _secret_type(body, data, decoded, out)


def _secret_type(body, data, decoded, out):
    kind = body.get("type", "Opaque")
    present = set(data) | set(_dict(body.get("stringData")))
    annotations = _dict(_dict(body.get("metadata")).get("annotations"))
    if kind == "kubernetes.io/service-account-token" and not _str(annotations.get("kubernetes.io/service-account.name")):
        out.append((DATA, ("metadata", "annotations", "kubernetes.io/service-account.name"), E.required()))
    elif kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        key = ".dockercfg" if kind == "kubernetes.io/dockercfg" else ".dockerconfigjson"
        if key not in present:
            if kind == "kubernetes.io/dockercfg":   # dockerconfigjson's missing key is AS015's
                out.append((DATA, ("data", key), E.required()))
        elif key in decoded:
            _docker_json(decoded[key], key, out)
    elif kind == "kubernetes.io/basic-auth" and not present & {"username", "password"}:
        out.append((DATA, ("data", "username"), E.required()))
        out.append((DATA, ("data", "password"), E.required()))
    elif kind == "kubernetes.io/ssh-auth" and not decoded.get("ssh-privatekey"):
        out.append((DATA, ("data", "ssh-privatekey"), E.required()))


def _docker_json(raw: bytes, key: str, out: list) -> None:
    try:
        ok = isinstance(json.loads(raw), dict)
    except (ValueError, UnicodeDecodeError) as e:
        out.append((DATA, ("data", key), E.invalid("<secret contents redacted>", _json_error(e))))
        return
    if not ok:
        out.append((DATA, ("data", key), E.invalid("<secret contents redacted>", "json: cannot unmarshal into Go "
                                                                                 "value of type map[string]interface "
                                                                                 "{}")))


def _json_error(e: Exception) -> str:
    """encoding/json's message for the common case (Go's wording differs in detail)."""
    return f"invalid character in JSON ({e})"


def validate_config_map(body: dict, out: list) -> None:
    """ValidateConfigMap beyond AS015: the binaryData values are base64 (decoding, before validation)."""
    for key, value in sorted(_dict(body.get("binaryData")).items(), key=lambda kv: str(kv[0])):
        if isinstance(value, str):
            err = b64_error(value)
            if err:
                out.append((DATA, ("binaryData", key), f'ConfigMap in version "v1" cannot be handled as a ConfigMap: '
                                                       f'{err}'))


# ---------------------------------------------------------------- Namespace, ReplicationController

# helper.IsStandardFinalizerName: standardFinalizers.
_STANDARD_FINALIZERS = {"kubernetes", "orphan", "foregroundDeletion"}


def validate_finalizer_name(name: str, at: tuple, out: list) -> None:
    """validateFinalizerName: apimachinery ValidateFinalizerName (a qualified name) and
    validateKubeFinalizerName."""
    msgs = E.is_qualified_name(name)
    out.extend((OBJECTS, at, E.invalid(name, m)) for m in msgs)
    if not msgs and "/" not in name and name not in _STANDARD_FINALIZERS:
        out.append((OBJECTS, at, E.invalid(name, "name is neither a standard finalizer name nor is it fully "
                                                 "qualified")))


def validate_metadata_finalizers(finalizers: list, in_tree: bool, out: list) -> None:
    """apimachinery v0.31.1 pkg/api/validation/objectmeta.go ValidateFinalizers (every object, custom
    resources too: each name a qualified name, reported at metadata.finalizers; orphan and
    foregroundDeletion not both), and for Kubernetes' own kinds core ValidateObjectMeta's
    validateKubeFinalizerName at metadata.finalizers[i] (the qualified-name check again, then a
    name without '/' must be a standard finalizer)."""
    at = ("metadata", "finalizers")
    for i, f in enumerate(finalizers):
        if isinstance(f, str):
            out.extend((OBJECTS, at, E.invalid(f, m)) for m in E.is_qualified_name(f))
            if in_tree:
                validate_finalizer_name(f, at + (i,), out)
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        out.append((OBJECTS, at, E.invalid([f for f in finalizers if isinstance(f, str)],
                                           "finalizer orphan and foregroundDeletion cannot be both set")))


def validate_rc_spec(spec: dict, out: list) -> None:
    """ValidateReplicationControllerSpec and ValidatePodTemplateSpecForRC (the template's pod spec is
    checked with every pod template). An empty selector defaults to the template's labels
    (SetDefaults_ReplicationController)."""
    for key in ("minReadySeconds", "replicas"):
        v = spec.get(key)
        if _int(v) and v < 0:
            out.append((OBJECTS, ("spec", key), E.invalid(v, E.NEGATIVE)))
    template = spec.get("template")
    if not isinstance(template, dict):
        out.append((OBJECTS, ("spec", "template"), E.required()))
        return
    labels = _dict(_dict(template.get("metadata")).get("labels"))
    selector = _dict(spec.get("selector")) or labels
    if not selector:   # ValidateNonEmptySelector
        out.append((OBJECTS, ("spec", "selector"), E.required()))
    elif any(labels.get(k) != v for k, v in selector.items()):
        out.append((OBJECTS, ("spec", "template", "metadata", "labels"),
                    E.invalid(labels, "`selector` does not match template `labels`")))
    validate_labels(_dict(spec.get("selector")), ("spec", "selector"), out, OBJECTS)
    tspec = _dict(template.get("spec"))
    policy = tspec.get("restartPolicy", "Always")
    if policy != "Always":
        out.append((OBJECTS, ("spec", "template", "spec", "restartPolicy"), E.not_supported(policy, ["Always"])))
    if tspec.get("activeDeadlineSeconds") is not None:
        out.append((OBJECTS, ("spec", "template", "spec", "activeDeadlineSeconds"),
                    E.forbidden("activeDeadlineSeconds in ReplicationController is not Supported")))


# ---------------------------------------------------------------- the rules

_US = "API server, Kubernetes v1.31.1 pkg/apis/core/validation"


def _register(rule_id: str, severity: str, summary: str, hint: str) -> None:
    rule(rule_id, severity, summary, hint)(lambda model: _report(model, rule_id))


for _id, _summary, _hint in (
    ("AS100", f"a pod spec field the API server refuses: restartPolicy, dnsPolicy, preemptionPolicy, nodeSelector "
              f"labels, names (serviceAccountName, hostname, subdomain, priorityClassName, runtimeClassName), "
              f"activeDeadlineSeconds, hostAliases, readiness and scheduling gates, imagePullSecrets, hostNetwork "
              f"ports, os ({_US}: ValidatePodSpec, ValidatePodTemplateSpec)",
     "use the values the field allows; with hostNetwork, hostPort equals containerPort"),
    ("AS101", f"a pod's DNS config: nameservers (at most 3 IPs), searches (at most 32 DNS names), dnsPolicy None "
              f"without nameservers ({_US}: validatePodDNSConfig)",
     "with dnsPolicy None give dnsConfig.nameservers; keep searches to valid DNS names"),
    ("AS110", f"a container the API server refuses: name not a DNS-1123 label, image missing, "
              f"terminationMessagePolicy or imagePullPolicy unknown, restartPolicy on a regular container or other "
              f"than Always on an init container, probes or lifecycle on an init container without restartPolicy "
              f"Always, ephemeral container fields ({_US}: validateContainerCommon, validateContainers, "
              f"validateInitContainers, validateEphemeralContainers)",
     "name containers with lowercase letters, digits and '-'; give every container an image"),
    ("AS120", f"a probe or lifecycle hook with no handler or more than one, a negative timing, an exec without "
              f"command, an httpGet scheme other than HTTP/HTTPS, an invalid named port or header, a readiness probe "
              f"with terminationGracePeriodSeconds, a sleep longer than the grace period ({_US}: validateProbe, "
              f"validateHandler, validateHTTPGetAction, validateExecAction, validateSleepAction, "
              f"validateReadinessProbe)",
     "give each probe exactly one of exec, httpGet, tcpSocket, grpc; timings >= 0; ports by number or by a "
     "container port's name"),
    ("AS130", f"an env var with an invalid name, a valueFrom with no source or more than one (or with value), an "
              f"invalid fieldRef / resourceFieldRef / key selector, an envFrom with no or two sources ({_US}: "
              f"ValidateEnv, validateEnvVarValueFrom, validateObjectFieldSelector, "
              f"validateContainerResourceFieldSelector, ValidateEnvFrom)",
     "give each env var either value or exactly one valueFrom source"),
    ("AS140", f"a volume the API server refuses: no source or more than one, a name that is not a DNS-1123 label, "
              f"a source's required field missing or invalid (secret, configMap, projected, downwardAPI, "
              f"hostPath, nfs, csi, ephemeral, ...), file modes above 0777 ({_US}: ValidateVolumes, "
              f"validateVolumeSource and the validate*VolumeSource functions)",
     "give each volume exactly one source with its required fields"),
    ("AS141", f"a volume mount or device the API server refuses: subPath absolute or with '..', subPath with "
              f"subPathExpr, mountPropagation unknown or Bidirectional without privileged, recursiveReadOnly without "
              f"readOnly, device and mount sharing a volume or path ({_US}: ValidateVolumeMounts, "
              f"validateMountPropagation, validateMountRecursiveReadOnly, ValidateVolumeDevices)",
     "keep subPath relative and without '..'; Bidirectional propagation needs a privileged container"),
    ("AS150", f"a container resource the API server refuses: a name that is neither standard nor a qualified "
              f"extended resource, a negative quantity, a fractional extended resource, huge pages without cpu or "
              f"memory, a resource claim not in the pod's resourceClaims ({_US}: ValidateResourceRequirements, "
              f"validateContainerResourceName, ValidateResourceQuantityValue, validateResourceClaimNames)",
     "request cpu, memory, ephemeral-storage, hugepages-* or domain/name extended resources in whole numbers"),
    ("AS160", f"node or pod affinity the API server refuses: an operator other than In, NotIn, Exists, "
              f"DoesNotExist, Gt, Lt; values with Exists; no values with In; no node selector terms; weights outside "
              f"1-100; an empty topologyKey; invalid label keys or values ({_US}: validateAffinity, "
              f"ValidateNodeSelectorRequirement, validatePodAffinityTerm, ValidatePreferredSchedulingTerms)",
     "use In/NotIn with values, Exists/DoesNotExist without, Gt/Lt with one; weights 1-100"),
    ("AS161", f"a toleration the API server refuses: operator other than Equal/Exists, a value with Exists, an "
              f"empty key without Exists, an effect other than NoSchedule/PreferNoSchedule/NoExecute, "
              f"tolerationSeconds without NoExecute ({_US}: ValidateTolerations)",
     "operator Exists takes no value; tolerationSeconds only with effect NoExecute"),
    ("AS162", f"a topology spread constraint the API server refuses: maxSkew or minDomains not positive, minDomains "
              f"without DoNotSchedule, an unknown whenUnsatisfiable or node policy, a repeated (topologyKey, "
              f"whenUnsatisfiable), matchLabelKeys overlapping the selector ({_US}: validateTopologySpreadConstraints)",
     "maxSkew >= 1; whenUnsatisfiable DoNotSchedule or ScheduleAnyway; one constraint per topologyKey and action"),
    ("AS170", f"a security context the API server refuses: user or group ids outside 0-2147483647, sysctl names, "
              f"seccomp or AppArmor profiles, procMount, allowPrivilegeEscalation false with privileged or "
              f"CAP_SYS_ADMIN, fsGroupChangePolicy, windowsOptions on a linux pod ({_US}: "
              f"validatePodSpecSecurityContext, ValidateSecurityContext, validateSysctls, "
              f"validateSeccompProfileField, ValidateAppArmorProfileField, validateLinux)",
     "fix the named security context field; a Localhost profile needs localhostProfile"),
    ("AS180", f"a container port with an unknown protocol or containerPort 0, or two containers on one hostPort "
              f"({_US}: validateContainerPorts, AccumulateUniqueHostPorts)",
     "protocol TCP, UDP or SCTP; one container per host port and protocol"),
    ("AS190", f"annotations the API server refuses: keys that are not qualified names, over 256 KiB in all, "
              f"invalid seccomp, AppArmor, tolerations or deletion-cost pod annotations ({_US}: ValidateAnnotations, "
              f"ValidatePodSpecificAnnotations)",
     "annotation keys: an optional DNS prefix, '/', and a name of at most 63 characters"),
    ("AS200", f"a Service field the API server refuses: type, protocol, port names, a targetPort written as a "
              f"quoted number (a string is a port name), selector labels, session affinity, cluster and external "
              f"IPs, source ranges, traffic policies, load balancer class, ExternalName fields ({_US}: "
              f"ValidateService, validateServicePort, ValidateServiceClusterIPsRelatedFields)",
     "write targetPort as a number or a container port's name; use the values each field allows"),
    ("AS210", f"Secret or ConfigMap data the API server refuses: data or binaryData values that are not base64, a "
              f"service-account-token Secret without its annotation, dockercfg / dockerconfigjson contents that are "
              f"not a JSON object, basic-auth or ssh-auth Secrets without their keys ({_US}: ValidateSecret, "
              f"ValidateConfigMap, and the decoding before them)",
     "put plain text under stringData (the server encodes it), or base64-encode values under data"),
    ("AS220", f"a finalizer name (any object's metadata.finalizers, or a Namespace's spec), or a ReplicationController "
              f"spec, the API server refuses: a finalizer that is not a qualified name, or without '/' and not a "
              f"standard one, orphan with foregroundDeletion; negative replicas "
              f"or minReadySeconds, a selector that misses the template's labels, a restartPolicy other than Always, "
              f"activeDeadlineSeconds ({_US}: ValidateNamespace, validateFinalizerName, validateKubeFinalizerName, "
              f"apimachinery ValidateFinalizers, ValidateReplicationControllerSpec, ValidatePodTemplateSpecForRC)",
     "finalizers are standard names (kubernetes, orphan, foregroundDeletion) or domain/name; a "
     "ReplicationController's pods restart Always and carry the selector's labels"),
    ("AS230", f"a PersistentVolumeClaim the API server refuses: no access mode or an unknown one, "
              f"ReadWriteOncePod with another mode, no or a non-positive storage request, an unknown volumeMode, a "
              f"storageClassName that is not a DNS subdomain, a bad selector or data source ({_US}: "
              f"ValidatePersistentVolumeClaim, ValidatePersistentVolumeClaimSpec)",
     "accessModes from ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ReadWriteOncePod; resources.requests.storage "
     "above 0; storageClassName in lowercase letters, digits, '-' and '.'"),
    ("AS231", f"a PersistentVolume the API server refuses: no access mode or an unknown one, a capacity other than "
              f"a positive storage, an unknown reclaim policy, no volume source or more than one, a source's "
              f"required field (a CSI driver and volumeHandle, a local path with node affinity, ...), node affinity "
              f"without required terms, a bad storageClassName or volumeMode ({_US}: ValidatePersistentVolume, "
              f"ValidatePersistentVolumeSpec, validateCSIPersistentVolumeSource, validateLocalVolumeSource)",
     "give the PersistentVolume access modes, capacity.storage above 0 and exactly one volume source with its "
     "required fields"),
):
    _register(_id, ERROR, _summary, _hint)

_register("AS121", WARNING, "a probe's httpGet or tcpSocket port names no port of its container: the kubelet cannot "
          "resolve it and the probe fails every time (pkg/probe ResolveContainerPort, findPortByName; the API server accepts it)",
          "name the port in the container's ports, or probe the number")
