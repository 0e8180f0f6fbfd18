"""Load the platform spec, validate it, and expose it as a small model.

Validation has two layers: the JSON Schema (shape, types, unknown fields) and
cross-references the schema cannot express (a workload naming an unknown
profile, a queue missing in a profile, a GPU count no node can hold). Every
problem is collected, so the user sees them all at once."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import jsonschema

from . import facts, paths, userinput, versions
from .errors import Problem, SpecError, format_path, problem
from .quantity import parse


@lru_cache(maxsize=1)
def _validator():
    schema = json.loads(paths.SPEC_SCHEMA.read_text())
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


@dataclass(frozen=True)
class Profile:
    name: str
    platform: str           # standard | autopilot
    accelerator: str        # key of facts.ACCELERATORS
    kueue: versions.KueueRelease
    values: dict
    node_pool: dict | None = None
    quota_basis: str = "capacity"
    budget: dict | None = None
    tpu: dict | None = None

    @property
    def autopilot(self) -> bool:
        return self.platform == "autopilot"

    @property
    def accel(self) -> facts.Accelerator:
        return facts.ACCELERATORS[self.accelerator]

    @property
    def machine(self) -> facts.MachineType | None:
        return facts.MACHINE_TYPES[self.node_pool["machineType"]] if self.node_pool else None


@dataclass(frozen=True)
class Queue:
    cluster_queue: str
    resource_flavor: str
    profiles: tuple[str, ...]
    local_queues: tuple[tuple[str, str], ...]   # (namespace, name)
    preemption: dict


@dataclass
class Spec:
    source: str
    raw: dict
    name: str
    kubernetes_version: str
    namespaces: list[dict]
    tiers: dict
    profiles: dict[str, Profile]
    queues: list[Queue]
    images: dict
    workloads: list[dict]
    jobset_version: str = field(default_factory=lambda: versions.default("jobset"))
    lws_version: str = field(default_factory=lambda: versions.default("lws"))

    def queue_for(self, profile: str) -> Queue:
        return next(q for q in self.queues if profile in q.profiles)

    def workloads_for(self, profile: str) -> list[dict]:
        return [w for w in self.workloads if profile in w["profiles"]]

    def image(self, key: str, profile: Profile) -> str:
        img = self.images[key]
        repo = img.get("repository") or f"{profile.values['registry']}/{img['name']}"
        return f"{repo}:{img['tag']}"

    def priority_class(self, tier: str) -> str:
        return self.tiers[tier]["priorityClass"]["name"]

    def workload_priority_class(self, tier: str) -> str:
        return self.tiers[tier]["workloadPriorityClass"]["name"]


def load(path: str | Path) -> Spec:
    return from_dict(userinput.load_mapping(path, "spec"), str(path))


def from_dict(raw: dict, source: str = "<spec>") -> Spec:
    schema_problems = [userinput.schema_problem(e) for e in _validator().iter_errors(raw)]
    if schema_problems:
        raise SpecError(source, schema_problems)
    problems = _cross_check(raw)
    if problems:
        raise SpecError(source, problems)
    return _build(raw, source)


def _cross_check(raw: dict) -> list[Problem]:
    from .workloads import KINDS  # late: workload kinds import this module

    out: list[Problem] = []
    namespaces = {n["name"] for n in raw["namespaces"]}
    tiers = raw["priorityTiers"]
    profiles = raw["profiles"]
    kueue_default = raw.get("kueue", {}).get("version", versions.default("kueue"))

    for project in ("jobset", "lws"):
        v = raw.get(project, {}).get("version")
        if v and v not in versions.known(project):
            out.append(problem([project, "version"], f"{v} is not a pinned {project} release (known: {', '.join(versions.known(project))})"))
    k8s = raw.get("kubernetesVersion")
    if k8s and k8s not in versions.table()["kubernetes"]["supported"]:
        out.append(problem(["kubernetesVersion"], f"{k8s} has no bundled schemas (supported: {', '.join(versions.table()['kubernetes']['supported'])})"))
    if kueue_default not in versions.known("kueue"):
        out.append(problem(["kueue", "version"], f"{kueue_default} is not a pinned Kueue release (known: {', '.join(versions.known('kueue'))})"))

    defaults = [t for t, v in tiers.items() if v.get("priorityClass", {}).get("globalDefault")]
    if len(defaults) > 1:
        out.append(problem(["priorityTiers"], f"only one PriorityClass may be globalDefault, found {len(defaults)}: {', '.join(defaults)}"))
    for kind in ("priorityClass", "workloadPriorityClass"):
        names = [v[kind]["name"] for v in tiers.values() if kind in v]
        for dup in sorted({n for n in names if names.count(n) > 1}):
            out.append(problem(["priorityTiers"], f"{kind} name {dup!r} is used by more than one tier"))

    for name, p in profiles.items():
        out += _check_profile(name, p, kueue_default)

    covered: dict[str, int] = {}
    for i, q in enumerate(raw["queues"]):
        for j, prof in enumerate(q["profiles"]):
            if prof not in profiles:
                out.append(problem(["queues", i, "profiles", j], f"unknown profile {prof!r} (known: {', '.join(sorted(profiles))})"))
            covered[prof] = covered.get(prof, 0) + 1
        for j, lq in enumerate(q["localQueues"]):
            if lq["namespace"] not in namespaces:
                out.append(problem(["queues", i, "localQueues", j, "namespace"], f"namespace {lq['namespace']!r} is not declared in namespaces"))
    for prof in sorted(profiles):
        if covered.get(prof, 0) != 1:
            out.append(problem(["queues"], f"profile {prof!r} must be in exactly one queue entry, found {covered.get(prof, 0)}"))

    seen: set[tuple[str, str]] = set()
    for i, w in enumerate(raw["workloads"]):
        base = ["workloads", i]
        key = (w["namespace"], w["name"])
        if key in seen:
            out.append(problem(base + ["name"], f"workload {w['name']!r} appears twice in namespace {w['namespace']!r}"))
        seen.add(key)
        if w["namespace"] not in namespaces:
            out.append(problem(base + ["namespace"], f"namespace {w['namespace']!r} is not declared in namespaces (declared: {', '.join(sorted(namespaces))})"))
        kind = KINDS[w["kind"]]
        # `image` of the workload and of its helper blocks (e.g. a web client).
        for where, block in [([], w)] + [([k], v) for k, v in w.items() if isinstance(v, dict)]:
            if "image" in block and block["image"] not in raw["images"]:
                out.append(problem(base + where + ["image"], f"unknown image {block['image']!r} (known: {', '.join(sorted(raw['images']))})"))
        if "priority" in w:
            tier = tiers.get(w["priority"])
            if tier is None:
                out.append(problem(base + ["priority"], f"unknown priority tier {w['priority']!r} (known: {', '.join(sorted(tiers))})"))
            elif kind.priority_kind not in tier:
                out.append(problem(base + ["priority"], f"tier {w['priority']!r} has no {kind.priority_kind}, which a {w['kind']} workload needs"))
        for j, prof in enumerate(w["profiles"]):
            p = profiles.get(prof)
            if p is None:
                out.append(problem(base + ["profiles", j], f"unknown profile {prof!r} (known: {', '.join(sorted(profiles))})"))
                continue
            if p["accelerator"] not in kind.accelerators:
                out.append(problem(base + ["profiles", j], f"a {w['kind']} workload runs on {'/'.join(kind.accelerators)}, profile {prof!r} has {p['accelerator']}"))
                continue
            if "queue" in w:
                lqs = [(lq["namespace"], lq["name"]) for q in raw["queues"] if prof in q["profiles"] for lq in q["localQueues"]]
                if (w["namespace"], w["queue"]) not in lqs:
                    out.append(problem(base + ["queue"], f"no LocalQueue {w['queue']!r} in namespace {w['namespace']!r} on profile {prof!r}"))
            out += [Problem(format_path(base + [pp.path]) if pp.path else format_path(base), pp.message)
                    for pp in kind.check(w, p, prof)]
    from . import tpu  # TPU checks that need every workload of a profile (reservation fit)
    out += tpu.check_profiles(raw)
    return out


def _check_profile(name: str, p: dict, kueue_default: str) -> list[Problem]:
    base = ["profiles", name]
    out = []
    version = p.get("kueueVersion")
    if version and version not in versions.known("kueue"):
        out.append(problem(base + ["kueueVersion"], f"{version} is not a pinned Kueue release (known: {', '.join(versions.known('kueue'))})"))
    is_tpu = p["accelerator"] in facts.TPU_TYPES
    if is_tpu:
        if "tpu" not in p:
            out.append(problem(base, "a TPU profile needs `tpu` (slicing and reservation)"))
        if p["platform"] != "standard":
            out.append(problem(base + ["platform"], "TPU slicing runs on GKE Standard only"))
        for extra in ("nodePool", "budget"):
            if extra in p:
                out.append(problem(base + [extra], "not used by TPU profiles; size them with tpu.reservation"))
        return out
    if "tpu" in p:
        out.append(problem(base + ["tpu"], f"only TPU profiles take `tpu`, this one has {p['accelerator']}"))
    if p["platform"] == "standard":
        if "budget" in p:
            out.append(problem(base + ["budget"], "GKE Standard quotas come from nodePool; `budget` is for Autopilot"))
        pool = p.get("nodePool")
        if pool is None:
            out.append(problem(base, "GKE Standard GPU profiles need `nodePool` (machineType, nodes)"))
        else:
            mt = facts.MACHINE_TYPES.get(pool["machineType"])
            if mt is None:
                out.append(problem(base + ["nodePool", "machineType"], f"unknown machine type {pool['machineType']!r} (known: {', '.join(sorted(facts.MACHINE_TYPES))})"))
            elif mt.accelerator != p["accelerator"]:
                out.append(problem(base + ["nodePool", "machineType"], f"{mt.name} carries {mt.accelerator}, the profile says {p['accelerator']}"))
    else:
        if "nodePool" in p:
            out.append(problem(base + ["nodePool"], "Autopilot has no node pools; give the quota as `budget`"))
        if "budget" not in p:
            out.append(problem(base, "Autopilot GPU profiles need `budget` (cpu, memory, nvidia.com/gpu, ephemeral-storage)"))
        if p.get("quotaBasis") == "allocatable":
            out.append(problem(base + ["quotaBasis"], "Autopilot quotas come from `budget`; `allocatable` applies to Standard node pools"))
    return out


def _build(raw: dict, source: str) -> Spec:
    kueue_default = raw.get("kueue", {}).get("version", versions.default("kueue"))
    profiles = {
        name: Profile(
            name=name,
            platform=p["platform"],
            accelerator=p["accelerator"],
            kueue=versions.kueue_release(p.get("kueueVersion", kueue_default)),
            values=p["values"],
            node_pool={"bootDiskGi": 100, **p["nodePool"]} if "nodePool" in p else None,
            quota_basis=p.get("quotaBasis", "capacity"),
            budget=p.get("budget"),
            tpu=p.get("tpu"),
        )
        for name, p in sorted(raw["profiles"].items())
    }
    queues = [
        Queue(q["clusterQueue"], q["resourceFlavor"], tuple(q["profiles"]),
              tuple((lq["namespace"], lq["name"]) for lq in q["localQueues"]),
              q.get("preemption", {"withinClusterQueue": "LowerPriority"}))
        for q in raw["queues"]
    ]
    return Spec(
        source=source,
        raw=raw,
        name=raw["name"],
        kubernetes_version=raw.get("kubernetesVersion", versions.table()["kubernetes"]["default"]),
        namespaces=raw["namespaces"],
        tiers=raw["priorityTiers"],
        profiles=profiles,
        queues=queues,
        images=raw["images"],
        workloads=raw["workloads"],
        jobset_version=raw.get("jobset", {}).get("version", versions.default("jobset")),
        lws_version=raw.get("lws", {}).get("version", versions.default("lws")),
    )


__all__ = ["Spec", "Profile", "Queue", "load", "from_dict", "SpecError", "parse"]
