"""rbac.authorization.k8s.io/v1 bindings and ClusterRoles as the API server validates
them on create: kubernetes v1.31 pkg/apis/rbac/validation/validation.go
(ValidateRoleBinding, ValidateClusterRoleBinding, ValidateRoleBindingSubject,
ValidateClusterRole), after pkg/apis/rbac/v1/defaults.go (SetDefaults_Subject,
SetDefaults_RoleBinding: roleRef and User / Group subjects get the RBAC group). The
rules of a Role and a binding's roleRef kind are AS016 (apiserver_kinds)."""
from __future__ import annotations

from .. import apierrors as E, apimachinery as M
from ..findings import ERROR
from . import hit, rule

RBAC = "rbac.authorization.k8s.io"
SUBJECT_KINDS = ["ServiceAccount", "User", "Group"]


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _list(v) -> list:
    return v if isinstance(v, list) else []


@rule("AS360", ERROR, "a RoleBinding or ClusterRoleBinding the API server refuses: a subject of unknown kind, a "
      "ServiceAccount with an apiGroup or (in a ClusterRoleBinding) without a namespace, a User or Group outside the "
      "RBAC group, a roleRef outside the RBAC group or with a name holding '/' or '%' (API server: "
      "ValidateRoleBinding, ValidateClusterRoleBinding, ValidateRoleBindingSubject)",
      "subjects: kind ServiceAccount (apiGroup \"\", with namespace), User or Group (apiGroup "
      "rbac.authorization.k8s.io)")
def role_bindings(model):
    for kind, namespaced in (("RoleBinding", True), ("ClusterRoleBinding", False)):
        for o in model.all(RBAC, kind):
            yield from _role_ref(o, _dict(o.body.get("roleRef")))
            for i, s in enumerate(_list(o.body.get("subjects"))):
                if isinstance(s, dict):
                    yield from _subject(o, ("subjects", i), s, namespaced)


def _role_ref(o, ref):
    group = ref.get("apiGroup")
    if isinstance(group, str) and group != RBAC:
        yield hit(o, ("roleRef", "apiGroup"), E.not_supported(group, [RBAC]))
    name = ref.get("name")
    if not name:
        yield hit(o, ("roleRef", "name"), E.required())
    elif isinstance(name, str):
        for message in M.path_segment_name(name):
            yield hit(o, ("roleRef", "name"), E.invalid(name, message))


def _subject(o, at, s, namespaced):
    name, kind, group = s.get("name"), s.get("kind"), s.get("apiGroup") or ""
    if not name:
        yield hit(o, at + ("name",), E.required())
    if kind == "ServiceAccount":
        if isinstance(name, str) and name:
            for message in M.dns1123_subdomain(name):   # ValidateServiceAccountName: NameIsDNSSubdomain
                yield hit(o, at + ("name",), E.invalid(name, message))
        if group:
            yield hit(o, at + ("apiGroup",), E.not_supported(group, [""]))
        if not namespaced and not s.get("namespace"):
            yield hit(o, at + ("namespace",), E.required())
    elif kind in ("User", "Group"):
        if group != RBAC:
            yield hit(o, at + ("apiGroup",), E.not_supported(group, [RBAC]))
    else:
        yield hit(o, at + ("kind",), E.not_supported(kind if isinstance(kind, str) else "", SUBJECT_KINDS))


@rule("AS361", ERROR, "a ClusterRole aggregationRule without clusterRoleSelectors, or one with a bad selector "
      "operator (API server: ValidateClusterRole)",
      "list at least one label selector under aggregationRule.clusterRoleSelectors, or drop aggregationRule")
def cluster_role_aggregation(model):
    for o in model.all(RBAC, "ClusterRole"):
        rule_ = o.body.get("aggregationRule")
        if not isinstance(rule_, dict):
            continue
        selectors = _list(rule_.get("clusterRoleSelectors"))
        if not selectors:
            yield hit(o, ("aggregationRule", "clusterRoleSelectors"),
                      E.required("at least one clusterRoleSelector required if aggregationRule is non-nil"))
        for i, sel in enumerate(selectors):
            for path, message in M.label_selector(sel, ("aggregationRule", "clusterRoleSelectors", i)):
                yield hit(o, path, message)
