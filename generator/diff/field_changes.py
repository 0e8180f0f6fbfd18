"""Field-level changes between two versions of one object.

Mappings are compared key by key; lists of items with distinct `name`s by
name; lists that are sets to the API (an AppProject's `sourceRepos`, a
kustomization's `resources`, ...) by membership, so a reordering is no change
and a replaced item shows old and new in full; other lists are aligned
(difflib), so removing one item in the middle is one removal, not a shift of
every later index. Multi-line strings holding YAML (embedded configs) are
compared as the mappings they hold. Paths are written by errors.format_path, as
validate and the spec errors write them (a named list item is ['name'])."""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass

import yaml

from ..kernel.errors import Named, format_path


class _Missing:
    def __repr__(self) -> str:
        return "(unset)"


MISSING = _Missing()
MAX_EXPANDED = 5      # an added or removed mapping of up to this many scalars is listed entry by entry
MAX_FLOW = 200        # a mapping or list longer than this (as one-line YAML) is summarized
SHORT_LIST = 80       # a list of scalars this short is shown whole when it grows or shrinks

# Lists whose order means nothing to the consumer, by kind and field path:
# kustomize applies `resources` as a set of objects, Argo CD reads an
# AppProject's allow-lists and an Application's sync options as sets.
SET_LISTS = frozenset({
    ("Kustomization", "resources"), ("Kustomization", "components"),
    ("AppProject", "spec.sourceRepos"), ("AppProject", "spec.sourceNamespaces"),
    ("AppProject", "spec.destinations"),
    ("AppProject", "spec.clusterResourceWhitelist"), ("AppProject", "spec.namespaceResourceWhitelist"),
    ("AppProject", "spec.clusterResourceBlacklist"), ("AppProject", "spec.namespaceResourceBlacklist"),
    ("Application", "spec.syncPolicy.syncOptions"), ("Application", "spec.ignoreDifferences"),
})
# Lists that are sets wherever they occur: a pod's tolerations (atomic, order
# ignored by the scheduler) and an object's finalizers.
SET_SUFFIXES = ("tolerations", "metadata.finalizers")


@dataclass(frozen=True)
class Change:
    path: str
    old: object       # MISSING when added
    new: object       # MISSING when removed
    member: bool = False   # one element of a set-like list, added or removed whole

    def tag(self) -> str:
        return "added" if self.old is MISSING else "removed" if self.new is MISSING else "changed"

    def is_text(self) -> bool:
        """Both sides are multi-line text (scripts, files in a ConfigMap)."""
        return all(isinstance(v, str) and "\n" in v for v in (self.old, self.new))


def show(v) -> str:
    """A value as the reviewer reads it: scalars in full, small mappings and
    lists as one-line YAML, bigger ones summarized."""
    if v is MISSING:
        return "(unset)"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (dict, list)):
        text = json.dumps(v, separators=(", ", ": "), default=str) if v else ("{}" if isinstance(v, dict) else "[]")
        if len(text) <= MAX_FLOW:
            return text
        if isinstance(v, dict):
            # An entry that names itself (a flavor of a ClusterQueue, an object): by kind and name.
            ident = [f"{k}: {v[k]}" for k in ("kind", "name") if isinstance(v.get(k), str)]
            return "{" + ", ".join(ident) + ", …}" if ident else f"(mapping of {len(v)} keys)"
        return f"(list of {len(v)} items)"
    return str(v)


def text_diff(old: str, new: str) -> list[str]:
    """The changed lines of two texts, '- ' and '+ ' prefixed."""
    out = []
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0):
        if line.startswith(("---", "+++", "@@")):
            continue
        out.append(f"{line[0]} {line[1:]}")
    return out


def _scalar(v) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def _canon(v) -> str:
    return json.dumps(v, sort_keys=True, default=str)


def _named(items: list) -> dict | None:
    """List items keyed by `name` when every item has a distinct one."""
    if not all(isinstance(x, dict) and isinstance(x.get("name"), str) for x in items):
        return None
    names = [x["name"] for x in items]
    return dict(zip(names, items, strict=True)) if len(set(names)) == len(names) else None


def _embedded(v):
    """A multi-line string holding a YAML mapping (an embedded config), parsed."""
    if isinstance(v, str) and "\n" in v:
        try:
            doc = yaml.safe_load(v)
        except yaml.YAMLError:
            return None
        return doc if isinstance(doc, dict) else None
    return None


def _small(v) -> bool:
    return isinstance(v, dict) and 0 < len(v) <= MAX_EXPANDED and all(_scalar(x) for x in v.values())


def is_set_list(kind: str, path: str) -> bool:
    return (kind, path) in SET_LISTS or any(path == s or path.endswith("." + s) for s in SET_SUFFIXES)


def field_changes(old, new, path: str = "", kind: str = "") -> list[Change]:
    """Every change from `old` to `new` (an object's kind decides which lists are sets)."""
    if old == new:
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        keys = list(old) + [k for k in new if k not in old]
        return [c for k in keys
                for c in field_changes(old.get(k, MISSING), new.get(k, MISSING), format_path((k,), path), kind)]
    if isinstance(old, list) and isinstance(new, list):
        return _list_changes(old, new, path, kind)
    return _value_changes(old, new, path, kind)


def _value_changes(old, new, path: str, kind: str) -> list[Change]:
    """Two values that are not both mappings or both lists: compared inside when both are
    embedded configs or one is a small mapping added or removed, else one change."""
    a, b = _embedded(old), _embedded(new)
    if a is not None and b is not None:
        return field_changes(a, b, path, kind)
    # A small mapping added or removed whole (a few labels, annotations): show its entries.
    if old is MISSING and _small(new):
        return field_changes({}, new, path, kind)
    if new is MISSING and _small(old):
        return field_changes(old, {}, path, kind)
    return [Change(path, old, new)]


def _list_changes(old: list, new: list, path: str, kind: str) -> list[Change]:
    if is_set_list(kind, path):
        return _set_changes(old, new, path)
    a, b = _named(old), _named(new)
    if a is not None and b is not None:
        keys = list(a) + [k for k in b if k not in a]
        return [c for k in keys for c in field_changes(a.get(k, MISSING), b.get(k, MISSING), format_path((Named(k),), path),
                                                kind)]
    if all(_scalar(x) for x in old + new) and len(json.dumps(old)) <= SHORT_LIST >= len(json.dumps(new)):
        return [Change(path, old, new)]   # a short list (command, args): both in full
    return _aligned_changes(old, new, path, kind)


def _set_changes(old: list, new: list, path: str) -> list[Change]:
    a = {_canon(x): x for x in old}
    b = {_canon(x): x for x in new}
    removed = [v for k, v in a.items() if k not in b]
    added = [v for k, v in b.items() if k not in a]
    if len(removed) == 1 and len(added) == 1 and _scalar(removed[0]) and _scalar(added[0]):
        return [Change(path, removed[0], added[0])]   # one item replaced (a release URL): old → new
    return ([Change(path, v, MISSING, member=True) for v in removed]
            + [Change(path, MISSING, v, member=True) for v in added])


def _aligned_changes(old: list, new: list, path: str, kind: str) -> list[Change]:
    out: list[Change] = []
    matcher = difflib.SequenceMatcher(a=[_canon(x) for x in old], b=[_canon(x) for x in new], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1)
        for k in range(paired):
            out += field_changes(old[i1 + k], new[j1 + k], format_path((j1 + k,), path), kind)
        for i in range(i1 + paired, i2):
            out += field_changes(old[i], MISSING, format_path((i,), path), kind)
        for j in range(j1 + paired, j2):
            out += field_changes(MISSING, new[j], format_path((j,), path), kind)
    return out
