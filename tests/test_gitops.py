"""Argo CD output: the argocd/ objects validate strictly against the Argo CD
CRDs, the sync waves order installs before the custom resources that need
them and queues before the workloads that use them, and the drift rules
cover every field a controller owns."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from generator import cli
from generator.builders import gitops
from generator.kernel import versions, yamlio
from generator.kernel.errors import SpecError
from tests import helpers

SPEC = helpers.fixture_spec()
PROFILES = sorted(SPEC.profiles)
WORKLOADS = {"Deployment", "StatefulSet", "Job", "JobSet", "LeaderWorkerSet", "Pod", "CronJob"}


@pytest.fixture(scope="module")
def tree():
    return helpers.render(helpers.fixture_raw())


def objects(tree: dict, directory: str) -> list[dict]:
    return [o for p, text in sorted(tree.items()) if p.rpartition("/")[0] == directory
            and not p.endswith("/kustomization.yaml") for o in yamlio.load_all(text)]


def apps_by_path(tree) -> dict[str, dict]:
    return {a["spec"]["source"]["path"]: a for a in objects(tree, "argocd/apps") if a["kind"] == "Application"}


def wave(obj: dict) -> int:
    return int(obj["metadata"]["annotations"][gitops.SYNC_WAVE])


def options(obj: dict) -> set[str]:
    return set(filter(None, obj["metadata"].get("annotations", {}).get(gitops.SYNC_OPTIONS, "").split(",")))


def test_argocd_objects_validate_strictly(tree):
    schemas = helpers.schemas_for(SPEC, PROFILES[0])
    objs = objects(tree, "argocd") + objects(tree, "argocd/apps") + objects(tree, "argocd/install")
    assert {o["kind"] for o in objs} == {"AppProject", "Application", "ConfigMap"}
    helpers.assert_valid(schemas, objs, "argocd")
    api = versions.release("argocd", versions.default("argocd"))["api"]
    assert {o["apiVersion"] for o in objs if o["kind"] != "ConfigMap"} == {api}
    # The validator does bite: a misspelt field in an Application is an error.
    bad = copy.deepcopy(next(o for o in objs if o["kind"] == "Application"))
    bad["spec"]["syncPolicy"]["syncOption"] = ["Replace=true"]
    assert schemas.errors(bad)


def test_crd_pin_matches_the_argocd_release():
    assert f"argo-cd/{versions.default('argocd')}" in versions.table()["crds"]


def test_committed_argocd_tree_builds():
    for d in ("argocd", "argocd/apps"):
        objs = helpers.kustomize(helpers.generated() / d)
        assert objs and all(o["metadata"].get("namespace") == "argocd" for o in objs), d


def test_one_application_per_overlay_and_install(tree):
    apps = apps_by_path(tree)
    installs = sorted(p for p in tree if p.startswith("controllers/") and p.endswith("/kustomization.yaml"))
    expected = {f"overlays/{p}" for p in PROFILES} | {p.rpartition("/")[0] for p in installs}
    assert set(apps) == expected
    clusters = {p: d.model_dump(exclude_none=True) for p, d in SPEC.gitops.clusters.items()}
    for path, app in apps.items():
        profile = path.split("/")[1]
        # The cluster of the profile; the namespace is one the project allows (test_gitops_scope).
        dest = dict(app["spec"]["destination"])
        assert dest.pop("namespace"), path
        assert dest == clusters[profile], path
        assert app["spec"]["source"] == {"repoURL": SPEC.gitops.repo_url,
                                         "targetRevision": SPEC.gitops.target_revision, "path": path}
    (root,) = [o for o in objects(tree, "argocd") if o["kind"] == "Application"]
    assert root["spec"]["source"]["path"] == "argocd/apps"
    assert root["spec"]["destination"] == {"server": gitops.IN_CLUSTER, "namespace": "argocd"}


def test_waves_put_installs_before_the_resources_that_need_them(tree):
    apps = apps_by_path(tree)
    projects = [o for o in objects(tree, "argocd/apps") if o["kind"] == "AppProject"]
    assert max(wave(p) for p in projects) < min(wave(a) for a in apps.values())
    for profile in PROFILES:
        overlay = apps[f"overlays/{profile}"]
        installs = {p.split("/")[2]: a for p, a in apps.items() if p.startswith(f"controllers/{profile}/")}
        assert "kueue" in installs
        for name in ("jobset", "lws"):
            if name in installs:   # Kueue's integrations find their CRDs when it starts
                assert wave(installs[name]) < wave(installs["kueue"])
        for name, app in installs.items():
            assert wave(app) < wave(overlay), f"{profile}: install {name} does not come before the overlay"
        for o in helpers.kustomize(helpers.generated() / "overlays" / profile):
            if not gitops.is_custom_resource(o):
                continue
            group = gitops.api_group(o["apiVersion"])
            provider = gitops.CRD_PROVIDERS.get(group)
            assert provider, f"{o['kind']} ({group}): say in gitops.CRD_PROVIDERS who installs its CRD"
            if provider != "gke":
                assert provider in installs, f"{profile}: {o['kind']} needs the {provider} install"


def _refs(o: dict) -> list[tuple[str, str | None, str]]:
    """(kind, namespace, name) of the objects o needs to exist first."""
    ns, spec = o["metadata"].get("namespace"), o.get("spec", {})
    out: list[tuple[str, str | None, str]] = [("Namespace", None, ns)] if ns else []
    labels = o["metadata"].get("labels", {})
    if o["kind"] in WORKLOADS and "kueue.x-k8s.io/queue-name" in labels:
        out.append(("LocalQueue", ns, labels["kueue.x-k8s.io/queue-name"]))
    if "kueue.x-k8s.io/priority-class" in labels:
        out.append(("WorkloadPriorityClass", None, labels["kueue.x-k8s.io/priority-class"]))
    for t in _templates(o):
        if t.get("spec", {}).get("priorityClassName"):
            out.append(("PriorityClass", None, t["spec"]["priorityClassName"]))
    if o["kind"] == "LocalQueue":
        out.append(("ClusterQueue", None, spec["clusterQueue"]))
    if o["kind"] == "ClusterQueue":
        out += [("ResourceFlavor", None, f["name"]) for g in spec["resourceGroups"] for f in g["flavors"]]
        checks = spec.get("admissionChecksStrategy", {}).get("admissionChecks", [])
        out += [("AdmissionCheck", None, c["name"]) for c in checks]
    if o["kind"] == "ResourceFlavor" and spec.get("topologyName"):
        out.append(("Topology", None, spec["topologyName"]))
    return out


def _templates(o: dict) -> list[dict]:
    spec = o.get("spec", {})
    out = [spec["template"]] if "template" in spec else []
    out += [rj["template"]["spec"]["template"] for rj in spec.get("replicatedJobs", [])]
    lwt = spec.get("leaderWorkerTemplate", {})
    out += [t for t in (lwt.get("leaderTemplate"), lwt.get("workerTemplate")) if t]
    return out


@pytest.mark.parametrize("profile", PROFILES)
def test_waves_inside_an_overlay(profile):
    objs = helpers.kustomize(helpers.generated() / "overlays" / profile)
    index = helpers.by_key(objs)
    workloads = [o for o in objs if o["kind"] in WORKLOADS]
    assert workloads
    checked = 0
    for o in objs:
        assert gitops.SYNC_WAVE in o["metadata"].get("annotations", {}), f"{o['kind']}/{o['metadata']['name']}: no wave"
        for ref in _refs(o):
            target = index.get(ref)
            assert target, f"{o['kind']}/{o['metadata']['name']} needs {ref}, not in the overlay"
            assert wave(target) < wave(o), f"{o['kind']}/{o['metadata']['name']} (wave {wave(o)}) " \
                                           f"does not come after {ref} (wave {wave(target)})"
            checked += 1
    assert checked >= len(workloads) * 2
    assert max(wave(o) for o in objs) == min(wave(o) for o in workloads) == gitops.WAVE_WORKLOADS


@pytest.mark.parametrize("profile", PROFILES)
def test_sync_options_on_custom_resources_and_immutable_workloads(profile):
    for o in helpers.kustomize(helpers.generated() / "overlays" / profile):
        name = f"{o['kind']}/{o['metadata']['name']}"
        custom = gitops.api_group(o["apiVersion"]) not in gitops.BUILTIN_GROUPS
        assert ("SkipDryRunOnMissingResource=true" in options(o)) == custom, name
        immutable = o["kind"] in ("Job", "JobSet")
        assert ({"Force=true", "Replace=true"} <= options(o)) == immutable, name


def test_annotate_is_the_one_table():
    cq = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"}}
    js = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "j", "namespace": "n"}}
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}}
    gitops.annotate([cq, js, cm])
    assert cq["metadata"]["annotations"] == {gitops.SYNC_WAVE: "3", gitops.SYNC_OPTIONS: "SkipDryRunOnMissingResource=true"}
    assert js["metadata"]["annotations"] == {gitops.SYNC_WAVE: "5",
                                             gitops.SYNC_OPTIONS: "SkipDryRunOnMissingResource=true,Force=true,Replace=true"}
    assert cm["metadata"]["annotations"] == {gitops.SYNC_WAVE: "4"}


@pytest.mark.parametrize("profile", PROFILES)
def test_drift_rules_of_an_overlay(tree, profile):
    app = apps_by_path(tree)[f"overlays/{profile}"]
    assert "RespectIgnoreDifferences=true" in app["spec"]["syncPolicy"]["syncOptions"]
    rules = app["spec"].get("ignoreDifferences", [])
    objs = helpers.kustomize(helpers.generated() / "overlays" / profile)
    for o in objs:
        if o["kind"] in ("Job", "JobSet"):
            assert "suspend" not in o["spec"], f"{o['kind']}/{o['metadata']['name']}: Kueue owns spec.suspend"
            assert {"group": gitops.api_group(o["apiVersion"]), "kind": o["kind"],
                    "jsonPointers": ["/spec/suspend"]} in rules
        if o["kind"] == "HorizontalPodAutoscaler":
            ref, ns = o["spec"]["scaleTargetRef"], o["metadata"]["namespace"]
            target = helpers.by_key(objs)[(ref["kind"], ns, ref["name"])]
            assert "replicas" not in target["spec"], f"{ref['name']}: the HPA owns spec.replicas"
            assert {"group": gitops.api_group(ref["apiVersion"]), "kind": ref["kind"], "name": ref["name"],
                    "namespace": ns, "jsonPointers": ["/spec/replicas"]} in rules
    assert len(rules) == len({(r["kind"], r.get("name")) for r in rules})


def test_drift_rules_of_the_installs(tree):
    for path, app in apps_by_path(tree).items():
        if not path.startswith("controllers/"):
            continue
        assert {"ServerSideApply=true", "RespectIgnoreDifferences=true"} <= set(app["spec"]["syncPolicy"]["syncOptions"])
        assert app["spec"]["syncPolicy"]["automated"]["prune"] is False
        assert app["metadata"]["annotations"][gitops.COMPARE_OPTIONS] == "ServerSideDiff=true"
        rules = {r["kind"]: r for r in app["spec"]["ignoreDifferences"]}
        for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            assert rules[kind]["jqPathExpressions"] == [".webhooks[]?.clientConfig.caBundle"]
        assert rules["CustomResourceDefinition"]["jsonPointers"] == ["/spec/conversion/webhook/clientConfig/caBundle"]


def test_install_kustomization_sets_the_health_check(tree, tmp_path):
    """Built against a stand-in for the remote install manifests: the patch
    lands on argocd-cm and the namespace moves ServiceAccount subjects too."""
    raw = helpers.fixture_raw()
    raw["gitops"]["argocdNamespace"] = "gitops"
    t = helpers.render(raw)
    kust = yamlio.load_strict(t["argocd/install/kustomization.yaml"])
    assert kust["resources"] == [versions.release("argocd", versions.default("argocd"))["manifests"]]
    kust["resources"] = ["install.yaml"]
    (tmp_path / "kustomization.yaml").write_text(yamlio.dump(kust))
    (tmp_path / "argocd-cm-patch.yaml").write_text(t["argocd/install/argocd-cm-patch.yaml"])
    (tmp_path / "install.yaml").write_text(yamlio.dump_all([
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "argocd-cm", "labels": {"app": "argocd-cm"}}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "c"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "c"},
         "subjects": [{"kind": "ServiceAccount", "name": "argocd-server", "namespace": "argocd"}]},
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "x.argoproj.io"}},
    ]))
    out = helpers.by_key(helpers.kustomize(tmp_path))
    cm = out[("ConfigMap", "gitops", "argocd-cm")]
    assert cm["data"][gitops.HEALTH_KEY] == gitops.APPLICATION_HEALTH_LUA and cm["metadata"]["labels"] == {"app": "argocd-cm"}
    assert out[("ClusterRoleBinding", None, "c")]["subjects"][0]["namespace"] == "gitops"
    assert ("CustomResourceDefinition", None, "x.argoproj.io") in out
    assert all(o["metadata"]["namespace"] == "gitops" for o in objects(t, "argocd/apps"))


def _health(status: dict | None) -> tuple[str, str]:
    import lupa  # a test dependency (setup.cfg [test]): runs the Lua that Argo CD would run

    lua = lupa.LuaRuntime()
    obj: dict[str, Any] = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application"}
    if status is not None:
        obj["status"] = status
    lua.globals().obj = lua.table_from(obj, recursive=True)
    hs = lua.execute(gitops.APPLICATION_HEALTH_LUA)
    return hs["status"], hs["message"]


@pytest.mark.parametrize("status, expected", [
    (None, "Progressing"),
    ({"sync": {"status": "Synced"}, "health": {"status": "Healthy"}}, "Healthy"),
    ({"sync": {"status": "OutOfSync"}, "health": {"status": "Healthy"}}, "Progressing"),
    ({"sync": {"status": "Synced"}, "health": {"status": "Healthy"}, "operationState": {"phase": "Running"}}, "Progressing"),
    ({"sync": {"status": "Synced"}, "health": {"status": "Healthy"}, "operationState": {"phase": "Succeeded"}}, "Healthy"),
    ({"sync": {"status": "Synced"}, "health": {"status": "Degraded", "message": "crash"}}, "Degraded"),
    ({"operationState": {"phase": "Failed", "message": "webhook refused"}}, "Degraded"),
])
def test_application_health_gate(status, expected):
    assert _health(status)[0] == expected


def test_spec_without_gitops_writes_no_argocd(tmp_path):
    raw = helpers.fixture_raw()
    del raw["gitops"]
    t = helpers.render(raw)
    assert not [p for p in t if p.startswith("argocd/")]
    assert gitops.SYNC_WAVE in yamlio.load_strict(t["base/namespace_llm.yaml"])["metadata"]["annotations"]


def _problems(raw) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as err:
        helpers.render(raw)
    return [(p.path, p.message) for p in err.value.problems]


def test_every_profile_needs_its_own_cluster():
    raw = helpers.fixture_raw()
    clusters = raw["gitops"]["clusters"]
    first, second = sorted(clusters)[:2]
    missing = clusters.pop(first)
    clusters["nope"] = missing
    clusters[second] = copy.deepcopy(clusters[sorted(c for c in clusters if c not in (second, "nope"))[0]])
    got = _problems(raw)
    assert ("gitops.clusters.nope", f"unknown profile 'nope' (known: {', '.join(sorted(raw['profiles']))})") in got
    assert any(p == "gitops.clusters" and f"profile {first!r} has no Argo CD destination" in m for p, m in got)
    assert any(p.startswith("gitops.clusters.") and "same cluster as profile" in m for p, m in got)


@pytest.mark.parametrize("url", ["https://user:token@github.com/org/repo.git", "https://ghp_abc@github.com/o/r"])
def test_credentials_in_the_repo_url_are_refused(url):
    raw = helpers.fixture_raw()
    raw["gitops"]["repoURL"] = url
    (got,) = _problems(raw)
    assert got[0] == "gitops.repoURL" and "credentials" in got[1]


@pytest.mark.parametrize("mutate, path", [
    (lambda g: g.update(extra=1), "gitops.extra"),
    (lambda g: g["clusters"].update(x={"server": "https://a", "name": "b"}), "gitops.clusters.x"),
    (lambda g: g["clusters"].update(x={"server": "http://plain"}), "gitops.clusters.x.server"),
    (lambda g: g.pop("targetRevision"), "gitops.targetRevision"),
])
def test_gitops_block_is_strict(mutate, path):
    raw = helpers.fixture_raw()
    mutate(raw["gitops"])
    assert path in [p for p, _ in _problems(raw)]


def test_cli_exits_2_and_writes_nothing(tmp_path, capsys):
    raw = helpers.fixture_raw()
    raw["gitops"]["clusters"].pop(sorted(raw["gitops"]["clusters"])[0])
    spec_file = tmp_path / "bad.yaml"
    spec_file.write_text(yamlio.dump(raw))
    out = tmp_path / "out"
    assert cli.main(["synth", "--spec", str(spec_file), "--out", str(out)]) == 2
    assert not out.exists()
    assert "bad.yaml: gitops.clusters: profile" in helpers.without_positions(capsys.readouterr().err)


def test_long_names_are_refused():
    raw = helpers.fixture_raw()
    raw["gitops"]["project"] = "p" * 60
    (got,) = _problems(raw)
    assert got[0] == "gitops.project" and "over 63" in got[1]
