"""Spec checks that need more than one field: references between sections
(a workload's profile, queue, tier, image), what a profile must have for its
platform and accelerator, what can never run as the spec states it, and objects two
workloads would both create. What the emitted objects can never run (a pod no node
holds, a Workload no quota admits) is checked on the objects themselves (model/fit.py). Every problem
is collected, so the user sees them all at once.

Each kind's own checks live with its fields (model/kinds/); this module calls
them per profile and puts the workload's path in front."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal

from pydantic import BaseModel

from ..kernel import catalog, credentials, errors, quantity, supply, tpu_slices, versions
from ..kernel.catalog import node_labels as L
from ..kernel.errors import Problem, format_path
from . import flavors, hardware, teams as teams_mod
from .check_context import CheckContext
from .kinds import Workload
from .spec import Platform, Profile

# Argo CD Application names are label values (app.kubernetes.io/instance): 63 characters.
MAX_APP_NAME = 63


def _known(kind: str, value: str, choices) -> str:
    return errors.unknown(kind, value, choices)


def check(p: Platform) -> list[Problem]:
    out: list[Problem] = []
    for fn in CHECKS:
        out += fn(p)
    return out


# ---------------------------------------------------------------- pins and tiers

def pins(p: Platform) -> list[Problem]:
    out = []
    for project, pin in (("jobset", p.jobset), ("lws", p.lws)):
        if pin.version not in versions.known(project):
            out.append(Problem(f"{project}.version", f"{pin.version} is not a pinned {project} release "
                                                     f"(known: {', '.join(versions.known(project))})"))
    supported = versions.table()["kubernetes"]["supported"]
    if p.kubernetes_version not in supported:
        out.append(Problem("kubernetesVersion", f"{p.kubernetes_version} has no bundled schemas "
                                                f"(supported: {', '.join(supported)})"))
    known = versions.known("kueue")
    if p.kueue.version not in known:
        out.append(Problem("kueue.version", f"{p.kueue.version} is not a pinned Kueue release (known: {', '.join(known)})"))
    for name, prof in p.profiles.items():
        if prof.kueue_version and prof.kueue_version not in known:
            out.append(Problem(f"profiles.{name}.kueueVersion",
                               f"{prof.kueue_version} is not a pinned Kueue release (known: {', '.join(known)})"))
    return out


def integrations(p: Platform) -> list[Problem]:
    """`kueue.integrations`, when set: each one the profile's Kueue release has, and every one its
    workloads need (left out, their objects would start outside any quota)."""
    if p.kueue.integrations is None:
        return []
    out = []
    for name, prof in p.profiles.items():
        if prof.kueue.version not in versions.known("kueue"):
            continue   # pins() says so
        have = prof.kueue.frameworks
        for i, f in enumerate(p.kueue.integrations):
            if f not in have:
                out.append(Problem(f"kueue.integrations[{i}]", f"{f!r}: Kueue {prof.kueue.version} (profile {name!r}) "
                                                               f"has no such integration here (known: {', '.join(have)})"))
        needed, _ = p.integrations_needed(name)
        missing = sorted(needed - set(p.kueue.integrations))
        if missing:
            out.append(Problem("kueue.integrations", f"profile {name!r}'s workloads need {', '.join(missing)}: add "
                                                     f"them, or their objects start outside any quota"))
    return list({(x.path, x.message): x for x in out}.values())


def tiers(p: Platform) -> list[Problem]:
    out = []
    defaults = [t for t, v in p.priority_tiers.items() if v.priority_class and v.priority_class.global_default]
    if len(defaults) > 1:
        out.append(Problem("priorityTiers", f"only one PriorityClass may be globalDefault, found {len(defaults)}: "
                                            f"{', '.join(defaults)}"))
    for kind in ("priority_class", "workload_priority_class"):
        names = [getattr(t, kind).name for t in p.priority_tiers.values() if getattr(t, kind)]
        for dup in sorted({n for n in names if names.count(n) > 1}):
            label = "priorityClass" if kind == "priority_class" else "workloadPriorityClass"
            out.append(Problem("priorityTiers", f"{label} name {dup!r} is used by more than one tier"))
    return out


def namespaces(p: Platform) -> list[Problem]:
    names = [n.name for n in p.namespaces]
    return [Problem(f"namespaces[{i}].name", f"namespace {n!r} is declared more than once")
            for i, n in enumerate(names) if n in names[:i]]


# ---------------------------------------------------------------- profiles

def profiles(p: Platform) -> list[Problem]:
    out = []
    for name, prof in p.profiles.items():
        found = _manager_profile(prof) if p.manager_group(name) else _profile(prof)
        out += [Problem(f"profiles.{name}{'.' + x.path if x.path else ''}", x.message) for x in found]
    return out


def _manager_profile(prof: Profile) -> list[Problem]:
    """A MultiKueue manager runs nothing it dispatches: its quota is its workers' total."""
    return [Problem(field, "a MultiKueue manager holds no capacity of its own (its ClusterQueue's quota is its "
                           "workers' total); leave it out")
            for field, value in (("nodePool", prof.node_pool), ("nodePools", prof.node_pools),
                                 ("budget", prof.budget), ("tpu", prof.tpu)) if value]


def _profile(prof: Profile) -> list[Problem]:
    if prof.tpu is not None:
        return _tpu_profile(prof)
    out: list[Problem] = []
    if prof.accelerator is not None and prof.accelerator not in catalog.ACCELERATORS:
        out.append(Problem("accelerator", _known("accelerator", prof.accelerator, catalog.ACCELERATORS)))
    if prof.platform == "standard":
        out += _standard(prof)
    else:
        if prof.pools:
            out.append(Problem("nodePool" if prof.node_pool else "nodePools",
                               "Autopilot has no node pools; give the quota as `budget`"))
        if prof.budget is None:
            out.append(Problem("", "Autopilot profiles need `budget` (cpu, memory, nvidia.com/gpu, ephemeral-storage)"))
        if prof.accelerator is None:
            out.append(Problem("", "Autopilot profiles name the `accelerator` their budget buys"))
        elif getattr(catalog.ACCELERATORS.get(prof.accelerator), "kind", None) == "tpu":
            # An Autopilot budget is CPU, memory and nvidia.com/gpu: its ClusterQueue and flavor
            # would not cover google.com/tpu nor select a TPU topology. Refused, not half-made.
            out.append(Problem("accelerator", f"{prof.accelerator} is a TPU: this generator runs TPUs on GKE "
                                              "Standard node pools (nodePools with a topology) or a TPU7x "
                                              "reservation (`tpu`), not on Autopilot"))
        elif getattr(catalog.ACCELERATORS.get(prof.accelerator), "autopilot", None) is False:
            offered = sorted(d.accelerator for d in catalog.DEVICES.values() if d.autopilot)
            out.append(Problem("accelerator", f"Autopilot does not offer {prof.accelerator} (it offers "
                                              f"{', '.join(offered)})"))
        if prof.quota_basis == "allocatable":
            out.append(Problem("quotaBasis", "Autopilot quotas come from `budget`; `allocatable` applies to "
                                             "Standard node pools"))
    return out


def _standard(prof: Profile) -> list[Problem]:
    out = _standard_shape(prof)
    for i, pool in enumerate(prof.pools):
        out += _pool_machine(prof, i, pool)
    for i, pool in enumerate(prof.pools):
        out += _pool_placement(prof, i, pool)
    return out + _lookalike_pools(prof)


def _pool_where(prof: Profile, i: int) -> str:
    """A pool's field path: the spec gives either one `nodePool` or a `nodePools` list."""
    return "nodePool" if prof.node_pool else f"nodePools[{i}]"


def _standard_shape(prof: Profile) -> list[Problem]:
    """A Standard profile's quota comes from node pools, given one way."""
    out: list[Problem] = []
    if prof.budget is not None:
        out.append(Problem("budget", "GKE Standard quotas come from node pools; `budget` is for Autopilot"))
    if prof.node_pool and prof.node_pools:
        out.append(Problem("nodePool", "give either nodePool (one pool) or nodePools, not both"))
    if not prof.pools:
        out.append(Problem("", "GKE Standard profiles need `nodePools` (machineType, nodes)"))
    return out


def _pool_machine(prof: Profile, i: int, pool) -> list[Problem]:
    """One pool's machine type (known, of the profile's accelerator, its TPU topology) and name."""
    out: list[Problem] = []
    where = _pool_where(prof, i)
    m = hardware.machine(pool)
    if m is None:
        out.append(Problem(f"{where}.machineType", _known("machine type", pool.machine_type, catalog.MACHINE_TYPES)))
    elif prof.accelerator is not None and m.accelerator is not None and m.accelerator != prof.accelerator:
        out.append(Problem(f"{where}.machineType", f"{m.name} carries {m.accelerator}, the profile says "
                                                   f"{prof.accelerator}"))
    else:
        out += [Problem(f"{where}.{x.path}", x.message) for x in _pool_topology(pool, m) + _pool_gpus(pool, m)]
    if len(prof.pools) > 1 and pool.name is None:
        out.append(Problem(f"{where}", "a profile with several node pools names each (`name`: also its "
                                       "Kueue ResourceFlavor's name)"))
    if pool.name is not None and pool.name in [x.name for x in prof.pools[:i]]:
        out.append(Problem(f"{where}.name", f"node pool {pool.name!r} is listed twice"))
    return out


def _pool_placement(prof: Profile, i: int, pool) -> list[Problem]:
    """What topology-aware placement and a reservation ask of one pool."""
    out: list[Problem] = []
    where = _pool_where(prof, i)
    m = hardware.machine(pool)
    if pool.topology_aware is not None and m is not None and not isinstance(m.device, catalog.GpuFamily):
        out.append(Problem(f"{where}.topologyAware", f"{m.name} is not a GPU machine type: topology-aware "
                                                     "placement here is for GPU pools (TPU slices are placed "
                                                     "by their topology)"))
    elif pool.topology_aware is not None and prof._kueue is not None and not prof.kueue.is_v1beta2:
        out.append(Problem(f"{where}.topologyAware", f"topology-aware scheduling is on by default from Kueue "
                                                     f"v0.14 (beta feature gate); this profile runs "
                                                     f"{prof.kueue.version}"))
    if pool.reservation and pool.name is None:
        out.append(Problem(f"{where}.name", f"a pool consuming reservation {pool.reservation!r} is named: its "
                                            "flavor selects its nodes by node pool name "
                                            "(cloud.google.com/gke-nodepool)"))
    return out


def _lookalike_pools(prof: Profile) -> list[Problem]:
    """Pools whose nodes carry the same labels, so that their flavors could not be told apart."""
    out: list[Problem] = []
    kinds = [(pool.machine_type, pool.capacity, pool.topology, pool.reservation) for pool in prof.pools]
    for i, k in enumerate(kinds):
        if k in kinds[:i]:
            out.append(Problem(f"nodePools[{i}]", f"looks the same to Kueue as nodePools[{kinds.index(k)}] (same "
                                                  "machine type, capacity, topology and reservation): their nodes carry the same "
                                                  "labels, so one flavor could not be told from the other; make them "
                                                  "one pool with the nodes of both"))
    return out


def _pool_gpus(pool, m: catalog.MachineType) -> list[Problem]:
    """`gpus` attaches GPUs to a general-purpose machine type whose series takes them by count
    (N1: T4, catalog.ATTACHED_GPUS); other machine types come with theirs, or take none."""
    if pool.gpus is None or (isinstance(m.device, catalog.GpuFamily) and m.device.attaches_to):
        return []
    if m.accelerators:
        return [Problem("gpus", f"{m.name} comes with its accelerators; `gpus` is for N1 machine types (NVIDIA T4)")]
    return [Problem("gpus", f"{m.name} takes no attached GPUs; `gpus` is for N1 machine types (NVIDIA T4)")]


def _pool_topology(pool, m: catalog.MachineType) -> list[Problem]:
    """TPU pools are created with a topology their machine type supports, in whole slices."""
    if not isinstance(m.device, catalog.TpuGeneration):
        return [Problem("topology", f"{m.name} is not a TPU machine type; only TPU pools have a topology")] \
            if pool.topology else []
    gen = m.device
    allowed = gen.machine(m.name).topologies
    if pool.topology is None:
        return [Problem("topology", f"a {gen.name} node pool is created with a topology; {m.name} takes "
                                    f"{', '.join(s.text for s in allowed[:8])}")]
    try:
        shape = gen.shape(pool.topology)
    except ValueError as e:
        return [Problem("topology", str(e))]
    if shape not in allowed:
        return [Problem("topology", f"{pool.topology} is not a {m.name} node-pool topology (allowed: "
                                    f"{', '.join(s.text for s in allowed[:8])}{', ...' if len(allowed) > 8 else ''})")]
    vms = gen.machine(m.name).vms(shape)
    if pool.nodes % vms:
        return [Problem("nodes", f"a {pool.topology} slice of {m.name} is {vms} VMs; {pool.nodes} nodes are not "
                                 f"whole slices (use a multiple of {vms})")]
    return []


def _tpu_profile(prof: Profile) -> list[Problem]:
    out = []
    gen = catalog.TPU_GENERATIONS.get(getattr(catalog.ACCELERATORS.get(prof.accelerator or ""), "key", ""))
    if gen is None or gen.dynamic is None:
        dynamic = [g.accelerator for g in catalog.TPU_GENERATIONS.values() if g.dynamic]
        out.append(Problem("accelerator", f"a `tpu` reservation is sliced dynamically, which only "
                                          f"{' and '.join(dynamic)} offer{'s' if len(dynamic) == 1 else ''}; "
                                          f"this profile has "
                                          f"{prof.accelerator or 'no accelerator'} (static TPU slices are node "
                                          "pools with a topology)"))
    if prof.platform != "standard":
        out.append(Problem("platform", "TPU slicing runs on GKE Standard only"))
    for field, value in (("nodePool", prof.node_pool), ("nodePools", prof.node_pools), ("budget", prof.budget)):
        if value:
            out.append(Problem(field, "not used by TPU reservation profiles; size them with tpu.reservation"))
    if gen is not None and gen.dynamic is not None:
        out += _tpu_slicing(prof, gen)
    return out


def _tpu_slicing(prof: Profile, gen: catalog.TpuGeneration) -> list[Problem]:
    """The slicing mode offers the profile's slicing, and the profile's Kueue serves it."""
    out = []
    mode = gen.dynamic
    assert mode is not None and prof.tpu is not None
    if prof.tpu.slicing == "superslice" and not mode.superslicing:
        supers = [g.accelerator for g in catalog.TPU_GENERATIONS.values() if g.dynamic and g.dynamic.superslicing]
        out.append(Problem("tpu.slicing", f"{gen.accelerator} slices a reservation into sub-slices only "
                                          f"({', '.join(s.text for s in mode.subslice_shapes)}); super-slicing "
                                          f"is {', '.join(supers)}'s; use slicing: subslice"))
    return out + _tpu_kueue(prof, gen, mode)


def _tpu_kueue(prof: Profile, gen: catalog.TpuGeneration, mode: catalog.DynamicSlicing) -> list[Problem]:
    if prof._kueue is None:
        return []
    field = "kueueVersion" if prof.kueue_version else "tpu"
    if mode.admission_check_controller and not prof.kueue.is_v1beta2:
        usable = [v for v in versions.known("kueue") if versions.kueue_release(v).is_v1beta2]
        return [Problem(field, f"TPU profile {prof.name!r} needs a Kueue serving kueue.x-k8s.io/v1beta2 (the "
                               f"slice controller's API), {prof.kueue.version} does not; use {', '.join(usable)}")]
    least = mode.min_kueue
    if least and versions.number(prof.kueue.version) < versions.number(least):
        usable = [v for v in versions.known("kueue") if versions.number(v) >= versions.number(least)]
        return [Problem(field, f"{gen.accelerator} sub-slicing needs Kueue {least.lstrip('v')} or later (xpk's "
                               f"minimum), {prof.kueue.version} is older; use {', '.join(usable)}")]
    return []


# ---------------------------------------------------------------- queues

def queues(p: Platform) -> list[Problem]:
    out = []
    ns = {n.name for n in p.namespaces}
    for i, q in enumerate(p.queues):
        out += [Problem(f"queues[{i}].profiles[{j}]", _known("profile", prof, p.profiles))
                for j, prof in enumerate(q.profiles) if prof not in p.profiles]
        out += _local_queue_entries(i, q, ns)
        out += _queue_cohort(p, i, q)
        out += _flavor_names(p, i, q)
    return out + _queue_coverage(p)


def _local_queue_entries(i: int, q, ns: set[str]) -> list[Problem]:
    """A queue entry's LocalQueues: in declared namespaces, each listed once."""
    out = []
    for j, lq in enumerate(q.local_queues):
        if lq.namespace not in ns:
            out.append(Problem(f"queues[{i}].localQueues[{j}].namespace",
                               f"namespace {lq.namespace!r} is not declared in namespaces"
                               + errors.hint(lq.namespace, ns, "declared")))
    names = [(lq.namespace, lq.name) for lq in q.local_queues]
    for j, key in enumerate(names):
        if key in names[:j]:
            out.append(Problem(f"queues[{i}].localQueues[{j}]", f"LocalQueue {key[1]!r} in namespace "
                                                                f"{key[0]!r} is listed twice"))
    return out


def _queue_cohort(p: Platform, i: int, q) -> list[Problem]:
    """Cohort objects need a cohort name, and a Kueue that serves them on every profile."""
    out = []
    if (q.cohort_parent or q.unassigned == "cohort") and q.cohort is None:
        out.append(Problem(f"queues[{i}].cohort", "cohortParent and `unassigned: cohort` need a `cohort`"))
    for prof in q.profiles:
        profile = p.profiles.get(prof)
        if profile is not None and profile._kueue is not None and not profile.kueue.is_v1beta2 and \
                (q.cohort_parent or q.unassigned == "cohort"):
            out.append(Problem(f"queues[{i}]", f"Cohort objects (cohortParent, `unassigned: cohort`) need a Kueue "
                                               f"serving kueue.x-k8s.io/v1beta2; profile {prof!r} runs "
                                               f"{profile.kueue.version}"))
    return out


def _flavor_names(p: Platform, i: int, q) -> list[Problem]:
    """A profile's unnamed capacity source takes its ResourceFlavor's name from the queue entry."""
    return [Problem(f"queues[{i}].resourceFlavor", f"profile {prof!r} has an unnamed capacity "
                                                   "source; name its ResourceFlavor here")
            for prof in q.profiles
            if prof in p.profiles and q.resource_flavor is None and not p.manager_group(prof)
            and _needs_flavor_name(p.profiles[prof])]


def _queue_coverage(p: Platform) -> list[Problem]:
    """Each profile's ClusterQueue comes from exactly one queue entry."""
    covered: dict[str, int] = {}
    for q in p.queues:
        for prof in q.profiles:
            covered[prof] = covered.get(prof, 0) + 1
    return [Problem("queues", f"profile {prof!r} must be in exactly one queue entry, found "
                              f"{covered.get(prof, 0)}")
            for prof in sorted(p.profiles) if covered.get(prof, 0) != 1]


def _needs_flavor_name(prof: Profile) -> bool:
    return not prof.pools or any(pool.name is None for pool in prof.pools)


# ---------------------------------------------------------------- workloads

def _workloads(p: Platform) -> Iterator[tuple[int, Workload]]:
    return iter(enumerate(p.workloads))


def workloads(p: Platform) -> list[Problem]:
    out: list[Problem] = []
    ns = {n.name for n in p.namespaces}
    seen: set[tuple[str, str]] = set()
    # Per profile, built once for all its workloads (a 1,000-workload spec read each profile's
    # flavors once per workload, each read going over every workload: quadratic).
    contexts: dict[str, CheckContext] = {}
    facts: dict[str, _ProfileFacts] = {}
    for i, w in _workloads(p):
        base = f"workloads[{i}]"
        if (w.namespace, w.name) in seen:
            out.append(Problem(f"{base}.name", f"workload {w.name!r} appears twice in namespace {w.namespace!r}"))
        seen.add((w.namespace, w.name))
        if w.namespace not in ns:
            out.append(Problem(f"{base}.namespace", f"namespace {w.namespace!r} is not declared in namespaces"
                                                    + errors.hint(w.namespace, ns, "declared")))
        out += [Problem(f"{base}.{x.path}", x.message) for x in w.check_pod()]
        for path, key in w.images():
            if key not in p.images:
                out.append(Problem(format_path(list(path), base), _known("image", key, p.images)))
        tier = p.priority_tiers.get(w.priority)
        if tier is None:
            out.append(Problem(f"{base}.priority", _known("priority tier", w.priority, p.priority_tiers)))
        elif getattr(tier, "priority_class" if w.priority_kind == "priorityClass" else "workload_priority_class") is None:
            out.append(Problem(f"{base}.priority", f"tier {w.priority!r} has no {w.priority_kind}, which a "
                                                   f"{w.kind} workload needs"))
        for j, prof in enumerate(w.profiles):
            if prof not in p.profiles:
                out.append(Problem(f"{base}.profiles[{j}]", _known("profile", prof, p.profiles)))
                continue
            if not _checkable(w, p.profiles[prof]):
                continue   # reported on the profile; what runs there cannot be told
            if prof not in contexts:
                contexts[prof] = CheckContext(p, p.profiles[prof])
                facts[prof] = _ProfileFacts(p, p.profiles[prof])
            out += _on_profile(p, i, w, contexts[prof], j, facts[prof])
    return out


class _ProfileFacts:
    """What the workload checks read of a profile, each worked out at its first use: the
    profile's LocalQueues and its flavors (None when they cannot be built: the profile's own
    checks report why)."""

    def __init__(self, p: Platform, prof: Profile):
        self._p, self._prof = p, prof
        self._queues: set[tuple[str, str]] | None = None
        self._flavors: list[flavors.Flavor] | None = None
        self._flavors_read = False

    @property
    def local_queues(self) -> set[tuple[str, str]]:
        if self._queues is None:
            self._queues = self._p.local_queues_for(self._prof.name)
        return self._queues

    @property
    def profile_flavors(self) -> list[flavors.Flavor] | None:
        if not self._flavors_read:
            try:
                self._flavors = flavors.flavors(self._p, self._prof)
            except (AssertionError, KeyError, ValueError):   # catalog.UnknownName is a KeyError
                self._flavors = None
            self._flavors_read = True
        return self._flavors


def _on_profile(p: Platform, i: int, w: Workload, ctx: CheckContext, j: int, facts: _ProfileFacts) -> list[Problem]:
    base = f"workloads[{i}]"
    prof = ctx.profile
    bad = hardware.accelerator_problems(w, ctx)
    if bad:
        return [Problem(f"{base}.accelerator" if w.accelerator else f"{base}.profiles[{j}]", bad[0])]
    out = []
    if (w.namespace, w.queue) not in facts.local_queues and w.namespace in {n.name for n in p.namespaces}:
        there = [q for ns, q in facts.local_queues if ns == w.namespace]
        out.append(Problem(f"{base}.queue", f"no LocalQueue {w.queue!r} in namespace {w.namespace!r} on "
                                            f"profile {prof.name!r}" + errors.hint(w.queue, there, "it has", "it has none")))
    missing = [k for k in w.required_values if getattr(prof.values, _snake(k)) is None]
    if missing:
        out.append(Problem(f"profiles.{prof.name}.values", f"profile {prof.name!r} needs "
                                                           f"values.{', values.'.join(missing)} for workload {w.name!r}"))
    out += [Problem(f"{base}.{x.path}" if x.path else base, x.message) for x in w.check(ctx)]
    out += _capacity(p, i, w, ctx, facts)
    return out


def _accelerator_flavors(fs: list, accel: str | None) -> list:
    """The flavors of the workload's accelerator (all of them when it names none)."""
    return [f for f in fs if accel is None or accel in (f.node_labels.get(L.GPU_ACCELERATOR_LABEL),
                                                        f.node_labels.get(L.TPU_ACCELERATOR_LABEL))] or fs


def _capacity(p: Platform, i: int, w: Workload, ctx: CheckContext, facts: _ProfileFacts) -> list[Problem]:
    """The capacity a workload may use must exist on the profile for its accelerator, and
    what it may not use must be told apart by the flavors' node labels."""
    if p.manager_group(ctx.profile.name) is not None:
        return []   # a MultiKueue manager's flavors are its workers': checked there
    allowed = p.capacity_of(w)
    fs = facts.profile_flavors
    if fs is None:
        return []     # the profile's own problems are reported by its checks
    mine = _accelerator_flavors(fs, w.accelerator)
    _, open_ = flavors.capacity_affinity(mine, allowed)
    where = f"workloads[{i}].capacity" if w.capacity is not None else f"workloads[{i}]"
    kinds = ", ".join(dict.fromkeys(f.capacity for f in mine))
    if not [f for f in open_ if f.capacity in allowed]:
        default = "" if w.capacity is not None else (" (serving kinds default to reserved and on-demand: say "
                                                     "`capacity: [spot]` to run on Spot on purpose)" if w.serves
                                                     else " (its team's capacity)")
        return [Problem(where, f"profile {ctx.profile.name!r} has no {' or '.join(allowed)} capacity for workload "
                               f"{w.name!r} (it has: {kinds}){default}")]
    loose = [f.name for f in open_ if f.capacity not in allowed]
    if loose:
        return [Problem(where, f"flavors {', '.join(loose)} ({kinds}) cannot be told apart from the capacity workload "
                               f"{w.name!r} may use: name the profile's node pools")]
    return []


def _snake(key: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in key)


def duplicate_objects(p: Platform) -> list[Problem]:
    """Two workloads on one profile must not create the same object."""
    owner: dict[tuple[str, str, str, str], int] = {}
    clashes: dict[tuple[int, int, str], list[str]] = {}
    for i, w in _workloads(p):
        for prof in w.profiles:
            for kind, name in w.names_of_objects():
                key = (prof, kind, w.namespace, name)
                j = owner.get(key, i)
                # The same workload twice is one problem, its duplicated name (workloads()).
                if j != i and (p.workloads[j].namespace, p.workloads[j].name) != (w.namespace, w.name):
                    clashes.setdefault((i, owner[key], f"{kind}/{w.namespace}/{name}"), []).append(prof)
                owner.setdefault(key, i)
    return [Problem(f"workloads[{i}]", f"{p.workloads[i].name!r} would create {obj}, which workloads[{j}] also "
                                       f"creates on profile{'s' if len(profs) > 1 else ''} "
                                       f"{', '.join(repr(x) for x in sorted(profs))}; give it a distinct name or "
                                       "serviceName")
            for (i, j, obj), profs in sorted(clashes.items())]


def guides(p: Platform) -> list[Problem]:
    """Two serving stacks in one namespace with the same guide label would share pods."""
    seen: dict[tuple, int] = {}
    out = []
    for i, w in _workloads(p):
        if w.kind != "tpu-pd-serving":
            continue
        for prof in w.profiles:
            key = (prof, w.namespace, w.guide_label)
            if key in seen:
                out.append(Problem(f"workloads[{i}].guide",
                                   f"guide label {key[2]!r} is also used by workloads[{seen[key]}] in namespace "
                                   f"{key[1]!r} on profile {prof!r}; each pool would select the other's pods"))
            seen.setdefault(key, i)
    return out


# ---------------------------------------------------------------- what can never run

def _supply(p: Platform, prof: Profile) -> supply.Tree | None:
    """The profile's ClusterQueues and Cohort as the builder writes them, read by the supply model."""
    if not any(prof.name in q.profiles for q in p.queues) or _cohort_loops(p, prof.name):
        return None
    from .cluster_queues import cluster_queues  # lazily: it imports this package
    try:
        fs = flavors.flavors(p, prof)
        # The ResourceFlavors as builders/kueue_objects.py writes them: node labels and tolerations.
        rfs = {f.name: supply.Flavor(f.name, f.node_labels, (), tuple(f.tolerations)) for f in fs}
        return supply.Tree(*_holders(cluster_queues(p, prof, fs, ())), rfs)
    except (AssertionError, KeyError, ValueError):
        return None     # the profile's own problems are reported by its checks


def _holders(bodies: list[dict]) -> tuple[list[supply.Holder], list[supply.Holder]]:
    cqs = [h for b in bodies if b["kind"] == "ClusterQueue" and (h := supply.holder_of(b))]
    cohorts = [h for b in bodies if b["kind"] == "Cohort" and (h := supply.holder_of(b))]
    return cqs, cohorts


def _cluster_queue_of(p: Platform, profile: str, namespace: str, queue: str) -> str | None:
    for q in p.queues:
        if profile in q.profiles and (namespace, queue) in {(lq.namespace, lq.name) for lq in q.local_queues}:
            return q.cluster_queue
    for t in p.teams_for(profile):
        if namespace in t.namespaces and queue == t.queue_name:
            return t.cq_name
    return None


def _cohort_loops(p: Platform, profile: str | None = None) -> list[list[str]]:
    """Cohort parent cycles (cohort -> cohortParent) among the queue entries of one profile's
    cluster, or of every profile (each loop once)."""
    out: list[list[str]] = []
    for name in [profile] if profile else sorted(p.profiles):
        parents = {q.cohort: q.cohort_parent for q in p.queues if name in q.profiles and q.cohort and q.cohort_parent}
        out += [loop for loop in supply.find_cycles(parents) if loop not in out]
    return out


def cohort_cycles(p: Platform) -> list[Problem]:
    """A cohort whose parent chain comes back to itself in one cluster: one line per cycle
    (Kueue would schedule nothing under it)."""
    out = []
    for loop in _cohort_loops(p):
        i = next(i for i, q in enumerate(p.queues) if q.cohort == loop[0] and q.cohort_parent)
        out.append(Problem(f"queues[{i}].cohortParent", supply.cycle_message(loop)))
    return out


def _unknown_machines(prof: Profile) -> bool:
    return any(hardware.machine(pool) is None for pool in prof.pools)


def _checkable(w: Workload, prof: Profile) -> bool:
    """Whether a workload's own checks on a profile can run: every pool's machine type is known,
    or the workload names an accelerator that a pool of a known machine type carries (an
    unknown machine type elsewhere in the profile must not hide that workload's problems)."""
    if not _unknown_machines(prof):
        return True
    known = {m.accelerator for m in (hardware.machine(pool) for pool in prof.pools) if m is not None}
    return w.accelerator is not None and w.accelerator in known


def tpu_tiers(p: Platform) -> list[Problem]:
    """Per TPU profile: the highest tier's workloads fit the reservation all at once (they
    can preempt everything below them, but not each other)."""
    out = []
    for name, prof in p.profiles.items():
        device = catalog.ACCELERATORS.get(prof.accelerator or "")
        if prof.tpu is None or not isinstance(device, catalog.TpuGeneration) or device.dynamic is None:
            continue
        r = prof.tpu.reservation
        res = tpu_slices.reservation(device, r.cubes, r.cpu_per_vm, r.memory_per_vm)
        by_tier, value = _tier_demands(p, name, CheckContext(p, prof), res.chips)
        if not by_tier:
            continue
        top = max(by_tier, key=value.__getitem__)
        total = sum(d.total_chips for _, d in by_tier[top])
        if total > res.chips:
            parts = "; ".join(f"{n}: {d.what} = {d.total_chips} chips" for n, d in by_tier[top])
            out.append(Problem(f"profiles.{name}.tpu.reservation.cubes",
                               f"the {top!r} tier, the highest on profile {name!r}, needs {total} chips at once "
                               f"({parts}), but the reservation holds {res.describe()}; raise cubes to "
                               f"{res.cubes_for(total)} or give those workloads fewer slices"))
    return out


def _tier_demands(p: Platform, name: str, ctx: CheckContext,
                  chips: int) -> tuple[dict[str, list[tuple[str, tpu_slices.Demand]]], dict[str, int]]:
    """The profile's TPU workloads by tier (those a slice of the reservation can hold; the
    others are their own checks' problem), and each tier's WorkloadPriorityClass value."""
    by_tier: dict[str, list[tuple[str, tpu_slices.Demand]]] = {}
    value: dict[str, int] = {}   # tier -> its WorkloadPriorityClass value
    for w in p.workloads_for(name):
        tier = p.priority_tiers.get(w.priority)
        if w.device != "tpu" or tier is None or tier.workload_priority_class is None:
            continue
        d = w.slice_demand(ctx)
        if d is not None and d.unit_chips <= chips:
            by_tier.setdefault(w.priority, []).append((w.name, d))
            value[w.priority] = tier.workload_priority_class.value
    return by_tier, value


# ---------------------------------------------------------------- teams

def teams(p: Platform) -> list[Problem]:
    out: list[Problem] = []
    ns = {n.name for n in p.namespaces}
    names = [t.name for t in p.teams]
    cqs = {q.cluster_queue for q in p.queues}
    for i, t in enumerate(p.teams):
        base = f"teams[{i}]"
        if t.name in names[:i]:
            out.append(Problem(f"{base}.name", f"team {t.name!r} is declared twice"))
        if t.cq_name in cqs:
            out.append(Problem(f"{base}.clusterQueue", f"ClusterQueue {t.cq_name!r} is already a queue entry's or "
                                                       "another team's; give the team its own"))
        cqs.add(t.cq_name)
        for j, n in enumerate(t.namespaces):
            if n not in ns:
                out.append(Problem(f"{base}.namespaces[{j}]", f"namespace {n!r} is not declared in namespaces"
                                                              + errors.hint(n, ns, "declared")))
        if t.preemption.borrow_within_cohort and t.preemption.borrow_within_cohort.policy != "Never" \
                and t.preemption.reclaim_within_cohort in (None, "Never"):
            out.append(Problem(f"{base}.preemption", "borrowWithinCohort needs reclaimWithinCohort other than Never "
                                                     "(a rule of Kueue's ClusterQueue API)"))
        for prof_name, share in t.profiles.items():
            where = f"{base}.profiles.{prof_name}"
            prof = p.profiles.get(prof_name)
            if prof is None:
                out.append(Problem(where, _known("profile", prof_name, p.profiles)))
                continue
            out += _team_share(p, t, prof, share, where)
    out += _team_totals(p)
    return out


def _flavor_quotas(p: Platform, prof: Profile) -> dict[str, dict[str, Decimal]] | None:
    if any(prof.name in q.profiles for q in p.queues) and not _unknown_machines(prof):
        try:
            return {f.name: f.quota for f in flavors.flavors(p, prof)}
        except (AssertionError, KeyError, ValueError):
            return None
    return None


def _team_share(p: Platform, t, prof: Profile, share, where: str) -> list[Problem]:
    out = []
    q = next((q for q in p.queues if prof.name in q.profiles), None)
    if q is not None and q.cohort is None:
        out.append(Problem(where, f"profile {prof.name!r} is shared by teams; give its queue entry a `cohort` "
                                  f"(queues[{p.queues.index(q)}].cohort)"))
    if q is not None and any((ns, t.queue_name) in {(lq.namespace, lq.name) for lq in q.local_queues}
                             for ns in t.namespaces):
        out.append(Problem(where, f"LocalQueue {t.queue_name!r} is also a queue entry's LocalQueue in one of the "
                                  "team's namespaces; name the team's localQueue differently"))
    have = _flavor_quotas(p, prof)
    if have is None:
        return out
    return out + _share_quotas(share, have, where)


def _share_quotas(share, have: dict[str, dict[str, Decimal]], where: str) -> list[Problem]:
    """A team's quotas name flavors and resources the profile holds, and lend no more than they hold."""
    out = []
    for flavor, resources in share.quotas.items():
        if flavor not in have:
            out.append(Problem(f"{where}.quotas.{flavor}", _known("flavor", flavor, have)))
            continue
        for r, rs in resources.items():
            path = f"{where}.quotas.{flavor}.{r}"
            if r not in have[flavor]:
                out.append(Problem(path, f"flavor {flavor!r} holds no {r} (it holds {', '.join(have[flavor])})"))
                continue
            cap = have[flavor][r]
            nominal = teams_mod.resolve(rs.nominal, cap, r)
            if rs.lending_limit is not None and teams_mod.resolve(rs.lending_limit, cap, r) > nominal:
                out.append(Problem(f"{path}.lendingLimit", f"{rs.lending_limit} is more than the nominal quota "
                                                           f"{quantity.show(r, nominal)}; a team lends at most what "
                                                           "it holds"))
    return out


def _team_totals(p: Platform) -> list[Problem]:
    """The teams' nominal quotas on a flavor add up to no more than it holds."""
    out = []
    for prof in p.profiles.values():
        share = [t for t in p.teams if prof.name in t.profiles]
        have = _flavor_quotas(p, prof) if share else None
        if not have:
            continue
        for flavor, cap in have.items():
            for r, capacity_r in cap.items():
                parts = _nominal_parts(share, prof.name, flavor, r, capacity_r)
                total = sum((v for _, v in parts), Decimal(0))
                if total > capacity_r:
                    detail = " + ".join(f"{n} {quantity.show(r, v)}" for n, v in parts)
                    out.append(Problem("teams", f"on profile {prof.name!r}, flavor {flavor!r}, the teams' nominal "
                                                f"{r} adds up to {quantity.show(r, total)} ({detail}), more than the "
                                                f"{quantity.show(r, capacity_r)} it holds"))
    return out


def _nominal_parts(share: list, profile: str, flavor: str, r: str, capacity_r: Decimal) -> list[tuple[str, Decimal]]:
    """(team, nominal quota) of each team that gives one on the profile's flavor and resource."""
    return [(t.name, teams_mod.resolve(rs.nominal, capacity_r, r)) for t in share
            for f, res in t.profiles[profile].quotas.items() if f == flavor
            for rr, rs in res.items() if rr == r]


# ---------------------------------------------------------------- MultiKueue

def multikueue(p: Platform) -> list[Problem]:
    out: list[Problem] = []
    managers = [g.manager for g in p.multi_kueue]
    for i, g in enumerate(p.multi_kueue):
        base = f"multiKueue[{i}]"
        if g.name in [x.name for x in p.multi_kueue[:i]]:
            out.append(Problem(f"{base}.name", f"MultiKueue group {g.name!r} is declared twice"))
        if g.manager in managers[:i]:
            out.append(Problem(f"{base}.manager", f"profile {g.manager!r} already manages another group"))
        out += _group_members(p, g, base, managers)
        if all(x in p.profiles for x in [g.manager, *g.worker_profiles]):
            out += [Problem(f"{base}.{x.path}" if x.path else base, x.message) for x in _group(p, g)]
    return out


def _group_members(p: Platform, g, base: str, managers: list[str]) -> list[Problem]:
    """A group's manager and workers are known profiles, each once, and no worker manages a group."""
    out: list[Problem] = []
    seen: set[str] = set()
    for field, prof in [("manager", g.manager)] + [(f"workers[{j}].profile", w) for j, w in enumerate(g.worker_profiles)]:
        if prof not in p.profiles:
            out.append(Problem(f"{base}.{field}", _known("profile", prof, p.profiles)))
        elif prof in seen:
            out.append(Problem(f"{base}.{field}", f"profile {prof!r} appears twice in the group"))
        elif field != "manager" and prof in managers:
            out.append(Problem(f"{base}.{field}", f"profile {prof!r} is a MultiKueue manager; a worker runs jobs"))
        seen.add(prof)
    return out


def _group(p: Platform, g) -> list[Problem]:
    return (_group_kueue(p, g) + _group_teams(p, g) + _manager_workloads(p, g) + _worker_flavors(p, g)
            + _dispatched_kinds(p, g))


def _dispatched_kinds(p: Platform, g) -> list[Problem]:
    """Every integration the manager enables is dispatched (Kueue's MultiKueue builds an adapter
    per enabled integration it supports: cmd/kueue/main.go, jobframework.GetMultiKueueAdapters over
    # cfg.Integrations.Frameworks), so each
    worker must enable it too; the workers enable jobKinds. The manager's workloads' kinds
    must therefore be among them (`jobKinds: []` left the workers without batch/job)."""
    needed = sorted({f for w in p.workloads_for(g.manager) for f in w.frameworks} - set(g.job_kinds))
    if not needed:
        return []
    return [Problem("jobKinds", f"the manager {g.manager!r} runs workloads of {', '.join(needed)}, which MultiKueue "
                                f"dispatches to the workers, but jobKinds ({', '.join(g.job_kinds) or 'empty'}) "
                                "leaves it off the workers' Kueue; list it in jobKinds")]


def _group_kueue(p: Platform, g) -> list[Problem]:
    """The group runs one Kueue release, and the manager's release supports what the group asks."""
    out = []
    profs = [p.profiles[x] for x in (g.manager, *g.worker_profiles)]
    releases = sorted({x.kueue.version for x in profs if x._kueue is not None})
    if len(releases) > 1:
        out.append(Problem("", f"the manager and workers run different Kueue releases ({', '.join(releases)}); "
                               "a manager talks to its workers in its own API version: pin one release"))
    manager = p.profiles[g.manager]
    if manager._kueue is not None:
        if g.dispatcher != "all-at-once" and not manager.kueue.is_v1beta2:
            out.append(Problem("dispatcher", f"Kueue {manager.kueue.version} has no dispatcher choice (from "
                                             "v0.13): leave it all-at-once"))
        minor = int(p.kubernetes_version.split(".")[1])
        if manager.kueue.is_v1beta2 and minor < 32:
            out.append(Problem("manager", f"Kueue {manager.kueue.version} dispatches Jobs with spec.managedBy, "
                                          f"on by default from Kubernetes 1.32; kubernetesVersion is "
                                          f"{p.kubernetes_version}"))
    return out


def _group_teams(p: Platform, g) -> list[Problem]:
    return [Problem("", f"teams on profile {prof!r}: teams and MultiKueue groups do not mix yet")
            for prof in (g.manager, *g.worker_profiles) if p.teams_for(prof)]


def _manager_workloads(p: Platform, g) -> list[Problem]:
    """The manager dispatches batch Jobs; it runs nothing else."""
    return [Problem("manager", f"workloads[{i}] ({w.kind}) runs on the manager {g.manager!r}, which "
                               "dispatches batch Jobs only: give serving and TPU workloads the workers' "
                               "profiles")
            for i, w in enumerate(p.workloads) if g.manager in w.profiles and w.kind not in ("finetune",)]


def _worker_flavors(p: Platform, g) -> list[Problem]:
    """A flavor name means the same nodes on every worker: the manager adds quotas per name."""
    out = []
    seen: dict[str, tuple[str, dict]] = {}
    for worker in g.worker_profiles:
        for f in flavors.flavors(p, p.profiles[worker]) if any(worker in q.profiles for q in p.queues) else []:
            if f.name in seen and seen[f.name][1] != f.node_labels:
                out.append(Problem("workers", f"flavor {f.name!r} has other node labels on {worker!r} than on "
                                              f"{seen[f.name][0]!r}; the manager adds quotas per flavor name, so a "
                                              "name must mean the same nodes on every worker"))
            seen.setdefault(f.name, (worker, f.node_labels))
    return out


# ---------------------------------------------------------------- gitops

def gitops(p: Platform) -> list[Problem]:
    g = p.gitops
    if g is None:
        return []
    out = []
    bad = credentials.in_url(g.repo_url, tokens=False)
    if bad:
        out.append(Problem("gitops.repoURL", bad))
    for name in g.clusters:
        if name not in p.profiles:
            out.append(Problem(f"gitops.clusters.{name}", _known("profile", name, p.profiles)))
    for name in sorted(p.profiles):
        if name not in g.clusters:
            out.append(Problem("gitops.clusters", f"profile {name!r} has no Argo CD destination: add "
                                                  f"gitops.clusters.{name}.server (API server URL) or .name "
                                                  "(a cluster registered in Argo CD)"))
    return out + _app_names(p, g) + _shared_clusters(g)


def _app_names(p: Platform, g) -> list[Problem]:
    """Argo CD Application names fit in a label value."""
    out = []
    # Application names: <project>-<profile> and <project>-<profile>-<controller>.
    project = g.project or p.name
    names = [f"{project}-{name}-{c}" for name in sorted(p.profiles)
             for c in sorted({"kueue"} | {c for w in p.workloads_for(name) for c in w.controllers})]
    longest = max(names, key=len, default="")
    if len(longest) > MAX_APP_NAME:
        out.append(Problem("gitops.project" if g.project else "name",
                           f"Argo CD Application name {longest!r} would be {len(longest)} characters, over "
                           f"{MAX_APP_NAME}; choose a shorter gitops.project or shorter profile names"))
    return out


def _shared_clusters(g) -> list[Problem]:
    """Each profile's overlay goes to a cluster of its own."""
    out = []
    seen: dict[tuple, str] = {}
    for name, d in sorted(g.clusters.items()):
        key = (d.server, d.name)
        if key in seen:
            out.append(Problem(f"gitops.clusters.{name}", f"same cluster as profile {seen[key]!r}; two overlays in "
                                                          "one cluster would fight over their cluster-scoped objects "
                                                          "(ClusterQueues, PriorityClasses)"))
        seen.setdefault(key, name)
    return out


def secrets(p: Platform) -> list[Problem]:
    """Credential-shaped arguments and environment values, by their flag or variable name
    (a published token format in any key or value is credentials.scan's, run on the raw
    spec by spec.from_dict)."""
    out = []
    for i, w in _workloads(p):
        for j, arg in enumerate(getattr(w, "engine_args", ())):
            bad = credentials.in_argument(arg, tokens=False)
            if bad:
                out.append(Problem(f"workloads[{i}].engineArgs[{j}]", bad))
        for key, value in sorted(getattr(w, "engine_env", {}).items()):
            bad = credentials.in_env(key, value, tokens=False)
            if bad:
                out.append(Problem(f"workloads[{i}].engineEnv.{key}", bad))
    return out


# ---------------------------------------------------------------- repeated entries

# Lists whose entries may repeat: words of a command line (a flag given twice is the engine's business).
REPEATABLE = frozenset({"args", "command", "engine_args"})


def repeated(p: Platform) -> list[Problem]:
    """An entry listed twice in any list of names or values of the spec (a team's namespace, a
    queue's profile, a MultiKueue job kind, ...): one problem per list, for every such list
    the model has or gains. Lists of named things (pools, teams, workers) have checks of their own."""
    out: list[Problem] = []
    stack: list[tuple[BaseModel, tuple]] = [(p, ())]
    while stack:
        node, path = stack.pop()
        for name, alias in _fields(type(node)):
            value = getattr(node, name)
            if isinstance(value, list) and _scalar_list(value) and name not in REPEATABLE:
                dup = sorted({str(v) for v in value if value.count(v) > 1})
                if dup:
                    out.append(Problem(format_path([*path, alias]), f"lists {', '.join(map(repr, dup))} more "
                                                                    "than once; give each entry once"))
            elif isinstance(value, (list, tuple, dict, BaseModel)):
                stack += _children(value, path + (alias,))
    return sorted(out, key=lambda x: x.path)


_FIELDS: dict[type, list[tuple[str, str]]] = {}   # model class -> (field name, its name in the spec)


def _fields(cls: type[BaseModel]) -> list[tuple[str, str]]:
    """The fields of a model class, read once per class (the walk meets 40,000 values at 1,000 workloads)."""
    if cls not in _FIELDS:
        _FIELDS[cls] = [(name, field.alias or name) for name, field in cls.model_fields.items()]
    return _FIELDS[cls]


def _scalar_list(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, (str, int, float)) for v in value)


def _children(value, where: tuple) -> list[tuple[BaseModel, tuple]]:
    """The models under a field's value (in a list, a mapping, or the value itself)."""
    if isinstance(value, (list, tuple)):
        return [(v, where + (i,)) for i, v in enumerate(value) if isinstance(v, BaseModel)]
    if isinstance(value, dict):
        return [(v, where + (k,)) for k, v in value.items() if isinstance(v, BaseModel)]
    return [(value, where)] if isinstance(value, BaseModel) else []


CHECKS: tuple[Callable[[Platform], list[Problem]], ...] = (
    repeated, pins, integrations, tiers, namespaces, profiles, queues, cohort_cycles, workloads, duplicate_objects,
    guides,
    tpu_tiers,
    teams, multikueue, gitops, secrets,
)
