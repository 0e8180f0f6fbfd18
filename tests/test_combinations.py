"""Every accelerator of the device catalog x slicing mode x GKE platform, fed to synth: each
combination is built or refused with plain one-line problems, never an internal error
(issue: a TPU on Autopilot stopped synth with an AssertionError, dynamic slicing of a
non-TPU7x accelerator with a ValueError)."""
from __future__ import annotations

import copy

import pytest

from generator import model as specmod
from generator.builders import tree
from generator.kernel import catalog
from generator.kernel.errors import SpecError

BASE = {
    "specVersion": 1, "name": "combo", "namespaces": [{"name": "ml"}],
    "priorityTiers": {"low": {"priorityClass": {"name": "low", "value": 10},
                              "workloadPriorityClass": {"name": "low", "value": 10}}},
    "images": {"img": {"repository": "us-docker.pkg.dev/p/r/img", "tag": "1.0"}},
    "queues": [{"clusterQueue": "cq", "resourceFlavor": "rf", "profiles": ["p"],
                "localQueues": [{"name": "lq", "namespace": "ml"}]}],
}
VALUES = {"projectId": "example-project", "registry": "us-docker.pkg.dev/p/r", "modelBucket": "bucket-x",
          "hfTokenSecret": "hf"}
REQUESTS = {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi"}
COMBOS = [(a, plat, slicing) for a in sorted(catalog.ACCELERATORS) for plat in ("standard", "autopilot")
          for slicing in (None, "subslice", "superslice")]


def _profile(accel: str, plat: str, slicing: str | None) -> tuple[dict, str | None]:
    """The profile, and the static TPU topology of its pool (if any)."""
    prof: dict = {"platform": plat, "accelerator": accel, "values": VALUES}
    if slicing:
        prof["tpu"] = {"slicing": slicing, "reservation": {"cubes": 1}}
        return prof, None
    if plat == "autopilot":
        prof["budget"] = {"cpu": "100", "memory": "400Gi", "ephemeral-storage": "100Gi", "nvidia.com/gpu": 8}
        return prof, None
    m = next((m for m in catalog.MACHINE_TYPES.values() if m.accelerator == accel), None)
    if m is None:
        # GPUs attached by count (T4 on N1): an N1 machine type of 8 vCPUs or more, with `gpus`.
        family = catalog.ACCELERATORS[accel]
        assert isinstance(family, catalog.GpuFamily) and family.attaches_to, accel
        series = family.attaches_to
        m = next(m for m in catalog.MACHINE_TYPES.values()
                 if getattr(m.device, "machine_series", None) == series and m.vcpus >= 8)
        del prof["accelerator"]
        prof["nodePool"] = {"machineType": m.name, "gpus": 1, "nodes": 4}
        return prof, None
    pool: dict = {"machineType": m.name, "nodes": 4}
    topology = None
    if catalog.ACCELERATORS[accel].kind == "tpu":
        topology = pool["topology"] = catalog.tpu_generation(accel).machine(m.name).topologies[0].text
    del prof["accelerator"]
    prof["nodePool"] = pool
    return prof, topology


def _workloads(accel: str, slicing: str | None, topology: str | None) -> list[dict]:
    common = {"profiles": ["p"], "namespace": "ml", "queue": "lq", "priority": "low", "image": "img"}
    if catalog.ACCELERATORS[accel].kind == "tpu":
        shape = "2x2x2" if slicing else (topology or "2x2")
        return [{"name": "w", "kind": "tpu-jobset", **common, "shape": shape, "slices": 1, "resources": REQUESTS},
                {"name": "t", "kind": "training", **common, "launcher": "jax", "module": "train",
                 "tpu": {"shape": shape}, "resources": REQUESTS, "security": {"runAsUser": 1000}}]
    return [{"name": "w", "kind": "finetune", **common, "model": "m", "dataset": "d", "nodes": 1, "gpusPerNode": 1,
             "resources": REQUESTS},
            {"name": "t", "kind": "training", **common, "launcher": "torchrun", "script": "train.py",
             "nodes": 2, "gpusPerNode": 1, "resources": REQUESTS, "security": {"runAsUser": 1000}}]


@pytest.mark.parametrize(("accel", "plat", "slicing"), COMBOS)
def test_every_combination_is_built_or_refused_in_plain_lines(accel, plat, slicing):
    prof, topology = _profile(accel, plat, slicing)
    raw = copy.deepcopy(BASE)
    raw["profiles"] = {"p": prof}
    raw["workloads"] = _workloads(accel, slicing, topology)
    # What GKE runs is built: GPUs on Standard pools and on Autopilot where it offers them
    # (GKE "Deploy GPU workloads in Autopilot" lists no GB200 or RTX PRO 6000), TPUs on static
    # pools and TPU7x sub-slices; the rest is refused.
    device = catalog.ACCELERATORS[accel]
    runs = slicing is None and (plat == "standard" or (device.kind == "gpu" and bool(device.autopilot))) \
        or (accel == "tpu7x" and plat == "standard" and slicing == "subslice")
    try:
        tree.build(specmod.from_dict(raw, "combo.yaml"))
    except SpecError as e:
        lines = str(e).splitlines()
        assert lines and all(line.startswith("combo.yaml: ") for line in lines), lines
        assert not runs, lines
    else:
        assert runs


def test_tpu_on_autopilot_is_refused_in_one_line():
    prof, _ = _profile("tpu-v6e-slice", "autopilot", None)
    raw = copy.deepcopy(BASE)
    raw["profiles"] = {"p": prof}
    with pytest.raises(SpecError) as e:
        specmod.from_dict(raw, "combo.yaml")
    assert "combo.yaml: profiles.p.accelerator: tpu-v6e-slice is a TPU" in str(e.value)


def test_dynamic_slicing_of_a_static_generation_is_refused_not_crashed():
    prof, _ = _profile("tpu-v5p-slice", "standard", "subslice")
    raw = copy.deepcopy(BASE)
    raw["profiles"] = {"p": prof}
    raw["workloads"] = _workloads("tpu-v5p-slice", "subslice", None)[:1]
    with pytest.raises(SpecError) as e:
        specmod.from_dict(raw, "combo.yaml")
    # TPU7x (GKE's slice controller) and v6e (xpk sub-slicing) are the catalog's dynamic slicing modes.
    assert "sliced dynamically, which only tpu-v6e-slice and tpu7x offer" in str(e.value)
