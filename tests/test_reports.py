"""Reports people can act on: FREE counts what a queue has lent, each scenario ends in a
one-line verdict (and --summary shows little else), and the plot is an extra with one panel
per accelerator, a folder in repository mode, nothing left behind when it cannot be drawn."""
from __future__ import annotations

import configparser
import json
from decimal import Decimal

import pytest

from generator.kernel import paths
from generator.plan import plot, report
from generator.plan.results import Usage
from tests import helpers


def test_free_is_what_the_queue_can_take_now_lent_quota_excluded():
    # Nominal 2 GPUs, none used by the queue itself, both lent to the cohort: nothing is free for it.
    lent = Usage("team-a", "spot", "nvidia.com/gpu", used=Decimal(0), nominal=Decimal(2), lent=Decimal(2),
                 cohort="all")
    cells = dict(zip(report.USAGE_HEADERS, report._usage_cells(lent), strict=True))
    assert cells["free"] == "0" and cells["lent"] == "2"
    # The negative half: 1 used, 1 lent out of 4 leaves 2.
    some = Usage("team-a", "spot", "nvidia.com/gpu", used=Decimal(1), nominal=Decimal(4), lent=Decimal(1),
                 cohort="all")
    assert dict(zip(report.USAGE_HEADERS, report._usage_cells(some), strict=True))["free"] == "2"


@pytest.fixture
def repo(tmp_path, monkeypatch, capsys):
    root = tmp_path / "platform"
    assert helpers.run_cli(capsys, "init", "--no-git", root)[0] == 0    # h100-l4-spot: H100 and L4 pools
    monkeypatch.chdir(root)
    assert helpers.run_cli(capsys, "synth")[0] == 0
    return root


def test_each_scenario_ends_in_a_verdict_and_summary_shows_little_else(repo, capsys):
    code, out, _ = helpers.run_cli(capsys, "plan")
    verdict = "Verdict: scenarios/gpu-cluster/serving-burst.yaml: expectations hold (3 of 3 step(s) checked)"
    assert code == 0 and verdict in out.splitlines()
    code, short, _ = helpers.run_cli(capsys, "plan", "--summary")
    assert code == 0 and verdict in short.splitlines()
    assert "quota of ClusterQueue" not in short and len(short.splitlines()) < len(out.splitlines()) / 4
    code, md, _ = helpers.run_cli(capsys, "plan", "--summary", "--format", "markdown")
    assert f"**{verdict}**" in md
    assert json.loads(helpers.run_cli(capsys, "plan", "--format", "json")[1])["verdict"] == \
        "expectations hold (3 of 3 step(s) checked)"
    # A scenario whose expectation no longer holds: the verdict names the step.
    scen = repo / "scenarios" / "gpu-cluster" / "serving-burst.yaml"
    scen.write_text(scen.read_text().replace("pending: [llama-serving#3]", "preempted: [llama-serving#3]"))
    code, out, _ = helpers.run_cli(capsys, "plan", "--summary")
    assert code == 1
    assert ("Verdict: scenarios/gpu-cluster/serving-burst.yaml: expectations FAIL in 1 of 3 checked step(s): "
            "step 2 (serving asks for a third replica)") in out.splitlines()


def test_the_plot_is_an_extra():
    cfg = configparser.ConfigParser()
    cfg.read(paths.ROOT / "setup.cfg")
    plot_extra = [line.strip() for line in cfg["options.extras_require"]["plot"].splitlines() if line.strip()]
    assert [line.split(">")[0] for line in plot_extra] == ["matplotlib"]
    assert "pip install 'gke-ml-platform[plot]'" in plot.MISSING


def test_repository_plot_is_a_folder_with_a_panel_per_accelerator(repo, capsys):
    pytest.importorskip("matplotlib")
    code, _, err = helpers.run_cli(capsys, "plan", "--plot", "plots")
    assert code == 0, err
    assert [p.name for p in (repo / "plots").iterdir()] == ["gpu-cluster--serving-burst.png"]
    from generator import plan as planmod
    result = planmod.plan([str(repo / "overlays" / "gpu-cluster")], str(repo / "scenarios" / "gpu-cluster" /
                                                                          "serving-burst.yaml"))
    gpu = "nvidia.com/gpu"
    # The H100 and L4 pools of the example are two flavors of one resource: two panels, never one total.
    assert plot.flavors_of(result, gpu) == ["h100", "l4-spot"]
    order, _, quota = plot.series(result, gpu, flavor="h100")
    assert order == ["ml/llama-serving#1", "ml/llama-serving#2"] and quota == [16.0] * 3   # 2 x a3-highgpu-8g
    order, _, quota = plot.series(result, gpu, flavor="l4-spot")
    assert order == ["ml/finetune-spot"] and quota == [8.0] * 3                            # 4 x g2-standard-24


def test_a_plot_that_cannot_be_drawn_leaves_nothing(repo, capsys, monkeypatch):
    code, out, err = helpers.run_cli(capsys, "plan", "--plot", "plan.png")
    assert (code, out) == (2, "") and "give a folder" in err and not (repo / "plan.png").exists()
    monkeypatch.setattr(plot, "available", lambda: False)
    code, out, err = helpers.run_cli(capsys, "plan", "--plot", "plots")
    assert (code, out) == (2, "") and "pip install 'gke-ml-platform[plot]'" in err
    assert not (repo / "plots").exists()
    assert "make" not in err


def test_update_expectations_keeps_the_authors_formatting_and_flags_the_description(repo, capsys):
    scen = repo / "scenarios" / "gpu-cluster" / "serving-burst.yaml"
    text = scen.read_text()
    usage = "usage: [{clusterQueue: gpus, flavor: h100, resource: nvidia.com/gpu, used: 16}]"
    assert usage in text and "      pending: [llama-serving#3]" in text
    # The author's own spacing, quotes and comment, and an outcome that does not hold any more.
    mine = 'usage: [ { clusterQueue: gpus, flavor: h100, resource: nvidia.com/gpu, used: "8" } ]   # two replicas'
    scen.write_text(text.replace(usage, mine).replace("      pending: [llama-serving#3]",
                                                      "      preempted: [llama-serving#3]"))
    code, _, err = helpers.run_cli(capsys, "plan", "--update-expectations")
    assert code == 0, err
    after = scen.read_text()
    # Only the values changed: 16 GPUs are used by two 8-GPU replicas (the scenario's own numbers).
    assert after == text.replace(usage, mine.replace('"8"', '"16"'))
    assert "plan: scenarios/gpu-cluster/serving-burst.yaml: wrote the new outcome into 2 expect: block(s)" in err
    # The description speaks of preempting: it may describe the old outcome (a preempted replica).
    assert ("plan: scenarios/gpu-cluster/serving-burst.yaml: the description (line 3) may describe the old outcome "
            "(8, preempt): check it") in err.splitlines()
    # Nothing to rewrite: nothing flagged.
    code, _, err = helpers.run_cli(capsys, "plan", "--update-expectations")
    assert code == 0 and "may describe" not in err
