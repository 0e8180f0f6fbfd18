"""GPU families on GKE, keyed by device type.

Machine types, vCPUs, memory, GPUs, GPU memory and Local SSD: Compute Engine
"GPU machine types" (sources.GPU_MACHINE_TYPES), one table per series.
Accelerator label values and Autopilot: GKE "Deploy GPU workloads in Autopilot"
(sources.AUTOPILOT_GPUS), which lists all seven families below.

A machine type of a known family is one GpuMachine line; a family is one entry."""
from __future__ import annotations

from .sources import ARM_VMS, GKE_AUTOSCALER_MACHINES, GPU_MACHINE_TYPES, GPU_PLATFORMS
from .types import GpuFamily, GpuMachine as M

_FAMILIES = (
    # G2 table: vCPU count, default instance memory (GB), GPU count, max Local SSD
    # supported (GiB); Local SSD is optional, none is bundled. L4: 24 GB GDDR6.
    GpuFamily(
        key="l4", accelerator="nvidia-l4", model="NVIDIA L4",
        gpu_memory_gb=24, gpu_memory_type="GDDR6",
        machine_series="G2", machine_family="g2", autopilot=True, source=GPU_MACHINE_TYPES,
        machines=(
            M("g2-standard-4", 4, 16, 1, max_local_ssd_gib=375),
            M("g2-standard-8", 8, 32, 1, max_local_ssd_gib=375),
            M("g2-standard-12", 12, 48, 1, max_local_ssd_gib=375),
            M("g2-standard-16", 16, 64, 1, max_local_ssd_gib=375),
            M("g2-standard-24", 24, 96, 2, max_local_ssd_gib=750),
            M("g2-standard-32", 32, 128, 1, max_local_ssd_gib=375),
            M("g2-standard-48", 48, 192, 4, max_local_ssd_gib=1500),
            M("g2-standard-96", 96, 384, 8, max_local_ssd_gib=3000),
        )),
    # A2 Standard table: "Local SSD supported: Yes" (added at creation, no bundled size).
    # A100 40GB: 40 GB HBM2.
    GpuFamily(
        key="a100-40gb", accelerator="nvidia-tesla-a100", model="NVIDIA A100 40GB",
        gpu_memory_gb=40, gpu_memory_type="HBM2",
        machine_series="A2 Standard", machine_family="a2", autopilot=True, source=GPU_MACHINE_TYPES,
        local_ssd_optional=True,
        machines=(
            M("a2-highgpu-1g", 12, 85, 1),
            M("a2-highgpu-2g", 24, 170, 2),
            M("a2-highgpu-4g", 48, 340, 4),
            M("a2-highgpu-8g", 96, 680, 8),
            M("a2-megagpu-16g", 96, 1360, 16),
        )),
    # A2 Ultra table: attached Local SSD (GiB). A100 80GB: 80 GB HBM2e.
    GpuFamily(
        key="a100-80gb", accelerator="nvidia-a100-80gb", model="NVIDIA A100 80GB",
        gpu_memory_gb=80, gpu_memory_type="HBM2e",
        machine_series="A2 Ultra", machine_family="a2", autopilot=True, source=GPU_MACHINE_TYPES,
        machines=(
            M("a2-ultragpu-1g", 12, 170, 1, local_ssd_gib=375),
            M("a2-ultragpu-2g", 24, 340, 2, local_ssd_gib=750),
            M("a2-ultragpu-4g", 48, 680, 4, local_ssd_gib=1500),
            M("a2-ultragpu-8g", 96, 1360, 8, local_ssd_gib=3000),
        )),
    # A3 High table (H100 SXM, 80 GB HBM3 per GPU), attached Local SSD (GiB).
    GpuFamily(
        key="h100-80gb", accelerator="nvidia-h100-80gb", model="NVIDIA H100 80GB",
        gpu_memory_gb=80, gpu_memory_type="HBM3",
        machine_series="A3 High", machine_family="a3", autopilot=True, source=GPU_MACHINE_TYPES,
        machines=(
            M("a3-highgpu-1g", 26, 234, 1, local_ssd_gib=750),
            M("a3-highgpu-2g", 52, 468, 2, local_ssd_gib=1500),
            M("a3-highgpu-4g", 104, 936, 4, local_ssd_gib=3000),
            M("a3-highgpu-8g", 208, 1872, 8, local_ssd_gib=6000),
        )),
    # A3 Mega table: same H100 SXM, its own accelerator value.
    GpuFamily(
        key="h100-mega-80gb", accelerator="nvidia-h100-mega-80gb", model="NVIDIA H100 Mega 80GB",
        gpu_memory_gb=80, gpu_memory_type="HBM3",
        machine_series="A3 Mega", machine_family="a3", autopilot=True, source=GPU_MACHINE_TYPES,
        machines=(
            M("a3-megagpu-8g", 208, 1872, 8, local_ssd_gib=6000),
        )),
    # A3 Ultra table: 1128 GB HBM3e for 8 GPUs; comparison chart: 141 GB HBM3e per H200.
    GpuFamily(
        key="h200-141gb", accelerator="nvidia-h200-141gb", model="NVIDIA H200 141GB",
        gpu_memory_gb=141, gpu_memory_type="HBM3e",
        machine_series="A3 Ultra", machine_family="a3", autopilot=True, source=GPU_MACHINE_TYPES,
        machines=(
            M("a3-ultragpu-8g", 224, 2952, 8, local_ssd_gib=12000),
        )),
    # A4 table: 1,440 GB HBM3e for 8 GPUs; comparison chart: 180 GB HBM3e per B200.
    GpuFamily(
        key="b200", accelerator="nvidia-b200", model="NVIDIA B200",
        gpu_memory_gb=180, gpu_memory_type="HBM3e",
        machine_series="A4", machine_family="a4", autopilot=True, source=GPU_MACHINE_TYPES,
        machines=(
            M("a4-highgpu-8g", 224, 3968, 8, local_ssd_gib=12000),
        )),
    # A4X (Arm VMs on Compute): "two sockets with NVIDIA Grace Arm CPUs connected to four GPUs";
    # "up to 140 vCPUs and 884 GB of memory"; "B200 GPUs that offer 186 GB memory per GPU";
    # "comes with 12,000 GiB of Local SSD"; machine type a4x-highgpu-4g. The accelerator value
    # nvidia-gb200: GKE's A4X installer and test workloads (container-engine-accelerators
    # gpudirect-rdma/nccl-rdma-installer-a4x.yaml node affinity). Not among the Autopilot GPU types
    # read (AUTOPILOT_GPUS); the page read does not name the memory type. Nodes are arm64.
    GpuFamily(
        key="gb200", accelerator="nvidia-gb200", model="NVIDIA GB200",
        gpu_memory_gb=186, gpu_memory_type=None,
        machine_series="A4X", machine_family="a4x", autopilot=False, source=ARM_VMS,
        machines=(
            M("a4x-highgpu-4g", 140, 884, 4, local_ssd_gib=12000),
        )),
    # G4 (RTX PRO 6000): GKE's cluster autoscaler table (GKE_AUTOSCALER_MACHINES):
    # g4-standard-48/96/192/384 with 48/96/192/384 vCPUs, 180/360/720/1440 GB and 1/2/4/8
    # nvidia-rtx-pro-6000 GPUs (its NvidiaRTXPro6000 constant); SkyPilot's GCP catalog maps the
    # same four machine types to 1/2/4/8 RTX PRO 6000. The fractional vGPU shapes (g4-standard-6/
    # 12/24, explicit request only there) are left out. 96 GB per GPU: SkyPilot's and users'
    # notes, not a Google page read; memory type not read. Not among the Autopilot GPU types read.
    GpuFamily(
        key="rtx-pro-6000", accelerator="nvidia-rtx-pro-6000", model="NVIDIA RTX PRO 6000",
        gpu_memory_gb=96, gpu_memory_type=None,
        machine_series="G4", machine_family="g4", autopilot=False, source=GKE_AUTOSCALER_MACHINES,
        machines=(
            M("g4-standard-48", 48, 180, 1),
            M("g4-standard-96", 96, 360, 2),
            M("g4-standard-192", 192, 720, 4),
            M("g4-standard-384", 384, 1440, 8),
        )),
    # T4: GPUs attached to N1 general-purpose VMs, no machine type of its own (GPU_PLATFORMS: "attach
    # GPUs to an N1 general-purpose VM"; "N1 machine series: NVIDIA T4: nvidia-tesla-t4"); a node pool
    # names an N1 machine type of the CPU catalog (cpus.py) and `gpus` per node, and GKE labels its
    # nodes cloud.google.com/gke-accelerator: nvidia-tesla-t4. 16 GB GDDR6: Compute Engine's GPU
    # comparison chart as copied in a public repository (huggingface.co/spaces/Elfsong/gcp_allocator),
    # not the Google page read. The counts GKE allows per N1 shape were not read: not checked here.
    # Not among the Autopilot GPU types read (AUTOPILOT_GPUS).
    GpuFamily(
        key="t4", accelerator="nvidia-tesla-t4", model="NVIDIA T4",
        gpu_memory_gb=16, gpu_memory_type="GDDR6",
        machine_series="N1", machine_family=None, autopilot=False, source=GPU_PLATFORMS,
        machines=(), attaches_to="N1"),
)

GPU_FAMILIES: dict[str, GpuFamily] = {f.key: f for f in _FAMILIES}
