"""policy/v1 PodDisruptionBudget as the API server validates it on create: kubernetes
v1.31 pkg/apis/policy/validation/validation.go (ValidatePodDisruptionBudgetSpec, with
apps/validation ValidatePositiveIntOrPercent and IsNotMoreThan100Percent)."""
from __future__ import annotations

from .. import apierrors as E, apimachinery as M
from ..findings import ERROR
from . import hit, rule

EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]   # supportedUnhealthyPodEvictionPolicies.List()


@rule("AS340", ERROR, "a PodDisruptionBudget the API server refuses: both minAvailable and maxUnavailable, either "
      "negative, not an int or a percent, or above 100%, a bad selector operator, an unknown "
      "unhealthyPodEvictionPolicy (API server: ValidatePodDisruptionBudgetSpec)",
      "set one of minAvailable / maxUnavailable, as a count (1) or a percent up to 100% (\"50%\")")
def pdb_spec(model):
    for o in model.all("policy", "PodDisruptionBudget"):
        spec = o.spec
        if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
            yield hit(o, ("spec",), E.invalid(spec, "minAvailable and maxUnavailable cannot be both set"))
        for key in ("minAvailable", "maxUnavailable"):
            v = spec.get(key)
            if v is None:
                continue
            for message in M.positive_int_or_percent(v) + M.not_more_than_100_percent(v):
                yield hit(o, ("spec", key), E.invalid(v, message))
        for path, message in M.label_selector(spec.get("selector"), ("spec", "selector")):
            yield hit(o, path, message)
        policy = spec.get("unhealthyPodEvictionPolicy")
        if isinstance(policy, str) and policy not in EVICTION_POLICIES:
            yield hit(o, ("spec", "unhealthyPodEvictionPolicy"), E.not_supported(policy, EVICTION_POLICIES))
