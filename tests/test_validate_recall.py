"""The recall corpus of `make bench` (bench/recall.yaml) must not rot: every variant's file,
object and edit still apply to ../shared/reference, nothing crashes, and recall stays at the
documented bar (docs/validate-checks.md). The figures themselves are the benchmark's report."""
from __future__ import annotations

from bench import recall
from generator.kernel import yamlio
from tests import helpers


def test_recall_corpus_runs_and_meets_the_bar():
    variants = yamlio.load_strict(recall.LIST.read_text())["variants"]
    assert len({v["id"] for v in variants}) == len(variants)
    _, counts = recall.report(variants, helpers.SHARED)
    assert counts["crashes"] == 0
    assert counts["caught"] / counts["variants"] >= 0.95
    assert counts["right"] / counts["added"] >= 0.95
