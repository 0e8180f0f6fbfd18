"""Training, any framework, any accelerator: the program is the user's image, the launcher
a field (torchrun, accelerate, or JAX-style `python -m`), run as an Indexed Job or a
JobSet on GPU node pools, or as a JobSet of TPU slices. Checkpoints go to the profile's
bucket through GCS FUSE; the termination grace period is the time to save one when Kueue
preempts the job. On topology-aware GPU pools the pods can be kept inside one block,
sub-block or host (Kueue TAS)."""
from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from ...kernel import catalog, tpu_slices
from ...kernel.errors import Problem
from .. import hardware, topology
from ..check_context import CheckContext
from ..fields import Count, DnsLabel, PositiveCount, SpecModel
from .base import Resources, WorkloadBase
from .gpu import gpu_checks, gpudirect_of, gpudirect_problems
from .tpu_common import shape_checks, slice_of, target, vm_fit
from .tpu_jobset import SHAPE, FailurePolicy

LAUNCHERS = ("torchrun", "accelerate", "jax")
# What `placement.level` names: GKE's topology labels (catalog/labels.py).
TOPOLOGY_LEVELS = {"block": topology.BLOCK_LABEL, "subblock": topology.SUBBLOCK_LABEL, "host": topology.HOST_LABEL}


class Placement(SpecModel):
    """Kueue TAS: keep all pods inside one topology domain (required) or as few as
    possible (preferred); Kueue's podset-required-topology / podset-preferred-topology."""
    level: Literal["block", "subblock", "host"]
    mode: Literal["required", "preferred"] = "required"

    @property
    def annotation(self) -> str:
        return topology.REQUIRED if self.mode == "required" else topology.PREFERRED

    @property
    def label(self) -> str:
        return TOPOLOGY_LEVELS[self.level]


class TpuSlices(SpecModel):
    shape: str = Field(pattern=SHAPE, description="Chip grid of one slice, e.g. 4x4 or 2x2x2.")
    slices: PositiveCount = 1


class Checkpoints(SpecModel):
    """The profile's bucket (values.modelBucket) mounted through GCS FUSE."""
    path: str = Field("/checkpoints", pattern=r"^/[^\s:]*$", description="Mount path in the pod.")


class Training(WorkloadBase):
    """Training on GPUs or TPU slices: `launcher` runs `script` (torchrun, accelerate) or
    `module` (jax: python -m) of the workload's image, as an Indexed Job or a JobSet."""
    kind: Literal["training"]
    launcher: Literal["torchrun", "accelerate", "jax"]
    script: str | None = Field(None, pattern=r"^[^\s]+$", description="torchrun/accelerate: the training script.")
    module: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$", description="jax: python -m MODULE.")
    args: list[str] = Field(default_factory=list, description="Arguments after the script or module.")
    nodes: PositiveCount | None = Field(None, description="GPU: pods, one per node.")
    gpus_per_node: PositiveCount | None = None
    tpu: TpuSlices | None = Field(None, description="TPU: slices of one shape (a JobSet, one Job per slice).")
    run_as: Literal["job", "jobset"] | None = Field(None, description="Default: job on GPUs, jobset on TPUs.")
    resources: Resources | None = None
    placement: Placement | None = Field(None, description="GPU pools with topologyAware: keep the pods in one "
                                                          "block, sub-block or host.")
    checkpoints: Checkpoints | None = None
    termination_grace_period_seconds: PositiveCount = Field(300, description="Time to save a checkpoint after "
                                                                             "SIGTERM (Kueue preemption).")
    backoff_limit: Count | None = Field(None, description="Job backoffLimit. Default: 4 for an Indexed Job; 0 "
                                                        "in a JobSet, where failurePolicy restarts the gang.")
    failure_policy: FailurePolicy = Field(default_factory=FailurePolicy,
                                          description="JobSet runs: restarts after failures.")
    gpudirect: bool | None = Field(None, description="GPUDirect networking (TCPX, TCPXO, RDMA) on multi-node GPU "
                                                     "pools whose machine type has it: default on; false turns it "
                                                     "off; true requires it.")
    replicated_job_name: DnsLabel = "workers"

    priority_kind: ClassVar = "priorityClass"   # per instance: see _by_run_as
    frameworks: ClassVar = ("batch/job",)
    device: ClassVar = "gpu"

    @model_validator(mode="after")
    def _shape(self) -> Training:
        """One of GPU (nodes, gpusPerNode) or TPU (tpu); the launcher's entry point."""
        self._require_one_device()
        self._require_tpu_fields()
        self._require_entry_point()
        self._set_kind_facts()
        return self

    def _require_one_device(self) -> None:
        gpu = self.nodes is not None or self.gpus_per_node is not None
        if gpu == (self.tpu is not None):
            raise ValueError("give `nodes` and `gpusPerNode` (GPUs) or `tpu` (TPU slices), one of the two")
        if gpu and (self.nodes is None or self.gpus_per_node is None):
            raise ValueError("GPU training gives both `nodes` and `gpusPerNode`")

    def _require_tpu_fields(self) -> None:
        """TPU slices: a JAX program in a JobSet, placed by the slice shape."""
        if self.tpu is None:
            return
        if self.launcher != "jax":
            raise ValueError("TPU slices run JAX programs: use `launcher: jax` (with `module`)")
        if self.run_as == "job":
            raise ValueError("TPU slices run as a JobSet (one Job per slice): leave out `runAs`")
        if self.placement is not None:
            raise ValueError("`placement` is for topology-aware GPU pools; TPU slices are placed by their shape")

    def _require_entry_point(self) -> None:
        if self.launcher == "jax" and (self.module is None or self.script is not None):
            raise ValueError("`launcher: jax` runs `python -m <module>`: give `module`, not `script`")
        if self.launcher != "jax" and (self.script is None or self.module is not None):
            raise ValueError(f"`launcher: {self.launcher}` runs a script: give `script`, not `module`")

    def _set_kind_facts(self) -> None:
        """The class-level facts other kinds fix, which depend here on the device and on runAs."""
        object.__setattr__(self, "device", "tpu" if self.tpu is not None else "gpu")
        jobset = self.is_jobset
        object.__setattr__(self, "frameworks", ("jobset.x-k8s.io/jobset",) if jobset else ("batch/job",))
        object.__setattr__(self, "controllers", ("jobset",) if jobset else ())
        object.__setattr__(self, "priority_kind", "workloadPriorityClass" if jobset else "priorityClass")
        object.__setattr__(self, "required_values", ("modelBucket",) if self.checkpoints else ())

    @property
    def is_jobset(self) -> bool:
        return self.tpu is not None or self.run_as == "jobset"

    @property
    def job_backoff_limit(self) -> int:
        if self.backoff_limit is not None:
            return self.backoff_limit
        return 0 if self.is_jobset else 4

    @property
    def service(self) -> str:
        """The headless Service of an Indexed Job (a JobSet makes its own, named after it)."""
        return f"{self.name}-workers"

    @property
    def shape(self) -> str | None:
        """TPU: the slice shape (what the TPU helpers shared with tpu-jobset read)."""
        return self.tpu.shape if self.tpu else None

    @property
    def pods(self) -> int:
        return int(self.nodes or 0)

    def check_pod(self) -> list[Problem]:
        """The image is the user's: the spec says which uid it runs as (or that it needs root)."""
        out = super().check_pod()
        if not self.security.run_as_root and self.security.run_as_user is None:
            out.append(Problem("security", "the training image is yours: give the uid it runs as "
                                           "(`security: {runAsUser: 1000}`), or `runAsRoot: true` if it needs root"))
        return out

    def slice_demand(self, ctx: CheckContext) -> tpu_slices.Demand | None:
        s = slice_of(self, ctx)
        if s is None or self.tpu is None:
            return None
        chips = self.tpu.slices * s.chips
        return tpu_slices.Demand(chips, chips, s.chips, f"{self.tpu.slices} slice(s) of {s.text}")

    def check(self, ctx: CheckContext) -> list[Problem]:
        if self.tpu is not None:
            return self._tpu_checks(ctx)
        assert self.gpus_per_node is not None
        out = gpu_checks(self, ctx, self.gpus_per_node, self.resources) + \
            gpudirect_problems(self, ctx, self.pods, self.gpus_per_node, self.gpudirect, "gpusPerNode")
        if self.placement is not None:
            out += placement_checks(self, ctx, self.pods, self.gpus_per_node, self.placement.level,
                                    self.placement.mode, "placement")
        return out

    def uses_gpudirect(self, ctx: CheckContext) -> catalog.gpudirect.GpuDirect | None:
        """The networking its pods get: multi-node GPU runs on a pool that has it, unless turned off."""
        if self.tpu is not None:
            return None
        return gpudirect_of(self, ctx, self.pods, int(self.gpus_per_node or 0), self.gpudirect)

    def _tpu_checks(self, ctx: CheckContext) -> list[Problem]:
        assert self.tpu is not None
        requests = self.resources.requests() if self.resources else {}
        out = [Problem("resources", f"TPU pods need explicit {r} requests (a pod takes a whole VM)")
               for r in ("cpu", "memory") if r not in requests]
        bad = shape_checks(self, ctx, self.slice_demand(ctx), "tpu.slices")
        if bad:
            return out + [Problem("tpu.shape" if b.path == "shape" else b.path, b.message) for b in bad]
        t = target(self, ctx)
        if t is not None and t.dynamic:
            long_name = tpu_slices.slice_name_problem(self.namespace, "JobSet", self.name, self.replicated_job_name,
                                                self.tpu.slices - 1,
                                                "the namespace, the workload name or replicatedJobName")
            if long_name:
                out.append(Problem("name", long_name))
        elif t is not None and self.tpu.slices > t.static_slices(self.tpu.shape):
            out.append(Problem("tpu.slices", f"{self.tpu.slices} slices of {self.tpu.shape} are admitted together, "
                                             f"but profile {ctx.profile.name!r} has node pools for "
                                             f"{t.static_slices(self.tpu.shape)}; it could never be admitted"))
        return out + vm_fit(self, ctx, [("resources", requests)])

    def names_of_objects(self) -> list[tuple[str, str]]:
        if self.is_jobset:
            return [("JobSet", self.name)]
        return [("Job", self.name), ("Service", self.service)]


def placement_checks(w, ctx: CheckContext, pods: int, gpus_per_pod: int, level: str, mode: str,
                     where: str) -> list[Problem]:
    """TAS needs topology-aware pools and a Kueue that runs it by default; a required
    placement that can never hold the pods is refused here (plan says the same)."""
    p = ctx.profile
    if p._kueue is not None and not p.kueue.is_v1beta2:
        return [Problem(where, f"topology-aware scheduling is on by default from Kueue v0.14 (a beta "
                               f"feature gate); profile {p.name!r} runs {p.kueue.version}")]
    accel = hardware.accelerator_for(w, p, ctx.platform)
    pools = hardware.pools_for(p, accel) if accel else []
    aware = [pool for pool in pools if pool.topology_aware is not None]
    if not aware:
        return [Problem(where, f"no {accel or 'GPU'} node pool of profile {p.name!r} is topologyAware "
                               "(its nodes carry GKE's cloud.google.com/gce-topology-* labels only with "
                               "compact placement); set `topologyAware` on the pool or drop the placement")]
    if mode == "required":
        misfit = topology.never_fits(aware, pods, gpus_per_pod, level)
        if misfit:
            return [Problem(where, misfit)]
    return []
