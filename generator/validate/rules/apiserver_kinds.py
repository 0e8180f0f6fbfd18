"""What the API server checks in code, not in the OpenAPI schema, per kind: k8s.io/
kubernetes pkg/apis/{core,batch,apps,scheduling,autoscaling,rbac}/validation at the
pinned minor. Each rule names the function it follows; messages are the server's
(generator/validate/apierrors.py)."""
from __future__ import annotations

import re

from .. import apierrors as E
from ..findings import ERROR
from . import hit, rule

RBAC = "rbac.authorization.k8s.io"


def _list(v) -> list:
    return v if isinstance(v, list) else []


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _int(v) -> bool:
    """An integer the API server decodes (one outside int32 never reaches validation: AS005)."""
    return isinstance(v, int) and not isinstance(v, bool) and -E.INT32_MAX - 1 <= v <= E.INT32_MAX


# ----------------------------------------------------------------- Service


@rule("AS010", ERROR, "a Service port is out of 1-65535, unnamed among several, named twice, repeated with its "
      "protocol, or sets nodePort on a ClusterIP Service (API server: ValidateService, validateServicePort)",
      "name every port of a multi-port Service uniquely, keep numbers in 1-65535, nodePort only on "
      "NodePort/LoadBalancer")
def service_ports(model):
    for o in model.all("", "Service"):
        ports = _list(o.spec.get("ports"))
        kind = o.spec.get("type") or "ClusterIP"
        names: set = set()
        pairs: set = set()
        for i, p in enumerate(ports):
            if not isinstance(p, dict):
                continue
            at = ("spec", "ports", i)
            yield from _service_port(o, at, p, len(ports) > 1, names)
            key = (p.get("port"), p.get("protocol") or "TCP")
            if key in pairs:
                yield hit(o, at, E.duplicate({"port": key[0], "protocol": key[1]}))
            pairs.add(key)
            if kind == "ClusterIP" and p.get("nodePort"):
                yield hit(o, at + ("nodePort",), E.forbidden("may not be used when `type` is 'ClusterIP'"))


def _service_port(o, at, p, require_name, names):
    name = p.get("name")
    if require_name and not name:
        yield hit(o, at + ("name",), E.required())
    if isinstance(name, str) and name:
        if name in names:
            yield hit(o, at + ("name",), E.duplicate(name))
        names.add(name)
    port = p.get("port")
    if _int(port) and not E.port_num(port):
        yield hit(o, at + ("port",), E.invalid(port, E.PORT_RANGE))
    target = p.get("targetPort")
    if _int(target) and target != 0 and not E.port_num(target):
        yield hit(o, at + ("targetPort",), E.invalid(target, E.PORT_RANGE))


# ----------------------------------------------------------------- Job

# batch/validation: maxParallelismForIndexedJob.
MAX_INDEXED_PARALLELISM = 100000


def job_specs(model):
    """(object, path of a JobSpec) for Jobs, CronJobs' job templates and the Jobs a JobSet creates."""
    for o in model.objects:
        if o.group == "batch" and o.kind == "Job":
            yield o, ("spec",), o.spec
        elif o.group == "batch" and o.kind == "CronJob":
            yield o, ("spec", "jobTemplate", "spec"), _dict(_dict(o.spec.get("jobTemplate")).get("spec"))
        elif o.group == "jobset.x-k8s.io" and o.kind == "JobSet":
            for i, rj in enumerate(_list(o.spec.get("replicatedJobs"))):
                spec = _dict(_dict(_dict(rj).get("template")).get("spec"))
                yield o, ("spec", "replicatedJobs", i, "template", "spec"), spec


@rule("AS011", ERROR, "a Job spec has a negative count, an Indexed Job without completions or over the parallelism "
      "limit, or a pod restartPolicy other than OnFailure/Never, unset included (API server: ValidateJobSpec, "
      "validateJobSpec)",
      "counts >= 0; Indexed Jobs set completions; Job pods restart OnFailure or Never")
def job_spec(model):
    for o, path, spec in job_specs(model):
        for key in ("parallelism", "completions", "backoffLimit"):
            v = spec.get(key)
            if _int(v) and v < 0:
                yield hit(o, path + (key,), E.invalid(v, E.NEGATIVE))
        if spec.get("completionMode") == "Indexed":
            # batch/v1 SetDefaults_Job: with neither completions nor parallelism set, both become 1.
            if spec.get("completions") is None and spec.get("parallelism") is not None:
                yield hit(o, path + ("completions",), E.required("when completion mode is Indexed"))
            par = spec.get("parallelism")
            if _int(par) and par > MAX_INDEXED_PARALLELISM:
                yield hit(o, path + ("parallelism",), E.invalid(par, f"must be less than or equal to "
                                                                     f"{MAX_INDEXED_PARALLELISM} when completion mode "
                                                                     f"is Indexed"))
        pod = _dict(spec.get("template")).get("spec")
        policy = pod.get("restartPolicy") if isinstance(pod, dict) else "Never"
        # validateJobSpec (v1.31): unset defaults to Always (SetDefaults_PodSpec); both are "Required".
        if policy in (None, "", "Always"):
            yield hit(o, path + ("template", "spec", "restartPolicy"), E.required('valid values: "OnFailure", "Never"'))
        elif policy not in ("OnFailure", "Never"):
            yield hit(o, path + ("template", "spec", "restartPolicy"), E.not_supported(policy, ["OnFailure", "Never"]))


# ----------------------------------------------------------------- apps

_APPS = ("Deployment", "StatefulSet", "ReplicaSet", "DaemonSet")


@rule("AS012", ERROR, "a Deployment, StatefulSet, ReplicaSet or DaemonSet with negative replicas, or pods that do not "
      "restart Always; a Deployment whose progressDeadlineSeconds is not above minReadySeconds or whose rolling update "
      "may neither surge nor drop a pod (API server: ValidateDeploymentSpec, ValidateStatefulSetSpec, "
      "ValidateReplicaSetSpec, ValidatePodTemplateSpecForReplicaSet, ValidateRollingUpdateDeployment); a selector "
      "that misses the template's labels is WK001",
      "leave the template's restartPolicy unset (Always); replicas >= 0; maxSurge or maxUnavailable above 0")
def apps_spec(model):
    for kind in _APPS:
        for o in model.all("apps", kind):
            replicas = o.spec.get("replicas")
            if _int(replicas) and replicas < 0:
                yield hit(o, ("spec", "replicas"), E.invalid(replicas, E.NEGATIVE))
            policy = _dict(_dict(o.spec.get("template")).get("spec")).get("restartPolicy")
            if policy is not None and policy != "Always":
                yield hit(o, ("spec", "template", "spec", "restartPolicy"), E.not_supported(policy, ["Always"]))
            if kind == "Deployment":
                yield from _deployment(o)


# apps/v1 SetDefaults_Deployment: progressDeadlineSeconds 600 when unset.
DEFAULT_PROGRESS_DEADLINE = 600


def _percent(v) -> int | None:
    """getIntOrPercentValue: an int, or the number of an "N%" string; None when it is neither."""
    if _int(v):
        return v
    if isinstance(v, str) and v.endswith("%") and v[:-1].isdigit():
        return int(v[:-1])
    return None


def _deployment(o):
    """ValidateDeploymentSpec's progressDeadlineSeconds check and ValidateRollingUpdateDeployment."""
    deadline = o.spec.get("progressDeadlineSeconds", DEFAULT_PROGRESS_DEADLINE)
    ready = o.spec.get("minReadySeconds", 0)
    if _int(deadline) and _int(ready) and deadline <= ready:
        yield hit(o, ("spec", "progressDeadlineSeconds"), E.invalid(deadline, "must be greater than minReadySeconds"))
    rolling = _dict(_dict(o.spec.get("strategy")).get("rollingUpdate"))
    # An unset field defaults to 25% (SetDefaults_Deployment): only both written as 0 are refused.
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    if _percent(unavailable) == 0 and _percent(surge) == 0:
        yield hit(o, ("spec", "strategy", "rollingUpdate", "maxUnavailable"),
                  E.invalid(unavailable, "may not be 0 when `maxSurge` is 0"))
    if isinstance(unavailable, str) and (_percent(unavailable) or 0) > 100:
        yield hit(o, ("spec", "strategy", "rollingUpdate", "maxUnavailable"),
                  E.invalid(unavailable, "must not be greater than 100%"))


# ----------------------------------------------------------------- PriorityClass

# pkg/apis/scheduling: HighestUserDefinablePriority, SystemPriorityClassPrefix and the two
# system classes (SystemClusterCritical, SystemNodeCritical).
HIGHEST_USER_PRIORITY = 1000000000
SYSTEM_PREFIX = "system-"
SYSTEM_CLASSES = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}


@rule("AS013", ERROR, "a PriorityClass above the user limit (1000000000) or named system-* without being a system "
      "class (API server: ValidatePriorityClass)",
      "keep user PriorityClass values at or below 1000000000 and names without the system- prefix")
def priority_class(model):
    for o in model.all("scheduling.k8s.io", "PriorityClass"):
        v = o.body.get("value")
        if o.name.startswith(SYSTEM_PREFIX):
            if SYSTEM_CLASSES.get(o.name) != v:
                yield hit(o, ("metadata", "name"), E.forbidden(
                    f"priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system use only. "
                    f"error: {o.name} is not a known system priority class"))
        elif _int(v) and v > HIGHEST_USER_PRIORITY:
            yield hit(o, ("value",), E.forbidden(f"maximum allowed value of a user defined priority is "
                                                 f"{HIGHEST_USER_PRIORITY}"))


# ----------------------------------------------------------------- HPA


@rule("AS014", ERROR, "an HPA with minReplicas below 1, maxReplicas below 1 or below minReplicas (API server: "
      "validateHorizontalPodAutoscalerSpec)", "1 <= minReplicas <= maxReplicas")
def hpa_spec(model):
    for o in model.all("autoscaling", "HorizontalPodAutoscaler"):
        lo, hi = o.spec.get("minReplicas"), o.spec.get("maxReplicas")
        if _int(lo) and lo < 1:
            yield hit(o, ("spec", "minReplicas"), E.invalid(lo, "must be greater than or equal to 1"))
        if _int(hi) and hi < 1:
            yield hit(o, ("spec", "maxReplicas"), E.invalid(hi, "must be greater than 0"))
        if _int(lo) and _int(hi) and hi < lo:
            yield hit(o, ("spec", "maxReplicas"), E.invalid(hi, "must be greater than or equal to `minReplicas`"))


# ----------------------------------------------------------------- ConfigMap, Secret

# k8s.io/apimachinery/pkg/util/validation IsConfigMapKey: configMapKeyFmt and its message.
CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
CONFIG_KEY_MESSAGE = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  "
                      "or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")
MAX_DATA_BYTES = 1024 * 1024   # core.MaxSecretSize; ConfigMap: RuntimeObjectsMaxSize (1 MiB)
# Secret types whose keys ValidateSecret requires (core/v1 SecretTypeTLS, SecretTypeDockerConfigJson).
REQUIRED_KEYS = {"kubernetes.io/tls": ("tls.crt", "tls.key"), "kubernetes.io/dockerconfigjson": (".dockerconfigjson",)}


def _key_problems(o, field_name, data):
    for key in sorted(data):
        if len(key) > 253:
            yield hit(o, (field_name, key), E.invalid(key, "must be no more than 253 characters"))
        elif not CONFIG_KEY.match(key) or key in (".", ".."):
            yield hit(o, (field_name, key), E.invalid(key, CONFIG_KEY_MESSAGE))


@rule("AS015", ERROR, "a ConfigMap or Secret key that is not a config key, a key in both data and binaryData, over "
      "1 MiB of data, or a TLS / dockerconfigjson Secret without its keys (API server: ValidateConfigMap, "
      "ValidateSecret)", "keys of letters, digits, '-', '_' and '.'; each key once; large data in a volume instead")
def config_data(model):
    for o in [*model.all("", "ConfigMap"), *model.all("", "Secret")]:
        fields = ("data", "binaryData") if o.kind == "ConfigMap" else ("data", "stringData")
        size = 0
        for f in fields:
            data = _dict(o.body.get(f))
            yield from _key_problems(o, f, data)
            size += sum(len(k) + len(str(v)) for k, v in data.items())
        if o.kind == "ConfigMap":
            for key in sorted(set(_dict(o.body.get("data"))) & set(_dict(o.body.get("binaryData")))):
                yield hit(o, ("binaryData",), E.invalid(key, "duplicate of key present in data"))
        if size > MAX_DATA_BYTES:
            yield hit(o, ("data",), E.too_long(MAX_DATA_BYTES))
        present = set(_dict(o.body.get("data"))) | set(_dict(o.body.get("stringData")))
        for key in REQUIRED_KEYS.get(str(o.body.get("type")), ()) if o.kind == "Secret" else ():
            if key not in present:
                yield hit(o, ("data", key), E.required())


# ----------------------------------------------------------------- RBAC


@rule("AS016", ERROR, "an RBAC rule without verbs, api groups or resources, or mixing non-resource URLs with "
      "resources; a binding whose roleRef kind its scope cannot use (API server: ValidatePolicyRule, "
      "ValidateRoleBinding, ValidateClusterRoleBinding)",
      "every resource rule names verbs, apiGroups ('' for core) and resources; a ClusterRoleBinding binds a ClusterRole")
def rbac(model):
    for kind, namespaced in (("Role", True), ("ClusterRole", False)):
        for o in model.all(RBAC, kind):
            for i, r in enumerate(_list(o.body.get("rules"))):
                yield from _policy_rule(o, ("rules", i), _dict(r), namespaced)
    for kind, allowed in (("RoleBinding", ["Role", "ClusterRole"]), ("ClusterRoleBinding", ["ClusterRole"])):
        for o in model.all(RBAC, kind):
            ref = _dict(o.body.get("roleRef")).get("kind")
            if isinstance(ref, str) and ref not in allowed:
                yield hit(o, ("roleRef", "kind"), E.not_supported(ref, allowed))


def _policy_rule(o, at, r, namespaced):
    if not r.get("verbs"):
        yield hit(o, at + ("verbs",), E.required("verbs must contain at least one value"))
    urls = _list(r.get("nonResourceURLs"))
    if urls:
        if namespaced:
            yield hit(o, at + ("nonResourceURLs",), E.invalid(urls, "namespaced rules cannot apply to non-resource URLs"))
        if r.get("apiGroups") or r.get("resources") or r.get("resourceNames"):
            yield hit(o, at + ("nonResourceURLs",),
                      E.invalid(urls, "rules cannot apply to both regular resources and non-resource URLs"))
        return
    if not r.get("apiGroups"):
        yield hit(o, at + ("apiGroups",), E.required("resource rules must supply at least one api group"))
    if not r.get("resources"):
        yield hit(o, at + ("resources",), E.required("resource rules must supply at least one resource"))
