"""A team's own manifest (kind `manifest`) placed on the platform: each object as written,
with the workload entry's namespace; the queued ones get the queue label, the tier's
priority (the WorkloadPriorityClass label for JobSets and LeaderWorkerSets, the pods'
PriorityClass for Jobs and Deployments, as the generated kinds do), and the accelerator's
node selector (and, on TPUs, the TPU taint's toleration) on every pod template. Pod
hardening and the entry's `pod:` additions follow in podpolicy, as for every workload."""
from __future__ import annotations

from ...kernel import catalog, demand, kueue_api
from ...model.kinds.manifest import Manifest
from .. import core, gpudirect_objects
from .common import BuildContext


def _place(template: dict, selector: dict, toleration: dict | None, priority_class: str | None) -> None:
    spec = template.setdefault("spec", {})
    spec.setdefault("nodeSelector", {}).update(selector)
    if toleration is not None:
        tolerations = spec.setdefault("tolerations", [])
        if not any(t.get("key") == toleration["key"] for t in tolerations if isinstance(t, dict)):
            tolerations.append(dict(toleration))
    if priority_class is not None:
        spec["priorityClassName"] = priority_class


def _pod_labels(template: dict, queue: str, priority: str | None) -> None:
    """Kueue admits a Deployment's pods one by one (pod integration), reading the queue and the
    WorkloadPriorityClass from each Pod's own labels (pkg/controller/jobframework/interface.go
    QueueName, WorkloadPriorityClassName, v0.12.3 to v0.19.2): both go on the pod template. Kueue's
    Deployment webhook would copy them there at admission (pkg/controller/jobs/deployment/
    deployment_webhook.go Default); written in Git, Argo CD sees no drift and plan reads them."""
    labels = template.setdefault("metadata", {}).setdefault("labels", {})
    labels[kueue_api.QUEUE_LABEL] = queue
    if priority is not None:
        labels[kueue_api.PRIORITY_LABEL] = priority


def _at(obj: dict, path: tuple) -> dict:
    node = obj
    for part in path:
        node = node[part]
    return node


def build(ctx: BuildContext, w: Manifest) -> None:
    accel = ctx.accelerator(w)
    selector = core.accelerator_selector(accel)
    toleration = catalog.node_labels.TPU_TAINT.toleration() if w.device == "tpu" else None
    by_label = w.priority_kind == "workloadPriorityClass"
    for obj in w.objects:
        meta = obj.setdefault("metadata", {})
        meta["namespace"] = w.namespace
        if demand.is_workload(obj):
            labels = meta.setdefault("labels", {})
            labels[kueue_api.QUEUE_LABEL] = w.queue
            if by_label:
                labels[kueue_api.PRIORITY_LABEL] = ctx.spec.workload_priority_class(w.priority)
            pc = None if by_label else ctx.spec.priority_class(w.priority)
            for ps in demand.podsets(obj):
                template = _at(obj, ps.path)
                _place(template, selector, toleration, pc)
                if obj.get("kind") == "Deployment":
                    _pod_labels(template, w.queue, labels.get(kueue_api.PRIORITY_LABEL))
        _gpudirect(ctx, w, obj)
        ctx.add_custom(obj)


def _gpudirect(ctx: BuildContext, w: Manifest, obj: dict) -> None:
    """`gpudirect: true`: the pod sets of several whole-node GPU pods get the type's parts."""
    g = w.uses_gpudirect(ctx.checks)
    if g is None:
        return
    parts = gpudirect_objects.pod_parts(g, ctx.profile.autopilot)
    for o, ps in w.gpudirect_podsets(ctx.checks, [obj]):
        gpudirect_objects.decorate(_at(o, ps.path), parts, catalog.node_labels.GPU_RESOURCE)
