"""Checks that live in the admission webhooks (and, for Managed Prometheus, the
config builder) of the pinned controllers, which a valid-looking manifest can hit:
JobSet v0.11.1 pkg/webhooks/jobset_webhook.go, LWS v0.8.0 pkg/webhooks/
leaderworkerset_webhook.go, Kueue v0.17.4 pkg/controller/jobframework/validation.go
and pkg/controller/jobs/job/job_webhook.go, Managed Prometheus v0.17.2
pkg/operator/apis/monitoring/v1/pod_config.go. Each rule names the function it
follows; messages are the webhook's own. Checks the CRDs already state as CEL rules
are left to CE001."""
from __future__ import annotations

import re

from .. import apierrors as E
from ..findings import ERROR
from . import hit, rule

JOBSET = "jobset.x-k8s.io"
LWS = "leaderworkerset.x-k8s.io"
MONITORING = "monitoring.googleapis.com"

# k8s.io/apimachinery/pkg/util/validation: IsDNS1035Label, IsDNS1123Subdomain and their messages
# (RegexError(msg, fmt, examples...)).
DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1035_MESSAGE = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                   "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
                   "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_SUBDOMAIN_MESSAGE = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                             "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
                             r"used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
MAX_LABEL = 63


def dns1035(s: str, too_long: str = f"must be no more than {MAX_LABEL} characters") -> list[str]:
    out = [too_long] if len(s) > MAX_LABEL else []
    return out + ([DNS1035_MESSAGE] if not DNS1035.match(s) else [])


def dns1123_subdomain(s: str) -> list[str]:
    out = ["must be no more than 253 characters"] if len(s) > 253 else []
    return out + ([DNS1123_SUBDOMAIN_MESSAGE] if not DNS1123_SUBDOMAIN.match(s) else [])


def _list(v) -> list:
    return v if isinstance(v, list) else []


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _int(v, default: int) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


# ----------------------------------------------------------------- JobSet

# jobset_webhook.go constants (v0.11.1).
JOB_NAME_TOO_LONG = "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
POD_NAME_TOO_LONG = "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
# validOnJobFailureReasons: batch/v1 JobReason* constants.
JOB_FAILURE_REASONS = ("BackoffLimitExceeded", "DeadlineExceeded", "FailedIndexes", "MaxFailedIndexesExceeded",
                       "PodFailurePolicy")


@rule("WH001", ERROR, "a JobSet the JobSet webhook refuses: names of the Jobs or pods it generates longer than 63 "
      "characters, dependsOn on the first or a later replicated Job, a successPolicy target that is no replicated Job "
      "(JobSet webhook: jobSetWebhook.ValidateCreate)",
      "shorten the JobSet or replicated Job name; name existing replicated Jobs in successPolicy and dependsOn")
def jobset_create(model):
    for o in model.all(JOBSET, "JobSet"):
        names: set = set()
        for i, rj in enumerate(_list(o.spec.get("replicatedJobs"))):
            rj = _dict(rj)
            at = ("spec", "replicatedJobs", i)
            yield from _jobset_names(o, at, rj)
            for dep in _list(rj.get("dependsOn")):
                dep_name = _dict(dep).get("name")
                if i == 0:
                    yield hit(o, at + ("dependsOn",), "DependsOn can't be set for the first ReplicatedJob")
                    break
                if dep_name not in names:
                    yield hit(o, at + ("dependsOn",), f"replicatedJob: {rj.get('name')} cannot depend on "
                                                      f"replicatedJob: {dep_name}")
            names.add(rj.get("name"))
        for target in _list(_dict(o.spec.get("successPolicy")).get("targetReplicatedJobs")):
            if target not in names:
                yield hit(o, ("spec", "successPolicy", "targetReplicatedJobs"),
                          f"invalid replicatedJob name '{target}' does not appear in .spec.ReplicatedJobs")


def _jobset_names(o, at, rj):
    """placement.GenJobName and GenPodName (with the 5-character pod suffix) must be DNS-1035 labels."""
    name = str(rj.get("name") or "")
    replicas = _int(rj.get("replicas"), 1)
    job_name = f"{o.name}-{name}-{replicas - 1}"
    for message in dns1035(job_name, JOB_NAME_TOO_LONG):
        yield hit(o, at + ("name",), E.invalid(job_name, message))
    spec = _dict(_dict(rj.get("template")).get("spec"))
    completions = spec.get("completions")
    if spec.get("completionMode") == "Indexed" and isinstance(completions, int):
        pod_name = f"{o.name}-{name}-{replicas - 1}-{completions - 1}-abcde"
        for message in dns1035(pod_name, POD_NAME_TOO_LONG):
            if message == POD_NAME_TOO_LONG:   # the webhook reports the job name with this message
                yield hit(o, at + ("name",), E.invalid(job_name, message))


@rule("WH002", ERROR, "a JobSet failurePolicy rule the JobSet webhook refuses: a target that is no replicated Job, an "
      "unknown Job failure reason, a repeated rule name (JobSet webhook: validateFailurePolicy)",
      "target existing replicated Jobs, use batch/v1 Job failure reasons, give each rule its own name")
def jobset_failure_policy(model):
    for o in model.all(JOBSET, "JobSet"):
        names = {_dict(rj).get("name") for rj in _list(o.spec.get("replicatedJobs"))}
        seen: dict = {}
        for i, r in enumerate(_list(_dict(o.spec.get("failurePolicy")).get("rules"))):
            r = _dict(r)
            at = ("spec", "failurePolicy", "rules", i)
            seen.setdefault(r.get("name"), []).append(i)
            for target in _list(r.get("targetReplicatedJobs")):
                if target not in names:
                    yield hit(o, at + ("targetReplicatedJobs",), f"invalid replicatedJob name '{target}' in failure "
                                                                 f"policy does not appear in .spec.ReplicatedJobs")
            for reason in _list(r.get("onJobFailureReasons")):
                if reason not in JOB_FAILURE_REASONS:
                    yield hit(o, at + ("onJobFailureReasons",), f"invalid job failure reason '{reason}' in failure "
                                                                f"policy is not a recognized job failure reason")
        for rule_name, where in sorted(seen.items(), key=lambda kv: kv[1]):
            if rule_name is not None and len(where) > 1:
                yield hit(o, ("spec", "failurePolicy", "rules", where[-1], "name"),
                          f"rule names are not unique, rules with indices [{' '.join(map(str, where))}] all have "
                          f"the same name '{rule_name}'")


# ----------------------------------------------------------------- LeaderWorkerSet


@rule("WH003", ERROR, "a LeaderWorkerSet the LWS webhook refuses: a name that is no DNS-1035 label (it names the "
      "headless Service), size below 1, negative replicas, a subGroupSize that does not divide size or size - 1 "
      "(LWS webhook: LeaderWorkerSetWebhook.generalValidate, validateUpdateSubGroupPolicy)",
      "name it with lower-case letters, digits and '-', starting with a letter; size >= 1; size or size - 1 a "
      "multiple of subGroupSize")
def lws_general(model):
    for o in model.all(LWS, "LeaderWorkerSet"):
        if not o.generated_name:
            for message in dns1035(o.name):
                yield hit(o, ("metadata", "name"), E.invalid(o.name, message))
        replicas = o.spec.get("replicas")
        if isinstance(replicas, int) and replicas < 0:
            yield hit(o, ("spec", "replicas"), E.invalid(replicas, "replicas must be equal or greater than 0"))
        lwt = _dict(o.spec.get("leaderWorkerTemplate"))
        size = _int(lwt.get("size"), 1)
        if size < 1:
            yield hit(o, ("spec", "leaderWorkerTemplate", "size"), E.invalid(size, "size must be equal or greater than 1"))
        policy = _dict(lwt.get("subGroupPolicy"))
        sub = policy.get("subGroupSize")
        if isinstance(sub, int) and sub >= 1 and size >= 1:
            # The webhook's path spells the field SubGroupPolicy; the finding names the field as written.
            at = ("spec", "leaderWorkerTemplate", "subGroupPolicy", "subGroupSize")
            if size % sub != 0 and (size - 1) % sub != 0:
                yield hit(o, at, E.invalid(sub, "size or size - 1 must be divisible by subGroupSize"))
            if size < sub:
                yield hit(o, at, E.invalid(sub, "subGroupSize cannot be larger than size"))
            if policy.get("type") == "LeaderExcluded" and (size - 1) % sub != 0:
                yield hit(o, at, E.invalid(sub, "size-1 must be divisible by subGroupSize when using LeaderExcluded"))


# ----------------------------------------------------------------- Kueue

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"                       # constants.QueueLabel
MAX_EXEC_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"         # constants.MaxExecTimeSecondsLabel
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"          # job.JobMinParallelismAnnotation


@rule("WH004", ERROR, "a job the Kueue webhook refuses: a queue-name label that is no DNS-1123 subdomain, a "
      "max-exec-time-seconds label that is not a positive integer, a job-min-parallelism annotation outside "
      "1..pods-1 (Kueue webhooks: jobframework.ValidateQueueName, validateCreateForMaxExecTime, "
      "JobWebhook.validatePartialAdmissionCreate)",
      "name LocalQueues with lower-case letters, digits, '-' and '.'; whole seconds > 0; min parallelism below "
      "the Job's pods")
def kueue_job_labels(model):
    for o in model.objects:
        queue = o.labels.get(QUEUE_LABEL)
        if isinstance(queue, str) and queue:
            for message in dns1123_subdomain(queue):
                yield hit(o, ("metadata", "labels", QUEUE_LABEL), E.invalid(queue, message))
        limit = o.labels.get(MAX_EXEC_LABEL)
        if limit is not None:
            text = str(limit)
            if not re.fullmatch(r"[-+]?\d+", text):
                yield hit(o, ("metadata", "labels", MAX_EXEC_LABEL),
                          E.invalid(text, f'strconv.Atoi: parsing {E.value(text)}: invalid syntax'))
            elif int(text) <= 0:
                yield hit(o, ("metadata", "labels", MAX_EXEC_LABEL), E.invalid(int(text), "should be greater than 0"))
        if o.group == "batch" and o.kind == "Job":
            yield from _min_parallelism(o)


def _min_parallelism(o):
    raw = o.annotations.get(MIN_PARALLELISM)
    if raw is None:
        return
    path = ("metadata", "annotations", MIN_PARALLELISM)
    if not re.fullmatch(r"[-+]?\d+", str(raw)):
        yield hit(o, path, E.invalid(str(raw), f"strconv.Atoi: parsing {E.value(str(raw))}: invalid syntax"))
        return
    pods = _int(o.spec.get("parallelism"), 1)   # Job.podsCount: parallelism (defaulted to 1), or fewer completions
    completions = o.spec.get("completions")
    if isinstance(completions, int) and completions < pods:
        pods = completions
    v = int(str(raw))
    if v >= pods or v <= 0:
        yield hit(o, path, E.invalid(v, f"should be between 0 and {pods - 1}"))


# ----------------------------------------------------------------- Managed Prometheus


@rule("WH005", ERROR, "a PodMonitoring with two endpoints on the same port: their scrape jobs share a name and the "
      "operator builds no scrape config for the PodMonitoring (Managed Prometheus: PodMonitoring.scrapeConfigs, "
      "validateDistinctJobNames)",
      "scrape each port once; put a second path on the same port in its own PodMonitoring")
def pod_monitoring_jobs(model):
    for o in model.all(MONITORING, "PodMonitoring"):
        seen: dict = {}
        for i, ep in enumerate(_list(o.spec.get("endpoints"))):
            port = _dict(ep).get("port")
            if port is None:
                continue
            # endpointScrapeConfig names the job GetKey()/port: PodMonitoring/<namespace>/<name>/<port>.
            job = f"PodMonitoring/{o.namespace}/{o.name}/{port}"
            if job in seen:
                yield hit(o, ("spec", "endpoints", i, "port"),
                          f"duplicated job name {job} for endpoints with index {seen[job]} and {i};consider creating a "
                          f"separate custom resource (PodMonitoring, etc.) for endpoints that share the same resource "
                          f"name, namespace and port name")
                break   # validateDistinctJobNames returns the first
            seen[job] = i
