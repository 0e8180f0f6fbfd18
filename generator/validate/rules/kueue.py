"""Kueue references and quotas: what otherwise surfaces as a pod stuck
SchedulingGated or a Workload that never admits."""
from __future__ import annotations

import json

from ...kernel import kueue_api, supply
from ..findings import ERROR, WARNING
from ..objects import describe
from . import hit, rule

KUEUE = "kueue.x-k8s.io"
# Kinds whose pods carry the queue label themselves under the pod integration.
POD_INTEGRATION = {("", "Pod"), ("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "ReplicaSet")}
QUEUE_LABEL = kueue_api.QUEUE_LABEL
QUEUE_ANNOTATION = kueue_api.QUEUE_LABEL   # same key; the annotation form was removed (kueue#7271)


CRONJOB = ("batch", "CronJob")
# Resources Kueue counts as they are: an uncovered one always blocks admission.
STANDARD_RESOURCES = {"cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/gpu", "google.com/tpu", "amd.com/gpu"}
JOB_TEMPLATE_LABELS = ("spec", "jobTemplate", "metadata", "labels")


def _labelled(model, key):
    """(object, path, value) for every object that carries label `key` where Kueue reads it:
    on the object, on a CronJob's job template (each Job it creates carries it; Kueue v0.17.4
    docs, tasks/run/run_cronjobs.md), or on the pod template of a pod-integration kind."""
    for o in model.objects:
        if (o.group, o.kind) == CRONJOB:
            labels = ((o.spec.get("jobTemplate") or {}).get("metadata") or {}).get("labels") or {}
            if isinstance(labels, dict) and key in labels:
                yield o, JOB_TEMPLATE_LABELS + (key,), labels[key]
        elif key in o.labels:
            yield o, ("metadata", "labels", key), o.labels[key]
        elif (o.group, o.kind) in POD_INTEGRATION:
            for ps in o.podsets:
                labels = ps.metadata.get("labels") or {}
                if key in labels:
                    yield o, ps.path + ("metadata", "labels", key), labels[key]


def resolve_queue(model, o, queue):
    """(LocalQueue, ClusterQueue) for a queue name in o's namespace; either may be None."""
    lq = model.get(KUEUE, "LocalQueue", queue, o.namespace)
    cq_name = lq.spec.get("clusterQueue") if lq else None
    return lq, (model.get(KUEUE, "ClusterQueue", cq_name) if cq_name else None)


def queued(model):
    """(object, ClusterQueue) for every queued object whose queue resolves."""
    seen = set()
    for o, _, queue in _labelled(model, QUEUE_LABEL):
        if id(o) in seen:
            continue
        seen.add(id(o))
        _, cq = resolve_queue(model, o, queue)
        if cq is not None:
            yield o, cq


def resource_groups(cq):
    return [g for g in _list(cq.spec.get("resourceGroups")) if isinstance(g, dict)]


def _covered_once(have_of: dict[int, set], cq) -> set:
    if id(cq) not in have_of:
        have_of[id(cq)] = covered(cq)
    return have_of[id(cq)]


def covered(cq) -> set:
    """The resources a ClusterQueue covers, as the supply model reads them."""
    return {r for g in supply.read_groups(cq.spec) for r in g.covered}


@rule("KQ001", ERROR, "the queue label `kueue.x-k8s.io/queue-name` names no LocalQueue in the object's namespace",
      "create the LocalQueue in that namespace or fix the label; otherwise the workload never admits "
      "(pods stay SchedulingGated)")
def queue_label_resolves(model):
    for o, path, queue in _labelled(model, QUEUE_LABEL):
        if model.get(KUEUE, "LocalQueue", queue, o.namespace) is None:
            yield hit(o, path, f"no LocalQueue {queue!r} in namespace {o.namespace or '(unset)'!r} "
                      f"(LocalQueues there: {describe(model.names(KUEUE, 'LocalQueue', o.namespace))})",
                      missing=f"LocalQueue {queue!r} in namespace {o.namespace!r}")


@rule("KQ002", ERROR, "a LocalQueue's spec.clusterQueue names no ClusterQueue",
      "create the ClusterQueue or fix the name; the LocalQueue stays inactive")
def local_queue_target(model):
    for lq in model.kueue("LocalQueue"):
        name = lq.spec.get("clusterQueue")
        if name and model.get(KUEUE, "ClusterQueue", name) is None:
            yield hit(lq, ("spec", "clusterQueue"), f"no ClusterQueue {name!r} "
                      f"(ClusterQueues: {describe(model.names(KUEUE, 'ClusterQueue'))})",
                      missing=f"ClusterQueue {name!r}")


@rule("KQ003", ERROR, "a ClusterQueue flavor names no ResourceFlavor",
      "create the ResourceFlavor (kustomize namePrefix/nameSuffix renames it but not this reference)")
def flavors_exist(model):
    for cq in model.kueue("ClusterQueue"):
        for i, g in enumerate(resource_groups(cq)):
            for j, f in enumerate(g.get("flavors") or []):
                name = f.get("name") if isinstance(f, dict) else None
                if name and model.get(KUEUE, "ResourceFlavor", name) is None:
                    yield hit(cq, ("spec", "resourceGroups", i, "flavors", j, "name"),
                              f"no ResourceFlavor {name!r} (ResourceFlavors: "
                              f"{describe(model.names(KUEUE, 'ResourceFlavor'))})", missing=f"ResourceFlavor {name!r}")


@rule("KQ004", ERROR, "a ResourceFlavor's spec.topologyName names no Topology",
      "create the Topology (kueue.x-k8s.io, the version the pinned Kueue serves) or fix the name")
def topology_exists(model):
    for rf in model.kueue("ResourceFlavor"):
        name = rf.spec.get("topologyName")
        if name and model.get(KUEUE, "Topology", name) is None:
            yield hit(rf, ("spec", "topologyName"),
                      f"no Topology {name!r} (Topologies: {describe(model.names(KUEUE, 'Topology'))})",
                      missing=f"Topology {name!r}")


def admission_checks(cq):
    """(path, name) of each admission check a ClusterQueue names, in either form."""
    strategy = cq.spec.get("admissionChecksStrategy")
    for i, ac in enumerate(_list(strategy.get("admissionChecks")) if isinstance(strategy, dict) else []):
        if isinstance(ac, dict) and isinstance(ac.get("name"), str) and ac["name"]:
            yield ("spec", "admissionChecksStrategy", "admissionChecks", i, "name"), ac["name"]
    for i, name in enumerate(_list(cq.spec.get("admissionChecks"))):   # v1beta1 plain list
        if isinstance(name, str):
            yield ("spec", "admissionChecks", i), name


def _list(value) -> list:
    return value if isinstance(value, list) else []


@rule("KQ005", ERROR, "a ClusterQueue admission check names no AdmissionCheck",
      "create the AdmissionCheck (e.g. controllerName accelerator.gke.io/slice for TPU slices); "
      "until then no workload in the queue admits")
def admission_checks_exist(model):
    for cq in model.kueue("ClusterQueue"):
        for path, name in admission_checks(cq):
            if model.get(KUEUE, "AdmissionCheck", name) is None:
                yield hit(cq, path, f"no AdmissionCheck {name!r} "
                          f"(AdmissionChecks: {describe(model.names(KUEUE, 'AdmissionCheck'))})",
                          missing=f"AdmissionCheck {name!r}")


@rule("KQ006", ERROR, "the priority label `kueue.x-k8s.io/priority-class` names no WorkloadPriorityClass",
      "create the WorkloadPriorityClass or fix the label; Kueue does not fall back, it retries forever")
def priority_label_resolves(model):
    for o, path, name in _labelled(model, kueue_api.PRIORITY_LABEL):
        if model.get(KUEUE, "WorkloadPriorityClass", name) is None:
            yield hit(o, path, f"no WorkloadPriorityClass {name!r} (WorkloadPriorityClasses: "
                      f"{describe(model.names(KUEUE, 'WorkloadPriorityClass'))})",
                      missing=f"WorkloadPriorityClass {name!r}")


@rule("KQ007", ERROR, "a queued pod requests a resource its ClusterQueue does not cover (ephemeral-storage "
      "included; on Autopilot the injected cpu/memory/ephemeral-storage defaults count)",
      "add the resource to coveredResources and to every flavor of that resource group")
def resources_covered(model):
    have_of: dict[int, set] = {}   # per ClusterQueue: a thousand workloads share a few
    for o, cq in queued(model):
        have = _covered_once(have_of, cq)
        for ps in o.podsets:
            for cpath, c in ps.containers():
                res = c.get("resources") or {}
                asked = {}
                for part in ("limits", "requests"):
                    for r in res.get(part) or {}:
                        asked[r] = cpath + ("resources", part, r)
                for r, path in sorted(asked.items()):
                    if r not in have:
                        # Kueue's Configuration can exclude or transform resources (resources.
                        # excludeResourcePrefixes, transformations: HAMi's gpucores, for example);
                        # without it in the input, such a resource is a note in an open world.
                        yield hit(o, path, f"requests {r}, which ClusterQueue {cq.name!r} does not cover "
                                  f"(covered: {describe(sorted(have))}); the workload never admits",
                                  missing=None if r in STANDARD_RESOURCES else
                                  f"a Kueue Configuration that excludes or transforms {r}")
                if model.autopilot:
                    for r in ("cpu", "memory", "ephemeral-storage"):
                        if r not in asked and r not in have:
                            yield hit(o, cpath + ("resources",), f"Autopilot injects a default {r} request, "
                                      f"which ClusterQueue {cq.name!r} does not cover")


@rule("KQ008", ERROR, "a ClusterQueue flavor names its resources differently from, or in another order than, the "
      "coveredResources of its group (Kueue's webhook: `must match the name in coveredResources`; a different "
      "count is the CRD's own CEL rule, CE001)",
      "give every flavor one quota per covered resource, in the coveredResources order")
def flavors_list_covered(model):
    for cq in model.kueue("ClusterQueue"):
        for i, g in enumerate(resource_groups(cq)):
            want = list(g.get("coveredResources") or [])
            for j, f in enumerate(g.get("flavors") or []):
                if not isinstance(f, dict):
                    continue
                have = [r.get("name") for r in f.get("resources") or [] if isinstance(r, dict)]
                if have != want and len(have) == len(want):
                    missing = [r for r in want if r not in have]
                    detail = f"misses {', '.join(missing)}" if missing else f"lists {have}"
                    yield hit(cq, ("spec", "resourceGroups", i, "flavors", j, "resources"),
                              f"flavor {f.get('name')!r} {detail}; coveredResources is {want}")


@rule("KQ009", ERROR, "one workload can never be admitted: it needs more than its ClusterQueue can ever get "
      "(pods x requests: Job parallelism, JobSet replicas x parallelism, LWS group size, one pod per Deployment "
      "pod; all pod sets of the Workload together, flavor by flavor; nominal quota plus what the cohort tree can "
      "lend, within borrowingLimit and the others' lendingLimit: generator/kernel/supply.py)",
      "raise the quota (or the borrowing limit) or shrink the workload; a warning when the input is an open "
      "world and the ClusterQueue is in a cohort (other members may lend from outside the input)")
def workload_fits(model):
    tree = supply.from_objects(o.body for kind in ("ClusterQueue", "Cohort", "ResourceFlavor")
                               for o in model.known(KUEUE, kind))
    for o, cq in queued(model):
        if cq.name not in tree.cqs:
            continue
        verdict = supply.never(tree, cq.name, o.podsets)
        if verdict is None or verdict.most is None:    # an uncovered resource is KQ007's
            continue
        ps = next(ps for ps in o.podsets if ps.name == verdict.podset)
        # Open world (files on their own, no --context): cohort members outside the input may lend more.
        partial = not model.closed and tree.cqs[cq.name].parent is not None
        yield hit(o, ps.path, verdict.message, severity=WARNING if partial else None)


@rule("KQ010", ERROR, "the queue name is given as an annotation, which Kueue no longer reads (kueue#7271)",
      "use the label kueue.x-k8s.io/queue-name on the top-level object")
def queue_annotation(model):
    for o in model.objects:
        if QUEUE_ANNOTATION in o.annotations:
            yield hit(o, ("metadata", "annotations", QUEUE_ANNOTATION), "queue name as an annotation is ignored")
        for ps in o.podsets:
            if QUEUE_ANNOTATION in (ps.metadata.get("annotations") or {}):
                yield hit(o, ps.path + ("metadata", "annotations", QUEUE_ANNOTATION),
                          "queue name as an annotation is ignored")


@rule("KQ011", WARNING, "a queued Job or JobSet sets spec.suspend, which Kueue owns",
      "drop spec.suspend; Kueue's webhook suspends queued jobs, and a value in Git makes Argo CD fight "
      "Kueue (argo-cd#10600)")
def suspend_in_git(model):
    for o, _ in queued(model):
        if (o.group, o.kind) in (("batch", "Job"), ("jobset.x-k8s.io", "JobSet")) and "suspend" in o.spec:
            yield hit(o, ("spec", "suspend"), f"spec.suspend: {json.dumps(o.spec['suspend'])} in the manifest")


@rule("KQ012", ERROR, "a CronJob carries the queue label on its own metadata, where Kueue never reads it",
      "put kueue.x-k8s.io/queue-name in spec.jobTemplate.metadata.labels (Kueue v0.17.4 docs, Run A CronJob)")
def cronjob_queue_label(model):
    for o in model.objects:
        if (o.group, o.kind) == CRONJOB and QUEUE_LABEL in o.labels:
            placed = ((o.spec.get("jobTemplate") or {}).get("metadata") or {}).get("labels") or {}
            if QUEUE_LABEL not in placed:
                yield hit(o, ("metadata", "labels", QUEUE_LABEL), "the Jobs this CronJob creates do not carry the "
                          "label, so Kueue does not queue them")
