"""What every workload kind shares: its common fields, what it needs from the
platform (priority kind, Kueue integrations, controllers, the device family it
runs on), and the hooks each kind fills in (checks next to its fields, and the
skeleton objects the demand module counts for the fit checks)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from ...kernel import catalog, credentials
from ...kernel.errors import Problem
from ..check_context import CheckContext
from ..fields import DnsLabel, LabelSafeName, Quantity, ServiceName, SpecModel, enum_of
from ..pod import PodExtras, Security

AUTOPILOT_REQUIRED = ("cpu", "memory", "ephemeral-storage")
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

    # What the kind needs from the platform.
    priority_kind: ClassVar[Literal["priorityClass", "workloadPriorityClass"]]
    frameworks: ClassVar[tuple[str, ...]]          # Kueue integrations
    controllers: ClassVar[tuple[str, ...]] = ()    # controller installs besides Kueue
    device: ClassVar[Literal["gpu", "tpu"]]        # the device family it runs on
    required_values: ClassVar[tuple[str, ...]] = ()   # profile values it reads
    image_contract: ClassVar[ImageContract | None] = None   # the project's own image it runs, if any
    root_image: ClassVar[str | None] = None   # an upstream image that runs as root by default

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

    def demand_objects(self, ctx: CheckContext) -> list[dict]:
        """Skeletons of the queued objects the builder emits (kinds, counts, pod
        requests): what generator/kernel/demand.py counts for the fit checks, without cdk8s.
        tests/test_demand_skeletons.py holds them equal to the built objects' demand."""
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
