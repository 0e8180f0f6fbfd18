"""Capacity is chosen, not inherited from pool order: serving stays off Spot unless the spec says
so, training may use it, and Kueue sees the choice as a required node affinity on the labels the
ResourceFlavors carry (tests/fixtures/capacity.yaml: a Spot L4 pool first, an on-demand L4 pool
after it).

Independent facts: GKE labels Spot nodes cloud.google.com/gke-provisioning=spot (GKE "About node
pool auto-creation"; kubernetes-engine-samples batch/kueue-cohort/flavors.yaml selects it), and
every node with its pool's name, cloud.google.com/gke-nodepool. Kueue's flavor assigner matches a
pod's nodeSelector and required node affinity against each flavor's nodeLabels, keys the flavors
use only (pkg/scheduler/flavorassigner/flavorassigner.go flavorSelector, v0.17.4), and tries the
ClusterQueue's flavors in order."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from generator import model as specmod
from generator.kernel import yamlio
from generator.kernel.errors import SpecError
from tests import helpers

FIXTURE = Path(__file__).parent / "fixtures" / "capacity.yaml"
SPOT = {"key": "cloud.google.com/gke-provisioning", "operator": "NotIn", "values": ["spot"]}


def _raw() -> dict:
    return yamlio.load_user(FIXTURE.read_text())


def _objects(raw: dict) -> dict[str, dict]:
    tree = helpers.render(raw)
    out = {}
    for path, text in tree.items():
        if path.startswith("overlays/l4/") and not path.endswith("kustomization.yaml"):
            (o,) = yamlio.load_all(text)
            out[f"{o['kind']}/{o['metadata']['name']}"] = o
    return out


def _required(template: dict) -> list[dict] | None:
    affinity = template["spec"].get("affinity") or {}
    node = affinity.get("nodeAffinity") or {}
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    return None if required is None else required["nodeSelectorTerms"]


def _matches(term_expressions: list[dict], labels: dict) -> bool:
    """core/v1 NodeSelectorRequirement by hand: In needs the label with a listed value, NotIn
    passes when the label is absent or has another value (k8s.io/apimachinery labels.Selector)."""
    for e in term_expressions:
        have = labels.get(e["key"])
        if e["operator"] == "In" and have not in e["values"]:
            return False
        if e["operator"] == "NotIn" and have in e["values"]:
            return False
    return True


def test_serving_is_kept_off_spot_and_training_is_not():
    objs = _objects(_raw())
    spot = objs["ResourceFlavor/l4-spot"]["spec"]["nodeLabels"]
    on_demand = objs["ResourceFlavor/l4-on-demand"]["spec"]["nodeLabels"]
    assert spot["cloud.google.com/gke-provisioning"] == "spot"
    # The ClusterQueue tries the Spot flavor first (pool order).
    cq = objs["ClusterQueue/gpus"]["spec"]["resourceGroups"][0]["flavors"]
    assert [f["name"] for f in cq] == ["l4-spot", "l4-on-demand"]
    serving = objs["Deployment/chat"]["spec"]["template"]
    (term,) = _required(serving)
    assert SPOT in term["matchExpressions"]
    assert not _matches(term["matchExpressions"], spot)
    assert _matches(term["matchExpressions"], on_demand)
    assert _required(objs["Job/tune"]["spec"]["template"]) is None   # training may use Spot


def test_serving_on_spot_when_the_spec_says_so():
    raw = _raw()
    raw["workloads"][0]["capacity"] = ["spot", "on-demand"]
    serving = _objects(raw)["Deployment/chat"]["spec"]["template"]
    assert _required(serving) is None


def test_training_kept_to_spot_is_kept_off_on_demand_by_pool_name():
    raw = _raw()
    raw["workloads"][1]["capacity"] = ["spot"]
    objs = _objects(raw)
    on_demand = objs["ResourceFlavor/l4-on-demand"]["spec"]["nodeLabels"]
    assert on_demand["cloud.google.com/gke-nodepool"] == "l4-on-demand"
    (term,) = _required(objs["Job/tune"]["spec"]["template"])
    assert not _matches(term["matchExpressions"], on_demand)
    assert _matches(term["matchExpressions"], objs["ResourceFlavor/l4-spot"]["spec"]["nodeLabels"])


def test_serving_with_only_spot_capacity_is_refused_in_one_line():
    raw = _raw()
    raw["profiles"]["l4"]["nodePools"] = raw["profiles"]["l4"]["nodePools"][:1]
    with pytest.raises(SpecError) as e:
        specmod.from_dict(copy.deepcopy(raw), "test-spec.yaml")
    (p,) = [p for p in e.value.problems if p.path == "workloads[0]"]
    assert "no reserved or on-demand capacity" in p.message and "capacity: [spot]" in p.message


def test_plan_admits_serving_to_on_demand_although_spot_comes_first(tmp_path, capsys):
    helpers.synth_into(tmp_path, _raw())
    code, out, err = helpers.run_cli(capsys, "plan", tmp_path / "overlays" / "l4")
    assert code == 0, err
    assert "llm/chat#1 admitted to l4-on-demand" in out
    assert "llm/tune admitted to l4-spot" in out
    # The negative half: the same overlay without the affinity puts serving on Spot (first flavor).
    dep = tmp_path / "overlays" / "l4" / "deployment_llm_chat.yaml"
    (o,) = yamlio.load_all(dep.read_text())
    del o["spec"]["template"]["spec"]["affinity"]
    dep.write_text(yamlio.dump(o))
    code, out, err = helpers.run_cli(capsys, "plan", tmp_path / "overlays" / "l4")
    assert code == 0, err
    assert "llm/chat#1 admitted to l4-spot" in out


def test_a_team_default_orders_its_cluster_queue_and_applies_to_its_workloads():
    raw = helpers.example_raw(Path(__file__).parent / "fixtures" / "teams.yaml")
    raw["teams"][0]["capacity"] = ["spot", "on-demand"]
    tree = helpers.render(raw)
    (cq,) = yamlio.load_all(tree["overlays/shared/clusterqueue_cq-team-a.yaml"])
    assert [f["name"] for f in cq["spec"]["resourceGroups"][0]["flavors"]] == ["spot", "on-demand"]
    (other,) = yamlio.load_all(tree["overlays/shared/clusterqueue_cq-team-b.yaml"])
    assert [f["name"] for f in other["spec"]["resourceGroups"][0]["flavors"]] == ["on-demand", "spot"]


@pytest.mark.parametrize("example", sorted((Path(__file__).parent.parent / "examples").glob("*.yaml")),
                         ids=lambda p: p.stem)
def test_serving_never_matches_a_spot_flavor_on_any_example(example):
    """Every example: the pods of each serving object (Deployment, LeaderWorkerSet) cannot match a
    Spot flavor's nodeLabels, by their nodeSelector and required node affinity (Kueue's
    flavorSelector reads both); none of the examples asks for Spot serving."""
    tree = helpers.render(helpers.example_raw(example))
    for overlay in sorted({p.split("/")[1] for p in tree if p.startswith("overlays/")}):
        objs = [yamlio.load_all(t)[0] for p, t in tree.items()
                if p.startswith(f"overlays/{overlay}/") and not p.endswith("kustomization.yaml")]
        spot = [o["spec"]["nodeLabels"] for o in objs if o["kind"] == "ResourceFlavor"
                and (o.get("spec") or {}).get("nodeLabels", {}).get("cloud.google.com/gke-provisioning") == "spot"]
        for o in objs:
            if o["kind"] not in ("Deployment", "LeaderWorkerSet"):
                continue
            lwt = o["spec"].get("leaderWorkerTemplate") or {}
            templates = [o["spec"]["template"]] if o["kind"] == "Deployment" else \
                [t for t in (lwt.get("leaderTemplate"), lwt.get("workerTemplate")) if t]
            for template, labels in ((t, f) for t in templates for f in spot):
                selector = template["spec"].get("nodeSelector") or {}
                keys = set(labels)
                by_selector = all(labels.get(k) == v for k, v in selector.items() if k in keys)
                terms = _required(template) or [{"matchExpressions": []}]
                by_affinity = any(_matches([e for e in t["matchExpressions"] if e["key"] in keys], labels)
                                  for t in terms)
                assert not (by_selector and by_affinity), (example.name, o["metadata"]["name"], labels)
