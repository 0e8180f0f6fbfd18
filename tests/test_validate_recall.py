"""The recall corpora of `make bench` (bench/recall.yaml, bench/recall-fresh.yaml written later and
independently over the classes of issue 36, and bench/recall-third.yaml on files and fields the other two
leave out) must not rot: every variant's file, object and edit still
apply to ../shared/reference (or its inline upstream object), nothing crashes, and recall and
precision stay at the documented bar (docs/validate-checks.md). The figures themselves are the
benchmark's report."""
from __future__ import annotations

import pytest

from bench import recall
from generator.kernel import yamlio
from tests import helpers


@pytest.mark.parametrize("listing", recall.LISTS, ids=lambda p: p.name)
def test_recall_corpus_runs_and_meets_the_bar(listing):
    data = yamlio.load_strict(listing.read_text())
    variants = data["variants"]
    assert len({v["id"] for v in variants}) == len(variants)
    _, counts = recall.report(variants, helpers.SHARED, base_right=data.get("base_right"))
    assert counts["crashes"] == 0
    assert counts["caught"] / counts["variants"] >= 0.95
    assert counts["right"] / counts["added"] >= 0.95
    assert counts["base_alarms"] == 0, "an error or warning on an unedited file that no base_right classifies"


def test_the_fresh_corpus_spans_every_class_of_issue_36():
    variants = yamlio.load_strict(recall.FRESH.read_text())["variants"]
    per_class: dict[str, int] = {}
    for v in variants:
        per_class[v["class"]] = per_class.get(v["class"], 0) + 1
    assert len(variants) >= 80
    assert len(per_class) >= 17 and min(per_class.values()) >= 4, per_class   # the table's 17, and more


def _edit(v: dict) -> tuple:
    """What a variant breaks: its file (or inline source), object, the path it edits and the value it writes."""
    op = next(k for k in ("set", "delete", "append") if k in v)
    path, value = (v[op], None) if op == "delete" else v[op]
    return (v.get("file") or v.get("source"), v["object"], tuple(path), repr(value))


def test_the_third_corpus_repeats_no_variant_of_the_other_two():
    earlier = [v for listing in (recall.LIST, recall.FRESH) for v in yamlio.load_strict(listing.read_text())["variants"]]
    third = yamlio.load_strict(recall.THIRD.read_text())["variants"]
    assert {v["id"] for v in third}.isdisjoint({v["id"] for v in earlier})
    assert {_edit(v) for v in third}.isdisjoint({_edit(v) for v in earlier})
    assert len(third) >= 40
