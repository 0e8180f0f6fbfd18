"""A team's own manifest placed on the platform (kind `manifest`): a Job, JobSet,
LeaderWorkerSet or Deployment an engineer wrote, read from `file` (relative to the spec).
The generator adds what the platform needs (namespace, queue label, priority, the chosen
accelerator's node selector and tolerations, pod hardening) and keeps everything else as
written; its demand is counted by the demand module like any generated workload's.

RayJob and RayCluster are refused: KubeRay's CRDs are not among the pinned releases
(schemas/versions.yaml), so such objects could be neither checked nor validated."""
from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field, PrivateAttr

from ...kernel import catalog, demand, paths, userinput
from ...kernel.catalog.gpudirect import GpuDirect
from ...kernel.errors import Problem, SpecError
from .. import hardware, topology
from ..check_context import CheckContext
from ..fields import DnsLabel
from .base import WorkloadBase
from .training import TOPOLOGY_LEVELS, placement_checks

# apiVersion/kind -> (Kueue integrations, controller installs, priority by label?)
# Kueue integration names as in config/components/manager/controller_manager_config.yaml;
# Deployments are admitted pod by pod, so they need the `pod` integration too (as the tgi kind).
KINDS: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...], bool]] = {
    ("batch/v1", "Job"): (("batch/job",), (), False),
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): (("jobset.x-k8s.io/jobset",), ("jobset",), True),
    ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"): (("pod", "leaderworkerset.x-k8s.io/leaderworkerset"),
                                                         ("lws",), True),
    ("apps/v1", "Deployment"): (("pod", "deployment"), (), False),
}
RAY_KINDS = ("RayJob", "RayCluster", "RayService")


class Manifest(WorkloadBase):
    """A Job, JobSet, LeaderWorkerSet or Deployment of your own (`file`), placed on the platform:
    queue label, priority, accelerator selectors and tolerations, pod hardening added."""
    kind: Literal["manifest"]
    file: str = Field(min_length=1, description="The manifest file, relative to the spec file.")
    image: DnsLabel | None = Field(None, description="Not used: the images are the manifest's own.")  # type: ignore[assignment]
    gpudirect: bool = Field(False, description="Add GPUDirect networking (TCPX, TCPXO, RDMA) to the pod templates "
                                               "of 2 or more pods that ask for every GPU of a node whose machine "
                                               "type has it, as the training kind does. Off by default: the "
                                               "manifest is yours (validate's NW001 says where it is missing).")

    priority_kind: ClassVar = "priorityClass"
    frameworks: ClassVar = ("batch/job",)
    device: ClassVar = "gpu"

    _objects: list[dict] = PrivateAttr(default_factory=list)

    def images(self) -> list[tuple[tuple, str]]:
        return []

    def read(self, base: Path, contained: bool = True) -> list[Problem]:
        """Read the file (through the bounded reader) and set what the manifest's kind needs
        from the platform. Problems are relative to the workload."""
        path = Path(self.file) if Path(self.file).is_absolute() else base / self.file
        if contained and not paths.inside(path, base):
            # The spec's files stay in its repository: a link or `..` never reads a file elsewhere.
            return [Problem("file", f"{self.file}: leads outside the repository {base} (to {os.path.realpath(path)}); "
                                    "keep the manifest a plain file inside the repository")]
        try:
            objs = userinput.load_objects(path, "manifest")
        except SpecError as e:
            return [Problem("file", f"{self.file}: {p.message}") for p in e.problems]
        out, queued = self._placed_objects(objs)
        if not queued and not out:
            out.append(Problem("file", f"{self.file}: no Job, JobSet, LeaderWorkerSet or Deployment in it"))
        if out:
            return out
        self._objects = objs
        self._set_kind_facts(queued)
        return []

    def _placed_objects(self, objs: list[dict]) -> tuple[list[Problem], list[dict]]:
        """(problems, the objects Kueue queues): a workload must be one of the kinds this project places."""
        out = []
        queued = []
        for i, o in enumerate(objs):
            kind = o.get("kind")
            if kind in RAY_KINDS:
                out.append(Problem("file", f"{self.file}: document {i + 1} is a {kind}: KubeRay's CRDs are not "
                                           "pinned here, so it can be neither placed nor checked"))
            elif demand.is_workload(o):
                if (o.get("apiVersion"), kind) not in KINDS:
                    allowed = ", ".join(f"{a} {k}" for a, k in KINDS)
                    out.append(Problem("file", f"{self.file}: document {i + 1} is {o.get('apiVersion')} {kind}; "
                                               f"placed kinds: {allowed}"))
                else:
                    queued.append(o)
        return out, queued

    def _set_kind_facts(self, queued: list[dict]) -> None:
        """The class-level facts other kinds declare (frameworks, controllers, priority kind, device),
        taken here from the queued objects the file holds."""
        frameworks = tuple(dict.fromkeys(f for o in queued for f in KINDS[(o["apiVersion"], o["kind"])][0]))
        controllers = tuple(dict.fromkeys(c for o in queued for c in KINDS[(o["apiVersion"], o["kind"])][1]))
        by_label = any(KINDS[(o["apiVersion"], o["kind"])][2] for o in queued)
        resources = {r for o in queued for ps in demand.podsets(o) for r in ps.requests}
        object.__setattr__(self, "frameworks", frameworks)
        # A Deployment or LeaderWorkerSet serves: kept off preemptible capacity by default.
        object.__setattr__(self, "serves", any(o["kind"] in ("Deployment", "LeaderWorkerSet") for o in queued))
        object.__setattr__(self, "controllers", controllers)
        object.__setattr__(self, "priority_kind", "workloadPriorityClass" if by_label else "priorityClass")
        object.__setattr__(self, "device", "tpu" if catalog.node_labels.TPU_RESOURCE in resources else "gpu")

    @property
    def objects(self) -> list[dict]:
        """The manifest's objects as written (a copy: the builder edits its own)."""
        return copy.deepcopy(self._objects)

    def queued(self) -> list[dict]:
        return [o for o in self.objects if demand.is_workload(o)]

    def check(self, ctx: CheckContext) -> list[Problem]:
        out = []
        for o in self.objects:
            meta = o.get("metadata") or {}
            where = f"file {self.file} {o.get('kind')}/{meta.get('name')}"
            if not meta.get("name"):
                out.append(Problem("file", f"{self.file}: a {o.get('kind')} without metadata.name (generated names "
                                           "cannot be placed or reviewed)"))
            ns = meta.get("namespace")
            if ns is not None and ns != self.namespace:
                out.append(Problem("namespace", f"{where} is in namespace {ns!r}, the entry says {self.namespace!r}"))
            queue = (meta.get("labels") or {}).get("kueue.x-k8s.io/queue-name")
            if queue is not None and demand.is_workload(o) and queue != self.queue:
                out.append(Problem("queue", f"{where} names queue {queue!r}, the entry says {self.queue!r}"))

        return out + self._placement(ctx) + self._gpudirect_checks(ctx)

    def gpudirect_podsets(self, ctx: CheckContext, objs: list[dict] | None = None) -> list[tuple[dict, demand.PodSet]]:
        """(object, pod set) of the queued objects (of `objs`, default the file's) GPUDirect applies
        to: 2 or more pods, each of a whole node's GPUs."""
        g = self.uses_gpudirect(ctx)
        if g is None:
            return []
        full = catalog.machine(g.machine_types[0]).accelerators
        return [(o, ps) for o in (self.queued() if objs is None else objs) if demand.is_workload(o)
                for ps in demand.podsets(o)
                if demand.of(o).pods > 1 and int(ps.requests.get(catalog.node_labels.GPU_RESOURCE, 0)) == full]

    def uses_gpudirect(self, ctx: CheckContext) -> GpuDirect | None:
        if not self.gpudirect or self.device != "gpu":
            return None
        return hardware.gpudirect_for(self, ctx.profile, ctx.platform)

    def _gpudirect_checks(self, ctx: CheckContext) -> list[Problem]:
        """`gpudirect: true`: the profile has it, some pod set gets it, and where the type starts the
        program after its NCCL settings script, the GPU containers say their command."""
        if not self.gpudirect:
            return []
        g = self.uses_gpudirect(ctx)
        sets = self.gpudirect_podsets(ctx)
        if g is None or not sets:
            return [Problem("gpudirect", f"no pod set of {self.file} is 2 or more pods of a whole node's GPUs on "
                                         f"a machine type of profile {ctx.profile.name!r} that GKE publishes "
                                         "GPUDirect for")]
        if g.env_script is None:
            return []
        return [Problem("gpudirect", f"file {self.file} {o.get('kind')}/{(o.get('metadata') or {}).get('name')} "
                                     f"container {c.get('name')!r}: {g.title} starts the program after "
                                     f"`source {g.env_script}`; give the container's `command`")
                for o, ps in sets for _, c in ps.containers()
                if catalog.node_labels.GPU_RESOURCE in _limits_or_requests(c) and not c.get("command")]

    def _placement(self, ctx: CheckContext) -> list[Problem]:
        """Pod sets that ask Kueue for a GKE topology level: checked as the training kind's."""
        out = []
        levels = {label: level for level, label in TOPOLOGY_LEVELS.items()}
        for o in self.queued():
            for ps in demand.podsets(o):
                for mode in ("required", "preferred"):
                    label = ps.annotations.get(topology.REQUIRED if mode == "required" else topology.PREFERRED)
                    if label is None:
                        continue
                    level = levels.get(label)
                    gpus = int(ps.requests.get(catalog.node_labels.GPU_RESOURCE, 0))
                    where = f"file {self.file} {o.get('kind')}/{(o.get('metadata') or {}).get('name')}"
                    if level is None or not gpus:
                        continue   # Kueue's own levels (hostname) or CPU pods: nothing GKE-specific to check
                    out += [Problem("file", f"{where}: {p.message}")
                            for p in placement_checks(self, ctx, ps.count, gpus, level, mode, "file")]
        return out

    def names_of_objects(self) -> list[tuple[str, str]]:
        return [(str(o.get("kind")), str((o.get("metadata") or {}).get("name"))) for o in self._objects]


def _limits_or_requests(c: dict) -> set[str]:
    found = c.get("resources")
    res: dict = found if isinstance(found, dict) else {}
    return {r for k in ("limits", "requests") if isinstance(res.get(k), dict) for r in res[k]}
