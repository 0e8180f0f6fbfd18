"""Where TPU slices go: a reservation of cubes under dynamic slicing, or the
fixed slices of a static node pool. Shapes are the device catalog's N-dimensional
TpuShape; what a generation allows (sub-slice shapes, the cube, partition
labels) is its slicing mode in the catalog (generator/kernel/catalog).

Dynamic slicing (TPU7x). GKE labels every TPU VM with the partition it sits in
at each sub-slice size (the Topology levels of the slicing mode's partition
label template). Those partitions are fixed and nested, so a sub-slice of shape
AxBxC takes exactly one partition: an axis-aligned box of that shape, in that
orientation, at an origin that is a multiple of the shape. Shapes whose every
side is a multiple of the cube's side are super-slices made of whole, empty
cubes. Each cube is an occupancy grid of chips. Placement is best fit, the way
Kueue's topology-aware scheduling prefers the fullest domain that still fits
(level by level, cube first), so small slices pack together and whole cubes
stay free for super-slices.

Static node pools (v5e, v5p, v6e, ...). A pool created with topology T is one
slice of T; a ResourceFlavor for such pools carries the accelerator and
topology labels, and its quota is all their chips, so the flavor holds
chips / chips-of-T slices. One Job of a JobSet (one LWS group, one Job) takes
one whole slice: one pod per VM, each with all of its VM's chips
(generator/kernel/tpu_slices.py Slice). Pods that do not add up to whole slices fit Kueue's
quota but never run: GKE has no node pool to put them on."""
from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass
from decimal import Decimal

from ..kernel.catalog import DynamicSlicing, TpuGeneration, TpuMachine, TpuShape

Cell = tuple[int, ...]            # a chip's coordinates inside a cube


class ShapeError(ValueError):
    """A slice shape that no reservation of this TPU generation can ever hold."""


def slice_shape(gen: TpuGeneration, text: str) -> TpuShape:
    """A slice topology of this generation's dimensionality; ShapeError otherwise."""
    try:
        return gen.shape(text)
    except ValueError as e:
        raise ShapeError(f"slice topology {e}") from None


@dataclass(frozen=True)
class Placement:
    shape: TpuShape
    cubes: tuple[int, ...]        # one cube for a sub-slice, several for a super-slice
    origin: Cell | None           # origin inside the cube (sub-slices only)

    def describe(self) -> str:
        if self.origin is None:
            which = ",".join(map(str, self.cubes))
            return f"{self.shape} on cube{'s' if len(self.cubes) > 1 else ''} {which}"
        return f"{self.shape} in cube {self.cubes[0]} at {'x'.join(map(str, self.origin))}"


def dynamic_mode(gen: TpuGeneration) -> DynamicSlicing:
    if gen.dynamic is None:
        raise ValueError(f"{gen.name} has no dynamic slicing")
    return gen.dynamic


class Reservation:
    """The cubes of one dynamically sliced TPU flavor and which owner holds each chip."""

    def __init__(self, gen: TpuGeneration, cubes: int, levels: tuple[str, ...] | None = None,
                 topology: str = "the Topology"):
        """levels: the node labels of the flavor's Kueue Topology. A shape can
        only be formed if its partition label is a level (None: all can)."""
        if cubes < 0:
            raise ValueError("a reservation cannot have a negative number of cubes")
        self.gen = gen
        self.mode = dynamic_mode(gen)
        self.cube = self.mode.cube
        self.n_cubes = cubes
        self.levels = levels
        self.topology = topology
        # owner of each chip, per cube; absent = free
        self._grid: list[dict[Cell, str]] = [{} for _ in range(cubes)]
        self._held: dict[str, list[Placement]] = {}

    @property
    def resource(self) -> str:
        return self.gen.resource

    def empty(self) -> Reservation:
        return Reservation(self.gen, self.n_cubes, self.levels, self.topology)

    # -- shapes ---------------------------------------------------------
    def kind(self, shape: TpuShape) -> str:
        """'sub' (inside one cube) or 'super' (whole cubes); ShapeError otherwise."""
        kind = self.mode.kind(shape)
        if kind == "subslice":
            self._need_level(shape, "sub-slices")
            return "sub"
        if kind == "superslice":
            self._need_level(self.cube, "slices of whole cubes")
            return "super"
        allowed = ", ".join(s.text for s in self.mode.subslice_shapes)
        raise ShapeError(
            f"slice topology {shape} is neither a {self.gen.accelerator} sub-slice "
            f"({allowed}) nor whole {self.cube} cubes with sides in non-decreasing order")

    def _need_level(self, shape: TpuShape, what: str) -> None:
        label = self.mode.partition_label(shape)
        if self.levels is not None and label not in self.levels:
            raise ShapeError(f"{self.topology} has no level {label}, so {shape} {what} cannot be formed")

    def cubes_for(self, shape: TpuShape) -> int:
        return self.mode.cubes(shape)

    @property
    def cube_chips(self) -> int:
        return self.cube.chips

    # -- state ----------------------------------------------------------
    def copy(self) -> Reservation:
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

    def place(self, owner: str, shapes: list[TpuShape]) -> list[Placement] | None:
        """Place every slice for `owner`, all or nothing. Largest slices first
        (they have the fewest places to go); returns None if any does not fit."""
        if owner in self._held:
            raise ValueError(f"{owner} already holds slices")
        trial = self.copy()
        done: list[Placement] = []
        for shape in sorted(shapes, key=lambda s: (-s.chips, s.dims)):
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

    def fits(self, shapes: list[TpuShape]) -> bool:
        return self.copy().place("\0probe", shapes) is not None

    def fits_empty(self, shapes: list[TpuShape]) -> bool:
        return self.empty().fits(shapes)

    # -- internals ------------------------------------------------------
    def _occupy(self, owner: str, p: Placement) -> None:
        for cube, cells in self._cells(p):
            for cell in cells:
                self._grid[cube][cell] = owner
        self._held.setdefault(owner, []).append(p)

    def _cells(self, p: Placement) -> list[tuple[int, list[Cell]]]:
        """(cube, chip coordinates) for each cube the placement touches."""
        if p.origin is None:
            return [(cube, _box((0,) * self.cube.ndim, self.cube.dims)) for cube in p.cubes]
        return [(p.cubes[0], _box(p.origin, p.shape.dims))]

    def _best(self, shape: TpuShape) -> Placement | None:
        if self.kind(shape) == "super":
            need = self.cubes_for(shape)
            empty = [i for i, g in enumerate(self._grid) if not g]
            return Placement(shape, tuple(empty[:need]), None) if len(empty) >= need else None
        # Enclosing partitions, largest first: the cube, then every sub-slice
        # shape that contains this one. Prefer the fullest at each level.
        levels = [self.cube] + sorted((s for s in self.mode.subslice_shapes if s != shape and shape.fits_in(s)),
                                      key=lambda s: -s.chips)
        keyed = [(tuple(self._free_in(grid, origin, level) for level in levels) + (cube, origin), cube, origin)
                 for cube, grid in enumerate(self._grid) for origin in self._origins(grid, shape)]
        if not keyed:
            return None
        _, cube, origin = min(keyed, key=lambda k: k[0])
        return Placement(shape, (cube,), origin)

    def _origins(self, grid: dict, shape: TpuShape):
        """Where in one cube the slice could start: aligned to its shape, on free cells only."""
        for origin in itertools.product(*(range(0, c, s) for c, s in zip(self.cube.dims, shape.dims, strict=True))):
            if not any(cell in grid for cell in _box(origin, shape.dims)):
                yield origin

    @staticmethod
    def _free_in(grid: dict, origin: Cell, level: TpuShape) -> int:
        base = tuple(o - o % s for o, s in zip(origin, level.dims, strict=True))
        return sum(1 for cell in _box(base, level.dims) if cell not in grid)


def _box(origin: Cell, dims: tuple[int, ...]) -> list[Cell]:
    return list(itertools.product(*(range(o, o + s) for o, s in zip(origin, dims, strict=True))))


# ---------------------------------------------------------------- static node pools
@dataclass(frozen=True)
class Group:
    """The pods of one slice group (a Job of a JobSet, an LWS group, a Job) on a
    static pool: how many such groups, pods per group, TPU chips per pod."""
    name: str
    groups: int
    pods: int
    chips_per_pod: tuple[Decimal, ...]      # one entry per pod set of the group

    @property
    def chips(self) -> Decimal:
        return sum(self.chips_per_pod, Decimal(0))


@dataclass(frozen=True)
class StaticPool:
    """A ResourceFlavor of static TPU node pools: every pool one slice of `shape`.
    `machine` comes from the flavor's instance-type label, when it has one."""
    flavor: str
    gen: TpuGeneration
    shape: TpuShape
    machine: TpuMachine | None

    @property
    def resource(self) -> str:
        return self.gen.resource

    def slices_in(self, chips: Decimal) -> int:
        """Whole slices in so many chips of quota."""
        return int(chips // self.shape.chips)

    def describe(self) -> str:
        vms = f", {self.machine.vms(self.shape)} {self.machine.name} VMs" \
            if self.machine and self.shape.chips % self.machine.chips == 0 else ""
        return f"{self.shape} slices of {self.gen.accelerator} ({self.shape.chips} chips{vms} each)"

    def problem(self, g: Group) -> str | None:
        """Why one group of pods is not one whole slice of this pool, or None."""
        per_pod = "/".join(str(c) for c in dict.fromkeys(g.chips_per_pod))
        what = f"{g.name} has {g.pods} pod{'s' if g.pods != 1 else ''} x {per_pod} {self.resource}"
        if g.chips != self.shape.chips:
            return (f"{what} = {g.chips} chips, not one whole {self.shape} slice ({self.shape.chips} chips) of "
                    f"flavor {self.flavor}")
        m = self.machine
        if m is not None and self.shape.chips % m.chips == 0:
            vms = m.vms(self.shape)
            if g.pods != vms or any(c != m.chips for c in g.chips_per_pod):
                return (f"{what}, but a {self.shape} slice of {m.name} is {vms} VM{'s' if vms != 1 else ''}: "
                        f"one pod per VM, each with its {m.chips} chips")
        return None
