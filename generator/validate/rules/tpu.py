"""TPU slices and Kueue Topology-Aware Scheduling annotations. Hardware
facts (generations, shapes, chips per VM, labels, taints) come from the device
catalog (generator/kernel/catalog)."""
from __future__ import annotations

from ...kernel import catalog, supply
from ..findings import ERROR, INFO
from . import hit, rule

SLICE_ANNOTATION = catalog.TPU7X_DYNAMIC.slice_topology_annotation
TAS_PREFIX = "kueue.x-k8s.io/podset-"
# Every TPU generation of the device catalog, by its GKE accelerator label value.
KNOWN_TPUS = sorted(g.accelerator for g in catalog.TPU_GENERATIONS.values())
# Generations whose slices GKE's slice controller forms on demand (the slice annotation).
DYNAMIC = {g.accelerator: g for g in catalog.TPU_GENERATIONS.values() if g.dynamic is not None}
TPU_LABELS = [catalog.node_labels.TPU_ACCELERATOR_LABEL]
TPU_RESOURCES = [catalog.node_labels.TPU_RESOURCE]
TPU_TAINTS = [catalog.node_labels.TPU_TAINT.key]
# For hints: a worked example from the first generation GKE's slice controller slices.
_EX = next(g for g in DYNAMIC.values() if g.dynamic is not None and g.dynamic.admission_check_controller)
_EX_MODE = _EX.dynamic
assert _EX_MODE is not None
_EX_VM = _EX.dynamic_machine().chips
_EX_SHAPE = _EX_MODE.subslice_shapes[min(1, len(_EX_MODE.subslice_shapes) - 1)].text
_EX_CHIPS = _EX.shape(_EX_SHAPE).chips
_EX_SUPER = _EX_MODE.whole_cube_shapes(2)[-1].text   # two cubes


def slice_chips(gen: catalog.TpuGeneration, shape: str) -> int | None:
    """Chips in a slice of this shape, or None if the generation has no such slice:
    a dynamic sub-slice of one cube, or whole cubes in every dimension listed
    in non-decreasing order (GKE's slice controller takes 4x4x8, not 8x4x4).
    The rule is the device catalog's (the generation's dynamic slicing mode)."""
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
            yield hit(o, path, f"{key} is read from pod templates only")


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
      f"use a dynamic sub-slice of one cube ({_EX.accelerator}: {', '.join(x.text for x in _EX_MODE.subslice_shapes)}) "
      f"or whole cubes in every dimension, in non-decreasing order ({_EX_SUPER}, not {'x'.join(reversed(_EX_SUPER.split('x')))})")
def slice_shape(model):
    for o, ps, shape, accel in _tpu_pods(model):
        gen = DYNAMIC.get(accel)
        if shape is not None and gen is not None and gen.dynamic and slice_chips(gen, str(shape)) is None:
            mode = gen.dynamic
            supers = f"; or multiples of the {mode.cube.text} cube" if mode.superslicing else ""
            yield hit(o, ps.path + ("metadata", "annotations", SLICE_ANNOTATION),
                      f"{shape!r} is not a {accel} slice (sub-slices: "
                      f"{', '.join(x.text for x in mode.subslice_shapes)}{supers})")


# GKE compute classes are selected by this node label (kubernetes-engine-samples
# ai-ml/llm-serving-gemma/tgi/tgi-2b-it-h100-80gb.yaml selects `Accelerator`); the class,
# not the pod, then names the accelerator, so a TPU pod needs no TPU selector of its own.
COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"


def _injected(model, o):
    """Whether Kueue injects the TPU selector at admission: the object's queue resolves to a
    ClusterQueue one of whose ResourceFlavors has the TPU accelerator among its nodeLabels
    (Kueue adds a flavor's nodeLabels to the pods' nodeSelector). (True, None) when it does,
    (False, None) when the queue resolves and none does, (None, what is missing) when the queue
    does not resolve, (False, None) when the object is not queued."""
    from .kueue import QUEUE_LABEL, _labelled, resolve_queue

    queue = next((v for obj, _, v in _labelled(model, QUEUE_LABEL) if obj is o), None)
    if not isinstance(queue, str) or not queue:
        return False, None
    lq, cq = resolve_queue(model, o, queue)
    if cq is None:
        return None, f"LocalQueue {queue!r} in namespace {o.namespace!r}" if lq is None else \
            f"the ClusterQueue of LocalQueue {queue!r}"
    return _has_tpu_flavor(model, cq), None


def _has_tpu_flavor(model, cq) -> bool:
    """Whether one of the ClusterQueue's ResourceFlavors has the TPU accelerator among its nodeLabels."""
    from .kueue import KUEUE

    for flavor in supply.flavor_names(cq.spec):
        rf = model.get(KUEUE, "ResourceFlavor", flavor)
        if rf is not None and TPU_LABELS[0] in (rf.spec.get("nodeLabels") or {}):
            return True
    return False


@rule("TP003", ERROR, "a TPU pod template lacks the TPU node selector (and neither a GKE compute class nor its Kueue "
      "queue's ResourceFlavor supplies it), or names an unknown TPU type",
      f"set nodeSelector {TPU_LABELS[0]} to the TPU type (known: {', '.join(sorted(KNOWN_TPUS))}), or give the "
      f"queue's ResourceFlavor that node label")
def tpu_selector(model):
    for o, ps, _shape, accel in _tpu_pods(model):
        selector = ps.spec.get("nodeSelector") or {}
        if accel is None:
            if COMPUTE_CLASS_LABEL in selector:
                continue   # the compute class picks the accelerator
            injected, missing = _injected(model, o)
            if injected:
                continue
            at = ps.path + ("spec", "nodeSelector")
            if missing is not None:
                yield hit(o, at, f"uses TPUs but has no nodeSelector {TPU_LABELS[0]}; the ResourceFlavor of its "
                                 f"queue may inject it at admission, but {missing} is not in the input",
                          missing=missing)
            else:
                yield hit(o, at, f"uses TPUs but has no nodeSelector {TPU_LABELS[0]}")
        elif accel not in KNOWN_TPUS:
            label = next(label for label in TPU_LABELS if label in selector)
            # A note, not an error: GKE may know a generation the device catalog does not yet.
            yield hit(o, ps.path + ("spec", "nodeSelector", label),
                      f"{accel!r} is not a TPU generation of the device catalog (known: "
                      f"{', '.join(sorted(KNOWN_TPUS))}); its slices are not checked", severity=INFO)


def _tolerates(tolerations, key) -> bool:
    for t in tolerations or []:
        if not isinstance(t, dict) or t.get("effect") not in (None, "", "NoSchedule"):
            continue
        if t.get("key") == key or (not t.get("key") and t.get("operator") == "Exists"):
            return True
    return False


@rule("TP004", ERROR, f"a pod template aimed at TPU nodes neither requests {TPU_RESOURCES[0]} nor tolerates the "
      f"{TPU_TAINTS[0]} taint of TPU nodes (pods that request it get the toleration from the cluster)",
      f"request {TPU_RESOURCES[0]}, or add a toleration {{key: {TPU_TAINTS[0]}, operator: Exists, effect: NoSchedule}}")
def tpu_toleration(model):
    # GKE runs Kubernetes' ExtendedResourceToleration admission plugin, which adds a
    # toleration for the taint named like each extended resource a pod requests
    # (Kubernetes docs, Admission Controllers; GKE docs on GPUs say the same for
    # nvidia.com/gpu). So only pods that do not request the TPU resource need their own.
    for o, ps, _shape, _accel in _tpu_pods(model):
        resource, taint = TPU_RESOURCES[0], TPU_TAINTS[0]
        if resource not in ps.requests and not _tolerates(ps.spec.get("tolerations"), taint):
            yield hit(o, ps.path + ("spec", "tolerations"), f"no toleration for the {taint} taint of TPU "
                      f"nodes, and no {resource} request that would make the cluster add one")


@rule("TP005", ERROR, f"TPU chips do not add up: {TPU_RESOURCES[0]} per pod must be the chips of one VM, and the "
      "pods of one slice (Job parallelism, LWS group size) x chips per pod must equal the slice shape's chips",
      f"for {_EX.accelerator}: {TPU_RESOURCES[0]} {_EX_VM} per pod and chips/{_EX_VM} pods per "
      f"slice ({_EX_SHAPE} = {_EX_CHIPS} chips = {_EX_CHIPS // _EX_VM} pods)")
def chip_counts(model):
    groups: dict = {}
    for o, ps, shape, accel in _tpu_pods(model):
        gen = DYNAMIC.get(accel)
        if shape is None or gen is None:
            continue
        chips = slice_chips(gen, str(shape))
        if chips is None:
            continue
        resource, per_vm = TPU_RESOURCES[0], gen.dynamic_machine().chips
        per_pod = ps.requests.get(resource, 0)
        if per_pod != per_vm:
            yield hit(o, ps.path + ("spec", "containers"), f"pods request {per_pod} {resource}; a {accel} "
                      f"slice pod takes a whole VM: {per_vm}")
        g = groups.setdefault((id(o), ps.slice_group), {"obj": o, "ps": ps, "shape": shape, "chips": chips,
                                                  "have": 0, "what": []})
        g["have"] += ps.slice_pods * per_pod
        g["what"].append(f"{ps.slice_pods} pod(s) x {per_pod}")
    for g in groups.values():
        if g["have"] != g["chips"]:
            ps = g["ps"]
            yield hit(g["obj"], ps.path + ("metadata", "annotations", SLICE_ANNOTATION),
                      f"slice {g['shape']} has {g['chips']} chips but one slice group gets "
                      f"{' + '.join(g['what'])} = {g['have']} ({ps.what})")


TOPOLOGY_LABEL = catalog.node_labels.TPU_TOPOLOGY_LABEL
BY_ACCELERATOR = {g.accelerator: g for g in catalog.TPU_GENERATIONS.values()}


def static_shape(gen: catalog.TpuGeneration, text: str):
    """The shape of a node-pool topology of this generation, or None when no machine type
    of the device catalog forms it (a static slice is a whole node pool's topology)."""
    try:
        shape = gen.shape(text)
    except ValueError:
        return None
    return shape if gen.machines_for(shape) else None


def _topologies(gen: catalog.TpuGeneration) -> str:
    shapes = sorted({s for m in gen.machines for s in m.topologies}, key=lambda s: (s.chips, s.dims))
    texts = [s.text for s in shapes]
    return ", ".join(texts) if len(texts) <= 12 else ", ".join(texts[:12]) + ", ..."


def _static_pods(model):
    """(object, podset, generation, topology text) of pod templates that select a TPU topology
    by node label and carry no dynamic slice annotation."""
    for o, ps, shape, accel in _tpu_pods(model):
        topology = (ps.spec.get("nodeSelector") or {}).get(TOPOLOGY_LABEL)
        gen = BY_ACCELERATOR.get(accel)
        if shape is None and topology is not None and gen is not None:
            yield o, ps, gen, str(topology)


@rule("TP006", ERROR, f"a static TPU slice (nodeSelector {TOPOLOGY_LABEL}) that its pods cannot form: a topology the "
      f"generation has no node pool of, {TPU_RESOURCES[0]} per pod other than one VM's chips, or pods per slice "
      "(Job parallelism, LWS group size) x chips per pod other than the topology's chips",
      "for tpu-v6e-slice 4x4: 4 pods of 4 chips (ct6e-standard-4t); for 2x4: one pod of 8 chips, or two of 4")
def static_slices(model):
    groups: dict = {}
    for o, ps, gen, topology in _static_pods(model):
        shape = static_shape(gen, topology)
        at = ps.path + ("spec", "nodeSelector", TOPOLOGY_LABEL)
        if shape is None:
            yield hit(o, at, f"{topology!r} is not a {gen.accelerator} slice (topologies: {_topologies(gen)})")
            continue
        resource = TPU_RESOURCES[0]
        per_pod = ps.requests.get(resource, 0)
        vm_chips = sorted({m.chips for m in gen.machines_for(shape)})
        if per_pod not in vm_chips:
            yield hit(o, ps.path + ("spec", "containers"), f"pods request {per_pod} {resource}; a {gen.accelerator} "
                      f"slice pod takes a whole VM: {' or '.join(map(str, vm_chips))}")
            continue
        if ps.slice_group == "pod":
            continue   # pods of a Deployment or StatefulSet: which of them form one slice is not written down
        g = groups.setdefault((id(o), ps.slice_group), {"obj": o, "ps": ps, "shape": shape, "have": 0, "what": [],
                                                        "at": at})
        g["have"] += ps.slice_pods * per_pod
        g["what"].append(f"{ps.slice_pods} pod(s) x {per_pod}")
    for g in groups.values():
        if g["have"] != g["shape"].chips:
            yield hit(g["obj"], g["at"], f"slice {g['shape'].text} has {g['shape'].chips} chips but one slice group "
                      f"gets {' + '.join(g['what'])} = {g['have']} ({g['ps'].what})")
