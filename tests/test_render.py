"""generator/builders/render.py against cdk8s itself: the same recorded objects rendered in
Python and through cdk8s-plus-33 in Node (generator/builders/cdk8s_render.py, the way
synth rendered before) must give the same JSON, key order included."""
from __future__ import annotations

import ast
import json

import pytest

from generator import model as specmod
from generator.builders import cdk, k8s, tree

from .helpers import FIXTURES, ROOT


def _both(objects_of) -> tuple[list[dict], list[dict]]:
    out = []
    for backend in ("python", "cdk8s"):
        with cdk.rendering(backend):
            chart = cdk.chart(cdk.new_app(), "t")
            objects_of(chart)
            out.append(cdk.manifests(chart))
    return out[0], out[1]


def _ordered(objs: list[dict]) -> str:
    return json.dumps(objs)   # keeps key order, and 2 apart from 2.0


# Every fixture platform and example: together they use every workload kind.
@pytest.mark.parametrize("spec", [*sorted(FIXTURES.glob("*.yaml")), *sorted((ROOT / "examples").glob("*.yaml"))],
                         ids=lambda p: p.name)
def test_a_spec_renders_as_cdk8s_renders_it(spec):
    loaded = specmod.load(spec)
    with cdk.rendering("cdk8s"):
        expected = tree.render(loaded)
    actual = tree.render(loaded)
    assert actual[0] == expected[0]
    assert _ordered(list(actual[1].values())) == _ordered(list(expected[1].values()))


def test_typed_objects_follow_cdk8s_rules():
    def build(chart):
        meta = k8s.ObjectMeta(name="a", namespace="n", labels={}, annotations={"z": "1", "a": "2"})
        k8s.KubeConfigMap(chart, "a", metadata=meta,
                          data={"b": "x", "10": "y", "9": "z", "a": "w", "é": "u"})
        k8s.KubeService(chart, "b", metadata=k8s.ObjectMeta(name="b"), spec=k8s.ServiceSpec(
            cluster_ip="None", selector={"app": "b"},
            ports=[k8s.ServicePort(port=80, target_port=k8s.IntOrString.from_string("http"))]))
        k8s.KubeDeployment(chart, "c", metadata=k8s.ObjectMeta(name="c"), spec=k8s.DeploymentSpec(
            replicas=2, selector=k8s.LabelSelector(match_labels={"app": "c"}),
            template=k8s.PodTemplateSpec(spec=k8s.PodSpec(containers=[k8s.Container(
                name="c", args=[], resources=k8s.ResourceRequirements(
                    requests={"cpu": k8s.Quantity.from_number(1.5), "memory": k8s.Quantity.from_string("1Gi")},
                    limits={"cpu": k8s.Quantity.from_number(2.0)}))]))))
    python, reference = _both(build)
    assert _ordered(python) == _ordered(reference)


def test_custom_objects_keep_the_builders_order():
    def build(chart):
        cdk.custom(chart, {"apiVersion": "example.com/v1", "kind": "Thing",
                           "metadata": {"name": "t", "labels": {"b": "1", "a": "2"}},
                           "spec": {"zeta": 1.0, "alpha": None, "2": "x", "1": [{"b": 0.5, "a": {}}, None, 3]},
                           "data": {"k": []}, "status": None})
    python, reference = _both(build)
    assert _ordered(python) == _ordered(reference)


def test_a_duplicate_object_id_is_refused_as_cdk8s_refuses_it():
    chart = cdk.chart(cdk.new_app(), "t")
    k8s.KubeNamespace(chart, "Namespace._.a", metadata=k8s.ObjectMeta(name="a"))
    with pytest.raises(ValueError, match="There is already a Construct with name 'Namespace._.a'"):
        k8s.KubeNamespace(chart, "Namespace._.a", metadata=k8s.ObjectMeta(name="a"))


def test_builders_use_the_stand_ins():
    """A builder that imported cdk8s-plus-33 itself would hand a Node construct to a Python chart."""
    allowed = {"k8s.py", "cdk.py", "cdk8s_render.py"}   # the type checker's view; the reference rendering
    for f in (ROOT / "generator").rglob("*.py"):
        if f.name in allowed:
            continue
        for node in ast.walk(ast.parse(f.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
            assert not any(n.split(".")[0] in ("cdk8s", "cdk8s_plus_33") for n in names), \
                f"{f}: import the typed classes with `from generator.builders import k8s`"
