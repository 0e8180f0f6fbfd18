"""Expectations that follow the user (issue #23 item 4): `plan` without an overlay replays
every scenarios/<profile>/*.yaml of the platform repository against overlays/<profile>; a
spec change that makes an `expect:` untrue names the file, step and expectation with the
old and the new outcome, and `--update-expectations` writes the new one into the file,
keeping the rest of it.

The fixture repository: one ClusterQueue with 4 GPUs, a Deployment `web` (2 GPUs a pod)
and a Job `train` (2 GPUs). By Kueue's rules (equal priority: no preemption within the
ClusterQueue) a second `web` replica waits while both run; with 6 GPUs it is admitted."""
import os

import pytest

from generator import cli
from generator.kernel import yamlio
from tests.test_plan_model import GPU, cq, deployment, flavor, job, lq

SCENARIO = """\
# The story of the fixture platform.
description: a second web replica waits for GPUs
initial:
  - {kind: Deployment, namespace: ns, name: web}
  - {kind: Job, namespace: ns, name: train}
expect:                     # both fit the budget
  admitted: [web#1, train]
steps:
  - title: web scales to 2
    scale: {kind: Deployment, namespace: ns, name: web, replicas: 2}
    expect:                 # the second replica waits: nothing it may preempt
      admitted: [web#1, train]
      pending: [web#2]      # keep this comment
      detail: {web#2: no workload it may preempt would make room}
  - title: train finishes
    finish: {kind: Job, namespace: ns, name: train}
    expect:
      admitted:
        - web#1
        - web#2
      count: {admitted: 2}
"""


def _write_repo(root, gpus: int):
    overlay = root / "overlays" / "gpu"
    overlay.mkdir(parents=True, exist_ok=True)
    objs = [cq(quota={GPU: gpus}), flavor(), lq(), deployment("web", 1, {GPU: 2}), job("train", 1, {GPU: 2})]
    (overlay / "objects.yaml").write_text(yamlio.dump_all(objs))
    (overlay / "kustomization.yaml").write_text("resources: [objects.yaml]\n")
    (root / "scenarios" / "gpu").mkdir(parents=True, exist_ok=True)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    _write_repo(tmp_path, 4)
    (tmp_path / "scenarios" / "gpu" / "story.yaml").write_text(SCENARIO)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _plan(capsys, *argv):
    rc = cli.main(["plan", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_plan_without_an_overlay_replays_the_repositorys_scenarios(repo, capsys):
    (repo / "scenarios" / "gpu" / "again.yaml").write_text(SCENARIO)
    rc, out, err = _plan(capsys)
    assert rc == 0, err
    assert out.count("Kueue plan for overlays/gpu (scenario scenarios/gpu/") == 2
    assert "scenarios/gpu/again.yaml" in out and "scenarios/gpu/story.yaml" in out


def test_a_spec_change_names_file_step_expectation_old_and_new(repo, capsys):
    _write_repo(repo, 6)            # the spec change: 6 GPUs, so the second replica is admitted
    rc, out, err = _plan(capsys)
    assert rc == 1
    assert ("plan: expectation failed: scenarios/gpu/story.yaml: step 1 (web scales to 2): expect.pending: "
            "expected ns/web#2 pending, but it is admitted") in err
    assert ("expect.detail: expected web#2 to say 'no workload it may preempt would make room', "
            "but it says 'admitted to f'") in err
    assert "--scenario scenarios/gpu/story.yaml --update-expectations" in err
    assert "Summary:" in out        # the full report, failure or not


def test_markdown_report_is_whole_when_an_expectation_fails(repo, capsys):
    _write_repo(repo, 6)
    rc, out, _ = _plan(capsys, "--format", "markdown")
    assert rc == 1
    assert out.startswith("### Kueue plan: `overlays/gpu`")
    assert "**Expectations that do not hold:**" in out
    assert "#### Step 2: train finishes" in out


def test_update_expectations_rewrites_only_the_values_that_changed(repo, capsys):
    _write_repo(repo, 6)
    rc, _, err = _plan(capsys, "--update-expectations")
    assert rc == 0, err
    text = (repo / "scenarios" / "gpu" / "story.yaml").read_text()
    # The step whose outcome changed: web#2 moves from pending to admitted; the comment on the
    # expect: line and the untouched steps stay as they were.
    assert "    expect:                 # the second replica waits: nothing it may preempt\n" \
           "      admitted: [web#1, train, web#2]\n" \
           "      detail: {web#2: admitted to f}\n" in text
    assert "pending: [web#2]" not in text
    assert text.startswith("# The story of the fixture platform.\n")
    assert "expect:                     # both fit the budget\n  admitted: [web#1, train]\n" in text
    assert "      admitted:\n        - web#1\n        - web#2\n      count: {admitted: 2}\n" in text
    rc, _, err = _plan(capsys)
    assert rc == 0, err


def test_update_expectations_of_one_scenario_against_an_overlay(repo, capsys):
    _write_repo(repo, 6)
    story = str(repo / "scenarios" / "gpu" / "story.yaml")
    rc, _, err = _plan(capsys, os.path.join("overlays", "gpu"), "--scenario", story)
    assert rc == 1 and f"--scenario {story} --update-expectations" in err
    rc, _, _ = _plan(capsys, os.path.join("overlays", "gpu"), "--scenario", story, "--update-expectations")
    assert rc == 0
    rc, _, _ = _plan(capsys, os.path.join("overlays", "gpu"), "--scenario", story)
    assert rc == 0


def test_update_expectations_leaves_a_file_whose_expectations_hold(repo, capsys):
    before = (repo / "scenarios" / "gpu" / "story.yaml").read_text()
    rc, _, _ = _plan(capsys, "--update-expectations")
    assert rc == 0
    assert (repo / "scenarios" / "gpu" / "story.yaml").read_text() == before


def test_no_overlay_and_no_scenarios_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rc, _, err = _plan(capsys)
    assert rc == 2
    assert "no overlay given and no scenarios/<profile>/*.yaml" in err


def test_a_scenario_without_its_profiles_overlay_is_one_line(repo, capsys):
    (repo / "scenarios" / "cpu").mkdir()
    (repo / "scenarios" / "cpu" / "x.yaml").write_text(SCENARIO)
    rc, _, err = _plan(capsys)
    assert rc == 2
    assert "scenarios/cpu/x.yaml: no overlay overlays/cpu for this scenario's profile (cpu)" in err
