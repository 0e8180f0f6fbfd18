"""Pod priority classes."""
from ..findings import ERROR
from ..objects import describe
from . import hit, rule

SCHEDULING = "scheduling.k8s.io"
BUILT_IN = ("system-cluster-critical", "system-node-critical")   # every cluster has these


@rule("PC001", ERROR, "a pod template's priorityClassName names no PriorityClass",
      "create the PriorityClass (scheduling.k8s.io/v1) or fix the name; pods are rejected at creation")
def priority_class_exists(model):
    for o, ps in model.workloads():
        name = ps.spec.get("priorityClassName")
        if name and name not in BUILT_IN and model.get(SCHEDULING, "PriorityClass", name) is None:
            yield hit(o, ps.path + ("spec", "priorityClassName"), f"no PriorityClass {name!r} "
                      f"(PriorityClasses: {describe(model.names(SCHEDULING, 'PriorityClass'))})",
                      missing=f"PriorityClass {name!r}")


@rule("PC002", ERROR, "more than one PriorityClass has globalDefault: true",
      "keep globalDefault on one PriorityClass; the API server rejects a second")
def one_global_default(model):
    defaults = [o for o in model.all(SCHEDULING, "PriorityClass") if o.body.get("globalDefault") is True]
    for o in defaults[1:]:
        yield hit(o, ("globalDefault",), f"{defaults[0].name!r} is already the global default")
