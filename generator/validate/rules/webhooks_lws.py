"""The LWS webhook's create-time checks that WH003 (webhooks.py) does not hold: LWS v0.8.0
pkg/webhooks/leaderworkerset_webhook.go (LeaderWorkerSetWebhook.generalValidate,
validatePositiveIntOrPercent, isNotMoreThan100Percent, validateNonnegativeField,
validateUpdateSubGroupPolicy's lower bound), after the webhook's Default and the CRD's
structural defaults (replicas 1, size 1, rollingUpdateConfiguration maxUnavailable 1,
maxSurge 0, partition 0). Messages are the webhook's own."""
from __future__ import annotations

import math
import re

from .. import apierrors as E, apimachinery as M
from ..findings import ERROR
from . import hit, rule

LWS = "leaderworkerset.x-k8s.io"
MAX_INT32 = 2**31 - 1
EXCLUSIVE = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"   # v1.SubGroupExclusiveKeyAnnotationKey


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _int(v, default: int) -> int:
    return v if M.is_int(v) else default


@rule("WH110", ERROR, "a LeaderWorkerSet the LWS webhook refuses: replicas x size above 2^31-1, a rolling update "
      "maxUnavailable / maxSurge that is no positive int or percent up to 100%, both scaling to 0, a negative "
      "partition, subGroupSize below 1, the subgroup-exclusive-topology annotation without a subGroupPolicy (LWS "
      "webhook: generalValidate, validateUpdateSubGroupPolicy)",
      "maxUnavailable and maxSurge as a count or a percent up to 100%, not both 0; subGroupSize >= 1; set "
      "subGroupPolicy before asking for subgroup-exclusive placement")
def lws_spec(model):
    for o in model.all(LWS, "LeaderWorkerSet"):
        spec = o.spec
        template = _dict(spec.get("leaderWorkerTemplate"))
        replicas, size = _int(spec.get("replicas"), 1), _int(template.get("size"), 1)
        if replicas * size > MAX_INT32:
            yield hit(o, ("spec", "replicas"), E.invalid(replicas, f"the product of replicas and worker replicas must "
                                                                   f"not exceed {MAX_INT32}"))
        yield from _rollout(o, _dict(spec.get("rolloutStrategy")), replicas)
        policy = template.get("subGroupPolicy")
        if isinstance(policy, dict):
            sub = policy.get("subGroupSize")
            if M.is_int(sub) and sub < 1:
                # The webhook spells the path SubGroupPolicy.
                yield hit(o, ("spec", "leaderWorkerTemplate", "subGroupPolicy", "subGroupSize"),
                          E.invalid(sub, "subGroupSize must be equal or greater than 1"))
        elif EXCLUSIVE in o.annotations:
            yield hit(o, ("metadata", "annotations", EXCLUSIVE),
                      E.invalid(o.annotations[EXCLUSIVE], "cannot have subgroup-exclusive-topology without "
                                                          "subGroupSize set"))


def _rollout(o, strategy, replicas):
    if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
        return
    config = strategy.get("rollingUpdateConfiguration")
    config = config if isinstance(config, dict) else {}
    at = ("spec", "rolloutStrategy", "rollingUpdateConfiguration")
    unavailable, surge = config.get("maxUnavailable", 1), config.get("maxSurge", 0)
    for key, v in (("maxUnavailable", unavailable), ("maxSurge", surge)):
        for message in M.positive_int_or_percent(v) + M.not_more_than_100_percent(v):
            yield hit(o, at + (key,), E.invalid(v, message))
    partition = config.get("partition", 0)
    if M.is_int(partition) and partition < 0:
        yield hit(o, at + ("partition",), E.invalid(partition, E.NEGATIVE))
    # intstr.GetScaledValueFromIntOrPercent: maxUnavailable rounds down, maxSurge up.
    scaled_unavailable, scaled_surge = _scaled(unavailable, replicas, False), _scaled(surge, replicas, True)
    for key, v, scaled in (("maxUnavailable", unavailable, scaled_unavailable), ("maxSurge", surge, scaled_surge)):
        if scaled is None:
            yield hit(o, at + (key,), E.invalid(v, "invalid value"))
    if scaled_unavailable == 0 and scaled_surge == 0 and replicas != 0:
        yield hit(o, at + ("maxUnavailable",), E.invalid(unavailable, "must not be 0 when `maxSurge` is 0"))


def _scaled(v, total: int, round_up: bool) -> int | None:
    if M.is_int(v):
        return v
    # getIntOrPercentValueSafely: a string must end in % and hold an integer (strconv.Atoi).
    if isinstance(v, str) and v.endswith("%") and re.fullmatch(r"[-+]?\d+", v[:-1]):
        value = int(v[:-1]) * total / 100
        return math.ceil(value) if round_up else math.floor(value)
    return None
