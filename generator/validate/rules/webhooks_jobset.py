"""The JobSet webhook's create-time checks that WH001/WH002 (webhooks.py) do not hold:
JobSet v0.11.1 pkg/webhooks/jobset_webhook.go (jobSetWebhook.ValidateCreate,
validateFailurePolicy's rule names, validateCoordinator, validateCoordinatorLabelValue,
validateVolumeClaimPolicies, validateReplicatedJobsVolumeClaims), after the webhook's
Default and the CRD's structural defaults (groupName "default", rule names
failurePolicyRule<i>). Feature gates at their v0.11.1 defaults (pkg/features: InPlaceRestart
off). Messages are the webhook's own."""
from __future__ import annotations

import re

from .. import apierrors as E, apimachinery as M
from ..findings import ERROR
from . import hit, rule

JOBSET = "jobset.x-k8s.io"
MAX_MANAGED_BY = 63           # maxManagedByLength
MAX_VOLUME_CLAIM = 63         # maxVolumeClaimLength
MAX_INT32 = 2**31 - 1
DNS1035_TOO_LONG = "must be no more than 63 characters"   # dns1035MaxLengthExceededErrorMsg
GROUP_NAME_TOO_LONG = ".spec.replicatedJob[].groupName is too long, must be less than 63 characters"
SUBDOMAIN_TOO_LONG = ".spec.network.subdomain is too long, must be less than 63 characters"
RULE_NAME = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")   # ruleNameFmt
COORDINATOR_KEY = "jobset.sigs.k8s.io/coordinator"                   # jobset.CoordinatorKey


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _list(v) -> list:
    return v if isinstance(v, list) else []


def _int(v, default: int) -> int:
    return v if M.is_int(v) else default


def _replaced(messages: list[str], too_long: str) -> list[str]:
    """The webhook swaps IsDNS1035Label's length message for its own."""
    return [too_long if DNS1035_TOO_LONG in m else m for m in messages]


@rule("WH100", ERROR, "a JobSet the JobSet webhook refuses: a network subdomain that is no DNS-1123 subdomain and "
      "DNS-1035 label, a bad managedBy, replicas x parallelism above 2^31-1, a groupName that is no DNS-1035 label, "
      "the InPlaceRestart strategy while its feature gate is off (JobSet webhook: jobSetWebhook.ValidateCreate)",
      "subdomain and groupName: lowercase letters, digits and '-', starting with a letter, at most 63 characters; "
      "managedBy: a domain-prefixed path such as kueue.x-k8s.io/multikueue")
def jobset_spec(model):
    for o in model.all(JOBSET, "JobSet"):
        spec = o.spec
        strategy = _dict(spec.get("failurePolicy")).get("restartStrategy")
        if strategy == "InPlaceRestart":
            yield hit(o, ("spec", "failurePolicy", "restartStrategy"),
                      "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is disabled")
        subdomain = _dict(spec.get("network")).get("subdomain")
        if isinstance(subdomain, str) and subdomain:
            at = ("spec", "network", "subdomain")
            for message in M.dns1123_subdomain(subdomain) + _replaced(M.dns1035_label(subdomain), SUBDOMAIN_TOO_LONG):
                yield hit(o, at, E.invalid(subdomain, message))
        manager = spec.get("managedBy")
        if isinstance(manager, str):
            for message in M.domain_prefixed_path(manager):
                yield hit(o, ("spec", "managedBy"), message)
            if len(manager) > MAX_MANAGED_BY:
                yield hit(o, ("spec", "managedBy"), f"Too long: may not be longer than {MAX_MANAGED_BY}")
        for i, rj in enumerate(_list(spec.get("replicatedJobs"))):
            yield from _replicated_job(o, ("spec", "replicatedJobs", i), _dict(rj))


def _replicated_job(o, at, rj):
    job = _dict(_dict(rj.get("template")).get("spec"))
    parallelism, replicas = _int(job.get("parallelism"), 1), _int(rj.get("replicas"), 1)
    if parallelism * replicas > MAX_INT32:
        yield hit(o, at, f"the product of replicas and parallelism must not exceed {MAX_INT32} for replicatedJob "
                         f"'{rj.get('name')}'")
    group = rj.get("groupName", "default")   # CRD default
    if isinstance(group, str):
        for message in _replaced(M.dns1035_label(group), GROUP_NAME_TOO_LONG):
            yield hit(o, at + ("groupName",), E.invalid(group, message))


@rule("WH101", ERROR, "a JobSet failurePolicy rule name the JobSet webhook refuses: longer than 128 characters, or not "
      "a letter followed by letters, digits, '_', ',' or ':' (JobSet webhook: validateFailurePolicy)",
      "name failure policy rules like restartOnPreemption, or leave the name out (failurePolicyRule<i>)")
def jobset_rule_names(model):
    for o in model.all(JOBSET, "JobSet"):
        for i, r in enumerate(_list(_dict(o.spec.get("failurePolicy")).get("rules"))):
            name = _dict(r).get("name")
            if not isinstance(name, str):
                continue
            at = ("spec", "failurePolicy", "rules", i, "name")
            if not 1 <= len(name) <= 128:
                yield hit(o, at, f"invalid failure policy rule name of length {len(name)}, the rule name must be at "
                                 f"least 1 characters long and at most 128 characters long")
            if not RULE_NAME.match(name):
                yield hit(o, at, f"invalid failure policy rule name '{name}', a failure policy rule name must start "
                                 f"with an alphabetic character, optionally followed by a string of alphanumeric "
                                 f"characters or '_,:', and must end with an alphanumeric character or '_'")


@rule("WH102", ERROR, "a JobSet coordinator the JobSet webhook refuses: a replicated Job that does not exist, a job or "
      "pod index out of range, a non-Indexed Job, or an endpoint too long for the coordinator label (JobSet webhook: "
      "validateCoordinator, validateCoordinatorLabelValue)",
      "point the coordinator at an Indexed replicated Job with jobIndex < replicas and podIndex < completions")
def jobset_coordinator(model):
    for o in model.all(JOBSET, "JobSet"):
        coordinator = o.spec.get("coordinator")
        if not isinstance(coordinator, dict):
            continue
        at = ("spec", "coordinator")
        message = _coordinator(o, coordinator)
        if message:
            yield hit(o, at, message)
        # validateCoordinatorLabelValue: controllers.CoordinatorEndpoint, <name>-<rjob>-<job>-<pod>.<subdomain>.
        subdomain = _dict(o.spec.get("network")).get("subdomain") or o.name
        endpoint = (f"{o.name}-{coordinator.get('replicatedJob', '')}-{_int(coordinator.get('jobIndex'), 0)}-"
                    f"{_int(coordinator.get('podIndex'), 0)}.{subdomain}")
        errors = M.label_value(endpoint)
        if errors and not o.generated_name:
            yield hit(o, at, f'spec will lead to invalid label value "{endpoint}" for coordinator label '
                             f'"{COORDINATOR_KEY}" (long JobSet / ReplicatedJob / SubDomain name?): {", ".join(errors)}')


def _coordinator(o, coordinator) -> str:
    """validateCoordinator: the first problem, as the webhook returns one error."""
    name = coordinator.get("replicatedJob")
    rj = next((_dict(r) for r in _list(o.spec.get("replicatedJobs")) if _dict(r).get("name") == name), None)
    if rj is None:
        return f"coordinator replicatedJob {name} does not exist"
    job_index, pod_index = _int(coordinator.get("jobIndex"), 0), _int(coordinator.get("podIndex"), 0)
    if not 0 <= job_index < _int(rj.get("replicas"), 1):
        return f"coordinator job index {job_index} is invalid for replicatedJob {name}"
    job = _dict(_dict(rj.get("template")).get("spec"))
    completions = job.get("completions")
    if job.get("completionMode") != "Indexed" or not M.is_int(completions):
        return "job for coordinator pod must be indexed completion mode, and completions number must be set"
    if not 0 <= pod_index < completions:
        return f"coordinator pod index {pod_index} is invalid for replicatedJob {name} job index {job_index}"
    return ""


@rule("WH103", ERROR, "a JobSet volumeClaimPolicies template the JobSet webhook refuses: a repeated or invalid name, a "
      "PVC name (<template>-<jobset>) over 63 characters, a pod volume of the same name, or no container mounting it "
      "(JobSet webhook: validateVolumeClaimPolicies, validateReplicatedJobsVolumeClaims)",
      "give each claim template a unique short name and mount it (volumeMounts[].name) in a container; do not also "
      "declare it under volumes")
def jobset_volume_claims(model):
    for o in model.all(JOBSET, "JobSet"):
        names: set = set()
        rjobs = _list(o.spec.get("replicatedJobs"))
        for i, policy in enumerate(_list(o.spec.get("volumeClaimPolicies"))):
            for j, template in enumerate(_list(_dict(policy).get("templates"))):
                name = _dict(_dict(template).get("metadata")).get("name")
                if not isinstance(name, str):
                    continue
                at = ("spec", "volumeClaimPolicies", i, "templates", j, "metadata", "name")
                yield from _claim(o, at, name, names, rjobs)
                names.add(name)


def _claim(o, at, name, names, rjobs):
    if name in names:
        yield hit(o, at, E.invalid(name, "names must be unique for VolumeClaimPolicies template"))
    for message in M.dns1123_subdomain(name):
        yield hit(o, at, E.invalid(name, message))
    if not o.generated_name and len(f"{name}-{o.name}") > MAX_VOLUME_CLAIM:   # controllers.GeneratePVCName
        yield hit(o, at, E.invalid(name, "VolumeClaimPolicies template name is too long"))
    mounted = False
    for i, rj in enumerate(rjobs):
        pod = _dict(_dict(_dict(_dict(_dict(rj).get("template")).get("spec")).get("template")).get("spec"))
        for k, volume in enumerate(_list(pod.get("volumes"))):
            if _dict(volume).get("name") == name:
                yield hit(o, ("spec", "replicatedJobs", i, "template", "spec", "template", "spec", "volumes", k, "name"),
                          E.invalid(name, f"volume name conflicts with VolumeClaimPolicy template name: {name}"))
        containers = _list(pod.get("initContainers")) + _list(pod.get("containers"))
        mounted = mounted or any(_dict(m).get("name") == name for c in containers
                                 for m in _list(_dict(c).get("volumeMounts")))
    if not mounted:
        yield hit(o, ("spec", "replicatedJobs"), f"Invalid value: replicatedJob containers don't have a matching "
                                                 f"volumeMount: {name} from VolumeClaimPolicies")
