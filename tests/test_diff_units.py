"""The parts of `generator diff` without git: field changes, capacity and
never-admitted workloads (on generator/kernel/demand.py), immutable fields of core
kinds, CRD transition rules, and the text of a whole comparison.

Every expected value is worked out by hand from the objects written here and
the documented rules each module cites; each rule is shown firing just past
its threshold and quiet just before."""
from __future__ import annotations

import copy
from typing import Any

from generator.diff import compare, text
from generator.diff.capacity import accelerator_summary
from generator.diff.field_changes import MISSING, Change, field_changes
from generator.diff.immutable import core_violations
from generator.diff.transitions import certain, transition_violations
from generator.kernel import yamlio
from tests.helpers import CRD_ROOT

GPU = "nvidia.com/gpu"
API = "kueue.x-k8s.io/v1beta2"
KUST = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": ["../../base"]}

# The Job of issue 12: 2 pods (completions 2 < parallelism 4), 3 GPUs a pod
# (its init container's 3 beat the main container's 1), 1.25 CPU a pod.
JOB = {
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "train", "namespace": "team", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
    "spec": {"parallelism": 4, "completions": 2, "template": {"spec": {
        "restartPolicy": "Never", "overhead": {"cpu": "250m"},
        "initContainers": [{"name": "warmup", "resources": {"requests": {GPU: "3", "cpu": "500m"}}}],
        "containers": [{"name": "main", "resources": {"requests": {GPU: "1", "cpu": "1"}}}],
    }}},
}


def _tree(files: dict[str, Any]) -> dict[str, str]:
    return {path: yamlio.dump(obj) for path, obj in files.items()}


def _cq(name: str, gpus, cohort: str | None = None, **limits) -> dict:
    spec: dict = {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu", GPU], "flavors": [
        {"name": "default", "resources": [{"name": "cpu", "nominalQuota": 10},
                                          {"name": GPU, "nominalQuota": gpus, **limits}]}]}]}
    if cohort:
        spec["cohortName"] = cohort
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def _overlay(*objs: dict, job: dict | None = None) -> dict[str, str]:
    files = {"overlays/p/kustomization.yaml": KUST,
             "overlays/p/lq.yaml": {"apiVersion": API, "kind": "LocalQueue",
                                    "metadata": {"name": "lq", "namespace": "team"}, "spec": {"clusterQueue": "cq"}},
             "overlays/p/job.yaml": job or JOB}
    files.update({f"overlays/p/{i}.yaml": o for i, o in enumerate(objs)})
    return _tree(files)


def _capacity(old: dict[str, str], new: dict[str, str]) -> list[str]:
    lines = text.render(compare(old, new, "0" * 40, "test")).splitlines()
    start = lines.index("Capacity")
    return lines[start + 2:lines.index("", start)]


# ---------------------------------------------------------------- capacity

def test_a_workload_bigger_than_its_queue_can_never_be_admitted():
    """6 GPUs in one Workload: quota 5 fires, quota 6 is quiet."""
    fits, short = _overlay(_cq("cq", 6)), _overlay(_cq("cq", 5))
    assert _capacity(fits, short) == [
        "    ClusterQueue cq, flavor default, nvidia.com/gpu: quota 6 → 5 (-1); demand 6; headroom 0 → -1",
        "    cannot be admitted: Job team/train: one Workload needs 6 nvidia.com/gpu for pod set main "
        "(2 pods × 3), but ClusterQueue cq can ever get at most 5 in flavor default",
    ]
    assert _capacity(short, fits) == [
        "    ClusterQueue cq, flavor default, nvidia.com/gpu: quota 5 → 6 (+1); demand 6; headroom -1 → 0",
        "    can be admitted again: Job team/train (was: one Workload needs 6 nvidia.com/gpu for pod set "
        "main (2 pods × 3), but ClusterQueue cq can ever get at most 5 in flavor default)",
    ]


def test_borrowing_in_a_cohort_counts_toward_what_a_queue_can_give():
    """cq has 4 GPUs and may borrow the 2 that `other` lends: 6, enough. A borrowingLimit
    of 1 on cq, or a lendingLimit of 1 on other, leaves 5: never."""
    other = _cq("other", 2, "team")
    ok = _overlay(_cq("cq", 4, "team"), other)
    assert "cannot be admitted" not in "\n".join(_capacity(_overlay(_cq("cq", 6)), ok))
    for limited in (_overlay(_cq("cq", 4, "team", borrowingLimit=1), other),
                    _overlay(_cq("cq", 4, "team"), _cq("other", 2, "team", lendingLimit=1))):
        lines = _capacity(ok, limited)
        assert ("    cannot be admitted: Job team/train: one Workload needs 6 nvidia.com/gpu for pod set main "
                "(2 pods × 3), but ClusterQueue cq can ever get at most 5 in flavor default, borrowing from its "
                "cohort included") in lines


def test_cohort_rows_sum_their_queues():
    old = _overlay(_cq("cq", 4, "team"), _cq("other", 2, "team"))
    new = _overlay(_cq("cq", 4, "team"), _cq("other", 3, "team"))
    assert _capacity(old, new) == [
        "    ClusterQueue other, flavor default, nvidia.com/gpu: quota 2 → 3 (+1); demand 0; headroom 2 → 3",
        "    cohort team, flavor default, nvidia.com/gpu: quota 6 → 7 (+1); demand 6; headroom 0 → 1",
    ]


def test_partial_admission_minimum_is_what_must_fit():
    """With kueue.x-k8s.io/job-min-parallelism 1, one pod (3 GPUs) must fit: quota 2 fires, 3 is quiet."""
    job = copy.deepcopy(JOB)
    job["metadata"]["annotations"] = {"kueue.x-k8s.io/job-min-parallelism": "1"}
    lines = _capacity(_overlay(_cq("cq", 3), job=job), _overlay(_cq("cq", 2), job=job))
    assert lines[1] == ("    cannot be admitted: Job team/train: one Workload needs 3 nvidia.com/gpu for pod set main "
                        "(1 pod × 3), but ClusterQueue cq can ever get at most 2 in flavor default")
    assert not any("cannot" in x for x in _capacity(_overlay(_cq("cq", 2), job=job), _overlay(_cq("cq", 3), job=job)))


def test_a_queue_label_naming_no_local_queue_is_never_admitted():
    job = copy.deepcopy(JOB)
    job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "missing"
    lines = _capacity(_overlay(_cq("cq", 6)), _overlay(_cq("cq", 6), job=job))
    assert "    cannot be admitted: Job team/train: LocalQueue team/missing does not exist" in lines


def test_hpa_target_counts_a_replica_range():
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "t5", "namespace": "llm"},
           "spec": {"template": {"spec": {"containers": [
               {"name": "c", "resources": {"limits": {GPU: "1"}}}]}}}}
    hpa = {("Deployment", "llm", "t5"): (1, 5)}
    assert accelerator_summary(dep, hpa, GPU) == ("1 × 1–5 pods (HPA) = 1–5", 1, 5)
    assert accelerator_summary(dep, {}, GPU) == ("1 × 1 pod = 1", 1, 1)
    assert accelerator_summary(dep, {}, "google.com/tpu") is None


# ---------------------------------------------------------------- field changes

def test_sets_compare_as_sets():
    a = {"spec": {"sourceRepos": ["a", "b"], "destinations": [{"server": "s1"}, {"server": "s2"}]}}
    b = {"spec": {"sourceRepos": ["b", "a"], "destinations": [{"server": "s2"}]}}
    assert field_changes(a, b, kind="AppProject") == [
        Change("spec.destinations", {"server": "s1"}, MISSING, member=True)]
    # The same lists on a kind whose lists are ordered: a reordering is a change.
    assert field_changes(a, b, kind="Other") != []


def test_removing_one_item_of_a_list_is_one_removal():
    old = [{"port": 1}, {"port": 2}, {"port": 3}, {"port": 4}]
    new = [{"port": 1}, {"port": 3}, {"port": 4}]
    assert field_changes({"x": old}, {"x": new}) == [Change("x[1].port", 2, MISSING)]


def test_field_paths_are_written_as_spec_errors_and_validate_write_them():
    """docs/errors.md, "The line": ['name'] for a list item picked by its name, ["..."] for a
    key with dots or slashes, [i] for an index."""
    old = {"labels": {"ai.gke.io/model": "a"}, "containers": [{"name": "tgi", "env": [{"name": "X", "value": "1"}]}],
           "args": ["--x"] * 30}
    new = {"labels": {"ai.gke.io/model": "b"}, "containers": [{"name": "tgi", "env": [{"name": "X", "value": "2"}]}],
           "args": ["--x"] * 29 + ["--y"]}
    assert [c.path for c in field_changes(old, new)] == [
        'labels["ai.gke.io/model"]', "containers['tgi'].env['X'].value", "args[29]"]


def test_a_long_argument_list_shows_the_argument_that_changed():
    old = [f"--flag-{i}=value-{i}" for i in range(15)]
    new = [*old[:11], "--flag-11=other", *old[12:]]
    assert field_changes({"args": old}, {"args": new}) == [Change("args[11]", "--flag-11=value-11", "--flag-11=other")]
    short_old, short_new = ["a", "b"], ["a", "b", "c"]     # a short list is shown whole
    assert field_changes({"args": short_old}, {"args": short_new}) == [Change("args", short_old, short_new)]


def test_a_replaced_release_url_shows_both_in_full():
    a = {"resources": ["https://example.com/a/very/long/release/path/v1.0.0/manifests.yaml", "patch.yaml"]}
    b = {"resources": ["patch.yaml", "https://example.com/a/very/long/release/path/v1.1.0/manifests.yaml"]}
    (c,) = field_changes(a, b, kind="Kustomization")
    assert text.change_lines(c) == [
        "resources:",
        "  - https://example.com/a/very/long/release/path/v1.0.0/manifests.yaml",
        "  + https://example.com/a/very/long/release/path/v1.1.0/manifests.yaml",
    ]


def test_multi_line_text_shows_changed_lines():
    (c,) = field_changes({"data": {"f.lua": "a = 1\nb = 2\n"}}, {"data": {"f.lua": "a = 1\nb = 3\n"}})
    assert text.change_lines(c) == ['data["f.lua"]:', "  - b = 2", "  + b = 3"]


# ---------------------------------------------------------------- immutable fields of core kinds

def _paths(kind_group: tuple[str, str], old: dict, new: dict) -> list[str]:
    return [v.path for v in core_violations((*kind_group, "ns", "x"), old, new)]


def test_statefulset_may_change_only_its_documented_fields():
    old = {"spec": {"replicas": 1, "serviceName": "s", "volumeClaimTemplates": [{"metadata": {"name": "d"}}]}}
    assert _paths(("apps", "StatefulSet"), old, {"spec": {**old["spec"], "replicas": 3}}) == []
    new = {"spec": {**old["spec"], "volumeClaimTemplates": [{"metadata": {"name": "e"}}]}}
    assert _paths(("apps", "StatefulSet"), old, new) == ["spec.volumeClaimTemplates"]


def test_service_cluster_ip_except_external_name():
    headless = {"spec": {"clusterIP": "None", "ports": [{"port": 80}]}}
    plain = {"spec": {"ports": [{"port": 80}]}}
    assert _paths(("", "Service"), headless, plain) == ["spec.clusterIP"]
    assert _paths(("", "Service"), plain, {"spec": {**plain["spec"], "ports": [{"port": 81}]}}) == []
    external = {"spec": {"type": "ExternalName", "externalName": "a.example.com"}}
    assert _paths(("", "Service"), headless, external) == []


def test_configmap_data_is_fixed_only_when_immutable():
    old = {"data": {"k": "1"}}
    assert _paths(("", "ConfigMap"), old, {"data": {"k": "2"}}) == []
    assert _paths(("", "ConfigMap"), {**old, "immutable": True}, {"data": {"k": "2"}, "immutable": True}) == ["data"]


def test_job_completions_may_follow_parallelism_only_when_indexed():
    def job(mode, completions, parallelism):
        return {"spec": {"completionMode": mode, "completions": completions, "parallelism": parallelism}}
    assert _paths(("batch", "Job"), job("NonIndexed", 2, 2), job("NonIndexed", 3, 3)) == ["spec.completions"]
    assert _paths(("batch", "Job"), job("Indexed", 2, 2), job("Indexed", 3, 3)) == []
    assert _paths(("batch", "Job"), job("Indexed", 2, 2), job("Indexed", 3, 2)) == ["spec.completions"]


def test_job_scheduling_directives_are_noted():
    old = {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}
    moved = copy.deepcopy(old)
    moved["spec"]["template"]["spec"]["nodeSelector"] = {"pool": "b"}
    (v,) = core_violations(("batch", "Job", "ns", "x"), old, moved)
    assert v.path == "spec.template" and v.note.startswith("only scheduling directives changed")
    other = copy.deepcopy(old)
    other["spec"]["template"]["spec"]["containers"][0]["image"] = "i:2"
    (v,) = core_violations(("batch", "Job", "ns", "x"), old, other)
    assert v.note == ""


def test_deployment_selector_but_not_template():
    old = {"spec": {"selector": {"matchLabels": {"app": "a"}}, "template": {"metadata": {"labels": {"app": "a"}}}}}
    new_template = copy.deepcopy(old)
    new_template["spec"]["template"]["metadata"]["labels"]["v"] = "2"
    assert _paths(("apps", "Deployment"), old, new_template) == []
    new_selector = copy.deepcopy(new_template)
    new_selector["spec"]["selector"]["matchLabels"]["v"] = "2"
    assert _paths(("apps", "Deployment"), old, new_selector) == ["spec.selector"]


# ---------------------------------------------------------------- CRD transition rules

def test_pinned_kueue_crds():
    """Kueue v0.17.4: Topology levels are `self == oldSelf`; a ResourceFlavor's nodeLabels are
    fixed only once it names a topology (evaluated with the validator's CEL)."""
    def topo(label):
        return {"apiVersion": API, "kind": "Topology", "metadata": {"name": "t"},
                "spec": {"levels": [{"nodeLabel": label}]}}
    hits = transition_violations(topo("a"), topo("b"), CRD_ROOT)
    assert [(v.path, v.message, certain(v)) for v in hits] == [("spec.levels", "field is immutable", True)]
    assert transition_violations(topo("a"), topo("a"), CRD_ROOT) == []

    def flavor(pool, topology=None):
        spec = {"nodeLabels": {"pool": pool}}
        if topology:
            spec["topologyName"] = topology
        return {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "f"}, "spec": spec}
    assert transition_violations(flavor("a"), flavor("b"), CRD_ROOT) == []
    hits = transition_violations(flavor("a", "t"), flavor("b", "t"), CRD_ROOT)
    assert [(v.path, v.message, certain(v)) for v in hits] == [
        ("spec", "nodeLabels are immutable when topologyName is set", True)]


# ---------------------------------------------------------------- a whole comparison

def test_objects_moving_into_base():
    """An object both overlays had moves into base (reported once); one only
    overlay a had arrives in b via base."""
    def pc(name, value=1):
        return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                "value": value}
    overlays = {"overlays/a/kustomization.yaml": KUST, "overlays/b/kustomization.yaml": KUST}
    old = _tree({**overlays, "overlays/a/pc_x.yaml": pc("x"), "overlays/b/pc_x.yaml": pc("x"),
                 "overlays/a/pc_y.yaml": pc("y"), "overlays/b/pc_z.yaml": pc("z")})
    new = _tree({**overlays, "base/pc_x.yaml": pc("x"), "base/pc_y.yaml": pc("y", 2),
                 "overlays/b/pc_z.yaml": pc("z")})
    lines = text.render(compare(old, new, "0" * 40, "test")).splitlines()
    assert lines[1:] == [
        "",
        "Summary: 1 added, 0 removed, 0 changed, 2 moved; 1 immutable change; 0 workloads can never be admitted",
        "",
        "Needs attention (1):",
        "  ! immutable change: PriorityClass y (overlays/a): the API server refuses it as an update; it is deleted "
        "and recreated",
        "",
        "Immutable changes (1): the API server refuses these as updates",
        "  PriorityClass y (overlays/a)",
        "      value: 1 → 2",
        "        a PriorityClass's value and preemptionPolicy are fixed at creation "
        "[kubernetes pkg/apis/scheduling/validation/validation.go ValidatePriorityClassUpdate]",
        "      rollout: delete and recreate; no pod restarts: running pods keep the priority value they were "
        "created with; pods created later get the new one",
        "      Argo CD: not synced by Argo CD here",
        "      by hand: kubectl replace --force -f base/pc_y.yaml",
        "",
        "Capacity",
        "  overlays/a",
        "    priority PriorityClass y value: 1 → 2",
        "",
        "Objects: 1 added, 0 removed, 0 changed, 2 moved",
        "",
        "  base",
        "    > PriorityClass x (moved to base from overlays/a, overlays/b)",
        "",
        "  overlays/a",
        "    > PriorityClass y (moved to base)",
        "        value: 1 → 2",
        "",
        "  overlays/b",
        "    + PriorityClass y (via base)",
    ]


def test_a_removed_entry_too_long_for_one_line_is_named_by_kind_and_name():
    from generator.diff.field_changes import show
    flavor = {"name": "spot-l4", "resources": [{"name": r, "nominalQuota": 96} for r in ("cpu", "memory", GPU) * 3]}
    assert show(flavor) == "{name: spot-l4, …}"
    entry = {"kind": "ResourceFlavor", "name": "spot-l4", "nodeLabels": {f"example.com/label-{i}": "x" * 20
                                                                         for i in range(8)}}
    assert show(entry) == "{kind: ResourceFlavor, name: spot-l4, …}"
    assert show({"a" * 250: 1, "b": 2}) == "(mapping of 2 keys)"
