"""Where an object without metadata.namespace lands: kubectl puts a namespaced object in
the default namespace (or -n); a cluster-scoped one has none. The scope comes from the
pinned CRD or core schema, else from the table of well-known kinds (generator/kernel/apiscope.py);
for a kind in neither it is unknown, and rules that look objects up by namespace cannot."""
from __future__ import annotations

from ..findings import INFO
from ..objects import meta
from . import hit, rule


@rule("NS001", INFO, "an object names no namespace and its kind's scope is unknown (no pinned CRD, not a well-known "
      "kind): -n and the default namespace are not applied to it",
      "write metadata.namespace, or pass --crd-dir with the kind's CRD")
def scope_unknown(model):
    seen: set = set()   # one note per kind: the rest of its objects are alike
    for o in model.objects:
        if (o.group, o.kind) in seen:
            continue
        if not meta(o.body).get("namespace") and not model.scope_known(o) and not _kind_known(model, o):
            seen.add((o.group, o.kind))
            yield hit(o, ("metadata",), f"the scope of {o.body.get('apiVersion')} {o.kind} is unknown: whether it "
                                        f"lands in namespace {model.default_namespace!r} is not known, so references "
                                        f"by namespace from and to it are not resolved")


def _kind_known(model, o) -> bool:
    """A Kubernetes kind, or a kind of a pinned CRD at another version: SC002/SC003 speak for it."""
    from ..schema import built_in
    api = str(o.body.get("apiVersion") or "")
    return model.schemas is not None and (built_in(model.schemas, api, o.kind)
                                          or bool(model.schemas.crd_versions(o.group, o.kind)))
