"""The Kueue releases the planner models, and the scheduler rules that differ between them.

Read from each release's pkg/features/kube_features.go (default-on gates) and pkg/scheduler
(kubernetes-sigs/kueue at v0.12.3, v0.17.4, v0.19.2); docs/plan.md lists what differs and is
not modelled."""
from __future__ import annotations

from dataclasses import dataclass

from ..kernel import versions

DEFAULT = "v0.17.4"


@dataclass(frozen=True)
class Rules:
    release: str
    # Feature gates the scheduler reads, on by default in this release.
    gates: frozenset[str]
    # FlavorFungibilityPreserveScanProgress (beta, on from v0.19): a skipped entry keeps its
    # flavor scan progress, and an assignment from the previous cycle is not outdated by a
    # ClusterQueue generation that advanced since (scheduler.go markSkipped, lastAssignmentOutdated).
    # Before: skipping clears LastAssignment (setSkipped), and any newer generation does.
    preserve_scan_progress: bool
    # TopologyAwareScheduling (alpha, off at v0.12; beta, on from v0.14) and TASProfileMixed
    # (LeastFreeCapacity for unconstrained pod sets: off at v0.12, beta and on from v0.15).
    tas: bool = True
    tas_profile_mixed: bool = True


_FAIR = frozenset({"FairSharingPreemptWithinNominal", "FairSharingPrioritizeNonBorrowing"})   # beta from v0.17
RULES = {
    "v0.12.3": Rules("v0.12.3", frozenset(), False, tas=False, tas_profile_mixed=False),
    "v0.17.4": Rules("v0.17.4", _FAIR, False),
    "v0.19.2": Rules("v0.19.2", _FAIR | {"FlavorFungibilityPreserveScanProgress"}, True),
}


def rules(release: str) -> Rules:
    """The modelled rules of a release; one not modelled follows the nearest older one."""
    if release in RULES:
        return RULES[release]
    older = [r for r in RULES if _key(r) <= _key(release)]
    return RULES[max(older, key=_key)] if older else RULES[min(RULES, key=_key)]


def _key(release: str) -> tuple[int, ...]:
    return versions.number(release) or versions.number(DEFAULT)
