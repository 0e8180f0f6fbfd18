"""The shipped scenarios (scenarios/<profile>/*.yaml) against the built
overlays, with their outcomes reasoned out by hand; and the `plan` command:
formats, plot, and clear errors (exit 2) for bad input.

Each scenario test first checks the overlay facts its reasoning rests on
(quotas, requests, priorities). If a colleague changes those, the check says
which, and the reasoning has to be redone."""
import json
from decimal import Decimal

import pytest

from generator import cli
from generator.plan import overlay as model, plot, scenario, simulate
from tests import helpers
from tests.test_plan_model import GPU, TPU, detail, states, used

SCENARIOS = sorted(helpers.FIXTURE_SCENARIOS.glob("*/*.yaml"))


def _plan(profile: str, name: str, cubes=None) -> simulate.Plan:
    overlay = helpers.generated() / "overlays" / profile
    cluster = model.build(f"overlays/{profile}", helpers.kustomize(overlay))
    scen = scenario.load(str(helpers.FIXTURE_SCENARIOS / profile / f"{name}.yaml"), cluster)
    return simulate.run(cluster, scen, cubes)


def _facts(plan: simulate.Plan, step: int = 0) -> dict:
    """workload -> (demand of the accelerator, priority) as the overlay declares them."""
    return {r.workload: (r.demand.get(GPU) or r.demand.get(TPU), r.priority) for r in plan.steps[step].rows}


def _quota(plan, resource, step=0):
    return sum((u.nominal for u in plan.steps[step].usage if u.resource == resource), Decimal(0))


def test_every_scenario_has_an_overlay():
    assert SCENARIOS, "no scenarios shipped"
    for s in SCENARIOS:
        assert (helpers.generated() / "overlays" / s.parent.name).is_dir(), f"{s}: no overlays/{s.parent.name}"


def test_l4_standard_inference_burst():
    plan = _plan("l4-standard", "inference-burst")
    # The facts the reasoning uses.
    assert _quota(plan, GPU) == 6
    f = _facts(plan)
    assert f["llm/tgi-gemma-deployment#1"] == ("2", 30)
    assert f["llm/finetune-gemma-l4"] == ("4", 20)          # 2 pods x 2 GPUs
    s = plan.steps
    gpus = [used(step, cq_name="cluster-queue") for step in s]
    # 0: TGI 2 + Job 4 = 6/6, both admitted.
    assert states(s[0]) == {"llm/tgi-gemma-deployment#1": "admitted", "llm/finetune-gemma-l4": "admitted"}
    # 1: TGI#2 needs 2, none free; the Job (20 < 30) is the only candidate; removing it frees 4.
    assert states(s[1]) == {"llm/tgi-gemma-deployment#1": "admitted", "llm/tgi-gemma-deployment#2": "admitted",
                            "llm/finetune-gemma-l4": "preempted"}
    assert detail(s[1], "llm/finetune-gemma-l4").startswith("by llm/tgi-gemma-deployment#2")
    # 2: back to 1 replica frees 2: 2 + 4 = 6, the Job is re-admitted.
    assert states(s[2]) == {"llm/tgi-gemma-deployment#1": "admitted", "llm/finetune-gemma-l4": "admitted"}
    assert "llm/finetune-gemma-l4 re-admitted to default-flavor" in s[2].events
    # 3: to 4 replicas: three new pods take the free replica slots #2, #3, #4 (labels count
    # from the Deployment's replicas; pods are new): #2 preempts the Job again (4 used), #3
    # fits (6/6), #4 waits: everything admitted now has its priority, so there is nobody to
    # preempt.
    st = states(s[3])
    assert [w for w, v in st.items() if v == "admitted"] == [f"llm/tgi-gemma-deployment#{i}" for i in (1, 2, 3)]
    assert st["llm/tgi-gemma-deployment#4"] == "pending" and st["llm/finetune-gemma-l4"] == "preempted"
    assert "no workload it may preempt would make room" in detail(s[3], "llm/tgi-gemma-deployment#4")
    # 4: back to 1: the waiting #4 goes first, then the newest running #3, #2; the Job returns.
    assert states(s[4]) == {"llm/tgi-gemma-deployment#1": "admitted", "llm/finetune-gemma-l4": "admitted"}
    assert [e for e in s[4].events if "scaled down" in e] == [
        "llm/tgi-gemma-deployment#4 scaled down", "llm/tgi-gemma-deployment#3 scaled down, freeing its quota",
        "llm/tgi-gemma-deployment#2 scaled down, freeing its quota"]
    assert gpus == [6, 4, 6, 6, 6]


def test_l4_autopilot_budget_cut():
    plan = _plan("l4-autopilot", "budget-cut")
    assert _quota(plan, GPU) == 8
    f = _facts(plan)
    assert f["llm/tgi-gemma-deployment#1"] == ("2", 30) and f["llm/t5-inference#1"] == ("1", 30)
    assert f["llm/finetune-gemma-l4"] == ("4", 20)
    s = plan.steps
    gpus = [used(step, cq_name="cluster-queue") for step in s]
    # 0: 2 + 1 + 4 = 7 <= 8: all admitted. Clients without a queue label are not Kueue's.
    st = states(s[0])
    assert st["llm/tgi-gemma-deployment#1"] == st["llm/t5-inference#1"] == st["llm/finetune-gemma-l4"] == "admitted"
    assert st["llm/fastdash#1"] == st["llm/loadgenerator#1"] == "unmanaged"
    # 1: T5 to 5: #2 takes the last free GPU; #3 finds none and preempts the Job (the only
    # lower priority), freeing 4: #3, #4, #5 fit. 2 + 5 = 7, the Job (4) waits with 1 free.
    assert ("llm/finetune-gemma-l4 preempted by llm/t5-inference#3 (prioritization in the ClusterQueue; "
            "priority 20 < 30)") in s[1].events
    assert all(states(s[1])[f"llm/t5-inference#{i}"] == "admitted" for i in range(1, 6))
    # 2: T5 back to 1: 3 used, the Job fits again: 7.
    assert states(s[2])["llm/finetune-gemma-l4"] == "admitted"
    # 3: budget cut to 3: Kueue evicts nothing; 7 used of 3.
    assert states(s[3])["llm/finetune-gemma-l4"] == "admitted" and _quota(plan, GPU, 3) == 3
    # 4: the Job finishes: 3/3.  5: resubmitted, 4 > 3 for ever.
    assert states(s[5])["llm/finetune-gemma-l4"] == "never"
    assert ("but ClusterQueue cluster-queue can ever get at most 3 in flavor default-flavor") \
        in detail(s[5], "llm/finetune-gemma-l4")
    assert detail(s[5], "llm/finetune-gemma-l4").startswith("can never be admitted: one Workload needs 4 nvidia.com/gpu")
    # 6: TGI#2 needs 2 of the 0 free; the never-admissible Job holds nothing to preempt.
    assert states(s[6])["llm/tgi-gemma-deployment#2"] == "pending"
    assert "nvidia.com/gpu in flavor default-flavor, 2 more needed" in detail(s[6], "llm/tgi-gemma-deployment#2")
    assert gpus == [7, 7, 7, 7, 3, 3, 3]


def test_tpu7x_subslice_slices():
    plan = _plan("tpu7x-subslice", "slices")
    assert _quota(plan, TPU) == 128                          # 2 cubes of 64 chips
    assert plan.steps[0].cubes[0].cubes[0][1] == 64 and len(plan.steps[0].cubes[0].cubes) == 2
    f = _facts(plan, 3)
    assert f["llm/jax-subslice"] == ("48", 1000)            # 6 jobs x 2 pods x 4 chips, 2x2x2 each
    assert f["llm/jax-superslice"] == ("128", 2000)         # 32 pods x 4 chips, 4x4x8
    assert all(f[f"llm/qwen-{r}#{i}"] == ("8", 3000) for r in ("prefill", "decode") for i in range(1, 5))
    s = plan.steps
    cubes = [[c[0] for c in step.cubes[0].cubes] for step in s]  # chips used per cube
    # 0: six 2x2x2 pack into one cube (best fit): 48 + 0.
    assert states(s[0]) == {"llm/jax-subslice": "admitted"} and cubes[0] == [48, 0]
    # 1: the 4x4x8 needs 128 chips and two empty cubes; preempting the sub-slices (1000 < 2000)
    # gives both.
    assert states(s[1]) == {"llm/jax-superslice": "admitted", "llm/jax-subslice": "preempted"}
    assert cubes[1] == [64, 64]
    # 2: prefill group #1 (3000) needs 8 chips with 0 free: preempts the super-slice. The four
    # groups take 32 chips in cube 0; the super-slice (needs 128, 96 free, nothing lower
    # admitted) waits; the sub-slices (48 <= 96 free, 4 partitions left in cube 0 + 8 in cube 1)
    # come back behind it (BestEffortFIFO).
    st = states(s[2])
    assert st["llm/jax-superslice"] == "preempted" and st["llm/jax-subslice"] == "admitted"
    assert all(st[f"llm/qwen-prefill#{i}"] == "admitted" for i in range(1, 5))
    assert cubes[2] == [64, 16]
    # 3: decode takes four more partitions in cube 1: 112/128; the super-slice still waits.
    assert used(s[3], TPU) == 112 and cubes[3] == [64, 48]
    assert states(s[3])["llm/jax-superslice"] == "pending"
    # 4: the sub-slices finish: 64 chips free, but serving holds half of each cube, so no cube is
    # empty and the quota is 64 short anyway.
    assert cubes[4] == [32, 32] and states(s[4])["llm/jax-superslice"] == "pending"
    assert "google.com/tpu in flavor slice-rf, 64 more needed" in detail(s[4], "llm/jax-superslice")


def test_tpu7x_superslice_cubes():
    plan = _plan("tpu7x-superslice", "cubes")
    assert _quota(plan, TPU) == 128
    f = _facts(plan, 4)
    assert f["llm/jax-superslice"] == ("128", 2000)
    s = plan.steps
    # 0: the 4x4x8 takes both cubes.  1: a low one-cube job (64) waits: nothing lower to preempt.
    assert states(s[0]) == {"llm/jax-superslice": "admitted"}
    assert states(s[1])["llm/jax-cube-low"] == "pending"
    # 2: a high one-cube job preempts the super-slice (2000 < 3000). The super-slice (128, 64
    # free) cannot come back; the low job (64) fits in the other cube: priority inversion that
    # BestEffortFIFO allows.
    assert states(s[2]) == {"llm/jax-cube-high": "admitted", "llm/jax-cube-low": "admitted",
                            "llm/jax-superslice": "preempted"}
    # 3: the high job ends: the super-slice preempts the low job and takes both cubes again.
    assert states(s[3]) == {"llm/jax-superslice": "admitted", "llm/jax-cube-low": "preempted"}
    # 4: this profile's Topology has only the cube level: a 2x2x2 can never form.
    assert states(s[4])["llm/jax-small"] == "never"
    assert "has no level cloud.google.com/gke-tpu-partition-2x2x2-id" in detail(s[4], "llm/jax-small")


@pytest.mark.parametrize("path", SCENARIOS, ids=[f"{p.parent.name}/{p.stem}" for p in SCENARIOS])
def test_every_shipped_scenario_states_its_outcomes_and_they_hold(path):
    """Scenario text that describes an outcome is checked: the overlay's result and every step
    carry `expect:`, and `plan` (so `make plan`) fails when one does not hold."""
    from generator.kernel import yamlio
    raw = yamlio.load_all(path.read_text())[0]
    assert raw.get("expect"), f"{path}: no expect for the overlay's own step"
    assert all(step.get("expect") for step in raw["steps"]), f"{path}: a step without expect"
    plan = _plan(path.parent.name, path.stem)
    assert plan.failures == []


def test_a_story_that_stops_being_true_fails_the_plan(capsys, l4_stream, tmp_path):
    # The same story with one claim turned false (the burst's fourth replica admitted): exit 1,
    # naming the step and what happened instead.
    from generator.kernel import yamlio
    raw = yamlio.load_all((helpers.FIXTURE_SCENARIOS / "l4-standard" / "inference-burst.yaml").read_text())[0]
    raw["steps"][2]["expect"]["admitted"].append("tgi-gemma-deployment#4")
    raw["steps"][0]["expect"]["preemptedBy"] = {"finetune-gemma-l4": "tgi-gemma-deployment#1"}
    f = tmp_path / "untrue.yaml"
    f.write_text(yamlio.dump(raw))
    rc, _, err = _cli(capsys, l4_stream, "--scenario", f)
    assert rc == 1
    assert (f"plan: expectation failed: {f}: step 3 (TGI bursts to 4 replicas): expect.admitted: "
            "expected llm/tgi-gemma-deployment#4 admitted, but it is pending") in err
    assert ("step 1 (TGI scales up to 2 replicas): expect.preemptedBy: expected llm/finetune-gemma-l4 preempted by "
            "llm/tgi-gemma-deployment#1 in this step, but llm/finetune-gemma-l4 preempted by "
            "llm/tgi-gemma-deployment#2") in err


# ---------------------------------------------------------------- the command
def _cli(capsys, *argv):
    rc = cli.main(["plan", *map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture(scope="module")
def l4_stream(tmp_path_factory):
    """The built l4-standard overlay as one YAML stream (what `plan` reads from a file)."""
    from generator.kernel import yamlio
    path = tmp_path_factory.mktemp("overlay") / "l4-standard.yaml"
    path.write_text(yamlio.dump_all(helpers.kustomize(helpers.generated() / "overlays" / "l4-standard")))
    return path


def test_formats(capsys, l4_stream):
    sc = helpers.FIXTURE_SCENARIOS / "l4-standard" / "inference-burst.yaml"
    rc, out, _ = _cli(capsys, l4_stream, "--scenario", sc, "--format", "json")
    assert rc == 0
    doc = json.loads(out)
    assert [s["title"] for s in doc["steps"]][:3] == ["apply the overlay", "TGI scales up to 2 replicas",
                                                      "TGI scales back to 1 replica"]
    row = next(w for w in doc["steps"][1]["workloads"] if w["workload"] == "llm/finetune-gemma-l4")
    assert row["state"] == "preempted" and row["demand"][GPU] == "4"
    rc, out, _ = _cli(capsys, l4_stream, "--scenario", sc, "--format", "markdown")
    assert rc == 0 and out.startswith("### Kueue plan:")
    assert "| Step | What happens | Admitted | Pending | Preempted | Never |" in out
    assert "| `llm/finetune-gemma-l4` | Job | 20 | **PREEMPTED** |" in out
    rc, out, _ = _cli(capsys, l4_stream, "--scenario", sc)
    assert rc == 0 and "== Step 1: TGI scales up to 2 replicas" in out and "Summary:" in out


def test_no_scenario_applies_everything_and_strict_flags_never(capsys, tmp_path):
    from generator.kernel import yamlio
    from tests.test_plan_model import cq, deployment, flavor, lq
    f = tmp_path / "stream.yaml"
    f.write_text(yamlio.dump_all([cq(quota={GPU: 1}), flavor(), lq(), deployment("big", 1, {GPU: 2})]))
    rc, out, _ = _cli(capsys, f)
    assert rc == 0 and "NEVER" in out and "can ever get at most 1 in flavor" in out
    rc, _, _ = _cli(capsys, f, "--strict")
    assert rc == 1


def test_plot_shows_preemption_and_readmission(capsys, tmp_path, l4_stream):
    pytest.importorskip("matplotlib")
    sc = helpers.FIXTURE_SCENARIOS / "l4-standard" / "inference-burst.yaml"
    png = tmp_path / "plan.png"
    rc, _, err = _cli(capsys, l4_stream, "--scenario", sc, "--plot", png)
    assert rc == 0 and f"wrote {png}" in err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # What is drawn: the Job holds 4 GPUs, loses them at step 1, has them back at step 2.
    plan = _plan("l4-standard", "inference-burst")
    order, held, quota = plot.series(plan, plot.resource_of(plan))
    assert plot.resource_of(plan) == GPU and quota == [6.0] * 5
    assert held["llm/finetune-gemma-l4"] == [4, 0, 4, 0, 4]
    assert held["llm/tgi-gemma-deployment#2"] == [0, 2, 0, 2, 0]     # replica slot 2, two different pods
    assert held["llm/tgi-gemma-deployment#3"] == [0, 0, 0, 2, 0]
    assert "llm/tgi-gemma-deployment#4" not in order          # it only ever waited
    # Same plan, same bytes.
    again = tmp_path / "again.png"
    _cli(capsys, l4_stream, "--scenario", sc, "--plot", again)
    assert again.read_bytes() == png.read_bytes()


BAD = {
    "two actions in a step": (
        ("steps:\n- title: x\n  scale: {kind: Deployment, name: tgi-gemma-deployment, replicas: 2}\n"
        "  delete: {kind: Job, name: finetune-gemma-l4}\n"),
        ("steps[0]: a step has a title and exactly one action: scale, submit, delete, finish, quota, stopPolicy, "
        "namespaceLabels, apply, remove, admissionCheck")),
    "scaling a Job": (
        "steps:\n- title: x\n  scale: {kind: Job, name: finetune-gemma-l4, replicas: 2}\n",
        "steps[0].scale.kind: 'Job' is not allowed (allowed: Deployment, LeaderWorkerSet)"),
    "unknown field": (
        "steps:\n- title: x\n  delete: {kind: Job, name: finetune-gemma-l4, nmespace: llm}\n",
        ("steps[0].delete: Additional properties are not allowed ('nmespace' was unexpected) "
        "(allowed: kind, name, namespace)")),
    "scaling what is not there": (
        "steps:\n- title: x\n  scale: {kind: Deployment, name: tgi, replicas: 2}\n",
        "steps[0].scale: no Deployment tgi running at this step (running: llm/tgi-gemma-deployment"),
    "deleting twice": (
        ("steps:\n- title: x\n  delete: {kind: Job, name: finetune-gemma-l4}\n"
        "- title: y\n  delete: {kind: Job, name: finetune-gemma-l4}\n"),
        "steps[1].delete: no Job finetune-gemma-l4 running at this step"),
    "quota on an uncovered resource": (
        ("steps:\n- title: x\n  quota: {clusterQueue: cluster-queue, flavor: default-flavor, "
        "resource: google.com/tpu, nominalQuota: 4}\n"),
        ("steps[0].quota.resource: flavor default-flavor of ClusterQueue cluster-queue has no quota for "
        "'google.com/tpu'")),
    "a bad quantity": (
        ("steps:\n- title: x\n  quota: {clusterQueue: cluster-queue, flavor: default-flavor, "
        "resource: cpu, nominalQuota: lots}\n"),
        ("steps[0].quota.nominalQuota: a Kubernetes quantity: a whole number, or a string such as 4, 500m or 16Gi "
        "(got 'lots')")),
    "not YAML": ("steps: [\n", "<root>: not valid YAML"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_scenario_exits_2_naming_file_and_field(case, capsys, tmp_path, l4_stream):
    text, expected = BAD[case]
    sc = tmp_path / "bad.yaml"
    sc.write_text(text)
    png = tmp_path / "never.png"
    rc, out, err = _cli(capsys, l4_stream, "--scenario", sc, "--plot", png)
    assert rc == 2, err
    assert f"{sc}: {expected}" in helpers.without_positions(err), err
    assert out == "" and not png.exists()          # nothing half-written


def test_unlimited_tpu_quota_without_cubes_exits_2(capsys, tmp_path):
    from generator.kernel import yamlio
    from tests.test_plan_packer import tpu_queue
    f = tmp_path / "tpu.yaml"
    f.write_text(yamlio.dump_all(tpu_queue(999999)))
    rc, _, err = _cli(capsys, f)
    assert rc == 2
    assert (f"{f}: ClusterQueue/cq.flavors.f.google.com/tpu: nominalQuota is 999999 (unlimited), so the "
            "reservation's size is unknown: pass --cubes N or set `cubes` in the scenario") in err
    rc, out, _ = _cli(capsys, f, "--cubes", 2)
    assert rc == 0 and "reservation of 2 cubes (--cubes)" in out


def test_overlay_directory_is_built_with_kustomize(capsys):
    rc, out, _ = _cli(capsys, helpers.generated() / "overlays" / "l4-standard")
    assert rc == 0 and "quota of ClusterQueue cluster-queue:" in out
    rc, _, err = _cli(capsys, helpers.generated() / "overlays" / "no-such-profile")
    assert rc == 2 and "cannot read the overlay" in err
