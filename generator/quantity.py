"""Kubernetes quantities: parsing is the validator's parser (the same grammar
as the `kubernetes` client's, checked against it in tests/test_validate_units.py,
without the client's 0.2-0.9 s import on every synth); formatting picks the
shortest exact unit so quotas read like hand-written ones."""
from __future__ import annotations

from decimal import Decimal

from .validate.quantity import parse as parse_quantity

_BINARY = (("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def parse(q) -> Decimal:
    return parse_quantity(q)


def fmt_cpu(value: Decimal) -> int | str:
    """Whole cores as an integer, else millicores (rounded down: quota must not overstate)."""
    value = Decimal(value)
    if value == value.to_integral_value():
        return int(value)
    return f"{int(value * 1000)}m"


def fmt_bytes(value: Decimal) -> str:
    """Largest binary unit that represents the value exactly, rounded down to Mi."""
    value = int(Decimal(value))
    for unit, size in _BINARY:
        if value >= size and value % size == 0:
            return f"{value // size}{unit}"
    mi = value // 2**20
    return f"{mi}Mi" if mi else str(value)


def fmt(resource: str, value: Decimal):
    if resource == "cpu":
        return fmt_cpu(value)
    if resource in ("memory", "ephemeral-storage"):
        return fmt_bytes(value)
    return int(value)
