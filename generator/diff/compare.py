"""Object changes between two output trees, unit by unit.

A change to a base object that every overlay sees the same way is reported
once, under base/; one that only some overlays see (an object moved from
base/ into one overlay) is reported under each overlay it affects, marked
"via base"."""
from __future__ import annotations

from dataclasses import dataclass, field

from .field_changes import Change, field_changes
from .objects import Key, Located, Unit, is_overlay, sort_key

STATUSES = ("added", "removed", "changed", "moved")


@dataclass
class Entry:
    key: Key
    status: str                      # added | removed | changed | moved | renamed
    changes: list[Change] = field(default_factory=list)
    note: str = ""
    old: Located | None = None
    new: Located | None = None


@dataclass(frozen=True)
class _Pair:
    status: str
    changes: tuple[Change, ...]
    old: Located | None
    new: Located | None


@dataclass
class ObjectChanges:
    sections: dict[str, list[Entry]]            # section (base, a unit) -> entries
    new_overlays: list[str]
    removed_overlays: list[str]

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in STATUSES}
        for entries in self.sections.values():
            for e in entries:
                out["moved" if e.status == "renamed" else e.status] += 1
        return out

    def entries(self):
        for section, entries in self.sections.items():
            for e in entries:
                yield section, e


def _dir(loc: Located | None) -> str | None:
    return loc.dir if loc else None


def compare_unit(old: Unit, new: Unit) -> dict[Key, _Pair]:
    """key -> what happened to it, for every key that differs."""
    out = {}
    for key in sorted(set(old) | set(new), key=sort_key):
        a, b = old.get(key), new.get(key)
        if a is None or b is None:
            out[key] = _Pair("added" if a is None else "removed", (), a, b)
            continue
        changes = tuple(field_changes(a.obj, b.obj, kind=key[1]))
        if a.dir != b.dir:
            out[key] = _Pair("moved", changes, a, b)
        elif changes:
            out[key] = _Pair("changed", changes, a, b)
        elif a.file != b.file:
            out[key] = _Pair("renamed", (), a, b)
    return out


def _shared_base_entry(key: Key, pairs: list[_Pair]) -> Entry | None:
    """One entry for a base object that changed the same way in every overlay, else None."""
    dirs_old = {_dir(p.old) for p in pairs}
    dirs_new = {_dir(p.new) for p in pairs}
    if "base" not in dirs_old | dirs_new:
        return None
    seen = {(p.status, p.changes, _dir(p.old) == "base", _dir(p.new) == "base") for p in pairs}
    if len(seen) != 1:
        return None
    first = pairs[0]
    note = ""
    if first.status == "moved":
        note = ("moved from base to " + ", ".join(sorted(d for d in dirs_new if d)) if dirs_old == {"base"}
                else "moved to base from " + ", ".join(sorted(d for d in dirs_old if d)))
    elif first.status == "renamed" and first.old and first.new:
        note = f"file renamed from {first.old.file} to {first.new.file}"
    return Entry(key, first.status, list(first.changes), note, first.old, first.new)


def _note(unit: str, p: _Pair) -> str:
    if p.old is None or p.new is None:
        return "via base" if "base" in (_dir(p.old), _dir(p.new)) else ""
    if p.status == "moved":
        return f"moved from {p.old.dir}" if p.new.dir == unit else f"moved to {p.new.dir}"
    if p.status in ("renamed", "changed") and p.old.file != p.new.file:
        return f"file renamed from {p.old.file} to {p.new.file}"
    return "via base" if "base" in (_dir(p.old), _dir(p.new)) else ""


def _section_order(s: str):
    rank = {"base": 0, "overlays": 1, "controllers": 2, "argocd": 3}.get(s.split("/")[0], 4)
    return (rank, s)


def _shared_base_entries(results: dict[str, dict[Key, _Pair]], kept: list[str]) -> list[Entry]:
    """The base objects that changed the same way in every overlay kept on both sides: shown once, under base."""
    if not kept:
        return []
    entries = []
    for key in sorted(set.intersection(*(set(results[u]) for u in kept)), key=sort_key):
        entry = _shared_base_entry(key, [results[u][key] for u in kept])
        if entry is not None:
            entries.append(entry)
    return entries


def _sections(results: dict[str, dict[Key, _Pair]], kept: list[str]) -> dict[str, list[Entry]]:
    """Entries by section in report order (base, overlays, controllers, argocd), empty sections left out.
    A base object changed the same way in every kept overlay is listed once under base, not per overlay."""
    shared = _shared_base_entries(results, kept)
    grouped = {entry.key for entry in shared}
    sections: dict[str, list[Entry]] = {}
    if shared:
        sections["base"] = shared
    for u, res in results.items():
        for key, p in res.items():
            if u in kept and key in grouped:
                continue
            sections.setdefault(u, []).append(Entry(key, p.status, list(p.changes), _note(u, p), p.old, p.new))
    return {s: sections[s] for s in sorted(sections, key=_section_order) if sections[s]}


def compare_units(old_units: dict[str, Unit], new_units: dict[str, Unit]) -> ObjectChanges:
    results = {u: compare_unit(old_units.get(u, {}), new_units.get(u, {}))
               for u in sorted(set(old_units) | set(new_units))}
    overlays = [u for u in results if is_overlay(u)]
    kept = [u for u in overlays if u in old_units and u in new_units]
    return ObjectChanges(_sections(results, kept), new_overlays=[u for u in overlays if u not in old_units],
                         removed_overlays=[u for u in overlays if u not in new_units])
