"""The `duration` string format of CRD schemas, as the API server checks it.

k8s.io/apiextensions-apiserver v0.31.1 pkg/apiserver/validation/formats.go keeps `duration` among the
supported formats, and the schema validator checks it with k8s.io/kube-openapi
pkg/validation/strfmt/duration.go IsDuration: Go's time.ParseDuration, or else at least one
`<digits><space?><unit>` match whose unit is one of ns/us/µs/ms/s/m/h/d/w or their long forms
(`nano`, `micro`, `milli`, `sec`, `min`, `hr`, `hour`, `day`, `wk`, `week`, and words starting with
the last of each: `hours`, `weeks`). A bare number ("15") is neither. The Prometheus-engine CRDs
(PodMonitoring endpoints' interval and timeout, rules' interval and for) use it."""
from __future__ import annotations

import re

# Go time.ParseDuration: [-+]? then one or more <decimal><unit>, or the single "0".
_GO_UNITS = "ns|us|\u00b5s|\u03bcs|ms|s|m|h"
_GO = re.compile(rf"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:{_GO_UNITS}))+")
# strfmt durationMatcher `((\d+)\s*([A-Za-zµ]+))` (Go's \s: space, tab, newline, form feed, carriage return).
_MATCHER = re.compile("([0-9]+)[\t\n\f\r ]*([A-Za-z\u00b5]+)")
_UNITS = (("ns", "nano"), ("us", "\u00b5s", "micro"), ("ms", "milli"), ("s", "sec"), ("m", "min"),
          ("h", "hr", "hour"), ("d", "day"), ("w", "wk", "week"))
_INT64_MAX = 2**63 - 1   # strconv.Atoi on a 64-bit platform


def _go_duration(s: str) -> bool:
    return s in ("0", "+0", "-0") or _GO.fullmatch(s) is not None


def _unit_known(unit: str) -> bool:
    unit = unit.lower()
    return any((i == len(variants) - 1 and unit.startswith(v)) or v.lower() == unit
               for variants in _UNITS for i, v in enumerate(variants))


def is_duration(s: str) -> bool:
    """strfmt.IsDuration: ParseDuration succeeds."""
    if _go_duration(s):
        return True
    ok = False
    for digits, unit in _MATCHER.findall(s):
        if int(digits) > _INT64_MAX:
            return False          # Atoi fails: ParseDuration returns the error at once
        ok = ok or _unit_known(unit)
    return ok
