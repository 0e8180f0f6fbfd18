"""What a spec check sees: the whole platform and, for per-profile checks,
the profile at hand. Problems are reported with paths relative to the
object being checked; the caller prefixes them."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:   # types only: the model imports the kinds, which import this module
    from .spec import Platform, Profile

T = TypeVar("T")


@dataclass(frozen=True)
class CheckContext:
    platform: Platform
    profile: Profile
    # What checks work out from the platform, the profile and one workload alone (the spec is
    # immutable), kept for the other checks of that workload on this profile: key -> (the
    # workload, the answer). Holding the workload keeps its id its own.
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    def remembered(self, what: str, w, work: Callable[[], T]) -> T:
        """work(), worked out once per workload `w` and `what` on this context."""
        key = (what, id(w))
        found = self.memo.get(key)
        if found is None or found[0] is not w:
            found = self.memo[key] = (w, work())
        return found[1]
