"""The object graph of one input: lookups by kind and name, and the pod
templates inside each workload with what Kueue will make of them (generator
/demand.py: pods per Workload, per-pod requests, which pods form one TPU
slice, which labels the controller adds to the pods)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from ..kernel import demand
from ..kernel.apiscope import CORE_CLUSTER_SCOPED, WELL_KNOWN_NAMESPACED
from ..kernel.demand import PodSet


def group_of(obj: dict) -> str:
    return demand.api_group(obj)


def meta(obj: dict) -> dict:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


@dataclass(eq=False)
class Obj:
    """An object of the input (or of the --context) with its position (for stable ordering)."""
    index: int
    body: dict
    source: str = ""                  # the file it came from
    ignores: dict = field(default_factory=dict)   # rule -> reason, from `# validate: ignore=`
    default_namespace: str = ""       # where a namespaced object without one lands (kubectl: default, or -n)

    @property
    def kind(self) -> str:
        return self.body.get("kind") or ""   # the loader passes only documents with a kind

    @property
    def group(self) -> str:
        return group_of(self.body)

    @property
    def name(self) -> str:
        """The name; for an object with only generateName, that prefix (the server adds the rest)."""
        m = meta(self.body)
        return m.get("name") or m.get("generateName") or ""

    @property
    def generated_name(self) -> bool:
        m = meta(self.body)
        return not m.get("name") and bool(m.get("generateName"))

    @property
    def namespace(self) -> str:
        ns = meta(self.body).get("namespace")   # not a string: SC001 says so; where it lands is unknown
        return ns if isinstance(ns, str) and ns else self.default_namespace

    @property
    def labels(self) -> dict:
        return _dict(meta(self.body).get("labels"))

    @property
    def annotations(self) -> dict:
        return _dict(meta(self.body).get("annotations"))

    @property
    def spec(self) -> dict:
        return _dict(self.body.get("spec"))

    @cached_property
    def demand(self) -> demand.Demand:
        return demand.of(self.body)

    @property
    def podsets(self) -> tuple[PodSet, ...]:
        return self.demand.podsets


DEFAULT_NAMESPACE = "default"   # where kubectl apply puts a namespaced object that names none


class Model:
    """Every object of one input, indexed once, and the objects known to exist already.

    `objects` are the input: rules report on them. `context` objects (--context: an
    overlay, a cluster dump) are only looked up. In a closed world (overlays built from
    the spec, or any input with --context) a reference to an object that is in neither is
    an error; in an open world (files and streams on their own) it is a note, since the
    object may well exist in the cluster."""

    def __init__(self, objects: list[Obj], schemas=None, autopilot: bool = False, namespace: str = "",
                 context: Sequence[Obj] = (), closed: bool = True, kueue_version: str = "",
                 folder: Folder | None = None, own: str = ""):
        self.objects = objects
        self._context = list(context)
        # The other files of a plain folder (indexed once for all its files), without this file's `own`.
        self.folder, self._own = folder, own
        self._known_cache: dict[tuple[str, str], list[Obj]] = {}
        self._name_index: dict[tuple[str, str], dict[tuple[str, str | None], list[Obj]]] = {}
        self.schemas = schemas
        self.autopilot = autopilot
        self.closed = closed
        self.kueue_version = kueue_version   # the pinned Kueue release ("v0.17.4"); "" when unknown
        self.default_namespace = namespace or DEFAULT_NAMESPACE
        # Scope and group are the kind's, not the object's: worked out once per (apiVersion, kind).
        # A directory of N files is N models of N objects each, so per object this was N² work.
        kinds: dict[tuple[str, str], tuple[tuple[str, str], bool]] = {}
        self._by_kind: dict[tuple[str, str], list[Obj]] = {}
        self._known: dict[tuple[str, str], list[Obj]] = {}
        for n, o in enumerate([*objects, *self._context]):
            key, namespaced = self._kind_facts(o, kinds)
            if namespaced:
                o.default_namespace = self.default_namespace
            if n < len(objects):
                self._by_kind.setdefault(key, []).append(o)
            self._known.setdefault(key, []).append(o)

    def _kind_facts(self, o: Obj, memo: dict) -> tuple[tuple[str, str], bool]:
        """((group, kind), whether it lands in a namespace when it names none), remembered per
        (apiVersion, kind); an apiVersion or kind that is not a string is worked out each time."""
        api, kind = o.body.get("apiVersion"), o.kind
        known = isinstance(api, str) and isinstance(kind, str)
        facts = memo.get((api, kind)) if known else None
        if facts is None:
            facts = ((o.group, kind), self.scope_known(o) and not self.cluster_scoped(o))
            if known:
                memo[(api, kind)] = facts
        return facts

    def all(self, group: str, kind: str) -> list[Obj]:
        """Objects of the input of this kind (what rules check)."""
        return self._by_kind.get((group, kind), [])

    def known(self, group: str, kind: str) -> list[Obj]:
        """Objects of this kind in the input or the context (what references resolve against)."""
        if self.folder is None:
            return self._known.get((group, kind), [])
        key = (group, kind)
        if key not in self._known_cache:
            self._known_cache[key] = self._known.get(key, []) + self.folder.known(key, self._own)
        return self._known_cache[key]

    @property
    def context(self) -> list[Obj]:
        """The context objects: --context's, a manager's dispatched ones, then the folder's other files."""
        if self.folder is None:
            return self._context
        return self._context + self.folder.others(self._own)

    def context_where(self, key: str, keep: Callable[[Obj], bool]) -> list[Obj]:
        """The context objects `keep` keeps, in context order: `context` filtered, without going
        over every other file of a folder for each of its files. `keep` reads the object alone;
        `key` names it (a folder's objects are filtered once per key)."""
        mine = [o for o in self._context if keep(o)]
        return mine if self.folder is None else mine + self.folder.others_where(key, keep, self._own)

    def get(self, group: str, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        if self.folder is None and isinstance(name, str):
            candidates = self._named(group, kind).get((name, namespace), ())
        else:
            candidates = self._known.get((group, kind), []) if self.folder is not None else self.known(group, kind)
        for o in candidates:
            if o.name == name and (namespace is None or o.namespace == namespace):
                return o
        if self.folder is not None:
            return self.folder.get((group, kind), name, namespace, self._own)
        return None

    def _named(self, group: str, kind: str) -> dict[tuple[str, str | None], list[Obj]]:
        """known(group, kind) by (name, namespace) and by (name, None), in the same order: a
        lookup per queue label of a 1,000-workload overlay went through every LocalQueue."""
        index = self._name_index.get((group, kind))
        if index is None:
            index = self._name_index[(group, kind)] = {}
            for o in self.known(group, kind):
                if isinstance(o.name, str):
                    index.setdefault((o.name, None), []).append(o)
                    index.setdefault((o.name, o.namespace), []).append(o)
        return index

    def names(self, group: str, kind: str, namespace: str | None = None) -> list[str]:
        return sorted({o.name for o in self.known(group, kind) if namespace is None or o.namespace == namespace})

    def kueue(self, kind: str) -> list[Obj]:
        return self.all("kueue.x-k8s.io", kind)

    def workloads(self):
        """(object, podset) for every pod template in the input."""
        for o in self.objects:
            for ps in o.podsets:
                yield o, ps

    def known_workloads(self, namespace: str | None = None):
        """(object, podset) for every pod template in the input or the context (in `namespace`
        when one is named)."""
        for o in [*self.objects, *self._context]:
            for ps in o.podsets:
                if namespace is None or o.namespace == namespace:
                    yield o, ps
        if self.folder is not None:
            yield from self.folder.workloads(namespace, self._own)

    def scope_known(self, o: Obj) -> bool:
        """Is the kind's scope known: from its pinned CRD or core schema, else from the
        table of well-known kinds (generator/kernel/apiscope.py)? Otherwise its namespace stays
        unset and NS001 says so."""
        return self.schemas is None or self.schemas.validator(o.body.get("apiVersion"), o.kind) is not None \
            or (o.group, o.kind) in CORE_CLUSTER_SCOPED or (o.group, o.kind) in WELL_KNOWN_NAMESPACED

    def cluster_scoped(self, o: Obj) -> bool:
        """Custom resources: the scope their CRD declares; core kinds: the table above."""
        info = self.schemas.crd_info(o.body.get("apiVersion"), o.kind) if self.schemas else None
        if info is not None:
            return info[3] == "Cluster"
        return (o.group, o.kind) in CORE_CLUSTER_SCOPED


class Folder:
    """The objects of a plain folder's files, indexed once. Each file of the folder is checked
    with the other files as context: N files looked up in one index instead of N models
    indexing N objects each (quadratic). What a file's Model sees here is exactly the folder
    minus the file's own objects (source `own`, or `own#...`), in the folder's order."""

    def __init__(self, objects: list[Obj], schemas=None, namespace: str = ""):
        self._index = Model([], schemas=schemas, namespace=namespace, context=objects)   # namespaces, kinds
        self.objects = list(objects)
        self._of_file: dict[str, set[int]] = {}     # own -> ids of the objects a file `own` leaves out
        for o in self.objects:
            for cut in [len(o.source)] + [i for i, c in enumerate(o.source) if c == "#"]:
                self._of_file.setdefault(o.source[:cut], set()).add(id(o))
        self._by_name: dict[tuple, list[Obj]] = {}  # ((group, kind), name) -> objects, in order
        self._odd: dict[tuple[str, str], list[Obj]] = {}   # names that cannot be keys (not hashable)
        for key, objs in self._index._known.items():
            for o in objs:
                try:
                    self._by_name.setdefault((key, o.name), []).append(o)
                except TypeError:
                    self._odd.setdefault(key, []).append(o)
        self._workloads: dict[str | None, list[tuple[Obj, PodSet]]] | None = None
        self._broken: list[Obj] = []   # objects whose pod templates cannot be read: each read raises again
        self._kept: dict[str, list[Obj]] = {}   # others_where's, by key

    def _left_out(self, own: str) -> set[int]:
        return self._of_file.get(own, set())

    def others(self, own: str) -> list[Obj]:
        out = self._left_out(own)
        return [o for o in self.objects if id(o) not in out] if out else list(self.objects)

    def others_where(self, key: str, keep: Callable[[Obj], bool], own: str) -> list[Obj]:
        """others(own) that `keep` keeps (the folder's objects filtered once per `key`)."""
        if key not in self._kept:
            self._kept[key] = [o for o in self.objects if keep(o)]
        out = self._left_out(own)
        objs = self._kept[key]
        return [o for o in objs if id(o) not in out] if out else list(objs)

    def known(self, key: tuple[str, str], own: str) -> list[Obj]:
        objs = self._index._known.get(key, [])
        out = self._left_out(own)
        return [o for o in objs if id(o) not in out] if out else list(objs)

    def get(self, key: tuple[str, str], name, namespace: str | None, own: str) -> Obj | None:
        out = self._left_out(own)
        try:
            found = self._by_name.get((key, name), [])
        except TypeError:   # a name that is no key: look the slow way, as before
            found = self._index._known.get(key, [])
        for o in found:
            if id(o) not in out and o.name == name and (namespace is None or o.namespace == namespace):
                return o
        return None

    def workloads(self, namespace: str | None, own: str):
        """(object, podset) of the folder's pod templates outside file `own`, in `namespace` (None: all)."""
        out = self._left_out(own)
        if self._workloads is None:
            self._workloads = self._read_workloads()
        for o in self._broken:
            if id(o) not in out:
                o.podsets   # noqa: B018  raises as a walk over every object did
        for o, ps in self._workloads.get(namespace, []):
            if id(o) not in out:
                yield o, ps

    def _read_workloads(self) -> dict[str | None, list[tuple[Obj, PodSet]]]:
        by_ns: dict[str | None, list[tuple[Obj, PodSet]]] = {None: []}
        for o in self.objects:
            try:
                podsets = o.podsets
            except Exception:   # noqa: BLE001  re-raised for each file that would have read it
                self._broken.append(o)
                continue
            for ps in podsets:
                by_ns[None].append((o, ps))
                by_ns.setdefault(o.namespace, []).append((o, ps))
        return by_ns


def describe(names: list[str]) -> str:
    return ", ".join(names) if names else "none"
