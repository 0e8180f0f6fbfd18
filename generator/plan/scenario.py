"""Scenario files: load, validate (schemas/scenario.schema.json, then against
the overlay), and turn into steps. Every problem names the file and the field
path; the run stops with exit 2 before anything is simulated."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache

import jsonschema

from .. import paths, userinput
from ..errors import Problem, SpecError, problem
from ..quantity import parse
from . import model

SCHEMA = paths.SCHEMAS / "scenario.schema.json"


@dataclass(frozen=True)
class Scale:
    ref: tuple[str, str, str]
    replicas: int


@dataclass(frozen=True)
class Submit:
    owner: model.Owner


@dataclass(frozen=True)
class Delete:
    ref: tuple[str, str, str]


@dataclass(frozen=True)
class Quota:
    cluster_queue: str
    flavor: str
    resource: str
    value: Decimal


@dataclass(frozen=True)
class Step:
    title: str
    action: Scale | Submit | Delete | Quota

    def describe(self) -> str:
        a = self.action
        if isinstance(a, Scale):
            return f"scale {a.ref[0]} {a.ref[1]}/{a.ref[2]} to {a.replicas}"
        if isinstance(a, Submit):
            return f"submit {a.owner.label}"
        if isinstance(a, Delete):
            return f"delete {a.ref[0]} {a.ref[1]}/{a.ref[2]}"
        return f"set {a.resource} nominalQuota of {a.cluster_queue}/{a.flavor} to {a.value}"


@dataclass
class Scenario:
    source: str | None
    description: str = ""
    cubes: int | None = None
    initial: list[model.Owner] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)


@lru_cache(maxsize=1)
def _validator():
    return jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))


def default(cluster: model.Cluster) -> Scenario:
    """No scenario: apply everything the overlay declares, in its order."""
    return Scenario(None, initial=list(cluster.owners))


def load(path: str, cluster: model.Cluster) -> Scenario:
    return from_dict(userinput.load_mapping(path, "scenario"), cluster, str(path))


def from_dict(raw, cluster: model.Cluster, source: str = "<scenario>") -> Scenario:
    if not isinstance(raw, dict):
        raise SpecError(source, [Problem("", "a scenario is a YAML mapping with `steps`")])
    errors = [userinput.schema_problem(e) for e in _validator().iter_errors(raw)]
    if errors:
        raise SpecError(source, errors)
    problems: list[Problem] = []
    sc = Scenario(source, raw.get("description", ""), raw.get("cubes"))
    # Track which owners exist as the steps go, so a step can only touch what is there.
    available = {o.ref: o for o in cluster.owners}
    live: dict[tuple, model.Owner] = {}
    initial = raw.get("initial", "all")
    if initial == "all":
        sc.initial = list(cluster.owners)
    else:
        for i, r in enumerate(initial):
            owner = _resolve(r, available, ["initial", i], problems)
            if owner is None:
                continue
            if owner.ref in live:
                problems.append(problem(["initial", i], f"{owner.label} is listed twice"))
                continue
            sc.initial.append(owner)
    for o in sc.initial:
        live[o.ref] = o
    for i, s in enumerate(raw["steps"]):
        base = ["steps", i]
        if "scale" in s:
            owner = _resolve(s["scale"], live, base + ["scale"], problems, what="running")
            if owner:
                sc.steps.append(Step(s["title"], Scale(owner.ref, s["scale"]["replicas"])))
        elif "delete" in s:
            owner = _resolve(s["delete"], live, base + ["delete"], problems, what="running")
            if owner:
                live.pop(owner.ref)
                sc.steps.append(Step(s["title"], Delete(owner.ref)))
        elif "submit" in s:
            owner = _submitted(s["submit"], available, live, base + ["submit"], problems)
            if owner:
                live[owner.ref] = owner
                sc.steps.append(Step(s["title"], Submit(owner)))
        else:
            q = s["quota"]
            path = base + ["quota"]
            cq = cluster.cluster_queues.get(q["clusterQueue"])
            if cq is None:
                problems.append(problem(path + ["clusterQueue"], f"no ClusterQueue {q['clusterQueue']!r} in the overlay "
                                        f"(known: {', '.join(sorted(cluster.cluster_queues))})"))
                continue
            flavors = [f.flavor for g in cq.groups for f in g.flavors]
            if q["flavor"] not in flavors:
                problems.append(problem(path + ["flavor"], f"ClusterQueue {cq.name} has no flavor {q['flavor']!r} "
                                        f"(known: {', '.join(flavors)})"))
                continue
            if cq.quota(q["flavor"], q["resource"]) is None:
                problems.append(problem(path + ["resource"], f"flavor {q['flavor']} of ClusterQueue {cq.name} has no "
                                        f"quota for {q['resource']!r} (known: {', '.join(cq.covered())})"))
                continue
            sc.steps.append(Step(s["title"], Quota(cq.name, q["flavor"], q["resource"], parse(q["nominalQuota"]))))
    if problems:
        raise SpecError(source, problems)
    return sc


def _resolve(ref: dict, pool: dict, path: list, problems: list, what: str = "in the overlay"):
    matches = [o for k, o in pool.items()
               if k[0] == ref["kind"] and k[2] == ref["name"] and ref.get("namespace") in (None, k[1])]
    where = f"{ref.get('namespace')}/{ref['name']}" if ref.get("namespace") else ref["name"]
    if not matches:
        near = sorted(f"{k[1]}/{k[2]}" for k in pool if k[0] == ref["kind"])
        problems.append(problem(path, f"no {ref['kind']} {where} {what} at this step"
                                + (f" ({what}: {', '.join(near)})" if near else "")))
        return None
    if len(matches) > 1:
        problems.append(problem(path, f"{ref['kind']} {ref['name']} is in several namespaces "
                                f"({', '.join(sorted(o.namespace for o in matches))}); give `namespace`"))
        return None
    return matches[0]


def _submitted(s: dict, available: dict, live: dict, path: list, problems: list):
    if "manifest" in s:
        obj = s["manifest"]
        meta = obj["metadata"]
        ref = (obj["kind"], meta["namespace"], meta["name"])
        if ref in live or ref in available:
            problems.append(problem(path + ["manifest", "metadata", "name"],
                                    f"{ref[0]} {ref[1]}/{ref[2]} already exists; pick another name or delete it first"))
            return None
        spec = obj.get("spec") or {}
        replicas = int(spec.get("replicas", 1)) if obj["kind"] in model.SCALABLE_KINDS else None
        return model.Owner(obj["kind"], meta["namespace"], meta["name"], obj, replicas)
    owner = _resolve(s, available, path, problems)
    if owner and owner.ref in live:
        problems.append(problem(path, f"{owner.label} already exists at this step "
                                "(list the others in `initial` to hold it back)"))
        return None
    return owner


