"""The API server's validation of security contexts and pod annotations, ported from
Kubernetes v1.31.1 pkg/apis/core/validation/validation.go: validatePodSpecSecurityContext,
ValidateSecurityContext, validateSysctls, seccomp and AppArmor profiles (fields and the
deprecated annotations), validateLinux, ValidatePodSpecificAnnotations and apimachinery's
ValidateAnnotations. Same conventions as corepod.py."""
from __future__ import annotations

import json
import re

from .. import apierrors as E
from .corepod import _dict, _int, _list, _str, validate_local_descending_path
from .corespec import validate_tolerations

SECURITY, ANNOTATION = "AS170", "AS190"

# IsValidUserID / IsValidGroupID: apimachinery v0.31.1 pkg/util/validation/validation.go, maxUserID =
# maxGroupID = math.MaxInt32 (not uint32: TestValidatePodSpec refuses 2147483648).
MAX_ID = 2**31 - 1
SYSCTL_FMT = "^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"
_SYSCTL = re.compile(SYSCTL_FMT)
# apimachinery ValidateAnnotations: TotalAnnotationSizeLimitB.
ANNOTATIONS_MAX = 256 * 1024


def _ids(sc: dict, keys: tuple, at: tuple, out: list) -> None:
    for key in keys:
        v = sc.get(key)
        if _int(v) and not 0 <= v <= MAX_ID:
            out.append((SECURITY, at + (key,), E.invalid(v, E.inclusive_range(0, MAX_ID))))


def validate_pod_security_context(spec: dict, at: tuple, out: list) -> None:
    """validatePodSpecSecurityContext and validateSysctls / ValidateHostSysctl."""
    p = at + ("securityContext",)
    # v1 keeps hostPID and shareProcessNamespace on the PodSpec; the internal API the server validates
    # moves them into the pod security context, which conversion creates even when the manifest has none,
    # so this check runs on a pod without a securityContext too (validation.go:4947, v1.31.1).
    if spec.get("shareProcessNamespace") is True and spec.get("hostPID") is True:
        out.append((SECURITY, p + ("shareProcessNamespace",), E.invalid(True, "ShareProcessNamespace and HostPID "
                                                                              "cannot both be enabled")))
    sc = spec.get("securityContext")
    if not isinstance(sc, dict):
        return
    _ids(sc, ("fsGroup", "runAsUser", "runAsGroup"), p, out)
    for i, g in enumerate(_list(sc.get("supplementalGroups"))):
        if _int(g) and not 0 <= g <= MAX_ID:
            out.append((SECURITY, p + ("supplementalGroups", i), E.invalid(g, E.inclusive_range(0, MAX_ID))))
    _sysctls(spec, _list(sc.get("sysctls")), p + ("sysctls",), out)
    policy = sc.get("fsGroupChangePolicy")
    if isinstance(policy, str) and policy not in ("Always", "OnRootMismatch"):
        out.append((SECURITY, p + ("fsGroupChangePolicy",), E.not_supported(policy, ["Always", "OnRootMismatch"])))
    _seccomp(sc.get("seccompProfile"), p + ("seccompProfile",), out)
    _apparmor(sc.get("appArmorProfile"), p + ("appArmorProfile",), out)
    groups = sc.get("supplementalGroupsPolicy")
    if isinstance(groups, str) and groups not in ("Merge", "Strict"):
        out.append((SECURITY, p + ("supplementalGroupsPolicy",), E.not_supported(groups, ["Merge", "Strict"])))


def _sysctl_namespace(name: str) -> str:
    """utilsysctl.GetNamespace (k8s.io/component-helpers/node/util/sysctl): net.* is the network
    namespace; kernel.shm*, kernel.msg*, kernel.sem and fs.mqueue.* the IPC namespace."""
    name = name.replace("/", ".")
    if name.startswith("net."):
        return "net"
    if name.startswith(("kernel.shm", "kernel.msg", "fs.mqueue.")) or name == "kernel.sem":
        return "ipc"
    return ""


def _sysctls(spec, sysctls, at, out):
    names: set = set()
    for i, s in enumerate(sysctls):
        name = _dict(s).get("name")
        if not isinstance(name, str):
            continue
        if not name:
            out.append((SECURITY, at + (i, "name"), E.required()))
        elif len(name) > 253 or not _SYSCTL.match(name):
            out.append((SECURITY, at + (i, "name"), E.invalid(name, f"must have at most 253 characters and match "
                                                                    f"regex {SYSCTL_FMT}")))
        elif name in names:
            out.append((SECURITY, at + (i, "name"), E.duplicate(name)))
        ns = _sysctl_namespace(name)
        if spec.get("hostNetwork") is True and ns == "net":
            out.append((SECURITY, at + (i, "name"), E.invalid(name, "may not be specified when 'hostNetwork' is true")))
        elif spec.get("hostIPC") is True and ns == "ipc":
            out.append((SECURITY, at + (i, "name"), E.invalid(name, "may not be specified when 'hostIPC' is true")))
        names.add(name)


def _seccomp(sp, at, out):
    """validateSeccompProfileField and validateSeccompProfileType."""
    if not isinstance(sp, dict):
        return
    kind = sp.get("type", "")
    allowed = ["Localhost", "RuntimeDefault", "Unconfined"]
    if kind == "":
        out.append((SECURITY, at + ("type",), E.required("type is required when seccompProfile is set")))
    elif isinstance(kind, str) and kind not in allowed:
        out.append((SECURITY, at + ("type",), E.not_supported(kind, allowed)))
    local = sp.get("localhostProfile")
    if kind == "Localhost":
        if local is None:
            out.append((SECURITY, at + ("localhostProfile",), E.required("must be set when seccomp type is "
                                                                         "Localhost")))
        elif isinstance(local, str):
            validate_local_descending_path(local, at + ("localhostProfile",), out, SECURITY)
    elif local is not None:
        out.append((SECURITY, at + ("localhostProfile",), E.invalid(sp, "can only be set when seccomp type is "
                                                                        "Localhost")))


def _apparmor(profile, at, out):
    """ValidateAppArmorProfileField."""
    if not isinstance(profile, dict):
        return
    kind, local = profile.get("type", ""), profile.get("localhostProfile")
    if kind == "Localhost":
        if local is None or (isinstance(local, str) and local == "" == local.strip()):
            out.append((SECURITY, at + ("localhostProfile",), E.required("must be set when AppArmor type is "
                                                                         "Localhost")))
        elif isinstance(local, str):
            if local.strip() != local:
                out.append((SECURITY, at + ("localhostProfile",), E.invalid(local, "must not be padded with "
                                                                                   "whitespace")))
            if len(local) > 4095:
                out.append((SECURITY, at + ("localhostProfile",), "Too long: may not be more than 4095 bytes"))
    elif kind in ("RuntimeDefault", "Unconfined"):
        if local is not None:
            out.append((SECURITY, at + ("localhostProfile",), E.invalid(local, "can only be set when AppArmor type "
                                                                               "is Localhost")))
    elif kind == "":
        out.append((SECURITY, at + ("type",), E.required("type is required when appArmorProfile is set")))
    elif isinstance(kind, str):
        out.append((SECURITY, at + ("type",), E.not_supported(kind, ["Localhost", "RuntimeDefault", "Unconfined"])))


def validate_container_security(spec: dict, base: tuple, out: list) -> None:
    """ValidateSecurityContext for every container (privileged is allowed: GKE's kubelets and API
    server run with AllowPrivileged), and validateLinux's windowsOptions check."""
    host_users = _dict(spec.get("securityContext")).get("hostUsers") is not False
    linux = _dict(spec.get("os")).get("name") == "linux"
    if linux and _dict(spec.get("securityContext")).get("windowsOptions") is not None:
        out.append((SECURITY, base + ("securityContext", "windowsOptions"),
                    E.forbidden("windows options cannot be set for a linux pod")))
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for i, c in enumerate(_list(spec.get(key))):
            sc = _dict(c).get("securityContext") if isinstance(c, dict) else None
            if isinstance(sc, dict):
                _container_sc(sc, base + (key, i, "securityContext"), host_users, linux, out)


def _container_sc(sc, at, host_users, linux, out):
    _ids(sc, ("runAsUser", "runAsGroup"), at, out)
    proc = sc.get("procMount")
    if isinstance(proc, str):
        if proc not in ("Default", "Unmasked"):
            out.append((SECURITY, at + ("procMount",), E.not_supported(proc, ["Default", "Unmasked"])))
        if host_users and proc == "Unmasked":
            out.append((SECURITY, at + ("procMount",), E.invalid(proc, "`hostUsers` must be false to use "
                                                                       "`Unmasked`")))
    _seccomp(sc.get("seccompProfile"), at + ("seccompProfile",), out)
    if sc.get("allowPrivilegeEscalation") is False:
        if sc.get("privileged") is True:
            out.append((SECURITY, at, E.invalid(sc, "cannot set `allowPrivilegeEscalation` to false and "
                                                    "`privileged` to true")))
        if "CAP_SYS_ADMIN" in _list(_dict(sc.get("capabilities")).get("add")):
            out.append((SECURITY, at, E.invalid(sc, "cannot set `allowPrivilegeEscalation` to false and "
                                                    "`capabilities.Add` CAP_SYS_ADMIN")))
    _apparmor(sc.get("appArmorProfile"), at + ("appArmorProfile",), out)
    if linux and sc.get("windowsOptions") is not None:
        out.append((SECURITY, at + ("windowsOptions",), E.forbidden("windows options cannot be set for a linux pod")))


# ---------------------------------------------------------------- annotations

SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER = "container.seccomp.security.alpha.kubernetes.io/"
APPARMOR_CONTAINER = "container.apparmor.security.beta.kubernetes.io/"
TOLERATIONS = "scheduler.alpha.kubernetes.io/tolerations"
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
MIRROR = "kubernetes.io/config.mirror"


def validate_annotations(annotations: dict, at: tuple, out: list) -> None:
    """apimachinery ValidateAnnotations: keys are qualified names (lower-cased first), the total
    size at most 256 KiB."""
    total = 0
    for k, v in annotations.items():
        if not isinstance(k, str):
            continue
        out.extend((ANNOTATION, at, E.invalid(k, m)) for m in E.is_qualified_name(k.lower()))
        total += len(k) + len(v if isinstance(v, str) else str(v))
    if total > ANNOTATIONS_MAX:
        out.append((ANNOTATION, at, f"Too long: must have at most {ANNOTATIONS_MAX} bytes"))


def validate_pod_annotations(annotations: dict, spec: dict, at: tuple, out: list) -> None:
    """ValidatePodSpecificAnnotations: mirror pods, the tolerations annotation
    (ValidateTolerationsInPodAnnotations), the pod deletion cost, seccomp (ValidateSeccompPodAnnotations,
    ValidateSeccompProfile) and AppArmor (ValidateAppArmorPodAnnotations, ValidateAppArmorProfileFormat)."""
    if MIRROR in annotations and not _str(spec.get("nodeName")):
        out.append((ANNOTATION, at + (MIRROR,), E.invalid(annotations[MIRROR], "must set spec.nodeName if mirror "
                                                                                "pod annotation is set")))
    _tolerations_annotation(annotations, at, out)
    cost = annotations.get(DELETION_COST)
    if cost is not None and not _int32_text(cost):
        out.append((ANNOTATION, at + (DELETION_COST,), E.invalid(cost, "must be a 32bit integer")))
    _profile_annotations(annotations, spec, at, out)


def _tolerations_annotation(annotations, at, out):
    """ValidateTolerationsInPodAnnotations."""
    if _str(annotations.get(TOLERATIONS)):
        try:
            tolerations = json.loads(annotations[TOLERATIONS])
        except ValueError as e:
            out.append((ANNOTATION, at, E.invalid(TOLERATIONS, str(e))))
        else:
            if isinstance(tolerations, list):
                shifted: list = []
                validate_tolerations(tolerations, at + (TOLERATIONS,), shifted)
                out.extend((ANNOTATION, p, m) for _, p, m in shifted)


def _profile_annotations(annotations, spec, at, out):
    names = {_dict(c).get("name") for key in ("initContainers", "containers", "ephemeralContainers")
             for c in _list(spec.get(key))}
    for k, v in sorted(annotations.items(), key=lambda kv: str(kv[0])):
        if not isinstance(k, str) or not isinstance(v, str):
            continue
        if k == SECCOMP_POD or k.startswith(SECCOMP_CONTAINER):
            _seccomp_annotation(v, at + (k,), out)
        if k.startswith(APPARMOR_CONTAINER):
            name = k[len(APPARMOR_CONTAINER):]
            if name not in names:
                out.append((ANNOTATION, at + (k,), E.invalid(name, "container not found")))
            if v not in ("", "runtime/default", "unconfined") and not v.startswith("localhost/"):
                out.append((ANNOTATION, at + (k,), E.invalid(v, f"invalid AppArmor profile name: {json.dumps(v)}")))


def _int32_text(v) -> bool:
    """helper.GetDeletionCostFromPodAnnotations: validFirstDigit (no '+', no leading zero) and
    strconv.ParseInt(v, 10, 32)."""
    return isinstance(v, str) and bool(re.fullmatch(r"-\d+|[1-9]\d*|0", v)) and -2**31 <= int(v) < 2**31


def _seccomp_annotation(p: str, at: tuple, out: list) -> None:
    """ValidateSeccompProfile."""
    if p in ("runtime/default", "docker/default", "unconfined"):
        return
    if p.startswith("localhost/"):
        shifted: list = []
        validate_local_descending_path(p[len("localhost/"):], at, shifted, ANNOTATION)
        out.extend(shifted)
        return
    out.append((ANNOTATION, at, E.invalid(p, "must be a valid seccomp profile")))


def _containers_with_path(spec: dict, base: tuple):
    """podshelper.VisitContainersWithPath: init, regular, then ephemeral containers, with their paths."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for i, c in enumerate(_list(spec.get(key))):
            if isinstance(c, dict):
                yield base + (key, i), c


def _seccomp_match(annotation: str, profile: dict, at: tuple, out: list) -> None:
    """validateSeccompAnnotationsAndFieldsMatch."""
    kind = profile.get("type")
    if kind == "Unconfined" and annotation != "unconfined" \
            or kind == "RuntimeDefault" and annotation not in ("runtime/default", "docker/default") \
            or kind == "Localhost" and not annotation.startswith("localhost/"):
        out.append((SECURITY, at + ("type",), E.forbidden("seccomp type in annotation and field must match")))
    elif kind == "Localhost" and annotation[len("localhost/"):] != profile.get("localhostProfile"):
        out.append((SECURITY, at + ("localhostProfile",), E.forbidden("seccomp profile in annotation and field must "
                                                                      "match")))


def validate_profile_annotations_match(annotations: dict, spec: dict, base: tuple, out: list) -> None:
    """validateSeccompAnnotationsAndFields and validateAppArmorAnnotationsAndFieldsMatchOnCreate: where
    both the deprecated annotation and the field are set, they must agree."""
    pod_seccomp = _dict(spec.get("securityContext")).get("seccompProfile")
    if isinstance(pod_seccomp, dict) and isinstance(annotations.get(SECCOMP_POD), str):
        _seccomp_match(annotations[SECCOMP_POD], pod_seccomp, base + ("securityContext", "seccompProfile"), out)
    for at, c in _containers_with_path(spec, base):
        profile = _dict(c.get("securityContext")).get("seccompProfile")
        note = annotations.get(SECCOMP_CONTAINER + str(c.get("name")))
        if isinstance(profile, dict) and isinstance(note, str):
            _seccomp_match(note, profile, at + ("securityContext", "seccompProfile"), out)
    if _dict(spec.get("os")).get("name") == "windows":
        return
    pod_profile = _dict(spec.get("securityContext")).get("appArmorProfile")
    for at, c in _containers_with_path(spec, base):
        profile = _dict(c.get("securityContext")).get("appArmorProfile") or pod_profile
        note = annotations.get(APPARMOR_CONTAINER + str(c.get("name")))
        if isinstance(profile, dict) and isinstance(note, str):
            _apparmor_match(note, profile, at + ("securityContext", "appArmorProfile"), out)


def _apparmor_match(annotation: str, profile: dict, at: tuple, out: list) -> None:
    kind = profile.get("type")
    if kind == "Unconfined" and annotation != "unconfined" \
            or kind == "RuntimeDefault" and annotation != "runtime/default" \
            or kind == "Localhost" and not annotation.startswith("localhost/"):
        out.append((SECURITY, at + ("type",), E.forbidden("apparmor type in annotation and field must match")))
    elif kind == "Localhost" and annotation[len("localhost/"):] != profile.get("localhostProfile"):
        out.append((SECURITY, at + ("localhostProfile",), E.forbidden("apparmor profile in annotation and field must "
                                                                      "match")))
