"""The fit checks run on what the builders emitted (model/fit.py, called by synth with each
overlay's objects and the workload owning each): a builder changed to ask for what can never
run is refused by synth, one line per problem naming the workload, exit 2, nothing written.
Each mutation changes one builder the way a slip in its code would."""
from __future__ import annotations

from typing import Any

from generator.builders import core, k8s
from generator.builders.workloads import finetune

from . import helpers

# finetune-gemma-l4: line 175 of tests/fixtures/platform.yaml, as a problem's position names it
WORKLOAD = f"{helpers.FIXTURE_SPEC}:175:5: workloads['finetune-gemma-l4']"


class _Swap:
    """A module as the builder sees it, with some names swapped."""

    def __init__(self, module: Any, **names: Any) -> None:
        self._module, self._names = module, names

    def __getattr__(self, name: str) -> Any:
        return self._names[name] if name in self._names else getattr(self._module, name)


def _synth(capsys, tmp_path) -> tuple[int, list[str]]:
    code, _, err = helpers.run_cli(capsys, "synth", "--spec", helpers.FIXTURE_SPEC, "--out", tmp_path / "out")
    assert not (tmp_path / "out").exists(), "nothing is written"
    return code, helpers.without_warnings(err)


def test_the_fixture_synthesizes_as_built(tmp_path, capsys):
    code, err = helpers.run_cli(capsys, "synth", "--spec", helpers.FIXTURE_SPEC, "--out", tmp_path / "out")[::2]
    assert code == 0, err


def test_three_gpus_per_pod_on_a_two_gpu_machine_is_refused(tmp_path, capsys, monkeypatch):
    # g2-standard-24: 2 NVIDIA L4 per VM (Compute Engine accelerator-optimized machine types, G2 series).
    monkeypatch.setattr(finetune, "core", _Swap(core, accelerator_request=lambda accel, n: {"nvidia.com/gpu": 3}))
    code, err = _synth(capsys, tmp_path)
    assert code == 2
    assert err == [f"{WORKLOAD}: one pod of Job finetune-gemma-l4 of 'finetune-gemma-l4' on profile 'l4-standard' "
                   "(pod set main) requests 3 nvidia.com/gpu, but one g2-standard-24 node holds 2: it can never be "
                   "scheduled"]


def test_a_dropped_cpu_request_is_refused_on_autopilot(tmp_path, capsys, monkeypatch):
    def no_cpu(profile, requests, accelerators=None):
        return core.container_resources(profile, {r: v for r, v in requests.items() if r != "cpu"}, accelerators)
    monkeypatch.setattr(finetune, "core", _Swap(core, container_resources=no_cpu))
    code, err = _synth(capsys, tmp_path)
    assert code == 2
    assert len(err) == 1, err
    assert err[0].startswith(f"{WORKLOAD}: ") and "'finetune-gemma-l4' on profile 'l4-autopilot'" in err[0]
    assert "requests no cpu" in err[0]


def test_a_wrong_pod_count_is_refused(tmp_path, capsys, monkeypatch):
    def job_spec(**props):
        return k8s.JobSpec(**{**props, "parallelism": 40, "completions": 40})
    monkeypatch.setattr(finetune, "k8s", _Swap(k8s, JobSpec=job_spec))
    code, err = _synth(capsys, tmp_path)
    assert code == 2
    assert err and all(line.startswith(f"{WORKLOAD}: ") and "can never be admitted" in line
                       for line in err), err
    assert any("320 cpu for pod set main (40 pods × 8)" in line for line in err), err   # the fixture asks 8 CPUs a pod
