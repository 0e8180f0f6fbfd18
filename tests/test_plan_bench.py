"""The plan row of `make bench` must not rot: its input is a valid overlay that plans
(timing is the benchmark's business, never asserted here)."""
from bench import plan_bench
from generator.plan import overlay, scenario, simulate


def test_the_bench_input_plans_with_preemption_and_pending_work():
    objs = plan_bench.objects(60)
    cluster = overlay.build("bench", objs)
    plan = simulate.run(cluster, scenario.default(cluster))
    states = {r.state for r in plan.steps[0].rows}
    assert len(plan.steps[0].rows) == 60
    assert {"admitted", "pending"} <= states


def test_the_report_lines(tmp_path):
    from bench.run import Sample, Series
    calls = []

    def fake(cmd, ok=(0,), no_node=False):
        calls.append(cmd)
        n = int(cmd[-3].rsplit("-", 1)[1].split(".")[0]) if "plan" in cmd else int(cmd[-1].rsplit("-", 1)[1][:-5])
        return Sample(n / 100, n / 200, 0.0), None
    lines = plan_bench.measure(fake, Series, tmp_path, 1, (100, 1000))
    assert "| 1,000 | 10.00 / 10.00 | 5.00 | 10.00 / 10.00 | 1.0× |" in lines
    assert lines[-1] == "Fitted exponent from 100 to 1,000 Jobs: plan 1.00 (wall), 1.00 (CPU); floor 1.00. " \
                        "Target ≤ 1.1: met."
