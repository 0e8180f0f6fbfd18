"""autoscaling/v2 HorizontalPodAutoscaler as the API server validates it on create:
kubernetes v1.31 pkg/apis/autoscaling/validation/validation.go
(validateHorizontalPodAutoscalerSpec, ValidateCrossVersionObjectReference,
validateMetrics, validateMetricSpec, validate{Object,External,Pods,Resource,
ContainerResource}Source, validateMetricTarget, validateMetricIdentifier,
validateBehavior, validateScalingRules, validateScalingPolicy), after the defaults of
pkg/apis/autoscaling/v2/defaults.go (a behavior's missing policies and selectPolicy are
filled in). The replica bounds are AS014 (apiserver_kinds). autoscaling/v1 objects are
converted before these run; their one metric is left to AS014 and the schema."""
from __future__ import annotations

from ...kernel import quantity
from .. import apierrors as E, apimachinery as M
from ..findings import ERROR
from . import hit, rule

MAX_PERIOD_SECONDS = 1800
MAX_STABILIZATION_WINDOW_SECONDS = 3600
SOURCE_TYPES = ["ContainerResource", "External", "Object", "Pods", "Resource"]   # validMetricSourceTypesList
# MetricSpec type -> the member that must carry it.
SOURCE_FIELD = {"Object": "object", "Pods": "pods", "Resource": "resource", "External": "external",
                "ContainerResource": "containerResource"}
POPULATE = "must populate information for the given metric source"


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _list(v) -> list:
    return v if isinstance(v, list) else []


def _v2(o) -> bool:
    # autoscaling/v2beta1 has another metric shape (targetAverageUtilization, ...); it is not checked
    return o.body.get("apiVersion") in ("autoscaling/v2", "autoscaling/v2beta2")


@rule("AS330", ERROR, "an HPA metric the API server refuses: an unknown type, the source for another type, no or "
      "two sources, a target without a value of its kind (Resource: averageUtilization or averageValue; Pods: "
      "averageValue; Object / External: value or averageValue), non-positive targets, a metric or object name with "
      "'/' or '%' (API server: validateMetrics, validateMetricSpec, validate*Source, validateMetricTarget, "
      "validateMetricIdentifier, ValidateCrossVersionObjectReference)",
      "each metric: type and the one matching field (resource, pods, object, external, containerResource) with a "
      "target of its kind")
def hpa_metrics(model):
    for o in model.all("autoscaling", "HorizontalPodAutoscaler"):
        if not _v2(o):
            continue
        ref = o.spec.get("scaleTargetRef")
        if isinstance(ref, dict):
            yield from _object_reference(o, ("spec", "scaleTargetRef"), ref)
        metrics = _list(o.spec.get("metrics"))
        for i, m in enumerate(metrics):
            if isinstance(m, dict):
                yield from _metric(o, ("spec", "metrics", i), m)
        # validateMetrics: minReplicas 0 (refused by AS014 while HPAScaleToZero is off) needs an Object or
        # External metric as well.
        kinds = {_dict(m).get("type") for m in metrics}
        if o.spec.get("minReplicas") == 0 and not kinds & {"Object", "External"}:
            yield hit(o, ("spec", "metrics"), E.forbidden("must specify at least one Object or External metric to "
                                                          "support scaling to zero replicas"))


def _object_reference(o, at, ref):
    for key in ("kind", "name"):
        v = ref.get(key)
        if v == "":
            yield hit(o, at + (key,), E.required())
        elif isinstance(v, str):
            for message in M.path_segment_name(v):
                yield hit(o, at + (key,), E.invalid(v, message))


def _metric(o, at, m):
    kind = m.get("type")
    # Upstream reports an unknown type twice (the set check and the switch); it is said once here.
    if not kind:
        yield hit(o, at + ("type",), E.required("must specify a metric source type"))
    elif kind not in SOURCE_FIELD:
        yield hit(o, at + ("type",), E.not_supported(kind, SOURCE_TYPES))
    present = [f for f in ("object", "external", "pods", "resource", "containerResource") if m.get(f) is not None]
    if present:   # only the first source present is validated
        yield from SOURCE_CHECKS[present[0]](o, at + (present[0],), _dict(m[present[0]]))
    expected = SOURCE_FIELD.get(kind)
    if expected and m.get(expected) is None:
        yield hit(o, at + (expected,), E.required(POPULATE))
    if len(present) != 1:
        for f in sorted(set(present) - {expected}):
            yield hit(o, at + (f,), E.forbidden("must populate the given metric source only"))


def _target(o, at, t):
    """validateMetricTarget."""
    kind = t.get("type")
    if not kind:
        yield hit(o, at + ("type",), E.required("must specify a metric target type"))
    if kind not in ("Utilization", "Value", "AverageValue"):
        yield hit(o, at + ("type",), E.invalid(kind or "", "must be either Utilization, Value, or AverageValue"))
    for key in ("value", "averageValue"):
        v = t.get(key)
        if v is None:
            continue
        try:
            sign = quantity.parse(v)
        except ValueError:
            continue   # not a quantity: the schema says so
        if sign <= 0:
            yield hit(o, at + (key,), E.invalid(v, "must be positive"))
    util = t.get("averageUtilization")
    if M.is_int(util) and util < 1:
        yield hit(o, at + ("averageUtilization",), E.invalid(util, "must be greater than 0"))


def _identifier(o, at, metric):
    """validateMetricIdentifier."""
    name = metric.get("name")
    if not name:
        yield hit(o, at + ("name",), E.required("must specify a metric name"))
    elif isinstance(name, str):
        for message in M.path_segment_name(name):
            yield hit(o, at + ("name",), E.invalid(name, message))


def _object_source(o, at, src):
    yield from _object_reference(o, at + ("describedObject",), _dict(src.get("describedObject")))
    yield from _identifier(o, at + ("metric",), _dict(src.get("metric")))
    t = _dict(src.get("target"))
    yield from _target(o, at + ("target",), t)
    if t.get("value") is None and t.get("averageValue") is None:
        yield hit(o, at + ("target", "averageValue"), E.required("must set either a target value or averageValue"))


def _external_source(o, at, src):
    yield from _identifier(o, at + ("metric",), _dict(src.get("metric")))
    t = _dict(src.get("target"))
    yield from _target(o, at + ("target",), t)
    if t.get("value") is None and t.get("averageValue") is None:
        yield hit(o, at + ("target", "averageValue"),
                  E.required("must set either a target value for metric or a per-pod target"))
    if t.get("value") is not None and t.get("averageValue") is not None:
        yield hit(o, at + ("target", "value"),
                  E.forbidden("may not set both a target value for metric and a per-pod target"))


def _pods_source(o, at, src):
    yield from _identifier(o, at + ("metric",), _dict(src.get("metric")))
    t = _dict(src.get("target"))
    yield from _target(o, at + ("target",), t)
    if t.get("averageValue") is None:
        yield hit(o, at + ("target", "averageValue"), E.required("must specify a positive target averageValue"))


def _resource_source(o, at, src, container: bool = False):
    if not src.get("name"):
        yield hit(o, at + ("name",), E.required("must specify a resource name"))
    if container:
        c = src.get("container")
        if not c:
            yield hit(o, at + ("container",), E.required("must specify a container"))
        elif isinstance(c, str):
            for message in M.dns1123_label(c):
                yield hit(o, at + ("container",), E.invalid(c, message))
    t = _dict(src.get("target"))
    yield from _target(o, at + ("target",), t)
    if t.get("averageUtilization") is None and t.get("averageValue") is None:
        yield hit(o, at + ("target", "averageUtilization"),
                  E.required("must set either a target raw value or a target utilization"))
    if t.get("averageUtilization") is not None and t.get("averageValue") is not None:
        yield hit(o, at + ("target", "averageValue"),
                  E.forbidden("may not set both a target raw value and a target utilization"))


def _container_resource_source(o, at, src):
    yield from _resource_source(o, at, src, container=True)


SOURCE_CHECKS = {"object": _object_source, "external": _external_source, "pods": _pods_source,
                 "resource": _resource_source, "containerResource": _container_resource_source}


# ----------------------------------------------------------------- behavior


@rule("AS331", ERROR, "an HPA behavior the API server refuses: a stabilization window outside 0-3600 s, an unknown "
      "selectPolicy, an empty policies list, a policy of unknown type, a value or period not above 0, a period over "
      "1800 s (API server: validateBehavior, validateScalingRules, validateScalingPolicy)",
      "policies: type Pods or Percent, value > 0, periodSeconds 1-1800; selectPolicy Max, Min or Disabled")
def hpa_behavior(model):
    for o in model.all("autoscaling", "HorizontalPodAutoscaler"):
        behavior = o.spec.get("behavior")
        if not _v2(o) or not isinstance(behavior, dict):
            continue
        for direction in ("scaleUp", "scaleDown"):
            rules = behavior.get(direction)
            if isinstance(rules, dict):
                yield from _scaling_rules(o, ("spec", "behavior", direction), rules)


def _scaling_rules(o, at, rules):
    window = rules.get("stabilizationWindowSeconds")
    if M.is_int(window) and window < 0:
        yield hit(o, at + ("stabilizationWindowSeconds",), E.invalid(window, "must be greater than or equal to zero"))
    if M.is_int(window) and window > MAX_STABILIZATION_WINDOW_SECONDS:
        yield hit(o, at + ("stabilizationWindowSeconds",),
                  E.invalid(window, f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"))
    select = rules.get("selectPolicy")
    if isinstance(select, str) and select not in ("Disabled", "Max", "Min"):
        yield hit(o, at + ("selectPolicy",), E.not_supported(select, ["Disabled", "Max", "Min"]))
    # GenerateHPAScaleUpRules / ScaleDownRules: policies are defaulted only when absent.
    policies = rules.get("policies")
    if isinstance(policies, list) and not policies:
        yield hit(o, at + ("policies",), E.required("must specify at least one Policy"))
    for i, p in enumerate(_list(policies)):
        if isinstance(p, dict):
            yield from _scaling_policy(o, at + ("policies", i), p)


def _scaling_policy(o, at, p):
    kind = p.get("type")
    if kind not in ("Pods", "Percent"):
        yield hit(o, at + ("type",), E.not_supported(kind or "", ["Percent", "Pods"]))
    for key in ("value", "periodSeconds"):
        v = p.get(key, 0)
        if M.is_int(v) and v <= 0:
            yield hit(o, at + (key,), E.invalid(v, "must be greater than zero"))
    period = p.get("periodSeconds")
    if M.is_int(period) and period > MAX_PERIOD_SECONDS:
        yield hit(o, at + ("periodSeconds",), E.invalid(period, f"must be less than or equal to {MAX_PERIOD_SECONDS}"))
