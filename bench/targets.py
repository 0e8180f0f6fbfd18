"""The issue's performance targets, each ratio of this run beside its target:
one table at the top of the report (bench/run.py fills it as it measures)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Target:
    what: str        # what is measured
    value: float     # this run's median ratio (or seconds)
    limit: float     # met when value <= limit
    unit: str = "×"
    note: str = ""   # how it was measured

    @property
    def met(self) -> bool:
        return self.value <= self.limit


BOARD: list[Target] = []


def record(what: str, value: float, limit: float, unit: str = "×", note: str = "") -> None:
    BOARD.append(Target(what, value, limit, unit, note))


def _fmt(x: float, unit: str) -> str:
    return f"{x:.2f}{unit}" if unit in ("×", "") else f"{x:.2f} {unit}"


def table() -> list[str]:
    if not BOARD:
        return []
    lines = ["## Targets", "", "Each figure is this run's median; ratios are to the floor named in its section below.", "",
             "| measure | this run | target | met |", "|---|---:|---:|---|"]
    for t in BOARD:
        what = f"{t.what} ({t.note})" if t.note else t.what
        lines.append(f"| {what} | {_fmt(t.value, t.unit)} | ≤ {_fmt(t.limit, t.unit)} | {'yes' if t.met else '**no**'} |")
    return lines + [""]
