"""`plan` follows the Kueue release the spec pins (issue #23 item 8): the profile's release for
overlays/<profile>, --kueue-version over it, and the header says which rules it followed.
What differs between the modelled releases is read from Kueue itself (kube_features.go and
pkg/scheduler at v0.12.3, v0.17.4, v0.19.2)."""
import json

from generator import cli
from generator.kernel import yamlio
from generator.plan import overlay, releases, simulate
from tests import helpers
from tests.kueue_cases import clusterqueue, flavor, localqueue, workload
from tests.test_plan_expectations import _write_repo

CPU = "cpu"


def _plan(capsys, *argv):
    rc = cli.main(["plan", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _repo(tmp_path, monkeypatch, profile_release=None):
    raw = yamlio.load_all((helpers.FIXTURES / "platform.yaml").read_text())[0]
    if profile_release:
        raw["profiles"]["l4-standard"]["kueueVersion"] = profile_release
    (tmp_path / "platform.yaml").write_text(yamlio.dump(raw))
    _write_repo(tmp_path, 4)
    (tmp_path / "overlays" / "gpu").rename(tmp_path / "overlays" / "l4-standard")
    helpers.record_output(tmp_path)   # overlays written by hand stand for synth's: say they are current
    monkeypatch.chdir(tmp_path)


def test_the_release_the_spec_pins_for_the_profile(tmp_path, monkeypatch, capsys):
    _repo(tmp_path, monkeypatch, "v0.19.2")
    rc, out, _ = _plan(capsys, "overlays/l4-standard", "--format", "json")
    assert rc == 0
    doc = json.loads(out)
    assert doc["kueueVersion"] == "v0.19.2"
    assert doc["kueueVersionSource"] == "pinned by platform.yaml for profile l4-standard"
    rc, out, _ = _plan(capsys, "overlays/l4-standard")
    assert out.splitlines()[1] == "Rules of Kueue v0.19.2 (pinned by platform.yaml for profile l4-standard)"


def test_kueue_version_overrides_the_spec(tmp_path, monkeypatch, capsys):
    _repo(tmp_path, monkeypatch, "v0.19.2")
    rc, out, _ = _plan(capsys, "overlays/l4-standard", "--kueue-version", "v0.12.3", "--format", "markdown")
    assert rc == 0 and "_Rules of Kueue v0.12.3 (--kueue-version)_" in out


def test_an_overlay_outside_the_repository_follows_the_default(tmp_path, monkeypatch, capsys):
    _repo(tmp_path, monkeypatch)
    f = tmp_path / "stream.yaml"
    f.write_text(yamlio.dump_all(helpers.kustomize(tmp_path / "overlays" / "l4-standard")))
    rc, out, _ = _plan(capsys, str(f))
    assert rc == 0 and out.splitlines()[1].startswith(f"Rules of Kueue {releases.DEFAULT} (the default")


def test_each_release_has_its_gates():
    # kube_features.go: FairSharingPreemptWithinNominal and FairSharingPrioritizeNonBorrowing are
    # beta (on) at v0.17.4 and v0.19.2 and absent at v0.12.3; FlavorFungibilityPreserveScanProgress
    # is beta (on) at v0.19.2 only.
    assert releases.rules("v0.12.3").gates == frozenset()
    assert releases.rules("v0.17.4").gates == {"FairSharingPreemptWithinNominal", "FairSharingPrioritizeNonBorrowing"}
    assert "FlavorFungibilityPreserveScanProgress" in releases.rules("v0.19.2").gates
    assert releases.rules("v0.18.0").release == "v0.17.4"      # not modelled: the nearest older one


def _skipped_entry(release: str) -> simulate.State:
    """Two heads of one cohort in one cycle that both fit alone: the second no longer fits
    after the first is admitted, so it is skipped (scheduler.go: "Workload no longer fits after
    processing another workload")."""
    objs = [clusterqueue("a", [{"f1": {CPU: 2}, "f2": {CPU: 2}}], "co",
                         fungibility={"whenCanBorrow": "MayStopSearch"}),
            clusterqueue("b", [{"f1": {CPU: 0}}], "co"),
            flavor("f1"), flavor("f2"), localqueue("a"), localqueue("b"),
            workload("first", "a", {CPU: 2}, priority=10), workload("second", "b", {CPU: 2})]
    sim = simulate.Simulator(overlay.build("case", objs), kueue_version=release)
    sim.begin_step()
    for owner in sim.cluster.owners:
        sim.submit(owner)
    sim.cycle()
    return sim.states["ns/second"]


def test_a_skipped_entry_keeps_its_scan_progress_from_v0_19():
    # v0.17.4 setSkipped: LastAssignment = nil; v0.19.2 markSkipped keeps it when
    # FlavorFungibilityPreserveScanProgress is on (its default).
    st = _skipped_entry("v0.17.4")
    assert st.reason.startswith("no longer fits") and st.last_tried is None
    st = _skipped_entry("v0.19.2")
    assert st.reason.startswith("no longer fits") and st.last_tried is not None
