"""A TPU topology: chips per dimension, "2x4" (2-D) or "4x4x8" (3-D).

One type for every generation; what a generation allows is the catalog's
business (tpus.py), not the shape's."""
from __future__ import annotations

from dataclasses import dataclass
from math import prod


@dataclass(frozen=True, order=True)
class TpuShape:
    dims: tuple[int, ...]

    def __post_init__(self) -> None:
        if not self.dims or any(d < 1 for d in self.dims):
            raise ValueError(f"a TPU topology needs positive dimensions, not {self.dims!r}")

    @classmethod
    def parse(cls, text: object, ndim: int | None = None) -> TpuShape:
        """"4x4x8" -> TpuShape((4, 4, 8)). With ndim, the text must have that
        many dimensions (a v6e topology is 2-D, a v5p one 3-D)."""
        parts = str(text).split("x")
        if not all(p.isdigit() and int(p) > 0 for p in parts):
            example = "x".join(["2"] * (ndim or 2))
            raise ValueError(f"{text!r} is not a TPU topology like {example}")
        shape = cls(tuple(int(p) for p in parts))
        if ndim is not None:
            shape.require_dims(ndim)
        return shape

    def require_dims(self, ndim: int) -> None:
        if self.ndim != ndim:
            example = "x".join(["2"] * ndim)
            raise ValueError(f"{self.text} has {self.ndim} dimension{'s' if self.ndim != 1 else ''}, "
                             f"this TPU needs {ndim} (like {example})")

    @property
    def text(self) -> str:
        return "x".join(map(str, self.dims))

    def __str__(self) -> str:
        return self.text

    @property
    def ndim(self) -> int:
        return len(self.dims)

    @property
    def chips(self) -> int:
        return prod(self.dims)

    def vms(self, chips_per_vm: int) -> int:
        """VMs a slice of this topology takes on a machine type with chips_per_vm
        chips; every VM's chips belong to the slice, so they must divide evenly."""
        if self.chips % chips_per_vm:
            raise ValueError(f"{self.text} ({self.chips} chips) is not whole VMs of {chips_per_vm} chips")
        return self.chips // chips_per_vm

    @property
    def is_nondecreasing(self) -> bool:
        return list(self.dims) == sorted(self.dims)

    def sorted(self) -> TpuShape:
        return TpuShape(tuple(sorted(self.dims)))

    def fits_in(self, other: TpuShape) -> bool:
        """Every dimension no larger than other's, in the same orientation."""
        return self.ndim == other.ndim and all(a <= b for a, b in zip(self.dims, other.dims, strict=True))

    def is_multiple_of(self, unit: TpuShape) -> bool:
        """Every dimension a whole multiple of unit's: the shape tiles into units."""
        return self.ndim == unit.ndim and all(a % b == 0 for a, b in zip(self.dims, unit.dims, strict=True))

    def units(self, unit: TpuShape) -> int:
        """How many units (e.g. 4x4x4 cubes) tile this shape."""
        if not self.is_multiple_of(unit):
            raise ValueError(f"{self.text} is not whole {unit.text} blocks")
        return self.chips // unit.chips


def tilings(unit: TpuShape, max_units: int) -> list[TpuShape]:
    """Every shape made of at most max_units whole units (e.g. 4x4x4 cubes), sides
    in non-decreasing order, smallest first."""
    def counts(prefix: tuple[int, ...], low: int, room: int) -> list[tuple[int, ...]]:
        if len(prefix) == unit.ndim:
            return [prefix]
        return [c for n in range(low, room + 1) for c in counts(prefix + (n,), n, room // n)]
    shapes = [TpuShape(tuple(n * d for n, d in zip(c, unit.dims, strict=True))) for c in counts((), 1, max_units)]
    return sorted(shapes, key=lambda s: (s.chips, s.dims))
