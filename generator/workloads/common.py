"""Shared pieces of workload kinds: the build context and spec checks that
several kinds apply."""
from __future__ import annotations

from dataclasses import dataclass

import cdk8s

from .. import cdk
from ..errors import Problem
from ..spec import Profile, Spec

AUTOPILOT_REQUIRED = ("cpu", "memory", "ephemeral-storage")


@dataclass
class BuildContext:
    spec: Spec
    profile: Profile
    chart: cdk8s.Chart

    def image(self, key: str) -> str:
        return self.spec.image(key, self.profile)

    def add_custom(self, body: dict) -> None:
        cdk.custom(self.chart, body)


def autopilot_requests(w: dict, profile: dict) -> list[Problem]:
    """Autopilot injects default requests the ClusterQueue never sees; make them explicit."""
    if profile["platform"] != "autopilot":
        return []
    missing = [r for r in AUTOPILOT_REQUIRED if r not in w.get("resources", {})]
    if missing:
        return [Problem("resources", f"Autopilot profiles need explicit requests for {', '.join(missing)} "
                                     "(Autopilot would inject defaults that Kueue's quota does not account for)")]
    return []


def fits_one_node(w: dict, profile: dict, accelerators: int) -> list[Problem]:
    """On Standard a pod must fit one node of the pool."""
    from .. import facts

    pool = profile.get("nodePool")
    if not pool or pool["machineType"] not in facts.MACHINE_TYPES:
        return []
    mt = facts.MACHINE_TYPES[pool["machineType"]]
    if accelerators > mt.accelerators:
        return [Problem("", f"a pod asks for {accelerators} {mt.accelerator} but {mt.name} has {mt.accelerators} per node")]
    return []


def required_values(profile: dict, keys: tuple[str, ...], profile_name: str) -> list[Problem]:
    missing = [k for k in keys if k not in profile["values"]]
    if missing:
        return [Problem("profiles", f"profile {profile_name!r} needs values.{', values.'.join(missing)} for this workload")]
    return []
