"""synth renders through cdk8s itself: the builders' classes are cdk8s-plus-33's, the charts
are cdk8s Charts, and what is written is cdk8s' own JSON. Expected values here are written
out by hand from cdk8s' documented rules (ApiObject.toJson in cdk8s 2.70's lib/api-object.js:
apiVersion, kind, metadata first, props sanitized with keys sorted, JSON patches applied after)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import cdk8s
import cdk8s_plus_33
import pytest

from generator.builders import cdk, core, embed, k8s
from generator.kernel import paths, yamlio

from . import helpers


def _render(build) -> list[dict]:
    chart = cdk.chart(cdk.new_app(), "t")
    build(chart)
    return cdk.manifests(chart)


def _ordered(objs: list[dict]) -> str:
    return json.dumps(objs)   # keeps key order, and 2 apart from 2.0


def test_the_builders_classes_are_cdk8s_plus_33s():
    assert k8s.KubeDeployment is cdk8s_plus_33.k8s.KubeDeployment
    assert k8s.Container is cdk8s_plus_33.k8s.Container
    assert isinstance(cdk.chart(cdk.new_app(), "t"), cdk8s.Chart)


def _constructor(cls, *args, **props):
    return cls(*args, **props)


@pytest.mark.parametrize("make", [_constructor, cdk.typed], ids=["jsii-constructor", "cdk.typed"])
def test_typed_objects_are_cdk8s_json(make):
    """The same JSON whether jsii's constructor sends the props (every struct field, unset ones
    as null) or cdk.typed does (set fields only)."""
    def build(chart):
        make(k8s.KubeConfigMap, chart, "a", metadata=core.meta("a", "n", annotations={"z": "1", "a": "2"}),
             data={"b": "x", "a": "w"})
        make(k8s.KubeService, chart, "b", metadata=k8s.ObjectMeta(name="b"), spec=k8s.ServiceSpec(
            cluster_ip="None", selector={"app": "b"},
            ports=[k8s.ServicePort(port=80, target_port=core.int_or_string("http"))]))
        make(k8s.KubeDeployment, chart, "c", metadata=k8s.ObjectMeta(name="c", labels={}), spec=k8s.DeploymentSpec(
            replicas=2, selector=k8s.LabelSelector(match_labels={"app": "c"}),
            template=k8s.PodTemplateSpec(spec=k8s.PodSpec(containers=[k8s.Container(
                name="c", resources=k8s.ResourceRequirements(
                    requests={"cpu": core.qty(1.5), "memory": core.qty("1Gi")}, limits={"cpu": core.qty(2)}))]))))
    assert _ordered(_render(build)) == _ordered([
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"annotations": {"a": "2", "z": "1"}, "name": "a", "namespace": "n"},
         "data": {"a": "w", "b": "x"}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b"},
         "spec": {"clusterIP": "None", "ports": [{"port": 80, "targetPort": "http"}], "selector": {"app": "b"}}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "c"},   # empty labels dropped
         "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "c"}},
                  "template": {"spec": {"containers": [{"name": "c", "resources": {
                      "limits": {"cpu": 2}, "requests": {"cpu": 1.5, "memory": "1Gi"}}}]}}}},
    ])


def test_typed_sends_only_the_fields_set():
    """What cdk.typed hands jsii: jsii names (camelCase), set fields only, a Quantity as the
    object itself (jsii sends a reference to it)."""
    q = core.qty("1Gi")
    c = k8s.Container(name="c", resources=k8s.ResourceRequirements(requests={"memory": q}), image_pull_policy="Never")
    assert cdk.wire(c) == {"name": "c", "imagePullPolicy": "Never", "resources": {"requests": {"memory": q}}}
    assert cdk.wire([k8s.EnvVar(name="A", value="1"), {"k": k8s.ObjectMeta()}]) == [{"name": "A", "value": "1"},
                                                                                  {"k": {}}]


def test_typed_makes_the_class_asked_for():
    chart = cdk.chart(cdk.new_app(), "t")
    made = cdk.typed(k8s.KubeNamespace, chart, "Namespace._.a", metadata=k8s.ObjectMeta(name="a"))
    assert type(made) is k8s.KubeNamespace
    assert (made.kind, made.name, made.node.id) == ("Namespace", "a", "Namespace._.a")


def test_props_key_tells_props_apart():
    one, two = core.qty(1), core.qty(2)
    key = cdk.props_key
    assert key(k8s.Container(name="c")) == key(k8s.Container(name="c"))
    assert key(k8s.Container(name="c")) != key(k8s.Container(name="c", image="i"))
    assert key(k8s.Container(name="c", resources=k8s.ResourceRequirements(limits={"cpu": one}))) != \
        key(k8s.Container(name="c", resources=k8s.ResourceRequirements(limits={"cpu": two})))
    assert key({"a": 1}) != key({"a": True}) != key({"a": 1.0})


def test_identical_embedded_templates_are_rendered_once():
    """Two equal pod templates make one object in the scratch chart; both holes get its JSON.
    A template that differs in one field is made on its own."""
    cdk.new_app()
    same = [embed.pod_template(k8s.PodTemplateSpec(spec=k8s.PodSpec(containers=[k8s.Container(name="c")])))
            for _ in range(2)]
    other = embed.pod_template(k8s.PodTemplateSpec(spec=k8s.PodSpec(containers=[k8s.Container(name="c")],
                                                                     restart_policy="Never")))
    assert len(cdk._pending.holes) == 2 and len(cdk._pending.copies) == 1
    cdk.flush()
    assert same[0] == same[1] == {"spec": {"containers": [{"name": "c"}]}}
    assert other == {"spec": {"containers": [{"name": "c"}], "restartPolicy": "Never"}}


def test_equal_custom_resource_bodies_share_one_patch():
    def build(chart):
        for ns in ("a", "b"):
            cdk.custom(chart, {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
                               "metadata": {"name": "lq", "namespace": ns}, "spec": {"clusterQueue": "cq"}})
        cdk.custom(chart, {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
                           "metadata": {"name": "lq", "namespace": "c"}, "spec": {"clusterQueue": "other"}})
    objs = _render(build)
    assert len(cdk._pending.patches) == 2
    assert [(o["metadata"]["namespace"], o["spec"]) for o in objs] == [
        ("a", {"clusterQueue": "cq"}), ("b", {"clusterQueue": "cq"}), ("c", {"clusterQueue": "other"})]


def test_custom_objects_keep_the_builders_order():
    def build(chart):
        cdk.custom(chart, {"apiVersion": "example.com/v1", "kind": "Thing",
                           "metadata": {"name": "t", "labels": {"b": "1", "a": "2"}},
                           "spec": {"zeta": 1.0, "alpha": None, "beta": [{"b": 0.5, "a": {}}, 3]},
                           "data": {"k": []}, "status": None})
    assert _ordered(_render(build)) == _ordered([
        {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"labels": {"a": "2", "b": "1"}, "name": "t"},
         "spec": {"zeta": 1, "beta": [{"b": 0.5, "a": {}}, 3]}, "data": {"k": []}},
    ])


def test_embedded_templates_are_filled_in_when_the_chart_renders():
    def build(chart):
        template = embed.pod_template(k8s.PodTemplateSpec(spec=k8s.PodSpec(
            containers=[k8s.Container(name="c", image="i")], restart_policy="Never")))
        job = embed.job_template(k8s.JobSpec(completion_mode="Indexed", template=k8s.PodTemplateSpec(
            spec=k8s.PodSpec(containers=[k8s.Container(name="d")]))))
        cdk.custom(chart, {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"},
                           "spec": {"template": template, "job": job}})
    (obj,) = _render(build)
    assert _ordered([obj["spec"]]) == _ordered([{
        "template": {"spec": {"containers": [{"image": "i", "name": "c"}], "restartPolicy": "Never"}},
        "job": {"spec": {"completionMode": "Indexed", "template": {"spec": {"containers": [{"name": "d"}]}}}}}])


def test_a_duplicate_object_id_is_refused_by_cdk8s():
    chart = cdk.chart(cdk.new_app(), "t")
    k8s.KubeNamespace(chart, "Namespace._.a", metadata=k8s.ObjectMeta(name="a"))
    with pytest.raises(RuntimeError, match="There is already a Construct with name 'Namespace._.a'"):
        k8s.KubeNamespace(chart, "Namespace._.a", metadata=k8s.ObjectMeta(name="a"))


def test_cdk8s_disable_sort_does_not_change_the_output(tmp_path):
    """cdk8s writes keys unsorted under CDK8S_DISABLE_SORT; the generator takes the switch out
    (generator/__init__.py), so a user's environment cannot change what check compares."""
    shutil.copytree(helpers.generated(), tmp_path, dirs_exist_ok=True)
    env = {**os.environ, "CDK8S_DISABLE_SORT": "1", "PYTHONPATH": str(paths.ROOT)}
    proc = subprocess.run([sys.executable, "-m", "generator", "check", "--spec", str(helpers.FIXTURE_SPEC),
                           "--out", str(tmp_path)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr


def test_check_refuses_an_object_not_rendered_by_cdk8s(tmp_path, capsys):
    """One object's file replaced by the same object written by hand (keys in the order a
    person writes them, not cdk8s'): check reports that file."""
    shutil.copytree(helpers.generated(), tmp_path, dirs_exist_ok=True)
    name = "overlays/l4-standard/deployment_llm_tgi-gemma-deployment.yaml"
    path = tmp_path / name
    header, _, body = path.read_text().partition("\n")
    obj = yamlio.load_strict(body)
    by_hand = {"kind": obj["kind"], "apiVersion": obj["apiVersion"], "metadata": obj["metadata"], "spec": obj["spec"]}
    assert by_hand == obj
    path.write_text(f"{header}\n{yamlio.dump(by_hand)}")
    code, _, err = helpers.run_cli(capsys, "check", "--spec", helpers.FIXTURE_SPEC, "--out", tmp_path)
    assert code == 1
    assert f"differs: {name}" in err


def test_an_embedded_template_read_before_rendering_fails_loudly():
    cdk.new_app()
    template = embed.pod_template(k8s.PodTemplateSpec(spec=k8s.PodSpec(containers=[k8s.Container(name="c")])))
    with pytest.raises(RuntimeError, match="filled in when the charts render"):
        template["spec"]
    cdk.flush()
    assert template["spec"] == {"containers": [{"name": "c"}]}
