"""TPU serving stack and release matrix: the InferencePool, HTTPRoute, policies
and LWS pods agree (selector, ports, references); queue and priority labels
resolve; every generated TPU object validates strictly against each release
of the CRDs we claim to support, and synth works with the other pins."""
import copy

import pytest

from generator.builders.workloads import tpu_pd_serving as pd
from generator.kernel import catalog, crd_dirs, demand, kueue_api, labelmatch as labels, versions, yamlio
from generator.kernel.schemacheck import SchemaSet
from tests import helpers

SUB, SUPER = "tpu7x-subslice", "tpu7x-superslice"


def _objects(tree: dict, profile: str) -> list[dict]:
    prefix = f"overlays/{profile}/"
    return [o for path, text in sorted(tree.items())
            if path.startswith(prefix) and not path.endswith("kustomization.yaml")
            for o in yamlio.load_all(text)]


@pytest.fixture(scope="module")
def tree():
    return helpers.render(helpers.fixture_raw())


@pytest.fixture(scope="module")
def sub_objs(tree):
    return _objects(tree, SUB)


def _one(objs, kind, name=None):
    (o,) = [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    return o


# ---------------------------------------------------------------- serving consistency

def test_serving_stack_is_consistent(sub_objs):
    assert helpers.rule_findings(sub_objs, ("GW", "IP")) == []
    kinds = sorted(o["kind"] for o in sub_objs if o["metadata"].get("namespace") == "llm")
    for k in ("Gateway", "HTTPRoute", "InferencePool", "HealthCheckPolicy", "GCPBackendPolicy"):
        assert kinds.count(k) == 1, k


def test_pool_selects_exactly_the_leaders(sub_objs):
    pool = _one(sub_objs, "InferencePool")
    selector = pool["spec"]["selector"]["matchLabels"]
    matched = sorted(f"{o['metadata']['name']} {ps.name}" for o in sub_objs for ps in demand.podsets(o)
                     if labels.selector_matches({"matchLabels": selector}, ps.labels))
    assert matched == ["qwen-decode leader", "qwen-prefill leader"]
    assert pool["spec"]["targetPorts"] == [{"number": 8000}]


def test_route_backend_matches_the_pool_api(sub_objs):
    pool = _one(sub_objs, "InferencePool")
    (ref,) = _one(sub_objs, "HTTPRoute")["spec"]["rules"][0]["backendRefs"]
    assert ref == {"group": pool["apiVersion"].rpartition("/")[0], "kind": pool["kind"], "name": pool["metadata"]["name"]}
    assert pool["apiVersion"] == "inference.networking.k8s.io/v1"
    for kind in ("HealthCheckPolicy", "GCPBackendPolicy"):
        assert _one(sub_objs, kind)["spec"]["targetRef"] == ref


def test_slice_controller_sees_both_lws_templates(sub_objs):
    """Its LWS webhook skips the whole LWS unless leader and worker templates both
    carry the shape annotation and the tpu7x node selector."""
    for lws in (o for o in sub_objs if o["kind"] == "LeaderWorkerSet"):
        assert "cloud.google.com/gke-tpu-slice-topology" not in lws["metadata"].get("annotations", {})
        assert lws["metadata"]["annotations"][pd.EXCLUSIVE_TOPOLOGY] == catalog.TPU7X_DYNAMIC.slice_label
        lwt = lws["spec"]["leaderWorkerTemplate"]
        for t in (lwt["leaderTemplate"], lwt["workerTemplate"]):
            assert t["metadata"]["annotations"][catalog.TPU7X_DYNAMIC.slice_topology_annotation] == "2x2x2"
            assert t["spec"]["nodeSelector"] == {"cloud.google.com/gke-tpu-accelerator": "tpu7x"}


def test_no_placeholders_left(tree):
    text = "".join(v for k, v in tree.items() if k.startswith(("overlays/tpu7x", "controllers/tpu7x")))
    for placeholder in ("MODEL_WEIGHT_BUCKET", "${NAMESPACE}", "<", "PROJECT_ID"):
        assert placeholder not in text, placeholder


@pytest.mark.parametrize("profile", [SUB, SUPER])
def test_labels_resolve_and_quota_covers_every_request(tree, profile):
    objs = _objects(tree, profile)
    wpcs = {o["metadata"]["name"] for o in objs if o["kind"] == "WorkloadPriorityClass"}
    lqs = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs if o["kind"] == "LocalQueue"}
    covered = set(_one(objs, "ClusterQueue")["spec"]["resourceGroups"][0]["coveredResources"])
    workloads = [o for o in objs if o["kind"] in ("JobSet", "LeaderWorkerSet")]
    assert workloads
    for o in workloads:
        labels = o["metadata"]["labels"]
        assert labels[kueue_api.PRIORITY_LABEL] in wpcs
        assert (o["metadata"]["namespace"], labels[kueue_api.QUEUE_LABEL]) in lqs
        for ps in demand.podsets(o):
            for c in ps.spec["containers"] + ps.spec.get("initContainers", []):
                requested = set(c.get("resources", {}).get("requests", {}))
                assert requested <= covered, f"{o['metadata']['name']}/{c['name']}: {requested - covered} not in the ClusterQueue"


# ---------------------------------------------------------------- release matrix

GROUP_DIRS = {
    "kueue.x-k8s.io": ["kueue/v0.17.4", "kueue/v0.19.2"],
    "jobset.x-k8s.io": ["jobset/v0.11.1", "jobset/v0.12.0"],
    "leaderworkerset.x-k8s.io": ["lws/v0.8.0", "lws/v0.10.0"],
    "inference.networking.k8s.io": ["gateway-api-inference-extension/v1.5.0", "gateway-api-inference-extension/v1.6.0"],
    "gateway.networking.k8s.io": ["gateway-api/v1.6.1/standard"],
    "networking.gke.io": ["gke-gateway-api/v1.4.0"],
}


@pytest.mark.parametrize("group,crd_dir", [(g, d) for g, ds in sorted(GROUP_DIRS.items()) for d in ds])
def test_tpu_objects_validate_against_each_release(tree, group, crd_dir):
    schemas = SchemaSet(helpers.fixture_spec().kubernetes_version, [helpers.CRD_ROOT / crd_dir])
    objs = [o for p in (SUB, SUPER) for o in _objects(tree, p) if o["apiVersion"].rpartition("/")[0] == group]
    assert objs, f"no {group} objects generated"
    helpers.assert_valid(schemas, objs, crd_dir)


def test_every_custom_group_is_in_the_matrix(tree):
    groups = {o["apiVersion"].rpartition("/")[0] for p in (SUB, SUPER) for o in _objects(tree, p)}
    core = {"", "scheduling.k8s.io", "batch", "apps"}
    assert groups - core <= set(GROUP_DIRS), groups - core - set(GROUP_DIRS)


def test_endpoint_picker_required_by_v150_only(sub_objs):
    pool = copy.deepcopy(_one(sub_objs, "InferencePool"))
    del pool["spec"]["endpointPickerRef"]
    v150 = SchemaSet("1.33", [helpers.CRD_ROOT / "gateway-api-inference-extension/v1.5.0"])
    v160 = SchemaSet("1.33", [helpers.CRD_ROOT / "gateway-api-inference-extension/v1.6.0"])
    assert any("endpointPickerRef" in e.message for e in v150.errors(pool))
    assert v160.errors(pool) == []


@pytest.mark.parametrize("pins", [
    {"kueue": "v0.19.2", "jobset": "v0.12.0", "lws": "v0.10.0"},
    {"kueue": "v0.17.4", "jobset": "v0.12.0", "lws": "v0.8.0"},
])
def test_synth_with_other_pins(pins):
    raw = helpers.fixture_raw()
    raw["kueue"]["version"] = pins["kueue"]
    raw["jobset"] = {"version": pins["jobset"]}
    raw["lws"] = {"version": pins["lws"]}
    s = helpers.specmod.from_dict(copy.deepcopy(raw), "spec.yaml")
    tree = helpers.render(raw)
    for profile in (SUB, SUPER):
        objs = _objects(tree, profile)
        schemas = SchemaSet(s.kubernetes_version, crd_dirs.dirs_for(pins["kueue"], pins["jobset"], pins["lws"], helpers.CRD_ROOT))
        helpers.assert_valid(schemas, objs, profile)
        for o in objs:
            if o["kind"] == "JobSet":
                assert o["apiVersion"] == versions.release("jobset", pins["jobset"])["api"]
            if o["kind"] == "LeaderWorkerSet":
                assert o["apiVersion"] == versions.release("lws", pins["lws"])["api"]
        kust = yamlio.load_strict(tree[f"controllers/{profile}/jobset/kustomization.yaml"].split("\n", 1)[1])
        assert pins["jobset"] in kust["resources"][0]
    kust = yamlio.load_strict(tree[f"controllers/{SUB}/lws/kustomization.yaml"].split("\n", 1)[1])
    assert pins["lws"] in kust["resources"][0]


def test_controllers_each_profile_needs(tree):
    assert {p.split("/")[2] for p in tree if p.startswith(f"controllers/{SUB}/")} >= {"kueue", "jobset", "lws"}
    assert {p.split("/")[2] for p in tree if p.startswith(f"controllers/{SUPER}/")} >= {"kueue", "jobset"}
    assert not any(p.startswith(f"controllers/{SUPER}/lws/") for p in tree)
