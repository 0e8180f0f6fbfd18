"""`python -m generator diff`: what a change does to the generated platform,
for the reviewer of a pull request.

  gitio       git access: the base commit and its files, from git objects
  objects     the objects of an output tree, by (group, kind, namespace, name), per unit
  fields      field-level changes of one object (sets compared as sets)
  compare     object changes between two trees
  capacity    quotas, demand (generator/kernel/demand.py) and never-admitted workloads of one overlay
  impact      capacity before and after, per overlay
  immutable   core kinds' immutable fields;  transitions: CRD transition rules
  rollout     what an immutable change takes: delete and recreate, what restarts, Argo CD
  stale       the spec regenerated and compared with the output
  report      all of the above, assembled;  text, markdown: the renderers
  command     the command itself"""
from __future__ import annotations

from .capacity import accelerator_summary, pod_ranges
from .command import review, run
from .gitio import DiffError
from .report import Report, compare

__all__ = ["DiffError", "Report", "accelerator_summary", "compare", "pod_ranges", "review", "run"]
