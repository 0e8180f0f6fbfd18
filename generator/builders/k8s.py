"""The typed Kubernetes classes the builders use, by cdk8s-plus-33's names
(`k8s.KubeDeployment`, `k8s.Container`, `k8s.Quantity.from_string`, ...).

mypy checks every call against cdk8s-plus-33's own signatures; at run time the
names are generator/builders/kube.py's stand-ins, which render to the same JSON in
Python instead of creating each object in Node (see generator/builders/cdk.py)."""
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cdk8s_plus_33.k8s import *  # noqa: F403  the real classes, for the type checker only
else:
    from .kube import IntOrString, Quantity, __getattr__  # noqa: F401  PEP 562: any other name on demand
