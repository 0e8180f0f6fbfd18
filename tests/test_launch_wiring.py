"""Launch wiring and placement: the JAX rank on GPUs by Kubernetes' env expansion rules
(tests/k8s_env.py restates them), a placed Deployment's priority where Kueue reads it, and a
Kueue downgrade the API server would refuse, refused in one line by synth, check and diff."""
from __future__ import annotations

from pathlib import Path

import pytest

from generator.diff import report
from generator.kernel import kueue_api, paths, yamlio
from tests import helpers, k8s_env

EXAMPLES = paths.ROOT / "examples"

# ---------------------------------------------------------------- the expansion rules, checked first
# kubernetes/kubernetes third_party/forked/golang/expansion/expand_test.go doExpansionTest, with
# TestMapping's context (a subset of its cases, named as there).
CONTEXT = {"VAR_A": "A", "VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)", "VAR_EMPTY": ""}
UPSTREAM = [
    ("whole string", "$(VAR_A)", "A"),
    ("repeat", "$(VAR_A)-$(VAR_A)", "A-A"),
    ("compound", "$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"),
    ("escape & expand", "$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"),
    ("compound escape", "$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"),
    ("mixed in escapes", "f000-$$VAR_A", "f000-$VAR_A"),
    ("nested var references", "$(VAR_A$(VAR_B))", "$(VAR_A$(VAR_B))"),
    ("value is a reference", "$(VAR_REF)", "$(VAR_A)"),
    ("empty var", "foo$(VAR_EMPTY)bar", "foobar"),
    ("unterminated expression", "foo$(VAR_Awhoops!", "foo$(VAR_Awhoops!"),
    ("bare operators are ignored", "$VAR_A", "$VAR_A"),
    ("undefined vars are passed through", "$(VAR_DNE)", "$(VAR_DNE)"),
    ("multiple (even) operators, var undefined", "$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"),
    ("multiple (odd) operators, var defined", "$$$$$$$(VAR_A)", "$$$A"),
    ("shell syntax ignored", "${VAR_A}", "${VAR_A}"),
    ("trailing incomplete expression not consumed", "$(VAR_B)_______$(A", "B_______$(A"),
    ("operator at end of input string is preserved", "$(VAR_A)foobarzab$", "Afoobarzab$"),
]


@pytest.mark.parametrize("name, given, want", UPSTREAM, ids=[c[0] for c in UPSTREAM])
def test_expansion_replays_upstream(name, given, want):
    assert k8s_env.expand(given, k8s_env.mapping_for(CONTEXT)) == want


def test_env_values_see_only_earlier_entries():
    # expand_test.go TestMapReference: FOO, ZOO=$(FOO)-1, BLU=$(ZOO)-2 -> bar, bar-1, bar-1-2.
    env = k8s_env.environment({"env": [{"name": "FOO", "value": "bar"}, {"name": "ZOO", "value": "$(FOO)-1"},
                                       {"name": "BLU", "value": "$(ZOO)-2"}]}, {})
    assert env == {"FOO": "bar", "ZOO": "bar-1", "BLU": "bar-1-2"}
    # The kubelet's order rule (makeEnvironmentVariables): a later entry is not yet defined.
    env = k8s_env.environment({"env": [{"name": "A", "value": "$(B)"}, {"name": "B", "value": "b"}]}, {})
    assert env["A"] == "$(B)"


# ---------------------------------------------------------------- JAX on GPUs
def _jax_container() -> tuple[dict, dict]:
    """The trainer container of the example's JAX JobSet on GPUs, as the Job controller makes
    pod 1's (of 2), and that pod's metadata (the completion-index annotation the controller sets)."""
    raw = helpers.example_raw(EXAMPLES / "gpu-training-tas.yaml")
    tree = helpers.render(raw)
    (js,) = [yamlio.load_all(t)[0] for p, t in tree.items() if p.endswith("jobset_research_jax-sweep.yaml")]
    template = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    (c,) = template["spec"]["containers"]
    return k8s_env.as_job_controller_creates(c), {"annotations": {k8s_env.COMPLETION_INDEX: "1"}}


def test_the_jax_rank_is_the_completion_index_by_kubernetes_rules():
    container, pod = _jax_container()
    env = k8s_env.environment(container, pod)
    assert env["PROCESS_ID"] == "1"
    assert env["JOB_COMPLETION_INDEX"] == "1"
    assert env["NUM_PROCESSES"] == "2"   # the example's jax-sweep: nodes: 2


def test_the_old_wiring_never_expands():
    """The negative half: PROCESS_ID: $(JOB_COMPLETION_INDEX), which the controller defines after it."""
    container, pod = _jax_container()
    env = [e for e in container["env"] if e["name"] != "PROCESS_ID"]
    env.insert(0, {"name": "PROCESS_ID", "value": "$(JOB_COMPLETION_INDEX)"})
    assert k8s_env.environment({**container, "env": env}, pod)["PROCESS_ID"] == "$(JOB_COMPLETION_INDEX)"


def test_launcher_arguments_still_see_the_index():
    """Command and args are expanded with the whole environment (torchrun's --node_rank)."""
    raw = helpers.example_raw(EXAMPLES / "gpu-training-tas.yaml")
    tree = helpers.render(raw)
    (job,) = [yamlio.load_all(t)[0] for p, t in tree.items() if p.endswith("job_research_pretrain.yaml")]
    (c,) = job["spec"]["template"]["spec"]["containers"]
    c = k8s_env.as_job_controller_creates(c)
    pod = {"annotations": {k8s_env.COMPLETION_INDEX: "5"}}
    assert "--node_rank=5" in k8s_env.command(c, k8s_env.environment(c, pod))


# ---------------------------------------------------------------- a placed Deployment's priority
def test_a_placed_deployment_carries_its_priority_on_its_pods(tmp_path):
    """A manifest with a JobSet and a Deployment: the tier's WorkloadPriorityClass label goes on
    the Deployment's pod template, where Kueue's pod integration reads it from each Pod
    (jobframework WorkloadPriorityClassName on the Pod's labels)."""
    raw = helpers.example_raw(EXAMPLES / "team-jobset.yaml")
    jobset = yamlio.load_all((EXAMPLES / "manifests" / "llama-jobset.yaml").read_text())
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "eval-server"}, "spec": {
        "replicas": 1, "selector": {"matchLabels": {"app": "eval"}}, "template": {
            "metadata": {"labels": {"app": "eval"}},
            "spec": {"securityContext": {"runAsNonRoot": True, "runAsUser": 1000}, "containers": [{
                "name": "server", "image": "us-docker.pkg.dev/example-project/team-a/eval:1.0.0",
                "resources": {"requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"},
                              "limits": {"memory": "64Gi", "nvidia.com/gpu": "1"}}}]}}}}
    manifest = tmp_path / "mixed.yaml"
    manifest.write_text(yamlio.dump_all([*jobset, deployment]))
    raw["workloads"][0]["file"] = str(manifest)
    tree = helpers.tree.build(helpers.specmod.from_dict(raw, str(tmp_path / "test-spec.yaml")))   # beside its manifest
    (dep,) = [yamlio.load_all(t)[0] for p, t in tree.items() if p.endswith("deployment_team-a_eval-server.yaml")]
    wpc = raw["priorityTiers"]["batch"]["workloadPriorityClass"]["name"]
    pod_labels = dep["spec"]["template"]["metadata"]["labels"]
    assert pod_labels[kueue_api.PRIORITY_LABEL] == wpc and pod_labels[kueue_api.QUEUE_LABEL] == "lq"


# ---------------------------------------------------------------- a Kueue downgrade
GPU_ONLY = Path(__file__).parent / "fixtures" / "capacity.yaml"   # no TPU profile: v0.12.3 can run it


def _gpu_raw() -> dict:
    return yamlio.load_user(GPU_ONLY.read_text())


def _tree(version: str) -> dict[str, str]:
    raw = _gpu_raw()
    raw["kueue"]["version"] = version
    return helpers.render(raw)


def test_a_downgrade_from_v1beta2_storage_is_refused_in_one_line():
    # v0.17.4's CRDs store v1beta2 (crds/kueue/v0.17.4: versions v1beta1, v1beta2 storage: true);
    # v0.12.3's list v1beta1 only: the API server refuses the CRD update.
    lines = report.kueue_downgrades(_tree("v0.17.4"), _tree("v0.12.3"))
    assert len(lines) == 1
    assert "v0.17.4 -> v0.12.3 is a downgrade the API server refuses" in lines[0]
    assert "--allow-kueue-downgrade" in lines[0]
    # The negative half: an upgrade, and a move between two v1beta2 releases, pass.
    assert report.kueue_downgrades(_tree("v0.12.3"), _tree("v0.17.4")) == []
    assert report.kueue_downgrades(_tree("v0.19.2"), _tree("v0.17.4")) == []


def test_synth_refuses_a_downgrade_unless_allowed(tmp_path, capsys):
    raw = _gpu_raw()
    raw["kueue"]["version"] = "v0.17.4"
    spec = helpers.write_spec(tmp_path / "platform.yaml", raw)
    code, _, err = helpers.run_cli(capsys, "synth", "--spec", spec, "--out", tmp_path)
    assert code == 0, err
    raw["kueue"]["version"] = "v0.12.3"
    helpers.write_spec(spec, raw)
    code, _, err = helpers.run_cli(capsys, "synth", "--spec", spec, "--out", tmp_path)
    assert code == 2
    refused = [x for x in helpers.without_warnings(err) if "downgrade" in x]
    assert refused and all("kueue.version" in x for x in refused), err
    assert "v0.17.4" in (tmp_path / "controllers").joinpath(
        sorted(p.name for p in (tmp_path / "controllers").iterdir())[0], "kueue", "kustomization.yaml").read_text()
    code, _, err = helpers.run_cli(capsys, "check", "--spec", spec, "--out", tmp_path)
    assert code == 1 and "check: refused: " in err
    code, _, err = helpers.run_cli(capsys, "synth", "--spec", spec, "--out", tmp_path, "--allow-kueue-downgrade")
    assert code == 0, err
    assert "allowed by --allow-kueue-downgrade" in err


def test_diff_says_the_downgrade_is_refused():
    r = report.compare(_tree("v0.17.4"), _tree("v0.12.3"), "0" * 40, "test")
    assert any(n.startswith("refused: ") and "downgrade" in n for n in r.notes)
    assert not any(n.startswith("refused: ") for n in report.compare(_tree("v0.12.3"), _tree("v0.17.4"),
                                                                     "0" * 40, "test").notes)


def test_the_downgrade_steps_are_documented():
    text = (paths.ROOT / "docs" / "kueue-upgrades.md").read_text()
    assert "--allow-kueue-downgrade" in text and "storedVersions" in text
    assert Path(paths.ROOT / "mkdocs.yml").read_text().count("kueue-upgrades.md") == 1
