"""Kubernetes quantities. Parsing is the `kubernetes` client's parse_quantity,
loaded from its module file alone: importing the client package (0.2-0.9 s)
on every synth and validate would cost more than the rest of a small run.

One style for a person to read (`show`), used by every tool's messages: the
canonical form Kubernetes prints (apimachinery resource.Quantity.String: no
precision lost, no fractional digits, the largest exact suffix): 700m, 5u, 8,
1k; bytes (memory, ephemeral-storage, hugepages-*) in the largest exact binary
suffix (32Gi, 1536Mi), else the largest exact decimal one (1500M). The
suffix family is a guess where Kubernetes remembers the one written: binary
for bytes, decimal otherwise. `fmt` writes generated quota
(rounding down: a quota must not overstate what the nodes hold).
One limit for "too large": MAX_QUANTITY."""
from __future__ import annotations

import importlib.util
import re
from decimal import Decimal
from functools import lru_cache
from pathlib import Path


def _client_parse_quantity():
    pkg = importlib.util.find_spec("kubernetes")   # finds the package without importing it
    if pkg is None or not pkg.submodule_search_locations:
        raise ImportError("the kubernetes client package is not installed")
    path = Path(pkg.submodule_search_locations[0]) / "utils" / "quantity.py"
    spec = importlib.util.spec_from_file_location("_kubernetes_quantity", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.parse_quantity


_parse_quantity = _client_parse_quantity()
# The client is lax where the API server is not (Decimal takes spaces, NaN and
# Infinity; a bool is an int): only the Kubernetes quantity form gets through.
_FORM = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?$")


def parse(q) -> Decimal:
    """'500m' -> 0.5, '30Gi' -> 32212254720, 4 -> 4; ValueError when it is not a quantity."""
    if isinstance(q, bool):
        raise ValueError(f"{q!r} is not a quantity")
    if isinstance(q, float):
        if q != q or q in (float("inf"), float("-inf")):
            raise ValueError(f"{q!r} is not a quantity")
        q = repr(q)   # 0.3, not the binary float's 0.29999...
    if isinstance(q, int):
        return Decimal(q)
    if not isinstance(q, str):
        raise ValueError(f"{q!r} is not a quantity")
    return _parse_text(q)


@lru_cache(maxsize=4096)   # the same few quantities recur: a 1,000-workload spec and its objects hold 13,000
def _parse_text(q: str) -> Decimal:
    if not _FORM.match(q):
        raise ValueError(f"{q!r} is not a quantity")
    try:
        return _parse_quantity(q)
    except ArithmeticError:   # `1e999999999`: an exponent past any count Kubernetes can hold
        raise ValueError(f"{q!r} is not a quantity Kubernetes can hold (exponent too large)") from None


# Kueue keeps every quantity as an int64 count, milli-units for CPU (pkg/resources
# ResourceValue: MilliValue for cpu, Value otherwise): nothing larger can be counted.
MAX_QUANTITY = Decimal(2**63 - 1) / 1000


def brief(value) -> str:
    """A value as a message quotes it: its repr, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def too_large(value) -> str:
    """The one message for a quantity past MAX_QUANTITY."""
    return f"{brief(value)} is larger than Kueue can count (at most {int(MAX_QUANTITY)})"


_BINARY = (("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def fmt_cpu(value: Decimal) -> int | str:
    """Whole cores as an integer, else millicores (rounded down: quota must not overstate)."""
    value = Decimal(value)
    if value == value.to_integral_value():
        return int(value)
    return f"{int(value * 1000)}m"


def fmt_bytes(value: Decimal) -> int | str:
    """Largest binary unit that represents the value exactly, rounded down to Mi;
    under 1Mi a plain number of bytes (0 for none)."""
    n = int(Decimal(value))
    for unit, size in _BINARY:
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    mi = n // 2**20
    return f"{mi}Mi" if mi else n


_SUFFIX = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))
_SUB = (("m", 10**3), ("u", 10**6), ("n", 10**9))


def _bytes(resource: str) -> bool:
    return resource in ("memory", "ephemeral-storage", "storage") or resource.startswith("hugepages-")


def show(resource: str, value) -> str:
    """A quantity as a person reads it in every tool (see the module docstring):
    0.7 cpu -> 700m, 34359738368 memory -> 32Gi, 8 GPUs -> 8; a negative keeps its sign."""
    value = Decimal(value)
    sign, value = ("-" if value < 0 else ""), abs(value)
    if value == value.to_integral_value():
        n = int(value)
        for unit, size in (_SUFFIX + _DECIMAL) if _bytes(resource) else _DECIMAL:
            if n >= size and n % size == 0:
                return f"{sign}{n // size}{unit}"
        return f"{sign}{n}"
    for unit, scale in _SUB:
        scaled = value * scale
        if scaled == scaled.to_integral_value():
            return f"{sign}{int(scaled)}{unit}"
    # Finer than a nano-unit: Kubernetes rounds up to one (Quantity.RoundUp(Nano)).
    return f"{sign}{int((value * 10**9).to_integral_value(rounding='ROUND_CEILING'))}n"


def fmt(resource: str, value: Decimal):
    if resource == "cpu":
        return fmt_cpu(value)
    if resource in ("memory", "ephemeral-storage"):
        return fmt_bytes(value)
    return int(value)
