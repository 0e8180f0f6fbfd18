"""Object identity and scope."""
from ..findings import ERROR, WARNING
from . import hit, rule


@rule("IN003", ERROR, "the same object (group, kind, namespace, name) appears twice",
      "kubectl apply would keep only the last copy; remove or rename one")
def duplicates(model):
    seen: dict[tuple, int] = {}
    for o in model.objects:
        ns = "" if model.cluster_scoped(o) else o.namespace
        key = (o.group, o.kind, ns, o.name)
        if key in seen:
            yield hit(o, ("metadata", "name"), f"{o.kind} {o.name!r} is already defined "
                      f"(document {seen[key] + 1} of this input)")
        else:
            seen[key] = o.index


@rule("ST001", WARNING, "a cluster-scoped object (PriorityClass, ClusterQueue, Namespace, ...) has metadata.namespace, "
      "which the API server drops", "remove metadata.namespace (cdk8s Chart(namespace=...) or kustomize `namespace:` "
      "stamps it); it says something that is not so")
def namespaced_cluster_objects(model):
    for o in model.objects:
        if o.namespace and model.cluster_scoped(o):
            yield hit(o, ("metadata", "namespace"), f"{o.kind} is cluster-scoped but has namespace {o.namespace!r} "
                      f"(the API server drops it)")
