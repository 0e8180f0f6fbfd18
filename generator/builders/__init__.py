"""The builders: the cdk8s app that turns the typed spec (generator/model) into objects.

One module per concern: the Kubernetes core objects (core, k8s, kube), Kueue's objects of a
profile (kueue_objects, multikueue_objects), the workloads (workloads/, one builder per kind),
pod hardening (podpolicy), the controller installs (controllers), Argo CD (gitops), the
Inference Gateway (inference_gateway), and the tree of files (tree). Only this layer imports
cdk8s (through cdk); rendering to YAML is render (Python) with cdk8s_render as its reference."""
