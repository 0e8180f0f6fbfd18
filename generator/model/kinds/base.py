"""What every workload kind shares: its common fields, what it needs from the
platform (priority kind, Kueue integrations, controllers, the device family it
runs on), and the hooks each kind fills in (checks next to its fields). What a kind's
objects ask of Kueue is counted on the objects its builder emits (model/fit.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from ...kernel import catalog, credentials
from ...kernel.catalog.gpudirect import GpuDirect
from ...kernel.errors import Problem
from ..check_context import CheckContext
from ..fields import DnsLabel, LabelSafeName, Quantity, ServiceName, SpecModel, enum_of
from ..pod import PodExtras, Security

AUTOPILOT_REQUIRED = ("cpu", "memory", "ephemeral-storage")
# How GKE provisions a flavor's nodes: a Compute Engine reservation, on demand, Spot VMs, or
# flex-start (Dynamic Workload Scheduler). Spot and flex-start capacity can be taken back (Spot
# VMs are preempted; flex-start nodes last at most seven days), so serving defaults to the others.
Capacity = Literal["reserved", "on-demand", "spot", "flex-start"]
CAPACITIES: tuple[Capacity, ...] = ("reserved", "on-demand", "spot", "flex-start")
NON_PREEMPTIBLE: tuple[Capacity, ...] = ("reserved", "on-demand")
CAPACITY_DOC = ("Which capacity the pods may use: reserved, on-demand, spot, flex-start. Default: the team's "
                "`capacity`, else reserved and on-demand for serving kinds (tgi, t5, serving, tpu-pd-serving, "
                "a manifest's Deployment or LeaderWorkerSet) and any capacity for training and batch. The pods "
                "get a required node affinity that keeps them off the flavors of the other kinds (Kueue's flavor "
                "assigner reads it), and `plan` shows the flavor each workload gets.")


def unique_capacities(v: list[str] | None) -> list[str] | None:
    if v is not None:
        dup = sorted({c for c in v if v.count(c) > 1})
        if dup:
            raise ValueError(f"lists {', '.join(dup)} more than once")
    return v
# Node labels the generator (or Kueue's flavor) sets for the accelerator: pod.nodeSelector may not.
ACCELERATOR_SELECTORS = ("cloud.google.com/gke-accelerator", "cloud.google.com/gke-tpu-accelerator",
                         "cloud.google.com/gke-tpu-topology")


@dataclass(frozen=True)
class ImageContract:
    """How one of the project's own images runs (images/<dir>/Dockerfile): its non-root
    user and the paths it writes, which get emptyDir volumes under a read-only root."""
    directory: str
    uid: int
    writable: tuple[str, ...]


class Resources(SpecModel):
    """Per-pod requests besides accelerators (limits follow the profile's rules)."""
    cpu: Quantity | None = None
    memory: Quantity | None = None
    ephemeral_storage: Quantity | None = Field(None, alias="ephemeral-storage")

    def requests(self) -> dict[str, Any]:
        out = {"cpu": self.cpu, "memory": self.memory, "ephemeral-storage": self.ephemeral_storage}
        return {r: v for r, v in out.items() if v is not None}


def _mount_problems(mounts) -> list[Problem]:
    """What the API server refuses in a container's volumeMounts (k8s.io/kubernetes
    pkg/apis/core/validation/validation.go, ValidateVolumeMounts): a mountPath given twice
    ("must be unique"), and a subPath that leaves its volume (validateLocalDescendingPath:
    "must not contain '..'")."""
    out = []
    for i, m in enumerate(mounts):
        if m.mount_path in [x.mount_path for x in mounts[:i]]:
            out.append(Problem(f"pod.volumeMounts[{i}].mountPath", f"{m.mount_path!r} is mounted twice; the API "
                                                                  "server wants each mountPath once"))
        if m.sub_path is not None and ".." in m.sub_path.replace("\\", "/").split("/"):
            out.append(Problem(f"pod.volumeMounts[{i}].subPath", f"{m.sub_path!r} has a '..' element; a subPath "
                                                                "stays inside its volume (the API server refuses it)"))
    return out


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
                                    json_schema_extra=enum_of(catalog.ACCELERATORS))
    pod: PodExtras = Field(default_factory=PodExtras, description="Additions to the workload's pods.")
    security: Security = Field(default_factory=Security, description="How the containers run.")
    capacity: list[Capacity] | None = Field(None, min_length=1, description=CAPACITY_DOC)

    # What the kind needs from the platform.
    priority_kind: ClassVar[Literal["priorityClass", "workloadPriorityClass"]]
    frameworks: ClassVar[tuple[str, ...]]          # Kueue integrations
    controllers: ClassVar[tuple[str, ...]] = ()    # controller installs besides Kueue
    device: ClassVar[Literal["gpu", "tpu"]]        # the device family it runs on
    required_values: ClassVar[tuple[str, ...]] = ()   # profile values it reads
    image_contract: ClassVar[ImageContract | None] = None   # the project's own image it runs, if any
    root_image: ClassVar[str | None] = None   # an upstream image that runs as root by default
    serves: ClassVar[bool] = False   # long-running serving: kept off preemptible capacity by default

    _unique_capacity = field_validator("capacity")(unique_capacities)

    @field_validator("profiles")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        dup = sorted({p for p in v if v.count(p) > 1})
        if dup:
            raise ValueError(f"lists {', '.join(dup)} more than once")
        return v

    def companions(self) -> dict[tuple[str, str], tuple[str, Security, int | None]]:
        """Pods the workload runs beside its queued ones, not through Kueue: (kind, name) ->
        (field path of their `security`, how they run, the image's own non-root uid if it has one)."""
        return {}

    def images(self) -> list[tuple[tuple, str]]:
        """(field path, image key) of every image the workload uses."""
        return [(("image",), self.image)]

    def check(self, ctx: CheckContext) -> list[Problem]:
        """Problems of this workload on one profile; paths relative to the workload."""
        return []

    def check_pod(self) -> list[Problem]:
        """Problems of `pod:` and `security:`, the same on every profile."""
        out = []
        if self.root_image and not self.security.run_as_root and self.security.run_as_user is None:
            out.append(Problem("security", f"the {self.root_image} image runs as root by default: say so with "
                                           "`security: {runAsRoot: true}` (it still runs without privilege escalation "
                                           "or capabilities), or give a runAsUser the image supports"))
        for key, value in sorted(self.pod.env.items()):
            bad = credentials.in_env(key, value, tokens=False)
            if bad:
                out.append(Problem(f"pod.env.{key}", bad))
        for key in sorted(self.pod.node_selector):
            if key in ACCELERATOR_SELECTORS:
                out.append(Problem(f"pod.nodeSelector.{key}", "the generator selects the accelerator (and Kueue's "
                                                              "flavor adds its labels); name it with `accelerator`"))
        volumes = [v.name for v in self.pod.volumes]
        for i, v in enumerate(volumes):
            if v in volumes[:i]:
                out.append(Problem(f"pod.volumes[{i}].name", f"volume {v!r} is listed twice"))
        for i, m in enumerate(self.pod.volume_mounts):
            if m.name not in volumes:
                out.append(Problem(f"pod.volumeMounts[{i}].name", f"no volume {m.name!r} in pod.volumes "
                                                                  f"(declared: {', '.join(volumes) or 'none'})"))
        return out + _mount_problems(self.pod.volume_mounts)

    def names_of_objects(self) -> list[tuple[str, str]]:
        """(kind, name) of the namespaced objects it creates, for duplicate detection."""
        return []

    def uses_gpudirect(self, ctx: CheckContext) -> GpuDirect | None:
        """The GPUDirect networking its pods get (kinds that decorate their pods say)."""
        return None


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
