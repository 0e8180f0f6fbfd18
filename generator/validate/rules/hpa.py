"""HorizontalPodAutoscalers and their targets."""
from ..findings import ERROR, WARNING
from . import hit, rule


def _target(model, hpa):
    ref = hpa.spec.get("scaleTargetRef") or {}
    group = (ref.get("apiVersion") or "").rpartition("/")[0]
    for o in [*model.objects, *model.context]:
        if o.kind == ref.get("kind") and o.name == ref.get("name") and o.namespace == hpa.namespace \
                and (not ref.get("apiVersion") or o.group == group):
            return o
    return None


def _hpas(model):
    return model.all("autoscaling", "HorizontalPodAutoscaler")


@rule("HP001", ERROR, "an HPA's scaleTargetRef names no object in its namespace",
      "fix apiVersion/kind/name of scaleTargetRef; the HPA reports FailedGetScale forever")
def hpa_target_exists(model):
    for hpa in _hpas(model):
        ref = hpa.spec.get("scaleTargetRef") or {}
        if ref and _target(model, hpa) is None:
            yield hit(hpa, ("spec", "scaleTargetRef"), f"no {ref.get('kind')} {ref.get('name')!r} "
                      f"({ref.get('apiVersion', 'any version')}) in namespace {hpa.namespace or '(unset)'!r}",
                      missing=f"{ref.get('kind')} {ref.get('name')!r} in namespace {hpa.namespace!r}")


@rule("HP002", WARNING, "an HPA's target sets spec.replicas",
      "omit spec.replicas on HPA targets; otherwise every sync resets the HPA's count "
      "(argo-cd#1079, #5105)")
def hpa_target_has_no_replicas(model):
    for hpa in _hpas(model):
        target = _target(model, hpa)
        if target is not None and "replicas" in target.spec:
            yield hit(target, ("spec", "replicas"), f"scaled by HorizontalPodAutoscaler {hpa.name!r} "
                      f"but sets replicas: {target.spec['replicas']}")
