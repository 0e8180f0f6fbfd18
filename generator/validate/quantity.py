"""Kubernetes resource quantities as Decimals: parsing is generator/quantity.py's
(the kubernetes client's parser, without the client package's import);
`fmt` renders them for messages."""
from __future__ import annotations

from decimal import Decimal

from ..quantity import parse  # noqa: F401  (the validator's rules call quantity.parse)

_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def fmt(value: Decimal) -> str:
    """Shortest plain rendering for messages: 8, 0.5, 34359738368 -> 32Gi."""
    value = Decimal(value)
    if value == value.to_integral_value():
        n = int(value)
        for unit in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
            size = _SUFFIX[unit]
            if n >= size and n % size == 0:
                return f"{n // size}{unit}"
        return str(n)
    return f"{value.normalize():f}"
