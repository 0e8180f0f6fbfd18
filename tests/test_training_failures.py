"""Training that survives failures: a training JobSet carries JobSet's failurePolicy
(maxRestarts, and a rule that restarts it without counting when a pod was lost to a node
disruption), its Job a podFailurePolicy for the DisruptionTarget condition and backoffLimit
0; checked against the pinned JobSet CRDs (v0.11.1 and v0.12.0, ../shared/crds/jobset) and
restated from JobSet's own example, site/static/examples/failure-policy/
host-maintenance-event-model.yaml (kubernetes-sigs/jobset @ 650f4a38)."""
from __future__ import annotations

import copy

import pytest

from generator import model as specmod
from generator.kernel import yamlio
from tests import helpers

FIXTURE = helpers.FIXTURES / "gpudirect.yaml"
JOBSET = "overlays/a4/jobset_research_jax-a4.yaml"
JOB = "overlays/mega/job_research_torch-mega.yaml"

# JobSet's host-maintenance-event-model example, restated (leader Job):
#   failurePolicy: {maxRestarts: 0, rules: [{action: RestartJobSetAndIgnoreMaxRestarts,
#                                            onJobFailureReasons: [PodFailurePolicy]}, ...]}
#   backoffLimit: 0   # "so job will immediately fail if any pod fails"
#   podFailurePolicy: {rules: [{action: FailJob, onPodConditions: [{type: DisruptionTarget}]}]}
EXAMPLE_RULE = {"action": "RestartJobSetAndIgnoreMaxRestarts", "onJobFailureReasons": ["PodFailurePolicy"]}
EXAMPLE_POD_RULE = {"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget"}]}


def _raw() -> dict:
    return yamlio.load_user(FIXTURE.read_text())


def _built(raw: dict, path: str) -> dict:
    (o,) = yamlio.load_all(helpers.render(raw)[path])
    return o


def test_jobset_carries_the_example_failure_policy():
    js = _built(_raw(), JOBSET)
    fp = js["spec"]["failurePolicy"]
    assert fp["maxRestarts"] == 3     # the spec's default (JobSet's failure-policy examples use 3)
    (rule,) = fp["rules"]
    # The example's rule, plus a name (JobSet defaults it to failurePolicyRule0 otherwise).
    assert {k: v for k, v in rule.items() if k != "name"} == EXAMPLE_RULE
    job = js["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert job["backoffLimit"] == 0
    (pod_rule,) = job["podFailurePolicy"]["rules"]
    # status "True": the Kubernetes API's default, written out (cdk8s-plus-33's struct requires it).
    assert pod_rule["onPodConditions"] == [{"type": "DisruptionTarget", "status": "True"}]
    assert pod_rule["action"] == EXAMPLE_POD_RULE["action"]
    # Kubernetes allows a pod failure policy only with restartPolicy Never.
    assert job["template"]["spec"]["restartPolicy"] == "Never"


def test_spec_sets_the_policy():
    raw = _raw()
    raw["workloads"][1]["failurePolicy"] = {"maxRestarts": 10, "ignoreDisruptions": False}
    raw["workloads"][1]["backoffLimit"] = 2
    js = _built(raw, JOBSET)
    assert js["spec"]["failurePolicy"] == {"maxRestarts": 10}
    job = js["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert job["backoffLimit"] == 2 and "podFailurePolicy" not in job


def test_indexed_job_keeps_its_backoff_limit_and_no_pod_failure_policy():
    """A plain Indexed Job restarts failed containers in place (restartPolicy OnFailure), where
    Kubernetes allows no podFailurePolicy; its backoffLimit stays 4."""
    spec = _built(_raw(), JOB)["spec"]
    assert spec["backoffLimit"] == 4 and "podFailurePolicy" not in spec


@pytest.mark.parametrize("version", ["v0.11.1", "v0.12.0"])
def test_generated_jobset_is_valid_against_the_pinned_crd(version):
    raw = _raw()
    raw["jobset"] = {"version": version}
    spec = specmod.from_dict(copy.deepcopy(raw), "test-spec.yaml")
    js = _built(raw, JOBSET)
    schemas = helpers.schemas_for(spec, "a4")
    helpers.assert_valid(schemas, [js], f"jobset {version}")
    # The negative half: an action the CRD does not list is refused by the same schema.
    bad = copy.deepcopy(js)
    bad["spec"]["failurePolicy"]["rules"][0]["action"] = "RestartEverything"
    assert list(schemas.errors(bad)), "the schema check accepted an action JobSet does not have"


def test_restart_job_is_a_v0_12_action_only():
    """RestartJob came with JobSet v0.12.0 (its CRD's enum); v0.11.1's refuses it. The generator
    writes only actions both pinned releases have."""
    raw = _raw()
    js = _built(raw, JOBSET)
    js["spec"]["failurePolicy"]["rules"][0]["action"] = "RestartJob"
    old = helpers.schemas_for(specmod.from_dict(dict(copy.deepcopy(raw), jobset={"version": "v0.11.1"}), "t.yaml"), "a4")
    new = helpers.schemas_for(specmod.from_dict(dict(copy.deepcopy(raw), jobset={"version": "v0.12.0"}), "t.yaml"), "a4")
    assert list(old.errors(js)) and not list(new.errors(js))


# The tpu-jobset kind gets the same policy from the same spec field (FailurePolicy), on its own
# fixture (tests/fixtures/accelerators.yaml: jax-v4, one 2x2x2 slice of TPU v4).
TPU_FIXTURE = helpers.FIXTURES / "accelerators.yaml"
TPU_JOBSET = "overlays/v4/jobset_research_jax-v4.yaml"


def _tpu_raw() -> dict:
    return yamlio.load_user(TPU_FIXTURE.read_text())


def _tpu_workload(raw: dict) -> dict:
    (w,) = [w for w in raw["workloads"] if w["name"] == "jax-v4"]
    return w


def test_tpu_jobset_carries_the_example_failure_policy():
    js = _built(_tpu_raw(), TPU_JOBSET)
    fp = js["spec"]["failurePolicy"]
    assert fp["maxRestarts"] == 3
    (rule,) = fp["rules"]
    assert {k: v for k, v in rule.items() if k != "name"} == EXAMPLE_RULE
    job = js["spec"]["replicatedJobs"][0]["template"]["spec"]
    (pod_rule,) = job["podFailurePolicy"]["rules"]
    assert pod_rule["onPodConditions"] == [{"type": "DisruptionTarget", "status": "True"}]
    assert pod_rule["action"] == EXAMPLE_POD_RULE["action"]
    assert job["template"]["spec"]["restartPolicy"] == "Never"
    # The kind's own backoffLimit stays (10 unless the spec sets it).
    assert job["backoffLimit"] == 10


def test_tpu_jobset_spec_sets_the_policy():
    raw = _tpu_raw()
    _tpu_workload(raw)["failurePolicy"] = {"maxRestarts": 7, "ignoreDisruptions": False}
    js = _built(raw, TPU_JOBSET)
    assert js["spec"]["failurePolicy"] == {"maxRestarts": 7}
    assert "podFailurePolicy" not in js["spec"]["replicatedJobs"][0]["template"]["spec"]


@pytest.mark.parametrize("version", ["v0.11.1", "v0.12.0"])
def test_tpu_jobset_is_valid_against_the_pinned_crd(version):
    raw = _tpu_raw()
    raw["jobset"] = {"version": version}
    spec = specmod.from_dict(copy.deepcopy(raw), "test-spec.yaml")
    js = _built(raw, TPU_JOBSET)
    schemas = helpers.schemas_for(spec, "v4")
    helpers.assert_valid(schemas, [js], f"jobset {version}")
    bad = copy.deepcopy(js)
    bad["spec"]["failurePolicy"]["maxRestarts"] = "three"
    bad["spec"]["failurePolicy"]["rules"][0]["action"] = "RestartEverything"
    assert len(list(schemas.errors(bad))) >= 2, "the schema check accepted a policy JobSet refuses"
