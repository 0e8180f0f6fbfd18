"""docs/plan.md carries the table of restated upstream cases that tests.kueue_cases
generates from the test modules (python -m tests.kueue_cases --write docs/plan.md)."""
from pathlib import Path

from tests import kueue_cases

PAGE = Path(__file__).resolve().parent.parent / "docs" / "plan.md"


def test_the_page_carries_the_generated_counts():
    text = PAGE.read_text()
    table = text.split(kueue_cases.COUNTS_BEGIN, 1)[1].split(kueue_cases.COUNTS_END, 1)[0]
    assert table.strip() == kueue_cases.counts_table().strip(), \
        "docs/plan.md is stale: run python -m tests.kueue_cases --write docs/plan.md"


def test_counts_read_every_kind_of_marker():
    rows = kueue_cases.counts()
    # A case table (TestPreemption's CASES), docstrings (the integration stories), restates() (MultiKueue)
    # and the cases not expressible (TestSchedule's NOT_EXPRESSED, skipped).
    from tests import test_plan_kueue_cases, test_plan_kueue_schedule
    assert rows[("pkg/scheduler/preemption/preemption_test.go", "TestPreemption")]["restated"] == \
        len(test_plan_kueue_cases.CASES)
    assert rows[("pkg/scheduler/scheduler_test.go", "TestSchedule")]["not expressed"] == \
        len(test_plan_kueue_schedule.NOT_EXPRESSED)
    assert rows[("test/integration/multikueue/jobs_test.go", "")]["restated"] == 2
    assert rows[("test/integration/singlecluster/scheduler/scheduler_test.go", "")]["restated"] >= 6
