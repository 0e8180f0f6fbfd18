"""TPU slicing: flavor, topology, admission check and quotas for TPU profiles."""
from __future__ import annotations

from . import facts

TPU_ACCELERATORS = tuple(facts.TPU_TYPES)


def queue_objects(ctx, queue) -> None:
    raise NotImplementedError("TPU profiles are not built yet")
