"""Where TPU slices go inside a reservation of cubes.

GKE labels every TPU VM with the partition it sits in at each sub-slice size
(the Topology levels cloud.google.com/gke-tpu-partition-<shape>-id). Those
partitions are fixed and nested, so a sub-slice of shape AxBxC takes exactly
one partition: an axis-aligned box of that shape, in that orientation, at an
origin that is a multiple of the shape. Shapes whose every side is a multiple
of the cube's side are super-slices made of whole, empty cubes.

Each cube is an occupancy grid of chips. Placement is best fit, the way
Kueue's topology-aware scheduling prefers the fullest domain that still fits
(level by level, cube first), so small slices pack together and whole cubes
stay free for super-slices."""
from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass
from math import prod

from ..facts import TPU_PARTITION_LABEL, TpuType
from .. import catalog

Shape = tuple[int, int, int]


class ShapeError(ValueError):
    """A slice shape that no reservation of this TPU type can ever hold."""


def parse_shape(text: str) -> Shape:
    parts = str(text).split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ShapeError(f"slice topology {text!r} is not of the form AxBxC")
    return tuple(int(p) for p in parts)  # type: ignore[return-value]


def fmt_shape(shape: Shape) -> str:
    return "x".join(map(str, shape))


def chips(shape: Shape) -> int:
    return prod(shape)


@dataclass(frozen=True)
class Placement:
    shape: Shape
    cubes: tuple[int, ...]        # one cube for a sub-slice, several for a super-slice
    origin: Shape | None          # origin inside the cube (sub-slices only)

    def describe(self) -> str:
        if self.origin is None:
            which = ",".join(map(str, self.cubes))
            return f"{fmt_shape(self.shape)} on cube{'s' if len(self.cubes) > 1 else ''} {which}"
        return f"{fmt_shape(self.shape)} in cube {self.cubes[0]} at {fmt_shape(self.origin)}"


class Reservation:
    """The cubes of one TPU flavor and which owner holds each chip."""

    def __init__(self, tpu: TpuType, cubes: int, levels: tuple[str, ...] | None = None,
                 topology: str = "the Topology"):
        """levels: the node labels of the flavor's Kueue Topology. A shape can
        only be formed if its partition label is a level (None: all can)."""
        if cubes < 0:
            raise ValueError("a reservation cannot have a negative number of cubes")
        self.tpu = tpu
        self.cube = tpu.cube
        self.n_cubes = cubes
        self.levels = levels
        self.topology = topology
        self.sub_shapes = tuple(parse_shape(s) for s in tpu.subslice_shapes)
        # owner of each chip, per cube; absent = free
        self._grid: list[dict[Shape, str]] = [{} for _ in range(cubes)]
        self._held: dict[str, list[Placement]] = {}

    # -- shapes ---------------------------------------------------------
    def kind(self, shape: Shape) -> str:
        """'sub' (inside one cube) or 'super' (whole cubes); ShapeError otherwise."""
        # The catalog's sub-slice / whole-cube rule of the generation's dynamic slicing.
        mode = catalog.tpu_generation(self.tpu.accelerator).dynamic
        kind = mode.kind(catalog.TpuShape(tuple(shape))) if mode else None
        if kind == "subslice":
            self._need_level(shape, "sub-slices")
            return "sub"
        if kind == "superslice":
            self._need_level(self.cube, "slices of whole cubes")
            return "super"
        allowed = ", ".join(self.tpu.subslice_shapes)
        raise ShapeError(
            f"slice topology {fmt_shape(shape)} is neither a {self.tpu.accelerator} sub-slice "
            f"({allowed}) nor whole {fmt_shape(self.cube)} cubes with sides in non-decreasing order")

    def _need_level(self, shape: Shape, what: str) -> None:
        label = TPU_PARTITION_LABEL.format(shape=fmt_shape(shape))
        if self.levels is not None and label not in self.levels:
            raise ShapeError(f"{self.topology} has no level {label}, so {fmt_shape(shape)} {what} cannot be formed")

    def cubes_for(self, shape: Shape) -> int:
        return prod(s // c for s, c in zip(shape, self.cube))

    @property
    def cube_chips(self) -> int:
        return chips(self.cube)

    # -- state ----------------------------------------------------------
    def copy(self) -> "Reservation":
        return copy.deepcopy(self)

    def holders(self) -> list[str]:
        return sorted(self._held)

    def placements(self, owner: str) -> list[Placement]:
        return list(self._held.get(owner, ()))

    def used(self, cube: int) -> int:
        return len(self._grid[cube])

    def free_cubes(self) -> int:
        return sum(1 for g in self._grid if not g)

    def release(self, owner: str) -> None:
        for p in self._held.pop(owner, ()):
            for cube, cells in self._cells(p):
                for cell in cells:
                    del self._grid[cube][cell]

    def place(self, owner: str, shapes: list[Shape]) -> list[Placement] | None:
        """Place every slice for `owner`, all or nothing. Largest slices first
        (they have the fewest places to go); returns None if any does not fit."""
        if owner in self._held:
            raise ValueError(f"{owner} already holds slices")
        trial = self.copy()
        done: list[Placement] = []
        for shape in sorted(shapes, key=lambda s: (-chips(s), s)):
            p = trial._best(shape)
            if p is None:
                return None
            trial._occupy(owner, p)
            done.append(p)
        self._grid, self._held = trial._grid, trial._held
        return done

    def hold(self, owner: str, placements: list[Placement]) -> None:
        """Occupy placements found on a copy of this reservation (a scheduling snapshot)."""
        for p in placements:
            self._occupy(owner, p)

    def fits(self, shapes: list[Shape]) -> bool:
        return self.copy().place("\0probe", shapes) is not None

    def fits_empty(self, shapes: list[Shape]) -> bool:
        return Reservation(self.tpu, self.n_cubes, self.levels, self.topology).fits(shapes)

    # -- internals ------------------------------------------------------
    def _occupy(self, owner: str, p: Placement) -> None:
        for cube, cells in self._cells(p):
            for cell in cells:
                self._grid[cube][cell] = owner
        self._held.setdefault(owner, []).append(p)

    def _cells(self, p: Placement) -> list[tuple[int, list[Shape]]]:
        """(cube, chip coordinates) for each cube the placement touches."""
        if p.origin is None:
            return [(cube, _box((0, 0, 0), self.cube)) for cube in p.cubes]
        return [(p.cubes[0], _box(p.origin, p.shape))]

    def _best(self, shape: Shape) -> Placement | None:
        if self.kind(shape) == "super":
            need = self.cubes_for(shape)
            empty = [i for i, g in enumerate(self._grid) if not g]
            return Placement(shape, tuple(empty[:need]), None) if len(empty) >= need else None
        # Enclosing partitions, largest first: the cube, then every sub-slice
        # shape that contains this one. Prefer the fullest at each level.
        levels = [self.cube] + sorted(
            (s for s in self.sub_shapes if s != shape and all(a >= b for a, b in zip(s, shape))),
            key=lambda s: -chips(s))
        best_key, best = None, None
        for cube, grid in enumerate(self._grid):
            for origin in itertools.product(*(range(0, c, s) for c, s in zip(self.cube, shape))):
                if any(cell in grid for cell in _box(origin, shape)):
                    continue
                key = tuple(self._free_in(grid, origin, level) for level in levels) + (cube, origin)
                if best_key is None or key < best_key:
                    best_key, best = key, Placement(shape, (cube,), origin)
        return best

    @staticmethod
    def _free_in(grid: dict, origin: Shape, level: Shape) -> int:
        base = tuple(o - o % s for o, s in zip(origin, level))
        return sum(1 for cell in _box(base, level) if cell not in grid)


def _box(origin: Shape, shape: Shape) -> list[Shape]:
    return list(itertools.product(*(range(o, o + s) for o, s in zip(origin, shape))))
