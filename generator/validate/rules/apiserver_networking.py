"""networking.k8s.io/v1 Ingress and NetworkPolicy as the API server validates them on
create: kubernetes v1.31 pkg/apis/networking/validation/validation.go
(ValidateIngressCreate, ValidateIngressSpec, validateIngressRules,
validateHTTPIngressRuleValue, validateHTTPIngressPath, validateIngressBackend,
validateIngressTypedLocalObjectReference, validateIngressTLS, ValidateNetworkPolicySpec,
ValidateNetworkPolicyPort, ValidateNetworkPolicyPeer, ValidateIPBlock), after
pkg/apis/networking/v1/defaults.go (a path without pathType is ImplementationSpecific,
a port without protocol TCP)."""
from __future__ import annotations

from .. import apierrors as E, apimachinery as M
from ..findings import ERROR
from . import hit, rule

PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]   # supportedPathTypes.List()
INVALID_PATH_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
INVALID_PATH_SUFFIXES = ("/..", "/.")
INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"
PROTOCOLS = ["TCP", "UDP", "SCTP"]


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _list(v) -> list:
    return v if isinstance(v, list) else []


# ----------------------------------------------------------------- Ingress


@rule("AS370", ERROR, "an Ingress the API server refuses: neither rules nor defaultBackend, an IP or a bad DNS name "
      "as host, an http rule without paths, a path that is not absolute or holds '//', '/./', '/../' or ends in "
      "'/.' or '/..', an unknown pathType, a backend with both or neither of service and resource, a service port "
      "with both or neither of name and number, a bad TLS host or secret name, ingressClassName differing from the "
      "kubernetes.io/ingress.class annotation (API server: ValidateIngressCreate, ValidateIngressSpec, "
      "validateIngressRules, validateHTTPIngressPath, validateIngressBackend, validateIngressTLS)",
      "each path: pathType Prefix, Exact or ImplementationSpecific, a path starting with '/', and a backend naming "
      "a service with port.number or port.name")
def ingress(model):
    for o in model.all("networking.k8s.io", "Ingress"):
        spec = o.spec
        rules, default = _list(spec.get("rules")), spec.get("defaultBackend")
        if not rules and default is None:
            yield hit(o, ("spec",), E.invalid(rules or None, "either `defaultBackend` or `rules` must be specified"))
        if isinstance(default, dict):
            yield from _backend(o, ("spec", "defaultBackend"), default)
        for i, r in enumerate(rules):
            if isinstance(r, dict):
                yield from _ingress_rule(o, ("spec", "rules", i), r)
        for i, tls in enumerate(_list(spec.get("tls"))):
            yield from _tls(o, ("spec", "tls", i), _dict(tls))
        name = spec.get("ingressClassName")
        if isinstance(name, str):
            for message in M.dns1123_subdomain(name):
                yield hit(o, ("spec", "ingressClassName"), E.invalid(name, message))
        annotation = o.annotations.get(INGRESS_CLASS_ANNOTATION)
        if annotation is not None and isinstance(name, str) and annotation != name:
            yield hit(o, ("metadata", "annotations", INGRESS_CLASS_ANNOTATION),
                      E.invalid(annotation, "must match `ingressClassName` when both are specified"))


def _host(o, at, host: str):
    if M.ip(host):
        yield hit(o, at, E.invalid(host, "must be a DNS name, not an IP address"))
    messages = M.wildcard_dns1123_subdomain(host) if "*" in host else M.dns1123_subdomain(host)
    for message in messages:
        yield hit(o, at, E.invalid(host, message))


def _ingress_rule(o, at, r):
    host = r.get("host")
    if isinstance(host, str) and host:
        yield from _host(o, at + ("host",), host)
    http = r.get("http")
    if not isinstance(http, dict):
        return
    paths = _list(http.get("paths"))
    if not paths:
        yield hit(o, at + ("http", "paths"), E.required())
    for i, p in enumerate(paths):
        if isinstance(p, dict):
            yield from _path(o, at + ("http", "paths", i), p)


def _path(o, at, p):
    kind = p.get("pathType") or "ImplementationSpecific"   # SetDefaults_HTTPIngressPath
    path = p.get("path") if isinstance(p.get("path"), str) else ""
    if kind in ("Exact", "Prefix"):
        if not path.startswith("/"):
            yield hit(o, at + ("path",), E.invalid(path, "must be an absolute path"))
        for seq in INVALID_PATH_SEQUENCES if path else ():
            if seq in path:
                yield hit(o, at + ("path",), E.invalid(path, f"must not contain '{seq}'"))
        for suffix in INVALID_PATH_SUFFIXES if path else ():
            if path.endswith(suffix):
                yield hit(o, at + ("path",), E.invalid(path, f"cannot end with '{suffix}'"))
    elif kind == "ImplementationSpecific":
        if path and not path.startswith("/"):
            yield hit(o, at + ("path",), E.invalid(path, "must be an absolute path"))
    else:
        yield hit(o, at + ("pathType",), E.not_supported(kind, PATH_TYPES))
    backend = p.get("backend")
    if isinstance(backend, dict):
        yield from _backend(o, at + ("backend",), backend)


def _backend(o, at, b):
    resource, service = b.get("resource"), b.get("service")
    if resource is not None and service is not None:
        yield hit(o, at, E.invalid("", "cannot set both resource and service backends"))
    elif isinstance(resource, dict):
        yield from _typed_reference(o, at + ("resource",), resource)
    elif isinstance(service, dict):
        yield from _service_backend(o, at, service)
    elif resource is None and service is None:
        yield hit(o, at, E.invalid("", "resource or service backend is required"))


def _service_backend(o, at, service):
    name = service.get("name")
    if not name:
        yield hit(o, at + ("service", "name"), E.required())
    elif isinstance(name, str):
        for message in M.dns1035_label(name):   # ValidateServiceName
            yield hit(o, at + ("service", "name"), E.invalid(name, message))
    yield from _service_port(o, at, _dict(service.get("port")))


def _service_port(o, at, port):
    """validateIngressBackend: a service port by name or by number, not both."""
    port_name, number = port.get("name") or "", port.get("number") or 0
    if port_name and number:
        yield hit(o, at, E.invalid("", "cannot set both port name & port number"))
    elif port_name and isinstance(port_name, str):
        for message in M.port_name(port_name):
            yield hit(o, at + ("service", "port", "name"), E.invalid(port_name, message))
    elif number and M.is_int(number):
        if not E.port_num(number):
            yield hit(o, at + ("service", "port", "number"), E.invalid(number, E.PORT_RANGE))
    elif not port_name and not number:
        yield hit(o, at, E.required("port name or number is required"))


def _typed_reference(o, at, ref):
    """validateIngressTypedLocalObjectReference."""
    group = ref.get("apiGroup")
    if isinstance(group, str):
        for message in M.dns1123_subdomain(group):
            yield hit(o, at + ("apiGroup",), E.invalid(group, message))
    for key in ("kind", "name"):
        v = ref.get(key)
        if not v:
            yield hit(o, at + (key,), E.required(f"{key} is required"))
        elif isinstance(v, str):
            for message in M.path_segment_name(v):
                yield hit(o, at + (key,), E.invalid(v, message))


def _tls(o, at, tls):
    for i, host in enumerate(_list(tls.get("hosts"))):
        if isinstance(host, str):
            messages = M.wildcard_dns1123_subdomain(host) if "*" in host else M.dns1123_subdomain(host)
            for message in messages:
                yield hit(o, at + ("hosts", i), E.invalid(host, message))
    secret = tls.get("secretName")
    if isinstance(secret, str) and secret:
        for message in M.dns1123_subdomain(secret):   # ValidateSecretName
            yield hit(o, at + ("secretName",), E.invalid(secret, message))


# ----------------------------------------------------------------- NetworkPolicy


@rule("AS371", ERROR, "a NetworkPolicy the API server refuses: a port with an unknown protocol, a number outside "
      "1-65535, an endPort below port or with a named or missing port; a peer with none, or ipBlock beside another "
      "selector; an ipBlock cidr or except that is no CIDR, an except that is no strict subset of the cidr; more "
      "than two or unknown policyTypes; a bad selector operator (API server: ValidateNetworkPolicySpec, "
      "ValidateNetworkPolicyPort, ValidateNetworkPolicyPeer, ValidateIPBlock)",
      "each peer: ipBlock alone, or podSelector and/or namespaceSelector; except ranges inside the cidr; endPort "
      "only with a numeric port")
def network_policy(model):
    for o in model.all("networking.k8s.io", "NetworkPolicy"):
        spec = o.spec
        for path, message in M.label_selector(spec.get("podSelector"), ("spec", "podSelector")):
            yield hit(o, path, message)
        for direction, peers in (("ingress", "from"), ("egress", "to")):
            for i, r in enumerate(_list(spec.get(direction))):
                r = _dict(r)
                at = ("spec", direction, i)
                for j, port in enumerate(_list(r.get("ports"))):
                    yield from _np_port(o, at + ("ports", j), _dict(port))
                for j, peer in enumerate(_list(r.get(peers))):
                    yield from _np_peer(o, at + (peers, j), _dict(peer))
        types = _list(spec.get("policyTypes"))
        if len(types) > 2:
            yield hit(o, ("spec", "policyTypes"), E.invalid(types, "may not specify more than two policyTypes"))
            continue
        for i, t in enumerate(types):
            if t not in ("Ingress", "Egress"):
                yield hit(o, ("spec", "policyTypes", i), E.not_supported(t, ["Ingress", "Egress"]))


def _np_port(o, at, p):
    protocol = p.get("protocol")
    if isinstance(protocol, str) and protocol not in PROTOCOLS:
        yield hit(o, at + ("protocol",), E.not_supported(protocol, PROTOCOLS))
    port, end = p.get("port"), p.get("endPort")
    if M.is_int(port):
        if not E.port_num(port):
            yield hit(o, at + ("port",), E.invalid(port, E.PORT_RANGE))
        if M.is_int(end):
            if end < port:
                yield hit(o, at + ("endPort",), E.invalid(port, "must be greater than or equal to `port`"))
            if not E.port_num(end):
                yield hit(o, at + ("endPort",), E.invalid(end, E.PORT_RANGE))
    elif isinstance(port, str):
        if end is not None:
            yield hit(o, at + ("endPort",), E.invalid(end, "may not be specified when `port` is non-numeric"))
        for message in M.port_name(port):
            yield hit(o, at + ("port",), E.invalid(port, message))
    elif port is None and end is not None:
        yield hit(o, at + ("endPort",), E.invalid(end, "may not be specified when `port` is not specified"))


def _np_peer(o, at, peer):
    count = 0
    for key in ("podSelector", "namespaceSelector"):
        if peer.get(key) is not None:
            count += 1
            for path, message in M.label_selector(peer[key], at + (key,)):
                yield hit(o, path, message)
    block = peer.get("ipBlock")
    if block is not None:
        count += 1
        yield from _ip_block(o, at + ("ipBlock",), _dict(block))
    if count == 0:
        yield hit(o, at, E.required("must specify a peer"))
    elif count > 1 and block is not None:
        yield hit(o, at, E.forbidden("may not specify both ipBlock and another peer"))


def _ip_block(o, at, block):
    """ValidateIPBlock."""
    text = block.get("cidr")
    if not text:
        yield hit(o, at + ("cidr",), E.required())
        return
    net = M.cidr(text) if isinstance(text, str) else None
    if net is None:
        yield hit(o, at + ("cidr",), E.invalid(text, M.CIDR_MESSAGE))
        return
    for i, ex in enumerate(_list(block.get("except"))):
        ex_net = M.cidr(ex) if isinstance(ex, str) else None
        if ex_net is None:
            yield hit(o, at + ("except", i), E.invalid(ex, M.CIDR_MESSAGE))
            continue
        if ex_net.version != net.version or ex_net.network_address not in net or net.prefixlen >= ex_net.prefixlen:
            yield hit(o, at + ("except", i), E.invalid(ex, "must be a strict subset of `cidr`"))
