"""What a spec check sees: the whole platform and, for per-profile checks,
the profile at hand. Problems are reported with paths relative to the
object being checked; the caller prefixes them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # types only: the model imports the kinds, which import this module
    from .spec import Platform, Profile


@dataclass(frozen=True)
class CheckContext:
    platform: Platform
    profile: Profile
