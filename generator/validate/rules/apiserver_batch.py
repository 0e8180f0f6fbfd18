"""batch/v1 Job and CronJob as the API server validates them on create:
kubernetes v1.31 pkg/apis/batch/validation/validation.go (ValidateJob, validateJobSpec,
validateGeneratedSelector, validatePodFailurePolicy*, validateSuccessPolicy*,
validatePodReplacementPolicy, ValidateCronJobCreate, validateCronJobSpec,
validateScheduleFormat, validateTimeZone, ValidateJobTemplateSpec), after the defaults
of pkg/apis/batch/v1/defaults.go SetDefaults_Job and the selector that
pkg/registry/batch/job/strategy.go generateSelector adds. Each check names its
function; AS011 (apiserver_kinds) holds the first checks of validateJobSpec."""
from __future__ import annotations

import re
import zoneinfo

from ...kernel.labelmatch import ANY, selector_matches
from .. import apierrors as E, apimachinery as M
from ..findings import ERROR
from . import hit, rule
from .apiserver_kinds import job_specs

# batch/validation constants.
MAX_INDEXED_PARALLELISM = 100000
MAX_FAILED_INDEXES = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
PARALLELISM_LIMIT_HIGH_COMPLETIONS = 10_000
MAX_FAILED_INDEXES_HIGH_COMPLETIONS = 10_000
MAX_POD_FAILURE_RULES = 20
MAX_EXIT_CODE_VALUES = 255
MAX_POD_CONDITION_PATTERNS = 20
MAX_MANAGED_BY = 63
MAX_SUCCEEDED_INDEXES = 64 * 1024
MAX_SUCCESS_RULES = 20
ACTIONS = ["Count", "FailIndex", "FailJob", "Ignore"]          # sets.List(supportedPodFailurePolicyActions)
OPERATORS = ["In", "NotIn"]
CONDITION_STATUSES = ["False", "True", "Unknown"]
REPLACEMENT = ["Failed", "TerminatingOrFailed"]
# batch.LegacyJobNameLabel, JobNameLabel, LegacyControllerUidLabel, ControllerUidLabel.
JOB_NAME_LABELS = ("job-name", "batch.kubernetes.io/job-name")
UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _list(v) -> list:
    return v if isinstance(v, list) else []


def _completions(spec: dict):
    """SetDefaults_Job: with neither completions nor parallelism, completions is 1."""
    c = spec.get("completions")
    if c is None and spec.get("parallelism") is None:
        return 1
    return c if M.is_int(c) else None


# ----------------------------------------------------------------- ValidateJob


@rule("AS300", ERROR, "an Indexed Job whose name plus the highest index is no DNS-1123 label, so no pod hostname can be "
      "made (API server: ValidateJob)",
      "shorten the Job name: name-<completions-1> must fit in 63 lowercase characters")
def job_hostname(model):
    for o in model.all("batch", "Job"):
        completions = _completions(o.spec)
        if o.generated_name or o.spec.get("completionMode") != "Indexed" or not completions or completions <= 0:
            continue
        host = f"{o.name}-{completions - 1}"
        if M.dns1123_label(host):
            yield hit(o, ("metadata", "name"),
                      E.invalid(o.name, f"will not able to create pod with invalid DNS label: {host}"))


@rule("AS301", ERROR, "a Job selector the API server refuses: set without manualSelector: true (it is generated), "
      "missing or not matching the template with manualSelector, a bad selector operator; a CronJob jobTemplate with "
      "a selector or manualSelector (API server: validateGeneratedSelector, ValidateJobSpec, ValidateJobTemplateSpec)",
      "leave spec.selector out and let the API server generate it; set manualSelector: true only with a selector "
      "matching the template labels")
def job_selector(model):
    for o in model.all("batch", "Job"):
        yield from _job_selector(o)
    for o in model.all("batch", "CronJob"):
        spec = _dict(_dict(o.spec.get("jobTemplate")).get("spec"))
        at = ("spec", "jobTemplate", "spec")
        if spec.get("selector") is not None:
            yield hit(o, at + ("selector",), E.invalid(spec["selector"], "`selector` will be auto-generated"))
        if spec.get("manualSelector") is True:
            yield hit(o, at + ("manualSelector",), E.not_supported(True, ["nil", "false"]))


def _job_selector(o):
    sel = o.spec.get("selector")
    labels = _dict(_dict(_dict(o.spec.get("template")).get("metadata")).get("labels"))
    for path, message in M.label_selector(sel, ("spec", "selector")):
        yield hit(o, path, message)
    if o.spec.get("manualSelector") is True:
        if sel is None:
            yield hit(o, ("spec", "selector"), E.required())
        elif isinstance(sel, dict) and not selector_matches(sel, labels):
            yield hit(o, ("spec", "template", "metadata", "labels"),
                      E.invalid(labels, "`selector` does not match template `labels`"))
        return
    yield from _generated_selector(o, sel, labels)


def _generated_selector(o, sel, labels):
    """validateGeneratedSelector: the job-name labels are set on the template unless present, the
    uid ones too. With generateName the name is not known yet: any value may match it."""
    job_name = ANY if o.generated_name else o.name
    for key in JOB_NAME_LABELS if not o.generated_name else ():
        if key in labels and labels[key] != o.name:
            yield hit(o, ("spec", "template", "metadata", "labels", key), E.invalid(labels, f"must be '{o.name}'"))
    yield from _uid_labels(o, labels)
    if isinstance(sel, dict):
        generated = {**{k: job_name for k in JOB_NAME_LABELS}, **{k: ANY for k in UID_LABELS}}
        if not selector_matches(sel, generated):
            yield hit(o, ("spec", "selector"), E.invalid(sel, "`selector` not auto-generated"))
        # ValidateJobSpec: the selector (with the uid label added) against the template labels
        # (with the generated labels added where absent).
        if not selector_matches(sel, {**generated, **labels}):
            yield hit(o, ("spec", "template", "metadata", "labels"),
                      E.invalid(labels, "`selector` does not match template `labels`"))


def _uid_labels(o, labels):
    """validateGeneratedSelector's ValidateHasLabel for the uid labels, against metadata.uid, which the
    API server sets (store.go FillObjectMetaSystemFields) before generateSelector keeps a uid label the
    template already has: a uid label in a manifest without that uid (a Job copied from `kubectl get
    -o yaml` and trimmed) is refused. One equal to a metadata.uid written beside it passes, as in
    upstream's tests, which validate the object with its uid set."""
    uid = _dict(o.body.get("metadata")).get("uid")
    for key in UID_LABELS:
        if key in labels and (uid is None or labels[key] != uid):
            yield hit(o, ("spec", "template", "metadata", "labels", key),
                      E.invalid(labels, f"must be '{uid or '<the uid the API server gives the new Job>'}'"))


# ----------------------------------------------------------------- validateJobSpec


@rule("AS302", ERROR, "a Job spec field the API server refuses: a negative deadline, TTL or per-index limit, "
      "maxFailedIndexes without backoffLimitPerIndex or above its limits, per-index fields on a NonIndexed Job, an "
      "unknown completionMode, a bad managedBy (API server: validateJobSpec; its restartPolicy and count checks are "
      "AS011)",
      "per-index backoff (backoffLimitPerIndex, maxFailedIndexes) needs completionMode: Indexed; managedBy is a "
      "domain-prefixed path like example.com/controller")
def job_spec_fields(model):
    for o, path, spec in job_specs(model):
        yield from _nonnegative(o, path, spec)
        yield from _managed_by(o, path, spec.get("managedBy"))
        yield from _completion_mode(o, path, spec)


def _nonnegative(o, path, spec):
    for key in ("activeDeadlineSeconds", "ttlSecondsAfterFinished", "backoffLimitPerIndex", "maxFailedIndexes"):
        v = spec.get(key)
        if M.is_int(v) and v < 0:
            yield hit(o, path + (key,), E.invalid(v, E.NEGATIVE))
    if spec.get("maxFailedIndexes") is not None and spec.get("backoffLimitPerIndex") is None:
        yield hit(o, path + ("backoffLimitPerIndex",), E.required("when maxFailedIndexes is specified"))


def _managed_by(o, path, v):
    """IsDomainPrefixedPath and the 63-character limit (field.TooLongMaxLength)."""
    if not isinstance(v, str):
        return
    for message in M.domain_prefixed_path(v):
        yield hit(o, path + ("managedBy",), message)
    if len(v) > MAX_MANAGED_BY:
        yield hit(o, path + ("managedBy",), f"Too long: may not be longer than {MAX_MANAGED_BY}")


def _completion_mode(o, path, spec):
    mode = spec.get("completionMode") or "NonIndexed"
    if mode not in ("NonIndexed", "Indexed"):
        yield hit(o, path + ("completionMode",), E.not_supported(mode, ["NonIndexed", "Indexed"]))
    elif mode == "NonIndexed":
        for key in ("backoffLimitPerIndex", "maxFailedIndexes"):
            v = spec.get(key)
            if M.is_int(v):
                yield hit(o, path + (key,), E.invalid(v, "requires indexed completion mode"))
    else:
        yield from _indexed_limits(o, path, spec)


def _indexed_limits(o, path, spec):
    """validateJobSpec's Indexed branch: maxFailedIndexes and the limits above 100000 completions."""
    per_index, failed = spec.get("backoffLimitPerIndex"), spec.get("maxFailedIndexes")
    completions, par = _completions(spec), spec.get("parallelism")
    if M.is_int(failed) and completions is not None and failed > completions:
        yield hit(o, path + ("maxFailedIndexes",), E.invalid(failed, "must be less than or equal to completions"))
    if M.is_int(failed) and failed > MAX_FAILED_INDEXES:
        yield hit(o, path + ("maxFailedIndexes",), E.invalid(failed, f"must be less than or equal to "
                                                                     f"{MAX_FAILED_INDEXES}"))
    if completions is None or completions <= COMPLETIONS_SOFT_LIMIT or per_index is None:
        return
    tail = f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
    if failed is None:
        yield hit(o, path + ("maxFailedIndexes",),
                  E.required(f"must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"))
    if M.is_int(par) and par > PARALLELISM_LIMIT_HIGH_COMPLETIONS:
        yield hit(o, path + ("parallelism",),
                  E.invalid(par, f"must be less than or equal to {PARALLELISM_LIMIT_HIGH_COMPLETIONS} {tail}"))
    if M.is_int(failed) and failed > MAX_FAILED_INDEXES_HIGH_COMPLETIONS:
        yield hit(o, path + ("maxFailedIndexes",),
                  E.invalid(failed, f"must be less than or equal to {MAX_FAILED_INDEXES_HIGH_COMPLETIONS} {tail}"))


# ----------------------------------------------------------------- validatePodFailurePolicy


@rule("AS303", ERROR, "a Job podFailurePolicy or podReplacementPolicy the API server refuses: a rule without a known "
      "action, FailIndex without backoffLimitPerIndex, onExitCodes with no, repeated, unordered or (for In) zero "
      "values or an unknown container, both or neither of onExitCodes and onPodConditions, pods that restart "
      "OnFailure (API server: validatePodFailurePolicy, validatePodFailurePolicyRule*, validatePodReplacementPolicy, "
      "validateJobSpec)",
      "each rule: one action and exactly one of onExitCodes / onPodConditions; exit codes sorted, unique, non-zero "
      "for In; restartPolicy: Never")
def pod_failure_policy(model):
    for o, path, spec in job_specs(model):
        policy = spec.get("podFailurePolicy")
        yield from _replacement(o, path, spec, policy)
        if not isinstance(policy, dict):
            continue
        at = path + ("podFailurePolicy", "rules")
        rules = _list(policy.get("rules"))
        if len(rules) > MAX_POD_FAILURE_RULES:
            yield hit(o, at, E.too_many(len(rules), MAX_POD_FAILURE_RULES))
        pod = _dict(_dict(spec.get("template")).get("spec"))
        names = {_dict(c).get("name") for key in ("containers", "initContainers") for c in _list(pod.get(key))}
        for i, r in enumerate(rules):
            if isinstance(r, dict):
                yield from _failure_rule(o, at + (i,), r, spec, names)
        restart = pod.get("restartPolicy")
        if restart == "OnFailure":
            yield hit(o, path + ("template", "spec", "restartPolicy"),
                      E.invalid(restart, 'only "Never" is supported when podFailurePolicy is specified'))


def _replacement(o, path, spec, policy):
    v = spec.get("podReplacementPolicy")
    if v is None:
        return
    allowed = ["Failed"] if policy is not None else REPLACEMENT
    if v not in allowed:
        yield hit(o, path + ("podReplacementPolicy",), E.not_supported(v, allowed))


def _failure_rule(o, at, r, spec, names):
    action = r.get("action")
    if not action:
        yield hit(o, at + ("action",), E.required("valid values: " + _go_list(ACTIONS)))
    elif action == "FailIndex":
        if spec.get("backoffLimitPerIndex") is None:
            yield hit(o, at + ("action",), E.invalid(action, "requires the backoffLimitPerIndex to be set"))
    elif action not in ACTIONS:
        yield hit(o, at + ("action",), E.not_supported(action, ACTIONS))
    codes, conditions = r.get("onExitCodes"), _list(r.get("onPodConditions"))
    if isinstance(codes, dict):
        yield from _exit_codes(o, at + ("onExitCodes",), codes, names)
    yield from _pod_conditions(o, at + ("onPodConditions",), conditions)
    if codes is not None and conditions:
        yield hit(o, at, "Invalid value: specifying both OnExitCodes and OnPodConditions is not supported")
    if codes is None and not conditions:
        yield hit(o, at, "Invalid value: specifying one of OnExitCodes and OnPodConditions is required")


def _go_list(items) -> str:
    """fmt's %q of a []string: ["a" "b"]."""
    return "[" + " ".join(f'"{i}"' for i in items) + "]"


def _exit_codes(o, at, codes, names):
    op = codes.get("operator")
    if not op:
        yield hit(o, at + ("operator",), E.required("valid values: " + _go_list(OPERATORS)))
    elif op not in OPERATORS:
        yield hit(o, at + ("operator",), E.not_supported(op, OPERATORS))
    container = codes.get("containerName")
    if isinstance(container, str) and container not in names:
        yield hit(o, at + ("containerName",),
                  E.invalid(container, "must be one of the container or initContainer names in the pod template"))
    values = [v for v in _list(codes.get("values")) if M.is_int(v)]
    if not values:
        yield hit(o, at + ("values",), E.invalid(values, "at least one value is required"))
    elif len(values) > MAX_EXIT_CODE_VALUES:
        yield hit(o, at + ("values",), E.too_many(len(values), MAX_EXIT_CODE_VALUES))
    seen: set = set()
    for j, v in enumerate(values):
        if op == "In" and v == 0:
            yield hit(o, at + ("values", j), E.invalid(v, "must not be 0 for the In operator"))
        if v in seen:
            yield hit(o, at + ("values", j), E.duplicate(v))
        seen.add(v)
    if any(a > b for a, b in zip(values, values[1:], strict=False)):
        yield hit(o, at + ("values",), E.invalid(values, "must be ordered"))


def _pod_conditions(o, at, conditions):
    if len(conditions) > MAX_POD_CONDITION_PATTERNS:
        yield hit(o, at, E.too_many(len(conditions), MAX_POD_CONDITION_PATTERNS))
    for j, p in enumerate(conditions):
        kind = _dict(p).get("type")
        if isinstance(kind, str):
            for message in M.qualified_name(kind):   # ValidateQualifiedName
                yield hit(o, at + (j, "type"), E.invalid(kind, message))
        status = _dict(p).get("status") or "True"   # SetDefaults_Job: an empty status becomes True
        if status and status not in CONDITION_STATUSES:
            yield hit(o, at + (j, "status"), E.not_supported(status, CONDITION_STATUSES))


# ----------------------------------------------------------------- validateSuccessPolicy


@rule("AS304", ERROR, "a Job successPolicy the API server refuses: on a NonIndexed Job, without rules, a rule with "
      "neither succeededIndexes nor succeededCount, indexes out of range or out of order, a count above completions "
      "or the listed indexes (API server: validateSuccessPolicy, validateSuccessPolicyRule, validateIndexesFormat)",
      "successPolicy needs completionMode: Indexed; indexes ascending below completions, e.g. \"0,2-4\"")
def success_policy(model):
    for o, path, spec in job_specs(model):
        policy = spec.get("successPolicy")
        if not isinstance(policy, dict) or o.group != "batch":   # a JobSet's own successPolicy is another type
            continue
        at = path + ("successPolicy",)
        if spec.get("completionMode", "NonIndexed") != "Indexed":
            yield hit(o, at, E.invalid(policy, "requires indexed completion mode"))
            continue
        rules = _list(policy.get("rules"))
        if not rules:
            yield hit(o, at + ("rules",), E.required("at least one rules must be specified when the successPolicy is "
                                                     "specified"))
        if len(rules) > MAX_SUCCESS_RULES:
            yield hit(o, at + ("rules",), E.too_many(len(rules), MAX_SUCCESS_RULES))
        completions = _completions(spec)
        for i, r in enumerate(rules):
            if isinstance(r, dict) and completions is not None:
                yield from _success_rule(o, at + ("rules", i), r, completions)


def _success_rule(o, at, r, completions):
    indexes, count = r.get("succeededIndexes"), r.get("succeededCount")
    if indexes is None and count is None:
        yield hit(o, at, E.required("at least one of succeededCount or succeededIndexes must be specified"))
    total = 0
    if isinstance(indexes, str):
        if len(indexes) > MAX_SUCCEEDED_INDEXES:
            yield hit(o, at + ("succeededIndexes",), E.too_long(MAX_SUCCEEDED_INDEXES))
        total, error = indexes_format(indexes, completions)
        if error:
            yield hit(o, at + ("succeededIndexes",), E.invalid(indexes, f"error parsing succeededIndexes: {error}"))
    if M.is_int(count):
        if count < 0:
            yield hit(o, at + ("succeededCount",), E.invalid(count, E.NEGATIVE))
        if count > completions:
            yield hit(o, at + ("succeededCount",), E.invalid(count, f"must be less than or equal to {completions} "
                                                                    f"(the number of specified completions)"))
        if indexes is not None and count > total:
            yield hit(o, at + ("succeededCount",), E.invalid(count, f"must be less than or equal to {total} (the "
                                                                    f"number of indexes in the specified "
                                                                    f"succeededIndexes field)"))


def indexes_format(text: str, completions: int) -> tuple[int, str]:
    """validateIndexesFormat and parseIndexInterval: (how many indexes, the error or '')."""
    if not text:
        return 0, ""
    last, total = None, 0
    for interval in text.split(","):
        parts = interval.split("-")
        if len(parts) > 2:
            return 0, (f'the fragment "{interval}" violates the requirement that an index interval can have at most '
                       f"two parts separated by '-'")
        bounds = []
        for p in parts:
            if not re.fullmatch(r"[-+]?\d+", p):
                return 0, f'cannot convert string to integer for index: "{p}"'
            if int(p) >= completions:
                return 0, f'too large index: "{p}"'
            bounds.append(int(p))
        x, y = bounds[0], bounds[-1]
        if len(bounds) == 2 and x >= y:
            return 0, f"non-increasing order, previous: {x}, current: {y}"
        if last is not None and last >= x:
            return 0, f"non-increasing order, previous: {last}, current: {x}"
        total += y - x + 1
        last = y
    return total, ""


# ----------------------------------------------------------------- CronJob


@rule("AS310", ERROR, "a CronJob spec the API server refuses: a schedule robfig/cron cannot parse, TZ or CRON_TZ in "
      "the schedule, an unknown timeZone, an unknown concurrencyPolicy, negative history limits or "
      "startingDeadlineSeconds (API server: validateCronJobSpec, validateScheduleFormat, validateTimeZone, "
      "validateConcurrencyPolicy)",
      "five fields (minute hour day-of-month month day-of-week) or a @descriptor; the zone in spec.timeZone, "
      "e.g. Etc/UTC")
def cronjob_spec(model):
    for o in model.all("batch", "CronJob"):
        yield from _schedule(o)
        for key in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
            v = o.spec.get(key)
            if M.is_int(v) and v < 0:
                yield hit(o, ("spec", key), E.invalid(v, E.NEGATIVE))
        zone = o.spec.get("timeZone")
        if isinstance(zone, str):
            for message in time_zone(zone):
                yield hit(o, ("spec", "timeZone"), E.invalid(zone, message))
        policy = o.spec.get("concurrencyPolicy")
        if isinstance(policy, str) and policy and policy not in ("Allow", "Forbid", "Replace"):
            yield hit(o, ("spec", "concurrencyPolicy"), E.not_supported(policy, ["Allow", "Forbid", "Replace"]))


def _schedule(o):
    """validateCronJobSpec's schedule: Required, validateScheduleFormat."""
    schedule = o.spec.get("schedule")
    if schedule == "" or (schedule is None and "schedule" in o.spec):
        yield hit(o, ("spec", "schedule"), E.required())
    elif isinstance(schedule, str):
        error = cron_error(schedule)
        if error:
            yield hit(o, ("spec", "schedule"), E.invalid(schedule, error))
        if "TZ" in schedule:   # on create, a TZ= prefix is never allowed
            yield hit(o, ("spec", "schedule"),
                      E.invalid(schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))


# validateTimeZone: validTimeZoneCharacters.
TZ_PART = re.compile(r"^[A-Za-z\.\-_0-9+]{1,14}$")


def time_zone(zone: str) -> list[str]:
    """validateTimeZone; time.LoadLocation is read from the IANA database Python carries
    (zoneinfo), which knows the same names as Go's bundled copy."""
    if not zone:
        return ["timeZone must be nil or non-empty string"]
    for part in zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not TZ_PART.match(part):
            return [f"unknown time zone {zone}"]
    out = []
    if zone.lower() == "local":
        out.append("timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones")
    # time.LoadLocation: "UTC" and "Local" are built in; any other name is read from the database.
    if zone not in ("UTC", "Local") and not _known_zone(zone):
        out.append(f"unknown time zone {zone}")
    return out


def _known_zone(zone: str) -> bool:
    available = zoneinfo.available_timezones()
    if not available:     # no time zone database here: cannot tell, so say nothing
        return True
    return zone in available


# robfig/cron/v3 parser.go: the bounds of the standard parser's fields and their names.
_FIELDS: tuple[tuple[int, int, dict[str, int]], ...] = ((0, 59, {}), (0, 23, {}), (1, 31, {}),
           (1, 12, {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}),
           (0, 6, {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}))
_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_DURATION = re.compile(r"^[-+]?(0|((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+)$")


def cron_error(spec: str) -> str:
    """cron.ParseStandard's error for a schedule, or '' when it parses."""
    if not spec:
        return "empty spec string"
    if spec.startswith(("TZ=", "CRON_TZ=")):
        space = spec.find(" ")
        zone = spec[spec.index("=") + 1:space] if space >= 0 else spec[spec.index("=") + 1:]
        if zone and zone != "UTC" and not _known_zone(zone):
            return f"provided bad location {zone}: unknown time zone {zone}"
        spec = spec[space:].strip() if space >= 0 else ""
    if spec.startswith("@"):
        return _descriptor_error(spec)
    fields = spec.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
    for text, bounds in zip(fields, _FIELDS, strict=True):
        for expr in text.split(","):
            error = _cron_range(expr, *bounds)
            if error:
                return error
    return ""


def _descriptor_error(spec: str) -> str:
    """parseDescriptor."""
    if spec in _DESCRIPTORS:
        return ""
    if spec.startswith("@every "):
        duration = spec[len("@every "):]
        return "" if _DURATION.match(duration) else f'failed to parse duration {spec}: time: invalid duration "{duration}"'
    return f"unrecognized descriptor: {spec}"


def _cron_range(expr: str, lo: int, hi: int, names: dict) -> str:
    """getRange."""
    range_step = expr.split("/")
    low_high = range_step[0].split("-")
    if low_high[0] in ("*", "?"):
        start, end = lo, hi
    else:
        start, error = _cron_int(low_high[0], names)
        if error:
            return error
        end = start
        if len(low_high) == 2:
            end, error = _cron_int(low_high[1], names)
            if error:
                return error
        elif len(low_high) > 2:
            return f"too many hyphens: {expr}"
    step = 1
    if len(range_step) == 2:
        step, error = _cron_int(range_step[1], {})
        if error:
            return error
        if len(low_high) == 1:
            end = hi
    elif len(range_step) > 2:
        return f"too many slashes: {expr}"
    if start < lo:
        return f"beginning of range ({start}) below minimum ({lo}): {expr}"
    if end > hi:
        return f"end of range ({end}) above maximum ({hi}): {expr}"
    if start > end:
        return f"beginning of range ({start}) beyond end of range ({end}): {expr}"
    if step == 0:
        return f"step of range should be a positive number: {expr}"
    return ""


def _cron_int(text: str, names: dict) -> tuple[int, str]:
    """parseIntOrName / mustParseInt."""
    if text.lower() in names:
        return names[text.lower()], ""
    if not re.fullmatch(r"[-+]?\d+", text):
        return 0, f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax'
    n = int(text)
    if n < 0:
        return 0, f"negative number ({n}) not allowed: {text}"
    return n, ""
