"""`python -m generator diff [BASE_REF]`: what a change does to the generated
manifests, for the reviewer of a pull request.

Both sides are read as committed YAML, never re-synthesized: the base side
from git (`git ls-tree` + `git cat-file`, no checkout), the other side from
the working tree. Objects are matched by (API group, kind, namespace, name),
never by file, so a renamed file or an object moved between base/ and an
overlay is reported as such, not as removed + added.

What an overlay applies is base/ plus its own directory, so each overlay is
compared as that union. A change to a base object that every overlay sees the
same way is reported once, under base/; one that only some overlays see (an
object moved from base/ into one overlay) is reported under each overlay it
affects, marked "via base". Controller installs and argocd/ directories are
compared directory by directory (their kustomization.yaml included: it holds
the pinned release URLs)."""
from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import yaml

from . import catalog, demand, kueue, paths, quantity, writer, yamlio

MISSING = object()
ACCELERATOR_RESOURCES = tuple(sorted({d.resource for d in catalog.DEVICES.values()}))
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "Job", "CronJob", "JobSet", "LeaderWorkerSet", "Pod")
SYMBOLS = {"added": "+", "removed": "-", "changed": "~", "moved": ">", "renamed": ">"}
MAX_VALUE = 80   # longer values are summarized as "(changed)"
MAX_EXPANDED = 5  # an added or removed mapping of up to this many scalars is listed entry by entry


class DiffError(Exception):
    """The comparison cannot be made (not a git repository, unknown ref)."""


# ---------------------------------------------------------------- git

def _git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    try:
        out = subprocess.run(["git", "-C", str(root), *args], input=stdin, capture_output=True, timeout=120)
    except FileNotFoundError:
        raise DiffError("git is not installed") from None
    if out.returncode != 0:
        raise DiffError(f"git {' '.join(args[:2])} failed: {out.stderr.decode(errors='replace').strip()}")
    return out.stdout


def resolve_base(root: Path, ref: str | None) -> tuple[str, str]:
    """(commit, how it was chosen). Default: the merge base of HEAD and main
    (origin/main where there is no local main, as in CI checkouts)."""
    if ref:
        try:
            return _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").decode().strip(), ref
        except DiffError:
            raise DiffError(f"{ref!r} is not a commit in {root}") from None
    for main in ("main", "origin/main"):
        try:
            _git(root, "rev-parse", "--verify", "--quiet", f"{main}^{{commit}}")
        except DiffError:
            continue
        return _git(root, "merge-base", "HEAD", main).decode().strip(), f"merge base with {main}"
    raise DiffError(f"no branch main or origin/main in {root}; name the base: python -m generator diff BASE_REF")


def tree_at(root: Path, commit: str) -> dict[str, str]:
    """The output directories' files at a commit, read from git objects."""
    listing = _git(root, "ls-tree", "-r", "-z", commit, "--", *paths.OUTPUT_DIRS)
    blobs = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        _mode, kind, sha = meta.split()
        if kind == b"blob":
            blobs.append((path.decode(), sha.decode()))
    if not blobs:
        return {}
    data = _git(root, "cat-file", "--batch", stdin="".join(f"{sha}\n" for _, sha in blobs).encode())
    out, pos = {}, 0
    for path, _ in blobs:
        header_end = data.index(b"\n", pos)
        size = int(data[pos:header_end].split()[2])
        start = header_end + 1
        out[path] = data[start:start + size].decode()
        pos = start + size + 1
    return out


# ---------------------------------------------------------------- objects

Key = tuple  # (api group, kind, namespace or None, name)


@dataclass(frozen=True)
class Located:
    obj: dict
    dir: str
    file: str


def _key(obj: dict) -> Key:
    meta = obj.get("metadata", {})
    return (obj["apiVersion"].rpartition("/")[0], obj["kind"], meta.get("namespace"), meta["name"])


def label(key: Key) -> str:
    _, kind, ns, name = key
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def _is_overlay(d: str) -> bool:
    return d.startswith("overlays/") and d.count("/") == 1


def objects_by_dir(tree: dict[str, str]) -> dict[str, dict[Key, Located]]:
    out: dict[str, dict[Key, Located]] = {}
    for path in sorted(tree):
        d, _, file = path.rpartition("/")
        if not file.endswith((".yaml", ".yml")):
            continue
        if file == "kustomization.yaml":
            if d == "base" or _is_overlay(d):
                out.setdefault(d, {})   # the overlay exists, even with no objects of its own
                continue   # lists the files beside it; the objects say it all
            # One per directory, named after it.
            docs = [{**doc, "metadata": {"name": d}} for doc in _load(path, tree[path])[:1]]
        else:
            docs = [x for x in _load(path, tree[path])
                    if x.get("apiVersion") and x.get("kind") and x.get("metadata", {}).get("name")]
        for obj in docs:
            out.setdefault(d, {})[_key(obj)] = Located(obj, d, path)
    return out


def _load(path: str, text: str) -> list[dict]:
    try:
        return [x for x in yamlio.load_all(text) if isinstance(x, dict)]
    except yaml.YAMLError as e:
        raise DiffError(f"{path}: not valid YAML: {e}") from None


def units(tree: dict[str, str]) -> dict[str, dict[Key, Located]]:
    """What each overlay applies (base + overlay) and each other directory on its own."""
    dirs = objects_by_dir(tree)
    base = dirs.pop("base", {})
    out = {}
    for d, objs in dirs.items():
        out[d] = {**base, **objs} if _is_overlay(d) else objs
    return out


# ---------------------------------------------------------------- field changes

@dataclass(frozen=True)
class Change:
    path: str
    old: object
    new: object

    def values(self) -> tuple[str, str] | None:
        """(old, new) as short text, or None when either is too big to show."""
        a, b = _show(self.old), _show(self.new)
        return None if a is None or b is None else (a, b)

    def tag(self) -> str:
        return "added" if self.old is MISSING else "removed" if self.new is MISSING else "changed"

    def text(self) -> str:
        v = self.values()
        return f"{self.path}: {v[0]} → {v[1]}" if v else f"{self.path} ({self.tag()})"

    def markdown(self) -> str:
        v = self.values()
        return f"{_md(self.path)}: {_md(v[0])} → {_md(v[1])}" if v else f"{_md(self.path)} ({self.tag()})"


def _scalar(v) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def _show(v) -> str | None:
    if v is MISSING:
        return "(unset)"
    if isinstance(v, list) and all(_scalar(x) for x in v):
        items = [_show(x) for x in v]
        if None in items:
            return None
        text = "[" + ", ".join(items) + "]"
    elif _scalar(v):
        text = "null" if v is None else ("true" if v is True else "false" if v is False else str(v))
        if "\n" in text:
            return None
    else:
        return None
    return text if len(text) <= MAX_VALUE else None


def _seg(key) -> str:
    key = str(key)
    return f".{key}" if key.replace("-", "").replace("_", "").isalnum() else f"[{key}]"


def _named(items: list) -> dict | None:
    """List items keyed by `name` when every item has a distinct one."""
    if not all(isinstance(x, dict) and isinstance(x.get("name"), str) for x in items):
        return None
    names = [x["name"] for x in items]
    return dict(zip(names, items)) if len(set(names)) == len(names) else None


def _embedded(v):
    """A multi-line string holding a YAML mapping (an embedded config), parsed."""
    if isinstance(v, str) and "\n" in v:
        try:
            doc = yaml.safe_load(v)
        except yaml.YAMLError:
            return None
        return doc if isinstance(doc, dict) else None
    return None


def field_changes(old, new, path: str = "") -> list[Change]:
    if old == new:
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in list(old) + [k for k in new if k not in old]:
            out += field_changes(old.get(k, MISSING), new.get(k, MISSING), (path + _seg(k)).lstrip("."))
        return out
    scalars = isinstance(old, list) and isinstance(new, list) and all(_scalar(x) for x in old + new)
    if scalars and len(old) != len(new) and _show(old) and _show(new):
        return [Change(path, old, new)]   # a short list that grew or shrank: both in full
    if isinstance(old, list) and isinstance(new, list):
        a, b = _named(old), _named(new)
        if a is not None and b is not None:
            return [c for k in list(a) + [k for k in b if k not in a]
                    for c in field_changes(a.get(k, MISSING), b.get(k, MISSING), f"{path}[{k}]")]
        return [c for i in range(max(len(old), len(new)))
                for c in field_changes(old[i] if i < len(old) else MISSING,
                                       new[i] if i < len(new) else MISSING, f"{path}[{i}]")]
    a, b = _embedded(old), _embedded(new)
    if a is not None and b is not None:
        return field_changes(a, b, path)
    # A small mapping added or removed whole (a few labels, annotations): show its entries.
    if old is MISSING and _small(new):
        return field_changes({}, new, path)
    if new is MISSING and _small(old):
        return field_changes(old, {}, path)
    return [Change(path, old, new)]


def _small(v) -> bool:
    return isinstance(v, dict) and 0 < len(v) <= MAX_EXPANDED and all(_scalar(x) for x in v.values())


# ---------------------------------------------------------------- comparison

@dataclass
class Entry:
    key: Key
    status: str                      # added | removed | changed | moved | renamed
    changes: list[Change] = field(default_factory=list)
    note: str = ""


def _compare(old: dict[Key, Located], new: dict[Key, Located]) -> dict[Key, tuple]:
    """key -> (status, changes, old location, new location) for every key that differs."""
    out = {}
    for key in sorted(set(old) | set(new), key=_sort_key):
        a, b = old.get(key), new.get(key)
        if a is None:
            out[key] = ("added", (), None, b)
        elif b is None:
            out[key] = ("removed", (), a, None)
        else:
            changes = tuple(field_changes(a.obj, b.obj))
            if a.dir != b.dir:
                out[key] = ("moved", changes, a, b)
            elif changes:
                out[key] = ("changed", changes, a, b)
            elif a.file != b.file:
                out[key] = ("renamed", (), a, b)
    return out


def _sort_key(key: Key):
    return (key[1], key[2] or "", key[3], key[0])


def _dir(loc: Located | None) -> str | None:
    return loc.dir if loc else None


@dataclass
class Report:
    base_commit: str
    base_label: str
    sections: dict[str, list[Entry]]
    capacity: dict[str, list["CapacityLine"]]
    new_overlays: list[str] = field(default_factory=list)
    removed_overlays: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in ("added", "removed", "changed", "moved")}
        for entries in self.sections.values():
            for e in entries:
                out["moved" if e.status == "renamed" else e.status] += 1
        return out


def compare(old_tree: dict[str, str], new_tree: dict[str, str], base_commit: str = "", base_label: str = "") -> Report:
    old_units, new_units = units(old_tree), units(new_tree)
    sections: dict[str, list[Entry]] = {}
    results = {u: _compare(old_units.get(u, {}), new_units.get(u, {}))
               for u in sorted(set(old_units) | set(new_units))}
    overlays = [u for u in results if _is_overlay(u)]
    kept = [u for u in overlays if u in old_units and u in new_units]

    # Base objects that every kept overlay sees change the same way: reported once.
    grouped: set[Key] = set()
    if kept:
        candidates = set.intersection(*(set(results[u]) for u in kept))
        for key in sorted(candidates, key=_sort_key):
            rs = [results[u][key] for u in kept]
            dirs_old = {_dir(r[2]) for r in rs}
            dirs_new = {_dir(r[3]) for r in rs}
            if "base" not in dirs_old | dirs_new:
                continue
            norm = {(r[0], tuple(c.text() for c in r[1]), _dir(r[2]) == "base", _dir(r[3]) == "base") for r in rs}
            if len(norm) != 1:
                continue
            status, changes = rs[0][0], list(rs[0][1])
            note = ""
            if status == "moved":
                if dirs_old == {"base"}:
                    note = "moved from base to " + ", ".join(sorted(dirs_new))
                else:
                    note = "moved to base from " + ", ".join(sorted(d for d in dirs_old if d))
            elif status == "renamed":
                note = f"file renamed from {rs[0][2].file} to {rs[0][3].file}"
            sections.setdefault("base", []).append(Entry(key, status, changes, note))
            grouped.add(key)

    for u, res in results.items():
        for key, (status, changes, a, b) in res.items():
            if _is_overlay(u) and key in grouped and u in kept:
                continue
            note = ""
            if status == "moved":
                note = f"moved from {a.dir}" if b.dir == u else f"moved to {b.dir}"
            elif status == "renamed":
                note = f"file renamed from {a.file} to {b.file}"
            elif "base" in (_dir(a), _dir(b)):
                note = "via base"
            if status == "changed" and a.file != b.file:
                note = f"file renamed from {a.file} to {b.file}"
            sections.setdefault(u, []).append(Entry(key, status, list(changes), note))
    ordered = {s: sections[s] for s in sorted(sections, key=_section_order) if sections[s]}
    capacity = {}
    for u in overlays:
        lines = capacity_changes(old_units.get(u, {}), new_units.get(u, {}))
        if lines:
            capacity[u] = lines
    return Report(base_commit, base_label, ordered, capacity,
                  new_overlays=[u for u in overlays if u not in old_units],
                  removed_overlays=[u for u in overlays if u not in new_units])


def _section_order(s: str):
    top = s.split("/")[0]
    rank = {"base": 0, "overlays": 1, "controllers": 2, "argocd": 3}.get(top, 4)
    return (rank, s)


# ---------------------------------------------------------------- capacity

@dataclass(frozen=True)
class CapacityLine:
    what: str      # quota | accelerators | priority
    subject: str   # the object (and flavor)
    item: str      # resource or field
    old: str
    new: str

    def text(self) -> str:
        return f"{self.what} {self.subject} {self.item}: {self.old} → {self.new}"


def _quotas(obj: dict) -> dict[tuple[str, str], object]:
    out = {}
    for group in obj.get("spec", {}).get("resourceGroups", []):
        for flavor in group.get("flavors", []):
            for r in flavor.get("resources", []):
                out[(flavor["name"], r["name"])] = r.get("nominalQuota")
    return out


def _delta(resource: str, old, new) -> str:
    try:
        d = quantity.parse(new) - quantity.parse(old)
    except (ValueError, TypeError):
        return ""
    if d == 0:
        return ""
    sign = "+" if d > 0 else "-"
    return f" ({sign}{quantity.fmt(resource, abs(d))})"


def _same_quantity(a, b) -> bool:
    try:
        return quantity.parse(a) == quantity.parse(b)
    except (ValueError, TypeError):
        return a == b


def _hpa_ranges(objs: dict[Key, Located]) -> dict[tuple, tuple[int, int]]:
    out = {}
    for key, loc in objs.items():
        if key[1] == "HorizontalPodAutoscaler":
            spec = loc.obj.get("spec", {})
            ref = spec.get("scaleTargetRef", {})
            out[(ref.get("kind"), key[2], ref.get("name"))] = (spec.get("minReplicas", 1), spec["maxReplicas"])
    return out


def pod_ranges(obj: dict, hpa: dict) -> list[tuple[demand.PodSet, int, int]]:
    """(pod set, fewest pods, most pods) of a workload object, all its Workloads
    together: the demand module's counts, scaled by an HPA's range where one targets it."""
    d = demand.of(obj)
    meta = obj["metadata"]
    scaled = hpa.get((d.kind, meta.get("namespace"), meta["name"])) if d.scalable else None
    out = []
    for ps in d.podsets:
        if scaled is None:
            n = ps.count * d.copies
            out.append((ps, n, n))
        elif d.kind == "StatefulSet":          # one pod group whose size is the replica count
            out.append((ps, scaled[0], scaled[1]))
        else:                                  # one Workload per replica
            out.append((ps, ps.count * scaled[0], ps.count * scaled[1]))
    return out


def _pods(lo: int, hi: int, scaled: bool) -> str:
    if lo == hi:
        return f"{lo} pod" if lo == 1 else f"{lo} pods"
    return f"{lo}–{hi} pods" + (" (HPA)" if scaled else "")


def _range(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}–{hi}"


def accelerator_summary(obj: dict, hpa: dict, resource: str) -> tuple[str, int, int] | None:
    """('2 × 2 pods = 4', fewest, most) for one accelerator resource, or None if it asks for none."""
    meta = obj["metadata"]
    scaled = (obj["kind"], meta.get("namespace"), meta["name"]) in hpa
    parts, lo_total, hi_total = [], 0, 0
    for ps, lo, hi in pod_ranges(obj, hpa):
        n = int(ps.requests.get(resource, 0))
        if n and hi:
            parts.append(f"{n} × {_pods(lo, hi, scaled)}")
            lo_total, hi_total = lo_total + n * lo, hi_total + n * hi
    if not parts:
        return None
    return f"{' + '.join(parts)} = {_range(lo_total, hi_total)}", lo_total, hi_total


def _priorities(obj: dict) -> dict[str, str]:
    d = demand.of(obj)
    out = {}
    if d.priority_class_name:
        out["priorityClassName"] = d.priority_class_name
    if d.workload_priority_class:
        out[kueue.PRIORITY_LABEL] = d.workload_priority_class
    return out


def capacity_changes(old: dict[Key, Located], new: dict[Key, Located]) -> list[CapacityLine]:
    lines: list[CapacityLine] = []
    # Quotas, per ClusterQueue, flavor and resource.
    for key in sorted({k for k in set(old) | set(new) if k[1] == "ClusterQueue"}, key=_sort_key):
        a = _quotas(old[key].obj) if key in old else {}
        b = _quotas(new[key].obj) if key in new else {}
        for fr in list(a) + [fr for fr in b if fr not in a]:
            va, vb = a.get(fr, MISSING), b.get(fr, MISSING)
            if va is not MISSING and vb is not MISSING and _same_quantity(va, vb):
                continue
            subject = f"{label(key)} [{fr[0]}]"
            if va is MISSING:
                lines.append(CapacityLine("quota", subject, fr[1], "(new)" if key not in old else "(unset)", str(vb)))
            elif vb is MISSING:
                lines.append(CapacityLine("quota", subject, fr[1], str(va), "(removed)" if key not in new else "(unset)"))
            else:
                lines.append(CapacityLine("quota", subject, fr[1], str(va), f"{vb}{_delta(fr[1], va, vb)}"))

    # Accelerators, per workload and in total.
    hpa_a, hpa_b = _hpa_ranges(old), _hpa_ranges(new)
    workloads = sorted({k for k in set(old) | set(new) if k[1] in WORKLOAD_KINDS}, key=_sort_key)
    for resource in ACCELERATOR_RESOURCES:
        totals = [[0, 0], [0, 0]]
        changed = False
        for key in workloads:
            a = accelerator_summary(old[key].obj, hpa_a, resource) if key in old else None
            b = accelerator_summary(new[key].obj, hpa_b, resource) if key in new else None
            for side, s in ((0, a), (1, b)):
                if s:
                    totals[side][0] += s[1]
                    totals[side][1] += s[2]
            if (a and a[0]) == (b and b[0]):
                continue
            changed = True
            lines.append(CapacityLine("accelerators", label(key), resource,
                                      a[0] if a else ("(new)" if key not in old else "none"),
                                      b[0] if b else ("(removed)" if key not in new else "none")))
        if changed and totals[0] != totals[1]:
            lines.append(CapacityLine("accelerators", "total", resource,
                                      _range(*totals[0]), _range(*totals[1])))

    # Priorities: workloads' classes and the classes' values.
    for key in workloads:
        a = _priorities(old[key].obj) if key in old else None
        b = _priorities(new[key].obj) if key in new else None
        for item in sorted(set(a or {}) | set(b or {})):
            va = (a or {}).get(item, "(new)" if a is None else "(unset)")
            vb = (b or {}).get(item, "(removed)" if b is None else "(unset)")
            if va != vb:
                lines.append(CapacityLine("priority", label(key), item, va, vb))
    # Values of classes that exist on both sides (new and removed classes are listed as objects).
    for key in sorted({k for k in set(old) & set(new) if k[1] in ("PriorityClass", "WorkloadPriorityClass")},
                      key=_sort_key):
        va, vb = str(old[key].obj.get("value")), str(new[key].obj.get("value"))
        if va != vb:
            lines.append(CapacityLine("priority", label(key), "value", va, vb))
    return lines


# ---------------------------------------------------------------- rendering

def render_text(r: Report) -> str:
    out = [f"generator diff: {r.base_commit[:12]} ({r.base_label}) → working tree"]
    c = r.counts()
    if not any(c.values()):
        out.append("No changes to generated objects.")
        return "\n".join(out) + "\n"
    out.append(", ".join(f"{n} {s}" for s, n in c.items()))
    for section, entries in r.sections.items():
        out.append("")
        suffix = " (new overlay)" if section in r.new_overlays else (
            " (overlay removed)" if section in r.removed_overlays else "")
        out.append(section + suffix)
        for e in entries:
            note = f" ({e.note})" if e.note else ""
            out.append(f"  {SYMBOLS[e.status]} {label(e.key)}{note}")
            out += [f"      {ch.text()}" for ch in e.changes]
    out.append("")
    if not r.capacity:
        out.append("Capacity impact: none")
    else:
        out.append("Capacity impact")
        for unit, lines in r.capacity.items():
            out.append(f"  {unit}")
            out += [f"    {line.text()}" for line in lines]
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return "`" + text.replace("`", "'").replace("|", "\\|") + "`"


def render_markdown(r: Report) -> str:
    out = [f"### Generated manifests: changes since {_md(r.base_commit[:12])} ({r.base_label})", ""]
    c = r.counts()
    if not any(c.values()):
        return "\n".join(out + ["No changes to generated objects.", ""])
    out += [", ".join(f"**{n}** {s}" for s, n in c.items()), ""]
    for section, entries in r.sections.items():
        suffix = " (new overlay)" if section in r.new_overlays else (
            " (overlay removed)" if section in r.removed_overlays else "")
        out += [f"#### {_md(section)}{suffix}", ""]
        for e in entries:
            note = f" ({e.note})" if e.note else ""
            out.append(f"- {_md(SYMBOLS[e.status])} **{e.key[1]}** {_md(label(e.key).split(' ', 1)[1])}{note}")
            out += [f"  - {ch.markdown()}" for ch in e.changes]
        out.append("")
    out += ["#### Capacity impact", ""]
    if not r.capacity:
        return "\n".join(out + ["None.", ""])
    out += ["| overlay | what | object | resource / field | before | after |", "|---|---|---|---|---|---|"]
    for unit, lines in r.capacity.items():
        for line in lines:
            cells = [unit.split("/", 1)[1], line.what, line.subject, line.item, line.old, line.new]
            out.append("| " + " | ".join(_md(x) if i != 1 else x for i, x in enumerate(cells)) + " |")
    return "\n".join(out + [""])


def run(root: Path, base_ref: str | None, fmt: str) -> str:
    root = Path(root)
    commit, how = resolve_base(root, base_ref)
    report = compare(tree_at(root, commit), writer.read_tree(root, paths.OUTPUT_DIRS), commit, how)
    return render_markdown(report) if fmt == "markdown" else render_text(report)
