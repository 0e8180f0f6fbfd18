"""Preemptible fine-tuning: an Indexed Job of `nodes` pods (one per machine)
with a headless Service; resumes from its checkpoint when re-admitted."""
from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from ...kernel.errors import Problem
from ..check_context import CheckContext
from ..fields import Count, DnsLabel, PositiveCount, ServiceName
from .base import ImageContract, Resources, WorkloadBase
from .gpu import gpu_checks

MOUNT = "/model-data"   # where the model bucket is mounted in the pod


class Finetune(WorkloadBase):
    """Preemptible fine-tuning: an Indexed Job of `nodes` pods with a headless Service; resumes
    from its checkpoint when re-admitted."""
    kind: Literal["finetune"]
    model: str = Field(min_length=1, pattern=r"^[^\s]+$")
    dataset: str = Field(min_length=1, pattern=r"^[^\s]+$")
    dataset_limit: PositiveCount | None = None
    nodes: PositiveCount
    gpus_per_node: PositiveCount
    resources: Resources | None = None
    epochs: PositiveCount = 1
    gradient_accumulation_steps: PositiveCount = 2
    checkpoint_save_steps: PositiveCount = 10
    experiment: str | None = Field(None, pattern=r"^[^\s]+$")
    new_model: str | None = Field(None, pattern=r"^[^\s]+$")
    model_path: str | None = Field(None, pattern=r"^/[^\s]*$")
    service_name: ServiceName | None = None
    app_label: DnsLabel | None = None
    backoff_limit: Count = 4
    termination_grace_period_seconds: PositiveCount = 60

    priority_kind: ClassVar = "priorityClass"
    frameworks: ClassVar = ("batch/job",)
    device: ClassVar = "gpu"
    required_values: ClassVar = ("modelBucket", "hfTokenSecret")
    # images/finetune/Dockerfile: USER 1000:1000; HF_HOME under /home/trainer.
    image_contract: ClassVar = ImageContract("images/finetune", 1000, ("/tmp", "/home/trainer"))

    @property
    def service(self) -> str:
        return self.service_name or f"{self.name}-headless"

    @property
    def app(self) -> str:
        return self.app_label or self.name

    def env(self) -> dict[str, object]:
        """The trainer's settings with their defaults, by the names images/finetune reads."""
        values: dict[str, object] = {
            "EXPERIMENT": self.experiment or f"{self.name}-experiment",
            "MODEL_NAME": self.model,
            "NEW_MODEL": self.new_model or f"{self.name}-model",
            "MODEL_PATH": self.model_path or f"{MOUNT}/{self.name}/experiment",
            "DATASET_NAME": self.dataset,
            "EPOCHS": self.epochs,
            "GRADIENT_ACCUMULATION_STEPS": self.gradient_accumulation_steps,
            "CHECKPOINT_SAVE_STEPS": self.checkpoint_save_steps,
        }
        if self.dataset_limit is not None:
            values["DATASET_LIMIT"] = self.dataset_limit
        return values

    def check(self, ctx: CheckContext) -> list[Problem]:
        return gpu_checks(self, ctx, self.gpus_per_node, self.resources)

    def names_of_objects(self) -> list[tuple[str, str]]:
        return [("Job", self.name), ("Service", self.service)]
