"""Scenario files: load, validate (schemas/scenario.schema.json, then against
the overlay), and turn into steps. Every problem names the file and the field
path; the run stops with exit 2 before anything is simulated.

A step changes one thing (scale, submit, delete, finish a workload; a quota or
its limits; a stop policy; a namespace's labels; apply or remove a queue
object; an admission check's verdict; evict a workload) and may carry
`expect:`, what the author says happens: the plan checks it against the
simulation and reports every expectation that does not hold (exit 1).

In a MultiKueue group plan (--group) a step acts on the manager unless it names
another `cluster`; `workerLost` and `workerReconnected` cut and restore the
manager's connection to a worker; `expect` can say where a workload runs
(`clusters`), what became of its copies (`copies`) and whose usage it means."""
from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema

from ..kernel import paths, supply, userinput, yamlio
from ..kernel.errors import Problem, SpecError, format_path, problem
from ..kernel.quantity import parse, show as fmt
from . import overlay

SCHEMA = paths.SCHEMAS / "scenario.schema.json"
QUEUE_KINDS = ("ClusterQueue", "Cohort", "LocalQueue", "ResourceFlavor", "AdmissionCheck", "Namespace",
               "WorkloadPriorityClass", "PriorityClass", "Topology")
MAX_COUNT = 1000        # copies one submit step may make
# A scenario is a reviewed file of steps: the repository's largest is a few KB. Checked on
# the file's size before it is parsed (a 9.7 MB file of plain steps took 30 s to refuse).
MAX_SCENARIO_BYTES = 1 * 2**20
MAX_STEPS = 1_000       # steps in one scenario
# Workload rows a plan computes and reports, summed over its steps (each step reports every
# workload live at it): 20 steps that each submit 1,000 Jobs are 210,000 rows, 53 s and 79 MB
# of JSON; the largest shipped scenario has under 100.
MAX_ROWS = 20_000


# ---------------------------------------------------------------- expectations
@dataclass(frozen=True)
class Expect:
    """What a step's author says the outcome is. Workloads are named ns/name (#i for a
    replica) or just name when that is unique."""
    states: dict[str, tuple[str, ...]]             # state -> workloads
    flavors: dict[str, dict[str, str] | str]       # workload -> flavor, or resource -> flavor
    usage: tuple[dict, ...]                        # {clusterQueue, flavor, resource, used?, borrowed?}
    counts: dict[str, int]                         # state -> how many
    preempted_by: dict[str, str] = field(default_factory=dict)   # victim -> preemptor, in this step
    detail: dict[str, str] = field(default_factory=dict)         # workload -> words its detail contains
    clusters: dict[str, str] = field(default_factory=dict)       # group plans: workload -> cluster it runs on
    copies: dict[str, dict[str, str]] = field(default_factory=dict)  # group plans: workload -> worker -> state

    def check(self, result) -> list[str]:
        """What does not hold, each as `expect.KEY: expected ..., but ...` (the old outcome, then the new)."""
        rows = {r.workload: r for r in result.rows}
        out = [f"expect.{_state_key(m)}: {m}" for m in self._states(rows)]
        for key, found in (("flavors", self._flavors(rows)), ("usage", self._usage(result)),
                           ("count", self._counts(result)), ("preemptedBy", self._preemptions(rows, result)),
                           ("detail", self._details(rows)), ("clusters", self._clusters(rows)),
                           ("copies", self._copies(rows))):
            out += [f"expect.{key}: {m}" for m in found]
        return out

    def _clusters(self, rows: dict) -> list[str]:
        out = []
        for name, want in self.clusters.items():
            row = _find(rows, name)
            got = row.cluster if row else None
            if got != want:
                out.append(f"expected {name} to run on {want}, but it "
                           + (f"runs on {got}" if got else f"runs nowhere ({row.state if row else 'no such workload'})"))
        return out

    def _copies(self, rows: dict) -> list[str]:
        out = []
        for name, want in self.copies.items():
            row = _find(rows, name)
            got = dict(row.copies) if row else {}
            for worker, state in want.items():
                if got.get(worker, "none") != state:
                    out.append(f"expected {name}'s copy on {worker} {state}, but it is {got.get(worker, 'none')}")
        return out

    def _states(self, rows: dict) -> list[str]:
        out = []
        for state, names in self.states.items():
            for name in names:
                row = _find(rows, name)
                if row is None:
                    out.append(f"expected {name} {state}, but there is no such workload")
                elif row.state != state:
                    out.append(f"expected {row.workload} {state}, but it is {row.state}: {row.detail}")
        return out

    def _flavors(self, rows: dict) -> list[str]:
        out = []
        for name, want in self.flavors.items():
            row = _find(rows, name)
            got = row.flavors if row else {}
            if isinstance(want, str):
                if not got or set(got.values()) != {want}:
                    out.append(f"expected {name} on flavor {want}, but it holds {got or 'nothing'}")
            elif any(got.get(r) != f for r, f in want.items()):
                out.append(f"expected {name} on {want}, but it holds {got or 'nothing'}")
        return out

    def _usage(self, result) -> list[str]:
        out = []
        for u in self.usage:
            match = [x for x in result.usage if x.cluster_queue == u["clusterQueue"] and x.resource == u["resource"]
                     and ("flavor" not in u or x.flavor == u["flavor"])
                     and ("cluster" not in u or x.cluster == u["cluster"])]
            where = f" on {u['cluster']}" if "cluster" in u else ""
            if not match:
                out.append(f"expected usage of {u['clusterQueue']}{where} {u['resource']}, but it has no such quota")
                continue
            for key in ("used", "borrowed"):
                if key in u:
                    got = sum((getattr(x, key) for x in match), Decimal(0))
                    want = parse(u[key])
                    if got != want:
                        out.append(f"expected {u['clusterQueue']}{where} {key} {u['resource']} "
                                   f"{u.get('flavor', 'over all flavors')} = {fmt(u['resource'], want)}, "
                                   f"got {fmt(u['resource'], got)}")
        return out

    def _counts(self, result) -> list[str]:
        out = []
        for state, n in self.counts.items():
            got = sum(1 for r in result.rows if r.state == state)
            if got != n:
                out.append(f"expected {n} workload(s) {state}, got {got}")
        return out

    def _preemptions(self, rows: dict, result) -> list[str]:
        out = []
        for victim, preemptor in self.preempted_by.items():
            v, p = _find(rows, victim), _find(rows, preemptor)
            v_key, p_key = (v.workload if v else victim), (p.workload if p else preemptor)
            events = [_untagged(e) for e in result.events]
            if not any(e.startswith(f"{v_key} preempted by {p_key} (") for e in events):
                by = [e for e in events if e.startswith(f"{v_key} preempted by ")]
                out.append(f"expected {v_key} preempted by {p_key} in this step, but "
                           + (by[0] if by else "it was not preempted"))
        return out

    def _details(self, rows: dict) -> list[str]:
        out = []
        for name, words in self.detail.items():
            row = _find(rows, name)
            if row is None or words not in row.detail:
                out.append(f"expected {name} to say {words!r}, but it says {row.detail if row else 'nothing'!r}")
        return out


def _state_key(message: str) -> str:
    """The state an `expected NAME STATE, but ...` message is about."""
    head = message.split(", but", 1)[0].split()
    return head[-1] if head else "states"


def _untagged(event: str) -> str:
    """A group plan's event without its '[cluster] ' tag."""
    return event.split("] ", 1)[1] if event.startswith("[") and "] " in event else event


def _find(rows: dict, name: str):
    if name in rows:
        return rows[name]
    hits = [r for k, r in rows.items() if k.split("/", 1)[-1] == name]
    return hits[0] if len(hits) == 1 else None


def _expect(raw: dict | None) -> Expect | None:
    if not raw:
        return None
    states = {k: tuple(raw[k]) for k in ("admitted", "reserved", "pending", "preempted", "never", "unmanaged",
                                         "finished") if k in raw}
    return Expect(states, dict(raw.get("flavors") or {}), tuple(raw.get("usage") or ()), dict(raw.get("count") or {}),
                  dict(raw.get("preemptedBy") or {}), dict(raw.get("detail") or {}), dict(raw.get("clusters") or {}),
                  {k: dict(v) for k, v in (raw.get("copies") or {}).items()})


# ---------------------------------------------------------------- steps
@dataclass(frozen=True)
class Step:
    title: str
    kind: str
    args: dict
    expect: Expect | None = None
    cluster: str | None = None          # group plans: the worker it acts on (None: the manager)

    def describe(self) -> str:
        text = self._describe()
        return f"on {self.cluster}: {text}" if self.cluster else text

    def _describe(self) -> str:
        a = self.args
        if self.kind in ("delete", "finish", "evict"):
            return f"{self.kind} {_ref(a['ref'])}"
        if self.kind == "podsReady":
            return f"pods of {_ref(a['ref'])} ready"
        if self.kind in ("workerLost", "workerReconnected"):
            return f"worker {a['worker']} " + ("unreachable" if self.kind == "workerLost" else "reachable again")
        describe = _DESCRIBE.get(self.kind)
        return describe(a) if describe else self.kind

    def apply(self, sim) -> None:
        a = self.args
        if self.kind == "scale":
            sim.scale(a["ref"], a["replicas"])
        elif self.kind == "submit":
            for o in a["owners"]:
                sim.submit(copy.deepcopy(o))
        elif self.kind == "delete":
            sim.delete(a["ref"])
        elif self.kind == "finish":
            sim.finish(a["ref"])
        elif self.kind == "podsReady":
            sim.pods_ready(a["ref"])
        elif self.kind == "quota":
            sim.set_quota(a["owner"], a["flavor"], a["resource"], a.get("nominal"), a.get("borrowing", "keep"),
                          a.get("lending", "keep"), cohort=a["cohort"])
        elif self.kind == "stopPolicy":
            sim.set_stop_policy(a["kind"], a["name"], a.get("namespace"), a["policy"])
        elif self.kind == "namespaceLabels":
            sim.set_namespace_labels(a["namespace"], a["labels"])
        elif self.kind == "apply":
            for o in a["objects"]:
                sim.apply(copy.deepcopy(o))
        elif self.kind == "remove":
            sim.remove_object(a["kind"], a["name"], a.get("namespace"))
        elif self.kind == "admissionCheck":
            sim.set_check(a["name"], a["state"], a.get("ref"))
        elif self.kind == "evict":
            sim.evict(a["ref"])

    def apply_group(self, group) -> None:
        """Apply to a MultiKueue group (dispatch.GroupSim): to the cluster the step names."""
        if self.kind == "workerLost":
            group.worker_lost(self.args["worker"])
        elif self.kind == "workerReconnected":
            group.worker_reconnected(self.args["worker"])
        else:
            self.apply(group.sim(self.cluster))


def _ref(ref: tuple) -> str:
    return f"{ref[0]} {ref[1]}/{ref[2]}"


def _describe_quota(a: dict) -> str:
    parts = [f"{k} {v if v is not None else 'none'}" for k, v in
             (("nominalQuota", a.get("nominal")), ("borrowingLimit", a.get("borrowing", "keep")),
              ("lendingLimit", a.get("lending", "keep"))) if v != "keep" and not (k == "nominalQuota" and v is None)]
    return f"set {a['resource']} of {a['owner']}/{a['flavor']}: " + ", ".join(parts)


def _describe_submit(a: dict) -> str:
    owners = a["owners"]
    return f"submit {owners[0].label}" + (f" and {len(owners) - 1} more" if len(owners) > 1 else "")


# How each kind of step reads in the report (the ones that name an object or a worker are in Step._describe).
_DESCRIBE = {
    "scale": lambda a: f"scale {_ref(a['ref'])} to {a['replicas']}",
    "submit": _describe_submit,
    "quota": _describe_quota,
    "stopPolicy": lambda a: f"set stopPolicy of {a['kind']} "
                            f"{a['namespace'] + '/' if a.get('namespace') else ''}{a['name']} to {a['policy']}",
    "namespaceLabels": lambda a: f"set labels of namespace {a['namespace']} to {a['labels']}",
    "apply": lambda a: "apply " + ", ".join(f"{o['kind']} {o['metadata'].get('name')}" for o in a["objects"]),
    "remove": lambda a: f"remove {a['kind']} {a['name']}",
    "admissionCheck": lambda a: f"AdmissionCheck {a['name']} answers {a['state']}"
                                + (f" for {_ref(a['ref'])}" if a.get("ref") else ""),
}


@dataclass
class Scenario:
    source: str | None
    description: str = ""
    cubes: int | None = None
    initial: list[overlay.Owner] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    initial_expect: Expect | None = None
    initial_at: list[str | None] = field(default_factory=list)   # group plans: each initial object's cluster

    def placed(self) -> list[tuple[overlay.Owner, str | None]]:
        """The initial objects with the cluster each is applied to (None: the manager, or the only one)."""
        at = self.initial_at or [None] * len(self.initial)
        return list(zip(self.initial, at, strict=True))


@lru_cache(maxsize=1)
def _validator():
    return jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))


def default(cluster: overlay.Cluster, workers: dict[str, overlay.Cluster] | None = None) -> Scenario:
    """No scenario: apply everything the overlays declare, in their order (the manager's first)."""
    sc = Scenario(None, initial=list(cluster.owners), initial_at=[None] * len(cluster.owners))
    for name, wc in (workers or {}).items():
        sc.initial += wc.owners
        sc.initial_at += [name] * len(wc.owners)
    return sc


def load(path: str, cluster: overlay.Cluster, workers: dict[str, overlay.Cluster] | None = None,
         manager: str | None = None) -> Scenario:
    # A scenario the repository holds never leads outside it (a link to a file elsewhere is
    # refused: --update-expectations would write there); its size is checked before parsing.
    paths.repository_file(path, paths.repository_root(), "the scenario")
    _check_size(path)
    return from_dict(userinput.load_mapping(path, "scenario"), cluster, str(path), workers, manager)


def _check_size(path: str) -> None:
    """A scenario over MAX_SCENARIO_BYTES is refused before it is read as YAML."""
    try:
        size = Path(path).stat().st_size if path != "-" else 0
    except OSError:
        return   # the reader says why it cannot read it
    if size > MAX_SCENARIO_BYTES:
        raise SpecError(str(path), [Problem("", f"the scenario is {size:,} bytes, over the limit of "
                                                f"{MAX_SCENARIO_BYTES:,} for a scenario (the documentation page "
                                                "'Limits on input'); split it into several scenarios")])


STEP_KINDS = ("scale", "submit", "delete", "finish", "quota", "stopPolicy", "namespaceLabels", "apply", "remove",
              "admissionCheck", "evict", "podsReady", "workerLost", "workerReconnected")
GROUP_KINDS = ("workerLost", "workerReconnected")


def from_dict(raw, cluster: overlay.Cluster, source: str = "<scenario>",
              workers: dict[str, overlay.Cluster] | None = None, manager: str | None = None) -> Scenario:
    """A scenario checked against the overlay (or, with `workers`, against a MultiKueue group
    whose manager is `cluster`, named `manager`)."""
    _checked_before_the_work(raw, cluster, source, workers)
    problems: list[Problem] = []
    sc = Scenario(source, raw.get("description", ""), raw.get("cubes"))
    sc.initial_expect = _expect(raw.get("expect"))
    base_dir = Path(source).parent if source and not source.startswith("<") else Path(".")
    # Queue objects as the steps change them, to check references; one view per cluster.
    views: dict[str | None, _View] = {None: _View(copy.deepcopy(cluster), {o.ref: o for o in cluster.owners})}
    for name, wc in (workers or {}).items():
        views[name] = _View(copy.deepcopy(wc), {o.ref: o for o in wc.owners})
    clusters = _Clusters(views, manager, workers is not None)
    _initial(raw.get("initial", "all"), sc, clusters, problems)
    for i, s in enumerate(raw["steps"]):
        step = _step(i, s, clusters, problems, base_dir)
        if step is not None:
            sc.steps.append(step)
    if problems:
        raise SpecError(source, problems)
    over = _rows_over(len(sc.initial), [_added(st) for st in sc.steps])
    if over:   # the files' objects counted: still before the simulation
        raise SpecError(source, over)
    return sc


def _checked_before_the_work(raw, cluster: overlay.Cluster, source: str,
                             workers: dict[str, overlay.Cluster] | None) -> None:
    """The scenario's shape (its schema) and its limits on the counts as written: SpecError
    before any copy is made."""
    if not isinstance(raw, dict):
        raise SpecError(source, [Problem("", "a scenario is a YAML mapping with `steps`")])
    errors = [userinput.schema_problem(e) for e in _validator().iter_errors(raw)]
    if errors:
        raise SpecError(source, errors)
    over = _over_limits(raw, len(cluster.owners) + sum(len(w.owners) for w in (workers or {}).values()))
    if over:
        raise SpecError(source, over)


def _added(step: Step) -> int:
    """Workloads a step may add: a submit's objects, a scale's replicas."""
    return len(step.args["owners"]) if step.kind == "submit" else step.args["replicas"] if step.kind == "scale" else 0


def _over_limits(raw: dict, declared: int) -> list[Problem]:
    """MAX_STEPS and MAX_ROWS on the scenario as written (a submit step adds at least `count` workloads)."""
    steps = raw["steps"]
    if len(steps) > MAX_STEPS:
        return [Problem("steps", f"{len(steps):,} steps, over the limit of {MAX_STEPS:,} steps in one scenario "
                                 "(the documentation page 'Limits on input'); split it into several scenarios")]
    initial = raw.get("initial", "all")
    added = [s["submit"].get("count", 1) if isinstance(s.get("submit"), dict) else
             s["scale"].get("replicas", 0) if isinstance(s.get("scale"), dict) else 0 for s in steps]
    return _rows_over(declared if initial == "all" else len(initial), added)


def _rows_over(initial: int, added: list[int]) -> list[Problem]:
    from .simulate import MAX_WORKLOADS
    live, rows = initial, min(initial, MAX_WORKLOADS)
    for n in added:
        live += n
        rows += min(live, MAX_WORKLOADS)
    if rows <= MAX_ROWS:
        return []
    return [Problem("steps", f"{len(added):,} steps with up to {min(live, MAX_WORKLOADS):,} workloads make "
                             f"{rows:,} workload rows to simulate and report, over the limit of {MAX_ROWS:,} "
                             "for one plan (the documentation page 'Limits on input'); submit fewer copies, or "
                             "split the steps into several scenarios")]


def _step(i: int, s: dict, clusters: _Clusters, problems: list, base_dir: Path) -> Step | None:
    """One step checked against the objects as the steps before it left them (None: a problem said why)."""
    kind = next(k for k in STEP_KINDS if k in s)
    path = ["steps", i, kind]
    at = clusters.which(s.get("cluster"), ["steps", i, "cluster"], problems)
    if at == _UNKNOWN:
        return None
    if kind in GROUP_KINDS:
        args = clusters.worker(s[kind], path, problems)
    else:
        v = clusters.views[at]
        copies = clusters.views[None].live if at is not None else {}
        args = _STEP_READERS[kind](s[kind], _Ctx(path, problems, v.work, v.available, v.live, base_dir, copies))
    return Step(s["title"], kind, args, _expect(s.get("expect")), at) if args is not None else None


@dataclass
class _View:
    """One cluster as the steps so far leave it: its queue objects, the workload objects its
    overlay declares, and those that exist (running or waiting)."""
    work: overlay.Cluster
    available: dict
    live: dict = field(default_factory=dict)


_UNKNOWN = "\0unknown"      # a cluster name that is not in the plan (a problem was reported)


@dataclass
class _Clusters:
    views: dict
    manager: str | None
    group: bool

    def which(self, name, path, problems) -> str | None:
        """The cluster a step or an initial object names: None for the manager (or the only one)."""
        if name is None or (self.group and name == self.manager):
            return None
        if name in self.views:
            return name
        if not self.group:
            problems.append(problem(path, "only a MultiKueue group plan (plan --group) has clusters to name"))
        else:
            known = [self.manager or ""] + [n for n in self.views if n]
            problems.append(problem(path, _unknown("cluster", name, known)))
        return _UNKNOWN

    def worker(self, body, path, problems) -> dict | None:
        if not self.group:
            problems.append(problem(path, "only a MultiKueue group plan (plan --group) has workers"))
            return None
        if body not in self.views or body is None:
            problems.append(problem(path, _unknown("worker", body, [n for n in self.views if n])))
            return None
        return {"worker": body}


def _initial(initial, sc: Scenario, clusters: _Clusters, problems: list) -> None:
    if initial == "all":
        for at, v in clusters.views.items():
            sc.initial += list(v.available.values())
            sc.initial_at += [at] * len(v.available)
            v.live.update(v.available)
        return
    for i, r in enumerate(initial):
        at = clusters.which(r.get("cluster"), ["initial", i, "cluster"], problems)
        if at == _UNKNOWN:
            continue
        v = clusters.views[at]
        owner = _resolve({k: x for k, x in r.items() if k != "cluster"}, v.available, ["initial", i], problems)
        if owner is None:
            continue
        if owner.ref in v.live:
            problems.append(problem(["initial", i], f"{owner.label} is listed twice"))
            continue
        sc.initial.append(owner)
        sc.initial_at.append(at)
        v.live[owner.ref] = owner


@dataclass
class _Ctx:
    """What checking one step needs: where it is, where problems go, and the objects as the
    steps before it left them."""
    path: list
    problems: list
    work: overlay.Cluster
    available: dict
    live: dict
    base_dir: Path
    copies: dict = field(default_factory=dict)   # a worker's step: the manager's objects, whose copies it may hold

    def running(self) -> dict:
        return {**self.copies, **self.live}


def _args_scale(body, x: _Ctx) -> dict | None:
    from .simulate import MAX_WORKLOADS
    if body["replicas"] > MAX_WORKLOADS:
        # Refused before any work: a plan simulates at most MAX_WORKLOADS Workloads.
        x.problems.append(problem(x.path + ["replicas"], f"{_count(body['replicas'])} replicas is more than a plan "
                                  f"simulates ({MAX_WORKLOADS} Workloads in all); give {MAX_WORKLOADS} or fewer"))
        return None
    owner = _resolve(body, x.running(), x.path, x.problems, what="running")
    return {"ref": owner.ref, "replicas": body["replicas"]} if owner else None


def _count(n: int) -> str:
    """A count as a person reads it: 10^100 is not printed in full."""
    return str(n) if n < 10**12 else f"about 10^{len(str(n)) - 1}"


def _args_delete(body, x: _Ctx) -> dict | None:
    """The object is no longer running after the step (a manager's copy on a worker: the
    manager still has it, and dispatches it again)."""
    owner = _resolve(body, x.running(), x.path, x.problems, what="running")
    if owner is None:
        return None
    x.live.pop(owner.ref, None)
    return {"ref": owner.ref}


def _args_finish(body, x: _Ctx) -> dict | None:
    """The object is no longer running after the step (a manager's copy on a worker: finished
    there, so finished on the manager too)."""
    owner = _resolve(body, x.running(), x.path, x.problems, what="running")
    if owner is None:
        return None
    if x.live.pop(owner.ref, None) is None:
        x.copies.pop(owner.ref, None)
    return {"ref": owner.ref}


def _args_evict(body, x: _Ctx) -> dict | None:
    owner = _resolve(body, x.running(), x.path, x.problems, what="running")
    return {"ref": owner.ref} if owner else None


def _args_submit(body, x: _Ctx) -> dict | None:
    owners = _submitted(body, x.available, x.live, x.path, x.problems, x.work, x.base_dir)
    for o in owners:
        x.live[o.ref] = o
    return {"owners": owners} if owners else None


def _args_stop_policy(body, x: _Ctx) -> dict | None:
    work, path = x.work, x.path
    if "clusterQueue" in body:
        if body["clusterQueue"] not in work.cluster_queues:
            x.problems.append(problem(path + ["clusterQueue"], _unknown("ClusterQueue", body["clusterQueue"],
                                                                        work.cluster_queues)))
            return None
        return {"kind": "ClusterQueue", "name": body["clusterQueue"], "policy": body["policy"]}
    lq = body["localQueue"]
    if (lq["namespace"], lq["name"]) not in work.local_queues:
        x.problems.append(problem(path + ["localQueue"], _unknown(
            "LocalQueue", f"{lq['namespace']}/{lq['name']}", [f"{k[0]}/{k[1]}" for k in work.local_queues])))
        return None
    return {"kind": "LocalQueue", "name": lq["name"], "namespace": lq["namespace"], "policy": body["policy"]}


def _args_namespace_labels(body, x: _Ctx) -> dict | None:
    x.work.namespaces[body["namespace"]] = dict(body["labels"])
    return {"namespace": body["namespace"], "labels": dict(body["labels"])}


def _args_apply(body, x: _Ctx) -> dict | None:
    objs = _objects(body, x.path, x.problems, x.base_dir)
    out = []
    for j, o in enumerate(objs):
        if o.get("kind") not in QUEUE_KINDS:
            x.problems.append(problem(x.path + ["objects" if "file" in body else "manifest", j, "kind"],
                                      f"{o.get('kind')!r} is not a queue object (allowed: {', '.join(QUEUE_KINDS)}); "
                                      "workloads are submitted with `submit`"))
            continue
        sub: list[Problem] = []
        overlay.read_object(x.work, o, j, sub)
        x.problems += [Problem(f"{format_path(x.path)}: {p.path}", p.message) for p in sub]
        if not sub:
            out.append(o)
    cycles = overlay.cohort_cycles(x.work)
    x.problems += [Problem(f"{format_path(x.path)}: {p.path}", p.message) for p in cycles]
    return {"objects": out} if out and not cycles else None


def _args_remove(body, x: _Ctx) -> dict | None:
    work = x.work
    table: dict[str, dict] = {"ClusterQueue": work.cluster_queues, "ResourceFlavor": work.flavors,
                              "Cohort": work.cohorts, "AdmissionCheck": work.admission_checks}
    if body["kind"] == "LocalQueue":
        key = (body.get("namespace") or "default", body["name"])
        if key not in work.local_queues:
            x.problems.append(problem(x.path + ["name"], _unknown("LocalQueue", f"{key[0]}/{key[1]}",
                                                                  [f"{k[0]}/{k[1]}" for k in work.local_queues])))
            return None
        work.local_queues.pop(key)
    elif body["name"] not in table[body["kind"]]:
        x.problems.append(problem(x.path + ["name"], _unknown(body["kind"], body["name"], table[body["kind"]])))
        return None
    return {"kind": body["kind"], "name": body["name"], "namespace": body.get("namespace")}


def _args_admission_check(body, x: _Ctx) -> dict | None:
    ref = None
    if "workload" in body:
        owner = _resolve(body["workload"], x.running(), x.path + ["workload"], x.problems, what="running")
        if owner is None:
            return None
        ref = owner.ref
    return {"name": body["name"], "state": body["state"], "ref": ref}


_STEP_READERS = {
    "scale": _args_scale, "delete": _args_delete, "finish": _args_finish, "evict": _args_evict,
    "podsReady": _args_evict,             # the same reference: an object that is running
    "submit": _args_submit,
    "quota": lambda body, x: _quota(body, x.path, x.problems, x.work), "stopPolicy": _args_stop_policy,
    "namespaceLabels": _args_namespace_labels, "apply": _args_apply, "remove": _args_remove,
    "admissionCheck": _args_admission_check,
}


def _unknown(what: str, name: str, known) -> str:
    names = sorted(known)
    return f"no {what} {name!r}" + (f" (known: {', '.join(names)})" if names else "")


def _quota(body, path, problems, work: overlay.Cluster) -> dict | None:
    is_cohort = "cohort" in body
    name = body["cohort"] if is_cohort else body["clusterQueue"]
    fq = _flavor_quota(body, path, problems, work, is_cohort, name)
    if fq is None:
        return None
    args: dict[str, Any] = {"owner": name, "cohort": is_cohort, "flavor": body["flavor"], "resource": body["resource"]}
    args.update(_quota_values(body, path, problems))
    q = fq.resources[body["resource"]]
    nominal = args.get("nominal", q.nominal)
    lending = args.get("lending", q.lending)
    if isinstance(lending, Decimal) and nominal is not None and lending > nominal:
        problems.append(problem(path + ["lendingLimit"], f"lendingLimit {lending} is above nominalQuota {nominal}"))
    return args


def _flavor_quota(body, path, problems, work: overlay.Cluster, is_cohort: bool, name: str):
    """The flavor's quotas of the ClusterQueue or Cohort the step names, or None (a problem said why)."""
    what = "Cohort" if is_cohort else "ClusterQueue"
    table = work.cohorts if is_cohort else work.cluster_queues
    if name not in table:
        problems.append(problem(path + ["cohort" if is_cohort else "clusterQueue"],
                                _unknown(what, name, table) + (" in the overlay" if not is_cohort else "")))
        return None
    owner = table[name]
    fq = next((f for g in owner.groups for f in g.flavors if f.flavor == body["flavor"]), None)
    if fq is None:
        flavors = [f.flavor for g in owner.groups for f in g.flavors]
        problems.append(problem(path + ["flavor"], f"{what} {name} has no flavor "
                                f"{body['flavor']!r} (known: {', '.join(flavors) or 'none'})"))
        return None
    if body["resource"] not in fq.resources:
        problems.append(problem(path + ["resource"], f"flavor {body['flavor']} of {what} {name} has no quota for "
                                f"{body['resource']!r} (known: {', '.join(fq.resources)})"))
        return None
    return fq


def _reporter(problems: list[Problem], path: list) -> Callable[[str], None]:
    return lambda message: problems.append(problem(path, message))


def _quota_values(body, path, problems) -> dict[str, Any]:
    """nominal / borrowing / lending from the step (None: remove the limit)."""
    args: dict[str, Any] = {}
    for key, arg in (("nominalQuota", "nominal"), ("borrowingLimit", "borrowing"), ("lendingLimit", "lending")):
        if key not in body:
            continue
        if body[key] is None:
            if key == "nominalQuota":
                problems.append(problem(path + [key], "nominalQuota cannot be removed; give a quantity"))
            args[arg] = None
            continue
        value = supply.quota_value(body[key], _reporter(problems, path + [key]))
        if value is not None:
            args[arg] = value
    return args


def _objects(body, path, problems, base_dir: Path) -> list[dict]:
    if "manifest" in body:
        return [body["manifest"]]
    f = Path(body["file"])
    f = f if f.is_absolute() else base_dir / f
    try:
        paths.repository_file(f, paths.repository_root(), "a scenario's file")
    except paths.OutsideRepository as e:
        problems.append(problem(path + ["file"], str(e)))
        return []
    try:
        docs = yamlio.load_user_all(yamlio.read_text(f))   # the bounded reader of user files
    except OSError as e:
        problems.append(problem(path + ["file"], f"cannot read {f}: {e.strerror or e}"))
        return []
    except yamlio.InputError as e:
        problems.append(problem(path + ["file"], f"{f}: {e}"))
        return []
    out = []
    for j, d in enumerate(docs):
        if d is None:
            continue
        if not isinstance(d, dict) or not isinstance(d.get("kind"), str) or not isinstance(d.get("metadata"), dict):
            problems.append(problem(path + ["file"], f"{f}: document {j} is not a Kubernetes object"))
            continue
        out.append(d)
    return out


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


def _submitted(s: dict, available: dict, live: dict, path: list, problems: list, work: overlay.Cluster,
               base_dir: Path) -> list[overlay.Owner]:
    if "manifest" in s or "file" in s:
        out: list[overlay.Owner] = []
        for j, obj in enumerate(_objects(s, path, problems, base_dir)):
            if _submittable(s, obj, path, problems):
                out += _copies(s, obj, j, available, live, path, problems, work)
        return out
    owner = _resolve(s, available, path, problems)
    if owner and owner.ref in live:
        problems.append(problem(path, f"{owner.label} already exists at this step "
                                "(list the others in `initial` to hold it back)"))
        return []
    return [owner] if owner else []


def _submittable(s: dict, obj: dict, path: list, problems: list) -> bool:
    """A workload kind, and with `count` > 1 named by metadata.generateName."""
    if obj.get("kind") not in overlay.OWNER_KINDS:
        problems.append(problem(path + (["manifest"] if "manifest" in s else ["file"]),
                                f"{obj.get('kind')!r} is not a workload kind (allowed: {', '.join(overlay.OWNER_KINDS)})"))
        return False
    count, meta = s.get("count", 1), obj["metadata"]
    if count > 1 and meta.get("name"):
        problems.append(problem(path + ["count"], f"count {count} needs objects with metadata.generateName "
                                f"and no name; {obj['kind']} {meta.get('name')} has a name"))
        return False
    return True


def _copies(s: dict, obj: dict, j: int, available: dict, live: dict, path: list, problems: list,
            work: overlay.Cluster) -> list[overlay.Owner]:
    """`count` copies of one object, each named from generateName (the first free suffix)."""
    out = []
    taken = {o.name for o in list(work.owners) + list(live.values())}
    n = 1   # suffixes are tried from here on: each copy's search starts after the last one taken
    for _ in range(s.get("count", 1)):
        sub: list[Problem] = []
        o = copy.deepcopy(obj)
        prefix = o["metadata"].get("generateName")
        if not o["metadata"].get("name") and isinstance(prefix, str):
            while f"{prefix}{n}" in taken:
                n += 1
            o["metadata"]["name"] = f"{prefix}{n}"
        overlay.read_object(work, o, j, sub)
        if sub:
            problems += [Problem(f"{format_path(path)}: {p.path}", p.message) for p in sub]
            break
        owner = work.owners[-1]
        if owner.ref in live or (owner.ref in available and "manifest" in s):
            problems.append(problem(path + ["manifest", "metadata", "name"] if "manifest" in s else path,
                                    f"{owner.kind} {owner.namespace}/{owner.name} already exists; "
                                    "pick another name or delete it first"))
            break
        live[owner.ref] = owner
        taken.add(owner.name)
        out.append(owner)
    return out
