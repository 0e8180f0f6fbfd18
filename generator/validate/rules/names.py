"""Names, ports, labels and selectors the API server refuses, which the bundled
JSON schemas do not check (they type these fields as plain strings).

The formats are Kubernetes' own (k8s.io/apimachinery/pkg/util/validation:
IsDNS1123Subdomain, IsDNS1123Label, IsDNS1035Label, IsValidPortName,
IsQualifiedName, IsValidLabelValue; path.IsValidPathSegmentName), and which one
a kind's name must meet is its registry's choice (pkg/apis/*/validation):
Service names are DNS-1035 labels (ValidateServiceName), Namespace and
StatefulSet names DNS-1123 labels (ValidateNamespaceName,
ValidateStatefulSetName), RBAC roles and bindings path segments
(minimalNameRequirements in pkg/apis/rbac/validation), CronJob names DNS-1123 subdomains of at most 52 characters
(ValidateCronJob: the Jobs it creates add 11), everything else, custom
resources included, DNS-1123 subdomains."""
from __future__ import annotations

import re

from ...kernel.labelmatch import describe, selector_matches
from ..findings import ERROR
from . import hit, rule

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL = re.compile(rf"^{_LABEL}$")
DNS1123_SUBDOMAIN = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_PORT_NAME = re.compile(r"^[a-z0-9-]+$")

RBAC = "rbac.authorization.k8s.io"
CRONJOB_NAME_MAX = 52


def dns1123_subdomain(s: str) -> str | None:
    if len(s) > 253:
        return "must be no more than 253 characters"
    if not DNS1123_SUBDOMAIN.match(s):
        return ("must be lowercase letters, digits, '-' and '.', starting and ending with a letter or digit "
                "(a DNS-1123 subdomain)")
    return None


def dns1123_label(s: str) -> str | None:
    if len(s) > 63:
        return "must be no more than 63 characters"
    if not DNS1123_LABEL.match(s):
        return "must be lowercase letters, digits and '-', starting and ending with a letter or digit (a DNS-1123 label)"
    return None


def dns1035_label(s: str) -> str | None:
    if len(s) > 63:
        return "must be no more than 63 characters"
    if not DNS1035_LABEL.match(s):
        return ("must be lowercase letters, digits and '-', starting with a letter and ending with a letter or digit "
                "(a DNS-1035 label)")
    return None


def path_segment(s: str) -> str | None:
    if s in (".", ".."):
        return f"may not be {s!r}"
    if "/" in s or "%" in s:
        return "may not contain '/' or '%'"
    return None


def cronjob_name(s: str) -> str | None:
    return dns1123_subdomain(s) or (f"must be no more than {CRONJOB_NAME_MAX} characters"
                                    if len(s) > CRONJOB_NAME_MAX else None)


NAME_RULES = {
    ("", "Service"): dns1035_label,
    ("", "Namespace"): dns1123_label,
    ("apps", "StatefulSet"): dns1123_label,
    ("batch", "CronJob"): cronjob_name,
    (RBAC, "Role"): path_segment, (RBAC, "ClusterRole"): path_segment,
    (RBAC, "RoleBinding"): path_segment, (RBAC, "ClusterRoleBinding"): path_segment,
}


def port_name(s: str) -> str | None:
    """IANA_SVC_NAME (IsValidPortName)."""
    if len(s) > 15:
        return f"{len(s)} characters; a port name has at most 15"
    if not _PORT_NAME.match(s):
        return "must be lowercase letters, digits and '-'"
    if not re.search(r"[a-z]", s):
        return "must contain at least one letter"
    if "--" in s:
        return "must not contain two '-' in a row"
    if s.startswith("-") or s.endswith("-"):
        return "must not begin or end with '-'"
    return None


def label_key(k: str) -> str | None:
    prefix, slash, name = k.rpartition("/")
    if slash and (not prefix or dns1123_subdomain(prefix)):
        return f"prefix {prefix!r} must be a DNS-1123 subdomain"
    if not name or len(name) > 63:
        return "the name part must be 1 to 63 characters"
    if not _NAME_PART.match(name):
        return "the name part must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
    return None


def label_value(v) -> str | None:
    if not isinstance(v, str):
        return f"{v!r} is not a string (quote it)"
    if len(v) > 63:
        return f"{len(v)} characters; a label value has at most 63"
    if v and not _NAME_PART.match(v):
        return "must be empty, or letters, digits, '-', '_' and '.' starting and ending with a letter or digit"
    return None


@rule("NM001", ERROR, "metadata.name (or generateName), or metadata.namespace, is not a name the API server accepts "
      "for the kind (DNS-1123 subdomain; DNS-1035 label for Services; DNS-1123 label for Namespaces and "
      "StatefulSets; at most 52 characters for CronJobs; path segment for RBAC)",
      "rename the object: lowercase letters, digits and '-' are safe everywhere")
def object_names(model):
    for o in model.objects:
        meta = o.body.get("metadata") or {}
        check = NAME_RULES.get((o.group, o.kind), dns1123_subdomain)
        for key in ("name", "generateName"):
            value = meta.get(key)
            if not isinstance(value, str) or not value:
                continue
            # generateName is a prefix: the server appends letters, so a trailing '-' is fine.
            why = check(value[:-1] + "a" if key == "generateName" and value.endswith("-") else value)
            if why:
                yield hit(o, ("metadata", key), f"{o.kind} {key} {value!r} {why}")
        ns = meta.get("namespace")
        if isinstance(ns, str) and ns and dns1123_label(ns):
            yield hit(o, ("metadata", "namespace"), f"namespace {ns!r} {dns1123_label(ns)}")
        elif ns is not None and not isinstance(ns, str):
            yield hit(o, ("metadata", "namespace"), f"namespace is a {type(ns).__name__}, not a name")


@rule("NM002", ERROR, "a container port name, or a Service targetPort given by name, is not an IANA service name "
      "(at most 15 characters, lowercase letters, digits and '-', at least one letter)",
      "shorten the port name (for example `metrics` instead of `prometheus-metrics`); Services refer to it by name")
def port_names(model):
    for o, ps in model.workloads():
        for path, c in ps.containers():
            for i, p in enumerate(c.get("ports") or []):
                name = p.get("name") if isinstance(p, dict) else None
                if isinstance(name, str) and port_name(name):
                    yield hit(o, path + ("ports", i, "name"), f"port name {name!r}: {port_name(name)}")
    for svc in model.all("", "Service"):
        for i, p in enumerate(svc.spec.get("ports") or []):
            target = p.get("targetPort") if isinstance(p, dict) else None
            if isinstance(target, str) and not target.isdigit() and port_name(target):
                yield hit(svc, ("spec", "ports", i, "targetPort"), f"targetPort {target!r}: {port_name(target)}")


@rule("NM003", ERROR, "a label key or value the API server refuses (on the object or its pod templates)",
      "label keys: optional DNS prefix, '/', and a name of at most 63 characters; values: at most 63 characters "
      "of letters, digits, '-', '_' and '.'")
def labels_valid(model):
    for o in model.objects:
        places = [(("metadata", "labels"), o.labels)]
        places += [(ps.path + ("metadata", "labels"), ps.metadata.get("labels")) for ps in o.podsets if ps.path]
        for path, labels in places:
            if not isinstance(labels, dict):
                continue
            for k, v in labels.items():
                why = label_key(str(k)) if isinstance(k, str) else "a label key must be a string"
                if why:
                    yield hit(o, path + (k,), f"label key {k!r}: {why}")
                why = label_value(v)
                if why:
                    yield hit(o, path + (k,), f"label {k!r} value {why}" if not why.startswith(repr(v))
                              else f"label {k!r}: {why}")


SELECTOR_KINDS = {("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "StatefulSet"), ("apps", "DaemonSet")}


@rule("WK001", ERROR, "a Deployment, ReplicaSet, StatefulSet or DaemonSet selector does not match its pod template's "
      "labels (the API server refuses it: `selector does not match template labels`)",
      "make spec.selector.matchLabels a subset of spec.template.metadata.labels")
def selector_matches_template(model):
    for o in model.objects:
        if (o.group, o.kind) not in SELECTOR_KINDS:
            continue
        sel = o.spec.get("selector")
        template = o.spec.get("template") if isinstance(o.spec.get("template"), dict) else {}
        labels = (template.get("metadata") or {}).get("labels") or {}
        if not isinstance(sel, dict) or not isinstance(labels, dict):
            continue   # the schema layer reports a missing selector
        if not sel.get("matchLabels") and not sel.get("matchExpressions"):
            yield hit(o, ("spec", "selector"), f"empty selector: a {o.kind} must select its pods")
        elif not selector_matches(sel, labels):
            yield hit(o, ("spec", "selector"), f"selector {describe(sel)} does not match the template's labels "
                      f"({', '.join(f'{k}={v}' for k, v in sorted(labels.items())) or 'none'})")
