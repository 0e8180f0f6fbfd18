"""A JobSet of TPU slices running images/jax-slice-check: `slices` Jobs, each one
slice of `shape`; Kueue admits them all at once."""
from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from ...kernel import tpu_slices
from ...kernel.errors import Problem
from ..check_context import CheckContext
from ..fields import Count, DnsLabel, PositiveCount, SpecModel
from .base import ImageContract, Resources, WorkloadBase
from .tpu_common import shape_checks, slice_of, target, vm_fit

SHAPE = r"^[1-9][0-9]*(x[1-9][0-9]*){1,2}$"


class FailurePolicy(SpecModel):
    """JobSet runs (training as a JobSet, tpu-jobset): restart the whole gang when a Job
    fails, up to maxRestarts times; a pod lost to a node's disruption (host maintenance, eviction, Spot
    reclaim: the DisruptionTarget condition) restarts it without using up the budget
    (JobSet's host-maintenance-event-model example)."""
    max_restarts: Count = Field(3, description="JobSet failurePolicy.maxRestarts: restarts of the whole JobSet "
                                               "after a failure of the program (JobSet's failure-policy examples "
                                               "use 3).")
    ignore_disruptions: bool = Field(True, description="A pod lost to node maintenance, eviction or Spot "
                                                       "reclaim restarts the JobSet without counting against "
                                                       "maxRestarts.")


class TpuJobset(WorkloadBase):
    """A JobSet of TPU slices running the jax-slice-check image: `slices` Jobs, each one slice of
    `shape`; Kueue admits them all at once."""
    kind: Literal["tpu-jobset"]
    shape: str = Field(pattern=SHAPE, description="Chip grid of one slice, e.g. 2x2x2 or 4x4.")
    slices: PositiveCount = Field(description="Jobs (slices) in the JobSet.")
    replicated_job_name: DnsLabel = "job-jax"
    backoff_limit: Count = 10
    failure_policy: FailurePolicy = Field(default_factory=FailurePolicy,
                                          description="Restarts of the JobSet after failures (as training's).")
    resources: Resources

    priority_kind: ClassVar = "workloadPriorityClass"
    frameworks: ClassVar = ("jobset.x-k8s.io/jobset",)
    controllers: ClassVar = ("jobset",)
    device: ClassVar = "tpu"
    # images/jax-slice-check/Dockerfile: USER 10001:10001; JAX and libtpu write under $HOME and /tmp.
    image_contract: ClassVar = ImageContract("images/jax-slice-check", 10001, ("/tmp", "/home/slicecheck"))

    def slice_demand(self, ctx: CheckContext) -> tpu_slices.Demand | None:
        s = slice_of(self, ctx)
        if s is None:
            return None
        # Kueue admits a JobSet whole: every slice at once.
        chips = self.slices * s.chips
        plural = "s" if self.slices != 1 else ""
        return tpu_slices.Demand(chips, chips, s.chips, f"{self.slices} slice{plural} of {s.text}")

    def check(self, ctx: CheckContext) -> list[Problem]:
        out = [Problem("resources", f"TPU pods need explicit {r} requests (a pod takes a whole VM)")
               for r in ("cpu", "memory") if r not in self.resources.requests()]
        bad = shape_checks(self, ctx, self.slice_demand(ctx), "slices")
        if bad:
            return out + bad
        t = target(self, ctx)
        if t is not None and t.dynamic:
            # Only GKE's slice controller (TPU7x) names Slices after the workload.
            long_name = tpu_slices.slice_name_problem(self.namespace, "JobSet", self.name, self.replicated_job_name,
                                               self.slices - 1, "the namespace, the workload name or replicatedJobName")
            if long_name and tpu_slices.dynamic(t.generation).admission_check_controller:
                out.append(Problem("name", long_name))
        elif t is not None and self.slices > t.static_slices(self.shape):
            out.append(Problem("slices", f"{self.slices} slices of {self.shape} are admitted together, but profile "
                                         f"{ctx.profile.name!r} has node pools for {t.static_slices(self.shape)}; "
                                         "it could never be admitted"))
        return out + vm_fit(self, ctx, [("resources", self.resources.requests())])

    def names_of_objects(self) -> list[tuple[str, str]]:
        return [("JobSet", self.name)]
