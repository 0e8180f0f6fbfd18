"""Kubernetes resource quantities as Decimals.

generator/quantity.py parses with the kubernetes client, whose import costs
0.2 to 0.9 s; the validator must start fast, so it parses the (small, stable)
quantity grammar itself. tests/test_validate_units.py checks it against the
client's parser."""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_SUFFIX = {
    "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40, "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60,
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
    "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"),
    "T": Decimal("1e12"), "P": Decimal("1e15"), "E": Decimal("1e18"),
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$")


def parse(value) -> Decimal:
    """'500m' -> 0.5, '30Gi' -> 32212254720, 4 -> 4. ValueError when it is not a quantity."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a quantity")
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    m = _QUANTITY.match(str(value).strip())
    if not m:
        raise ValueError(f"{value!r} is not a quantity")
    number, exponent, suffix = m.groups()
    try:
        if exponent:
            return Decimal(number + exponent)
        return Decimal(number) * _SUFFIX[suffix or ""]
    except InvalidOperation:
        raise ValueError(f"{value!r} is not a quantity") from None


def fmt(value: Decimal) -> str:
    """Shortest plain rendering for messages: 8, 0.5, 34359738368 -> 32Gi."""
    value = Decimal(value)
    if value == value.to_integral_value():
        n = int(value)
        for unit in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
            size = int(_SUFFIX[unit])
            if n >= size and n % size == 0:
                return f"{n // size}{unit}"
        return str(n)
    return f"{value.normalize():f}"
