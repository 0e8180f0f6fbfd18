"""`generator plan` on malformed input: exit 2 with one line per problem naming
the file and the field, never a traceback; bounded work on huge inputs; and a
seeded hypothesis fuzz over overlay objects and scenarios."""
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from generator import cli
from generator.kernel import yamlio
from tests import helpers
from tests.kueue_cases import clusterqueue, flavor, localqueue
from tests.test_plan_model import GPU, cq, deployment, job, lq


def _cli(capsys, *argv):
    rc = cli.main(["plan", *map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _write(tmp_path, objs, name="overlay.yaml"):
    f = tmp_path / name
    f.write_text(yamlio.dump_all(objs))
    return f


def _base():
    return [cq(quota={GPU: 4, "cpu": 8}), {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
                                           "metadata": {"name": "f"}, "spec": {}}, lq()]


BAD = {
    "cpu: lots": (lambda: _base() + [job("j", 1, {"cpu": "lots"})],
                  "Job/ns/j.spec.template.spec.containers[0].resources.requests.cpu: 'lots' is not a quantity"),
    "parallelism two": (lambda: _base() + [{**job("j", 1, {"cpu": 1}), "spec": {
        "parallelism": "two", "template": job("j", 1, {"cpu": 1})["spec"]["template"]}}],
        "Job/ns/j.spec.parallelism: 'two' is not a pod count"),
    "quota not a quantity": (lambda: [cq(quota={"cpu": "many"})] + _base()[1:],
                             ("ClusterQueue/cq.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: 'many' is "
                             "not a quantity")),
    "huge quantity": (lambda: _base() + [job("j", 1, {"cpu": "1e999999999"})],
                      "Job/ns/j.spec.template.spec.containers[0].resources.requests.cpu: '1e999999999' is not a quantity"),
    "replicas a string": (lambda: _base() + [{**deployment("d", 1, {"cpu": 1}), "spec": {"replicas": "3"}}],
                          "Deployment/d.spec.replicas: '3' is not a whole number"),
    "unknown preemption policy": (lambda: [cq(preemption="Sometimes")] + _base()[1:],
                                  "ClusterQueue/cq.spec.preemption.withinClusterQueue: 'Sometimes' is not one of"),
    "resource groups not a list": (lambda: [{**cq(), "spec": {"resourceGroups": "x"}}] + _base()[1:],
                                   "ClusterQueue/cq.spec.resourceGroups: 'x' is not a list"),
    # The API server refuses negative requests (issue #25 item 7: it used to be admitted to no flavor).
    "negative cpu": (lambda: _base() + [job("j", 1, {"cpu": "-2"})],
                     "Job/ns/j.spec.template.spec.containers[0].resources.requests.cpu: '-2' is negative"),
    # A cohort tree with a loop, or a Cohort naming itself (issue #27): one line naming the loop.
    "cohort names itself": (lambda: [cq(cohort="a"), _cohort("a", "a")] + _base()[1:],
                            "Cohort/a.spec.parentName: Cohort 'a' is its own parent"),
    "cohort loop": (lambda: [cq(cohort="a"), _cohort("a", "b"), _cohort("b", "c"), _cohort("c", "a")] + _base()[1:],
                    "Cohort/a.spec.parentName: Cohort parents form a cycle: a -> b -> c -> a"),
}


def _cohort(name, parent):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": name},
            "spec": {"parentName": parent}}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_overlay_exits_2_naming_file_and_field(case, capsys, tmp_path):
    build, expected = BAD[case]
    f = _write(tmp_path, build())
    rc, out, err = _cli(capsys, f)
    assert rc == 2, err
    assert f"{f}: {expected}" in err, err
    assert "Traceback" not in err and out == ""


def test_not_an_object_not_utf8_and_missing_file(capsys, tmp_path):
    f = tmp_path / "x.yaml"
    f.write_text("- 1\n- 2\n")
    rc, _, err = _cli(capsys, f)
    assert rc == 2 and f"{f}: [0]: not a Kubernetes object" in helpers.without_positions(err)
    f.write_bytes(b"kind: \xff\n")
    rc, _, err = _cli(capsys, f)
    assert rc == 2 and "not UTF-8" in err
    rc, _, err = _cli(capsys, tmp_path / "nope.yaml")
    assert rc == 2 and "cannot read the overlay" in err


def test_bad_scenario_quantity_and_missing_file(capsys, tmp_path):
    f = _write(tmp_path, _base() + [job("j", 1, {"cpu": 1})])
    sc = tmp_path / "s.yaml"
    sc.write_text("steps:\n- title: x\n  submit: {file: missing.yaml}\n"
                  "- title: y\n  quota: {clusterQueue: cq, flavor: f, resource: gpu, lendingLimit: 1}\n")
    rc, _, err = _cli(capsys, f, "--scenario", sc)
    assert rc == 2
    assert f"{sc}: steps[0].submit.file: cannot read" in helpers.without_positions(err)
    assert f"{sc}: steps[1].quota.resource: flavor f of ClusterQueue cq has no quota for 'gpu'" in helpers.without_positions(err)
    sc.write_text("steps:\n- title: y\n  quota: {clusterQueue: cq, flavor: f, resource: cpu, borrowingLimit: lots}\n")
    rc, _, err = _cli(capsys, f, "--scenario", sc)
    assert rc == 2 and f"{sc}: steps[0].quota.borrowingLimit:" in helpers.without_positions(err) and "Traceback" not in err


def test_plot_creates_its_folder(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    f = _write(tmp_path, _base() + [job("j", 1, {GPU: 2})])
    png = tmp_path / "build" / "deeper" / "plan.png"
    rc, _, err = _cli(capsys, f, "--plot", png)
    assert rc == 0, err
    assert png.read_bytes()[:4] == b"\x89PNG"


@pytest.fixture
def small_cap(monkeypatch):
    """The cap at 2,000 Workloads, so these tests stay quick (the cap itself is bench's business)."""
    from generator.plan import simulate
    monkeypatch.setattr(simulate, "MAX_WORKLOADS", 2_000)


@pytest.mark.slow  # 200,000 replicas through the planner
def test_huge_inputs_are_capped_and_said(capsys, tmp_path, small_cap):
    from generator.plan import simulate
    # 200,000 replicas: only the first MAX_WORKLOADS are simulated, and the plan says so.
    f = _write(tmp_path, _base() + [deployment("web", 200_000, {"cpu": "1m"})])
    rc, out, _ = _cli(capsys, f, "--format", "json")
    assert rc == 0
    doc = json.loads(out)
    assert any(f"only the first {simulate.MAX_WORKLOADS} Workloads are simulated" in n for n in doc["notes"])
    assert len(doc["steps"][0]["workloads"]) == simulate.MAX_WORKLOADS
    # --cubes 1000000000 on a TPU overlay: the reservation is capped.
    from tests.test_plan_packer import tpu_queue
    f = _write(tmp_path, tpu_queue(999999), "tpu.yaml")
    rc, out, _ = _cli(capsys, f, "--cubes", 1_000_000_000)
    assert rc == 0 and f"only the first {simulate.MAX_CUBES} of 1000000000 cubes are simulated" in out


def test_a_scenario_cohort_loop_is_refused_before_the_plan(capsys, tmp_path):
    f = _write(tmp_path, [cq(cohort="a"), _cohort("a", "b")] + _base()[1:])
    sc = tmp_path / "loop.yaml"
    sc.write_text(yamlio.dump({"steps": [{"title": "loop", "apply": {"manifest": _cohort("b", "a")}}]}))
    rc, out, err = _cli(capsys, f, "--scenario", sc)
    assert rc == 2 and out == ""
    assert str(sc) in err and "steps[0].apply: Cohort/a.spec.parentName: Cohort parents form a cycle: a -> b -> a" in err


@pytest.mark.parametrize("replicas", [10**8, 2**31, 2**63, 10**100], ids=["1e8", "2^31", "2^63", "1e100"])
def test_a_huge_scale_step_is_refused_before_the_work(replicas, capsys, tmp_path, small_cap):
    from generator.plan import simulate
    f = _write(tmp_path, _base() + [deployment("web", 1, {"cpu": "1m"})])
    sc = tmp_path / "scale.yaml"
    sc.write_text(f"steps:\n- title: up\n  scale: {{kind: Deployment, name: web, replicas: {replicas}}}\n")
    rc, out, err = _cli(capsys, f, "--scenario", sc)
    assert rc == 2 and out == ""
    assert str(sc) in err and "steps[0].scale.replicas: " in err
    assert f"replicas is more than a plan simulates ({simulate.MAX_WORKLOADS} Workloads in all)" in err
    assert len(err.strip().splitlines()) == 1


def test_capped_replicas_are_counted_once_after_scale_steps(capsys, tmp_path, small_cap):
    from generator.plan import simulate
    cap = simulate.MAX_WORKLOADS
    # A Job and `cap` replicas: one replica is left out; scaling back and up again leaves the
    # same one out, which the note counts once.
    f = _write(tmp_path, _base() + [job("j", 1, {"cpu": "1m"}), deployment("web", cap, {"cpu": "1m"})])
    sc = tmp_path / "scale.yaml"
    sc.write_text(yamlio.dump({"steps": [
        {"title": "down", "scale": {"kind": "Deployment", "name": "web", "replicas": cap - 5}},
        {"title": "up", "scale": {"kind": "Deployment", "name": "web", "replicas": cap}},
        {"title": "up again", "scale": {"kind": "Deployment", "name": "web", "replicas": cap}}]}))
    rc, out, _ = _cli(capsys, f, "--scenario", sc, "--format", "json")
    assert rc == 0
    notes = json.loads(out)["notes"]
    assert f"only the first {cap} Workloads are simulated; 1 more were left out" in " ".join(notes)


# ---------------------------------------------------------------- fuzz
JUNK = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**12), st.text(max_size=8),
                 st.sampled_from(["1e999999999", "-1", "500m", "16Gi", "Any", "LowerPriority", "Hold", "x" * 70]),
                 st.lists(st.integers(0, 3), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def _paths(obj, prefix=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield prefix + (i,)
            yield from _paths(v, prefix + (i,))


def _overlay():
    return [clusterqueue("a", [{"on": {"cpu": 4, "memory": "4Gi"}, "spot": {"cpu": 2, "memory": "2Gi"}}], "co",
                         within="LowerPriority", reclaim="Any", bwc=("LowerPriority", 5)),
            clusterqueue("b", [{"on": {"cpu": 4, "memory": "4Gi"}}], "co"),
            flavor("on", {"pool": "on"}), flavor("spot", {"pool": "spot"}, [{"key": "spot", "effect": "NoSchedule"}]),
            localqueue("a"), localqueue("b"),
            job("j1", 2, {"cpu": 1, "memory": "1Gi"}, queue="lq-a"), job("j2", 3, {"cpu": 2}, queue="lq-b"),
            deployment("d", 2, {"cpu": 1}, queue="lq-a")]


@st.composite
def mutated_overlay(draw):
    objs = _overlay()
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(objs) - 1))
        paths = list(_paths(objs[i]))
        path = draw(st.sampled_from(paths))
        target = objs[i]
        for k in path[:-1]:
            target = target[k]
        if draw(st.booleans()):
            target[path[-1]] = draw(JUNK)
        elif isinstance(target, dict):
            target.pop(path[-1], None)
    return objs


STEP = st.fixed_dictionaries({"title": st.text(min_size=1, max_size=5)}, optional={
    "scale": st.fixed_dictionaries({"kind": st.sampled_from(["Deployment", "Job"]), "name": st.sampled_from(["d", "j1"]),
                                    "replicas": st.integers(-1, 5)}),
    "quota": st.fixed_dictionaries({"clusterQueue": st.sampled_from(["a", "b", "zz"]), "flavor": st.sampled_from(
        ["on", "spot"]), "resource": st.sampled_from(["cpu", "memory"])},
        optional={"nominalQuota": JUNK, "borrowingLimit": JUNK, "lendingLimit": JUNK}),
    "stopPolicy": st.fixed_dictionaries({"clusterQueue": st.sampled_from(["a", "b"]),
                                         "policy": st.sampled_from(["None", "Hold", "HoldAndDrain", "Stop"])}),
    "finish": st.fixed_dictionaries({"kind": st.just("Job"), "name": st.sampled_from(["j1", "j2", "j9"])}),
    "admissionCheck": st.fixed_dictionaries({"name": st.just("ac"), "state": st.sampled_from(
        ["Pending", "Ready", "Retry", "Rejected", "Maybe"])}),
    "remove": st.fixed_dictionaries({"kind": st.sampled_from(["ClusterQueue", "ResourceFlavor"]),
                                     "name": st.sampled_from(["a", "on", "x"])}),
    "expect": st.fixed_dictionaries({}, optional={"admitted": st.lists(st.sampled_from(["j1", "ns/d#1"]), max_size=2)}),
})


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(objs=mutated_overlay(), steps=st.lists(STEP, min_size=1, max_size=4))
def test_fuzz_overlays_and_scenarios_never_traceback(objs, steps, tmp_path_factory):
    d = tmp_path_factory.mktemp("fuzz")
    f = d / "o.yaml"
    f.write_text(yamlio.dump_all(objs))
    sc = d / "s.yaml"
    sc.write_text(json.dumps({"steps": steps}))
    rc = cli.main(["plan", str(f), "--scenario", str(sc), "--format", "json"])
    assert rc in (0, 1, 2)


# ---------------------------------------------------------------- limits on the work a scenario asks for

def _submits(steps: int, count: int) -> dict:
    manifest = job("x", 1, {"cpu": 1})
    manifest["metadata"] = {"generateName": "x-", "namespace": manifest["metadata"]["namespace"]}
    return {"steps": [{"title": f"wave {i}", "submit": {"manifest": manifest, "count": count}} for i in range(steps)]}


def test_submissions_times_steps_are_refused_before_the_work(tmp_path, capsys):
    # 20 steps that each submit 1,000 Jobs: 1,000 + 2,000 + ... + 10,000 (simulated at most) + ... rows.
    import time

    from generator.plan import scenario, simulate
    overlay = _write(tmp_path, _base())
    f = tmp_path / "waves.yaml"
    f.write_text(yamlio.dump(_submits(20, 1000)))
    start = time.monotonic()
    rc, out, err = _cli(capsys, overlay, "--scenario", f)
    rows = sum(min(1000 * i, simulate.MAX_WORKLOADS) for i in range(1, 21))   # no initial workload in _base()
    assert rc == 2 and out == "" and len(err.splitlines()) == 1, err
    assert f"{rows:,} workload rows" in err and f"limit of {scenario.MAX_ROWS:,}" in err, err
    assert time.monotonic() - start < 5
    # The negative half: a scenario under the limit is planned.
    f.write_text(yamlio.dump(_submits(2, 3)))
    assert _cli(capsys, overlay, "--scenario", f)[0] == 0


def test_too_many_steps_are_refused(tmp_path, capsys):
    from generator.plan import scenario
    overlay = _write(tmp_path, _base())
    f = tmp_path / "steps.yaml"
    n = scenario.MAX_STEPS + 1
    f.write_text(yamlio.dump({"steps": [{"title": f"s{i}", "quota": {"clusterQueue": "cq", "flavor": "f",
                                                                     "resource": "cpu", "nominalQuota": 8}}
                                        for i in range(n)]}))
    rc, _, err = _cli(capsys, overlay, "--scenario", f)
    assert rc == 2 and f"{n:,} steps, over the limit of {scenario.MAX_STEPS:,}" in err, err


def test_a_huge_scenario_is_refused_by_its_size_before_parsing(tmp_path, capsys):
    # 9.7 MB of plain steps: no aliases, so the refusal names the size, not "aliases expand".
    import time

    from generator.plan import scenario
    overlay = _write(tmp_path, _base())
    f = tmp_path / "huge.yaml"
    line = "- {title: step, quota: {clusterQueue: cq, flavor: f, resource: cpu, nominalQuota: 8}}\n"
    f.write_text("steps:\n" + line * (9_700_000 // len(line)))
    size = f.stat().st_size
    start = time.monotonic()
    rc, _, err = _cli(capsys, overlay, "--scenario", f)
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert f"{size:,} bytes, over the limit of {scenario.MAX_SCENARIO_BYTES:,}" in err and "aliases" not in err
    assert time.monotonic() - start < 5


def test_changes_only_json_does_not_repeat_unchanged_workloads(tmp_path, capsys):
    overlay = _write(tmp_path, _base())
    f = tmp_path / "waves.yaml"
    f.write_text(yamlio.dump(_submits(3, 2)))
    full = json.loads(_cli(capsys, overlay, "--scenario", f, "--format", "json")[1])
    short = json.loads(_cli(capsys, overlay, "--scenario", f, "--format", "json", "--changes-only")[1])
    assert [len(s["workloads"]) for s in full["steps"]] == [0, 2, 4, 6]
    assert [len(s["workloads"]) for s in short["steps"]] == [0, 2, 2, 2]
    assert [s.get("unchangedWorkloads") for s in short["steps"]] == [None, 0, 2, 4]
    # Replaying the changes step by step gives the full report's rows back.
    rows: dict = {}
    for a, b in zip(full["steps"], short["steps"], strict=True):
        rows.update({r["workload"]: r for r in b["workloads"]})
        for gone in b.get("goneWorkloads", []):
            rows.pop(gone)
        assert sorted(rows.values(), key=json.dumps) == sorted(a["workloads"], key=json.dumps)
