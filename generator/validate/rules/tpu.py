"""TPU slices and Kueue Topology-Aware Scheduling annotations. Hardware
facts (shapes, chips per VM, labels, taints) come from generator/facts.py."""
from __future__ import annotations

from math import prod

from ... import catalog, facts
from ..findings import ERROR
from . import Hit, rule

SLICE_ANNOTATION = facts.TPU_SLICE_TOPOLOGY_ANNOTATION
TAS_PREFIX = "kueue.x-k8s.io/podset-"
# Every TPU generation of the device catalog, by its GKE accelerator label value.
KNOWN_TPUS = sorted(g.accelerator for g in catalog.TPU_GENERATIONS.values())
TPU_ACCELERATORS = {a.name: a for a in facts.ACCELERATORS.values() if a.name in facts.TPU_TYPES}
TPU_LABELS = sorted({a.node_label for a in TPU_ACCELERATORS.values()})
TPU_RESOURCES = sorted({a.resource for a in TPU_ACCELERATORS.values()})
TPU_TAINTS = sorted({a.taint_key for a in TPU_ACCELERATORS.values()})
# For hints: a worked example from the first TPU type's facts.
_EX = next(iter(facts.TPU_TYPES.values()))
_EX_SHAPE = _EX.subslice_shapes[min(1, len(_EX.subslice_shapes) - 1)]
_EX_CHIPS = prod(int(d) for d in _EX_SHAPE.split("x"))
_EX_SUPER = "x".join(map(str, _EX.cube[:-1] + (2 * _EX.cube[-1],)))   # two cubes


def slice_chips(tpu: facts.TpuType, shape: str) -> int | None:
    """Chips in a slice of this shape, or None if the type has no such slice:
    a dynamic sub-slice of one cube, or whole cubes in every dimension listed
    in non-decreasing order (GKE's slice controller takes 4x4x8, not 8x4x4).
    The rule is the device catalog's (its TPU7x dynamic slicing mode)."""
    gen = catalog.tpu_generation(tpu.accelerator)
    try:
        s = gen.shape(shape)
    except ValueError:
        return None
    return s.chips if gen.dynamic is not None and gen.dynamic.kind(s) else None


def _placed_annotations(o):
    """(path, key) of TAS and slice annotations that sit where Kueue and GKE never read them."""
    def bad(ann):
        return [k for k in sorted(ann or {}) if k.startswith(TAS_PREFIX) or k == SLICE_ANNOTATION]

    if not (o.group == "" and o.kind == "Pod"):
        for k in bad(o.annotations):
            yield ("metadata", "annotations", k), k
    if o.kind == "JobSet":
        for i, rj in enumerate(o.spec.get("replicatedJobs") or []):
            meta = ((rj or {}).get("template") or {}).get("metadata") or {}
            for k in bad(meta.get("annotations")):
                yield ("spec", "replicatedJobs", i, "template", "metadata", "annotations", k), k
    if o.kind == "CronJob":
        meta = (o.spec.get("jobTemplate") or {}).get("metadata") or {}
        for k in bad(meta.get("annotations")):
            yield ("spec", "jobTemplate", "metadata", "annotations", k), k


@rule("TP001", ERROR, "Kueue TAS annotations (kueue.x-k8s.io/podset-*) or the TPU slice annotation sit outside "
      "the pod template",
      "move them to the pod template's metadata.annotations (kueue#4122); elsewhere they are ignored")
def annotations_on_pod_templates(model):
    for o in model.objects:
        for path, key in _placed_annotations(o):
            yield Hit(o, path, f"{key} is read from pod templates only")


def _tpu_pods(model):
    """(object, podset, shape or None, accelerator name or None) of pod templates that use TPUs."""
    for o, ps in model.workloads():
        shape = (ps.metadata.get("annotations") or {}).get(SLICE_ANNOTATION)
        selector = ps.spec.get("nodeSelector") or {}
        accel = next((selector[label] for label in TPU_LABELS if label in selector), None)
        asks = any(r in ps.requests for r in TPU_RESOURCES)
        if shape is not None or accel is not None or asks:
            yield o, ps, shape, accel


@rule("TP002", ERROR, f"the slice annotation {SLICE_ANNOTATION} is not a slice shape of the TPU type",
      f"use a dynamic sub-slice of one cube ({_EX.accelerator}: {', '.join(_EX.subslice_shapes)}) or whole cubes "
      f"in every dimension, in non-decreasing order ({_EX_SUPER}, not {'x'.join(reversed(_EX_SUPER.split('x')))})")
def slice_shape(model):
    for o, ps, shape, accel in _tpu_pods(model):
        tpu = facts.TPU_TYPES.get(accel)
        if shape is not None and tpu is not None and slice_chips(tpu, str(shape)) is None:
            cube = "x".join(map(str, tpu.cube))
            yield Hit(o, ps.path + ("metadata", "annotations", SLICE_ANNOTATION),
                      f"{shape!r} is not a {accel} slice (sub-slices: {', '.join(tpu.subslice_shapes)}; "
                      f"or multiples of the {cube} cube)")


@rule("TP003", ERROR, "a TPU pod template lacks the TPU node selector, or names an unknown TPU type",
      f"set nodeSelector {TPU_LABELS[0]} to the TPU type (known: {', '.join(sorted(KNOWN_TPUS))})")
def tpu_selector(model):
    for o, ps, shape, accel in _tpu_pods(model):
        if accel is None:
            yield Hit(o, ps.path + ("spec", "nodeSelector"), f"uses TPUs but has no nodeSelector {TPU_LABELS[0]}")
        elif accel not in KNOWN_TPUS:
            label = next(label for label in TPU_LABELS if label in (ps.spec.get("nodeSelector") or {}))
            yield Hit(o, ps.path + ("spec", "nodeSelector", label),
                      f"{accel!r} is not a known TPU type (known: {', '.join(sorted(KNOWN_TPUS))})")


def _tolerates(tolerations, key) -> bool:
    for t in tolerations or []:
        if not isinstance(t, dict) or t.get("effect") not in (None, "", "NoSchedule"):
            continue
        if t.get("key") == key or (not t.get("key") and t.get("operator") == "Exists"):
            return True
    return False


@rule("TP004", ERROR, f"a TPU pod template does not tolerate the {TPU_TAINTS[0]} taint of TPU nodes",
      f"add a toleration {{key: {TPU_TAINTS[0]}, operator: Exists, effect: NoSchedule}}")
def tpu_toleration(model):
    for o, ps, shape, accel in _tpu_pods(model):
        taint = (TPU_ACCELERATORS.get(accel) or next(iter(TPU_ACCELERATORS.values()))).taint_key
        if not _tolerates(ps.spec.get("tolerations"), taint):
            yield Hit(o, ps.path + ("spec", "tolerations"), f"no toleration for the {taint} taint of TPU nodes")


@rule("TP005", ERROR, f"TPU chips do not add up: {TPU_RESOURCES[0]} per pod must be the chips of one VM, and the "
      "pods of one slice (Job parallelism, LWS group size) x chips per pod must equal the slice shape's chips",
      f"for {_EX.accelerator}: {TPU_RESOURCES[0]} {_EX.chips_per_vm} per pod and chips/{_EX.chips_per_vm} pods per "
      f"slice ({_EX_SHAPE} = {_EX_CHIPS} chips = {_EX_CHIPS // _EX.chips_per_vm} pods)")
def chip_counts(model):
    groups: dict = {}
    for o, ps, shape, accel in _tpu_pods(model):
        tpu = facts.TPU_TYPES.get(accel)
        if shape is None or tpu is None:
            continue
        chips = slice_chips(tpu, str(shape))
        if chips is None:
            continue
        resource = TPU_ACCELERATORS[accel].resource
        per_pod = ps.requests.get(resource, 0)
        if per_pod != tpu.chips_per_vm:
            yield Hit(o, ps.path + ("spec", "containers"), f"pods request {per_pod} {resource}; a {accel} "
                      f"slice pod takes a whole VM: {tpu.chips_per_vm}")
        g = groups.setdefault((id(o), ps.slice_group), {"obj": o, "ps": ps, "shape": shape, "chips": chips,
                                                  "have": 0, "what": []})
        g["have"] += ps.slice_pods * per_pod
        g["what"].append(f"{ps.slice_pods} pod(s) x {per_pod}")
    for g in groups.values():
        if g["have"] != g["chips"]:
            ps = g["ps"]
            yield Hit(g["obj"], ps.path + ("metadata", "annotations", SLICE_ANNOTATION),
                      f"slice {g['shape']} has {g['chips']} chips but one slice group gets "
                      f"{' + '.join(g['what'])} = {g['have']} ({ps.what})")
