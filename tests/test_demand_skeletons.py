"""The spec's fit checks read each kind's skeleton of what its builder emits
(Workload.demand_objects) with the node selector the builders put on the pods
(model/checks.emitted_selector): counted without cdk8s, so a spec is checked
before Node starts. This test holds every skeleton equal to the objects the
builders actually emit, for every workload of every profile of every fixture
spec and example spec (together they use every kind): the same Workloads (kind, name, copies), the same pod sets (name, count,
partial-admission minimum) and the same per-pod requests by the demand module,
and the emitted node selector. Dropping a request from a skeleton, or a pod
count, fails it."""
from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from generator import model as specmod
from generator.builders import tree
from generator.kernel import demand, paths
from generator.model import checks
from generator.model.check_context import CheckContext
from tests import helpers

# Every fixture spec, and the example specs for the kinds no fixture uses (training, manifest).
FIXTURES = sorted(helpers.FIXTURES.glob("*.yaml")) + sorted((paths.ROOT / "examples").glob("*.yaml"))


@cache
def _rendered(path: Path):
    s = specmod.load(path)
    return s, tree.render(s)[1]


def _cases():
    for path in FIXTURES:
        s = specmod.load(path)
        for prof in s.profiles:
            for w in s.workloads_for(prof):
                yield pytest.param(path, prof, w.name, id=f"{path.stem}-{prof}-{w.name}")


def _shape(obj: dict, copies: int | None = None) -> tuple:
    d = demand.of(obj)
    sets = tuple((ps.name, ps.count, ps.min_count, tuple(sorted(ps.requests.items()))) for ps in d.podsets)
    return d.kind, d.name, d.copies if copies is None else copies, sets


def _check(path: Path, profile: str, workload: str) -> None:
    s, emitted = _rendered(path)
    prof = s.profiles[profile]
    w = next(w for w in s.workloads_for(profile) if w.name == workload)
    built = {(o["kind"], o["metadata"]["name"]): o for o in emitted[f"overlays/{profile}"] + emitted["base"]
             if demand.is_workload(o)}
    # An HPA's target: the skeleton counts its Workloads at maxReplicas, what a scale-up asks.
    hpa = {(o["spec"]["scaleTargetRef"]["kind"], o["spec"]["scaleTargetRef"]["name"]): o["spec"]["maxReplicas"]
           for o in emitted[f"overlays/{profile}"] if o["kind"] == "HorizontalPodAutoscaler"}
    skeletons = w.demand_objects(CheckContext(s, prof))
    assert skeletons, f"{w.kind} {w.name}: no skeleton, so the fit checks see nothing"
    selector = checks.emitted_selector(w, prof, s)
    for sk in skeletons:
        key = (sk["kind"], sk["metadata"]["name"])
        assert key in built, f"{key} is not among the emitted objects"
        assert _shape(sk) == _shape(built[key], hpa.get(key))
        for ps in demand.of(built[key]).podsets:
            emitted_selector = ps.spec.get("nodeSelector") or {}
            assert {k: emitted_selector.get(k) for k in selector} == selector, (key, ps.name)


@pytest.mark.slow  # synthesizes the fixture specs (cdk8s, Node)
@pytest.mark.parametrize("path, profile, workload", list(_cases()))
def test_each_skeleton_is_what_the_builder_emits(path, profile, workload):
    _check(path, profile, workload)


def test_every_kind_is_compared():
    from generator.model.kinds import KINDS
    used = {w.kind for path in FIXTURES for w in specmod.load(path).workloads}
    assert used == set(KINDS)


@pytest.mark.slow
def test_a_skeleton_without_cpu_and_memory_fails_the_comparison(monkeypatch):
    """The issue's mutation: the fine-tuning skeleton drops its CPU and memory requests."""
    from generator.model.kinds import finetune
    real = finetune.Finetune.demand_objects

    def mutated(self, ctx):
        objs = real(self, ctx)
        for c in objs[0]["spec"]["template"]["spec"]["containers"]:
            c["resources"]["requests"] = {r: v for r, v in c["resources"]["requests"].items()
                                          if r not in ("cpu", "memory")}
        return objs

    _check(helpers.FIXTURE_SPEC, "l4-standard", "finetune-gemma-l4")   # holds as shipped
    monkeypatch.setattr(finetune.Finetune, "demand_objects", mutated)
    with pytest.raises(AssertionError):
        _check(helpers.FIXTURE_SPEC, "l4-standard", "finetune-gemma-l4")
