"""The builders: the cdk8s app that turns the typed spec (generator/model) into objects.

One module per concern: the app and its charts (cdk: one cdk8s.App, one cdk8s.Chart per
output folder, rendered by cdk8s' own toJson), the Kubernetes core objects (k8s: cdk8s-plus-33's
typed classes; core: helpers; embed: pod templates inside custom resources), Kueue's objects of a
profile (kueue_objects, multikueue_objects), the workloads (workloads/, one builder per kind),
pod hardening (podpolicy), the controller installs (controllers), Argo CD (gitops), the
Inference Gateway (inference_gateway), and the tree of files (tree). Only this layer imports
cdk8s."""
