"""The whole review of a change: stale output, capacity per overlay, immutable
changes with their rollout, and the object changes, assembled from the parts."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..kernel import crd_dirs, policy, versions, yamlio
from .compare import Entry, ObjectChanges, compare_units
from .immutable import Immutable, core_violations
from .impact import UnitImpact, impacts
from .objects import Key, Unit, is_overlay, sort_key, units
from .rollout import Rollout, rollout
from .stale import Staleness
from .transitions import certain, default_releases, transition_violations, value_at


@dataclass(frozen=True)
class ImmutableChange:
    key: Key
    sections: tuple[str, ...]         # where the object changed (base, overlays/<profile>, ...)
    fields: tuple[Immutable, ...]
    rollout: Rollout


@dataclass(frozen=True)
class VersionBump:
    """A controller release that moves, on the profiles (clusters) listed."""
    project: str
    old: str
    new: str
    profiles: tuple[str, ...]


@dataclass
class Report:
    base_commit: str
    base_label: str
    objects: ObjectChanges
    capacity: dict[str, UnitImpact]
    immutable: list[ImmutableChange]
    stale: Staleness | None = None
    notes: list[str] = field(default_factory=list)
    versions: list[VersionBump] = field(default_factory=list)
    policy: list[str] = field(default_factory=list)   # cohort policy holes after the change (kernel/policy.py)

    @property
    def never(self) -> int:
        """Workloads that can never be admitted after the change, whether the change made them so
        or not (one count per overlay they are in): the number `generator plan` reports."""
        return sum(impact.never_now for impact in self.capacity.values())


# ---------------------------------------------------------------- releases and Argo CD

_RELEASE = re.compile(r"/releases/download/(v[^/]+)/")


def releases(tree: dict[str, str], profile: str) -> dict[str, str]:
    """The Kueue/JobSet/LWS releases a profile's controller installs pin (their kustomization URLs)."""
    out = default_releases()
    for project in out:
        text = tree.get(f"controllers/{profile}/{project}/kustomization.yaml")
        docs = yamlio.load_all(text) if text else []
        for url in (docs[0].get("resources") or []) if docs and isinstance(docs[0], dict) else []:
            m = _RELEASE.search(str(url))
            if m and m.group(1) in versions.known(project):
                out[project] = m.group(1)
    return out


def _profiles(tree: dict[str, str]) -> set[str]:
    return {path.split("/")[1] for path in tree if path.startswith("controllers/") and path.count("/") >= 3}


def version_bumps(old_tree: dict[str, str], new_tree: dict[str, str]) -> list[VersionBump]:
    """Controller releases that move, per project, with the profiles they move on."""
    moved: dict[tuple[str, str, str], list[str]] = {}
    for profile in sorted(_profiles(old_tree) & _profiles(new_tree)):
        a, b = releases(old_tree, profile), releases(new_tree, profile)
        for project in sorted(a):
            if a[project] != b.get(project) and b.get(project):
                moved.setdefault((project, a[project], b[project]), []).append(profile)
    return [VersionBump(p, o, n, tuple(profiles)) for (p, o, n), profiles in sorted(moved.items())]


def kueue_downgrades(old_tree: dict[str, str], new_tree: dict[str, str]) -> list[str]:
    """One line per Kueue release move the API server refuses (versions.kueue_downgrade)."""
    return [f"profile{'s' if len(b.profiles) > 1 else ''} {', '.join(b.profiles)}: {why}"
            for b in version_bumps(old_tree, new_tree) if b.project == "kueue"
            and (why := versions.kueue_downgrade(b.old, b.new)) is not None]


def application_options(new_units: dict[str, Unit]) -> dict[str, list[set[str]]] | None:
    """Source path -> sync options of each Application syncing it; None when nothing is synced by Argo CD."""
    out: dict[str, list[set[str]]] = {}
    for unit in new_units.values():
        for key, loc in unit.items():
            if key[0] == "argoproj.io" and key[1] == "Application":
                spec = loc.obj.get("spec") or {}
                path = (spec.get("source") or {}).get("path")
                opts = {str(o) for o in (spec.get("syncPolicy") or {}).get("syncOptions") or []}
                out.setdefault(str(path), []).append(opts)
    return out or None


# ---------------------------------------------------------------- immutable changes

@dataclass
class _Context:
    new_tree: dict[str, str]
    new_units: dict[str, Unit]
    crd_root: Path
    apps: dict[str, list[set[str]]] | None
    notes: list[str]
    crd_failed: bool = False


def _profile(section: str, new_units: dict[str, Unit], key: Key) -> str | None:
    if is_overlay(section):
        return section.split("/", 1)[1]
    # A base object: any overlay that applies it decides the releases.
    return next((u.split("/", 1)[1] for u in sorted(new_units) if is_overlay(u) and key in new_units[u]), None)


_PROJECTS = {"kueue.x-k8s.io": "kueue", "jobset.x-k8s.io": "jobset", "leaderworkerset.x-k8s.io": "lws"}


def _field_violations(section: str, e: Entry, ctx: _Context) -> list[Immutable]:
    assert e.old is not None and e.new is not None
    found = core_violations(e.key, e.old.obj, e.new.obj)
    if e.key[0] in ("", "apps", "batch", "scheduling.k8s.io", "rbac.authorization.k8s.io") or ctx.crd_failed:
        return found
    profile = _profile(section, ctx.new_units, e.key)
    pins = releases(ctx.new_tree, profile) if profile else None
    try:
        hits = transition_violations(e.old.obj, e.new.obj, ctx.crd_root, pins)
    except crd_dirs.CrdFileError as err:
        ctx.crd_failed = True
        ctx.notes.append(f"CRD transition rules were not checked: {err}")
        return found
    project = _PROJECTS.get(e.key[0])
    crd = f"{project} {pins[project]} " if project and pins else ""
    return found + [Immutable(e.key, v.path, value_at(e.old.obj, v.parts), value_at(e.new.obj, v.parts),
                              v.message or "guarded by a transition rule",
                              f"{crd}{e.key[1]} CRD, x-kubernetes-validations rule `{v.expression}`",
                              certain=certain(v))
                    for v in hits]


def _applied_by(key: Key, section: str, apps: dict[str, list[set[str]]] | None,
                new_units: dict[str, Unit]) -> list[set[str]] | None:
    if apps is None:
        return None
    dirs = [section] if section != "base" else [u for u in sorted(new_units) if is_overlay(u) and key in new_units[u]]
    return [o for d in dirs for o in apps.get(d, [])]


def _merged(key: Key, new_units: dict[str, Unit]) -> Unit:
    """Every unit that applies `key`, together (a base object reaches each overlay)."""
    out: Unit = {}
    for u in new_units.values():
        if key in u:
            out.update(u)
    return out


def immutable_changes(objects: ObjectChanges, ctx: _Context) -> list[ImmutableChange]:
    found: dict[tuple, list] = {}
    for section, e in objects.entries():
        if e.old is None or e.new is None or e.status == "renamed":
            continue
        fields = tuple(_field_violations(section, e, ctx))
        if not fields:
            continue
        unit = ctx.new_units.get(section) or _merged(e.key, ctx.new_units)
        r = rollout(e.key, e.new, unit, _applied_by(e.key, section, ctx.apps, ctx.new_units))
        ident = (e.key, tuple((f.path, repr(f.old), repr(f.new)) for f in fields))
        if ident in found:
            found[ident][1].append(section)
        else:
            found[ident] = [fields, [section], r]
    out = [ImmutableChange(ident[0], tuple(v[1]), v[0], v[2]) for ident, v in found.items()]
    return sorted(out, key=lambda ic: (sort_key(ic.key), ic.sections))


def compare(old_tree: dict[str, str], new_tree: dict[str, str], base_commit: str = "", base_label: str = "",
            crd_root: Path | None = None) -> Report:
    old_units, new_units = units(old_tree), units(new_tree)
    objects = compare_units(old_units, new_units)
    notes: list[str] = [f"refused: {line}" for line in kueue_downgrades(old_tree, new_tree)]
    ctx = _Context(new_tree, new_units, Path(crd_root or crd_dirs.default_root()),
                   application_options(new_units), notes)
    return Report(base_commit, base_label, objects, impacts(old_units, new_units),
                  immutable_changes(objects, ctx), notes=notes, versions=version_bumps(old_tree, new_tree),
                  policy=policy_lines(old_units, new_units))


def policy_lines(old_units: dict[str, Unit], new_units: dict[str, Unit]) -> list[str]:
    """The policy findings of each overlay after the change, each marked when the change brings it."""
    def lines(us: dict[str, Unit]) -> list[str]:
        out = []
        for name in sorted(u for u in us if is_overlay(u)):
            try:
                found = policy.findings([loc.obj for loc in us[name].values()])
            except Exception:   # noqa: BLE001  objects other reports flag: no policy to read
                found = []
            out += [f"{name}: {policy.line(f)}" for f in found]
        return out
    before = set(lines(old_units))
    return [line + ("" if line in before else " (new)") for line in lines(new_units)]
