"""Which kinds have no namespace: the one API-scope table of the project.

Core kinds come from the Kubernetes API reference (cluster-scoped resources
of each group). Custom resources take their scope from their CRD where the
CRDs are at hand (the validator); the generator, which runs without them,
uses the kinds it emits, whose CRDs (in ../shared/crds) say `scope: Cluster`."""
from __future__ import annotations

# Core kinds without a namespace, as (API group, kind).
CORE_CLUSTER_SCOPED = frozenset({
    ("", "Namespace"), ("", "Node"), ("", "PersistentVolume"), ("", "ComponentStatus"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("storage.k8s.io", "StorageClass"), ("storage.k8s.io", "CSIDriver"), ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "VolumeAttachment"), ("storage.k8s.io", "VolumeAttributesClass"),
    ("rbac.authorization.k8s.io", "ClusterRole"), ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"), ("apiregistration.k8s.io", "APIService"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
    ("node.k8s.io", "RuntimeClass"), ("networking.k8s.io", "IngressClass"),
    ("networking.k8s.io", "IPAddress"), ("networking.k8s.io", "ServiceCIDR"),
    ("certificates.k8s.io", "CertificateSigningRequest"), ("certificates.k8s.io", "ClusterTrustBundle"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"), ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("resource.k8s.io", "DeviceClass"), ("resource.k8s.io", "ResourceSlice"),
})

# Cluster-scoped custom resources the generator emits, as (API group, kind).
CUSTOM_CLUSTER_SCOPED = frozenset({
    ("kueue.x-k8s.io", "ClusterQueue"), ("kueue.x-k8s.io", "ResourceFlavor"),
    ("kueue.x-k8s.io", "WorkloadPriorityClass"), ("kueue.x-k8s.io", "Topology"),
    ("kueue.x-k8s.io", "AdmissionCheck"), ("kueue.x-k8s.io", "Cohort"),
    ("kueue.x-k8s.io", "MultiKueueCluster"), ("kueue.x-k8s.io", "MultiKueueConfig"),
    ("kueue.x-k8s.io", "ProvisioningRequestConfig"),
    ("gateway.networking.k8s.io", "GatewayClass"),
})


# Namespaced kinds without a pinned CRD that users submit beside the pinned ones: the job
# kinds Kueue manages (Kueue v0.17.4 pkg/controller/jobframework/validation.go,
# supportedPrebuiltWlJobGVKs, and its jobs/ integrations). Kueue admits them through a
# LocalQueue, which is namespaced (the queue-name label names a LocalQueue in the job's own
# namespace), so each of these kinds is namespaced. With no CRD at hand, `validate` takes
# their scope from here, so -n and the default namespace apply to them as to any other.
WELL_KNOWN_NAMESPACED = frozenset({
    ("trainer.kubeflow.org", "TrainJob"),
    ("kubeflow.org", "PyTorchJob"), ("kubeflow.org", "TFJob"), ("kubeflow.org", "XGBoostJob"),
    ("kubeflow.org", "PaddleJob"), ("kubeflow.org", "JAXJob"), ("kubeflow.org", "MPIJob"),
    ("ray.io", "RayJob"), ("ray.io", "RayCluster"), ("ray.io", "RayService"),
    ("workload.codeflare.dev", "AppWrapper"),
})


# API groups of Kubernetes itself whose kinds the API server validates with pkg/apis/<group>/validation
# (core's ValidateObjectMeta among it), beside the dot-less groups ("", apps, batch, policy, autoscaling):
# the groups of the in-tree kinds above and the namespaced-only ones. A CRD's group always has a dot.
# apiextensions.k8s.io and apiregistration.k8s.io use apimachinery's ValidateObjectMeta, not core's.
IN_TREE_GROUPS = frozenset({g for g, _ in CORE_CLUSTER_SCOPED if "." in g} - {"apiextensions.k8s.io",
                                                                          "apiregistration.k8s.io"}
                           | {"networking.k8s.io", "discovery.k8s.io", "coordination.k8s.io", "events.k8s.io"})


def is_in_tree_group(group: str) -> bool:
    """Does the API server check this group's objects with core's ValidateObjectMeta?"""
    return "." not in group or group in IN_TREE_GROUPS


def is_cluster_scoped(api_version: str, kind: str) -> bool:
    """For objects the generator emits (no CRDs at hand)."""
    group = api_version.rpartition("/")[0]
    return (group, kind) in CORE_CLUSTER_SCOPED or (group, kind) in CUSTOM_CLUSTER_SCOPED
