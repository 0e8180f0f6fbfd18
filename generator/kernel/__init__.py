"""The kernel: what Kubernetes, Kueue, GKE and Argo CD are, with no platform spec in it.

Device and machine facts (catalog/), Kueue's API shapes (kueue_api), quantities and label
selectors, what a set of objects asks of Kueue (demand) and what a set of queues can give
(supply), the pinned releases (versions), upstream data (upstream, schemacheck), and the
plumbing every command shares: the bounded reader of user files (yamlio, userinput), the
deterministic dumper, the all-or-nothing writer, and the one problem type (errors).

Nothing here imports the model (generator/model), the builders (generator/builders), the tools
(validate, plan, diff) or cdk8s; tests/test_layers.py holds it to that."""
