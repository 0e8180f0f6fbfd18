"""A MultiKueue group from one spec (examples/multikueue.yaml): the manager's
MultiKueueClusters, MultiKueueConfig, AdmissionCheck and ClusterQueue with the
workers' total quota; each worker's mirrored LocalQueue, the manager's
identity, and the fine-tuning Job's headless Service; the manager Kueue
configuration; Argo CD order; per Kueue release, strictly valid against its
CRDs. Expected shapes follow Kueue's setup docs and the pinned CRDs
(tasks/manage/setup_multikueue, kueue.x-k8s.io_multikueueclusters.yaml);
quotas from the machine types (a3-highgpu-8g: 208 vCPU, 1872 GB, 8 H100;
g2-standard-24: 24 vCPU, 96 GB, 2 L4; 100 GiB boot disks)."""
from __future__ import annotations

import copy

import pytest

from generator import model as spec
from generator.kernel import paths, yamlio
from generator.kernel.errors import SpecError
from generator.kernel.schemacheck import SchemaSet
from tests import helpers

EXAMPLE = paths.ROOT / "examples" / "multikueue.yaml"


def _raw() -> dict:
    return copy.deepcopy(yamlio.load_strict(EXAMPLE.read_text()))


def _tree(raw: dict) -> dict[str, str]:
    return helpers.render(raw)


def _objects(tree: dict, profile: str) -> dict[tuple[str, str], dict]:
    prefix = f"overlays/{profile}/"
    return {(o["kind"], o["metadata"]["name"]): o for path, text in sorted(tree.items())
            if path.startswith(prefix) and not path.endswith("kustomization.yaml") for o in yamlio.load_all(text)}


def _config(tree: dict, profile: str) -> dict:
    (cm,) = yamlio.load_all(tree[f"controllers/{profile}/kueue/kueue-manager-config.yaml"])
    return yamlio.load_strict(cm["data"]["controller_manager_config.yaml"])


@pytest.fixture(scope="module")
def tree():
    return _tree(_raw())


def test_manager_dispatches_through_the_multikueue_check(tree):
    m = _objects(tree, "manager")
    assert m[("MultiKueueCluster", "h100")]["spec"] == {
        "clusterSource": {"kubeConfig": {"location": "h100-kubeconfig", "locationType": "Secret"}}}
    assert m[("MultiKueueConfig", "gpu-workers")]["spec"] == {"clusters": ["h100", "l4-spot"]}
    assert m[("AdmissionCheck", "gpu-workers")]["spec"] == {
        "controllerName": "kueue.x-k8s.io/multikueue",
        "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "gpu-workers"}}
    cq = m[("ClusterQueue", "dispatch")]["spec"]
    assert cq["admissionChecksStrategy"] == {"admissionChecks": [{"name": "gpu-workers"}]}
    flavors = {f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"]}
               for f in cq["resourceGroups"][0]["flavors"]}
    # The workers' total per flavor: 2 x a3-highgpu-8g and 4 x g2-standard-24.
    assert flavors == {
        "h100": {"cpu": 416, "memory": "3744Gi", "nvidia.com/gpu": 16, "ephemeral-storage": "200Gi"},
        "l4-spot": {"cpu": 96, "memory": "384Gi", "nvidia.com/gpu": 8, "ephemeral-storage": "400Gi"}}
    # No Secret content anywhere: the kubeconfigs are created out of band.
    assert not any(k[0] == "Secret" for k in m)


def test_workers_mirror_the_managers_local_queues_and_carry_its_identity(tree):
    for worker in ("h100", "l4-spot"):
        w = _objects(tree, worker)
        assert w[("LocalQueue", "lq")]["metadata"]["namespace"] == "ml"
        assert w[("LocalQueue", "lq")]["spec"] == {"clusterQueue": "gpus"}
        assert w[("ServiceAccount", "multikueue-sa")]["metadata"]["namespace"] == "kueue-system"
        secret = w[("Secret", "multikueue-sa")]
        assert secret["type"] == "kubernetes.io/service-account-token" and "data" not in secret
        rules = {(r["apiGroups"][0], r["resources"][0]): r["verbs"]
                 for r in w[("ClusterRole", "multikueue-sa-role")]["rules"]}
        assert rules[("kueue.x-k8s.io", "workloads")] == ["create", "delete", "get", "list", "watch", "update", "patch"]
        assert rules[("batch", "jobs")] == ["create", "delete", "get", "list", "watch"]
        # The Job travels; its headless Service must be there for rank 0's DNS name.
        assert w[("Service", "finetune-l4-headless")]["spec"]["clusterIP"] == "None"
        assert ("Job", "finetune-l4") not in w


def test_manager_configuration(tree):
    config = _config(tree, "manager")
    assert config["integrations"]["frameworks"] == ["batch/job", "jobset.x-k8s.io/jobset"]
    assert config["multiKueue"] == {"dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"}
    for worker in ("h100", "l4-spot"):
        assert "multiKueue" not in _config(tree, worker)
        assert "jobset.x-k8s.io/jobset" in _config(tree, worker)["integrations"]["frameworks"]
        assert f"controllers/{worker}/jobset/kustomization.yaml" in tree


def test_argocd_syncs_workers_before_the_manager(tree):
    apps = {o["metadata"]["name"]: o for path, text in tree.items() if path.startswith("argocd/apps/application_")
            for o in yamlio.load_all(text)}
    def wave(name):
        return int(apps[name]["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"])
    assert wave("multi-cluster-h100") < wave("multi-cluster-manager")
    assert wave("multi-cluster-l4-spot") < wave("multi-cluster-manager")
    assert {apps[f"multi-cluster-{p}"]["spec"]["destination"]["name"] for p in ("manager", "h100", "l4-spot")} == \
        {"manager", "h100", "l4-spot"}


@pytest.mark.parametrize("version", ["v0.12.3", "v0.17.4", "v0.19.2"])
def test_each_kueue_release(version):
    raw = _raw()
    raw["kueue"]["version"] = version
    if version == "v0.12.3":
        raw["multiKueue"][0].pop("dispatcher")
    tree = _tree(raw)
    m = _objects(tree, "manager")
    cluster = m[("MultiKueueCluster", "h100")]["spec"]
    cq = m[("ClusterQueue", "dispatch")]["spec"]
    if version == "v0.12.3":
        # v1beta1: spec.kubeConfig and the plain admissionChecks list; no dispatcher in its config.
        assert cluster == {"kubeConfig": {"location": "h100-kubeconfig", "locationType": "Secret"}}
        assert cq["admissionChecks"] == ["gpu-workers"]
        assert "multiKueue" not in _config(tree, "manager")
    else:
        assert "clusterSource" in cluster and "admissionChecksStrategy" in cq
    s = spec.from_dict(raw, "multikueue.yaml")
    schemas = SchemaSet(s.kubernetes_version, [helpers.CRD_ROOT / "kueue" / version])
    for profile in ("manager", "h100", "l4-spot"):
        helpers.assert_valid(schemas, [o for o in _objects(tree, profile).values()
                                       if o["apiVersion"].startswith("kueue.x-k8s.io")], f"{version} {profile}")


def _problems(raw) -> list[str]:
    with pytest.raises(SpecError) as e:
        spec.from_dict(raw, "mk.yaml")
    return [f"{p.path}: {p.message}" for p in e.value.problems]


@pytest.mark.parametrize("edit, expected", [
    (lambda r: r["multiKueue"][0]["workers"][0].__setitem__("profile", "nope"),
     "multiKueue[0].workers[0].profile: unknown profile 'nope' (known: h100, l4-spot, manager)"),
    (lambda r: r["multiKueue"][0]["workers"].append({"profile": "manager", "kubeconfigSecret": "x"}),
     "multiKueue[0].workers[2].profile: profile 'manager' appears twice in the group"),
    (lambda r: r["profiles"]["manager"].__setitem__("nodePools", [{"machineType": "g2-standard-24", "nodes": 1}]),
     "profiles.manager.nodePools: a MultiKueue manager holds no capacity of its own (its ClusterQueue's quota is "
     "its workers' total); leave it out"),
    (lambda r: r["profiles"]["h100"].__setitem__("kueueVersion", "v0.19.2"),
     "multiKueue[0]: the manager and workers run different Kueue releases (v0.17.4, v0.19.2); a manager talks to "
     "its workers in its own API version: pin one release"),
    (lambda r: r.__setitem__("kubernetesVersion", "1.31"),
     "multiKueue[0].manager: Kueue v0.17.4 dispatches Jobs with spec.managedBy, on by default from Kubernetes "
     "1.32; kubernetesVersion is 1.31"),
])
def test_bad_groups_are_refused(edit, expected):
    raw = _raw()
    edit(raw)
    assert expected in _problems(raw)


def test_incremental_dispatch_needs_kueue_0_13():
    raw = _raw()
    raw["kueue"]["version"] = "v0.12.3"
    raw["multiKueue"][0]["dispatcher"] = "incremental"
    assert "multiKueue[0].dispatcher: Kueue v0.12.3 has no dispatcher choice (from v0.13): leave it all-at-once" \
        in _problems(raw)
    raw["kueue"]["version"] = "v0.17.4"
    tree = _tree(raw)
    assert _config(tree, "manager")["multiKueue"] == {
        "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-incremental"}


def test_job_kinds_cover_what_the_manager_runs():
    # The manager's Kueue dispatches every integration it enables (cmd/kueue/main.go:
    # jobframework.GetMultiKueueAdapters over cfg.Integrations.Frameworks); the workers enable
    # jobKinds. `jobKinds: []` wrote workers without batch/job, which validate's MK104 refused.
    import copy

    from generator import model as specmod
    from generator.kernel.errors import SpecError
    from tests import helpers
    raw = helpers.example_raw(helpers.ROOT / "examples" / "multikueue.yaml")
    specmod.from_dict(copy.deepcopy(raw), "mk.yaml")   # the example as shipped is accepted
    for kinds, words in (([], "needs at least 1"), (["jobset.x-k8s.io/jobset"], "runs workloads of batch/job")):
        bad = copy.deepcopy(raw)
        bad["multiKueue"][0]["jobKinds"] = kinds
        with pytest.raises(SpecError) as e:
            specmod.from_dict(bad, "mk.yaml")
        assert [p.path for p in e.value.problems if words in p.message] == ["multiKueue[0].jobKinds"], e.value
