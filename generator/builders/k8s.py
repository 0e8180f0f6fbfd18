"""The typed Kubernetes classes the builders use: cdk8s-plus-33's generated `k8s`
module itself (`k8s.KubeDeployment`, `k8s.Container`, `k8s.Quantity.from_string`, ...),
the same classes for the type checker and at run time."""
from cdk8s_plus_33.k8s import *  # noqa: F403
