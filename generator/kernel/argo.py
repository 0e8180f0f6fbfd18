"""Argo CD's annotation names and the sync options the generator relies on:
facts both the builders (gitops.py) and `generator diff` read. Nothing here
imports cdk8s, so `generator diff --no-regenerate` runs without Node.
Source: Argo CD docs, user-guide/sync-options.md and sync-waves.md."""
from __future__ import annotations

SYNC_WAVE = "argocd.argoproj.io/sync-wave"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
COMPARE_OPTIONS = "argocd.argoproj.io/compare-options"
# Delete and recreate an object whose update the API server refuses (an immutable field).
REPLACE_OPTIONS = ("Force=true", "Replace=true")
