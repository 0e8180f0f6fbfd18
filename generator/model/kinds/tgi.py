"""Text Generation Inference: a Deployment (one Kueue Workload per pod) and a Service."""
from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from ...kernel.errors import Problem
from ..check_context import CheckContext
from ..fields import Count, DnsLabel, Port, PositiveCount, ServiceName
from .base import Resources, WorkloadBase
from .gpu import gpu_checks


class Tgi(WorkloadBase):
    """Text Generation Inference server: a Deployment and a Service."""
    serves: ClassVar = True
    kind: Literal["tgi"]
    model: str = Field(min_length=1, max_length=253, pattern=r"^[^\s]+$")
    replicas: Count = 1
    gpus: PositiveCount = Field(description="GPUs per replica; the model is sharded across them.")
    resources: Resources | None = None
    port: Port = 8000
    service_name: ServiceName | None = None
    app_label: DnsLabel | None = None

    priority_kind: ClassVar = "priorityClass"
    frameworks: ClassVar = ("pod", "deployment")
    device: ClassVar = "gpu"
    required_values: ClassVar = ("hfTokenSecret",)
    root_image: ClassVar = "Text Generation Inference"

    @property
    def service(self) -> str:
        return self.service_name or self.name

    @property
    def app(self) -> str:
        return self.app_label or self.name

    def check(self, ctx: CheckContext) -> list[Problem]:
        return gpu_checks(self, ctx, self.gpus, self.resources)

    def names_of_objects(self) -> list[tuple[str, str]]:
        return [("Deployment", self.name), ("Service", self.service)]
