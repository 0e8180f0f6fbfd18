"""The API server's validation of a pod spec outside its containers, ported from Kubernetes
v1.31.1 pkg/apis/core/validation/validation.go: ValidatePodSpec's own checks (restart and DNS
policy, names, deadlines, host aliases, gates, OS) and affinity, tolerations, topology spread
constraints and DNS config, with apimachinery's label and selector checks
(metav1validation ValidateLabelSelector, ValidateLabels, ValidateLabelName). Same conventions
as corepod.py: (rule, path, message) appended to `out`, defaults taken for absent fields."""
from __future__ import annotations

from .. import apierrors as E
from .corepod import _dict, _int, _list, _str

SPEC, DNS, AFFINITY, TOLERATION, SPREAD = "AS100", "AS101", "AS160", "AS161", "AS162"

_RESTART = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PREEMPTION = ("PreemptLowerPriority", "Never")


def validate_pod_spec(spec: dict, at: tuple, out: list, is_pod: bool) -> None:
    """ValidatePodSpec: the checks it makes itself. Containers, volumes and security contexts are
    corepod.py's, coresecurity.py's and corevolumes.py's."""
    grace = spec.get("terminationGracePeriodSeconds", 30)
    if grace is None:
        out.append((SPEC, at + ("terminationGracePeriodSeconds",), E.required()))
    if "containers" in spec and not _list(spec.get("containers")):
        out.append((SPEC, at + ("containers",), E.required()))   # validateContainers
    _enum(spec, "restartPolicy", _RESTART, at, out)
    _enum(spec, "dnsPolicy", _DNS_POLICIES, at, out)
    _enum(spec, "preemptionPolicy", _PREEMPTION, at, out)
    validate_labels(_dict(spec.get("nodeSelector")), at + ("nodeSelector",), out, SPEC)
    for i, s in enumerate(_list(spec.get("imagePullSecrets"))):   # validateImagePullSecrets
        if isinstance(s, dict) and set(s) - {"name"}:
            out.append((SPEC, at + ("imagePullSecrets", i), E.invalid(s, "only name may be set")))
    for i, g in enumerate(_list(spec.get("readinessGates"))):   # validateReadinessGates
        cond = _dict(g).get("conditionType")
        if isinstance(cond, str):
            out.extend((SPEC, at + ("readinessGates", i, "conditionType"), E.invalid(cond, m))
                       for m in E.is_qualified_name(cond))
    _scheduling_gates(_list(spec.get("schedulingGates")), at + ("schedulingGates",), out)
    _names(spec, at, out)
    deadline = spec.get("activeDeadlineSeconds")
    if _int(deadline) and not 1 <= deadline <= E.INT32_MAX:
        out.append((SPEC, at + ("activeDeadlineSeconds",), E.invalid(deadline, E.inclusive_range(1, E.INT32_MAX))))
    _host_aliases(spec, at, out)
    _host_network(spec, at, out, is_pod)
    _os(spec, at, out)


def _host_aliases(spec, at, out):
    for i, alias in enumerate(_list(spec.get("hostAliases"))):   # ValidateHostAliases
        alias = _dict(alias)
        ip = alias.get("ip")
        if isinstance(ip, str) and not E.is_valid_ip(ip):
            out.append((SPEC, at + ("hostAliases", i, "ip"), E.invalid(ip, E.IP_MESSAGE)))
        for j, host in enumerate(_list(alias.get("hostnames"))):
            if isinstance(host, str):
                out.extend((SPEC, at + ("hostAliases", i, "hostnames", j), E.invalid(host, m))
                           for m in E.is_dns1123_subdomain(host))


def _enum(spec, key, allowed, at, out):
    """validateRestartPolicy, validateDNSPolicy, ValidatePreemptionPolicy: "" is Required."""
    v = spec.get(key)
    if isinstance(v, str) and v not in allowed:
        out.append((SPEC, at + (key,), E.required() if not v else E.not_supported(v, list(allowed))))


def _scheduling_gates(gates, at, out):
    """validateSchedulingGates."""
    seen: set = set()
    for i, g in enumerate(gates):
        name = _dict(g).get("name")
        if not isinstance(name, str):
            continue
        out.extend((SPEC, at + (i,), E.invalid(name, m)) for m in E.is_qualified_name(name))
        if name in seen:
            out.append((SPEC, at + (i,), E.duplicate(name)))
        seen.add(name)


def _names(spec, at, out):
    """serviceAccountName, nodeName, priorityClassName (DNS-1123 subdomains), hostname and subdomain
    (DNS-1123 labels), runtimeClassName (ValidateRuntimeClassName: a subdomain)."""
    for key, check in (("serviceAccountName", E.is_dns1123_subdomain), ("nodeName", E.is_dns1123_subdomain),
                       ("hostname", E.is_dns1123_label), ("subdomain", E.is_dns1123_label),
                       ("priorityClassName", E.is_dns1123_subdomain), ("runtimeClassName", E.is_dns1123_subdomain)):
        v = spec.get(key)
        if isinstance(v, str) and v:
            out.extend((SPEC, at + (key,), E.invalid(v, m)) for m in check(v))


def _host_network(spec, at, out, is_pod):
    """validatePodHostNetworkDeps: with hostNetwork, a hostPort equals its containerPort (a Pod's unset
    hostPort is defaulted to the containerPort, a template's stays 0); validateHostUsers."""
    if spec.get("hostNetwork") is True:
        for i, c in enumerate(_list(spec.get("containers"))):
            for j, p in enumerate(_list(_dict(c).get("ports"))):
                p = _dict(p)
                host, cport = p.get("hostPort", 0), p.get("containerPort")
                if _int(host) and host != 0 and host != cport:
                    out.append((SPEC, at + ("containers", i, "ports", j, "hostPort"),
                                E.invalid(host, "must match `containerPort` when `hostNetwork` is true")))
    if _dict(spec.get("securityContext")).get("hostUsers") is False:
        for key, name in (("hostNetwork", "hostNetwork"), ("hostPID", "HostPID"), ("hostIPC", "HostIPC")):
            if spec.get(key) is True:
                out.append((SPEC, at + (name,), E.forbidden("when `pod.Spec.HostUsers` is false")))


def _os(spec, at, out):
    """validateOS (the name is linux or windows); validateLinux and validateWindows are
    coresecurity.py's (they are about security contexts)."""
    name = _dict(spec.get("os")).get("name")
    if isinstance(name, str) and name not in ("linux", "windows"):
        out.append((SPEC, at + ("os", "name"), E.not_supported(name, ["linux", "windows"])))


# ---------------------------------------------------------------- DNS


def validate_dns_config(spec: dict, at: tuple, out: list) -> None:
    """validatePodDNSConfig."""
    config = spec.get("dnsConfig")
    at = at + ("dnsConfig",)
    if spec.get("dnsPolicy") == "None":
        if not isinstance(config, dict):
            out.append((DNS, at, E.required("must provide `dnsConfig` when `dnsPolicy` is None")))
            return
        if not _list(config.get("nameservers")):
            out.append((DNS, at + ("nameservers",), E.required("must provide at least one DNS nameserver when "
                                                               "`dnsPolicy` is None")))
            return
    if not isinstance(config, dict):
        return
    _dns_lists(config, at, out)
    for i, opt in enumerate(_list(config.get("options"))):
        if not _str(_dict(opt).get("name")):
            out.append((DNS, at + ("options", i), E.required("must not be empty")))


def _dns_lists(config, at, out):
    servers, searches = _list(config.get("nameservers")), _list(config.get("searches"))
    if len(servers) > 3:
        out.append((DNS, at + ("nameservers",), E.invalid(servers, "must not have more than 3 nameservers")))
    for i, ns in enumerate(servers):
        if isinstance(ns, str) and not E.is_valid_ip(ns):
            out.append((DNS, at + ("nameservers", i), E.invalid(ns, E.IP_MESSAGE)))
    if len(searches) > 32:
        out.append((DNS, at + ("searches",), E.invalid(searches, "must not have more than 32 search paths")))
    if len(" ".join(str(s) for s in searches)) > 2048:
        out.append((DNS, at + ("searches",), E.invalid(searches, "must not have more than 2048 characters "
                                                                 "(including spaces) in the search list")))
    for i, s in enumerate(searches):
        if isinstance(s, str):
            s = s.removesuffix(".")
            out.extend((DNS, at + ("searches", i), E.invalid(s, m)) for m in E.is_dns1123_subdomain(s))


# ---------------------------------------------------------------- labels and selectors (apimachinery)


def validate_label_name(name, at: tuple, out: list, rule: str) -> None:
    """metav1validation ValidateLabelName: a qualified name."""
    if isinstance(name, str):
        out.extend((rule, at, E.invalid(name, m)) for m in E.is_qualified_name(name))


def validate_labels(labels: dict, at: tuple, out: list, rule: str) -> None:
    """metav1validation ValidateLabels: each key and value, reported at the map's path."""
    for k, v in labels.items():
        validate_label_name(k, at, out, rule)
        if isinstance(v, str):
            out.extend((rule, at, E.invalid(v, m)) for m in E.is_label_value(v))


def validate_label_selector(sel, at: tuple, out: list, rule: str) -> None:
    """metav1validation ValidateLabelSelector and ValidateLabelSelectorRequirement."""
    if not isinstance(sel, dict):
        return
    validate_labels(_dict(sel.get("matchLabels")), at + ("matchLabels",), out, rule)
    for i, req in enumerate(_list(sel.get("matchExpressions"))):
        req = _dict(req)
        p = at + ("matchExpressions", i)
        op, values = req.get("operator", ""), _list(req.get("values"))
        if op in ("In", "NotIn"):
            if not values:
                out.append((rule, p + ("values",), E.required("must be specified when `operator` is 'In' or 'NotIn'")))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                out.append((rule, p + ("values",), E.forbidden("may not be specified when `operator` is 'Exists' or "
                                                               "'DoesNotExist'")))
        elif isinstance(op, str):
            out.append((rule, p + ("operator",), E.invalid(op, "not a valid selector operator")))
        validate_label_name(req.get("key"), p + ("key",), out, rule)
        for j, v in enumerate(values):
            if isinstance(v, str):
                out.extend((rule, p + ("values", j), E.invalid(v, m)) for m in E.is_label_value(v))


# ---------------------------------------------------------------- affinity


def validate_affinity(spec: dict, at: tuple, out: list) -> None:
    """validateAffinity: validateNodeAffinity, validatePodAffinity, validatePodAntiAffinity."""
    affinity = _dict(spec.get("affinity"))
    at = at + ("affinity",)
    node = affinity.get("nodeAffinity")
    if isinstance(node, dict):
        required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(required, dict):
            validate_node_selector(required, at + ("nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"),
                                   out)
        for i, term in enumerate(_list(node.get("preferredDuringSchedulingIgnoredDuringExecution"))):
            term = _dict(term)   # ValidatePreferredSchedulingTerms
            p = at + ("nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", i)
            _weight(term.get("weight"), p + ("weight",), out)
            _node_selector_term(_dict(term.get("preference")), p + ("preference",), out)
    for kind in ("podAffinity", "podAntiAffinity"):
        pod = affinity.get(kind)
        if not isinstance(pod, dict):
            continue
        for i, term in enumerate(_list(pod.get("requiredDuringSchedulingIgnoredDuringExecution"))):
            _pod_affinity_term(_dict(term), at + (kind, "requiredDuringSchedulingIgnoredDuringExecution", i), out)
        for i, term in enumerate(_list(pod.get("preferredDuringSchedulingIgnoredDuringExecution"))):
            term = _dict(term)   # validateWeightedPodAffinityTerms
            p = at + (kind, "preferredDuringSchedulingIgnoredDuringExecution", i)
            _weight(term.get("weight"), p + ("weight",), out)
            _pod_affinity_term(_dict(term.get("podAffinityTerm")), p + ("podAffinityTerm",), out)


def _weight(w, at, out):
    if _int(w) and not 1 <= w <= 100:
        out.append((AFFINITY, at, E.invalid(w, "must be in the range 1-100")))


def validate_node_selector(sel: dict, at: tuple, out: list) -> None:
    """ValidateNodeSelector."""
    terms = _list(sel.get("nodeSelectorTerms"))
    if not terms:
        out.append((AFFINITY, at + ("nodeSelectorTerms",), E.required("must have at least one node selector term")))
    for i, term in enumerate(terms):
        _node_selector_term(_dict(term), at + ("nodeSelectorTerms", i), out)


def _node_selector_term(term, at, out):
    """ValidateNodeSelectorTerm: ValidateNodeSelectorRequirement, ValidateNodeFieldSelectorRequirement."""
    for j, req in enumerate(_list(term.get("matchExpressions"))):
        req = _dict(req)
        p = at + ("matchExpressions", j)
        op, values = req.get("operator", ""), _list(req.get("values"))
        if op in ("In", "NotIn"):
            if not values:
                out.append((AFFINITY, p + ("values",), E.required("must be specified when `operator` is 'In' or "
                                                                  "'NotIn'")))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                out.append((AFFINITY, p + ("values",), E.forbidden("may not be specified when `operator` is 'Exists' "
                                                                   "or 'DoesNotExist'")))
        elif op in ("Gt", "Lt"):
            if len(values) != 1:
                out.append((AFFINITY, p + ("values",), E.required("must be specified single value when `operator` is "
                                                                  "'Lt' or 'Gt'")))
        elif isinstance(op, str):
            out.append((AFFINITY, p + ("operator",), E.invalid(op, "not a valid selector operator")))
        validate_label_name(req.get("key"), p + ("key",), out, AFFINITY)
    _match_fields(term, at, out)


def _match_fields(term, at, out):
    for j, req in enumerate(_list(term.get("matchFields"))):
        req = _dict(req)
        p = at + ("matchFields", j)
        values = _list(req.get("values"))
        op = req.get("operator", "")
        if op in ("In", "NotIn"):
            if len(values) != 1:
                out.append((AFFINITY, p + ("values",), E.required("must be only one value when `operator` is 'In' or "
                                                                  "'NotIn' for node field selector")))
        elif isinstance(op, str):
            out.append((AFFINITY, p + ("operator",), E.invalid(op, "not a valid selector operator")))
        if req.get("key") != "metadata.name":
            out.append((AFFINITY, p + ("key",), E.invalid(req.get("key", ""), "not a valid field selector key")))
        else:
            for k, v in enumerate(values):
                if isinstance(v, str):
                    out.extend((AFFINITY, p + ("values", k), E.invalid(v, m)) for m in E.is_dns1123_subdomain(v))


def _pod_affinity_term(term, at, out):
    """validatePodAffinityTerm, ValidatePodAffinityTermSelector, validateMatchLabelKeysAndMismatchLabelKeys."""
    validate_label_selector(term.get("labelSelector"), at + ("labelSelector",), out, AFFINITY)
    validate_label_selector(term.get("namespaceSelector"), at + ("namespaceSelector",), out, AFFINITY)
    for ns in _list(term.get("namespaces")):
        if isinstance(ns, str):
            out.extend((AFFINITY, at + ("namespace",), E.invalid(ns, m)) for m in E.is_dns1123_label(ns))
    _match_label_keys(term, at, out)
    key = term.get("topologyKey")
    if key == "" or key is None:
        out.append((AFFINITY, at + ("topologyKey",), E.required("can not be empty")))
    validate_label_name(key if isinstance(key, str) else "", at + ("topologyKey",), out, AFFINITY)


def _match_label_keys(term, at, out):
    sel = term.get("labelSelector")
    match, mismatch = _list(term.get("matchLabelKeys")), _list(term.get("mismatchLabelKeys"))
    for field_name, keys in (("matchLabelKeys", match), ("mismatchLabelKeys", mismatch)):   # validateLabelKeys
        if keys and not isinstance(sel, dict):
            out.append((AFFINITY, at + (field_name,), E.forbidden("must not be specified when labelSelector is not "
                                                                  "set")))
        elif keys:
            for i, k in enumerate(keys):
                validate_label_name(k, at + (field_name, i), out, AFFINITY)
    if isinstance(sel, dict):
        index = {k: i for i, k in enumerate(match) if isinstance(k, str)}
        selected = set(_dict(sel.get("matchLabels")))
        for expr in _list(sel.get("matchExpressions")):
            k = _dict(expr).get("key")
            if k in index and k in selected:
                # upstream's path: the term's, indexed by the key's place in matchLabelKeys
                out.append((AFFINITY, at + (index[k],), E.invalid(k, "exists in both matchLabelKeys and labelSelector")))
            selected.add(k)
    for i, k in enumerate(match):
        if k in mismatch:
            out.append((AFFINITY, at + ("matchLabelKeys", i), E.invalid(k, "exists in both matchLabelKeys and "
                                                                           "mismatchLabelKeys")))


# ---------------------------------------------------------------- tolerations


def validate_tolerations(tolerations: list, at: tuple, out: list) -> None:
    """ValidateTolerations and validateTaintEffect (allowEmpty)."""
    for i, t in enumerate(tolerations):
        if not isinstance(t, dict):
            continue
        p = at + (i,)
        key, op, value, effect = _str(t.get("key")), t.get("operator", ""), _str(t.get("value")), t.get("effect")
        if key:
            validate_label_name(key, p + ("key",), out, TOLERATION)
        if not key and op != "Exists":
            out.append((TOLERATION, p + ("operator",), E.invalid(op, "operator must be Exists when `key` is empty, "
                                                                     "which means \"match all values and all keys\"")))
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            out.append((TOLERATION, p + ("effect",), E.invalid(effect or "", "effect must be 'NoExecute' when "
                                                                             "`tolerationSeconds` is set")))
        _toleration_operator(t, op, value, p, out)
        if isinstance(effect, str) and effect and effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            out.append((TOLERATION, p + ("effect",), E.not_supported(effect, ["NoSchedule", "PreferNoSchedule",
                                                                              "NoExecute"])))


def _toleration_operator(t, op, value, p, out):
    if op in ("Equal", ""):
        msgs = E.is_label_value(value)
        if msgs:
            out.append((TOLERATION, p + ("operator",), E.invalid(value, ";".join(msgs))))
    elif op == "Exists":
        if value:
            out.append((TOLERATION, p + ("operator",), E.invalid(t, "value must be empty when `operator` is "
                                                                    "'Exists'")))
    elif isinstance(op, str):
        out.append((TOLERATION, p + ("operator",), E.not_supported(op, ["Equal", "Exists"])))


# ---------------------------------------------------------------- topology spread


def validate_topology_spread(constraints: list, at: tuple, out: list) -> None:
    """validateTopologySpreadConstraints: ValidateMaxSkew, ValidateTopologyKey, ValidateWhenUnsatisfiable,
    ValidateSpreadConstraintNotRepeat, validateMinDomains, validateNodeInclusionPolicy,
    validateMatchLabelKeysInTopologySpread and the label selector."""
    items = [c if isinstance(c, dict) else {} for c in constraints]
    for i, c in enumerate(items):
        p = at + (i,)
        skew = c.get("maxSkew")
        if _int(skew) and skew <= 0:
            out.append((SPREAD, p + ("maxSkew",), E.invalid(skew, "must be greater than zero")))
        if c.get("topologyKey") == "":
            out.append((SPREAD, p + ("topologyKey",), E.required("can not be empty")))
        action = c.get("whenUnsatisfiable")
        if isinstance(action, str) and action not in ("DoNotSchedule", "ScheduleAnyway"):
            out.append((SPREAD, p + ("whenUnsatisfiable",), E.not_supported(action, ["DoNotSchedule",
                                                                                     "ScheduleAnyway"])))
        if any(c.get("topologyKey") == r.get("topologyKey") and action == r.get("whenUnsatisfiable")
               for r in items[i + 1:]):
            out.append((SPREAD, p + ("{topologyKey, whenUnsatisfiable}",),
                        E.duplicate(f"{{{c.get('topologyKey')}, {action}}}")))
        _min_domains(c, action, p, out)
        for key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            v = c.get(key)
            if isinstance(v, str) and v not in ("Honor", "Ignore"):
                out.append((SPREAD, p + (key,), E.not_supported(v, ["Honor", "Ignore"])))
        _spread_label_keys(c, p, out)
        validate_label_selector(c.get("labelSelector"), p + ("labelSelector",), out, SPREAD)


def _min_domains(c, action, p, out):
    domains = c.get("minDomains")
    if _int(domains):
        if domains <= 0:
            out.append((SPREAD, p + ("minDomains",), E.invalid(domains, "must be greater than zero")))
        if action != "DoNotSchedule":
            out.append((SPREAD, p + ("minDomains",), E.invalid(domains, f"can only use minDomains if "
                                                                        f"whenUnsatisfiable=DoNotSchedule, not "
                                                                        f"{action}")))


def _spread_label_keys(c, p, out):
    keys = _list(c.get("matchLabelKeys"))
    if not keys:
        return
    sel = c.get("labelSelector")
    if not isinstance(sel, dict):
        out.append((SPREAD, p + ("matchLabelKeys",), E.forbidden("must not be specified when labelSelector is not "
                                                                 "set")))
        sel = {}
    in_selector = set(_dict(sel.get("matchLabels"))) | {_dict(e).get("key") for e in _list(sel.get("matchExpressions"))}
    for i, k in enumerate(keys):
        validate_label_name(k, p + ("matchLabelKeys", i), out, SPREAD)
        if k in in_selector:
            out.append((SPREAD, p + ("matchLabelKeys", i), E.invalid(k, "exists in both matchLabelKeys and "
                                                                        "labelSelector")))
