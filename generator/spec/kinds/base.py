"""What every workload kind shares: its common fields, what it needs from the
platform (priority kind, Kueue integrations, controllers, the device family it
runs on), and the hooks each kind fills in (checks next to its fields, and the
skeleton objects the demand module counts for the fit checks)."""
from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from ... import catalog
from ...errors import Problem
from ..context import CheckContext
from ..fields import DnsLabel, LabelSafeName, Quantity, ServiceName, SpecModel

AUTOPILOT_REQUIRED = ("cpu", "memory", "ephemeral-storage")


class Resources(SpecModel):
    """Per-pod requests besides accelerators (limits follow the profile's rules)."""
    cpu: Quantity | None = None
    memory: Quantity | None = None
    ephemeral_storage: Quantity | None = Field(None, alias="ephemeral-storage")

    def requests(self) -> dict[str, Any]:
        out = {"cpu": self.cpu, "memory": self.memory, "ephemeral-storage": self.ephemeral_storage}
        return {r: v for r, v in out.items() if v is not None}


class WorkloadBase(SpecModel):
    # DNS-1035 (a letter first): the name becomes Service, JobSet and LWS names.
    name: ServiceName
    profiles: list[DnsLabel] = Field(min_length=1)
    namespace: DnsLabel
    queue: LabelSafeName = Field(description="LocalQueue name in the workload's namespace.")
    priority: DnsLabel = Field(description="Name of a priority tier.")
    image: DnsLabel = Field(description="Key into `images`.")
    accelerator: str | None = Field(None, description="The accelerator to run on (GKE label value), where a "
                                                       "profile has several.",
                                    json_schema_extra={"enum": sorted(catalog.ACCELERATORS)})

    # What the kind needs from the platform.
    priority_kind: ClassVar[Literal["priorityClass", "workloadPriorityClass"]]
    frameworks: ClassVar[tuple[str, ...]]          # Kueue integrations
    controllers: ClassVar[tuple[str, ...]] = ()    # controller installs besides Kueue
    device: ClassVar[Literal["gpu", "tpu"]]        # the device family it runs on
    required_values: ClassVar[tuple[str, ...]] = ()   # profile values it reads

    @field_validator("profiles")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        dup = sorted({p for p in v if v.count(p) > 1})
        if dup:
            raise ValueError(f"lists {', '.join(dup)} more than once")
        return v

    def images(self) -> list[tuple[tuple, str]]:
        """(field path, image key) of every image the workload uses."""
        return [(("image",), self.image)]

    def check(self, ctx: CheckContext) -> list[Problem]:
        """Problems of this workload on one profile; paths relative to the workload."""
        return []

    def demand_objects(self, ctx: CheckContext) -> list[dict]:
        """Skeletons of the queued objects the builder emits (kinds, counts, pod
        requests): what generator/demand.py counts for the fit checks, without cdk8s.
        A test holds them equal to the built objects' demand."""
        return []

    def names_of_objects(self) -> list[tuple[str, str]]:
        """(kind, name) of the namespaced objects it creates, for duplicate detection."""
        return []


def autopilot_requests(resources: Resources | None, ctx: CheckContext, where: str = "resources") -> list[Problem]:
    """Autopilot injects default requests the ClusterQueue never sees; make them explicit."""
    if not ctx.profile.autopilot:
        return []
    have = resources.requests() if resources else {}
    missing = [r for r in AUTOPILOT_REQUIRED if r not in have]
    if missing:
        return [Problem(where, f"Autopilot profiles need explicit requests for {', '.join(missing)} "
                               "(Autopilot would inject defaults that Kueue's quota does not account for)")]
    return []


def container(requests: dict[str, Any], accelerators: dict[str, int] | None = None) -> dict:
    """A skeleton container with requests = limits (what the demand module counts)."""
    req = {**{r: str(v) for r, v in requests.items()}, **{r: str(n) for r, n in (accelerators or {}).items() if n}}
    return {"name": "c", "resources": {"requests": req}}


def pod_template(*containers: dict, init: tuple[dict, ...] = ()) -> dict:
    spec: dict = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return {"spec": spec}
