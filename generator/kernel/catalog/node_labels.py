"""Node labels, taints and extended resources GKE puts on accelerator nodes:
what a Kueue ResourceFlavor selects (nodeLabels) and tolerates."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Taint:
    key: str
    value: str | None
    effect: str

    def toleration(self) -> dict[str, str]:
        """Tolerate the key whatever its value, as Google's own samples do."""
        return {"key": self.key, "operator": "Exists", "effect": self.effect}


# -- extended resources
# GKE: About TPUs in GKE ("use the resource name google.com/tpu");
# GKE: Run GPUs in GKE Standard node pools (pods request nvidia.com/gpu).
GPU_RESOURCE = "nvidia.com/gpu"
TPU_RESOURCE = "google.com/tpu"

# -- accelerator labels
# GKE: Deploy GPU workloads in Autopilot (nodeSelector cloud.google.com/gke-accelerator: GPU_TYPE,
# cloud.google.com/gke-accelerator-count: "GPU_COUNT").
GPU_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
GPU_ACCELERATOR_COUNT_LABEL = "cloud.google.com/gke-accelerator-count"
# GKE: About node pool auto-creation (TPU Deployment example selects both).
TPU_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TPU_TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"

# -- machine labels
# Kubernetes well-known label: "The Kubelet populates this with the instance type
# as defined by the cloudprovider" (on GKE, the Compute Engine machine type).
MACHINE_TYPE_LABEL = "node.kubernetes.io/instance-type"
# GKE docs' node selectors use it with the machine series in lower case
# ("c2", "c3d"); see GpuFamily.machine_family.
MACHINE_FAMILY_LABEL = "cloud.google.com/machine-family"
# kubernetes-engine-samples ai-ml/gke-ray/tpu/dws/dws-tpu-queue.yaml selects flavors by it.
NODE_POOL_LABEL = "cloud.google.com/gke-nodepool"
HOSTNAME_LABEL = "kubernetes.io/hostname"   # Kubernetes well-known label

# -- topology labels (Kueue TAS)
# GKE labels nodes of compact-placement pools with their place in the data centre; xpk's Kueue
# Topology for GKE lists them outermost first, then kubernetes.io/hostname
# (AI-Hypercomputer/xpk src/xpk/templates/kueue_gke_default_topology.yaml.j2, in
# ../shared/reference/xpk). cluster-toolkit's notes: A4 and A3 Ultra get them by default, A3 Mega
# and A3 High with a compact placement policy.
TOPOLOGY_BLOCK_LABEL = "cloud.google.com/gce-topology-block"
TOPOLOGY_SUBBLOCK_LABEL = "cloud.google.com/gce-topology-subblock"
TOPOLOGY_HOST_LABEL = "cloud.google.com/gce-topology-host"

# -- capacity labels
# GKE: About node pool auto-creation: "Add a node selector for the
# cloud.google.com/gke-spot=true or the cloud.google.com/gke-provisioning=spot node labels."
SPOT_LABEL = "cloud.google.com/gke-spot"
SPOT_VALUE = "true"
# kubernetes-engine-samples batch/kueue-cohort/flavors.yaml: flavors on-demand and spot
# select this label, "applied automatically by GKE", with the values standard and spot.
PROVISIONING_LABEL = "cloud.google.com/gke-provisioning"
PROVISIONING_STANDARD = "standard"
PROVISIONING_SPOT = "spot"
# GKE: Run a large-scale workload with flex-start with queued provisioning: the
# PodTemplate selects cloud.google.com/gke-flex-start: "true".
FLEX_START_LABEL = "cloud.google.com/gke-flex-start"
FLEX_START_VALUE = "true"

# -- taints
# GKE: Run GPUs in GKE Standard node pools: "Key: nvidia.com/gpu, Value: present,
# Effect: NoSchedule", added only when the cluster has a non-GPU node pool.
GPU_TAINT = Taint(GPU_RESOURCE, "present", "NoSchedule")
# GKE: About TPUs in GKE: "By default, TPU slice nodes have the google.com/tpu taint".
# The docs read give no value or effect; Google's samples tolerate it with
# effect NoSchedule (codelab, kubernetes-engine-samples) and cluster-toolkit
# sets value "present", effect NO_SCHEDULE. Tolerate by key (operator Exists).
TPU_TAINT = Taint(TPU_RESOURCE, None, "NoSchedule")
# GKE: About node pool auto-creation: Spot pods "use a toleration for the
# cloud.google.com/gke-spot="true" node label with the NoSchedule effect".
SPOT_TAINT = Taint(SPOT_LABEL, SPOT_VALUE, "NoSchedule")
# kubernetes-engine-samples ai-ml/gke-ray/tpu/dws/rayjob-tpu-v6e-dws.yaml tolerates
# cloud.google.com/gke-queued (operator Exists, effect NoSchedule) on queued-provisioning nodes;
# GKE's flex-start TPU node pool body lists the taint (key cloud.google.com/gke-queued, value
# "true", NO_SCHEDULE), and cluster-toolkit's DWS flex-start + queued provisioning notes say
# workloads need "toleration for cloud.google.com/gke-queued:NoSchedule". The generator puts it
# on flex-start flavors, so every pod Kueue admits there tolerates it.
QUEUED_TAINT = Taint("cloud.google.com/gke-queued", None, "NoSchedule")
