"""TPU slice placement (generator.plan.packer) and slice-aware admission, on
hand-reasoned cases. A tpu7x cube is 4x4x4 chips; sub-slices take fixed,
aligned partitions; super-slices take whole empty cubes."""
import pytest

from generator.kernel import catalog
from generator.kernel.errors import SpecError
from generator.plan.packer import Reservation, ShapeError, slice_shape
from tests.test_plan_model import (
    TPU,
    cq,
    detail,
    flavor,
    jobset,
    lq,
    lws,
    run,
    states,
    wpc,
)

TPU7X = catalog.tpu_generation("tpu7x")


def S(text):
    return slice_shape(TPU7X, text)


def res(cubes=1, levels=None):
    return Reservation(TPU7X, cubes, levels)


def test_eight_2x2x2_fill_a_cube_and_a_ninth_does_not_fit():
    r = res()
    placed = r.place("a", [S("2x2x2")] * 8)
    # the eight aligned partitions: origins at 0 or 2 on each axis
    assert sorted(p.origin for p in placed) == [(x, y, z) for x in (0, 2) for y in (0, 2) for z in (0, 2)]
    assert r.used(0) == 64
    assert r.place("b", [S("2x2x1")]) is None


def test_mixed_sizes_fill_a_cube_exactly():
    # 32 + 16 + 8 + 4 + 4 = 64 chips
    r = res()
    for i, shape in enumerate(["2x4x4", "2x2x4", "2x2x2", "2x2x1", "2x2x1"]):
        assert r.place(f"w{i}", [S(shape)]) is not None, shape
    assert r.used(0) == 64 and r.place("more", [S("2x2x1")]) is None


def test_partitions_are_aligned_and_best_fit_packs_small_slices_together():
    # A 2x2x1 at (0,0,0). A 2x2x2 may only take an aligned 2x2x2 partition, and best fit
    # picks the fullest enclosing partitions: same 2x4x4 half, same 2x2x4 column -> (0,0,2).
    r = res()
    (a,) = r.place("a", [S("2x2x1")])
    assert a.origin == (0, 0, 0)
    (b,) = r.place("b", [S("2x2x2")])
    assert b.origin == (0, 0, 2)
    # Three more 2x2x1 fill the rest of that 2x2x4 column first ((0,0,1)) then the next column.
    (c,) = r.place("c", [S("2x2x1")])
    assert c.origin == (0, 0, 1)
    # With one 2x4x4 half holding only 16 chips, a 2x4x4 still fits in the other half,
    # and a 2x2x4 still fits next to the column.
    assert r.place("d", [S("2x4x4")])[0].origin == (2, 0, 0)
    assert r.place("e", [S("2x2x4")])[0].origin == (0, 2, 0)
    assert r.used(0) == 64


def test_orientation_is_fixed_by_the_partition_shape():
    r = res()
    assert r.kind(S("2x2x4")) == "sub"
    with pytest.raises(ShapeError, match="neither a tpu7x sub-slice"):
        r.kind(S("4x2x2"))          # not a partition GKE labels
    with pytest.raises(ShapeError, match="non-decreasing"):
        r.kind(S("8x4x4"))          # the slice controller wants 4x4x8
    assert r.kind(S("4x4x8")) == "super" and r.cubes_for(S("4x4x8")) == 2
    with pytest.raises(ShapeError, match="2x2 has 2 dimensions, this TPU needs 3"):
        S("2x2")


def test_best_fit_keeps_whole_cubes_free_for_super_slices():
    # 3 cubes. x (4x4x4) takes cube 0; y (2x2x1) then lands in cube 1 (cubes 1 and 2 tie).
    # x ends. z (2x2x1): the fullest cube with room is cube 1, so cubes 0 and 2 stay empty
    # and a 4x4x8 still fits there. (First fit by index would put z in cube 0 and block it.)
    r = res(3)
    assert r.place("x", [S("4x4x4")])[0].cubes == (0,)
    assert r.place("y", [S("2x2x1")])[0].cubes == (1,)
    r.release("x")
    assert r.place("z", [S("2x2x1")])[0].cubes == (1,)
    assert r.place("big", [S("4x4x8")])[0].cubes == (0, 2)


def test_placement_is_all_or_nothing_and_release_frees():
    r = res()
    r.place("six", [S("2x2x2")] * 6)                       # 48 chips, 2 partitions left
    assert r.place("three", [S("2x2x2")] * 3) is None      # the third would not fit
    assert r.used(0) == 48 and r.holders() == ["six"]      # nothing half-placed
    r.release("six")
    assert r.used(0) == 0 and r.place("three", [S("2x2x2")] * 3) is not None


def test_topology_levels_decide_which_shapes_can_form():
    cube_only = ("cloud.google.com/gce-topology-block", "cloud.google.com/gke-tpu-partition-4x4x4-id",
                 "kubernetes.io/hostname")
    r = res(2, cube_only)
    assert r.place("big", [S("4x4x8")]) is not None
    with pytest.raises(ShapeError, match="no level cloud.google.com/gke-tpu-partition-2x2x2-id"):
        r.fits([S("2x2x2")])
    with pytest.raises(ShapeError, match="partition-4x4x4-id"):
        res(1, ("kubernetes.io/hostname",)).fits([S("4x4x4")])


# ---------------------------------------------------------------- slice-aware admission
TOPO = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": {"name": "topo"},
        "spec": {"levels": [{"nodeLabel": "cloud.google.com/gke-tpu-partition-4x4x4-id"}]
                 + [{"nodeLabel": f"cloud.google.com/gke-tpu-partition-{s}-id"} for s in ("2x2x1", "2x2x2", "2x2x4", "2x4x4")]}}
AC = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck", "metadata": {"name": "ac"},
      "spec": {"controllerName": "accelerator.gke.io/slice"}}


def tpu_queue(chips):
    return [cq(quota={TPU: chips}, checks=("ac",)), AC, TOPO, lq(),
            flavor("f", {"cloud.google.com/gke-tpu-accelerator": "tpu7x"}, topology="topo"),
            wpc("low", 1000), wpc("mid", 2000), wpc("high", 3000)]


def test_unlimited_quota_needs_the_number_of_cubes():
    objs = tpu_queue(999999) + [jobset("subs", 6, 2, {TPU: 4}, shape="2x2x2")]
    with pytest.raises(SpecError) as e:
        run(objs)
    assert "nominalQuota is 999999 (unlimited)" in e.value.render() and "--cubes N" in e.value.render()
    s0 = run(objs, cubes=1).steps[0]
    assert states(s0) == {"ns/subs": "admitted"} and s0.cubes[0].cubes[0][0] == 48


def test_room_in_quota_but_not_in_cubes_preempts_for_a_super_slice():
    # Unlimited quota, 2 cubes. subs (low): 6 x 2x2x2 = 48 chips, all in cube 0 (best fit).
    # A 4x4x8 needs both cubes empty: quota is no obstacle, placement is. At mid priority it
    # preempts subs (the only lower one) and takes cubes 0,1; subs waits for room.
    objs = tpu_queue(999999) + [jobset("subs", 6, 2, {TPU: 4}, shape="2x2x2", prio="low"),
                                jobset("super", 1, 32, {TPU: 4}, shape="4x4x8", prio="mid")]
    plan = run(objs, initial=[{"kind": "JobSet", "name": "subs"}],
               steps=[{"title": "super", "submit": {"kind": "JobSet", "name": "super"}}], cubes=2)
    assert plan.steps[0].cubes[0].cubes == ((48, 64, ("ns/subs",)), (0, 64, ()))
    s1 = plan.steps[1]
    assert states(s1) == {"ns/super": "admitted", "ns/subs": "preempted"}
    assert "no room for 6 slices of 2x2x2 in f (0 of 2 cubes empty)" in detail(s1, "ns/subs")


def test_a_lower_priority_super_slice_waits_for_empty_cubes():
    # Same, but the super-slice is low and subs is mid: it cannot preempt, it waits.
    objs = tpu_queue(999999) + [jobset("subs", 6, 2, {TPU: 4}, shape="2x2x2", prio="mid"),
                                jobset("super", 1, 32, {TPU: 4}, shape="4x4x8", prio="low")]
    s0 = run(objs, cubes=2).steps[0]
    assert states(s0) == {"ns/subs": "admitted", "ns/super": "pending"}
    assert "no room for 1 slice of 4x4x8 in f (1 of 2 cubes empty); no workload it may preempt would make room" \
        in detail(s0, "ns/super")


def test_slices_that_can_never_form():
    # Quota of 1 cube (64 chips, derived from the ClusterQueue): a 4x4x8 (128 chips) is over
    # quota by 64; an LWS group of 3 pods x 4 chips with 2x2x2 (8-chip) slices is 12 chips,
    # not whole slices; a 4x2x2 is not a partition shape.
    objs = tpu_queue(64) + [jobset("super", 1, 32, {TPU: 4}, shape="4x4x8"),
                            lws("odd", 1, 3, {TPU: 4}, shape="2x2x2"),
                            jobset("turned", 1, 4, {TPU: 4}, shape="4x2x2")]
    plan = run(objs)
    assert "reservation of 1 cube (64 google.com/tpu / 64 chips per cube)" in plan.notes[0]
    s0 = plan.steps[0]
    assert states(s0) == {"ns/super": "never", "ns/odd#1": "never", "ns/turned": "never"}
    assert "needs 128 google.com/tpu for pod set w (32 pods × 4), but ClusterQueue cq can ever get at most 64 in " \
        "flavor f" in detail(s0, "ns/super")
    assert "12 chips of pods with slice topology 2x2x2 do not make whole 8-chip slices" in detail(s0, "ns/odd#1")
    assert "slice topology 4x2x2 is neither a tpu7x sub-slice" in detail(s0, "ns/turned")


def test_super_slice_larger_than_the_reservation_never_fits_even_with_unlimited_quota():
    objs = tpu_queue(999999) + [jobset("super", 1, 32, {TPU: 4}, shape="4x4x8")]
    s0 = run(objs, cubes=1).steps[0]
    assert "do not fit in the reservation of 1 cube even when it is empty" in detail(s0, "ns/super")


def test_the_planner_reads_devices_from_the_catalog_only():
    # One catalog of device facts: nothing in generator/plan imports the older facts view.
    import ast
    from pathlib import Path

    import generator.plan
    for f in sorted(Path(generator.plan.__file__).parent.glob("*.py")):
        tree = ast.parse(f.read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names} | \
                {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not {"facts", ".facts", "generator.kernel.gke"} & names, f"{f.name} imports facts"
