"""Teams sharing a cluster's accelerators through a Kueue cohort.

A team has its namespaces, a LocalQueue in each, and per profile a share of
the capacity: a nominal quota per flavor and resource (absolute, or a
percentage of what the flavor holds), with optional borrowing and lending
limits. Each team becomes a ClusterQueue in the profile's cohort; what no team
holds nominally stays with the profile's own ClusterQueue (the queue entry),
which lends it to the teams: the kueue-cohort tutorial's spillover queue."""
from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, WithJsonSchema, field_validator, model_validator

from ..kernel import quantity
from .fields import DnsLabel, DnsSubdomain, LabelSafeName, SpecModel, _quantity
from .kinds.base import Capacity, unique_capacities

_PERCENT = re.compile(r"^(100|[0-9]{1,2})(\.[0-9]+)?%$")


def _share(value: Any) -> Any:
    """A quantity, or a percentage of the flavor's capacity ("50%")."""
    if isinstance(value, str) and value.endswith("%"):
        if not _PERCENT.match(value):
            raise ValueError(f"{value!r} is not a percentage from 0% to 100%")
        return value
    return _quantity(value)


Share = Annotated[Any, BeforeValidator(_share), WithJsonSchema({
    "description": "A quantity (10, 500m, 10Gi) or a percentage of the flavor's capacity (50%).",
    "anyOf": [{"type": "integer", "minimum": 0}, {"type": "number", "minimum": 0}, {"type": "string"}]})]


def resolve(value: Any, capacity: Decimal, resource: str) -> Decimal:
    """An absolute amount: percentages are of `capacity`, rounded down to what a quota
    can say (millicores for cpu, whole units otherwise), so a share never overstates."""
    if isinstance(value, str) and value.endswith("%"):
        amount = capacity * Decimal(value[:-1]) / 100
        step = Decimal("0.001") if resource == "cpu" else Decimal(1)
        return (amount / step).to_integral_value(rounding="ROUND_FLOOR") * step
    return quantity.parse(value)


class ResourceShare(SpecModel):
    nominal: Share = Field(description="Nominal quota the team is guaranteed.")
    borrowing_limit: Share | None = Field(None, description="At most this much more, borrowed from the cohort.")
    lending_limit: Share | None = Field(None, description="At most this much of the nominal quota is lent to "
                                                          "others when the team does not use it.")

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        # `cpu: 10` is `cpu: {nominal: 10}`.
        return data if isinstance(data, dict) else {"nominal": data}


class BorrowWithinCohort(SpecModel):
    policy: Literal["Never", "LowerPriority"] = "LowerPriority"
    max_priority_threshold: int | None = Field(None, ge=-2147483648, le=2147483647)


class TeamPreemption(SpecModel):
    """The team ClusterQueue's preemption policy (Kueue's fields, in the CRD's order)."""
    borrow_within_cohort: BorrowWithinCohort | None = None
    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] | None = None
    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] | None = None

    def body(self) -> dict:
        return self.model_dump(by_alias=True, exclude_none=True)


class FairSharing(SpecModel):
    weight: Share = Field(description="The team's weight in fair sharing (Kueue default 1).")


class TeamProfile(SpecModel):
    """A team's share of one profile: flavor -> resource -> nominal (and limits). Flavors
    not listed: nominal 0, so the team can still borrow them."""
    quotas: dict[DnsSubdomain, dict[str, ResourceShare]] = Field(min_length=1)


class Team(SpecModel):
    name: DnsLabel
    namespaces: list[DnsLabel] = Field(min_length=1)
    local_queue: LabelSafeName | None = Field(None, description="LocalQueue in each namespace; default lq-<team>.")
    cluster_queue: DnsSubdomain | None = Field(None, description="The team's ClusterQueue; default cq-<team>.")
    profiles: dict[DnsLabel, TeamProfile] = Field(min_length=1)
    preemption: TeamPreemption = Field(default_factory=TeamPreemption)
    fair_sharing: FairSharing | None = None
    capacity: list[Capacity] | None = Field(
        None, min_length=1, description="The capacity the team's workloads may use by default (reserved, "
                                        "on-demand, spot, flex-start), in the order the team's ClusterQueue "
                                        "tries its flavors; a workload's own `capacity` overrides it.")

    _unique_capacity = field_validator("capacity")(unique_capacities)

    @property
    def queue_name(self) -> str:
        return self.local_queue or f"lq-{self.name}"

    @property
    def cq_name(self) -> str:
        return self.cluster_queue or f"cq-{self.name}"
