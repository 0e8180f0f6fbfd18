"""The device catalog: internal consistency, and documented facts written as
literals with their source beside them (the documentation is the oracle, not
the catalog). Where an upstream manifest in ../shared/reference states the
fact, the test reads it from there."""
import re
from decimal import Decimal

import pytest

from generator.kernel import catalog
from generator.kernel.catalog import TpuShape, node_labels
from tests import helpers

GPU_MACHINES = [(f, m) for f in catalog.GPU_FAMILIES.values() for m in f.machines]
TPU_MACHINES = [(g, m) for g in catalog.TPU_GENERATIONS.values() for m in g.machines]
CPU_MACHINES = [(c, m) for c in catalog.CPU_FAMILIES.values() for m in c.machines]
ACCELERATOR_MACHINE_NAMES = sorted(m.name for _, m in GPU_MACHINES + TPU_MACHINES)


# ---------------------------------------------------------------- consistency

def test_device_keys_and_accelerator_values_are_unique():
    keys = [*catalog.GPU_FAMILIES, *catalog.TPU_GENERATIONS]
    assert len(keys) == len(set(keys))
    values = [d.accelerator for d in (*catalog.GPU_FAMILIES.values(), *catalog.TPU_GENERATIONS.values())]
    assert len(values) == len(set(values))
    assert sorted(catalog.ACCELERATORS) == sorted(values)


def test_machine_names_are_unique_and_all_indexed():
    names = [m.name for _, m in GPU_MACHINES + TPU_MACHINES + CPU_MACHINES]
    assert len(names) == len(set(names))
    assert sorted(catalog.MACHINE_TYPES) == sorted(names)


@pytest.mark.parametrize("name", ACCELERATOR_MACHINE_NAMES)
def test_every_machine_resolves_to_its_accelerator(name):
    mt = catalog.machine(name)
    assert catalog.accelerator(mt.accelerator) is mt.device
    assert catalog.device(mt.device.key) is mt.device
    assert mt.name in {m.name for m in mt.device.machines}
    assert mt.accelerators > 0 and mt.vcpus > 0 and mt.memory_gb > 0


@pytest.mark.parametrize(("family", "machine"), GPU_MACHINES, ids=lambda x: getattr(x, "name", None) or x.key)
def test_gpu_machine_names_follow_their_series(family, machine):
    # Compute Engine names machine types <series>-<kind>-<size>; an A-series
    # "-<n>g" suffix is its GPU count. Catches a machine filed under the wrong family.
    assert machine.name.startswith(family.machine_family + "-")
    suffix = re.fullmatch(r"a\d-\w+-(\d+)g", machine.name)
    if suffix:
        assert int(suffix.group(1)) == machine.gpus


@pytest.mark.parametrize(("gen", "machine"), TPU_MACHINES, ids=lambda x: getattr(x, "name", None) or x.key)
def test_tpu_topologies_parse_to_the_generation_and_fill_whole_vms(gen, machine):
    # TPU machine types end in "-<chips>t" (ct6e-standard-4t: 4 chips per VM).
    assert machine.name.endswith(f"-{machine.chips}t")
    assert machine.topologies, f"{machine.name} has no topology"
    assert len(set(machine.topologies)) == len(machine.topologies)
    for shape in machine.topologies:
        assert catalog.TpuShape.parse(shape.text, gen.dims) == shape
        assert machine.vms(shape) * machine.chips == shape.chips
        assert shape.chips <= gen.max_chips


@pytest.mark.parametrize("gen", catalog.TPU_GENERATIONS.values(), ids=lambda g: g.key)
def test_every_generation_has_static_slicing_first(gen):
    assert gen.slicing[0] is gen.static
    assert gen.static.admission_check_controller is None
    assert (gen.cube is not None) == (gen.dims == 3)


def test_lookups_name_the_choices():
    with pytest.raises(KeyError, match=r"'g2-standard-5' is not a known machine type; choose one of .*g2-standard-4"):
        catalog.machine("g2-standard-5")
    with pytest.raises(KeyError, match=r"'nvidia-l5' is not a known GKE accelerator; choose one of .*nvidia-l4"):
        catalog.accelerator("nvidia-l5")
    with pytest.raises(KeyError, match=r"choose one of ct6e-standard-1t, ct6e-standard-4t, ct6e-standard-8t"):
        catalog.tpu_topologies("v6e", "ct5lp-hightpu-4t")
    with pytest.raises(KeyError, match="not a known TPU generation"):
        catalog.tpu_generation("nvidia-l4")
    with pytest.raises(KeyError, match="not a known GPU"):
        catalog.gpu_family("tpu7x")


def test_catalog_does_not_import_cdk8s():
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", "import sys, generator.kernel.catalog; print('cdk8s' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------- shapes

def test_shape_parse_and_measure():
    s = TpuShape.parse("4x4x8")
    assert s.dims == (4, 4, 8) and s.ndim == 3 and s.chips == 128 and s.text == "4x4x8"
    assert TpuShape.parse("2x4").chips == 8
    assert TpuShape.parse("16x16").vms(4) == 64


@pytest.mark.parametrize("text", ["", "4x", "x4", "0x4", "2x-2", "2x2.0", "four"])
def test_shape_refuses_what_is_not_a_topology(text):
    with pytest.raises(ValueError, match="is not a TPU topology"):
        TpuShape.parse(text)


def test_shape_dimensionality_check():
    assert TpuShape.parse("2x2x1", ndim=3).chips == 4
    with pytest.raises(ValueError, match=r"2x4 has 2 dimensions, this TPU needs 3 \(like 2x2x2\)"):
        TpuShape.parse("2x4", ndim=3)
    with pytest.raises(ValueError, match=r"4x4x4 has 3 dimensions, this TPU needs 2"):
        catalog.tpu_generation("v6e").shape("4x4x4")


def test_shape_vms_must_be_whole():
    assert TpuShape.parse("2x2").vms(4) == 1
    with pytest.raises(ValueError, match=r"1x2 \(2 chips\) is not whole VMs of 4 chips"):
        TpuShape.parse("1x2").vms(4)


def test_shape_tiling():
    cube = TpuShape.parse("4x4x4")
    assert TpuShape.parse("4x4x8").units(cube) == 2
    assert not TpuShape.parse("4x4x6").is_multiple_of(cube)
    assert not TpuShape.parse("4x4").is_multiple_of(cube)
    assert TpuShape.parse("2x2x4").fits_in(cube) and not TpuShape.parse("2x2x8").fits_in(cube)
    assert [s.text for s in catalog.tilings(cube, 2)] == ["4x4x4", "4x4x8"]
    assert [s.text for s in catalog.tilings(cube, 4)] == ["4x4x4", "4x4x8", "4x4x12", "4x4x16", "4x8x8"]


# ---------------------------------------------------------------- GPU facts

# Compute Engine "GPU machine types" (cloud.google.com/compute/docs/gpus), per
# series: vCPU count, instance memory (GB), GPU count, attached Local SSD (GiB).
@pytest.mark.parametrize(("name", "vcpus", "memory_gb", "gpus", "local_ssd"), [
    ("g2-standard-4", 4, 16, 1, None),          # G2 table
    ("g2-standard-24", 24, 96, 2, None),
    ("g2-standard-32", 32, 128, 1, None),
    ("g2-standard-96", 96, 384, 8, None),
    ("a2-highgpu-1g", 12, 85, 1, None),         # A2 Standard table
    ("a2-megagpu-16g", 96, 1360, 16, None),
    ("a2-ultragpu-8g", 96, 1360, 8, 3000),      # A2 Ultra table
    ("a3-highgpu-1g", 26, 234, 1, 750),         # A3 High table
    ("a3-highgpu-8g", 208, 1872, 8, 6000),
    ("a3-megagpu-8g", 208, 1872, 8, 6000),      # A3 Mega table
    ("a3-ultragpu-8g", 224, 2952, 8, 12000),    # A3 Ultra table
    ("a4-highgpu-8g", 224, 3968, 8, 12000),     # A4 table
    # Compute Engine "Arm VMs on Compute": A4X "up to 140 vCPUs and 884 GB of memory", four GPUs,
    # "12,000 GiB of Local SSD".
    ("a4x-highgpu-4g", 140, 884, 4, 12000),
    # GKE's cluster autoscaler machine table (NewMachineTypeInfo(name, vCPUs, GB), withGpuOverride):
    ("g4-standard-48", 48, 180, 1, None),
    ("g4-standard-384", 384, 1440, 8, None),
])
def test_gpu_machine_types_as_published(name, vcpus, memory_gb, gpus, local_ssd):
    mt = catalog.machine(name)
    assert (mt.vcpus, mt.memory_gb, mt.accelerators) == (vcpus, memory_gb, gpus)
    spec = next(m for m in mt.device.machines if m.name == name)
    assert spec.local_ssd_gib == local_ssd


def test_g2_local_ssd_is_optional_with_published_maximum():
    # G2 table, "Max Local SSD supported (GiB)": g2-standard-48 1,500; g2-standard-96 3,000.
    l4 = catalog.device("l4")
    assert {m.name: m.max_local_ssd_gib for m in l4.machines}["g2-standard-48"] == 1500
    assert {m.name: m.max_local_ssd_gib for m in l4.machines}["g2-standard-96"] == 3000


def test_gpu_memory_per_gpu():
    # Compute Engine "GPU machine types", general comparison chart.
    assert catalog.accelerator("nvidia-l4").gpu_memory_gb == 24            # 24 GB GDDR6
    assert catalog.accelerator("nvidia-tesla-a100").gpu_memory_gb == 40    # 40 GB HBM2
    assert catalog.accelerator("nvidia-a100-80gb").gpu_memory_gb == 80     # 80 GB HBM2e
    assert catalog.accelerator("nvidia-h100-80gb").gpu_memory_gb == 80     # 80 GB HBM3
    assert catalog.accelerator("nvidia-h200-141gb").gpu_memory_gb == 141   # 141 GB HBM3e
    assert catalog.accelerator("nvidia-b200").gpu_memory_gb == 180         # 180 GB HBM3e


def test_new_gpu_labels():
    # GKE's A4X installer (container-engine-accelerators gpudirect-rdma/nccl-rdma-installer-a4x.yaml) selects
    # nvidia-gb200 nodes; GKE's cluster autoscaler: NvidiaRTXPro6000 = "nvidia-rtx-pro-6000".
    (ds,) = helpers.load_reference("container-engine-accelerators@992db81/gpudirect-rdma/nccl-rdma-installer-a4x.yaml")
    terms = ds["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"]
    assert catalog.machine("a4x-highgpu-4g").accelerator in terms[0]["values"]
    assert catalog.machine("g4-standard-96").accelerator == "nvidia-rtx-pro-6000"
    assert catalog.accelerator("nvidia-gb200").gpu_memory_gb == 186   # Arm VMs: "186 GB memory per GPU"


def test_v4_topologies():
    # Cloud TPU v4: "TPU Pod size 4096 chips"; xpk's v4 default topologies include 2x2x1 (v4-8) up to 8x16x16.
    tops = catalog.tpu_topologies("v4", "ct4p-hightpu-4t")
    for t in ("2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4", "4x4x8", "4x8x8", "8x8x8", "8x8x16", "8x16x16"):
        assert TpuShape.parse(t) in tops
    assert TpuShape.parse("16x16x32") not in tops     # 8192 chips: more than a v4 Pod


def test_autopilot_gpu_types():
    # GKE "Deploy GPU workloads in Autopilot", allowed cloud.google.com/gke-accelerator
    # values (the ones with machine types in this catalog).
    for value, model in [("nvidia-b200", "B200"), ("nvidia-h200-141gb", "H200"),
                         ("nvidia-h100-mega-80gb", "H100 Mega"), ("nvidia-h100-80gb", "H100"),
                         ("nvidia-a100-80gb", "A100 80GB"), ("nvidia-tesla-a100", "A100 40GB"),
                         ("nvidia-l4", "L4")]:
        family = catalog.gpu_family(value)
        assert family.autopilot and model in family.model


def test_gpu_labels_match_the_tutorial_manifests():
    # GKE tutorial "mixed AI/ML training and inference": the fine-tuning Job
    # selects its L4 nodes by the GKE accelerator label.
    (job,) = [o for o in helpers.load_reference(
        "kubernetes-engine-samples/ai-ml/mix-train-and-inference/workloads/fine-tune-l4.yaml") if o["kind"] == "Job"]
    pod = job["spec"]["template"]["spec"]
    (key, value), = pod["nodeSelector"].items()
    family = catalog.accelerator(value)
    assert key == family.node_label == node_labels.GPU_ACCELERATOR_LABEL
    assert family.resource in pod["containers"][0]["resources"]["limits"]


def test_gpu_taint():
    # GKE "Run GPUs in GKE Standard node pools": Key nvidia.com/gpu, Value present, Effect NoSchedule.
    taint = catalog.device("h100-80gb").taint
    assert (taint.key, taint.value, taint.effect) == ("nvidia.com/gpu", "present", "NoSchedule")


# ---------------------------------------------------------------- TPU facts

@pytest.mark.parametrize(("name", "chips", "vcpus", "memory_gb"), [
    ("ct5lp-hightpu-1t", 1, 24, 48),      # Cloud TPU v5e, VM types table
    ("ct5lp-hightpu-4t", 4, 112, 192),
    ("ct5lp-hightpu-8t", 8, 224, 384),
    ("ct5p-hightpu-4t", 4, 208, 448),     # Compute Engine TPU machines, TPU v5p table
    ("ct6e-standard-1t", 1, 44, 176),     # Cloud TPU v6e, VM types table
    ("ct6e-standard-4t", 4, 180, 720),
    ("ct6e-standard-8t", 8, 360, 1440),
    ("tpu7x-standard-4t", 4, 224, 960),   # Cloud TPU TPU7x: 224 vCPUs, 960 GB per VM
    ("ct4p-hightpu-4t", 4, 240, 407),     # GKE's cluster autoscaler: NewMachineTypeInfo("ct4p-hightpu-4t", 240, 407)
    ("tpu7x-standard-1t", 1, 56, 248),    # GKE's cluster autoscaler: NewMachineTypeInfo("tpu7x-standard-1t", 56, 248)
])
def test_tpu_machine_types_as_published(name, chips, vcpus, memory_gb):
    mt = catalog.machine(name)
    assert (mt.accelerators, mt.vcpus, mt.memory_gb) == (chips, vcpus, memory_gb)


def test_tpu_generation_facts():
    # Cloud TPU pages: v5e and v6e chips have one TensorCore, v5p and TPU7x two;
    # JAX sees a v5p chip as one (MegaCore) device and a TPU7x chip as two.
    got = {k: (g.accelerator, g.dims, g.tensorcores_per_chip, g.jax_devices_per_chip)
           for k, g in catalog.TPU_GENERATIONS.items()}
    assert got == {
        "v4": ("tpu-v4-podslice", 3, 2, 1),      # Cloud TPU v4: two TensorCores; xpk: tpu-v4-podslice
        "v5e": ("tpu-v5-lite-podslice", 2, 1, 1),
        "v5p": ("tpu-v5p-slice", 3, 2, 1),
        "v6e": ("tpu-v6e-slice", 2, 1, 1),
        "tpu7x": ("tpu7x", 3, 2, 2),
    }


def test_v6e_supported_configurations():
    # Cloud TPU v6e "supported configurations": topology, VMs, machine type.
    v6e = catalog.device("v6e")
    rows = [("1x1", 1, "ct6e-standard-1t"), ("2x2", 1, "ct6e-standard-4t"), ("2x4", 1, "ct6e-standard-8t"),
            ("2x4", 2, "ct6e-standard-4t"), ("4x4", 4, "ct6e-standard-4t"), ("4x8", 8, "ct6e-standard-4t"),
            ("8x8", 16, "ct6e-standard-4t"), ("8x16", 32, "ct6e-standard-4t"), ("16x16", 64, "ct6e-standard-4t")]
    for topology, vms, machine_type in rows:
        shape = TpuShape.parse(topology)
        assert shape in catalog.tpu_topologies("v6e", machine_type)
        assert v6e.machine(machine_type).vms(shape) == vms
    assert [m.name for m in v6e.machines_for(TpuShape.parse("2x4"))] == ["ct6e-standard-4t", "ct6e-standard-8t"]
    assert not v6e.machines_for(TpuShape.parse("4x16"))


def test_v5e_node_pool_sizes():
    # About TPUs in GKE: ct5lp-hightpu-4t with a 2x4 topology is two nodes of four
    # chips; with 16x16 the node pool "always has either 64 nodes or zero nodes".
    four = catalog.device("v5e").machine("ct5lp-hightpu-4t")
    assert four.vms(TpuShape.parse("2x4")) == 2
    assert four.vms(TpuShape.parse("16x16")) == 64
    # Cloud TPU v5e: 8 chips serve from one ct5lp-hightpu-8t VM; 1x1 only on the 1-chip VM.
    assert catalog.tpu_topologies("v5e", "ct5lp-hightpu-8t") == (TpuShape.parse("2x4"),)
    assert catalog.tpu_topologies("tpu-v5-lite-podslice", "ct5lp-hightpu-1t") == (TpuShape.parse("1x1"),)


@pytest.mark.parametrize(("topology", "allowed"), [
    ("2x2x1", True), ("2x2x2", True), ("2x2x4", True), ("2x4x4", True),   # "forms such as"
    ("4x4x4", True), ("4x4x8", True), ("8x8x8", True), ("16x16x24", True),
    ("8x4x4", False),                  # "must keep the A <= B <= C pattern"
    ("4x4x6", False), ("2x4x8", False),  # larger than a cube: "multiples of four"
    ("8x8x96", True),                  # 6144 chips, 96 cubes: the largest v5p job
    ("8x8x100", False),                # 6400 chips, just past it
])
def test_v5p_topology_rule(topology, allowed):
    # About TPUs in GKE, Topology (3-tuples for v5p); Cloud TPU v5p: "The largest job
    # that can be scheduled is a 96 cube (6144 chip) job".
    assert (TpuShape.parse(topology) in catalog.tpu_topologies("v5p", "ct5p-hightpu-4t")) is allowed


@pytest.mark.parametrize(("topology", "allowed"), [
    ("4x4x576", True),    # 9216 chips: "slices to scale up to 9216 chips"
    ("4x4x580", False),   # 9280 chips, just past it
    ("16x24x24", True),
    ("2x2x1", True),
])
def test_tpu7x_topology_limit(topology, allowed):
    assert (TpuShape.parse(topology) in catalog.tpu_topologies("tpu7x", "tpu7x-standard-4t")) is allowed


def test_tpu7x_single_host_machine():
    # xpk system_characteristics.py: tpu7x-standard-1t, supported_topologies=['1x1x1'];
    # compute_chips_per_vm: 1 chip when the topology's product is 1.
    tpu7x = catalog.device("tpu7x")
    assert catalog.tpu_topologies("tpu7x", "tpu7x-standard-1t") == (TpuShape.parse("1x1x1"),)
    assert tpu7x.machine("tpu7x-standard-1t").vms(TpuShape.parse("1x1x1")) == 1
    assert [m.name for m in tpu7x.machines_for(TpuShape.parse("1x1x1"))] == ["tpu7x-standard-1t"]
    assert [m.name for m in tpu7x.machines_for(TpuShape.parse("2x2x1"))] == ["tpu7x-standard-4t"]
    # Dynamic slices are cut from the codelab's tpu7x-standard-4t cubes, never the 1-chip VM.
    assert tpu7x.dynamic_machine().name == "tpu7x-standard-4t"


def test_static_slice_node_labels():
    # GKE's TPU node selectors: cloud.google.com/gke-tpu-accelerator and
    # cloud.google.com/gke-tpu-topology (About node pool auto-creation, TPU example).
    v6e = catalog.device("v6e")
    assert v6e.static.node_labels(v6e, TpuShape.parse("4x4")) == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "4x4",
    }


# ---------------------------------------------------------------- TPU7x dynamic slicing

CODELAB = "devrel-demos/ai-ml/dynamic-slicing"


def _codelab(kind, file="kueue-resources.yaml"):
    return [o for o in helpers.load_reference(f"{CODELAB}/{file}") if o["kind"] == kind]


def test_dynamic_slicing_matches_the_codelab():
    dyn = catalog.device("tpu7x").dynamic
    (topology,) = _codelab("Topology")
    assert dyn.topology_levels(subslicing=True) == [lvl["nodeLabel"] for lvl in topology["spec"]["levels"]]
    (check,) = _codelab("AdmissionCheck")
    assert dyn.admission_check_controller == check["spec"]["controllerName"]
    (flavor,) = _codelab("ResourceFlavor")
    assert catalog.device("tpu7x").node_labels() == flavor["spec"]["nodeLabels"]
    (jobset,) = _codelab("JobSet", "kueue-jobset-simple-superslicing.yaml")
    pod = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert dyn.slice_topology_annotation in pod["metadata"]["annotations"]
    assert {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"} in pod["spec"]["tolerations"]
    assert catalog.device("tpu7x").taint.toleration() == {"key": "google.com/tpu", "operator": "Exists",
                                                          "effect": "NoSchedule"}


def test_dynamic_slicing_shape_rules():
    dyn = catalog.TPU7X_DYNAMIC
    shape = TpuShape.parse
    assert dyn.kind(shape("2x2x2")) == "subslice"
    assert dyn.kind(shape("4x4x4")) == "superslice"
    assert dyn.kind(shape("4x4x8")) == "superslice" and dyn.cubes(shape("4x4x8")) == 2
    assert dyn.kind(shape("8x4x4")) is None      # the controller wants 4x4x8
    assert dyn.kind(shape("4x4x2")) is None      # neither a partition nor whole cubes
    assert [s.text for s in dyn.whole_cube_shapes(2)] == ["4x4x4", "4x4x8"]
    assert dyn.topology_levels(subslicing=False) == [
        "cloud.google.com/gce-topology-block", "cloud.google.com/gke-tpu-partition-4x4x4-id", "kubernetes.io/hostname"]
    assert catalog.device("v5p").dynamic is None and catalog.device("v5e").dynamic is None


def test_v6e_sub_slicing_as_xpk_has_it():
    # xpk system_characteristics.py: SUB_SLICING_TOPOLOGIES = ['2x4', '4x4', '4x8', '8x8', '8x16',
    # '16x16'] on ct6e-standard-4t; super-slicing is a TPU7x feature only.
    sub = catalog.device("v6e").dynamic
    shape = TpuShape.parse
    assert sub is catalog.V6E_SUBSLICING
    assert [s.text for s in sub.subslice_shapes] == ["2x4", "4x4", "4x8", "8x8", "8x16", "16x16"]
    assert catalog.device("v6e").dynamic_machine().name == "ct6e-standard-4t"
    assert sub.kind(shape("4x4")) == "subslice" and sub.kind(shape("16x16")) == "subslice"
    assert sub.kind(shape("16x32")) is None and sub.kind(shape("2x2")) is None and sub.kind(shape("16x8")) is None
    # xpk scheduling_test.py test_create_sub_slicing_annotations_returns_valid_annotations:
    # 'kueue.x-k8s.io/podset-required-topology: "cloud.google.com/gke-tpu-slice-2x4-id"',
    # 'cloud.google.com/gke-tpu-slice-topology: 2x4'.
    assert sub.required_topology_annotation
    assert sub.partition_label(shape("2x4")) == "cloud.google.com/gke-tpu-slice-2x4-id"
    assert sub.slice_topology_annotation == "cloud.google.com/gke-tpu-slice-topology"
    # xpk kueue_manager_test.py test_configure_generates_correct_manifest_with_sub_slicing
    # (cluster system v6e-8x8): the Topology's levels.
    assert sub.topology_levels(subslicing=True, top=shape("8x8")) == [
        "cloud.google.com/gke-tpu-slice-8x8-id",
        "cloud.google.com/gke-tpu-slice-4x8-id",
        "cloud.google.com/gke-tpu-slice-4x4-id",
        "cloud.google.com/gke-tpu-slice-2x4-id",
        "kubernetes.io/hostname",
    ]
    # The same rule (kueue_manager.py: SUB_SLICING_TOPOLOGIES contained in the cluster's
    # topology, by product, largest first) for the whole 16x16 pool the profile reserves.
    assert sub.topology_levels(subslicing=True) == [
        f"cloud.google.com/gke-tpu-slice-{t}-id" for t in ("16x16", "8x16", "8x8", "4x8", "4x4", "2x4")
    ] + ["kubernetes.io/hostname"]
    # No AdmissionCheck (xpk adds accelerator.gke.io/slice for super-slicing only); the flavor
    # selects the accelerator and the pool topology (kueue_manager.py __build_template_context).
    assert sub.admission_check_controller is None
    assert sub.node_labels(catalog.device("v6e")) == {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
                                                      "cloud.google.com/gke-tpu-topology": "16x16"}


# ---------------------------------------------------------------- CPU machine families

@pytest.mark.parametrize(("family", "machine"), CPU_MACHINES, ids=lambda x: getattr(x, "name", None) or x.key)
def test_cpu_machine_names_follow_their_family(family, machine):
    # Compute Engine names predefined standard types <series>-standard-<vCPUs>.
    # Catches a row filed under the wrong family or a vCPU count mistyped.
    assert machine.name == f"{family.key}-{machine.vcpus}"
    assert family.machine_series.lower() + "-standard" == family.key


@pytest.mark.parametrize("name", sorted(m.name for _, m in CPU_MACHINES))
def test_cpu_machines_carry_no_accelerator(name):
    mt = catalog.machine(name)
    assert (mt.accelerators, mt.accelerator, mt.resource) == (0, None, None)
    assert mt.device.kind == "cpu" and mt.device.node_labels() == {} and mt.device.taint is None
    assert mt.vcpus > 0 and mt.memory_gb > 0
    assert catalog.cpu_family(mt.device.key) is mt.device


def test_cpu_families_are_not_accelerator_devices():
    assert not set(catalog.CPU_FAMILIES) & set(catalog.DEVICES)
    assert None not in catalog.ACCELERATORS
    with pytest.raises(KeyError, match=r"'e2-highmem' is not a known CPU machine family; choose one of c3-standard, "
                                       r"e2-standard, n1-standard, n2-standard, n2d-standard"):
        catalog.cpu_family("e2-highmem")


@pytest.mark.parametrize(("key", "gib_per_vcpu"), [
    ("e2-standard", 4),        # VM instance pricing, E2: "Standard machine types have 4 GiB of memory per vCPU."
    ("n2-standard", 4),        # N2: same sentence
    ("n2d-standard", 4),       # N2D: same sentence
    ("n1-standard", "3.75"),   # N1: "Standard machine types have 3.75 GiB of memory per vCPU."
])
def test_cpu_memory_per_vcpu(key, gib_per_vcpu):
    for m in catalog.cpu_family(key).machines:
        assert m.memory_gb == m.vcpus * Decimal(gib_per_vcpu), m.name


# Compute Engine "VM instance pricing", standard machine types per series
# (machine type, virtual CPUs, memory GiB).
@pytest.mark.parametrize(("name", "vcpus", "memory_gib"), [
    ("e2-standard-2", 2, 8),            # E2 (also the general-purpose page's E2 standard table)
    ("e2-standard-32", 32, 128),
    ("n2-standard-2", 2, 8),            # N2
    ("n2-standard-80", 80, 320),
    ("n2-standard-128", 128, 512),
    ("n2d-standard-224", 224, 896),     # N2D
    ("c3-standard-4", 4, 16),           # C3
    ("c3-standard-22", 22, 88),
    ("c3-standard-176", 176, 704),
    ("n1-standard-1", 1, "3.75"),       # N1
    ("n1-standard-2", 2, "7.5"),
    ("n1-standard-96", 96, 360),
])
def test_cpu_machine_types_as_published(name, vcpus, memory_gib):
    mt = catalog.machine(name)
    assert (mt.vcpus, mt.memory_gb) == (vcpus, Decimal(memory_gib))


def test_cpu_families_list_the_published_sizes():
    # VM instance pricing: every row of each "standard machine types" table
    # (c3-standard-192-metal left out: bare metal, GKE support not read).
    sizes = {k: [m.vcpus for m in f.machines] for k, f in catalog.CPU_FAMILIES.items()}
    assert sizes == {
        "e2-standard": [2, 4, 8, 16, 32],
        "n2-standard": [2, 4, 8, 16, 32, 48, 64, 80, 96, 128],
        "n2d-standard": [2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224],
        "c3-standard": [4, 8, 22, 44, 88, 176],
        "n1-standard": [1, 2, 4, 8, 16, 32, 64, 96],
    }


def test_n2_machine_family_label():
    # GKE "About node pool auto-creation": "If you request the N2 machine series, GKE
    # adds the cloud.google.com/machine-family: n2 node label to each of the nodes."
    assert catalog.cpu_family("n2-standard").machine_family == "n2"


# ---------------------------------------------------------------- capacity labels

def test_provisioning_labels_match_the_cohort_sample():
    # kubernetes-engine-samples batch/kueue-cohort/flavors.yaml: on-demand and spot
    # flavors select cloud.google.com/gke-provisioning, "applied automatically by GKE".
    flavors = {o["metadata"]["name"]: o["spec"]["nodeLabels"]
               for o in helpers.load_reference("kubernetes-engine-samples/batch/kueue-cohort/flavors.yaml")}
    assert flavors == {"on-demand": {node_labels.PROVISIONING_LABEL: node_labels.PROVISIONING_STANDARD},
                       "spot": {node_labels.PROVISIONING_LABEL: node_labels.PROVISIONING_SPOT}}
    assert (node_labels.SPOT_LABEL, node_labels.SPOT_VALUE) == ("cloud.google.com/gke-spot", "true")
