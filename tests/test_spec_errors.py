"""A broken spec exits 2 with one path-precise line per problem and leaves
the previous output untouched. The CLI runs in this process
(`generator.cli.main`), one case at a time."""
import copy
import re

import pytest

from generator import model as spec
from generator.kernel import paths, yamlio
from tests import helpers


def _profile(raw, name):
    return raw["profiles"][name]


def _workload(raw, name):
    return next(w for w in raw["workloads"] if w["name"] == name)


# (mutation, the line expected after FILE:LINE:COLUMN, what the file holds at that position:
# the position is checked against the written text, not against the code that finds it).
CASES = {
    "wrong type": (
        lambda r: _profile(r, "l4-standard")["nodePool"].__setitem__("nodes", "three"),
        "profiles.l4-standard.nodePool.nodes: 'three' should be a whole number", "nodes: three"),
    "negative node count": (
        lambda r: _profile(r, "l4-standard")["nodePool"].__setitem__("nodes", -1),
        "profiles.l4-standard.nodePool.nodes: -1 is too small: the least allowed is 1", "nodes: -1"),
    "unknown field": (
        lambda r: _profile(r, "l4-standard")["nodePool"].__setitem__("nodez", 3),
        "profiles.l4-standard.nodePool.nodez: unknown field 'nodez'; did you mean 'nodes'?", "nodez: 3"),
    "unknown profile in a workload": (
        lambda r: _workload(r, "tgi-gemma-deployment")["profiles"].append("l4-spot"),
        "workloads['tgi-gemma-deployment'].profiles[2]: unknown profile 'l4-spot'", "l4-spot"),
    "unknown machine type": (
        lambda r: _profile(r, "l4-standard")["nodePool"].__setitem__("machineType", "g2-standard-25"),
        "profiles.l4-standard.nodePool.machineType: unknown machine type 'g2-standard-25'; did you mean "
        "'g2-standard-24'?", "machineType: g2-standard-25"),
    "more GPUs than a node has": (
        lambda r: _workload(r, "tgi-gemma-deployment").__setitem__("gpus", 4),
        "workloads['tgi-gemma-deployment']: a pod asks for 4 nvidia-l4 but g2-standard-24 has 2 per node",
        "name: tgi-gemma-deployment"),
    "Autopilot without explicit requests": (
        lambda r: _workload(r, "finetune-gemma-l4").pop("resources"),
        "workloads['finetune-gemma-l4'].resources: Autopilot profiles need explicit requests for cpu, memory, "
        "ephemeral-storage", "name: finetune-gemma-l4"),
    "unknown priority tier": (
        lambda r: _workload(r, "finetune-gemma-l4").__setitem__("priority", "urgent"),
        "workloads['finetune-gemma-l4'].priority: unknown priority tier 'urgent' (known: default, high, low, medium)",
        "priority: urgent"),
    "queue not in the namespace": (
        lambda r: _workload(r, "finetune-gemma-l4").__setitem__("queue", "other"),
        "workloads['finetune-gemma-l4'].queue: no LocalQueue 'other' in namespace 'llm' on profile 'l4-standard' "
        "(it has: lq)", "queue: other"),
    "namespace not declared": (
        lambda r: _workload(r, "finetune-gemma-l4").__setitem__("namespace", "lm"),
        "workloads['finetune-gemma-l4'].namespace: namespace 'lm' is not declared in namespaces; did you mean 'llm'? "
        "(declared: llm)", "namespace: lm"),
    "latest tag": (
        lambda r: r["images"]["tgi"].__setitem__("tag", "latest"),
        "images.tgi.tag: 'latest' moves under the same name; pin a version tag", "tag: latest"),
    "unknown Kueue release": (
        lambda r: r["kueue"].__setitem__("version", "v0.99.0"),
        "kueue.version: v0.99.0 is not a pinned Kueue release", "version: v0.99.0"),
    "two workloads create the same Service": (
        lambda r: r["workloads"].insert(0, {**_workload(r, "tgi-gemma-deployment"), "name": "tgi-copy", "appLabel": "copy"}),
        "workloads['tgi-gemma-deployment']: 'tgi-gemma-deployment' would create Service/llm/llm-service, which "
        "workloads[0] also creates on profiles 'l4-autopilot', 'l4-standard'", "name: tgi-gemma-deployment"),
    "two global defaults": (
        lambda r: r["priorityTiers"]["low"]["priorityClass"].__setitem__("globalDefault", True),
        "priorityTiers: only one PriorityClass may be globalDefault, found 2", "priorityTiers:"),
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
    mutate, expected, anchor = CASES[case]
    raw = copy.deepcopy(helpers.fixture_raw())
    mutate(raw)
    spec_file = tmp_path / "bad.yaml"
    spec_file.write_text(yamlio.dump(raw))
    before = helpers.writer.read_tree(previous_output, paths.OUTPUT_DIRS)
    code, _, err = _run_synth(capsys, spec_file, previous_output)
    assert code == 2, err
    line = next(x for x in err.splitlines() if expected in x)
    m = re.match(rf"{re.escape(str(spec_file))}:(\d+):(\d+): {re.escape(expected)}", line)
    assert m, err
    text = spec_file.read_text().splitlines()[int(m.group(1)) - 1]
    assert text[int(m.group(2)) - 1:].startswith(anchor), (text, err)
    assert helpers.writer.read_tree(previous_output, paths.OUTPUT_DIRS) == before


def test_several_problems_reported_together(tmp_path, capsys):
    raw = copy.deepcopy(helpers.fixture_raw())
    _profile(raw, "l4-standard")["nodePool"]["nodes"] = 0
    raw["images"]["tgi"]["tag"] = "latest"
    spec_file = tmp_path / "bad.yaml"
    spec_file.write_text(yamlio.dump(raw))
    lines = _run_synth(capsys, spec_file, tmp_path / "out")[2].strip().splitlines()
    assert len(lines) == 2 and all(line.startswith(f"{spec_file}:") for line in lines), lines
    assert not (tmp_path / "out" / "overlays").exists()


@pytest.mark.parametrize("text,expected", [
    ("specVersion: 1\nspecVersion: 1\n", ":2:1: <root>: not valid YAML: duplicate key 'specVersion'"),
    ("name: [unclosed\n", ":2:1: <root>: not valid YAML: did not find expected ',' or ']'"),
    ("- a list\n", ": <root>: the spec must be a YAML mapping"),
])
def test_unreadable_spec(tmp_path, text, expected, capsys):
    spec_file = tmp_path / "bad.yaml"
    spec_file.write_text(text)
    code, _, err = _run_synth(capsys, spec_file, tmp_path / "out")
    assert code == 2 and err == f"{spec_file}{expected}\n", err


def test_missing_spec_file(tmp_path, capsys):
    code, _, err = _run_synth(capsys, tmp_path / "nope.yaml", tmp_path / "out")
    assert code == 2 and "cannot read the spec" in err


def test_docs_error_example_is_what_synth_prints(tmp_path, capsys, monkeypatch):
    # docs/errors.md shows four mistakes and the exact lines they give.
    page = (paths.ROOT / "docs" / "errors.md").read_text()
    block = page.split("$ gke-ml-platform synth --spec bad.yaml\n", 1)[1].split("```", 1)[0]
    raw = copy.deepcopy(helpers.fixture_raw())
    _profile(raw, "l4-standard")["nodePool"].update({"nodes": -1, "nodez": 3})
    _workload(raw, "tgi-gemma-deployment")["gpus"] = 4
    raw["images"]["tgi"]["tag"] = "latest"
    (tmp_path / "bad.yaml").write_text(yamlio.dump(raw))
    monkeypatch.chdir(tmp_path)
    code, _, err = _run_synth(capsys, "bad.yaml", tmp_path / "out")
    assert code == 2
    # docs/errors.md quotes the fields a node pool allowed when it was written; fields added since
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


def _dup_workload(r):
    r["workloads"].append(copy.deepcopy(_workload(r, "finetune-gemma-l4")))


# Two independent mistakes of each class, each expected on its own line in one run.
PAIRS = {
    "two field errors": (
        lambda r: (_profile(r, "l4-standard")["nodePool"].__setitem__("nodes", -1),
                   r["kueue"].__setitem__("versio", "v0.17.4")),
        ["profiles.l4-standard.nodePool.nodes: -1 is too small", "kueue.versio: unknown field 'versio'"]),
    "a field error and a reference": (
        lambda r: (_profile(r, "l4-standard")["nodePool"].__setitem__("nodes", "three"),
                   _workload(r, "finetune-gemma-l4").__setitem__("priority", "urgent")),
        ["nodePool.nodes: 'three' should be a whole number", ".priority: unknown priority tier 'urgent'"]),
    "two references": (
        lambda r: (_workload(r, "finetune-gemma-l4").__setitem__("priority", "urgent"),
                   _workload(r, "tgi-gemma-deployment")["profiles"].append("l4-spot")),
        ["unknown priority tier 'urgent'", "unknown profile 'l4-spot'"]),
    "a duplicated workload and a pinned tag": (
        lambda r: (_dup_workload(r), r["images"]["tgi"].__setitem__("tag", "latest")),
        ["workload 'finetune-gemma-l4' appears twice", "images.tgi.tag: 'latest'"]),
    "a duplicated workload and a field error": (
        lambda r: (_dup_workload(r), _profile(r, "l4-standard")["nodePool"].__setitem__("nodez", 3)),
        ["workload 'finetune-gemma-l4' appears twice", "unknown field 'nodez'"]),
    "a credential and a field error": (
        lambda r: (r["namespaces"][0].__setitem__("labels", {"team": "gh" + "p_" + "aB3dE5fG7h" * 4}),
                   _profile(r, "l4-standard")["nodePool"].__setitem__("nodes", -1)),
        ["contains a GitHub token (not shown)", "nodes: -1 is too small"]),
    "an unknown workload kind and a duplicated workload": (
        lambda r: (_dup_workload(r), _workload(r, "tgi-gemma-deployment").__setitem__("kind", "tgii")),
        ["workloads['tgi-gemma-deployment']: unknown kind 'tgii'",
         f"workloads[{len(helpers.fixture_raw()['workloads'])}].name: workload 'finetune-gemma-l4' appears twice"]),
    "a mapping given as a string and a duplicated workload": (
        lambda r: (_dup_workload(r), _workload(r, "t5-inference").__setitem__("autoscaling", "yes")),
        ["workloads['t5-inference'].autoscaling: 'yes' should be", "workload 'finetune-gemma-l4' appears twice"]),
    "an unknown machine type and an unknown tier": (
        lambda r: (_profile(r, "l4-standard")["nodePool"].__setitem__("machineType", "g2-standard-25"),
                   _workload(r, "finetune-gemma-l4").__setitem__("priority", "urgent")),
        ["unknown machine type 'g2-standard-25'", "unknown priority tier 'urgent'"]),
}


@pytest.mark.parametrize("case", sorted(PAIRS))
def test_every_problem_in_one_run(case, tmp_path, capsys):
    mutate, expected = PAIRS[case]
    raw = copy.deepcopy(helpers.fixture_raw())
    mutate(raw)
    spec_file = tmp_path / "bad.yaml"
    spec_file.write_text(yamlio.dump(raw))
    code, _, err = _run_synth(capsys, spec_file, tmp_path / "out")
    assert code == 2
    for want in expected:
        assert any(want in line for line in err.splitlines()), (want, err)


def test_a_duplicated_workload_is_one_line(tmp_path, capsys):
    raw = copy.deepcopy(helpers.fixture_raw())
    _dup_workload(raw)
    spec_file = tmp_path / "bad.yaml"
    spec_file.write_text(yamlio.dump(raw))
    code, _, err = _run_synth(capsys, spec_file, tmp_path / "out")
    assert code == 2 and len(err.splitlines()) == 1 and "appears twice" in err, err


@pytest.mark.parametrize("kind,value,hint,rejected", [
    ("machine type", "g2-standard-25", "did you mean 'g2-standard-24'?", None),
    ("priority tier", "hihg", "did you mean 'high'?", None),
    ("profile", "l4-spot", "(known: l4-autopilot, l4-standard)", None),
    ("profile", "x", "(known: a, b)", "x"),
])
def test_hints(kind, value, hint, rejected):
    from generator.kernel import catalog
    from generator.kernel.errors import unknown
    choices = {"machine type": catalog.MACHINE_TYPES, "priority tier": ["low", "medium", "high"],
               "profile": ["l4-autopilot", "l4-standard"] if value != "x" else ["a", "b", "x"]}[kind]
    message = unknown(kind, value, choices)
    assert hint in message, message
    assert len(message) < 200   # never the whole list of machine types
    if rejected:
        assert f"{rejected!r}" not in message.split(";", 1)[-1].split("(", 1)[-1], message


def _static_tpu(r, topology: str):
    """A GKE Standard profile with one v6e pool (machine type and topology as in GKE's
    TPU docs: ct6e-standard-4t, 4 chips per VM; 4x4 is 16 chips, 4 VMs) and a JobSet on it."""
    r["profiles"]["v6e"] = {"platform": "standard", "values": copy.deepcopy(_profile(r, "l4-standard")["values"]),
                            "nodePools": [{"name": "v6e", "machineType": "ct6e-standard-4t", "topology": topology,
                                           "nodes": 4}]}
    r["queues"].append({"clusterQueue": "tpu", "profiles": ["v6e"], "localQueues": [{"name": "lq", "namespace": "llm"}]})
    r["images"]["jax"] = {"name": "jax-slice-check", "tag": "0.1.0"}
    r["gitops"]["clusters"]["v6e"] = {"name": "v6e"}
    r["workloads"].append({"name": "jax", "kind": "tpu-jobset", "profiles": ["v6e"], "namespace": "llm",
                           "queue": "lq", "priority": "medium", "image": "jax", "shape": "4x4", "slices": 1,
                           "resources": {"cpu": "8", "memory": "32Gi"}})


def test_a_hint_never_suggests_a_rejected_pool_topology():
    raw = copy.deepcopy(helpers.fixture_raw())
    _static_tpu(raw, "4x4")
    spec.from_dict(copy.deepcopy(raw), "tpu.yaml")   # the profile as built is valid
    raw["profiles"]["v6e"]["nodePools"][0]["topology"] = "1x1x1"
    with pytest.raises(spec.SpecError) as e:
        spec.from_dict(raw, "tpu.yaml")
    lines = e.value.render().splitlines()
    assert any("profiles.v6e.nodePools['v6e'].topology:" in line for line in lines), lines
    assert not any("1x1x1" in line.split(":", 3)[-1].split(";", 1)[-1] for line in lines
                   if "topology:" not in line), lines


def test_volume_mounts_the_api_server_refuses_are_refused_in_the_spec():
    # k8s.io/kubernetes pkg/apis/core/validation/validation.go, ValidateVolumeMounts: a mountPath
    # twice is "must be unique"; validateLocalDescendingPath refuses a subPath with a '..' element.
    import copy

    from generator import model as specmod
    from generator.kernel import yamlio
    from generator.kernel.errors import SpecError
    raw = yamlio.load_strict((helpers.FIXTURES / "serving.yaml").read_text())
    i, w = next((i, w) for i, w in enumerate(raw["workloads"]) if (w.get("pod") or {}).get("volumeMounts"))
    specmod.from_dict(copy.deepcopy(raw), "s.yaml")   # as the fixture has it: accepted
    cases = {"twice": ([{"name": "data", "mountPath": "/data"}, {"name": "data", "mountPath": "/data"}],
                       f"workloads[{i}].pod.volumeMounts[1].mountPath"),
             "dotdot": ([{"name": "data", "mountPath": "/data", "subPath": "../x"}],
                        f"workloads[{i}].pod.volumeMounts[0].subPath")}
    for what, (mounts, path) in cases.items():
        bad = copy.deepcopy(raw)
        bad["workloads"][i]["pod"]["volumeMounts"] = mounts
        bad["workloads"][i]["pod"]["volumes"] = w["pod"]["volumes"]
        with pytest.raises(SpecError) as e:
            specmod.from_dict(bad, "s.yaml")
        assert path in [p.path for p in e.value.problems], (what, e.value)
    ok = copy.deepcopy(raw)
    ok["workloads"][i]["pod"]["volumeMounts"] = [{"name": "data", "mountPath": "/data", "subPath": "a..b/c"}]
    specmod.from_dict(ok, "s.yaml")   # '..' inside a name is no '..' element


def test_tolerations_and_annotations_the_api_server_refuses_are_refused_in_the_spec():
    # ValidateTolerations: a value is a label value (no spaces), tolerationSeconds only with
    # NoExecute; ValidateAnnotationsSize: all annotations at most 256 KiB (TotalAnnotationSizeLimitB).
    import copy

    from generator import model as specmod
    from generator.kernel import yamlio
    from generator.kernel.errors import SpecError
    raw = yamlio.load_strict((helpers.FIXTURES / "serving.yaml").read_text())
    i = next(i for i, w in enumerate(raw["workloads"]) if (w.get("pod") or {}).get("tolerations"))
    good = {"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute", "tolerationSeconds": 30}
    limit = 256 * 1024
    cases = [({"tolerations": [{**good, "value": "has space"}]}, "pod.tolerations[0].value"),
             ({"tolerations": [{**good, "effect": "NoSchedule"}]}, "pod.tolerations[0]"),
             ({"annotations": {"a": "x" * limit}}, "pod.annotations")]
    for pod, where in cases:
        bad = copy.deepcopy(raw)
        bad["workloads"][i]["pod"].update(pod)
        with pytest.raises(SpecError) as e:
            specmod.from_dict(bad, "s.yaml")
        assert any(p.path.startswith(f"workloads[{i}].{where}") or p.path == f"workloads[{i}].{where}"
                   for p in e.value.problems), (pod.keys(), e.value)
    ok = copy.deepcopy(raw)   # the negative half: at the limits, accepted
    ok["workloads"][i]["pod"].update({"tolerations": [good], "annotations": {"a": "x" * (limit - 1)}})
    specmod.from_dict(ok, "s.yaml")
