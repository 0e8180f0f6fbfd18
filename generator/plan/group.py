"""A MultiKueue group for `plan --group`: the manager's built overlay, its
workers' built overlays, and what the manager says about dispatching.

From the manager's objects (Kueue docs: tasks/manage/setup_multikueue): each
AdmissionCheck whose controllerName is kueue.x-k8s.io/multikueue names a
MultiKueueConfig in `spec.parameters`; the config lists MultiKueueCluster names
in preference order (`spec.clusters`); the ClusterQueues that use the check are
the ones whose Workloads are dispatched. A worker is named after its
MultiKueueCluster (the generator names it after the worker's profile), and the
command line gives each one's overlay: NAME=PATH, or PATH whose last part is the
name (overlays/h100).

From the manager's Kueue configuration (a kueue-manager-config ConfigMap or a
Configuration; `--manager-config`, or controllers/<manager>/kueue/ beside
overlays/<manager>): `multiKueue.dispatcherName`, `workerLostTimeout`,
`incrementalDispatcherConfig.stepSize` and the feature gates that change
dispatching. Anything the planner cannot use is one problem line (exit 2)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..kernel import yamlio
from ..kernel.errors import Problem, SpecError
from ..kernel.kueue_api import MULTIKUEUE_CONTROLLER
from ..model.multikueue import DISPATCHERS
from . import overlay

CONTROLLER = MULTIKUEUE_CONTROLLER
CONFIG_FILE = "kueue-manager-config.yaml"
# Kueue's defaults (apis/config/v1beta2/defaults.go at v0.17.4: workerLostTimeout 15m;
# incrementaldispatcher.go at v0.19.2: DefaultStepSize = 3).
DEFAULT_WORKER_LOST_TIMEOUT = "15m"
DEFAULT_STEP_SIZE = 3
# Feature gates that change dispatching, and their defaults per release (Kueue
# pkg/features/kube_features.go at v0.17.4 and v0.19.2; none of them exists in v0.12.3,
# which behaves as if WaitForWorkloadAdmitted and RedoAdmission were off).
GATES = {
    "MultiKueueWaitForWorkloadAdmitted": {"v0.12.3": False, "v0.17.4": True, "v0.19.2": True},
    "MultiKueueRedoAdmissionOnEvictionInWorker": {"v0.12.3": False, "v0.17.4": True, "v0.19.2": True},
    "MultiKueueIncrementalDispatcherRespectConfigOrder": {"v0.12.3": False, "v0.17.4": False, "v0.19.2": True},
    "MultiKueueOrchestratedPreemption": {"v0.12.3": False, "v0.17.4": False, "v0.19.2": False},
}
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@dataclass(frozen=True)
class Member:
    """One cluster of the group."""
    name: str
    source: str
    cluster: overlay.Cluster


@dataclass(frozen=True)
class Dispatch:
    """One MultiKueue admission check: the workers its MultiKueueConfig lists, in order."""
    check: str
    config: str
    clusters: tuple[str, ...]


@dataclass(frozen=True)
class Settings:
    dispatcher: str = "all-at-once"        # or "incremental"
    step_size: int = DEFAULT_STEP_SIZE
    worker_lost_timeout: str = DEFAULT_WORKER_LOST_TIMEOUT
    gates: dict[str, bool] = field(default_factory=dict)
    source: str = "Kueue's defaults (no manager configuration given)"


@dataclass(frozen=True)
class Group:
    manager: Member
    workers: tuple[Member, ...]
    dispatches: dict[str, Dispatch]        # check name -> its workers
    queues: dict[str, str]                 # manager ClusterQueue -> the MultiKueue check it uses
    settings: Settings
    kueue_version: str
    notes: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.manager.name,) + tuple(w.name for w in self.workers)

    def gate(self, name: str) -> bool:
        return self.settings.gates.get(name, GATES[name].get(self.kueue_version, False))


# ---------------------------------------------------------------- command line
def named(arg: str) -> tuple[str, str]:
    """NAME=PATH, or PATH named by its last part without .yaml/.yml."""
    name, sep, path = arg.partition("=")
    if sep and _NAME.match(name) and not Path(arg).exists():
        return name, path
    stem = Path(arg.rstrip("/")).name
    for ext in (".yaml", ".yml"):
        stem = stem.removesuffix(ext)
    return stem, arg


def beside(path: str, name: str) -> Path | None:
    """controllers/<name>/kueue/kueue-manager-config.yaml of the tree holding overlays/<name>."""
    p = Path(path)
    if not p.is_dir() or p.resolve().parent.name != "overlays":
        return None
    candidate = p.resolve().parent.parent / "controllers" / name / "kueue" / CONFIG_FILE
    return candidate if candidate.is_file() else None


def load(args: list[str], manager_config: str | None = None, kueue_version: str = "v0.17.4") -> Group:
    """The group from `plan --group MANAGER WORKER...`; SpecError (exit 2) on anything unusable."""
    if len(args) < 2:
        raise SpecError("plan --group", [Problem("", "give the manager's overlay, then each worker's: "
                                                     "plan --group MANAGER WORKER [WORKER ...]")])
    pairs = [named(a) for a in args]
    problems = []
    seen: dict[str, str] = {}
    for arg, (name, path) in zip(args, pairs, strict=True):
        if path == "-":
            problems.append(SpecError(arg, [Problem("--group", "a group reads each cluster from its own path; "
                                                               "name a file NAME=FILE")]))
        elif not _NAME.match(name):
            problems.append(SpecError(arg, [Problem("--group", f"{name!r} is not a cluster name (lowercase "
                                                               "letters, digits and '-'); write NAME=PATH")]))
        elif name in seen:
            problems.append(SpecError(arg, [Problem("--group", f"a second cluster named {name!r} (the first is "
                                                               f"{seen[name]}); write NAME=PATH")]))
        seen.setdefault(name, path)
    if problems:
        raise problems[0]
    (mname, mpath), rest = pairs[0], pairs[1:]
    _, objs = overlay.load_objects(mpath)
    config_path = manager_config or (str(beside(mpath, mname) or "") or None)
    config_objs = overlay.load_objects(config_path)[1] if config_path else []
    listed = check_workers(mpath, objs, rest)
    workers = [(name, path, overlay.load_objects(path)[1]) for name, path in rest if name in listed]
    return assemble((mname, mpath, objs), workers, kueue_version, (config_path, config_objs) if config_path else None)


def check_workers(source: str, objs: list[dict], given: list[tuple[str, str]]) -> list[str]:
    """Before reading the workers: every worker the manager lists has an overlay, and every
    overlay given is a listed worker. Returns the listed names."""
    notes: list[str] = []
    dispatches, _ = read_dispatch(source, objs, overlay.build(source, objs), notes)
    listed = list(dict.fromkeys(c for d in dispatches.values() for c in d.clusters))
    names = dict(given)
    for name, path in given:
        if name not in listed:
            raise SpecError(path, [Problem("--group", f"no MultiKueueConfig of the manager lists a cluster {name!r} "
                                                      f"(they list: {', '.join(listed)}); write NAME=PATH with one "
                                                      "of those")])
    missing = [_missing(d, i, c) for d in dispatches.values() for i, c in enumerate(d.clusters) if c not in names]
    if missing:
        raise SpecError(source, missing)
    return listed


def assemble(manager: tuple[str, str, list[dict]], workers: list[tuple[str, str, list[dict]]],
             kueue_version: str = "v0.17.4", config: tuple[str, list[dict]] | None = None) -> Group:
    """The group from objects: (name, source, objects) of the manager and of each worker, and the
    manager's Kueue configuration (source, objects) if any."""
    mname, msource, objs = manager
    config_path, config_objs = config or (None, [])
    check_workers(msource, objs, [(n, s) for n, s, _ in workers])
    m = Member(mname, msource, overlay.build(msource, objs + config_objs))
    notes: list[str] = []
    dispatches, queues = read_dispatch(msource, objs, m.cluster, notes)
    settings = read_settings(config_path, config_objs, kueue_version, notes)
    members = tuple(Member(name, source, overlay.build(source, wobjs)) for name, source, wobjs in workers)
    for w in members:
        notes += _worker_notes(w, m.cluster, queues)
    return Group(m, members, dispatches, queues, settings, kueue_version, tuple(notes))


def _missing(d: Dispatch, i: int, cluster: str) -> Problem:
    return Problem(f"MultiKueueConfig/{d.config}.spec.clusters[{i}]",
                   f"worker {cluster!r} has no overlay: add {cluster}=PATH (or overlays/{cluster}) to the command")


def _worker_notes(w: Member, manager: overlay.Cluster, queues: dict[str, str]) -> list[str]:
    """Kueue sends a copy to the LocalQueue of the same name in the same namespace (DOC setup_multikueue:
    'the worker cluster configuration mirrors the one of the manager cluster in terms of namespaces
    and LocalQueues'); say up front where that does not hold."""
    out = []
    for (ns, name), lq in sorted(manager.local_queues.items()):
        if lq.cluster_queue in queues and (ns, name) not in w.cluster.local_queues:
            out.append(f"worker {w.name} has no LocalQueue {ns}/{name} (the manager's, for ClusterQueue "
                       f"{lq.cluster_queue}): Workloads dispatched there wait forever")
    return out


# ---------------------------------------------------------------- manager objects
def _kueue(o: dict, kind: str) -> bool:
    api = o.get("apiVersion")
    return o.get("kind") == kind and isinstance(api, str) and api.rpartition("/")[0] == overlay.KUEUE_GROUP


def read_dispatch(source: str, objs: list[dict], cluster: overlay.Cluster, notes: list[str]
                  ) -> tuple[dict[str, Dispatch], dict[str, str]]:
    """The MultiKueue checks of the manager and the ClusterQueues that use them."""
    problems: list[Problem] = []
    configs, clusters, checks = _multikueue_objects(objs, problems)
    if not checks:
        raise SpecError(source, [Problem("", f"no AdmissionCheck with controllerName {CONTROLLER}: not a MultiKueue "
                                             "manager (plan a single cluster without --group)")])
    out: dict[str, Dispatch] = {}
    for name, o in sorted(checks.items()):
        d = _dispatch(name, o, configs, clusters, problems, notes)
        if d is not None:
            out[name] = d
    queues = _checked_queues(cluster, checks, problems)
    for name in sorted(set(out) - set(queues.values())):
        notes.append(f"AdmissionCheck {name} (MultiKueue) is used by no ClusterQueue of the manager")
    if problems:
        raise SpecError(source, problems)
    if not queues:
        raise SpecError(source, [Problem("", "no ClusterQueue of the manager uses its MultiKueue check "
                                             f"({', '.join(sorted(checks))}): nothing would be dispatched")])
    return out, queues


def _multikueue_objects(objs: list[dict], problems: list[Problem]
                        ) -> tuple[dict[str, tuple[dict, overlay.Reader]], set[str], dict[str, dict]]:
    """The manager's MultiKueueConfigs (with a reader each), MultiKueueClusters and MultiKueue checks."""
    configs: dict[str, tuple[dict, overlay.Reader]] = {}
    clusters: set[str] = set()
    checks: dict[str, dict] = {}
    for o in objs:
        name = o["metadata"].get("name")
        if not isinstance(name, str):
            continue
        if _kueue(o, "MultiKueueConfig"):
            configs[name] = (o, overlay.Reader(f"MultiKueueConfig/{name}", problems))
        elif _kueue(o, "MultiKueueCluster"):
            clusters.add(name)
        elif _kueue(o, "AdmissionCheck") and (o.get("spec") or {}).get("controllerName") == CONTROLLER:
            checks[name] = o
    return configs, clusters, checks


def _checked_queues(cluster: overlay.Cluster, checks: dict[str, dict], problems: list[Problem]) -> dict[str, str]:
    """ClusterQueue -> the MultiKueue check it uses."""
    queues: dict[str, str] = {}
    for cq in sorted(cluster.cluster_queues.values(), key=lambda q: q.name):
        mk = [c for c in cq.checks if c.name in checks]
        if len(mk) > 1 or any(c.on_flavors for c in mk):
            # Kueue keeps such a queue inactive (pkg/cache/scheduler/clusterqueue.go at v0.17.4:
            # MultipleMultiKueueAdmissionChecks, MultiKueueAdmissionCheckAppliedPerFlavor).
            problems.append(Problem(f"ClusterQueue/{cq.name}.spec.admissionChecksStrategy",
                                    "Kueue keeps a ClusterQueue inactive with more than one MultiKueue check or "
                                    "one limited by onFlavors; use one check for every flavor"))
        elif mk:
            queues[cq.name] = mk[0].name
    return queues


def _dispatch(name: str, o: dict, configs: dict, clusters: set[str], problems: list[Problem],
              notes: list[str]) -> Dispatch | None:
    where = f"AdmissionCheck/{name}.spec.parameters"
    config = _config_name(o, where, problems)
    if config is None:
        return None
    if config not in configs:
        problems.append(Problem(where + ".name", f"MultiKueueConfig {config!r} is not in the manager's overlay "
                                                 "(Kueue keeps the check inactive: BadConfig)"))
        return None
    cfg, r = configs[config]
    before = len(problems)
    listed = [c for c in r.list(r.map(cfg, "spec", "spec"), "clusters", "spec.clusters") if isinstance(c, str)]
    if not listed:
        if len(problems) == before:
            r.bad("spec.clusters", "lists no MultiKueueCluster: there is nowhere to dispatch")
        return None
    usable = [c for c in dict.fromkeys(listed) if c in clusters]
    for c in listed:
        if c not in clusters:
            notes.append(f"MultiKueueConfig {config} lists {c}, which has no MultiKueueCluster in the manager's "
                         "overlay: Kueue cannot reach it, nothing is dispatched there")
    if not usable:
        r.bad("spec.clusters", f"none of {', '.join(listed)} has a MultiKueueCluster in the manager's overlay "
                               "(Kueue keeps the check inactive: NoUsableClusters)")
        return None
    return Dispatch(name, config, tuple(usable))


def _config_name(o: dict, where: str, problems: list[Problem]) -> str | None:
    params = (o.get("spec") or {}).get("parameters")
    if not isinstance(params, dict) or params.get("kind") != "MultiKueueConfig" \
            or params.get("apiGroup") != overlay.KUEUE_GROUP or not isinstance(params.get("name"), str):
        problems.append(Problem(where, "a MultiKueue check names its MultiKueueConfig: "
                                       "{apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: ...}"))
        return None
    return params["name"]


# ---------------------------------------------------------------- manager configuration
def read_settings(path: str | None, objs: list[dict], kueue_version: str, notes: list[str]) -> Settings:
    if not path:
        return Settings(gates={})
    problems: list[Problem] = []
    doc = _configuration(objs, overlay.Reader("Configuration", problems))
    if doc is None:
        raise SpecError(path, [Problem("", "no kueue-manager-config ConfigMap or Configuration in it")])
    r = overlay.Reader("Configuration", problems)
    mk = r.map(doc, "multiKueue", "multiKueue")
    dispatcher = _dispatcher(r.str(mk, "dispatcherName", "multiKueue.dispatcherName"), r, kueue_version, notes)
    step = r.int(r.map(mk, "incrementalDispatcherConfig", "multiKueue.incrementalDispatcherConfig"), "stepSize",
                 "multiKueue.incrementalDispatcherConfig.stepSize", DEFAULT_STEP_SIZE)
    if step is not None and step < 1:
        r.bad("multiKueue.incrementalDispatcherConfig.stepSize", f"{step} is not a number of clusters (1 or more)")
    timeout = r.str(mk, "workerLostTimeout", "multiKueue.workerLostTimeout", DEFAULT_WORKER_LOST_TIMEOUT)
    gates = {k: v for k, v in r.map(doc, "featureGates", "featureGates").items() if k in GATES and isinstance(v, bool)}
    if problems:
        raise SpecError(path, problems)
    if gates.get("MultiKueueOrchestratedPreemption"):
        notes.append("MultiKueueOrchestratedPreemption is on: not modelled, every nominated worker may preempt")
    if step != DEFAULT_STEP_SIZE and kueue_version != "v0.19.2":
        notes.append(f"incrementalDispatcherConfig.stepSize is a Kueue v0.19 field; {kueue_version} nominates "
                     f"{DEFAULT_STEP_SIZE} workers a round")
        step = DEFAULT_STEP_SIZE
    return Settings(dispatcher, step or DEFAULT_STEP_SIZE, timeout, gates, path)


def _dispatcher(name: str | None, r: overlay.Reader, kueue_version: str, notes: list[str]) -> str:
    """The dispatcher multiKueue.dispatcherName names (default: all at once)."""
    known = {v: k for k, v in DISPATCHERS.items()}
    if name is None:
        return "all-at-once"
    if kueue_version == "v0.12.3":
        notes.append("multiKueue.dispatcherName is not a field of Kueue v0.12.3 (its strict configuration "
                     "loader refuses it); v0.12.3 always dispatches to every worker at once")
    elif name not in known:
        r.bad("multiKueue.dispatcherName", f"{name!r} is an external dispatcher, which the plan cannot "
                                           f"follow (Kueue's own: {', '.join(DISPATCHERS.values())})")
    else:
        return known[name]
    return "all-at-once"


def _configuration(objs: list[dict], r: overlay.Reader) -> dict | None:
    for o in objs:
        if o.get("kind") == "Configuration":
            return o
        if o.get("kind") == "ConfigMap" and o["metadata"].get("name") == "kueue-manager-config":
            text = r.map(o, "data", "data").get("controller_manager_config.yaml")
            try:
                docs = yamlio.load_all(text) if isinstance(text, str) else []
            except Exception:  # noqa: BLE001 - any parse failure is one problem line
                docs = []
            doc = next((d for d in docs if isinstance(d, dict)), None)
            if doc is not None:
                return doc
    return None
