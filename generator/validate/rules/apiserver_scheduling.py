"""scheduling.k8s.io/v1 PriorityClass as the API server validates it on create:
kubernetes v1.31 pkg/apis/scheduling/validation/validation.go ValidatePriorityClass,
which calls pkg/apis/core/validation ValidatePreemptionPolicy; SetDefaults_PriorityClass
fills an unset preemptionPolicy with PreemptLowerPriority. The value and system-name
checks of ValidatePriorityClass are AS013 (apiserver_kinds)."""
from __future__ import annotations

from .. import apierrors as E
from ..findings import ERROR
from . import hit, rule

PREEMPTION_POLICIES = ["PreemptLowerPriority", "Never"]


@rule("AS380", ERROR, "a PriorityClass preemptionPolicy other than PreemptLowerPriority or Never (API server: "
      "ValidatePriorityClass, ValidatePreemptionPolicy)",
      "preemptionPolicy: PreemptLowerPriority (the default) or Never")
def preemption_policy(model):
    for o in model.all("scheduling.k8s.io", "PriorityClass"):
        if "preemptionPolicy" not in o.body:
            continue
        policy = o.body.get("preemptionPolicy")
        if policy == "":
            yield hit(o, ("preemptionPolicy",), E.required())
        elif isinstance(policy, str) and policy not in PREEMPTION_POLICIES:
            yield hit(o, ("preemptionPolicy",), E.not_supported(policy, PREEMPTION_POLICIES))
