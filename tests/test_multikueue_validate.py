"""`validate` on a MultiKueue group: the overlays synthesized from examples/multikueue.yaml
(a manager, an H100 worker and an L4 Spot worker) validate clean as a group, and the
cross-cluster rules catch what Kueue's documentation asks of a group when an overlay is
edited or left behind: a worker without the manager's LocalQueue or namespace (Kueue docs,
tasks/manage/setup_multikueue: "the worker cluster configuration mirrors the one of the
manager cluster in terms of namespaces and LocalQueues"), a manager quota that is not the
workers' total (concepts/multikueue: "Ideally, the quota in the manager cluster should equal
the total quota available in all worker clusters"), a dispatched kind a worker does not
enable, two Kueue API versions, a kubeconfig in Git.

Quotas are worked out by hand from the machine types (Compute Engine accelerator-optimized
machine tables): a3-highgpu-8g has 208 vCPU, 1872 GB and 8 H100; g2-standard-24 has 24 vCPU,
96 GB and 2 L4; every node has a 100 GiB boot disk. The example's h100 pool has 2 nodes
(416 vCPU, 3744Gi, 16 GPUs, 200Gi) and its l4-spot pool 4 (96 vCPU, 384Gi, 8 GPUs, 400Gi)."""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings, strategies as st

from generator import cli
from generator.kernel import paths, yamlio
from tests import helpers
from tests.test_validate_corpus import CORPUS, expected, found, run

EXAMPLE = paths.ROOT / "examples" / "multikueue.yaml"
# Versions come from the tests' own spec, never the shipped platform.yaml.
FIXTURE = ["--spec", str(helpers.FIXTURE_SPEC)]
MK = "kueue.x-k8s.io/multikueue"


def _raw() -> dict:
    return yamlio.load_strict(EXAMPLE.read_text())


def _synth(root: Path, raw: dict) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "platform.yaml").write_text(yamlio.dump(raw))
    helpers.synth_into(root, raw)
    return root


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    return _synth(tmp_path_factory.mktemp("mk"), _raw())


@pytest.fixture
def tree(example, tmp_path) -> Path:
    """A copy of the synthesized example to edit."""
    return Path(shutil.copytree(example, tmp_path / "platform"))


def check(capsys, root: Path, *args: str) -> tuple[int, dict]:
    code = cli.main(["validate", "--crd-dir", str(helpers.CRD_ROOT), "--spec", str(root / "platform.yaml"),
                     "--out", str(root), "--format", "json", *args])
    out, _ = capsys.readouterr()
    return code, json.loads(out)


def mk(doc: dict) -> list[tuple]:
    """(rule, severity, object, path, message) of the MultiKueue findings."""
    return [(f["rule"], f["severity"], "/".join(p for p in (f["kind"], f["namespace"], f["name"]) if p), f["path"],
             f["message"]) for f in doc["findings"] if f["rule"].startswith("MK")]


def _drop(root: Path, overlay: str, file: str) -> None:
    """Remove a file from an overlay and from its kustomization."""
    (root / "overlays" / overlay / file).unlink()
    k = root / "overlays" / overlay / "kustomization.yaml"
    k.write_text("".join(line for line in k.read_text().splitlines(keepends=True) if file not in line))


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new))


def test_the_example_validates_clean_as_a_group(capsys, example):
    """`make validate` on a spec with a multiKueue group: each overlay and the group."""
    code, doc = check(capsys, example)
    assert code == 0, doc["findings"]
    assert doc["summary"]["groups"] == 1
    assert [(Path(g["manager"]).name, [Path(w).name for w in g["workers"]]) for g in doc["groups"]] == \
        [("manager", ["h100", "l4-spot"])]
    assert {k: doc["summary"][k] for k in ("sources", "errors", "warnings", "notes")} == \
        {"sources": 3, "errors": 0, "warnings": 0, "notes": 0}
    # The workers' headless Service selects the Job the manager dispatches to them: no SV001.
    assert doc["findings"] == []
    # Named explicitly, with any name for the manager: the same.
    o = example / "overlays"
    code, doc = check(capsys, example, "--multikueue", f"boss={o / 'manager'}", str(o / "h100"), str(o / "l4-spot"))
    assert code == 0 and doc["findings"] == [] and doc["summary"]["groups"] == 1


def test_a_worker_without_the_managers_local_queue(capsys, tree):
    _drop(tree, "h100", "localqueue_ml_lq.yaml")
    code, doc = check(capsys, tree)
    assert code == 1
    ((rule, severity, obj, path, message),) = mk(doc)
    assert (rule, severity, obj, path) == ("MK101", "error", "LocalQueue/ml/lq", "")
    assert message.startswith("worker 'h100' (") and message.endswith(
        "has no LocalQueue 'lq' in namespace 'ml' (LocalQueues there: none)")
    # Not reported twice: the quota is not compared until the queues mirror.
    assert [f["rule"] for f in doc["findings"]] == ["MK101"]


def test_a_worker_without_the_managers_namespace(capsys, tree):
    # The worker overlay without base/ (Namespace ml, the PriorityClass).
    _edit(tree / "overlays" / "l4-spot" / "kustomization.yaml", "- ../../base\n", "")
    code, doc = check(capsys, tree)
    assert code == 1
    assert [(r, s, o, p) for r, s, o, p, _ in mk(doc)] == [("MK101", "error", "LocalQueue/ml/lq", "metadata.namespace")]
    assert "worker 'l4-spot'" in mk(doc)[0][4] and mk(doc)[0][4].endswith("has no Namespace 'ml'")


def test_manager_quota_one_gpu_above_the_workers_total(capsys, tree):
    # 2 x a3-highgpu-8g = 16 H100 on worker h100; the manager books 17.
    _edit(tree / "overlays" / "manager" / "clusterqueue_dispatch.yaml", "nominalQuota: 16\n", "nominalQuota: 17\n")
    code, doc = check(capsys, tree)
    assert code == 0   # a warning: Kueue's docs say "ideally"
    assert mk(doc) == [("MK102", "warning", "ClusterQueue/dispatch",
                        "spec.resourceGroups[0].flavors[0].resources[2].nominalQuota",
                        "flavor 'h100' nvidia.com/gpu: manager 17, above the workers' total 16 (h100 16)")]
    code, _ = check(capsys, tree, "--strict")
    assert code == 1


def test_a_worker_shrunk_without_the_manager(capsys, tree, tmp_path):
    """Worker h100 re-synthesized with one node, the manager not: its quota is twice the worker's."""
    raw = _raw()
    raw["profiles"]["h100"]["nodePools"][0]["nodes"] = 1
    smaller = _synth(tmp_path / "smaller", raw)
    shutil.rmtree(tree / "overlays" / "h100")
    shutil.copytree(smaller / "overlays" / "h100", tree / "overlays" / "h100")
    _, doc = check(capsys, tree)
    flavor = "spec.resourceGroups[0].flavors[0].resources"
    assert [(p, m) for _, _, _, p, m in mk(doc)] == [
        (f"{flavor}[0].nominalQuota", "flavor 'h100' cpu: manager 416, above the workers' total 208 (h100 208)"),
        (f"{flavor}[1].nominalQuota",
         "flavor 'h100' memory: manager 3744Gi, above the workers' total 1872Gi (h100 1872Gi)"),
        (f"{flavor}[2].nominalQuota", "flavor 'h100' nvidia.com/gpu: manager 16, above the workers' total 8 (h100 8)"),
        (f"{flavor}[3].nominalQuota",
         "flavor 'h100' ephemeral-storage: manager 200Gi, above the workers' total 100Gi (h100 100Gi)"),
    ]


def test_jobsets_need_the_integration_and_the_install_on_every_worker(capsys, tree):
    _edit(tree / "controllers" / "l4-spot" / "kueue" / "kueue-manager-config.yaml", "      - jobset.x-k8s.io/jobset\n",
          "")
    shutil.rmtree(tree / "controllers" / "l4-spot" / "jobset")
    code, doc = check(capsys, tree)
    assert code == 1
    found_ = {(r, s, o, p) for r, s, o, p, _ in mk(doc)}
    assert found_ == {("MK104", "error", "MultiKueueCluster/l4-spot", ""),
                      ("MK104", "error", "ConfigMap/kueue-system/kueue-manager-config",
                       'data["controller_manager_config.yaml"]')}
    sources = {Path(f["source"]).as_posix().split("/platform/")[-1] for f in doc["findings"]}
    assert sources == {"overlays/manager", "controllers/l4-spot/kueue/kueue-manager-config.yaml"}


def test_a_worker_on_another_kueue_api(capsys, tree, tmp_path):
    """Worker l4-spot synthesized for Kueue v0.12.3 (kueue.x-k8s.io/v1beta1), the rest for v0.17.4."""
    raw = _raw()
    raw["kueue"]["version"] = "v0.12.3"
    raw["multiKueue"][0].pop("dispatcher")
    old = _synth(tmp_path / "old", raw)
    shutil.rmtree(tree / "overlays" / "l4-spot")
    shutil.copytree(old / "overlays" / "l4-spot", tree / "overlays" / "l4-spot")
    code, doc = check(capsys, tree)
    assert code == 1
    ((rule, severity, obj, path, message),) = mk(doc)
    assert (rule, severity, obj, path) == ("MK105", "error", "MultiKueueCluster/l4-spot", "apiVersion")
    assert message.startswith("manager 'manager' writes kueue.x-k8s.io/v1beta2; worker 'l4-spot' (")
    assert message.endswith("writes kueue.x-k8s.io/v1beta1")


def test_a_kueue_configuration_given_as_context(capsys, tree, tmp_path):
    """Without controllers/ beside the overlays, a Configuration file (--context) stands for the
    clusters' Kueue configuration: one that enables JobSets only leaves the manager's Job unmanaged,
    the workers unable to admit dispatched Jobs, and JobSets dispatched to workers without JobSet."""
    shutil.rmtree(tree / "controllers")
    config = tmp_path / "controller_manager_config.yaml"
    config.write_text("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
                      "integrations:\n  frameworks: [jobset.x-k8s.io/jobset]\n")
    code, doc = check(capsys, tree, "--context", str(config))
    assert code == 1
    found_ = mk(doc)
    assert [(r, s, o) for r, s, o, _, _ in found_] == [
        ("MK104", "error", "Job/ml/finetune-l4"),          # the manager's overlay, in its order
        ("MK104", "error", "MultiKueueCluster/h100"),
        ("MK104", "error", "MultiKueueCluster/l4-spot"),
        ("MK104", "error", "Configuration"),               # the context file, twice: once per worker
        ("MK104", "error", "Configuration"),
    ]
    assert found_[0][4] == ("queued to ClusterQueue 'dispatch', which dispatches through MultiKueue, but the "
                            f"manager's Configuration ({config}) does not enable batch/job: Kueue neither queues "
                            "nor dispatches it")
    assert "JobSets are dispatched, but worker 'h100' (" in found_[1][4]
    assert sorted(m.split(":")[0] for _, _, _, _, m in found_[3:]) == ["worker 'h100'", "worker 'l4-spot'"]


def test_a_dispatcher_in_the_kueue_configuration_beside_a_v0_12_manager(capsys, tmp_path):
    """A v0.12.3 group whose manager's controllers/manager/kueue was edited by hand to name a
    dispatcher, which Kueue's v1beta1 Configuration has not (multiKueue.dispatcherName came in v0.13.0)."""
    raw = _raw()
    raw["kueue"]["version"] = "v0.12.3"
    raw["multiKueue"][0].pop("dispatcher")
    root = _synth(tmp_path / "old", raw)
    code, doc = check(capsys, root)
    assert code == 0 and doc["findings"] == []
    _edit(root / "controllers" / "manager" / "kueue" / "kueue-manager-config.yaml", "      - jobset.x-k8s.io/jobset\n",
          "      - jobset.x-k8s.io/jobset\n    multiKueue:\n"
          "      dispatcherName: kueue.x-k8s.io/multikueue-dispatcher-all-at-once\n")
    code, doc = check(capsys, root)
    assert code == 1
    assert [(f["rule"], Path(f["source"]).as_posix().split("/old/")[-1], f["path"]) for f in doc["findings"]] == [
        ("MK006", "controllers/manager/kueue/kueue-manager-config.yaml", 'data["controller_manager_config.yaml"]')]


def test_a_kubeconfig_secret_in_the_manager_overlay(capsys, tree):
    secret = {"apiVersion": "v1", "kind": "Secret",
              "metadata": {"name": "h100-kubeconfig", "namespace": "kueue-system"},
              "stringData": {"kubeconfig": "apiVersion: v1\nkind: Config\n"}}
    (tree / "overlays" / "manager" / "secret_kueue-system_h100-kubeconfig.yaml").write_text(yamlio.dump(secret))
    k = tree / "overlays" / "manager" / "kustomization.yaml"
    k.write_text(k.read_text() + "- secret_kueue-system_h100-kubeconfig.yaml\n")
    code, doc = check(capsys, tree)
    assert code == 1
    assert [(f["rule"], f["severity"], f["path"]) for f in doc["findings"]] == [
        ("MK001", "error", "stringData.kubeconfig")]
    assert doc["findings"][0]["message"] == \
        "Secret holds a kubeconfig in stringData (MultiKueueCluster h100 reads it); values not shown"


def test_a_worker_left_out_is_a_note(capsys, example):
    o = example / "overlays"
    code, doc = check(capsys, example, "--multikueue", str(o / "manager"), str(o / "h100"))
    assert code == 0
    assert [(r, s, ob, p) for r, s, ob, p, _ in mk(doc)] == [
        ("MK106", "info", "MultiKueueConfig/gpu-workers", "spec.clusters[1]")]


@pytest.mark.parametrize("args, message", [
    (["--multikueue"], "--multikueue: name the group's inputs"),
    (["--multikueue", "{o}/h100", "{o}/l4-spot"], "--multikueue: no input holds a MultiKueueConfig"),
    (["--multikueue", "{o}/manager", "again={o}/manager"], "--multikueue: manager, again all hold MultiKueue objects"),
    (["--multikueue", "w={o}/h100", "w={o}/l4-spot"], "--multikueue: two inputs named 'w'"),
    (["--multikueue", "-"], "--multikueue: name stdin after its cluster (NAME=-)"),
])
def test_group_usage_errors_exit_2(capsys, example, args, message):
    args = [a.format(o=example / "overlays") for a in args]
    code = cli.main(["validate", "--crd-dir", str(helpers.CRD_ROOT), *FIXTURE, *args])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.startswith(f"validate: {message}"), err
    assert "Traceback" not in err


def _group(tmp_path: Path, source: Path, edit=None) -> Path:
    d = tmp_path / source.name
    shutil.copytree(source, d)
    if edit:
        edit(d)
    return d


def test_quota_across_flavors_when_the_manager_books_one_flavor(tmp_path):
    """A manager that books all its workers' capacity in one flavor of its own (KEP-9988's automated
    sum adds quotas across all ResourceFlavors): compared resource by resource. Fixture: MK102's good
    group, the manager's flavor renamed `default`; workers 4 + 4 GPUs."""
    def rename(d, gpus):
        m = d / "manager.yaml"
        m.write_text(m.read_text().replace("name: gpu\n", "name: default\n")
                     .replace("nvidia.com/gpu, nominalQuota: 8}", f"nvidia.com/gpu, nominalQuota: {gpus}}}"))
    equal = _group(tmp_path / "a", CORPUS / "MK102" / "good", lambda d: rename(d, 8))
    assert [f for f in run(equal, []).findings if f.rule.startswith("MK")] == []
    above = _group(tmp_path / "b", CORPUS / "MK102" / "good", lambda d: rename(d, 9))
    (f,) = [f for f in run(above, []).findings if f.rule.startswith("MK")]
    assert (f.rule, f.path) == ("MK102", "spec.resourceGroups[0].flavors[0].resources[2].nominalQuota")
    assert f.message == ("nvidia.com/gpu (all flavors; manager flavors default, workers' gpu): manager 9, above the "
                         "workers' total 8 (w1 4, w2 4)")


# The same ClusterQueue on both sides of v0.16.0, which added MultiKueueWithProvisioningRequest
# to Kueue's ClusterQueue soft validation (pkg/cache/clusterqueue.go at v0.12.3 has only the
# multiple-checks and per-flavor reasons; pkg/cache/scheduler/clusterqueue.go at v0.17.4 all three).
MK_WITH_DWS_V1BETA1 = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: AdmissionCheck
metadata: {name: workers}
spec:
  controllerName: kueue.x-k8s.io/multikueue
  parameters: {apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: workers}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: AdmissionCheck
metadata: {name: dws-prov}
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: MultiKueueConfig
metadata: {name: workers}
spec: {clusters: [h100]}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: MultiKueueCluster
metadata: {name: h100}
spec:
  kubeConfig: {location: h100-kubeconfig, locationType: Secret}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: dispatch}
spec:
  namespaceSelector: {}
  admissionChecks: [workers, dws-prov]
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources: [{name: nvidia.com/gpu, nominalQuota: 16}]
"""


@pytest.mark.parametrize("version, fires", [("v0.12.3", False), ("v0.17.4", True)])
def test_multikueue_beside_provisioning_from_kueue_0_16(tmp_path, version, fires):
    f = tmp_path / "cq.yaml"
    f.write_text(MK_WITH_DWS_V1BETA1)
    hits = [(x.rule, x.path) for x in run(f, ["--kueue-version", version, "--disable", "SC004"]).findings]
    assert hits == ([("MK005", "spec.admissionChecks[1]")] if fires else [])


@pytest.mark.parametrize("version, fires", [("v0.12.3", True), ("v0.17.4", False), ("v0.19.2", False)])
def test_dispatcher_name_from_kueue_0_13(version, fires):
    bad = CORPUS / "MK006" / "bad.yaml"
    assert bool(found(run(bad, ["--kueue-version", version])) & expected(bad)) is fires


# Kueue's own MultiKueue + TAS example (kubernetes-sigs/kueue v0.17.4, site/static/examples/
# multikueue/tas/manager-setup.yaml and worker-setup.yaml, the worker setup applied to worker1 and
# worker2), restated: the manager's ClusterQueue books 16 cpu and 32Gi, each worker's 8 cpu and
# 16Gi, through LocalQueue user-queue in namespace default (a namespace every cluster has).
TAS_MANAGER = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: tas-flavor}
spec: {nodeLabels: {cloud.provider.com/node-group: tas-node}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueConfig
metadata: {name: multikueue-config}
spec: {clusters: [worker1, worker2]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: multikueue-ac}
spec:
  controllerName: kueue.x-k8s.io/multikueue
  parameters: {apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: multikueue-config}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: worker1}
spec: {clusterSource: {kubeConfig: {locationType: Secret, location: worker1-secret}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: worker2}
spec: {clusterSource: {kubeConfig: {locationType: Secret, location: worker2-secret}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cluster-queue}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: tas-flavor
      resources: [{name: cpu, nominalQuota: CPU}, {name: memory, nominalQuota: 32Gi}]
  admissionChecksStrategy: {admissionChecks: [{name: multikueue-ac}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: user-queue}
spec: {clusterQueue: cluster-queue}
"""
TAS_WORKER = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: tas-flavor}
spec: {nodeLabels: {cloud.provider.com/node-group: tas-node}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: worker-cluster-queue}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: tas-flavor
      resources: [{name: cpu, nominalQuota: 8}, {name: memory, nominalQuota: 16Gi}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: user-queue}
spec: {clusterQueue: worker-cluster-queue}
"""


@pytest.mark.parametrize("cpu, warning", [
    (16, None),
    (17, "flavor 'tas-flavor' cpu: manager 17, above the workers' total 16 (worker1 8, worker2 8)"),
    (15, "flavor 'tas-flavor' cpu: manager 15, below the workers' total 16 (worker1 8, worker2 8)"),
])
def test_kueues_own_group_example(capsys, tmp_path, cpu, warning):
    (tmp_path / "manager.yaml").write_text(TAS_MANAGER.replace("nominalQuota: CPU", f"nominalQuota: {cpu}"))
    (tmp_path / "worker.yaml").write_text(TAS_WORKER)
    code = cli.main(["validate", "--crd-dir", str(helpers.CRD_ROOT), *FIXTURE, "--closed", "--format", "json", "--multikueue",
                     str(tmp_path / "manager.yaml"), f"worker1={tmp_path / 'worker.yaml'}",
                     f"worker2={tmp_path / 'worker.yaml'}"])
    doc = json.loads(capsys.readouterr()[0])
    assert code == 0
    assert [f["message"] for f in doc["findings"]] == ([warning] if warning else [])


# ---------------------------------------------------------------- bad input: findings, never a traceback
def test_a_namespace_that_is_not_a_name(capsys, tmp_path):
    """metadata.namespace as a mapping: one NM001 line (it used to end the run with a traceback
    when another rule reported on the object)."""
    f = tmp_path / "lq.yaml"
    f.write_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: {a: b}}\n"
                 "spec: {clusterQueue: cq}\n")
    code = cli.main(["validate", "--crd-dir", str(helpers.CRD_ROOT), *FIXTURE, "--closed", str(f)])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in err
    assert "LocalQueue/default/lq: metadata.namespace: NM001 error: namespace is a dict, not a name" in out


_ODD = st.sampled_from([None, 7, -1, True, "x", "1Gi", [], ["a"], {}, {"k": "v"}, [{"name": 3}]])


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


GROUP = {f.stem: yamlio.load_all(f.read_text()) for f in sorted((CORPUS / "MK104" / "good").glob("*.yaml"))}


@st.composite
def _mutated_group(draw):
    """MK104's good group (a manager with its Job and Kueue configuration, two workers) with 1-3
    values anywhere replaced by values of the wrong shape."""
    group = copy.deepcopy(GROUP)
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(sorted(group)))
        doc = draw(st.sampled_from(group[name]))
        path = draw(st.sampled_from([p for p in _paths(doc) if p and p[0] not in ("apiVersion", "kind")]))
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        parent[path[-1]] = draw(_ODD)
    return group


@seed(20261201)
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(group=_mutated_group())
def test_fuzz_group_mutations(group, tmp_path_factory, capsys):
    d = tmp_path_factory.mktemp("g")
    for name, docs in group.items():
        (d / f"{name}.yaml").write_text(yamlio.dump_all(docs))
    code = cli.main(["validate", "--crd-dir", str(helpers.CRD_ROOT), *FIXTURE, "--closed", "--format", "json", "--multikueue",
                     *[str(d / f"{name}.yaml") for name in sorted(group)]])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    assert code in (0, 1, 2), err
    if code != 2:   # 2: the mutation took away what makes the manager one (a usage error, one line)
        assert not [f for f in json.loads(out)["findings"] if f["rule"] == "IE001"], out
