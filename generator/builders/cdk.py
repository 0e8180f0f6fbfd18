"""The cdk8s app synth builds: one `cdk8s.App`, one `cdk8s.Chart` per output folder,
cdk8s-plus-33's typed `Kube*` objects for core kinds (generator/builders/k8s.py) and
`cdk8s.ApiObject`s for custom resources. What is written is cdk8s' own JSON
(`Chart.to_json()`), through the project's all-or-nothing writer.

Charts never get a namespace (cdk8s would stamp it on cluster-scoped objects) and every
object carries an explicit metadata.name, so no name hashes are added.

Speed (measured, docs/design.md "Rendering through cdk8s"): each jsii call is a round trip
to Node, so a typed object is one constructor call with all its props, sent without the
struct fields left unset (`typed`); a custom resource is its constructor, one `JsonPatch.add`
per top-level body key (mostly just `spec`; one patch per distinct key and value, shared) and
one `addJsonPatch`; embedded templates wait in a scratch chart and are rendered together, each
distinct one once (`embedded`, `flush`); a chart is rendered with one `to_json()` once its
objects are all there."""
from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar

import cdk8s
import constructs
import jsii

_META_KEYS = ("name", "namespace", "labels", "annotations")
T = TypeVar("T")
P = ParamSpec("P")


class Embedded(dict):
    """The JSON of an embedded object, filled in when the app renders (`embedded`). Reading it
    before then fails loudly: an empty dict read by a builder would be a silent mistake."""

    filled = False

    def _check(self) -> None:
        if not self.filled:
            raise RuntimeError("an embedded object (generator/builders/embed.py) is filled in when the charts "
                               "render: put it into a custom resource's body as it is, do not read or edit it")

    def __getitem__(self, key):
        self._check()
        return super().__getitem__(key)

    def __contains__(self, key) -> bool:
        self._check()
        return super().__contains__(key)

    def __iter__(self):
        self._check()
        return super().__iter__()

    def __len__(self) -> int:
        self._check()
        return super().__len__()

    def get(self, key, default=None):
        self._check()
        return super().get(key, default)

    def keys(self):
        self._check()
        return super().keys()

    def items(self):
        self._check()
        return super().items()

    def values(self):
        self._check()
        return super().values()

    def setdefault(self, key, default=None):
        self._check()
        return super().setdefault(key, default)


class _Pending:
    """What waits for the next render: embedded objects in a scratch chart, with the dict
    each one's JSON goes into, and the custom resources whose bodies hold those dicts."""

    def __init__(self) -> None:
        self.scratch: cdk8s.Chart | None = None
        self.holes: list[tuple[Embedded, Callable[[dict, dict], None]]] = []
        self.customs: list[tuple[cdk8s.ApiObject, dict]] = []
        # Embedded objects with the same props (a key from `embedded`) are rendered once:
        # key -> index of the first in `holes`; the others wait here with that index.
        self.first: dict[object, int] = {}
        self.copies: list[tuple[Embedded, Callable[[dict, dict], None], int]] = []
        # One JsonPatch per distinct (path, value), for the whole app: cdk8s clones a patch's
        # operation each time it applies one, so objects can share it (LocalQueues of many
        # namespaces, a team's copies of a workload: 43 distinct of 2,381 at 1,000 workloads).
        self.patches: dict[tuple[str, str], cdk8s.JsonPatch] = {}


_pending = _Pending()
_scratch_ids = itertools.count()


def typed(cls: Callable[P, T], *args: P.args, **props: P.kwargs) -> T:
    """`cls(scope, id, **props)` for a typed class (k8s.KubeDeployment, ...): the same object,
    its props checked by their struct class as the constructor checks them, sent to Node
    without the fields left unset. jsii's own constructor sends every field of every struct,
    most of them null, each with its type's name (a pod template: 11.5 kB on the wire, 4.4 kB
    of it data); Node reads a plain mapping where a struct is declared against the same type
    (jsii's packages/@jsii/kernel/src/serialization.ts, the Struct deserializer: "Python, for
    example, allows using plain mapping objects instead of Structs"; required props checked), so
    cdk8s-plus-33 renders the same JSON (docs/design.md, "Rendering through cdk8s")."""
    klass: Any = cls
    scope, id_ = args
    struct = getattr(sys.modules[klass.__module__], f"{klass.__name__}Props")(**props)
    obj = klass.__new__(klass)
    jsii.create(klass, obj, [scope, id_, wire(struct)])
    return obj


def wire(value: Any) -> Any:
    """A struct as jsii would send it, less its unset fields: a mapping of jsii names to values
    (structs within turned the same way); other jsii objects (a Quantity) stay references."""
    names = getattr(type(value), "__jsii_name_mapping__", None)
    if names is not None:
        return {names[k]: wire(v) for k, v in value._values.items()}
    if type(value) is list:
        return [wire(v) for v in value]
    if type(value) is dict:
        return {k: wire(v) for k, v in value.items()}
    return value


def new_app() -> cdk8s.App:
    """The app; never synthesized to a folder (charts are rendered with to_json()). What a
    render that failed left pending is dropped."""
    global _pending
    _pending = _Pending()
    return cdk8s.App(outdir=os.devnull)


def embedded(make: Callable[[constructs.Construct, str], object], fill: Callable[[dict, dict], None],
             key: object = None) -> dict:
    """A typed object's JSON, for the body of a custom resource: `make(scope, id)` creates the
    object in a scratch chart now; the dict returned is empty until the next render, when one
    `to_json()` of the scratch chart renders every such object and `fill(dict, object_json)`
    fills each in. Builders put the dict into a body and never read it (reading it before then
    raises). `key` (hashable, from `props_key`): objects with equal keys have equal props, so
    the first is made and rendered and the others get its JSON (cdk8s renders props alone)."""
    p = _pending
    hole = Embedded()
    if key is not None and key in p.first:
        p.copies.append((hole, fill, p.first[key]))
        return hole
    if p.scratch is None:   # its own app: the real app's charts never validate it
        p.scratch = cdk8s.Chart(cdk8s.App(outdir=os.devnull), f"embedded{next(_scratch_ids)}",
                                disable_resource_name_hashes=True)
    make(p.scratch, f"t{len(p.holes)}")
    if key is not None:
        p.first[key] = len(p.holes)
    p.holes.append((hole, fill))
    return hole


def props_key(*props: Any) -> object:
    """A key equal for equal typed props (structs, lists, dicts, strings, numbers) and different
    otherwise: their wire form's repr, in which a jsii object (a Quantity, reused per value by
    core.qty) shows as itself, so props that differ only in such an object never share a key."""
    return repr([wire(v) for v in props])


def rendered_now(make: Callable[[constructs.Construct, str], object]) -> dict:
    """A typed object's JSON at once, in a chart of its own (two more calls to Node), for the
    rare builder that must edit what cdk8s renders: a team's own manifest that GPUDirect
    decorates. Everything else goes through `embedded`."""
    c = cdk8s.Chart(cdk8s.App(outdir=os.devnull), f"now{next(_scratch_ids)}", disable_resource_name_hashes=True)
    make(c, "t")
    (out,) = c.to_json()
    return dict(out)


def chart(app: constructs.Construct, name: str) -> cdk8s.Chart:
    """The chart of one output folder (`overlays/dev` gets the construct id `overlays--dev`)."""
    return cdk8s.Chart(app, chart_id(name), disable_resource_name_hashes=True)


def chart_id(folder: str) -> str:
    return folder.replace("/", "--")


def object_id(kind: str, name: str, namespace: str | None) -> str:
    return f"{kind}.{namespace or '_'}.{name}"


def custom(scope: constructs.Construct, body: dict) -> cdk8s.ApiObject:
    """A custom resource: an ApiObject whose body (everything but apiVersion, kind and metadata)
    is one JSON patch, so that it keeps the builder's key order (cdk8s sorts props, and applies
    patches after sorting)."""
    meta = body["metadata"]
    unknown = set(meta) - set(_META_KEYS)
    if unknown:
        raise ValueError(f"unsupported metadata fields {sorted(unknown)} on {body['kind']}/{meta['name']}")
    obj = typed(cdk8s.ApiObject, scope, object_id(body["kind"], meta["name"], meta.get("namespace")),
                api_version=body["apiVersion"], kind=body["kind"],
                metadata=cdk8s.ApiObjectMetadata(**{k: meta[k] for k in _META_KEYS if k in meta}))
    _pending.customs.append((obj, body))   # the body may hold embedded objects not rendered yet
    return obj


def flush() -> None:
    """Render the pending embedded objects (one call) and give each pending custom resource its body."""
    p = _pending
    if p.scratch is not None:
        rendered = p.scratch.to_json()
        for (hole, fill), one in zip(p.holes, rendered, strict=True):
            hole.filled = True
            fill(hole, one)
        for hole, fill, first in p.copies:   # nothing edits a filled hole: sharing its parts is safe
            hole.filled = True
            fill(hole, rendered[first])
        p.scratch, p.holes, p.first, p.copies = None, [], {}, []
    for obj, body in p.customs:
        patches = [_patch(p.patches, f"/{key}", value) for key, value in body.items()
                   if key not in ("apiVersion", "kind", "metadata") and value is not None]
        if patches:
            obj.add_json_patch(*patches)
    p.customs = []


def _patch(made: dict[tuple[str, str], cdk8s.JsonPatch], path: str, value: object) -> cdk8s.JsonPatch:
    """JsonPatch.add(path, value), made once per distinct pair: a body is JSON (dicts, lists,
    strings, numbers, booleans, None), whose repr tells values apart exactly (1, True, 1.0)."""
    key = (path, repr(value))
    patch = made.get(key)
    if patch is None:
        patch = made[key] = cdk8s.JsonPatch.add(path, value)
    return patch


def manifests(c: cdk8s.Chart) -> list[dict]:
    """The chart's objects as cdk8s renders them, in the order they were added."""
    flush()
    return list(c.to_json())


def scope(parent: constructs.Construct, id_: str) -> constructs.Construct:
    """A plain construct grouping objects of one owner (a workload, the profile's queues)."""
    return constructs.Construct(parent, id_)


def rendered_with_owners(c: cdk8s.Chart, owners: Mapping[int, T], exact: bool) -> list[tuple[dict, T | None]]:
    """The chart's objects as cdk8s renders them, each with its owner: the value `owners` gives
    the nearest scope (by id() of the construct) above it in the construct tree, or None.
    Scopes are recognised in the tree's pre-order walk (one call to Node), so every scope of the
    chart must be in `owners`, None for those that own nothing.

    Without dependencies between objects cdk8s renders them in that same pre-order. `exact`
    (a user's constructs may add dependencies): each object's kind, namespace and name are read
    from Node instead and matched with the rendered objects."""
    objects = manifests(c)
    placed: list[tuple[cdk8s.ApiObject, T | None]] = []
    owner: T | None = None
    for node in c.node.find_all():
        if id(node) in owners:
            owner = owners[id(node)]
        elif isinstance(node, cdk8s.ApiObject):
            placed.append((node, owner))
    if not exact:
        if len(placed) != len(objects):
            raise AssertionError(f"chart {c.node.id}: {len(placed)} objects in the tree, {len(objects)} rendered")
        return [(obj, who) for obj, (_, who) in zip(objects, placed, strict=True)]
    by_key = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): i for i, o in enumerate(objects)}
    found: dict[int, T | None] = {}
    for node, who in placed:
        i = by_key.get((node.kind, node.metadata.namespace, node.name))
        if i is not None:   # else in a chart nested in this one: rendered there
            found[i] = who
    return [(obj, found.get(i)) for i, obj in enumerate(objects)]
