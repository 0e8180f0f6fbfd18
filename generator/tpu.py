"""TPU slicing: slice shapes and what they imply, the Kueue objects of a TPU
profile (Topology, flavor, slice AdmissionCheck, ClusterQueue), the spec
checks that need a whole profile, and a lint of the generated slice workloads.

Shapes follow GKE's slice controller (AI-Hypercomputer/xpk, slice/, branch
slice-main): a sub-slice is one of the dynamic partitions inside a cube; a
super-slice is whole cubes, every dimension a multiple of the cube's and in
non-decreasing order (the controller refuses 8x4x4, it wants 4x4x8).

No cdk8s here: checks and lints stay cheap to import."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Callable

from . import facts, kueue, quantity, versions
from .errors import Problem, problem

TPU_ACCELERATORS = tuple(facts.TPU_TYPES)
SUBSLICE, SUPERSLICE = "subslice", "superslice"

# Named as in the codelab, so its kubectl commands work unchanged.
TOPOLOGY_NAME = "slice-topology"
ADMISSION_CHECK_NAME = "ac"

# ClusterQueue resources, in the codelab's order.
QUOTA_RESOURCES = ("google.com/tpu", "cpu", "memory")
# The codelab's "no limit" quotas, used only where the spec asks for unlimitedQuota.
UNLIMITED_QUOTA = {"google.com/tpu": "999999", "cpu": "999999", "memory": "999999Pi"}

# The slice controller names each Slice "<namespace>-<Kueue workload>-<podset>-<slice index>";
# the llm-d dynamic-slicing guide caps Slice names at 49 characters. Newer
# controllers cut longer names and append a hash (54 by default, 49 behind
# the ShorterSliceNameLength gate); older ones fail. We keep names whole.
SLICE_NAME_MAX = 49
# Kueue names a Workload "<kind, lower case>-<owner name>-<5-char hash>"
# (jobframework.GetWorkloadNameForOwnerWithGVK); an LWS group's owner name is
# "<lws name>-<group index>".
WORKLOAD_HASH = "xxxxx"


# ---------------------------------------------------------------- shapes

@dataclass(frozen=True)
class Shape:
    dims: tuple[int, int, int]
    tpu: facts.TpuType

    @classmethod
    def parse(cls, text: str, tpu: facts.TpuType) -> "Shape":
        parts = text.split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise ValueError(f"{text!r} is not a chip grid like 2x2x2")
        return cls(tuple(int(p) for p in parts), tpu)

    @property
    def text(self) -> str:
        return "x".join(map(str, self.dims))

    @property
    def chips(self) -> int:
        a, b, c = self.dims
        return a * b * c

    @property
    def pods(self) -> int:
        """One pod per VM: a tpu7x-standard-4t pod takes all of its VM's chips."""
        return self.chips // self.tpu.chips_per_vm

    @property
    def tpus_per_pod(self) -> int:
        return self.tpu.chips_per_vm

    @property
    def devices(self) -> int:
        """JAX devices of the whole slice (TensorCores)."""
        return self.chips * self.tpu.devices_per_chip

    @property
    def devices_per_pod(self) -> int:
        return self.tpus_per_pod * self.tpu.devices_per_chip

    @property
    def cubes(self) -> int:
        return self.chips // cube_chips(self.tpu)

    @property
    def is_subslice(self) -> bool:
        return self.text in self.tpu.subslice_shapes

    @property
    def is_whole_cubes(self) -> bool:
        return (all(d % c == 0 for d, c in zip(self.dims, self.tpu.cube))
                and list(self.dims) == sorted(self.dims))


def cube_chips(tpu: facts.TpuType) -> int:
    a, b, c = tpu.cube
    return a * b * c


def whole_cube_shapes(tpu: facts.TpuType, max_cubes: int, limit: int = 6) -> list[str]:
    """The smallest super-slice shapes of at most max_cubes cubes (at most `limit`)."""
    a, b, c = tpu.cube
    out = []
    for i in range(1, max_cubes + 1):
        for j in range(1, max_cubes // i + 1):
            for k in range(1, max_cubes // (i * j) + 1):
                if i * a <= j * b <= k * c:
                    out.append((i * j * k, (i * a, j * b, k * c)))
    return ["x".join(map(str, dims)) for _, dims in sorted(out)[:limit]]


def shape_problem(text: str, slicing: str, tpu: facts.TpuType, profile_name: str) -> str | None:
    """Why a shape cannot be a slice of this profile, and what would fit; None if it can."""
    subs = ", ".join(tpu.subslice_shapes)
    try:
        shape = Shape.parse(text, tpu)
    except ValueError as e:
        return str(e)
    cube = "x".join(map(str, tpu.cube))
    if slicing == SUBSLICE:
        if shape.is_subslice:
            return None
        if shape.is_whole_cubes:
            return (f"{text} is a super-slice (whole {cube} cubes), but profile {profile_name!r} "
                    f"sub-slices its cubes; use a sub-slice shape ({subs}) or a superslice profile")
        return (f"{text} is not a {tpu.accelerator} sub-slice: dynamic sub-slices inside a {cube} "
                f"cube are {subs}")
    if shape.is_whole_cubes:
        return None
    if shape.is_subslice:
        return (f"{text} is a sub-slice shape, but profile {profile_name!r} super-slices whole "
                f"{cube} cubes (its Topology has no {text} level); use whole cubes such as "
                f"{', '.join(whole_cube_shapes(tpu, 2))}, or a subslice profile")
    if all(d % c == 0 for d, c in zip(shape.dims, tpu.cube)):
        return (f"{text}: the slice controller wants dimensions in non-decreasing order; "
                f"write it as {'x'.join(map(str, sorted(shape.dims)))}")
    return (f"{text} is not whole {cube} cubes: a super-slice needs every dimension a multiple "
            f"of {tpu.cube[0]} (e.g. {', '.join(whole_cube_shapes(tpu, 2))})")


# ---------------------------------------------------------------- reservation and quota

@dataclass(frozen=True)
class Reservation:
    tpu: facts.TpuType
    cubes: int
    cpu_per_vm: Decimal
    memory_per_vm: Decimal

    @property
    def chips(self) -> int:
        return self.cubes * cube_chips(self.tpu)

    @property
    def vms(self) -> int:
        return self.chips // self.tpu.chips_per_vm

    def describe(self) -> str:
        return f"{self.chips} chips ({self.cubes} cube{'s' if self.cubes != 1 else ''}, {self.vms} VMs)"


def reservation(accelerator: str, tpu_spec: dict) -> Reservation:
    """The reservation of a profile's `tpu` block; per-VM CPU and memory default to
    the machine type's (tpu.reservation.cpuPerVm/memoryPerVm override, e.g. allocatable)."""
    t = facts.TPU_TYPES[accelerator]
    r = tpu_spec["reservation"]
    return Reservation(
        tpu=t,
        cubes=r["cubes"],
        cpu_per_vm=quantity.parse(r.get("cpuPerVm", t.vcpus_per_vm)),
        memory_per_vm=quantity.parse(r.get("memoryPerVm", f"{t.memory_gib_per_vm}Gi")),
    )


def quota(res: Reservation, unlimited: bool) -> list[tuple[str, object]]:
    if unlimited:
        return [(r, UNLIMITED_QUOTA[r]) for r in QUOTA_RESOURCES]
    totals = {"google.com/tpu": Decimal(res.chips), "cpu": res.cpu_per_vm * res.vms,
              "memory": res.memory_per_vm * res.vms}
    return [(r, quantity.fmt(r, totals[r])) for r in QUOTA_RESOURCES]


def topology_levels(tpu: facts.TpuType, slicing: str) -> list[str]:
    """Kueue Topology levels: block, cube, then (sub-slicing) each partition from
    the largest sub-slice down, then the host."""
    cube = "x".join(map(str, tpu.cube))
    levels = [facts.TPU_BLOCK_LABEL, facts.TPU_PARTITION_LABEL.format(shape=cube)]
    if slicing == SUBSLICE:
        by_size = sorted(tpu.subslice_shapes, key=lambda s: -Shape.parse(s, tpu).chips)
        levels += [facts.TPU_PARTITION_LABEL.format(shape=s) for s in by_size]
    return levels + [facts.HOSTNAME_LABEL]


def toleration(tpu: facts.TpuType) -> dict:
    return {"key": facts.ACCELERATORS[tpu.accelerator].taint_key, "operator": "Exists", "effect": "NoSchedule"}


def queue_objects(ctx, queue) -> None:
    """Topology, ResourceFlavor, AdmissionCheck and ClusterQueue of a TPU profile."""
    profile = ctx.profile
    tpu = facts.TPU_TYPES[profile.accelerator]
    accel = facts.ACCELERATORS[profile.accelerator]
    slicing = profile.tpu["slicing"]
    ctx.add_custom(kueue.topology(profile.kueue, TOPOLOGY_NAME, topology_levels(tpu, slicing)))
    # The toleration sits on the flavor too: TAS cannot see tolerations the
    # cloud injects into pods, and would place no pod on the tainted TPU nodes.
    ctx.add_custom(kueue.resource_flavor(profile.kueue, queue.resource_flavor,
                                         node_labels={accel.node_label: tpu.accelerator},
                                         topology=TOPOLOGY_NAME, tolerations=[toleration(tpu)]))
    ctx.add_custom(kueue.admission_check(profile.kueue, ADMISSION_CHECK_NAME, facts.TPU_SLICE_CONTROLLER))
    res = reservation(profile.accelerator, profile.tpu)
    quotas = quota(res, profile.tpu.get("unlimitedQuota", False))
    ctx.add_custom(kueue.ClusterQueue(
        name=queue.cluster_queue,
        covered=QUOTA_RESOURCES,
        flavors=(kueue.FlavorQuota(queue.resource_flavor, tuple(quotas)),),
        preemption=queue.preemption,
        admission_checks=(ADMISSION_CHECK_NAME,),
    ).body(profile.kueue))


# ---------------------------------------------------------------- spec checks

@dataclass(frozen=True)
class Demand:
    """TPU chips a workload takes: all of it at once, in one Kueue admission, per slice."""
    total_chips: int
    unit_chips: int
    slice_chips: int
    what: str           # e.g. "6 slices of 2x2x2"


# Workload kinds that take slices register how to count their chips (kind name -> fn),
# and checks that need every workload of the spec (raw spec -> problems).
DEMANDS: dict[str, Callable[[dict, facts.TpuType], Demand | None]] = {}
PROFILE_CHECKS: list[Callable[[dict], list[Problem]]] = []


def vm_fit_problems(pod: list[tuple[str, dict]], res: "Reservation") -> list[Problem]:
    """A pod takes one whole VM; the CPU and memory its containers request
    together ((field path, requests) each) must fit what a VM offers: the
    machine type's, or tpu.reservation.cpuPerVm/memoryPerVm."""
    out = []
    for r, per_vm in (("cpu", res.cpu_per_vm), ("memory", res.memory_per_vm)):
        parts = [(path, requests[r]) for path, requests in pod if r in requests]
        total = sum((quantity.parse(v) for _, v in parts), Decimal(0))
        if total > per_vm:
            what = " + ".join(str(v) for _, v in parts)
            out.append(Problem(f"{parts[0][0]}.{r}", f"{what} {r} per pod, but a {res.tpu.machine_type} VM offers "
                                                    f"{quantity.fmt(r, per_vm)}; one pod runs per VM"))
    return out


def tpu_type_of(profile: dict) -> facts.TpuType | None:
    return facts.TPU_TYPES.get(profile["accelerator"]) if "tpu" in profile else None


def fit_problem(demand: Demand, profile: dict, profile_name: str) -> tuple[str, str] | None:
    """What one Kueue admission takes must fit the reservation, or it is never admitted.
    Returns (what to change: "shape" or "count", message)."""
    res = reservation(profile["accelerator"], profile["tpu"])
    cubes_for = lambda chips: -(-chips // cube_chips(res.tpu))  # noqa: E731
    if demand.slice_chips > res.chips:
        return "shape", (f"one slice has {demand.slice_chips} chips, but profile {profile_name!r} reserves "
                         f"{res.describe()}; {_what_fits(res, profile['tpu']['slicing'])}, or raise "
                         f"tpu.reservation.cubes to {cubes_for(demand.slice_chips)}")
    if demand.unit_chips > res.chips:
        return "count", (f"{demand.what} are admitted together ({demand.unit_chips} chips), but profile "
                         f"{profile_name!r} reserves {res.describe()}; at most {res.chips // demand.slice_chips} "
                         f"such slices fit, or raise tpu.reservation.cubes to {cubes_for(demand.unit_chips)}")
    return None


def _what_fits(res: Reservation, slicing: str) -> str:
    if slicing == SUBSLICE:
        return f"shapes that fit: {', '.join(res.tpu.subslice_shapes)}"
    return f"shapes that fit: {', '.join(whole_cube_shapes(res.tpu, res.cubes)) or 'none'}"


def slice_name(namespace: str, owner_kind: str, owner: str, podset: str, index: int) -> str:
    workload = f"{owner_kind.lower()}-{owner}-{WORKLOAD_HASH}"
    return f"{namespace}-{workload}-{podset}-{index}"


def slice_name_problem(namespace: str, owner_kind: str, owner: str, podset: str, index: int,
                       shorten: str) -> str | None:
    """The longest Slice name the controller derives must stay within SLICE_NAME_MAX."""
    name = slice_name(namespace, owner_kind, owner, podset, index)
    over = len(name) - SLICE_NAME_MAX
    if over <= 0:
        return None
    return (f"the slice controller would name this workload's Slices like {name!r} "
            f"({len(name)} characters; {WORKLOAD_HASH} is Kueue's hash), over the "
            f"{SLICE_NAME_MAX} a Slice name may have; shorten {shorten} by {over} character{'s' if over > 1 else ''}")


def check_profiles(raw: dict) -> list[Problem]:
    """Per TPU profile: a Kueue the slice controller works with, and the
    highest-priority tier's workloads fitting the reservation all at once (they
    can preempt everything below them, but not each other)."""
    out: list[Problem] = []
    default_kueue = raw.get("kueue", {}).get("version", versions.default("kueue"))
    for name, p in sorted(raw["profiles"].items()):
        tpu = tpu_type_of(p)
        if tpu is None:
            continue
        version = p.get("kueueVersion", default_kueue)
        if version in versions.known("kueue") and not versions.kueue_release(version).is_v1beta2:
            where = ["profiles", name, "kueueVersion"] if "kueueVersion" in p else ["kueue", "version"]
            out.append(problem(where, f"TPU profile {name!r} needs a Kueue serving kueue.x-k8s.io/v1beta2 "
                                      f"(the slice controller's API), {version} does not; use "
                                      f"{', '.join(v for v in versions.known('kueue') if versions.kueue_release(v).is_v1beta2)}"))
        out += _tier_fit(raw, name, p, tpu)
    for fn in PROFILE_CHECKS:
        out += fn(raw)
    return out


def _tier_fit(raw: dict, name: str, p: dict, tpu: facts.TpuType) -> list[Problem]:
    tiers = raw["priorityTiers"]
    res = reservation(p["accelerator"], p["tpu"])
    by_tier: dict[str, list[tuple[str, Demand]]] = {}
    for w in raw["workloads"]:
        fn = DEMANDS.get(w["kind"])
        tier = tiers.get(w.get("priority", ""), {}).get("workloadPriorityClass")
        if fn is None or name not in w["profiles"] or tier is None:
            continue
        demand = fn(w, tpu)
        # None: the shape is invalid. A workload that never fits is reported on itself.
        if demand is not None and demand.unit_chips <= res.chips:
            by_tier.setdefault(w["priority"], []).append((w["name"], demand))
    if not by_tier:
        return []
    top = max(by_tier, key=lambda t: tiers[t]["workloadPriorityClass"]["value"])
    total = sum(d.total_chips for _, d in by_tier[top])
    if total <= res.chips:
        return []
    parts = "; ".join(f"{n}: {d.what} = {d.total_chips} chips" for n, d in by_tier[top])
    return [problem(["profiles", name, "tpu", "reservation", "cubes"],
                    f"the {top!r} tier, the highest on profile {name!r}, needs {total} chips at once "
                    f"({parts}), but the reservation holds {res.describe()}; raise cubes to "
                    f"{-(-total // cube_chips(tpu))} or give those workloads fewer slices")]


# ---------------------------------------------------------------- lint of generated objects

_TAS_PREFIX = "kueue.x-k8s.io/podset-"
_TPU_RESOURCES = tuple(sorted({facts.ACCELERATORS[t].resource for t in facts.TPU_TYPES}))


def _pod_groups(obj: dict) -> list[tuple[str, list[tuple[dict, int]]]]:
    """(where, [(pod template, pods from it)]) per slice-forming unit of a JobSet or LWS."""
    spec = obj.get("spec", {})
    if obj["kind"] == "JobSet":
        out = []
        for rj in spec.get("replicatedJobs", []):
            job = rj["template"]["spec"]
            out.append((f"replicatedJobs[{rj['name']}]", [(job["template"], job.get("parallelism", 1))]))
        return out
    if obj["kind"] == "LeaderWorkerSet":
        lwt = spec["leaderWorkerTemplate"]
        size = lwt.get("size", 1)
        if "leaderTemplate" in lwt:
            return [("leaderWorkerTemplate", [(lwt["leaderTemplate"], 1), (lwt["workerTemplate"], size - 1)])]
        return [("leaderWorkerTemplate", [(lwt["workerTemplate"], size)])]
    return []


def lint(objs: list[dict]) -> list[str]:
    """Problems of generated TPU slice workloads: slice and TAS annotations only on
    pod templates; each pod template asking for TPUs has the shape, the
    accelerator node selector and the TPU toleration; pods x chips per pod is
    the shape's chips; each pod takes a whole VM."""
    out = []
    for o in objs:
        name = f"{o['kind']}/{o['metadata']['name']}"
        groups = _pod_groups(o)
        if not groups:
            continue
        annotated = [k for k in o["metadata"].get("annotations", {})
                     if k == facts.TPU_SLICE_TOPOLOGY_ANNOTATION or k.startswith(_TAS_PREFIX)]
        out += [f"{name}: {k} belongs on the pod template, not on the {o['kind']}" for k in annotated]
        for rj in o["spec"].get("replicatedJobs", []):
            job = rj["template"]["spec"]
            if job.get("completions", job.get("parallelism", 1)) != job.get("parallelism", 1):
                out.append(f"{name}: replicatedJobs[{rj['name']}]: completions {job.get('completions')} != "
                           f"parallelism {job.get('parallelism')}: every pod of a slice runs at once")
            for k in rj["template"].get("metadata", {}).get("annotations", {}):
                if k == facts.TPU_SLICE_TOPOLOGY_ANNOTATION or k.startswith(_TAS_PREFIX):
                    out.append(f"{name}: replicatedJobs[{rj['name']}]: {k} belongs on the pod template, not on the Job template")
        for where, templates in groups:
            out += _lint_group(name, where, templates)
    return out


def _lint_group(name: str, where: str, templates: list[tuple[dict, int]]) -> list[str]:
    out, chips, shapes = [], 0, set()
    for t, pods in templates:
        pod = t.get("spec", {})
        tpus = sum(int(c.get("resources", {}).get("requests", {}).get(r, 0))
                   for c in pod.get("containers", []) for r in _TPU_RESOURCES)
        shape = t.get("metadata", {}).get("annotations", {}).get(facts.TPU_SLICE_TOPOLOGY_ANNOTATION)
        if not tpus:
            if shape:
                out.append(f"{name}: {where}: a slice shape on a pod template that asks for no TPU")
            continue
        if not shape:
            out.append(f"{name}: {where}: pods ask for TPUs but the pod template has no {facts.TPU_SLICE_TOPOLOGY_ANNOTATION}")
            continue
        selector = pod.get("nodeSelector", {})
        accel = next((a for a in facts.ACCELERATORS.values()
                      if a.name in facts.TPU_TYPES and selector.get(a.node_label) == a.name), None)
        if accel is None:
            out.append(f"{name}: {where}: no TPU accelerator node selector (the slice controller would ignore the pods)")
            continue
        tpu = facts.TPU_TYPES[accel.name]
        if not any(tol.get("key") == accel.taint_key and tol.get("operator") == "Exists"
                   for tol in pod.get("tolerations", [])):
            out.append(f"{name}: {where}: no toleration for the {accel.taint_key} taint")
        if tpus != tpu.chips_per_vm:
            out.append(f"{name}: {where}: a pod asks for {tpus} {accel.resource}, a {tpu.machine_type} VM has {tpu.chips_per_vm}")
        try:
            shapes.add(Shape.parse(shape, tpu))
        except ValueError as e:
            out.append(f"{name}: {where}: {e}")
        chips += tpus * pods
    if len(shapes) > 1:
        out.append(f"{name}: {where}: pod templates of one slice disagree on the shape: {sorted(s.text for s in shapes)}")
    elif shapes:
        (shape,) = shapes
        if chips != shape.chips:
            out.append(f"{name}: {where}: pods x chips per pod = {chips}, but a {shape.text} slice has {shape.chips} chips")
    return out
