"""Where the catalog's facts come from. Every family, generation and label
names one of these; the research note (outside the repository) quotes them.

Most Google pages were read in crawled copies of docs.cloud.google.com that
public repositories keep (the date is the page's own "Last updated");
`read` says how."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    title: str
    url: str
    read: str = ""     # how and when the page was read, where not from the page itself

    def __str__(self) -> str:
        return f"{self.title} <{self.url}>"


GPU_MACHINE_TYPES = Source(
    "Compute Engine: GPU machine types",
    "https://cloud.google.com/compute/docs/gpus",
    "page text as mirrored on documentation.s3ns.fr, last updated 2026-08-26")
# GPUs attached to N1 VMs: "To use GPUs, you can either deploy an accelerator-optimized VM that
# has attached GPUs, or attach GPUs to an N1 general-purpose VM"; "N1 machine series: NVIDIA T4:
# nvidia-tesla-t4: Generally Available".
GPU_PLATFORMS = Source(
    "Compute Engine: GPU models (GPU platforms)",
    "https://cloud.google.com/compute/docs/gpus",
    "crawled copies of the page (GPUs for compute workloads list), read through the search tool")
# General-purpose (CPU) machine types. The pricing page has one table per
# series (machine type, virtual CPUs, memory in GiB) and says "machine type
# memory [is] calculated in JEDEC binary gigabytes (GB), or IEC gibibytes (GiB),
# where 1 GiB is 2^30 bytes". The general-purpose page's E2 standard table was
# read as quoted in a crawled summary; its other tables could not be read.
VM_INSTANCE_PRICING = Source(
    "Compute Engine: VM instance pricing",
    "https://cloud.google.com/compute/vm-instance-pricing",
    "page text kept in a public repository (read through the search tool's index)")
GENERAL_PURPOSE_MACHINES = Source(
    "Compute Engine: General-purpose machine family",
    "https://cloud.google.com/compute/docs/general-purpose-machines",
    "E2 standard table as quoted in a crawled summary of docs.cloud.google.com (2026-04-15)")
# Cross-check: the machine types Cloud Workstations offers, with vCPUs and memory
# (a subset of each series: N2 and N2D up to 32 vCPUs).
WORKSTATIONS_MACHINE_TYPES = Source(
    "Cloud Workstations: Available machine types",
    "https://cloud.google.com/workstations/docs/available-machine-types",
    "tables as quoted in a crawled summary of docs.cloud.google.com")
ARM_VMS = Source(
    "Compute Engine: Arm VMs on Compute",
    "https://cloud.google.com/compute/docs/instances/arm-on-compute",
    "page text kept in a public repository (read through the search tool's index)")
# Cross-checks only, like XPK below: GKE's cluster autoscaler's machine type table
# (Go package machinetypes of k8s.io/gke-autoscaling: NewMachineTypeInfo(name, vCPUs, memory GB),
# withGpuOverride(type, count)) and its GPU type constants, read through the search tool's index.
GKE_AUTOSCALER_MACHINES = Source(
    "GKE cluster autoscaler machine types (k8s.io/gke-autoscaling cluster-autoscaler machinetypes)",
    "https://github.com/kubernetes/autoscaler",
    "a public copy read through the search tool's index")
TPU_V4 = Source("Cloud TPU: TPU v4", "https://cloud.google.com/tpu/docs/v4",
                "page text as crawled (system architecture table)")
AUTOPILOT_GPUS = Source(
    "GKE: Deploy GPU workloads in Autopilot",
    "https://cloud.google.com/kubernetes-engine/docs/how-to/autopilot-gpus",
    "allowed cloud.google.com/gke-accelerator values, from a crawled copy")
STANDARD_GPUS = Source(
    "GKE: Run GPUs in GKE Standard node pools",
    "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus",
    "crawled copy")
TPU_V5E = Source("Cloud TPU: TPU v5e", "https://cloud.google.com/tpu/docs/v5e",
                 "snapshot, last updated 2026-08-26")
TPU_V5P = Source("Cloud TPU: TPU v5p", "https://cloud.google.com/tpu/docs/v5p",
                 "opening of the page (specification table and first topologies)")
TPU_V6E = Source("Cloud TPU: TPU v6e", "https://cloud.google.com/tpu/docs/v6e",
                 "snapshot, last updated 2026-08-26")
TPU_7X = Source("Cloud TPU: TPU7x (Ironwood)", "https://cloud.google.com/tpu/docs/tpu7x",
                "snapshot, last updated 2026-05-08")
TPU_MACHINES = Source(
    "Compute Engine: TPU machines in accelerator-optimized machine family",
    "https://cloud.google.com/compute/docs/tpus/tpu-machines",
    "snapshot, last updated 2026-08-26")
GKE_TPUS = Source(
    "GKE: About TPUs in GKE",
    "https://cloud.google.com/kubernetes-engine/docs/concepts/tpus",
    "crawled copy")
GKE_NODE_POOL_AUTO_CREATION = Source(
    "GKE: About node pool auto-creation",
    "https://cloud.google.com/kubernetes-engine/docs/concepts/node-auto-provisioning",
    "crawled copy, last updated 2026-04-10")
GKE_TPU_IRONWOOD = Source(
    "GKE: About Ironwood (TPU7x) in GKE",
    "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood")
GKE_DWS_QUEUED = Source(
    "GKE: Run a large-scale workload with flex-start with queued provisioning",
    "https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest",
    "examples quoted in a crawled summary")
DYNAMIC_SLICING_CODELAB = Source(
    "Codelab: GKE TPU dynamic slicing (GoogleCloudPlatform/devrel-demos ai-ml/dynamic-slicing)",
    "https://codelabs.developers.google.com/tpu-dynamic-slicing",
    "manifests in ../shared/reference/devrel-demos")
KUEUE_COHORT_SAMPLE = Source(
    "GoogleCloudPlatform/kubernetes-engine-samples batch/kueue-cohort/flavors.yaml",
    "https://github.com/GoogleCloudPlatform/kubernetes-engine-samples",
    "../shared/reference/kubernetes-engine-samples")
K8S_WELL_KNOWN_LABELS = Source(
    "Kubernetes: Well-Known Labels, Annotations and Taints",
    "https://kubernetes.io/docs/reference/labels-annotations-taints/")
# Cross-checks only: Google's own tools, not documentation.
XPK = Source("AI-Hypercomputer/xpk src/xpk/core/system_characteristics.py",
             "https://github.com/AI-Hypercomputer/xpk", "commit 367c8382")
CLUSTER_TOOLKIT = Source("GoogleCloudPlatform/cluster-toolkit modules/internal/tpu-definition/main.tf",
                         "https://github.com/GoogleCloudPlatform/cluster-toolkit", "commit 1047080")
# GPUDirect networking: GKE's published installers and NCCL test workloads, and xpk's decorators.
GPUDIRECT_MANIFESTS = Source(
    "GoogleCloudPlatform/container-engine-accelerators gpudirect-tcpx/, gpudirect-tcpxo/, gpudirect-rdma/",
    "https://github.com/GoogleCloudPlatform/container-engine-accelerators",
    "commit 992db812, in ../shared/reference/container-engine-accelerators@992db81")
XPK_DECORATORS = Source(
    "AI-Hypercomputer/xpk src/xpk/core/workload_decorators/ and src/xpk/core/network.py",
    "https://github.com/AI-Hypercomputer/xpk", "../shared/reference/xpk")
