"""Stand-ins for the cdk8s-plus-33 `k8s` classes the builders use (through
generator/builders/k8s.py): the same
names and keyword arguments (`k8s.Container(name=..., volume_mounts=[...])`,
`k8s.KubeDeployment(chart, id, metadata=..., spec=...)`, `k8s.Quantity.from_string`),
recorded in Python instead of being created one jsii call at a time in Node.

Why: a typed constructor is a round trip to the Node process, and a 1,000-workload
synth spent over half its time in those round trips (docs/performance.md). The
objects render to exactly the JSON cdk8s writes (generator/builders/render.py reproduces
its rules); tests/test_render.py renders fixture specs both ways, through the
real cdk8s-plus-33 classes and through these, and requires the same objects.

Any name the builders ask for works: `Kube*` names are API objects, every other
name is a struct; a keyword the real class lacks fails in that test, where
cdk8s-plus-33 rejects it."""
from __future__ import annotations

from typing import Any, Self

# Struct fields whose JSON name is not the camelCase of the Python keyword:
# jsii name -> JSON name, every such pair in cdk8s-plus-33 2.5.63's
# lib/imports/k8s.js (its toJson_* functions, `'clusterIP': obj.clusterIp`).
JSON_NAMES = {
    "ref": "$ref", "schema": "$schema", "clientIp": "clientIP", "clusterIp": "clusterIP",
    "datasetUuid": "datasetUUID", "diskUri": "diskURI", "downwardApi": "downwardAPI",
    "externalId": "externalID", "hostIp": "hostIP", "hostIpc": "hostIPC", "hostPid": "hostPID",
    "insecureSkipTlsVerify": "insecureSkipTLSVerify", "loadBalancerIp": "loadBalancerIP",
    "nodeId": "nodeID", "nonResourceUrLs": "nonResourceURLs", "openApiv3Schema": "openAPIV3Schema",
    "pdId": "pdID", "podCidr": "podCIDR", "podCidRs": "podCIDRs", "providerId": "providerID",
    "scaleIo": "scaleIO", "setHostnameAsFqdn": "setHostnameAsFQDN", "storagePolicyId": "storagePolicyID",
    "targetCpuUtilizationPercentage": "targetCPUUtilizationPercentage", "targetWwNs": "targetWWNs",
    "volumeId": "volumeID",
    "xKubernetesEmbeddedResource": "x-kubernetes-embedded-resource",
    "xKubernetesIntOrString": "x-kubernetes-int-or-string",
    "xKubernetesListMapKeys": "x-kubernetes-list-map-keys", "xKubernetesListType": "x-kubernetes-list-type",
    "xKubernetesMapType": "x-kubernetes-map-type",
    "xKubernetesPreserveUnknownFields": "x-kubernetes-preserve-unknown-fields",
    "xKubernetesValidations": "x-kubernetes-validations",
}

# apiVersion of each Kube* class the builders use (its static GVK in cdk8s-plus-33's
# lib/imports/k8s.js); the kind is the class name without `Kube` and a version suffix.
GVK = {
    "KubeClusterRole": ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    "KubeClusterRoleBinding": ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    "KubeConfigMap": ("v1", "ConfigMap"),
    "KubeDeployment": ("apps/v1", "Deployment"),
    "KubeHorizontalPodAutoscalerV2": ("autoscaling/v2", "HorizontalPodAutoscaler"),
    "KubeJob": ("batch/v1", "Job"),
    "KubeNamespace": ("v1", "Namespace"),
    "KubePodTemplate": ("v1", "PodTemplate"),
    "KubePriorityClass": ("scheduling.k8s.io/v1", "PriorityClass"),
    "KubeSecret": ("v1", "Secret"),
    "KubeService": ("v1", "Service"),
    "KubeServiceAccount": ("v1", "ServiceAccount"),
}

_json_names: dict[str, str] = {}


def json_name(python_name: str) -> str:
    """`container_port` -> `containerPort`, `cluster_ip` -> `clusterIP` (jsii's naming, reversed)."""
    name = _json_names.get(python_name)
    if name is None:
        head, *rest = python_name.split("_")
        camel = head + "".join(p[:1].upper() + p[1:] for p in rest)
        name = _json_names[python_name] = JSON_NAMES.get(camel, camel)
    return name


class Struct:
    """A typed struct: its fields by Python keyword, None left out (as jsii does)."""
    __slots__ = ("fields",)

    def __init__(self, **fields: Any) -> None:
        self.fields = {k: v for k, v in fields.items() if v is not None}

    def __repr__(self) -> str:
        return f"k8s.{type(self).__name__}({self.fields!r})"


class _Value:
    """Quantity and IntOrString: a value cdk8s writes as it was given."""
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    @classmethod
    def from_string(cls, value: str) -> Self:
        return cls(value)

    @classmethod
    def from_number(cls, value: float) -> Self:
        return cls(value)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.value == self.value

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.value))


class Quantity(_Value):
    __slots__ = ()


class IntOrString(_Value):
    __slots__ = ()


class ApiObject:
    """A typed API object (`KubeDeployment(chart, id, metadata=..., spec=...)`), added to
    its chart (generator/builders/cdk.py) like the cdk8s construct it stands for."""
    __slots__ = ("id", "props", "chart")
    kind_class = ""

    def __init__(self, scope: Any, id: str, **props: Any) -> None:   # noqa: A002  cdk8s' name
        self.id = id
        self.props = {k: v for k, v in props.items() if v is not None}
        self.chart = scope
        scope.add(self)

    @property
    def gvk(self) -> tuple[str, str]:
        return GVK[self.kind_class]

    def to_json(self) -> dict:
        from . import cdk
        return cdk.render_one(self)


_classes: dict[str, type] = {"Quantity": Quantity, "IntOrString": IntOrString}


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    cls = _classes.get(name)
    if cls is None:
        if name.startswith("Kube"):
            if name not in GVK:
                raise AttributeError(f"k8s.{name}: add its apiVersion and kind to generator/builders/k8s.py GVK "
                                     "(from cdk8s-plus-33's lib/imports/k8s.js)")
            cls = type(name, (ApiObject,), {"__slots__": (), "kind_class": name})
        else:
            cls = type(name, (Struct,), {"__slots__": ()})
        _classes[name] = cls
    return cls
