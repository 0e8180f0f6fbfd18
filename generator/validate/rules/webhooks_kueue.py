"""Kueue v0.17.4's validating webhooks for its own objects, the checks its CRDs do not
already state as CEL rules (CE001) and KQ008/KQ014 do not hold: pkg/webhooks/
clusterqueue_webhook.go (validateClusterQueueSpec: validateResourceGroups, ValidateLabelSelector,
validateFairSharing, validateTotalFlavors,
validateTotalCoveredResources, validateFlavorResourceCombinations;
validateAdmissionCheckOnFlavors), cohort_webhook.go (validateCohort), common.go
(validateResourceName) and resourceflavor_webhook.go (ValidateResourceFlavor:
nodeLabels, validateNodeTaints, validateTolerations). Messages are the webhook's own."""
from __future__ import annotations

import re
from decimal import Decimal

from ...kernel import quantity
from .. import apierrors as E, apimachinery as M
from ..findings import ERROR
from . import hit, rule

KUEUE = "kueue.x-k8s.io"
MAX_FLAVORS = 256            # validateTotalFlavors
MAX_COVERED = 256            # validateTotalCoveredResources
MAX_COMBINATIONS = 512       # validateFlavorResourceCombinations
MIN_WEIGHT = Decimal("1e-9")  # validateFairSharing: resource.MustParse("1n")


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _list(v) -> list:
    return v if isinstance(v, list) else []


def _quantity(v) -> Decimal | None:
    try:
        return quantity.parse(v)
    except ValueError:
        return None


@rule("WH120", ERROR, "a ClusterQueue or Cohort the Kueue webhook refuses: a resource name that is no label key, a bad "
      "namespaceSelector, a fair-sharing weight below 0 or at most 1n, more than "
      "256 flavors or covered resources, more than 512 flavor-resource pairs in a group, an admission check onFlavors "
      "entry that is no flavor of the queue (Kueue webhooks: validateClusterQueueSpec, validateResourceGroups, "
      "validateFairSharing, validateAdmissionCheckOnFlavors, validateCohort)",
      "resource names like cpu or nvidia.com/gpu; restrict admission checks to flavors the queue has")
def queue_specs(model):
    for kind in ("ClusterQueue", "Cohort"):
        for o in model.all(KUEUE, kind):
            groups = _list(o.spec.get("resourceGroups"))
            yield from _resource_groups(o, ("spec", "resourceGroups"), groups)
            yield from _fair_sharing(o, _dict(o.spec.get("fairSharing")))
            if kind == "ClusterQueue":
                for path, message in M.label_selector(o.spec.get("namespaceSelector"), ("spec", "namespaceSelector")):
                    yield hit(o, path, message)
                yield from _totals(o, groups)
                yield from _on_flavors(o, groups)


def _resource_groups(o, at, groups):
    """validateResourceGroups' resource names (a repeated resource or flavor and a negative quota are KQ014's)."""
    for i, rg in enumerate(groups):
        for j, name in enumerate(_list(_dict(rg).get("coveredResources"))):
            for message in M.qualified_name(str(name)):   # content.IsLabelKey
                yield hit(o, at + (i, "coveredResources", j), E.invalid(name, message))


def _fair_sharing(o, fs):
    if "weight" not in fs:
        return
    weight = _quantity(fs.get("weight"))
    if weight is None:
        return
    at = ("spec", "fairSharing")
    if weight < 0:
        yield hit(o, at, E.invalid(str(fs["weight"]), E.NEGATIVE))
    if 0 < weight <= MIN_WEIGHT:
        yield hit(o, at, E.invalid(str(fs["weight"]), "When not 0, weight must be > 10e-9"))


def _totals(o, groups):
    at = ("spec", "resourceGroups")
    flavors = sum(len(_list(_dict(rg).get("flavors"))) for rg in groups)
    if flavors > MAX_FLAVORS:
        yield hit(o, at, E.invalid(flavors, f"total number of flavors across all resourceGroups must be ≤ {MAX_FLAVORS}, "
                                            f"got {flavors}"))
    covered = sum(len(_list(_dict(rg).get("coveredResources"))) for rg in groups)
    if covered > MAX_COVERED:
        yield hit(o, at, E.invalid(covered, f"total number of covered resources across all resourceGroups must be ≤ "
                                            f"{MAX_COVERED}, got {covered}"))
    for i, rg in enumerate(groups):
        pairs = sum(len(_list(_dict(fq).get("resources"))) for fq in _list(_dict(rg).get("flavors")))
        if pairs > MAX_COMBINATIONS:
            yield hit(o, at + (i,), E.invalid(pairs, f"number of flavor-resource combinations in a resourceGroup must "
                                                     f"be ≤ {MAX_COMBINATIONS}, got {pairs}"))


def _on_flavors(o, groups):
    flavors = [_dict(fq).get("name") for rg in groups for fq in _list(_dict(rg).get("flavors"))]
    checks = _list(_dict(o.spec.get("admissionChecksStrategy")).get("admissionChecks"))
    for i, check in enumerate(checks):
        for j, flavor in enumerate(_list(_dict(check).get("onFlavors"))):
            if flavor not in flavors:
                # field.NotSupported lists the queue's flavors (utilqueue.AllFlavors, unordered upstream).
                yield hit(o, ("spec", "admissionChecksStrategy", "admissionChecks", i, "onFlavors", j),
                          E.not_supported(flavor, sorted(str(f) for f in flavors)))


@rule("WH121", ERROR, "a ResourceFlavor the Kueue webhook refuses: a nodeLabels key or value the API server would "
      "refuse on a node, a taint with a bad key or value or repeated for the same effect, a toleration key that is no "
      "label key (Kueue webhook: ValidateResourceFlavor, validateNodeTaints, validateTolerations)",
      "nodeLabels as on the nodes (e.g. cloud.google.com/gke-accelerator: nvidia-l4); one taint per key and effect")
def resource_flavors(model):
    for o in model.all(KUEUE, "ResourceFlavor"):
        labels = o.spec.get("nodeLabels")
        for path, message in M.label_selector({"matchLabels": labels} if isinstance(labels, dict) else None,
                                              ("spec", "nodeLabels")):
            yield hit(o, path[:2], message)   # metavalidation.ValidateLabels reports at spec.nodeLabels
        yield from _taints(o, _list(o.spec.get("nodeTaints")))
        for i, t in enumerate(_list(o.spec.get("tolerations"))):
            key = _dict(t).get("key")
            if isinstance(key, str) and key:
                for message in M.qualified_name(key):
                    yield hit(o, ("spec", "tolerations", i, "key"), E.invalid(key, message))


def _taints(o, taints):
    seen: set = set()
    for i, t in enumerate(taints):
        t = _dict(t)
        at = ("spec", "nodeTaints", i)
        key, value = t.get("key"), t.get("value", "")
        if isinstance(key, str):
            for message in M.qualified_name(key):
                yield hit(o, at + ("key",), E.invalid(key, message))
        if isinstance(value, str) and M.label_value(value):
            yield hit(o, at + ("value",), E.invalid(value, ";".join(M.label_value(value))))
        if (t.get("effect"), key) in seen:
            yield hit(o, at, E.duplicate(t) + ": taints must be unique by key and effect pair")
            continue
        seen.add((t.get("effect"), key))


# ----------------------------------------------------------------- job integrations (jobframework)

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"                                    # constants.QueueLabel
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"                          # constants.PrebuiltWorkloadLabel
SYNC_COMPLETION = "kueue.x-k8s.io/job-completions-equal-parallelism"        # job.JobCompletionsEqualParallelismAnnotation
REQUIRED = "kueue.x-k8s.io/podset-required-topology"                        # kueue.PodSet*Annotation
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE_REQUIRED = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
GROUP_NAME = "kueue.x-k8s.io/podset-group-name"
GO_BOOLS = ("1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False")   # strconv.ParseBool


@rule("WH122", ERROR, "a queued Job the Kueue job webhook refuses: a prebuilt-workload-name label that is no DNS-1123 "
      "subdomain, a job-completions-equal-parallelism annotation that is no boolean, or true on a NonIndexed Job or "
      "one whose completions differ from parallelism (Kueue webhooks: jobframework.ValidatePrebuiltWorkloadName, "
      "JobWebhook.validateSyncCompletionCreate)",
      "name prebuilt Workloads like any object; completions-equal-parallelism needs an Indexed Job with completions = "
      "parallelism")
def queued_job_labels(model):
    for o in model.objects:
        prebuilt = o.labels.get(PREBUILT)
        if isinstance(prebuilt, str):
            errors = M.dns1123_subdomain(prebuilt)
            if errors:   # ValidateLabelAsCRDName joins the messages with ","
                yield hit(o, ("metadata", "labels", PREBUILT), E.invalid(prebuilt, ",".join(errors)))
        if o.group == "batch" and o.kind == "Job" and SYNC_COMPLETION in o.annotations:
            yield from _sync_completion(o, str(o.annotations[SYNC_COMPLETION]))


def _sync_completion(o, text):
    at = ("metadata", "annotations", SYNC_COMPLETION)
    if text not in GO_BOOLS:
        yield hit(o, at, E.invalid(text, f'strconv.ParseBool: parsing {E.value(text)}: invalid syntax'))
        return
    if text not in ("1", "t", "T", "TRUE", "true", "True"):
        return
    if o.spec.get("completionMode", "NonIndexed") == "NonIndexed":
        yield hit(o, at, E.invalid(text, "should not be enabled for NonIndexed jobs"))
    parallelism, completions = o.spec.get("parallelism", 1), o.spec.get("completions", 1)
    if parallelism != completions:
        yield hit(o, ("spec", "completions"), E.invalid(o.spec.get("completions"), f"should be equal to parallelism "
                                                                                   f"when {SYNC_COMPLETION} is "
                                                                                   f"annotation is true"))


@rule("WH123", ERROR, "Kueue topology annotations on a queued pod template that its webhook refuses: more than one of "
      "required / preferred / unconstrained, a topology level that is no label key, a non-boolean unconstrained, a "
      "slice size that is no number >= 1 or above the pod set's pods, a slice topology without a slice size or the "
      "reverse, a group name that is a number or without required / preferred topology (Kueue webhooks: "
      "jobframework.ValidateTASPodSetRequest, ValidateSliceSizeAnnotationUpperBound)",
      "one of podset-required-topology / podset-preferred-topology (a node label such as "
      "cloud.google.com/gce-topology-block) per pod template; slice size with slice topology, at most the pods")
def topology_annotations(model):
    for o, ps in model.workloads():
        if QUEUE_LABEL not in o.labels or not ps.path:
            continue
        at = ps.path + ("metadata", "annotations")
        for path, message in tas_request(at, ps.annotations):
            yield hit(o, path, message)
        size = ps.annotations.get(SLICE_SIZE)
        if isinstance(size, str) and _go_int32(size) is not None and _go_int32(size) > ps.count:
            yield hit(o, at + (SLICE_SIZE,), E.invalid(size, f"must not be greater than pod set count {ps.count}"))


def _go_int32(text: str) -> int | None:
    """strconv.ParseInt(s, 10, 32)."""
    if not re.fullmatch(r"[-+]?\d+", text):
        return None
    v = int(text)
    return v if -2**31 <= v < 2**31 else None


def tas_request(at: tuple, annotations: dict):
    """ValidateTASPodSetRequest (its multi-level constraints annotation aside): (path, message)."""
    found = {k: k in annotations for k in (REQUIRED, PREFERRED, UNCONSTRAINED, SLICE_REQUIRED, SLICE_SIZE, GROUP_NAME)}
    if found[REQUIRED] + found[PREFERRED] + found[UNCONSTRAINED] > 1:
        yield at, (f'Invalid value: must not contain more than one topology annotation: ["{REQUIRED}", "{PREFERRED}", '
                   f'"{UNCONSTRAINED}"]')
    for key in (REQUIRED, PREFERRED, SLICE_REQUIRED):
        if found[key]:
            for message in M.qualified_name(str(annotations[key])):   # ValidateLabelName
                yield at + (key,), E.invalid(str(annotations[key]), message)
    if found[GROUP_NAME]:
        yield from _group_name(at, str(annotations[GROUP_NAME]), found)
    if found[UNCONSTRAINED] and str(annotations[UNCONSTRAINED]) not in GO_BOOLS:
        yield at + (UNCONSTRAINED,), E.invalid(str(annotations[UNCONSTRAINED]), "must be a boolean value")
    yield from _slice(at, annotations, found)


def _slice(at, annotations, found):
    """validateSliceSizeAnnotation and the slice annotations' pairing."""
    if found[SLICE_SIZE]:
        size = _go_int32(str(annotations[SLICE_SIZE]))
        if size is None:
            yield at + (SLICE_SIZE,), E.invalid(str(annotations[SLICE_SIZE]), "must be a numeric value")
        elif size < 1:
            yield at + (SLICE_SIZE,), E.invalid(str(annotations[SLICE_SIZE]), "must be greater than or equal to 1")
    if found[SLICE_REQUIRED] and not found[SLICE_SIZE]:
        yield at + (SLICE_SIZE,), E.required(f"must be set when '{SLICE_REQUIRED}' is specified")
    if found[SLICE_SIZE] and not found[SLICE_REQUIRED]:
        yield at + (SLICE_SIZE,), E.forbidden(f"may not be set when '{SLICE_REQUIRED}' is not specified")


def _group_name(at, name, found):
    path = at + (GROUP_NAME,)
    if re.fullmatch(r"\d+", name) and int(name) < 2**64:   # strconv.ParseUint(name, 10, 64) succeeds
        yield path, E.invalid(name, "must not be a number")
    if found[SLICE_SIZE]:
        yield path, E.forbidden(f"may not be set when '{SLICE_SIZE}' is specified")
    if found[SLICE_REQUIRED]:
        yield path, E.forbidden(f"may not be set when '{SLICE_REQUIRED}' is specified")
    if not found[PREFERRED] and not found[REQUIRED]:
        yield path, E.forbidden(f"may not be set when neither '{PREFERRED}' nor '{REQUIRED}' is specified")
