"""Static TPU node pools in the planner: a ResourceFlavor whose nodeLabels name a
TPU accelerator and topology stands for node pools of that one slice shape, and
each Job of a JobSet takes one whole slice.

Hand-worked numbers: TPU v6e (tpu-v6e-slice) on ct6e-standard-4t has 4 chips per
VM; a 4x4 slice is 16 chips on 4 VMs, so a Job of one slice has 4 pods with
google.com/tpu: 4 each. 8 x ct6e-standard-4t = 32 chips = two 4x4 slices."""
from __future__ import annotations

from tests.test_plan_model import TPU, cq, detail, lq, run, states

ACCEL = "cloud.google.com/gke-tpu-accelerator"
TOPOLOGY = "cloud.google.com/gke-tpu-topology"
INSTANCE = "node.kubernetes.io/instance-type"


def v6e_flavor(machine: str | None = "ct6e-standard-4t", topology: str = "4x4") -> dict:
    labels = {ACCEL: "tpu-v6e-slice", TOPOLOGY: topology}
    if machine:
        labels[INSTANCE] = machine
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "v6e"},
            "spec": {"nodeLabels": labels}}


def slice_jobset(name: str, slices: int = 1, pods: int = 4, chips: int = 4, topology: str = "4x4") -> dict:
    """One replicatedJob of `slices` Jobs, `pods` pods each with `chips` google.com/tpu."""
    pod = {"spec": {"nodeSelector": {ACCEL: "tpu-v6e-slice", TOPOLOGY: topology},
                    "containers": [{"name": "c", "image": "busybox:1.36",
                                    "resources": {"requests": {TPU: str(chips)}, "limits": {TPU: str(chips)}}}]}}
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "namespace": "ns", "labels": {"kueue.x-k8s.io/queue-name": "lq"},
                         "annotations": {"alpha.jobset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"}},
            "spec": {"replicatedJobs": [{"name": "slice", "replicas": slices, "template": {"spec": {
                "parallelism": pods, "completions": pods, "template": pod}}}]}}


def queue(chips: int = 32, **flavor_kw) -> list[dict]:
    return [cq(flavors=[("v6e", {TPU: chips})]), v6e_flavor(**flavor_kw), lq()]


def test_two_slices_admit_two_one_slice_jobsets_and_the_third_waits():
    plan = run(queue() + [slice_jobset("a"), slice_jobset("b"), slice_jobset("c")])
    s0 = plan.steps[0]
    # a: 16 of 32 chips, b: 32 of 32, c: 16 more needed.
    assert states(s0) == {"ns/a": "admitted", "ns/b": "admitted", "ns/c": "pending"}
    assert "insufficient unused quota for google.com/tpu in flavor v6e, 16 more needed" in detail(s0, "ns/c")
    assert ("flavor v6e: static TPU node pools, 4x4 slices of tpu-v6e-slice (16 chips, 4 ct6e-standard-4t VMs "
            "each): ClusterQueue cq's 32 google.com/tpu = 2 slices") in plan.notes


def test_a_jobset_of_three_slices_can_never_be_admitted_on_two():
    s0 = run(queue() + [slice_jobset("big", slices=3), slice_jobset("fits", slices=2)]).steps[0]
    # 3 x 16 = 48 chips > 32: never. 2 x 16 = 32: exactly the pool.
    assert states(s0) == {"ns/fits": "admitted", "ns/big": "never"}
    assert detail(s0, "ns/big") == ("can never be admitted: one Workload needs 48 google.com/tpu for pod set slice "
                                    "(12 pods × 4), but ClusterQueue cq can ever get at most 32 in flavor v6e "
                                    "(3 slices of 4x4 asked; 2 there, 16 chips each)")


def test_jobs_that_are_not_one_whole_slice_never_run():
    # 4 pods x 4 chips = 16 = one 4x4 slice (quiet); 3 pods = 12 and 5 pods = 20 chips are not (fires),
    # though Kueue's quota alone (32) would admit either.
    plan = run(queue(64) + [slice_jobset("whole", pods=4), slice_jobset("short", pods=3),
                            slice_jobset("over", pods=5)])
    s0 = plan.steps[0]
    assert states(s0) == {"ns/whole": "admitted", "ns/short": "never", "ns/over": "never"}
    assert ("each Job of replicatedJob slice has 3 pods x 4 google.com/tpu = 12 chips, not one whole 4x4 slice "
            "(16 chips) of flavor v6e") in detail(s0, "ns/short")
    assert "has 5 pods x 4 google.com/tpu = 20 chips, not one whole 4x4 slice" in detail(s0, "ns/over")
    assert "Kueue's quota would admit it, but GKE has no node pool for such pods" in detail(s0, "ns/short")


def test_one_pod_per_vm_with_all_its_chips_when_the_machine_type_is_known():
    # 8 pods x 2 chips = 16 chips, but a 4x4 slice of ct6e-standard-4t is 4 VMs of 4 chips: never.
    s0 = run(queue() + [slice_jobset("halves", pods=8, chips=2)]).steps[0]
    assert states(s0) == {"ns/halves": "never"}
    assert ("each Job of replicatedJob slice has 8 pods x 2 google.com/tpu, but a 4x4 slice of ct6e-standard-4t "
            "is 4 VMs: one pod per VM, each with its 4 chips") in detail(s0, "ns/halves")
    # Without the instance-type label only the chips are checked: 16 is one slice.
    assert states(run(queue(machine=None) + [slice_jobset("halves", pods=8, chips=2)]).steps[0]) == \
        {"ns/halves": "admitted"}


def test_quota_that_is_not_whole_slices_is_noted():
    plan = run(queue(40) + [slice_jobset("a"), slice_jobset("b"), slice_jobset("c")])
    # 40 chips: two 16-chip slices and 8 chips. a and b take 32; c needs 16 of the 8 left: waits.
    assert states(plan.steps[0]) == {"ns/a": "admitted", "ns/b": "admitted", "ns/c": "pending"}
    assert any("40 google.com/tpu = 2 slices and 8 chips that make no slice" in n for n in plan.notes)


def test_a_jobset_for_another_topology_does_not_match_the_flavor():
    s0 = run(queue() + [slice_jobset("other", pods=2, topology="2x4")]).steps[0]
    assert states(s0) == {"ns/other": "never"}
    assert "flavor v6e doesn't match node affinity" in detail(s0, "ns/other")


def test_a_flavor_whose_machine_cannot_have_its_topology_is_noted():
    # ct6e-standard-8t node pools are 2x4 only (catalog: Cloud TPU v6e's supported configurations).
    plan = run(queue(machine="ct6e-standard-8t") + [slice_jobset("a")])
    assert "flavor v6e: a ct6e-standard-8t node pool cannot have topology 4x4 (it can: 2x4)" in plan.notes


def test_a_leader_worker_set_group_is_one_slice():
    # An LWS group of 4 (leader + 3 workers, 4 chips each) is 16 chips: one 4x4 slice per group, so
    # two groups take both slices. A group of 2 (8 chips) is half a slice: never.
    from tests.test_plan_model import lws
    s0 = run(queue() + [lws("serve", 2, 4, {TPU: 4}, leader={TPU: 4}), lws("half", 1, 2, {TPU: 4}, leader={TPU: 4})]
             ).steps[0]
    assert states(s0) == {"ns/serve#1": "admitted", "ns/serve#2": "admitted", "ns/half#1": "never"}
    assert "each LWS group has 2 pods x 4 google.com/tpu = 8 chips, not one whole 4x4 slice" in detail(s0, "ns/half#1")
