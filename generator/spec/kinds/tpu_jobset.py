"""A JobSet of TPU slices running images/jax-slice-check: `slices` Jobs, each one
slice of `shape`; Kueue admits them all at once."""
from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from ... import tpu
from ...errors import Problem
from ..context import CheckContext
from ..fields import Count, DnsLabel, PositiveCount
from .base import Resources, WorkloadBase, container, pod_template
from .tpu_common import shape_checks, tpu_type, vm_fit

SHAPE = r"^[1-9][0-9]*(x[1-9][0-9]*){1,2}$"



class TpuJobset(WorkloadBase):
    """A JobSet of TPU slices running the jax-slice-check image: `slices` Jobs, each one slice of
    `shape`; Kueue admits them all at once."""
    kind: Literal["tpu-jobset"]
    shape: str = Field(pattern=SHAPE, description="Chip grid of one slice, e.g. 2x2x2 or 4x4.")
    slices: PositiveCount = Field(description="Jobs (slices) in the JobSet.")
    replicated_job_name: DnsLabel = "job-jax"
    backoff_limit: Count = 10
    resources: Resources

    priority_kind: ClassVar = "workloadPriorityClass"
    frameworks: ClassVar = ("jobset.x-k8s.io/jobset",)
    controllers: ClassVar = ("jobset",)
    device: ClassVar = "tpu"

    def slice_demand(self, ctx: CheckContext) -> tpu.Demand | None:
        t = tpu_type(ctx)
        if t is None:
            return None
        try:
            shape = tpu.Shape.parse(self.shape, t)
        except ValueError:
            return None
        # Kueue admits a JobSet whole: every slice at once.
        chips = self.slices * shape.chips
        plural = "s" if self.slices != 1 else ""
        return tpu.Demand(chips, chips, shape.chips, f"{self.slices} slice{plural} of {shape.text}")

    def check(self, ctx: CheckContext) -> list[Problem]:
        out = [Problem("resources", f"TPU pods need explicit {r} requests (a pod takes a whole VM)")
               for r in ("cpu", "memory") if r not in self.resources.requests()]
        bad = shape_checks(self, ctx, self.slice_demand(ctx), "slices")
        if bad:
            return out + bad
        long_name = tpu.slice_name_problem(self.namespace, "JobSet", self.name, self.replicated_job_name,
                                           self.slices - 1, "the namespace, the workload name or replicatedJobName")
        if long_name:
            out.append(Problem("name", long_name))
        return out + vm_fit(ctx, [("resources", self.resources.requests())])

    def demand_objects(self, ctx: CheckContext) -> list[dict]:
        t = tpu_type(ctx)
        if t is None:
            return []
        shape = tpu.Shape.parse(self.shape, t)
        pod = pod_template(container(self.resources.requests(), {"google.com/tpu": shape.tpus_per_pod}))
        return [{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": self.name},
                 "spec": {"replicatedJobs": [{"name": self.replicated_job_name, "replicas": self.slices,
                                              "template": {"spec": {"parallelism": shape.pods,
                                                                    "completions": shape.pods, "template": pod}}}]}}]

    def names_of_objects(self) -> list[tuple[str, str]]:
        return [("JobSet", self.name)]
