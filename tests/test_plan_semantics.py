"""Each rule of the simulated Kueue semantics on small hand-built queues.
Expected outcomes are reasoned out in the comments, not taken from the tool."""
from decimal import Decimal

from tests.test_plan_model import (
    GPU,
    cq,
    deployment,
    detail,
    flavor,
    job,
    lq,
    lws,
    pc,
    queue_objs,
    run,
    states,
    used,
    wpc,
)

PRIOS = [wpc("low", 10), wpc("mid", 20), wpc("high", 30)]


def test_whole_workload_or_nothing():
    # 6 GPUs; a 2-GPU pod takes 2; the 2x2-GPU Job needs 4 and 4 are left: admitted.
    # A second 2x2 Job needs 4 with 0 left and cannot take just one pod's worth.
    plan = run(queue_objs() + PRIOS + [deployment("a", 1, {GPU: 2}), job("j1", 2, {GPU: 2}), job("j2", 2, {GPU: 2})])
    s0 = plan.steps[0]
    assert states(s0) == {"ns/a#1": "admitted", "ns/j1": "admitted", "ns/j2": "pending"}
    assert used(s0) == 6
    assert "insufficient unused quota for nvidia.com/gpu in flavor f, 4 more needed" in detail(s0, "ns/j2")


def test_pending_order_is_priority_then_creation():
    # 2 GPUs. Created in order: old-low (low), mid (mid), new-low (low), each 2 GPUs, nothing
    # else running: mid goes first despite being created second; the other two wait.
    # Then quota grows to 4: old-low is older than new-low at the same priority, so it wins.
    objs = queue_objs(quota={GPU: 2}, preemption=None) + PRIOS + [
        job("old-low", 1, {GPU: 2}, prio="low"), job("mid", 1, {GPU: 2}, prio="mid"),
        job("new-low", 1, {GPU: 2}, prio="low")]
    plan = run(objs, steps=[{"title": "grow", "quota": {"clusterQueue": "cq", "flavor": "f",
                                                        "resource": GPU, "nominalQuota": 4}}])
    assert states(plan.steps[0]) == {"ns/mid": "admitted", "ns/old-low": "pending", "ns/new-low": "pending"}
    assert states(plan.steps[1]) == {"ns/mid": "admitted", "ns/old-low": "admitted", "ns/new-low": "pending"}


def test_best_effort_fifo_lets_smaller_workloads_past_and_strict_fifo_does_not():
    # 4 GPUs, 2 held by `running` (applied first). Then `big` (high, 4 GPUs) cannot fit and
    # cannot preempt (preemption off). Then `small` (low, 2 GPUs) fits: BestEffortFIFO admits
    # it, StrictFIFO keeps it behind `big`.
    def play(strategy):
        objs = [cq(quota={GPU: 4}, preemption=None, strategy=strategy), flavor(), lq()] + PRIOS + [
            job("running", 1, {GPU: 2}, prio="mid"), job("big", 1, {GPU: 4}, prio="high"),
            job("small", 1, {GPU: 2}, prio="low")]
        return run(objs, initial=[{"kind": "Job", "name": "running"}],
                   steps=[{"title": n, "submit": {"kind": "Job", "name": n}} for n in ("big", "small")]).steps[-1]
    best = play("BestEffortFIFO")
    assert states(best) == {"ns/running": "admitted", "ns/small": "admitted", "ns/big": "pending"}
    strict = play("StrictFIFO")
    assert states(strict) == {"ns/running": "admitted", "ns/small": "pending", "ns/big": "pending"}
    assert "waiting behind ns/big (StrictFIFO)" in detail(strict, "ns/small")
    # No queueingStrategy: the CRD default, BestEffortFIFO.
    assert states(play(None))["ns/small"] == "admitted"


def test_victims_are_lowest_priority_then_most_recently_admitted():
    # 6 GPUs: a (low, admitted 1st), b (low, admitted 2nd), c (mid), 2 GPUs each: full.
    # p (high, 2 GPUs) arrives. Candidates in Kueue's order: b (low, newer), a (low), c (mid).
    # Removing b frees 2: enough. Only b is preempted.
    objs = queue_objs() + PRIOS + [job("a", 1, {GPU: 2}, prio="low"), job("b", 1, {GPU: 2}, prio="low"),
                                   job("c", 1, {GPU: 2}, prio="mid")]
    p = job("p", 1, {GPU: 2}, prio="high")
    plan = run(objs + [p], initial=[{"kind": "Job", "name": n} for n in "abc"],
               steps=[{"title": "p", "submit": {"kind": "Job", "name": "p"}}])
    s1 = plan.steps[1]
    assert states(s1) == {"ns/p": "admitted", "ns/a": "admitted", "ns/c": "admitted", "ns/b": "preempted"}
    assert detail(s1, "ns/b").startswith("by ns/p")
    assert "ns/b preempted by ns/p (prioritization in the ClusterQueue; priority 10 < 30)" in s1.events


def test_victims_not_needed_are_added_back():
    # 6 GPUs: small (low, 1 GPU) and big (mid, 4 GPUs) admitted, 1 free.
    # p (high, 4 GPUs): candidates small, big. Removing small frees 2 (not enough),
    # then big frees 6: fits. Adding small back: 1 + 4 = 5 <= 6 still fits, so
    # only big is preempted. Then big (4) waits: 1 free.
    objs = queue_objs() + PRIOS + [job("small", 1, {GPU: 1}, prio="low"), job("big", 1, {GPU: 4}, prio="mid"),
                                   job("p", 1, {GPU: 4}, prio="high")]
    plan = run(objs, initial=[{"kind": "Job", "name": "small"}, {"kind": "Job", "name": "big"}],
               steps=[{"title": "p", "submit": {"kind": "Job", "name": "p"}}])
    s1 = plan.steps[1]
    assert states(s1) == {"ns/p": "admitted", "ns/small": "admitted", "ns/big": "preempted"}
    assert used(s1) == 5
    # small was never evicted (not merely evicted and re-admitted in the same step)
    assert [e for e in s1.events if "preempted" in e] == [
        "ns/big preempted by ns/p (prioritization in the ClusterQueue; priority 20 < 30)"]


def test_no_preemption_unless_it_makes_room():
    # 4 GPUs: h (high, 2) and l (low, 2). p (mid, 4) could only preempt l, which frees 2 of
    # the 4 it needs: Kueue preempts nobody.
    objs = queue_objs(quota={GPU: 4}) + PRIOS + [job("h", 1, {GPU: 2}, prio="high"),
                                                 job("l", 1, {GPU: 2}, prio="low"), job("p", 1, {GPU: 4}, prio="mid")]
    s0 = run(objs).steps[0]
    assert states(s0) == {"ns/h": "admitted", "ns/l": "admitted", "ns/p": "pending"}
    assert "no workload it may preempt would make room" in detail(s0, "ns/p")
    assert not any("preempted" in e for e in s0.events)


def test_preemption_policies():
    # 2 GPUs held by `old` (low). `new` (low, same priority, created later, 2 GPUs) and
    # `hi` (high) are submitted one at a time.
    base = [flavor(), lq()] + PRIOS + [job("old", 1, {GPU: 2}, prio="low"), job("new", 1, {GPU: 2}, prio="low"),
                                       job("hi", 1, {GPU: 2}, prio="high")]

    def play(policy, name):
        return run([cq(quota={GPU: 2}, preemption=policy)] + base, initial=[{"kind": "Job", "name": "old"}],
                   steps=[{"title": name, "submit": {"kind": "Job", "name": name}}]).steps[1]
    # Never (the CRD default): nobody is preempted, whatever the priority.
    s = play(None, "hi")
    assert states(s)["ns/hi"] == "pending"
    assert "preemption is off (withinClusterQueue: Never, reclaimWithinCohort: Never)" in detail(s, "ns/hi")
    # LowerPriority: equal priority is not enough; higher is.
    assert states(play("LowerPriority", "new"))["ns/new"] == "pending"
    assert states(play("LowerPriority", "hi"))["ns/old"] == "preempted"
    # LowerOrNewerEqualPriority: an equal-priority workload may preempt a newer one, not an older one.
    assert states(play("LowerOrNewerEqualPriority", "new"))["ns/new"] == "pending"


def test_lower_or_newer_equal_priority_preempts_newer_equals():
    # 2 GPUs. `first` (low) is created first but waits behind `hold` (high); `later` (low,
    # created after `first`) gets the GPUs once `hold` is gone... then `first` may preempt
    # it because `later` is newer at the same priority.
    objs = [cq(quota={GPU: 2}, preemption="LowerOrNewerEqualPriority"), flavor(), lq()] + PRIOS + [
        job("hold", 1, {GPU: 2}, prio="high"), job("first", 1, {GPU: 2}, prio="low")]
    later = job("later", 1, {GPU: 2}, prio="low")
    plan = run(objs + [later], initial=[{"kind": "Job", "name": "hold"}, {"kind": "Job", "name": "first"}],
               steps=[{"title": "later", "submit": {"kind": "Job", "name": "later"}},
                      {"title": "hold ends", "delete": {"kind": "Job", "name": "hold"}}])
    # After `hold` ends, the queue order is first (older) then later: first is admitted directly.
    assert states(plan.steps[2]) == {"ns/first": "admitted", "ns/later": "pending"}


def test_evicted_workloads_come_back_when_quota_frees():
    # The tutorial's arithmetic on 6 GPUs: TGI 2 GPUs/pod (high), fine-tune Job 2 pods x 2
    # GPUs (low): both admitted = 6/6. TGI to 2 pods: needs 2 more, preempts the Job (frees 4),
    # TGI#2 admitted (4/6), Job pending. TGI back to 1: the Job (4) fits again: 6/6.
    objs = queue_objs() + [pc("hi", 30), pc("lo", 20),
                           deployment("tgi", 1, {GPU: 2}, pc_name="hi"), job("ft", 2, {GPU: 2}, pc_name="lo")]
    plan = run(objs, steps=[
        {"title": "up", "scale": {"kind": "Deployment", "name": "tgi", "replicas": 2}},
        {"title": "down", "scale": {"kind": "Deployment", "name": "tgi", "replicas": 1}}])
    s0, s1, s2 = plan.steps
    assert states(s0) == {"ns/tgi#1": "admitted", "ns/ft": "admitted"} and used(s0) == 6
    assert states(s1) == {"ns/tgi#1": "admitted", "ns/tgi#2": "admitted", "ns/ft": "preempted"} and used(s1) == 4
    assert states(s2) == {"ns/tgi#1": "admitted", "ns/ft": "admitted"} and used(s2) == 6
    assert "ns/ft re-admitted to f" in s2.events


def test_scale_down_removes_waiting_pods_first_then_the_newest():
    # 4 GPUs, web pods of 2 GPUs: scale to 3 -> #1, #2 admitted, #3 waits. Scale to 2 drops #3
    # (waiting pods go first); scale to 1 drops #2 (the newest running).
    objs = queue_objs(quota={GPU: 4}) + [deployment("web", 1, {GPU: 2})]
    plan = run(objs, steps=[{"title": str(n), "scale": {"kind": "Deployment", "name": "web", "replicas": n}}
                            for n in (3, 2, 1)])
    assert states(plan.steps[1]) == {"ns/web#1": "admitted", "ns/web#2": "admitted", "ns/web#3": "pending"}
    assert set(states(plan.steps[2])) == {"ns/web#1", "ns/web#2"}
    assert set(states(plan.steps[3])) == {"ns/web#1"}


def test_lws_scale_down_removes_the_highest_group():
    # Groups are StatefulSet ordinals: 3 -> 1 removes #3 and #2, whatever their state.
    objs = queue_objs(quota={GPU: 4}) + [lws("srv", 3, 2, {GPU: 1})]
    plan = run(objs, steps=[{"title": "1", "scale": {"kind": "LeaderWorkerSet", "name": "srv", "replicas": 1}}])
    assert states(plan.steps[0]) == {"ns/srv#1": "admitted", "ns/srv#2": "admitted", "ns/srv#3": "pending"}
    assert states(plan.steps[1]) == {"ns/srv#1": "admitted"}


def test_can_never_be_admitted_names_resource_and_amount():
    # 3 GPUs: an 8-GPU pod is 5 short for ever; a pod asking for ephemeral-storage, which the
    # queue does not cover, can never be admitted either.
    objs = queue_objs(quota={GPU: 3, "cpu": 10}) + [deployment("huge", 1, {GPU: 8}),
                                                    deployment("disk", 1, {"cpu": 1, "ephemeral-storage": "10Gi"})]
    s0 = run(objs).steps[0]
    assert states(s0) == {"ns/huge#1": "never", "ns/disk#1": "never"}
    assert detail(s0, "ns/huge#1") == ("can never be admitted: one Workload needs 8 nvidia.com/gpu for pod set main "
                                       "(1 pod × 8), but ClusterQueue cq can ever get at most 3 in flavor f")
    assert detail(s0, "ns/disk#1") == ("can never be admitted: pod set main requests ephemeral-storage, which "
                                       "ClusterQueue cq does not cover (covered: nvidia.com/gpu, cpu)")


def test_quota_cut_evicts_nothing_and_a_raise_admits():
    objs = queue_objs(quota={GPU: 4}) + [job("a", 1, {GPU: 4}), job("b", 1, {GPU: 2})]

    def q(n):
        return {"title": str(n), "quota": {"clusterQueue": "cq", "flavor": "f", "resource": GPU, "nominalQuota": n}}
    plan = run(objs, steps=[q(1), q(6)])
    assert states(plan.steps[1]) == {"ns/a": "admitted", "ns/b": "never"}     # a keeps running over quota
    assert any("stays over the new quota" in e for e in plan.steps[1].events)
    assert states(plan.steps[2]) == {"ns/a": "admitted", "ns/b": "admitted"}


def test_queue_wiring_problems():
    # No queue label: not Kueue's. A missing LocalQueue or a namespace outside the
    # ClusterQueue's selector: never.
    objs = [cq(namespaceSelector={"matchLabels": {"team": "ml"}}), flavor(), lq(),
            lq("lq", ns="ml"), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml",
                                                                                     "labels": {"team": "ml"}}},
            job("free", 1, {GPU: 1}, queue=None), job("lost", 1, {GPU: 1}, queue="nope"),
            job("outside", 1, {GPU: 1}), job("inside", 1, {GPU: 1}, ns="ml")]
    s0 = run(objs).steps[0]
    assert states(s0) == {"ns/free": "unmanaged", "ns/lost": "never", "ns/outside": "never", "ml/inside": "admitted"}
    assert "LocalQueue ns/nope does not exist" in detail(s0, "ns/lost")
    assert "namespace ns is not selected" in detail(s0, "ns/outside")


def test_flavors_are_tried_in_order_and_must_match_node_selectors():
    # Flavors a (2 GPUs) then b (2 GPUs). Three 2-GPU pods: #1 fits in a, #2 goes to b,
    # #3 waits. A pod selecting pool=b skips flavor a even when a has room.
    q = cq(flavors=[("a", {GPU: 2}), ("b", {GPU: 2})], preemption=None)
    objs = [q, flavor("a", {"pool": "a"}), flavor("b", {"pool": "b"}), lq(), deployment("web", 3, {GPU: 2})]
    s0 = run(objs).steps[0]
    flavors = {r.workload: r.flavors.get(GPU) for r in s0.rows}
    assert flavors == {"ns/web#1": "a", "ns/web#2": "b", "ns/web#3": None}
    picky = deployment("picky", 1, {GPU: 2})
    picky["spec"]["template"]["spec"]["nodeSelector"] = {"pool": "b"}
    s0 = run([q, flavor("a", {"pool": "a"}), flavor("b", {"pool": "b"}), lq(), picky]).steps[0]
    assert {r.workload: r.flavors.get(GPU) for r in s0.rows} == {"ns/picky#1": "b"}


def test_preempted_deployment_pod_is_replaced_and_queues_as_new():
    # 2 GPUs. web#1 (low, 1 GPU) and web#2 (low) run; `a` (low, 2 GPUs) waits, created
    # before `hi`. `hi` (high, 1 GPU) preempts the most recently admitted web pod (#2).
    # web#2's replacement pod is newer than `a`; when `hi` ends, `a` (older) is next in line
    # but needs 2 with 1 free, so web#2 (1 GPU) is admitted instead (BestEffortFIFO).
    objs = queue_objs(quota={GPU: 2}) + PRIOS + [
        deployment("web", 2, {GPU: 1}, pod_prio="low"), job("a", 1, {GPU: 2}, prio="low"),
        job("hi", 1, {GPU: 1}, prio="high")]
    plan = run(objs, initial=[{"kind": "Deployment", "name": "web"}, {"kind": "Job", "name": "a"}],
               steps=[{"title": "hi", "submit": {"kind": "Job", "name": "hi"}},
                      {"title": "hi ends", "delete": {"kind": "Job", "name": "hi"}}])
    assert states(plan.steps[1]) == {"ns/hi": "admitted", "ns/web#1": "admitted", "ns/web#2": "preempted",
                                     "ns/a": "pending"}
    assert states(plan.steps[2]) == {"ns/web#1": "admitted", "ns/web#2": "admitted", "ns/a": "pending"}
    assert used(plan.steps[2]) == Decimal(2)


def test_a_workload_whose_pod_sets_use_two_flavors_names_both():
    # Issue #25 item 7: one resource, two pod sets on different flavors (f1 has room for one only);
    # the report names every flavor, not the first pod set's.
    from tests.kueue_cases import clusterqueue, flavor as kflavor, localqueue, replay, workload
    objs = [clusterqueue("a", [{"f1": {"cpu": 1}, "f2": {"cpu": 1}}]), kflavor("f1"), kflavor("f2"), localqueue("a")]
    wl = workload("two", "a", podsets=[("one", 1, {"cpu": 1}), ("other", 1, {"cpu": 1})])
    step = replay(objs, [], [wl]).steps[-1]
    (row,) = step.rows
    assert row.state == "admitted" and row.detail == "admitted to f1, f2"
    assert "ns/two admitted to f1/f2" in step.events
