"""TPU generations on GKE, keyed by device type, each built from a few
parameters as xpk builds its table (AI-Hypercomputer/xpk
system_characteristics.py, read as a model of the shape, not copied).

2-D generations list their node-pool topologies per machine type, as the
Cloud TPU docs do. 3-D generations follow GKE's rule ("About TPUs in GKE",
Topology): below one cube, the listed small shapes; from one 4x4x4 cube up,
every side a multiple of four, A <= B <= C, up to the generation's largest slice.

A machine type of a known generation is one _machine(...) line."""
from __future__ import annotations

from .shape import TpuShape, tilings
from .sources import (
    DYNAMIC_SLICING_CODELAB,
    GKE_AUTOSCALER_MACHINES,
    GKE_TPU_IRONWOOD,
    GKE_TPUS,
    TPU_7X,
    TPU_MACHINES,
    TPU_V4,
    TPU_V5E,
    TPU_V5P,
    TPU_V6E,
    XPK,
    Source,
)
from .types import DynamicSlicing, Slicing, StaticSlicing, TpuGeneration, TpuMachine

CUBE = TpuShape((4, 4, 4))   # GKE: About TPUs in GKE: "TPU cube: a 4x4x4 topology"
STATIC = StaticSlicing()


def _shapes(*texts: str) -> tuple[TpuShape, ...]:
    return tuple(TpuShape.parse(t) for t in texts)


def cube_rule(below_cube: tuple[TpuShape, ...], max_chips: int) -> tuple[TpuShape, ...]:
    """GKE's 3-D node-pool topologies: the small shapes, then whole cubes with
    sides in non-decreasing order, up to max_chips."""
    return below_cube + tuple(tilings(CUBE, max_chips // CUBE.chips))


def _machine(name: str, chips: int, vcpus: int, memory_gb: int,
             topologies: tuple[TpuShape, ...]) -> TpuMachine:
    return TpuMachine(name, chips, vcpus, memory_gb, topologies)


# Below one cube, 3-D: GKE: About TPUs in GKE ("topology forms such as 2x2x2,
# 2x2x4, or 2x4x4"); 2x2x1 (4 chips, one host) from Cloud TPU v5p's table.
# xpk lists the same four for v5p and TPU7x.
_SMALL_3D = _shapes("2x2x1", "2x2x2", "2x2x4", "2x4x4")

# TPU7x dynamic slicing, as the codelab's manifests use it: Topology levels
# cloud.google.com/gce-topology-block, cloud.google.com/gke-tpu-partition-<shape>-id
# for 4x4x4 and each sub-slice shape, kubernetes.io/hostname; AdmissionCheck
# controllerName accelerator.gke.io/slice; pod templates annotated with
# cloud.google.com/gke-tpu-slice-topology; LWS exclusive topology cloud.google.com/gke-tpu-slice.
TPU7X_DYNAMIC = DynamicSlicing(
    cube=CUBE,
    subslice_shapes=_shapes("2x2x1", "2x2x2", "2x2x4", "2x4x4"),
    partition_label_template="cloud.google.com/gke-tpu-partition-{shape}-id",
    block_label="cloud.google.com/gce-topology-block",
    slice_label="cloud.google.com/gke-tpu-slice",
    slice_topology_annotation="cloud.google.com/gke-tpu-slice-topology",
    admission_check_controller="accelerator.gke.io/slice",
    # The codelab's reservation and node pools are tpu7x-standard-4t (16 VMs a cube).
    machine_type="tpu7x-standard-4t",
)

# v6e sub-slicing as xpk implements it (cluster create --sub-slicing; workload create on such
# a cluster): SUB_SLICING_TOPOLOGIES 2x4, 4x4, 4x8, 8x8, 8x16, 16x16 on ct6e-standard-4t
# (system_characteristics.py); a Kueue Topology whose levels are
# cloud.google.com/gke-tpu-slice-<shape>-id for each of those shapes the pool's topology
# contains, largest first, then kubernetes.io/hostname (kueue_manager.py
# __get_topology_name_and_yaml, utils/topology.py get_slice_topology_level); the flavor selects
# the accelerator and the pool's topology (create_machine_label); no AdmissionCheck (only
# super-slicing adds accelerator.gke.io/slice); pod templates annotated
# kueue.x-k8s.io/podset-required-topology: <that shape's level> and
# cloud.google.com/gke-tpu-slice-topology: <shape> (scheduling.py create_sub_slicing_annotations).
# The reserved unit here is a whole 16x16 pool (64 VMs): the largest shape, whose level is the top.
V6E_SUBSLICING = DynamicSlicing(
    cube=TpuShape((16, 16)),
    subslice_shapes=_shapes("2x4", "4x4", "4x8", "8x8", "8x16", "16x16"),
    partition_label_template="cloud.google.com/gke-tpu-slice-{shape}-id",
    block_label=None,
    slice_label=None,
    slice_topology_annotation="cloud.google.com/gke-tpu-slice-topology",
    admission_check_controller=None,
    machine_type="ct6e-standard-4t",
    superslicing=False,
    cube_topology_label=True,
    required_topology_annotation=True,
    # xpk scheduling.py _SUB_SLICING_MINIMUM_KUEUE_VERSION = Version('0.13.0').
    min_kueue="v0.13.0",
)


def _generation(key: str, name: str, accelerator: str, dims: int, tensorcores: int,
                jax_devices: int, machines: tuple[TpuMachine, ...],
                sources: tuple[Source, ...], autopilot: bool | None, max_chips: int,
                dynamic: DynamicSlicing | None = None) -> TpuGeneration:
    slicing: tuple[Slicing, ...] = (STATIC,) if dynamic is None else (STATIC, dynamic)
    return TpuGeneration(
        key=key, name=name, accelerator=accelerator, dims=dims,
        tensorcores_per_chip=tensorcores, jax_devices_per_chip=jax_devices,
        machines=machines, slicing=slicing, autopilot=autopilot, sources=sources,
        cube=CUBE if dims == 3 else None, max_chips=max_chips)


_GENERATIONS = (
    # Cloud TPU v4: "Each TPU v4 chip contains two TensorCores"; "TPU Pod size 4096 chips"; 3D mesh
    # or torus. JAX sees one device per chip (TPU7x page: MegaCore "used in previous generations
    # (TPU v4 and v5p)"). Accelerator tpu-v4-podslice on ct4p-hightpu-4t, 4 chips per VM: xpk
    # system_characteristics.py (gke_accelerator, machine_type, chips per VM). 240 vCPUs and 407 GB
    # per VM: GKE's cluster autoscaler table (NewMachineTypeInfo("ct4p-hightpu-4t", 240, 407)).
    # Topologies by GKE's 3-D rule as for v5p, up to 4096 chips (xpk: 64 cubes); xpk also lists
    # decreasing sides for v4, which the rule here leaves out. Autopilot: the docs read do not say.
    _generation(
        "v4", "TPU v4", "tpu-v4-podslice", dims=3, tensorcores=2, jax_devices=1,
        autopilot=None, max_chips=4096, sources=(TPU_V4, XPK, GKE_AUTOSCALER_MACHINES, TPU_7X),
        machines=(
            _machine("ct4p-hightpu-4t", 4, 240, 407, cube_rule(_SMALL_3D, 4096)),
        )),
    # Cloud TPU v5e: one TensorCore per chip; 2-D, Pod of 256 chips; VM types of
    # 1/4/8 chips with 24/112/224 vCPUs and 48/192/384 GB RAM; serving slices 1x1,
    # 2x2, 2x4 on the 1t/4t/8t machine types, training slices 4x4 ... 16x16 on
    # ct5lp-hightpu-4t. About TPUs in GKE: "ct5lp-hightpu-4t with a 2x4 topology
    # contains two TPU slice nodes"; Autopilot requests TPU v5e as tpu-v5-lite-podslice.
    _generation(
        "v5e", "TPU v5e", "tpu-v5-lite-podslice", dims=2, tensorcores=1, jax_devices=1,
        autopilot=True, max_chips=256, sources=(TPU_V5E, GKE_TPUS),
        machines=(
            _machine("ct5lp-hightpu-1t", 1, 24, 48, _shapes("1x1")),
            _machine("ct5lp-hightpu-4t", 4, 112, 192,
                     _shapes("2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16")),
            _machine("ct5lp-hightpu-8t", 8, 224, 384, _shapes("2x4")),
        )),
    # Cloud TPU v5p: 2 TensorCores per chip, 3-D torus, 4-chip VM with 208 vCPUs
    # and 448 GB RAM; "The largest job that can be scheduled is a 96 cube (6144 chip)
    # job" (About TPUs in GKE: largest v5p topology 16x16x24). JAX sees one device
    # per chip: v5p is a MegaCore chip (TPU7x page: "a single logical core (also
    # known as MegaCore) architecture used in previous generations (TPU v4 and v5p)").
    # Accelerator value tpu-v5p-slice: Google's xpk and cluster-toolkit; no docs page read says it.
    _generation(
        "v5p", "TPU v5p", "tpu-v5p-slice", dims=3, tensorcores=2, jax_devices=1,
        autopilot=None, max_chips=6144, sources=(TPU_V5P, TPU_MACHINES, GKE_TPUS, TPU_7X, XPK),
        machines=(
            _machine("ct5p-hightpu-4t", 4, 208, 448, cube_rule(_SMALL_3D, 6144)),
        )),
    # Cloud TPU v6e: one TensorCore per chip; 2-D, Pod of 256 chips; supported
    # configurations table (2x4 on two 4-chip VMs "only supported when using the
    # GKE API"); VM types of 1/4/8 chips with 44/180/360 vCPUs and 176/720/1440 GB
    # RAM. Autopilot requests TPU Trillium (v6e) as tpu-v6e-slice (About TPUs in GKE).
    _generation(
        "v6e", "TPU v6e (Trillium)", "tpu-v6e-slice", dims=2, tensorcores=1, jax_devices=1,
        autopilot=True, max_chips=256, sources=(TPU_V6E, TPU_MACHINES, GKE_TPUS, XPK),
        dynamic=V6E_SUBSLICING,
        machines=(
            _machine("ct6e-standard-1t", 1, 44, 176, _shapes("1x1")),
            _machine("ct6e-standard-4t", 4, 180, 720,
                     _shapes("2x2", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16")),
            _machine("ct6e-standard-8t", 8, 360, 1440, _shapes("2x4")),
        )),
    # Cloud TPU TPU7x: two TensorCores per chip; "Frameworks like JAX expose each
    # Ironwood chip as two separate devices"; 3-D torus of 4x4x4 cubes, "slices to
    # scale up to 9216 chips"; all topologies on tpu7x-standard-4t: 224 vCPUs,
    # "RAM per VM: 960 GB" (Compute Engine TPU machines: 960 GiB). GKE Autopilot
    # runs TPU7x from 1.34.1-gke.3084001 (About Ironwood (TPU7x) in GKE).
    # tpu7x-standard-1t, the single-host one-chip VM: topology 1x1x1 only (xpk
    # system_characteristics.py: machine_type='tpu7x-standard-1t', supported_topologies=['1x1x1']);
    # 56 vCPUs and 248 GB: GKE's cluster autoscaler table (NewMachineTypeInfo("tpu7x-standard-1t",
    # 56, 248)). No Cloud TPU or Compute Engine page read lists the 1t VM. The same autoscaler
    # table gives the 4t VM 992 GB where the Cloud TPU page says 960; the 4t keeps the page's 960.
    _generation(
        "tpu7x", "TPU7x (Ironwood)", "tpu7x", dims=3, tensorcores=2, jax_devices=2,
        autopilot=True, max_chips=9216,
        sources=(TPU_7X, TPU_MACHINES, GKE_TPUS, GKE_TPU_IRONWOOD, DYNAMIC_SLICING_CODELAB, XPK,
                 GKE_AUTOSCALER_MACHINES),
        dynamic=TPU7X_DYNAMIC,
        machines=(
            _machine("tpu7x-standard-4t", 4, 224, 960, cube_rule(_SMALL_3D, 9216)),
            _machine("tpu7x-standard-1t", 1, 56, 248, _shapes("1x1x1")),
        )),
)

TPU_GENERATIONS: dict[str, TpuGeneration] = {g.key: g for g in _GENERATIONS}
