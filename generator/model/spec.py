"""The platform spec as typed objects. `platform.yaml` is read once into a
`Platform`; every default is applied here (pydantic field defaults, and the
few that depend on other fields in `Platform._fill`), and every builder,
check, the validator, the planner and diff read this model, never raw dicts.

No cdk8s here: loading and checking a spec starts no Node process."""
from __future__ import annotations

from pathlib import PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, PrivateAttr, model_validator

from ..kernel import catalog, versions
from .fields import (
    Count,
    Digest,
    DnsLabel,
    DnsSubdomain,
    ImageTag,
    Labels,
    LabelSafeName,
    PositiveCount,
    Quantity,
    SpecModel,
    Version,
    enum_of,
)
from .kinds import Workload
from .kinds.base import CAPACITIES, NON_PREEMPTIBLE
from .multikueue import MultiKueueGroup
from .teams import Team

# ---------------------------------------------------------------- pins, namespaces, tiers

# The integrations that manage the kinds a controller install adds (Kueue's jobset and
# leaderworkerset integrations; LeaderWorkerSets are admitted pod by pod, hence `pod`).
_INSTALL_INTEGRATIONS = {"jobset": ("jobset.x-k8s.io/jobset",),
                         "lws": ("pod", "leaderworkerset.x-k8s.io/leaderworkerset")}

PreemptionStrategy = Literal["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
_DEFAULT_STRATEGIES: tuple[PreemptionStrategy, ...] = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")


class KueueFairSharing(SpecModel):
    """Kueue's fair sharing across each cohort (manager configuration `fairSharing`)."""
    preemption_strategies: list[PreemptionStrategy] = Field(
        default_factory=lambda: list(_DEFAULT_STRATEGIES),
        description="Kueue's default order (apis/config configuration_types.go).")


class RequeuingStrategy(SpecModel):
    """Kueue's waitForPodsReady.requeuingStrategy (apis/config configuration_types.go)."""
    timestamp: Literal["Eviction", "Creation"] | None = None
    backoff_limit_count: Count | None = Field(None, description="Requeues before the workload is deactivated; "
                                                                "unset: requeue forever.")
    backoff_base_seconds: Count | None = Field(None, description="Base of the exponential backoff (Kueue: 60).")
    backoff_max_seconds: Count | None = Field(None, description="Longest backoff (Kueue: 3600).")


class WaitForPodsReady(SpecModel):
    """Kueue's waitForPodsReady: an admitted workload whose pods are not all ready within
    `timeout` is evicted and requeued with backoff, so a half-started gang frees its quota."""
    timeout: str = Field(pattern=r"^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$",
                         description="Go duration, e.g. 10m.")
    block_admission: bool | None = None
    recovery_timeout: str | None = Field(None, pattern=r"^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$")
    requeuing_strategy: RequeuingStrategy | None = None

    def body(self, v1beta1: bool) -> dict:
        """The Configuration block; v1beta1 (Kueue v0.12) switches it on with `enable`."""
        out = self.model_dump(by_alias=True, exclude_none=True)
        return {"enable": True, **out} if v1beta1 else out


class KueuePin(SpecModel):
    version: Version = Field(default_factory=lambda: versions.default("kueue"),
                             description="Kueue release the clusters run; decides the API versions emitted.")
    fair_sharing: KueueFairSharing | None = Field(None, description="Turn on fair sharing between the ClusterQueues "
                                                                    "of a cohort (teams' fairSharing.weight).")
    wait_for_pods_ready: WaitForPodsReady | None = Field(None, description="All pods ready within a timeout, or "
                                                                           "evict and requeue with backoff.")
    integrations: list[str] | None = Field(
        None, description="The Kueue integrations each cluster enables, exactly (to narrow them on purpose). "
                          "Unset: Kueue's default (batch/job) plus what the profile's workloads and installed "
                          "controllers need, so a team's own Job or JobSet with the queue label is queued. "
                          "Kinds left out start outside any quota; validate and plan warn about them.")


class JobSetPin(SpecModel):
    version: Version = Field(default_factory=lambda: versions.default("jobset"))


class LwsPin(SpecModel):
    version: Version = Field(default_factory=lambda: versions.default("lws"))


class Namespace(SpecModel):
    name: DnsLabel
    labels: Labels = Field(default_factory=dict)


class PriorityClassSpec(SpecModel):
    name: DnsSubdomain
    # PriorityClass values above one billion are reserved for system classes.
    value: int = Field(ge=-2147483648, le=1_000_000_000)
    preemption_policy: Literal["Never", "PreemptLowerPriority"] = "PreemptLowerPriority"
    global_default: bool = False
    description: str | None = None


class WorkloadPriorityClassSpec(SpecModel):
    name: LabelSafeName        # also the kueue.x-k8s.io/priority-class label value
    value: int = Field(ge=-2147483648, le=2147483647)
    description: str | None = None


class Tier(SpecModel):
    """A PriorityClass (pod priority: plain Jobs, Deployments) and/or a Kueue
    WorkloadPriorityClass (JobSets, LeaderWorkerSets)."""
    priority_class: PriorityClassSpec | None = None
    workload_priority_class: WorkloadPriorityClassSpec | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> Tier:
        if self.priority_class is None and self.workload_priority_class is None:
            raise ValueError("a tier needs priorityClass, workloadPriorityClass or both")
        return self


# ---------------------------------------------------------------- profiles (clusters)

class TopologyAware(SpecModel):
    """Topology-aware scheduling on a GPU pool. GKE labels the nodes with their block,
    sub-block and host when the pool uses compact placement (A4 and A3 Ultra: by default)."""
    nodes_per_block: PositiveCount | None = Field(None, description="Nodes of this pool in each block (as the "
                                                                     "reservation or placement gives them); the "
                                                                     "fit checks and plan pack by it.")


class NodePool(SpecModel):
    """A GKE Standard node pool: what the ClusterQueue quota of its flavor is sized from."""
    name: DnsSubdomain | None = Field(None, description="Pool name; also its Kueue ResourceFlavor's name. "
                                                         "Needed when a profile has several pools.")
    machine_type: str = Field(description="A machine type of the device catalog, e.g. g2-standard-24.",
                              json_schema_extra=enum_of(catalog.MACHINE_TYPES))
    nodes: PositiveCount
    gpus: PositiveCount | None = Field(None, description="N1 machine types: NVIDIA T4 GPUs (nvidia-tesla-t4) "
                                                         "attached to each node, as the node pool's accelerator "
                                                         "count. Other GPU machine types come with their GPUs.")
    boot_disk_gi: int = Field(100, ge=10, le=65536)
    capacity: Literal["on-demand", "spot", "flex-start"] = Field(
        "on-demand", description="How GKE provisions the nodes: on demand, Spot VMs, or flex-start "
                                 "(Dynamic Workload Scheduler, through Kueue's ProvisioningRequest check).")
    reservation: DnsSubdomain | None = Field(None, description="Compute Engine reservation the pool consumes.")
    topology: str | None = Field(None, pattern=r"^[1-9][0-9]*(x[1-9][0-9]*){1,2}$",
                                 description="TPU pools: the slice topology the pool was created with, e.g. 4x4.")
    topology_aware: TopologyAware | None = Field(None, description="GPU pools whose nodes carry GKE's "
                                                                   "cloud.google.com/gce-topology-* labels: Kueue "
                                                                   "places workloads by block, sub-block and host.")


class Budget(SpecModel):
    """GKE Autopilot: the resources the ClusterQueue admits (Autopilot has no node pools)."""
    cpu: Quantity
    memory: Quantity
    ephemeral_storage: Quantity | None = Field(None, alias="ephemeral-storage")
    gpus: Count | None = Field(None, alias="nvidia.com/gpu")

    def quotas(self) -> dict[str, Any]:
        out = {"cpu": self.cpu, "memory": self.memory, "nvidia.com/gpu": self.gpus,
               "ephemeral-storage": self.ephemeral_storage}
        return {r: v for r, v in out.items() if v is not None}


class TpuReservation(SpecModel):
    cubes: PositiveCount = Field(description="Units reserved; sizes the ClusterQueue. TPU7x: 4x4x4 cubes (16 VMs, "
                                             "64 chips each); v6e sub-slicing: whole 16x16 node pools (64 VMs, "
                                             "256 chips each).")
    cpu_per_vm: Quantity | None = Field(None, description="CPU quota per VM; default: the machine type's vCPUs.")
    memory_per_vm: Quantity | None = Field(None, description="Memory quota per VM; default: the machine type's memory.")


class TpuSlicing(SpecModel):
    """Dynamic slicing of a reservation counted in cubes: TPU7x (sub-slices or super-slices,
    through GKE's slice controller) or v6e sub-slicing (xpk --sub-slicing; sub-slices only)."""
    slicing: Literal["subslice", "superslice"]
    reservation: TpuReservation
    unlimited_quota: bool = Field(False, description="Use the codelab's 999999 quotas instead of the reservation's size.")


class ProfileValues(SpecModel):
    """What the tutorials fill in with sed. Never secret values: Secrets are referenced by name."""
    project_id: str = Field(pattern=r"^[a-z][-a-z0-9]{4,28}[a-z0-9]$")
    region: str | None = Field(None, pattern=r"^[a-z]+-[a-z]+[0-9]$")
    registry: str = Field(pattern=r"^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)*$", max_length=255)
    model_bucket: str | None = Field(None, pattern=r"^[a-z0-9][-a-z0-9_.]{1,61}[a-z0-9]$")
    hf_token_secret: DnsSubdomain | None = Field(None, description="Name of the Secret holding the Hugging Face "
                                                                   "token (key hf_api_token).")
    service_account: DnsSubdomain | None = None
    network_prefix: str | None = Field(None, pattern=r"^[a-z]([-a-z0-9]{0,40}[a-z0-9])?$",
                                       description="GPUDirect: prefix of the VPC networks and subnets of the GPU "
                                                   "NICs (<prefix>-net-<i>/<prefix>-sub-<i>; RDMA: "
                                                   "<prefix>-rdma-net/<prefix>-rdma-sub-<i>). Default: the "
                                                   "profile name.")


class Profile(SpecModel):
    """One cluster: its GKE mode, Kueue release, capacity and the values its manifests need."""
    platform: Literal["standard", "autopilot"]
    accelerator: str | None = Field(None, description="Accelerator of the profile (GKE label value); on Standard "
                                                       "derived from the node pools' machine types.",
                                    json_schema_extra=enum_of(catalog.ACCELERATORS))
    kueue_version: Version | None = Field(None, description="Overrides kueue.version for this cluster.")
    node_pool: NodePool | None = Field(None, description="Shorthand for nodePools with one pool.")
    node_pools: list[NodePool] = Field(default_factory=list)
    quota_basis: Literal["capacity", "allocatable"] = "capacity"
    budget: Budget | None = None
    tpu: TpuSlicing | None = None
    values: ProfileValues

    _name: str = PrivateAttr("")
    _kueue: versions.KueueRelease | None = PrivateAttr(None)

    @property
    def name(self) -> str:
        return self._name

    @property
    def kueue(self) -> versions.KueueRelease:
        assert self._kueue is not None, "profiles are completed by Platform"
        return self._kueue

    @property
    def autopilot(self) -> bool:
        return self.platform == "autopilot"

    @property
    def pools(self) -> list[NodePool]:
        return [self.node_pool] if self.node_pool else self.node_pools


# ---------------------------------------------------------------- queues, images, gitops

class LocalQueueRef(SpecModel):
    name: LabelSafeName       # also the kueue.x-k8s.io/queue-name label value
    namespace: DnsLabel


class Preemption(SpecModel):
    """Kueue's ClusterQueue preemption policy (fields in the CRD's order)."""
    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] | None = None
    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] | None = None

    def body(self) -> dict:
        return self.model_dump(by_alias=True, exclude_none=True)


class Queue(SpecModel):
    cluster_queue: DnsSubdomain
    resource_flavor: DnsSubdomain | None = Field(None, description="Flavor name of a profile with one capacity "
                                                                   "source (a named node pool names its own).")
    profiles: list[str] = Field(min_length=1)
    local_queues: list[LocalQueueRef] = Field(default_factory=list)
    # The tutorial's ClusterQueue preempts lower priorities within itself.
    preemption: Preemption = Field(default_factory=lambda: Preemption(within_cluster_queue="LowerPriority"))
    cohort: DnsSubdomain | None = Field(None, description="Kueue cohort of the profile's ClusterQueues: this "
                                                          "queue's and every team's. Needed when teams share the profile.")
    cohort_parent: DnsSubdomain | None = Field(None, description="Parent Cohort (Kueue v1beta2 cohort hierarchy).")
    unassigned: Literal["clusterQueue", "cohort"] = Field(
        "clusterQueue", description="Where capacity no team holds nominally lives: this ClusterQueue (it lends it "
                                    "to the teams), or the Cohort object itself (Kueue v1beta2).")


class Image(SpecModel):
    """`repository` (a full upstream image) or `name` (an image of this project, pushed to each
    profile's registry); a pinned tag, optionally a digest."""
    repository: str | None = Field(None, pattern=r"^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)+$")
    name: str | None = Field(None, pattern=r"^[a-z0-9._-]+(/[a-z0-9._-]+)*$")
    tag: ImageTag
    digest: Digest | None = Field(None, description="sha256:... of the image: what runs cannot change under the tag.")

    @model_validator(mode="after")
    def _one_source(self) -> Image:
        if (self.repository is None) == (self.name is None):
            raise ValueError("give either `repository` (an upstream image) or `name` (an image of this project)")
        return self

    def reference(self, registry: str) -> str:
        repo = self.repository or f"{registry}/{self.name}"
        return f"{repo}:{self.tag}" + (f"@{self.digest}" if self.digest else "")


class Destination(SpecModel):
    """An Argo CD destination: the API server URL, or a cluster registered in Argo CD."""
    server: str | None = Field(None, pattern=r"^https://[^\s]+$")
    name: str | None = Field(None, min_length=1, pattern=r"^[^\s]+$")

    @model_validator(mode="after")
    def _one(self) -> Destination:
        if (self.server is None) == (self.name is None):
            raise ValueError("give either `server` (the API server URL) or `name` (a cluster registered in Argo CD)")
        return self


class GroupKind(SpecModel):
    group: str = Field(pattern=r"^[a-z0-9.-]*$", description="API group; \"\" for the core group")
    kind: str = Field(pattern=r"^[A-Za-z0-9]+$")


class ClusterResource(GroupKind):
    name: str | None = Field(None, pattern=r"^[^\s]+$", description="Object name or glob (Go's filepath.Match, "
                                                                   "as Argo CD reads it); absent: every name")


class ProjectAllowance(SpecModel):
    """What an Argo CD project may sync beyond what synth computes from the objects it syncs."""
    namespaces: list[DnsLabel] = Field(default_factory=list, description="Destination namespaces, on every cluster")
    cluster_resources: list[ClusterResource] = Field(default_factory=list)
    namespaced_kinds: list[GroupKind] = Field(default_factory=list)


class GitOpsAllow(SpecModel):
    """Widening a project on purpose (for your own layer under custom/, say); synth otherwise allows
    each project exactly what its Applications sync."""
    overlays: ProjectAllowance = Field(default_factory=ProjectAllowance)
    controllers: ProjectAllowance = Field(default_factory=ProjectAllowance)


class GitOps(SpecModel):
    """Argo CD settings; synth writes argocd/ from them. Repository credentials live in Argo CD."""
    repo_url: str = Field(alias="repoURL", pattern=r"^(https://|ssh://|git@)[^\s]+$")
    target_revision: str = Field(pattern=r"^[^\s]+$")
    argocd_namespace: DnsLabel = "argocd"
    project: DnsLabel | None = None
    clusters: dict[DnsLabel, Destination] = Field(min_length=1)
    allow: GitOpsAllow = Field(default_factory=GitOpsAllow)


# ---------------------------------------------------------------- the platform

def _constructs_file(value: str) -> str:
    p = PurePosixPath(value)
    if p.is_absolute() or ".." in p.parts or p.suffix != ".py" or "\\" in value:
        raise ValueError(f"{value!r}: a .py file inside the repository, relative to the spec file "
                         "(like constructs/sidecars.py)")
    return value


ConstructsFile = Annotated[str, AfterValidator(_constructs_file)]


class Platform(SpecModel):
    spec_version: Literal[1]
    name: DnsLabel
    kubernetes_version: str = Field(default_factory=lambda: versions.table()["kubernetes"]["default"],
                                    pattern=r"^1\.[0-9]+$")
    kueue: KueuePin = Field(default_factory=KueuePin)
    jobset: JobSetPin = Field(default_factory=JobSetPin)
    lws: LwsPin = Field(default_factory=LwsPin)
    namespaces: list[Namespace] = Field(min_length=1)
    priority_tiers: dict[DnsLabel, Tier] = Field(min_length=1)
    profiles: dict[DnsLabel, Profile] = Field(min_length=1)
    queues: list[Queue] = Field(min_length=1)
    images: dict[DnsLabel, Image] = Field(default_factory=dict, description="Images the workloads name by key; "
                                          "none needed when every workload brings its own (kind `manifest`).")
    teams: list[Team] = Field(default_factory=list)
    multi_kueue: list[MultiKueueGroup] = Field(default_factory=list, description="Clusters working as one: a "
                                                                               "manager dispatching to workers.")
    workloads: list[Annotated[Workload, Field(discriminator="kind")]] = Field(default_factory=list)
    gitops: GitOps | None = None
    constructs: list[ConstructsFile] = Field(
        default_factory=list, description="Python files of your own, relative to the spec file, whose "
        "`build(app, charts, spec)` adds cdk8s constructs to the app and patches generated objects "
        "(documentation page 'Your own constructs').")

    _source: str = PrivateAttr("<spec>")

    @model_validator(mode="after")
    def _fill(self) -> Platform:
        """Defaults that depend on other fields: each profile's name and Kueue release,
        and each tier's descriptions."""
        known = versions.known("kueue")
        for name, p in self.profiles.items():
            p._name = name
            version = p.kueue_version or self.kueue.version
            p._kueue = versions.kueue_release(version) if version in known else None
        tiers = {}
        for key, t in self.priority_tiers.items():
            default = f"Priority tier '{key}'."
            pc, wpc = t.priority_class, t.workload_priority_class
            tiers[key] = t.model_copy(update={
                "priority_class": pc and (pc if pc.description else pc.model_copy(update={"description": default})),
                "workload_priority_class": wpc and (wpc if wpc.description
                                                    else wpc.model_copy(update={"description": default})),
            })
        object.__setattr__(self, "priority_tiers", tiers)
        return self

    # -------------------------------------------------- lookups

    @property
    def source(self) -> str:
        return self._source

    @property
    def kubernetes(self) -> str:
        return self.kubernetes_version

    def queue_for(self, profile: str) -> Queue:
        return next(q for q in self.queues if profile in q.profiles)

    def manager_group(self, profile: str) -> MultiKueueGroup | None:
        """The MultiKueue group this profile manages, if any."""
        return next((g for g in self.multi_kueue if g.manager == profile), None)

    def worker_groups(self, profile: str) -> list[MultiKueueGroup]:
        return [g for g in self.multi_kueue if profile in g.worker_profiles]

    def teams_for(self, profile: str) -> list[Team]:
        return [t for t in self.teams if profile in t.profiles]

    def local_queues_for(self, profile: str) -> set[tuple[str, str]]:
        """(namespace, name) of every LocalQueue on the profile: the queue entry's and the teams'."""
        out = {(lq.namespace, lq.name) for q in self.queues if profile in q.profiles for lq in q.local_queues}
        for g in self.worker_groups(profile):   # workers mirror their manager's LocalQueues
            out |= {(lq.namespace, lq.name) for q in self.queues if g.manager in q.profiles for lq in q.local_queues}
        return out | {(ns, t.queue_name) for t in self.teams_for(profile) for ns in t.namespaces}

    def workloads_for(self, profile: str) -> list[Workload]:
        return [w for w in self.workloads if profile in w.profiles]

    def capacity_of(self, w: Workload) -> tuple[str, ...]:
        """The capacity a workload may use: its own `capacity`, else its team's (the team whose
        LocalQueue it names in one of the team's namespaces), else non-preemptible for serving."""
        if w.capacity is not None:
            return tuple(w.capacity)
        team = next((t for t in self.teams if w.namespace in t.namespaces and w.queue == t.queue_name), None)
        if team is not None and team.capacity is not None:
            return tuple(team.capacity)
        return NON_PREEMPTIBLE if w.serves else CAPACITIES

    def integrations_needed(self, profile: str) -> tuple[set[str], set[str]]:
        """(Kueue integrations, controller installs) the profile's workloads need. MultiKueue: the
        manager and its workers enable every dispatched integration (the manager builds an adapter
        per enabled one), and install JobSet where JobSets travel."""
        workloads = self.workloads_for(profile)
        frameworks = {f for w in workloads for f in w.frameworks}   # a kind may need them per workload
        needed = {c for w in workloads for c in w.controllers}
        groups = [g for g in self.multi_kueue if profile == g.manager or profile in g.worker_profiles]
        dispatched = {k for g in groups for k in g.job_kinds}
        frameworks |= dispatched
        needed |= {"jobset"} if "jobset.x-k8s.io/jobset" in dispatched else set()
        return frameworks, needed

    def integrations_enabled(self, profile: Profile) -> list[str]:
        """The integrations the profile's Kueue Configuration lists, in the release's order (a
        stable order keeps diffs quiet): `kueue.integrations` when set, else Kueue's default at the
        release, what the workloads need, and the integrations of the controllers installed (a
        team may submit its own JobSet once JobSet is there)."""
        release = profile.kueue
        if self.kueue.integrations is not None:
            wanted = set(self.kueue.integrations)
        else:
            frameworks, installs = self.integrations_needed(profile.name)
            wanted = set(release.default_frameworks) | frameworks | {
                f for c in installs for f in _INSTALL_INTEGRATIONS.get(c, ())}
        return [f for f in release.frameworks if f in wanted]

    def image(self, key: str, profile: Profile) -> str:
        return self.images[key].reference(profile.values.registry)

    def priority_class(self, tier: str) -> str:
        pc = self.priority_tiers[tier].priority_class
        assert pc is not None, "checked by the spec checks"
        return pc.name

    def workload_priority_class(self, tier: str) -> str:
        wpc = self.priority_tiers[tier].workload_priority_class
        assert wpc is not None, "checked by the spec checks"
        return wpc.name

    def index_of(self, w: Workload) -> int:
        return next(i for i, x in enumerate(self.workloads) if x is w)
