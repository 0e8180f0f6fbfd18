"""Every generated container runs as non-root, or the spec says that its image needs root
(`security: {runAsRoot: true}`). The tutorial's two helper images are covered too: the
fastdash client (its Dockerfile sets no USER) must be declared; Locust runs as its image's
own user, uid 1000."""
from __future__ import annotations

import pytest

from generator.kernel import demand, yamlio
from generator.kernel.catalog import gpudirect
from generator.kernel.errors import SpecError
from tests import helpers

EXAMPLES = sorted((helpers.ROOT / "examples").glob("*.yaml"))
SOURCES = ["fixture"] + [p.stem for p in EXAMPLES]


def _raw(source: str) -> dict:
    if source == "fixture":
        return helpers.fixture_raw()
    return helpers.example_raw(helpers.ROOT / "examples" / f"{source}.yaml")


def _declared_root(raw: dict) -> set[str]:
    """Names the spec itself declares as root: workloads and their helpers with runAsRoot."""
    out = set()
    for w in raw.get("workloads", []):
        if w.get("security", {}).get("runAsRoot"):
            out.add(w["name"])
        for block, default in (("client", "fastdash"), ("loadGenerator", "loadgenerator")):
            b = w.get(block)
            if b and b.get("security", {}).get("runAsRoot"):
                out.add(b.get("name", default))
    return out


GPUDIRECT_DAEMONS = {g.daemon.name for g in gpudirect.GPUDIRECT.values() if g.daemon}


def _templates(obj: dict):
    for ps in demand.podsets(obj):
        node = obj
        for part in ps.path:
            node = node[part]
        yield node


@pytest.mark.parametrize("source", SOURCES)
def test_every_pod_runs_as_non_root_or_is_declared_root(source):
    raw = _raw(source)
    declared = _declared_root(raw)
    tree = helpers.render(raw)
    seen = 0
    for path, text in tree.items():
        if not path.startswith("overlays/") or path.endswith("kustomization.yaml"):
            continue
        for obj in yamlio.load_all(text):
            for t in _templates(obj):
                seen += 1
                sc = t["spec"]["securityContext"]
                name = obj["metadata"]["name"]
                if sc.get("runAsNonRoot") is True:
                    assert isinstance(sc.get("runAsUser"), int) and sc["runAsUser"] > 0, (path, name)
                else:
                    # A root pod's name starts with the declaring workload's (its Deployment, JobSet, LWS).
                    assert any(name == d or name.startswith(d + "-") for d in declared), (source, path, name)
                for c in t["spec"]["containers"] + t["spec"].get("initContainers", []):
                    assert c["securityContext"]["allowPrivilegeEscalation"] is False, (path, c["name"])
                    if c["name"] in GPUDIRECT_DAEMONS:
                        # GKE's GPUDirect receive daemons run as root with their capabilities, as GKE's
                        # test workloads run them (tests/test_gpudirect.py compares them).
                        assert c["securityContext"]["runAsUser"] == 0, (path, c["name"])
                        continue
                    # TCPX: GKE's test workload adds IPC_LOCK to the GPU container; nothing else is added.
                    assert c["securityContext"]["capabilities"] in (
                        {"drop": ["ALL"]}, {"drop": ["ALL"], "add": ["IPC_LOCK"]}), (path, c["name"])
    assert seen or not raw.get("workloads")


def _t5(raw: dict) -> dict:
    return next(w for w in raw["workloads"] if w["kind"] == "t5-inference")


def test_the_fastdash_client_must_declare_root(tmp_path):
    raw = helpers.fixture_raw()
    del _t5(raw)["client"]["security"]
    with pytest.raises(SpecError) as e:
        helpers.render(raw)
    lines = [str(p) for p in e.value.problems]
    assert any("client.security" in line and "runs as root" in line for line in lines), lines


def test_the_fastdash_client_can_run_as_a_user_instead():
    raw = helpers.fixture_raw()
    _t5(raw)["client"]["security"] = {"runAsUser": 1001}
    tree = helpers.render(raw)
    (text,) = [t for p, t in tree.items() if p.endswith("/deployment_llm_fastdash.yaml")]
    sc = yamlio.load_strict(text)["spec"]["template"]["spec"]["securityContext"]
    assert (sc["runAsUser"], sc["runAsNonRoot"]) == (1001, True)


def test_locust_runs_as_its_image_user():
    tree = helpers.render(helpers.fixture_raw())
    (text,) = [t for p, t in tree.items() if p.endswith("/deployment_llm_loadgenerator.yaml")]
    sc = yamlio.load_strict(text)["spec"]["template"]["spec"]["securityContext"]
    assert (sc["runAsUser"], sc["runAsGroup"], sc["runAsNonRoot"]) == (1000, 1000, True)
