"""The smaller items of a new user's first day: an unknown machine type hides no other problem,
a pod's GPUs written under another kind's name get that kind's name, `images:` is not needed
when every workload brings its own, `init --list-examples` keeps each first sentence whole,
and `schema --help` says what the command does for an installed tool."""
from __future__ import annotations

import copy

import pytest

from generator import cli, init, model as specmod
from generator.builders import tree
from generator.kernel import paths, yamlio
from generator.kernel.errors import SpecError
from tests import helpers

DEFAULT = paths.EXAMPLES / f"{init.DEFAULT_EXAMPLE}.yaml"


def _messages(raw: dict) -> list[str]:
    with pytest.raises(SpecError) as e:
        specmod.from_dict(copy.deepcopy(raw), "spec.yaml")
    return [f"{p.path}: {p.message}" for p in e.value.problems]


def _workload(raw: dict, kind: str) -> dict:
    return next(w for w in raw["workloads"] if w["kind"] == kind)


def test_an_unknown_machine_type_does_not_hide_a_workload_on_another_pool():
    raw = helpers.example_raw(DEFAULT)
    pools = raw["profiles"]["gpu-cluster"]["nodePools"]
    h100 = next(p for p in pools if p["machineType"] == "a3-highgpu-8g")
    h100["machineType"] = "a3-highgpu-9g"
    ft = _workload(raw, "finetune")
    assert ft["accelerator"] == "nvidia-l4"
    ft["gpusPerNode"] = 4                       # g2-standard-24 carries 2 L4s (GKE's machine table)
    got = _messages(raw)
    assert any("unknown machine type 'a3-highgpu-9g'" in m for m in got), got
    assert any("a pod asks for 4 nvidia-l4 but g2-standard-24 has 2 per node" in m for m in got), got
    # The negative half: with the machine type fixed, the fit problem alone.
    h100["machineType"] = "a3-highgpu-8g"
    got = _messages(raw)
    assert [m for m in got if "machine type" in m] == [] and len(got) == 1


@pytest.mark.parametrize("kind, wrong, right", [("finetune", "gpus", "gpusPerNode"), ("tgi", "gpusPerNode", "gpus"),
                                                ("tgi", "accelerators", "gpus")])
def test_another_kinds_name_for_the_gpus_of_a_pod_gets_this_kinds(kind, wrong, right):
    raw = helpers.example_raw(DEFAULT)
    w = _workload(raw, kind)
    w[wrong] = w.pop(right)
    got = _messages(raw)
    assert any(m.endswith(f"unknown field {wrong!r}; did you mean {right!r}? (the GPUs of a pod are {right!r} in "
                          "this workload kind)") for m in got), got


def test_a_spec_of_manifest_workloads_needs_no_images():
    raw = helpers.example_raw(paths.EXAMPLES / "team-jobset.yaml")
    raw["workloads"] = [w for w in raw["workloads"] if w["kind"] == "manifest"]
    assert raw["workloads"]
    raw.pop("images", None)
    out = tree.build(specmod.from_dict(copy.deepcopy(raw), str(paths.EXAMPLES / "team-jobset.yaml")))
    assert any(p.startswith("overlays/") for p in out)
    # A workload that names an image still needs it declared.
    raw2 = helpers.example_raw(DEFAULT)
    raw2.pop("images")
    assert any("unknown image" in m for m in _messages(raw2))


def test_list_examples_keeps_each_first_sentence_whole(capsys):
    code, out, _ = helpers.run_cli(capsys, "init", "--list-examples")
    assert code == 0
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert lines["tpu-v6e"] == ("A GKE Standard cluster with TPU v6e (Trillium) capacity as a static node pool: "
                                "8 x ct6e-standard-4t created with topology 4x4, i.e. two 4x4 slices of 16 chips.")
    assert all(text.endswith(".") for text in lines.values())


def test_schema_help_says_it_prints_the_schema():
    sub = next(a for a in cli.build_parser("gke-ml-platform")._subparsers._group_actions[0].choices.items()
               if a[0] == "schema")[1]
    assert sub.description.startswith("Print the JSON Schema of platform.yaml")


JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: demo
  namespace: default
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox:1.36
        resources:
          requests:
            cpu: lots
            memory: 1Gi
"""


def test_validate_on_a_loose_file_gives_line_and_column(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)   # outside any platform repository
    f = tmp_path / "job.yaml"
    f.write_text("# one object\n---\n" + JOB)
    code, out, _ = helpers.run_cli(capsys, "validate", "--crd-dir", helpers.CRD_ROOT, f)
    # `cpu: lots` is line 15 of the Job, line 17 of the file (2 lines before the Job), its key at column 13.
    # (Standard input has no file to point into: test_validate_cli's test_stdin holds it without a position.)
    line = next(x for x in out.splitlines() if "SC001" in x)
    assert code == 1 and line.startswith("job.yaml:17:13: Job/default/demo: spec.template.spec.containers[0]."
                                         "resources.requests.cpu: SC001 error: 'lots' is not a quantity")


def test_no_empty_argocd_folder(tmp_path, capsys, monkeypatch):
    repo = tmp_path / "p"
    assert helpers.run_cli(capsys, "init", "--no-git", "--example", "multikueue", repo)[0] == 0
    monkeypatch.chdir(repo)
    spec = repo / "platform.yaml"
    assert spec.read_text().count("\ngitops:") == 1
    assert helpers.run_cli(capsys, "synth")[0] == 0 and any((repo / "argocd").iterdir())
    # gitops removed from the spec: the generated Argo CD objects go, and so does their folder.
    raw = yamlio.load_user(spec.read_text())
    raw.pop("gitops")
    spec.write_text(yamlio.dump(raw))
    code, out, _ = helpers.run_cli(capsys, "synth")
    assert code == 0 and "argocd/" not in out and not (repo / "argocd").exists()
    assert helpers.run_cli(capsys, "check")[0] == 0
