"""apps/v1 Deployment, ReplicaSet, StatefulSet and DaemonSet as the API server
validates them on create: kubernetes v1.31 pkg/apis/apps/validation/validation.go
(ValidateDeploymentSpec, ValidateDeploymentStrategy, ValidateRollingUpdateDeployment,
ValidateReplicaSetSpec, ValidatePodTemplateSpecForReplicaSet, ValidateStatefulSetSpec,
validateRollingUpdateStatefulSet, ValidatePersistentVolumeClaimRetentionPolicy,
ValidateDaemonSetSpec, ValidateDaemonSetUpdateStrategy, ValidateRollingUpdateDaemonSet,
ValidatePositiveIntOrPercent, IsNotMoreThan100Percent), after the defaults of
pkg/apis/apps/v1/defaults.go. AS012 (apiserver_kinds) and WK001 (names) hold the
checks written first: negative replicas, restartPolicy, progressDeadlineSeconds,
maxUnavailable and maxSurge both 0, and the selector against the template labels."""
from __future__ import annotations

from .. import apierrors as E, apimachinery as M
from ..findings import ERROR
from . import hit, rule


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _selector(o, kind_word: str):
    """ValidateLabelSelector on spec.selector and the empty-selector check of each spec."""
    sel = o.spec.get("selector")
    for path, message in M.label_selector(sel, ("spec", "selector")):
        yield hit(o, path, message)
    if M.selector_empty(sel):
        yield hit(o, ("spec", "selector"), E.invalid(sel, f"empty selector is invalid for {kind_word}"))


def _template(o, kind: str):
    """ValidatePodTemplateSpecForReplicaSet / ValidateDaemonSetSpec / ValidateStatefulSetSpec:
    activeDeadlineSeconds is forbidden on pods that restart Always."""
    pod = _dict(_dict(o.spec.get("template")).get("spec"))
    if pod.get("activeDeadlineSeconds") is not None:
        yield hit(o, ("spec", "template", "spec", "activeDeadlineSeconds"),
                  E.forbidden(f"activeDeadlineSeconds in {kind} is not Supported"))


def _nonnegative(o, *keys):
    for key in keys:
        v = o.spec.get(key)
        if M.is_int(v) and v < 0:
            yield hit(o, ("spec", key), E.invalid(v, E.NEGATIVE))


def _int_or_percent(o, path, v, *, hundred: bool = True):
    """ValidatePositiveIntOrPercent and, where the caller asks, IsNotMoreThan100Percent."""
    for message in M.positive_int_or_percent(v):
        yield hit(o, path, E.invalid(v, message))
    for message in M.not_more_than_100_percent(v) if hundred else ():
        yield hit(o, path, E.invalid(v, message))


# ----------------------------------------------------------------- Deployment, ReplicaSet


@rule("AS320", ERROR, "a Deployment or ReplicaSet spec the API server refuses: an empty selector, an unknown strategy "
      "type, rollingUpdate with Recreate, maxSurge or maxUnavailable that is no positive int or percent, negative "
      "minReadySeconds / revisionHistoryLimit / progressDeadlineSeconds, activeDeadlineSeconds on the pods (API "
      "server: ValidateDeploymentSpec, ValidateDeploymentStrategy, ValidateRollingUpdateDeployment, "
      "ValidateReplicaSetSpec, ValidatePodTemplateSpecForReplicaSet)",
      "strategy RollingUpdate (maxSurge/maxUnavailable as 1 or 25%) or Recreate without rollingUpdate")
def deployment_spec(model):
    for o in model.all("apps", "ReplicaSet"):
        yield from _selector(o, "deployment")   # ValidateReplicaSetSpec's message says deployment too
        yield from _nonnegative(o, "minReadySeconds")
        yield from _template(o, "ReplicaSet")
    for o in model.all("apps", "Deployment"):
        yield from _selector(o, "deployment")
        yield from _nonnegative(o, "minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds")
        yield from _template(o, "ReplicaSet")   # ValidatePodTemplateSpecForReplicaSet names ReplicaSet
        yield from _deployment_strategy(o)


def _deployment_strategy(o):
    strategy = o.spec.get("strategy")
    if not isinstance(strategy, dict):
        return
    kind = strategy.get("type") or "RollingUpdate"   # SetDefaults_Deployment
    at = ("spec", "strategy")
    if kind == "Recreate":
        if strategy.get("rollingUpdate") is not None:
            yield hit(o, at + ("rollingUpdate",), E.forbidden("may not be specified when strategy `type` is "
                                                              "'Recreate'"))
    elif kind == "RollingUpdate":
        rolling = _dict(strategy.get("rollingUpdate"))
        for key in ("maxUnavailable", "maxSurge"):
            if key in rolling:
                # Only maxUnavailable is held to 100% here; AS012 reports it.
                yield from _int_or_percent(o, at + ("rollingUpdate", key), rolling[key], hundred=False)
    else:
        yield hit(o, at, E.not_supported(strategy, ["Recreate", "RollingUpdate"]))


# ----------------------------------------------------------------- StatefulSet


@rule("AS321", ERROR, "a StatefulSet spec the API server refuses: an unknown podManagementPolicy or updateStrategy "
      "type, rollingUpdate with OnDelete, a negative partition, maxUnavailable 0 or not a positive int / percent up "
      "to 100%, an unknown PVC retention policy, negative minReadySeconds or ordinals.start, an empty selector, "
      "activeDeadlineSeconds on the pods (API server: ValidateStatefulSetSpec, validateRollingUpdateStatefulSet, "
      "ValidatePersistentVolumeClaimRetentionPolicy)",
      "podManagementPolicy OrderedReady or Parallel; updateStrategy RollingUpdate or OnDelete; retention Retain or "
      "Delete")
def statefulset_spec(model):
    for o in model.all("apps", "StatefulSet"):
        policy = o.spec.get("podManagementPolicy")
        if isinstance(policy, str) and policy and policy not in ("OrderedReady", "Parallel"):   # "" is defaulted
            yield hit(o, ("spec", "podManagementPolicy"), E.invalid(policy, "must be 'OrderedReady' or 'Parallel'"))
        yield from _statefulset_strategy(o)
        retention = o.spec.get("persistentVolumeClaimRetentionPolicy")
        for key in ("whenDeleted", "whenScaled"):
            v = _dict(retention).get(key) or "Retain"   # SetDefaults_StatefulSet: an empty policy is Retain
            if v not in ("Retain", "Delete"):
                yield hit(o, ("spec", "persistentVolumeClaimRetentionPolicy", key),
                          E.not_supported(v, ["Retain", "Delete"]))
        yield from _nonnegative(o, "minReadySeconds")
        start = _dict(o.spec.get("ordinals")).get("start")
        if M.is_int(start) and start < 0:
            # The upstream path is the single segment "ordinals.start".
            yield hit(o, ("spec", "ordinals", "start"), E.invalid(start, E.NEGATIVE))
        yield from _selector(o, "statefulset")
        yield from _template(o, "StatefulSet")


def _statefulset_strategy(o):
    strategy = o.spec.get("updateStrategy")
    if not isinstance(strategy, dict):
        return
    kind = strategy.get("type") or "RollingUpdate"   # SetDefaults_StatefulSet
    at = ("spec", "updateStrategy")
    rolling = strategy.get("rollingUpdate")
    if kind == "OnDelete":
        if rolling is not None:
            yield hit(o, at + ("rollingUpdate",), E.invalid(rolling, "only allowed for updateStrategy 'RollingUpdate'"))
    elif kind == "RollingUpdate":
        rolling = _dict(rolling)
        partition = rolling.get("partition")
        if M.is_int(partition) and partition < 0:
            yield hit(o, at + ("rollingUpdate", "partition"), E.invalid(partition, E.NEGATIVE))
        if "maxUnavailable" in rolling:
            v = rolling["maxUnavailable"]
            path = at + ("rollingUpdate", "maxUnavailable")
            for message in M.positive_int_or_percent(v):
                yield hit(o, path, E.invalid(v, message))
            if M.int_or_percent_value(v) == 0:
                yield hit(o, path, E.invalid(v, "cannot be 0"))
            for message in M.not_more_than_100_percent(v):
                yield hit(o, path, E.invalid(v, message))
    else:
        yield hit(o, at, E.invalid(strategy, "must be 'RollingUpdate' or 'OnDelete'"))


# ----------------------------------------------------------------- DaemonSet


@rule("AS322", ERROR, "a DaemonSet spec the API server refuses: an empty selector, activeDeadlineSeconds on the pods, "
      "negative minReadySeconds or revisionHistoryLimit, an unknown updateStrategy type, maxSurge and maxUnavailable "
      "both non-zero (maxUnavailable defaults to 1) or both 0, either not a positive int / percent up to 100% (API "
      "server: ValidateDaemonSetSpec, ValidateDaemonSetUpdateStrategy, ValidateRollingUpdateDaemonSet)",
      "a DaemonSet surges or drops pods, not both: with maxSurge > 0 set maxUnavailable: 0")
def daemonset_spec(model):
    for o in model.all("apps", "DaemonSet"):
        yield from _selector(o, "daemonset")
        yield from _template(o, "DaemonSet")
        yield from _nonnegative(o, "minReadySeconds", "revisionHistoryLimit")
        yield from _daemonset_strategy(o)


def _daemonset_strategy(o):
    strategy = o.spec.get("updateStrategy")
    if not isinstance(strategy, dict):
        return
    kind = strategy.get("type") or "RollingUpdate"   # SetDefaults_DaemonSet
    at = ("spec", "updateStrategy")
    if kind == "OnDelete":
        return
    if kind != "RollingUpdate":
        yield hit(o, at, E.not_supported(strategy, ["RollingUpdate", "OnDelete"]))
        return
    # SetDefaults_DaemonSet: maxUnavailable 1 and maxSurge 0 when unset.
    rolling = _dict(strategy.get("rollingUpdate"))
    unavailable, surge = rolling.get("maxUnavailable", 1), rolling.get("maxSurge", 0)
    rolling_at = at + ("rollingUpdate",)
    yield from _int_or_percent(o, rolling_at + ("maxUnavailable",), unavailable)
    yield from _int_or_percent(o, rolling_at + ("maxSurge",), surge)
    has_unavailable = M.int_or_percent_value(unavailable) not in (0, None)
    has_surge = M.int_or_percent_value(surge) not in (0, None)
    if has_unavailable and has_surge:
        yield hit(o, rolling_at + ("maxSurge",), E.invalid(surge, "may not be set when maxUnavailable is non-zero"))
    elif not has_unavailable and not has_surge:
        yield hit(o, rolling_at + ("maxUnavailable",), E.required("cannot be 0 when maxSurge is 0"))
