"""Kueue manages every job a team may submit: the generated manager Configuration lists Kueue's
default integration at the pinned release plus what the platform uses, replayed through Kueue's
own configuration defaulting (apis/config/<api>/defaults.go, SetDefaults_Configuration), and
validate (KQ030) and plan say when a queued object's kind is left unmanaged.

Expected values come from Kueue's sources, not from the generator: defaultJobFrameworkName is
"batch/job" at v0.12.3, v0.17.4 and v0.19.2 (apis/config/v1beta1 and v1beta2 defaults.go)."""
from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path

import pytest

from generator import cli, model as specmod
from generator.kernel import kueue_api, paths, versions, yamlio
from generator.kernel.errors import SpecError
from generator.plan import overlay, simulate
from generator.validate import command, validate
from tests import helpers

EXAMPLES = sorted((paths.ROOT / "examples").glob("*.yaml"))
RELEASES = versions.known("kueue")
JOB_FRAMEWORK = "batch/job"   # defaultJobFrameworkName, apis/config/<api>/defaults.go at every pinned release


# ---------------------------------------------------------------- Kueue's defaulting, restated
# TestSetDefaults_Configuration in apis/config/v1beta1/defaults_test.go (v0.12.3) and
# apis/config/v1beta2/defaults_test.go (v0.17.4, v0.19.2): the cases that touch integrations.
UPSTREAM_CASES = {
    # "defaulting namespace": a Configuration without integrations gets defaultIntegrations,
    # Frameworks: []string{defaultJobFrameworkName}.
    "defaulting namespace": ({}, (JOB_FRAMEWORK,)),
    # "integrations": Frameworks {"a", "b"} is kept as given.
    "integrations": ({"integrations": {"frameworks": ["a", "b"]}}, ("a", "b")),
}


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("case", sorted(UPSTREAM_CASES))
def test_configuration_defaulting_replays_upstream(release, case):
    config, want = UPSTREAM_CASES[case]
    assert kueue_api.enabled_integrations(copy.deepcopy(config), versions.kueue_release(release)) == want


@pytest.mark.parametrize("release, want", [
    # v0.12.3 defaults.go: `if cfg.Integrations.Frameworks == nil` - an empty list stays empty.
    ("v0.12.3", ()),
    # v0.17.4 and v0.19.2 defaults.go: `if len(cfg.Integrations.Frameworks) == 0`.
    ("v0.17.4", (JOB_FRAMEWORK,)),
    ("v0.19.2", (JOB_FRAMEWORK,)),
])
def test_an_empty_list_is_defaulted_from_v0_13_only(release, want):
    config = {"integrations": {"frameworks": []}}
    assert kueue_api.enabled_integrations(config, versions.kueue_release(release)) == want


# ---------------------------------------------------------------- every example
def _configs(tree: dict[str, str]) -> dict[str, dict]:
    """profile -> the Kueue Configuration synth wrote under controllers/<profile>/kueue."""
    out = {}
    for path, text in tree.items():
        parts = path.split("/")
        if parts[0] == "controllers" and parts[2:] == ["kueue", "kueue-manager-config.yaml"]:
            (cm,) = yamlio.load_all(text)
            out[parts[1]] = yamlio.load_strict(cm["data"][kueue_api.CONFIG_KEY])
    return out


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_a_plain_job_with_the_queue_label_is_managed_on_every_example(example):
    raw = helpers.example_raw(example)
    s = specmod.from_dict(copy.deepcopy(raw), "test-spec.yaml")
    configs = _configs(helpers.render(raw))
    assert sorted(configs) == sorted(s.profiles)
    for profile, config in configs.items():
        release = versions.kueue_release(s.profiles[profile].kueue.version)
        enabled = kueue_api.enabled_integrations(config, release)
        assert JOB_FRAMEWORK in enabled, (example.name, profile, enabled)
        # Written out, never left to Kueue's defaulting (v0.12.3 does not default an empty list).
        assert config["integrations"]["frameworks"]


def _team_jobset(integrations: list[str] | None) -> dict:
    raw = helpers.example_raw(paths.ROOT / "examples" / "team-jobset.yaml")
    if integrations is not None:
        raw["kueue"]["integrations"] = integrations
    return raw


def test_a_narrowed_list_is_what_the_configuration_enables():
    """The negative half: `kueue.integrations` narrows on purpose, and a plain Job is then unmanaged."""
    configs = _configs(helpers.render(_team_jobset(["jobset.x-k8s.io/jobset"])))
    for config in configs.values():
        assert config["integrations"]["frameworks"] == ["jobset.x-k8s.io/jobset"]
        assert JOB_FRAMEWORK not in kueue_api.enabled_integrations(config, versions.kueue_release("v0.17.4"))


def test_a_narrowed_list_must_keep_what_the_workloads_need():
    with pytest.raises(SpecError) as e:
        specmod.from_dict(_team_jobset(["batch/job", "ray.io/rayjob"]), "test-spec.yaml")
    messages = [(p.path, p.message) for p in e.value.problems]
    assert any(path == "kueue.integrations[1]" and "'ray.io/rayjob'" in m for path, m in messages), messages
    assert any(path == "kueue.integrations" and "jobset.x-k8s.io/jobset" in m for path, m in messages), messages


# ---------------------------------------------------------------- validate and plan warn
PLAIN_JOB = {
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "plain", "namespace": "team-a", "labels": {kueue_api.QUEUE_LABEL: "lq"}},
    "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{
        "name": "main", "image": "busybox:1.36",
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}}]}}},
}


def _queues(frameworks: list[str] | None) -> list[dict]:
    config: dict = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    if frameworks is not None:
        config["integrations"] = {"frameworks": frameworks}
    return [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": kueue_api.CONFIG_MAP, "namespace": "kueue-system"},
         "data": {kueue_api.CONFIG_KEY: yamlio.dump(config)}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
         "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": [
             {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "8"},
                                               {"name": "memory", "nominalQuota": "32Gi"}]}]}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": "team-a"},
         "spec": {"clusterQueue": "cq"}},
        copy.deepcopy(PLAIN_JOB),
    ]


@pytest.mark.parametrize("frameworks, status", [
    (None, "admitted"),                         # left out: batch/job by default
    ([], "admitted"),                           # v0.17.4 defaults an empty list too
    (["jobset.x-k8s.io/jobset"], "unmanaged"),  # narrowed: the Job starts outside any quota
])
def test_plan_says_a_job_is_unmanaged_by_the_configuration(frameworks, status):
    sim = simulate.Simulator(overlay.build("case", _queues(frameworks)), kueue_version="v0.17.4")
    sim.begin_step()
    for owner in sim.cluster.owners:
        sim.submit(owner)
    sim.settle()
    st = sim.states["team-a/plain"]
    assert st.status == status, st.reason
    if status == "unmanaged":
        assert "does not enable batch/job" in st.reason and "kueue.integrations" in st.reason


def test_validate_in_repository_mode_reads_the_configuration_beside_the_overlay(capsys, tmp_path):
    """synth writes controllers/<profile>/kueue; validate of the overlay reads it (KQ030)."""
    root = tmp_path / "repo"
    root.mkdir()
    raw = _team_jobset(None)
    for w in raw["workloads"]:   # the repository holds the manifests its spec names
        if w.get("file"):
            (root / Path(w["file"]).name).write_text(Path(w["file"]).read_text())
            w["file"] = Path(w["file"]).name
    (root / "platform.yaml").write_text(yamlio.dump(raw))
    s = helpers.synth_into(root, raw, str(root / "platform.yaml"))
    profile = next(iter(s.profiles))
    namespace, queue = sorted(s.local_queues_for(profile))[0]
    job = copy.deepcopy(PLAIN_JOB)
    job["metadata"].update(namespace=namespace, labels={kueue_api.QUEUE_LABEL: queue})
    job["spec"]["template"]["spec"]["containers"][0]["securityContext"] = {
        "allowPrivilegeEscalation": False, "runAsNonRoot": True, "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"}}
    ov = root / "overlays" / profile
    (ov / "job_plain.yaml").write_text(yamlio.dump(job))
    k = ov / "kustomization.yaml"
    k.write_text(k.read_text() + "- job_plain.yaml\n")

    def kq030() -> list[str]:
        cli.main(["validate", "--crd-dir", str(helpers.CRD_ROOT), "--spec", str(root / "platform.yaml"),
                  "--out", str(root), "--format", "json"])
        doc = json.loads(capsys.readouterr().out)
        return [f["name"] for f in doc["findings"] if f["rule"] == "KQ030"]

    assert kq030() == []                       # batch/job is enabled by default
    cfg = root / "controllers" / profile / "kueue" / "kueue-manager-config.yaml"
    text = cfg.read_text()
    assert text.count("      - batch/job\n") == 1
    cfg.write_text(text.replace("      - batch/job\n", ""))
    assert kq030() == ["plain"]



def test_validate_with_context_reads_the_configuration(tmp_path):
    """A team's Job checked against its cluster: the queues and Kueue's Configuration file
    (controller_manager_config.yaml, not an object) given with --context."""
    objs = _queues(["jobset.x-k8s.io/jobset"])
    config = yamlio.load_strict(objs[0]["data"][kueue_api.CONFIG_KEY])
    (tmp_path / "config.yaml").write_text(yamlio.dump(config))
    (tmp_path / "queues.yaml").write_text(yamlio.dump_all(objs[1:-1]))
    job = copy.deepcopy(PLAIN_JOB)
    job["spec"]["template"]["spec"]["containers"][0]["securityContext"] = {
        "allowPrivilegeEscalation": False, "runAsNonRoot": True, "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"}}
    (tmp_path / "job.yaml").write_text(yamlio.dump(job))

    def kq030(*context: str) -> list[str]:
        parser = argparse.ArgumentParser()
        command.register(parser.add_subparsers())
        args = parser.parse_args(["validate", "--crd-dir", str(helpers.CRD_ROOT), "--kueue-version", "v0.17.4",
                                  *[a for c in context for a in ("--context", str(tmp_path / c))],
                                  str(tmp_path / "job.yaml")])
        opts = command.options(args)
        opts.spec, opts.spec_explicit = str(tmp_path / "no-spec.yaml"), False   # no spec: versions.yaml's pins
        return [f.name for f in validate(opts).findings if f.rule == "KQ030"]

    assert kq030("queues.yaml", "config.yaml") == ["plain"]
    assert kq030("queues.yaml") == []   # no Configuration known: nothing to say
