"""MultiKueue groups for `validate`: which inputs form a group (a manager and its
workers), what is visible beside each input (its Kueue Configuration, a JobSet
install), and the findings of the group rules (rules/multikueue.py, MK1xx).

A group comes from `--multikueue NAME=PATH ...` (the manager is the input that
holds MultiKueue objects; the others are named after the MultiKueueClusters the
manager's MultiKueueConfig lists) or, for `make validate`, from the spec's
multiKueue groups (overlays named by profile, as synth names the
MultiKueueClusters)."""
from __future__ import annotations

from pathlib import Path

from ..kernel import kueue_api
from ..kernel.errors import Problem
from ..kernel.yamlio import load_all
from ..model import Platform
from .context import UsageError
from .objects import Obj
from .rules.kueue import KUEUE
from .rules.multikueue import dispatched, dispatcher_hits, kueue_config
from .rules.multikueue_group import GROUP_RULES, JOBSET_CRD, Group, Member

YAML_SUFFIXES = (".yaml", ".yml")


def split_names(paths: list[str]) -> tuple[list[str], list[str]]:
    """(names, paths) of `--multikueue` inputs: NAME=PATH, or PATH named after its directory or
    file (without .yaml)."""
    names, out = [], []
    for arg in paths:
        name, sep, path = arg.partition("=")
        if not sep or "/" in name:
            path = arg
            p = Path(arg.rstrip("/"))
            name = p.stem if p.suffix in YAML_SUFFIXES else p.name
            if arg == "-":
                raise UsageError("--multikueue: name stdin after its cluster (NAME=-)")
        if not name:
            raise UsageError(f"--multikueue: {arg!r} gives no cluster name (NAME=PATH)")
        if name in names:
            raise UsageError(f"--multikueue: two inputs named {name!r}; name them NAME=PATH after their "
                             f"MultiKueueClusters")
        names.append(name)
        out.append(path)
    return names, out


def is_manager(stream) -> bool:
    """Does an input hold a MultiKueueConfig or a MultiKueue AdmissionCheck?"""
    from .loader import objects
    for _, body, _ in objects(stream):
        if str(body.get("apiVersion", "")).rpartition("/")[0] != KUEUE:
            continue
        spec = body.get("spec")
        if body.get("kind") == "MultiKueueConfig" or (body.get("kind") == "AdmissionCheck" and isinstance(spec, dict)
                                                      and spec.get("controllerName") == kueue_api.MULTIKUEUE_CONTROLLER):
            return True
    return False


def from_flag(names: list[str], streams: list) -> list[tuple[int, list[tuple[int, str]]]]:
    """The one group of `--multikueue`: (manager index, [(index, name)] of every input)."""
    managers = [i for i, s in enumerate(streams) if is_manager(s)]
    if not managers:
        raise UsageError("--multikueue: no input holds a MultiKueueConfig or an AdmissionCheck with controllerName "
                         f"{kueue_api.MULTIKUEUE_CONTROLLER}, so none is a manager")
    if len(managers) > 1:
        raise UsageError(f"--multikueue: {', '.join(names[i] for i in managers)} all hold MultiKueue objects; a group "
                         f"has one manager (validate each group on its own)")
    return [(managers[0], list(enumerate(names)))]


def from_spec(spec: Platform | None, profile_of: dict[int, str]) -> list[tuple[int, list[tuple[int, str]]]]:
    """The spec's multiKueue groups whose manager overlay is among the inputs (profile_of: input
    index -> profile, for overlays built from the spec)."""
    index = {p: i for i, p in profile_of.items()}
    out = []
    for g in spec.multi_kueue if spec is not None else []:
        if g.manager not in index:
            continue
        members = [(index[p], p) for p in [g.manager, *g.worker_profiles] if p in index]
        out.append((index[g.manager], members))
    return out


def layout_controllers(path: str) -> Path | None:
    """controllers/<name> beside overlays/<name>, as synth writes them."""
    if path == "-":
        return None
    p = Path(path).resolve()
    if not p.is_dir() or p.parent.name != "overlays":
        return None
    d = p.parent.parent / "controllers" / p.name
    return d if d.is_dir() else None


def layout_objects(directory: Path | None, display) -> list[Obj]:
    """The ConfigMaps under controllers/<name>/kueue (the kueue-manager-config patch)."""
    out: list[Obj] = []
    if directory is None or not (directory / "kueue").is_dir():
        return out
    for f in sorted((directory / "kueue").iterdir()):
        if f.suffix not in YAML_SUFFIXES:
            continue
        try:
            docs = load_all(f.read_text())
        except Exception:   # noqa: BLE001  an unreadable file shows nothing
            continue
        out += [Obj(-1, d, display(str(f))) for d in docs
                if isinstance(d, dict) and d.get("kind") == "ConfigMap"]
    return out


def member(name: str, path: str, stream_name: str, model, closed: bool, display) -> Member:
    controllers = layout_controllers(path)
    laid = layout_objects(controllers, display)
    synthesized = {o.source for o in laid}   # also in the context (run._beside): told apart here
    config = kueue_config(model.objects) or kueue_config([o for o in model.context if o.source not in synthesized])
    beside = None if config else kueue_config(laid)
    jobset = (controllers is not None and (controllers / "jobset").is_dir()) or any(
        o.name == JOBSET_CRD for o in model.known("apiextensions.k8s.io", "CustomResourceDefinition"))
    return Member(name, stream_name, model, closed, config or beside, jobset, beside is not None)


def dispatched_context(manager_model) -> list[Obj]:
    """What the manager sends to its workers: the queued objects behind its MultiKueue checks. A worker
    runs their pods, so the worker's Services and monitors may select them."""
    try:
        return [Obj(-1, o.body, o.source) for o, _ in dispatched(manager_model)]
    except Exception:   # noqa: BLE001  a manager its rules cannot read (its findings say why): nothing sent
        return []


def findings(group: Group, selection, order: dict[str, int], schema_broken: bool = False) \
        -> tuple[list[Problem], list, list[str]]:
    """The group rules' findings, by input, then rule, object and path; those inline comments
    silenced; and the rules that could not run (a rule that fails on inputs the schema layer
    already rejected is skipped, as on one input; on valid inputs the failure is an IE001)."""
    from .collector import Collector
    collector = Collector(group.manager.source, False, selection)
    skipped = []
    for m in [group.manager, *group.members.values()]:
        if m.config is not None and m.config_beside:   # MK006 saw the ones in the inputs
            for p in dispatcher_hits(m.config, m.model.kueue_version):
                collector.add("MK006", p)
    for rule_id, check in GROUP_RULES.items():
        if not selection.on(rule_id):
            continue
        try:
            hits = list(check(group))
        except Exception as e:   # noqa: BLE001
            if schema_broken:
                skipped.append(rule_id)
            else:
                collector.internal(None, f"rule {rule_id}", e)
            continue
        for p in hits:
            collector.add(rule_id, p)
    out = collector.findings()
    return sorted(out, key=lambda f: (order.get(f.source, len(order)), f.rule, f.object, f.path, f.message)), \
        collector.ignored, skipped
