"""A broken spec exits 2 with one path-precise line per problem and leaves
the previous output untouched. The CLI runs in this process
(`generator.cli.main`), one case at a time."""
import copy

import pytest

from generator import paths, yamlio
from tests import helpers


def _profile(raw, name):
    return raw["profiles"][name]


def _workload(raw, name):
    return next(w for w in raw["workloads"] if w["name"] == name)


CASES = {
    "wrong type": (
        lambda r: _profile(r, "l4-standard")["nodePool"].__setitem__("nodes", "three"),
        "profiles.l4-standard.nodePool.nodes: 'three' should be a whole number"),
    "negative node count": (
        lambda r: _profile(r, "l4-standard")["nodePool"].__setitem__("nodes", -1),
        "profiles.l4-standard.nodePool.nodes: -1 is too small: the least allowed is 1"),
    "unknown field": (
        lambda r: _profile(r, "l4-standard")["nodePool"].__setitem__("nodez", 3),
        "profiles.l4-standard.nodePool.nodez: unknown field 'nodez'; did you mean 'nodes'?"),
    "unknown profile in a workload": (
        lambda r: _workload(r, "tgi-gemma-deployment")["profiles"].append("l4-spot"),
        "workloads[0].profiles[2]: unknown profile 'l4-spot'"),
    "unknown machine type": (
        lambda r: _profile(r, "l4-standard")["nodePool"].__setitem__("machineType", "g2-standard-2"),
        "profiles.l4-standard.nodePool.machineType: unknown machine type 'g2-standard-2'"),
    "more GPUs than a node has": (
        lambda r: _workload(r, "tgi-gemma-deployment").__setitem__("gpus", 4),
        "workloads[0]: a pod asks for 4 nvidia-l4 but g2-standard-24 has 2 per node"),
    "Autopilot without explicit requests": (
        lambda r: _workload(r, "finetune-gemma-l4").pop("resources"),
        "workloads[1].resources: Autopilot profiles need explicit requests for cpu, memory, ephemeral-storage"),
    "unknown priority tier": (
        lambda r: _workload(r, "finetune-gemma-l4").__setitem__("priority", "urgent"),
        "workloads[1].priority: unknown priority tier 'urgent'"),
    "queue not in the namespace": (
        lambda r: _workload(r, "finetune-gemma-l4").__setitem__("queue", "other"),
        "workloads[1].queue: no LocalQueue 'other' in namespace 'llm' on profile 'l4-standard'"),
    "latest tag": (
        lambda r: r["images"]["tgi"].__setitem__("tag", "latest"),
        "images.tgi.tag: 'latest' moves under the same name; pin a version tag"),
    "unknown Kueue release": (
        lambda r: r["kueue"].__setitem__("version", "v0.99.0"),
        "kueue.version: v0.99.0 is not a pinned Kueue release"),
    "two workloads create the same Service": (
        lambda r: r["workloads"].insert(0, {**_workload(r, "tgi-gemma-deployment"), "name": "tgi-copy", "appLabel": "copy"}),
        "workloads[1]: 'tgi-gemma-deployment' would create Service/llm/llm-service, which workloads[0] also creates on "
        "profiles 'l4-autopilot', 'l4-standard'"),
    "two global defaults": (
        lambda r: r["priorityTiers"]["low"]["priorityClass"].__setitem__("globalDefault", True),
        "priorityTiers: only one PriorityClass may be globalDefault, found 2"),
}


def _run_synth(capsys, spec_file, out):
    return helpers.run_cli(capsys, "synth", "--spec", spec_file, "--out", out)


@pytest.fixture(scope="module")
def previous_output(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    helpers.synth_into(out, helpers.fixture_raw())
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_spec_exits_2_with_path(case, tmp_path, previous_output, capsys):
    mutate, expected = CASES[case]
    raw = copy.deepcopy(helpers.fixture_raw())
    mutate(raw)
    spec_file = tmp_path / "bad.yaml"
    spec_file.write_text(yamlio.dump(raw))
    before = helpers.writer.read_tree(previous_output, paths.OUTPUT_DIRS)
    code, _, err = _run_synth(capsys, spec_file, previous_output)
    assert code == 2, err
    assert f"{spec_file}: {expected}" in err, err
    assert helpers.writer.read_tree(previous_output, paths.OUTPUT_DIRS) == before


def test_several_problems_reported_together(tmp_path, capsys):
    raw = copy.deepcopy(helpers.fixture_raw())
    _profile(raw, "l4-standard")["nodePool"]["nodes"] = 0
    raw["images"]["tgi"]["tag"] = "latest"
    spec_file = tmp_path / "bad.yaml"
    spec_file.write_text(yamlio.dump(raw))
    lines = _run_synth(capsys, spec_file, tmp_path / "out")[2].strip().splitlines()
    assert len(lines) == 2 and all(line.startswith(f"{spec_file}: ") for line in lines), lines
    assert not (tmp_path / "out" / "overlays").exists()


@pytest.mark.parametrize("text,expected", [
    ("specVersion: 1\nspecVersion: 1\n", "duplicate key 'specVersion'"),
    ("name: [unclosed\n", "not valid YAML: line"),
    ("- a list\n", "the spec must be a YAML mapping"),
])
def test_unreadable_spec(tmp_path, text, expected, capsys):
    spec_file = tmp_path / "bad.yaml"
    spec_file.write_text(text)
    code, _, err = _run_synth(capsys, spec_file, tmp_path / "out")
    assert code == 2 and expected in err, err


def test_missing_spec_file(tmp_path, capsys):
    code, _, err = _run_synth(capsys, tmp_path / "nope.yaml", tmp_path / "out")
    assert code == 2 and "cannot read the spec" in err


def test_readme_error_example_is_what_synth_prints(tmp_path, capsys, monkeypatch):
    # The README's "Changing the platform" shows four mistakes and the exact lines they give.
    readme = (paths.ROOT / "README.md").read_text()
    block = readme.split("$ python -m generator synth --spec bad.yaml\n", 1)[1].split("```", 1)[0]
    raw = copy.deepcopy(helpers.fixture_raw())
    _profile(raw, "l4-standard")["nodePool"].update({"nodes": -1, "nodez": 3})
    _workload(raw, "tgi-gemma-deployment")["gpus"] = 4
    raw["images"]["tgi"]["tag"] = "latest"
    (tmp_path / "bad.yaml").write_text(yamlio.dump(raw))
    monkeypatch.chdir(tmp_path)
    code, _, err = _run_synth(capsys, "bad.yaml", tmp_path / "out")
    assert code == 2
    # The README quotes the fields a node pool allowed when it was written; fields added since
    # (topologyAware) lengthen that list only.
    got, want = err.splitlines(), block.splitlines()
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if "(allowed: " in w:
            assert g.split("(allowed: ")[0] == w.split("(allowed: ")[0], (g, w)
            assert set(w.split("(allowed: ")[1].rstrip(")").split(", ")) \
                <= set(g.split("(allowed: ")[1].rstrip(")").split(", ")), (g, w)
        else:
            assert g == w
