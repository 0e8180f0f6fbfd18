"""Field errors worded as the API server words them (k8s.io/apimachinery/pkg/util/
validation/field, errors.go: ErrorType strings and Error.ErrorBody), so that a finding
reads like the `kubectl apply` rejection it predicts. The field path is the finding's
own; these are the text after it ("Invalid value: 70000: must be between 1 and 65535,
inclusive")."""
from __future__ import annotations

import json

# k8s.io/apimachinery/pkg/util/validation: InclusiveRangeError(1, 65535), used by IsValidPortNum.
PORT_RANGE = "must be between 1 and 65535, inclusive"
# k8s.io/apimachinery/pkg/api/validation: ValidateNonnegativeField's isNegativeErrorMsg.
NEGATIVE = "must be greater than or equal to 0"
INT32_MAX = 2**31 - 1


def value(v) -> str:
    """A bad value as field.Error prints it: strings quoted (%q), numbers and booleans bare."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def invalid(v, detail: str) -> str:
    return f"Invalid value: {value(v)}: {detail}"


def duplicate(v) -> str:
    return f"Duplicate value: {value(v)}"


def required(detail: str = "") -> str:
    return "Required value" + (f": {detail}" if detail else "")


def not_found(v) -> str:
    return f"Not found: {value(v)}"


def not_supported(v, allowed) -> str:
    return f"Unsupported value: {value(v)}: supported values: {', '.join(json.dumps(a) for a in allowed)}"


def forbidden(detail: str) -> str:
    return f"Forbidden: {detail}"


def too_long(limit: int) -> str:
    return f"Too long: must have at most {limit} bytes"


def port_num(n) -> bool:
    """k8s.io/apimachinery/pkg/util/validation IsValidPortNum: 1..65535."""
    return isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= 65535


def too_many(actual: int, limit: int) -> str:
    """field.TooMany."""
    return f"Too many: {actual}: must have at most {limit} items"
