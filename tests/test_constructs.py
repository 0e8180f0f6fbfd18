"""A platform repository's own constructs (platform.yaml `constructs:`, docs/constructs.md):
the page's example file, run against this suite's fixture spec, adds a cdk8s-plus Deployment,
an imported-CRD-style object and a patch of a generated Deployment, and synth, check,
validate, plan and diff all see them. A file outside the repository, or one that raises, is
one line, exit 2, nothing written."""
from __future__ import annotations

import re
import shutil

import pytest

from generator.kernel import paths, yamlio

from . import helpers
from .test_diff import commit_all, git

DOC = paths.ROOT / "docs" / "constructs.md"
EXAMPLE = re.search(r'```python title="constructs/sidecars.py"\n(.*?)```', DOC.read_text(), re.S)
STANDARD = "overlays/l4-standard"


def _repo(root, code: str | None = None, constructs: str = "constructs/sidecars.py"):
    """The fixture spec as a repository's platform.yaml, naming a constructs file."""
    raw = yamlio.load_strict(helpers.FIXTURE_SPEC.read_text())
    raw["constructs"] = [constructs]
    (root / "constructs").mkdir(parents=True, exist_ok=True)
    if code is not None:
        (root / "constructs" / "sidecars.py").write_text(code)
    return helpers.write_spec(root / "platform.yaml", raw)


def _object(root, rel: str) -> dict:
    text = (root / rel).read_text()
    return yamlio.load_strict(text.partition("\n")[2])


def test_the_page_has_its_example():
    assert EXAMPLE, "docs/constructs.md lost its constructs/sidecars.py example"


def test_synth_check_validate_plan_and_diff_see_the_example(tmp_path, capsys):
    root = tmp_path
    git(root, "init", "-q", "-b", "main")
    helpers.synth_into(root, yamlio.load_strict(helpers.FIXTURE_SPEC.read_text()))
    shutil.copy(helpers.FIXTURE_SPEC, root / "platform.yaml")
    commit_all(root, "platform")
    git(root, "checkout", "-q", "-b", "change")
    spec = _repo(root, EXAMPLE.group(1))

    code, out, err = helpers.run_cli(capsys, "synth", "--spec", spec, "--out", root)
    assert code == 0, err
    # The cdk8s-plus Deployment, hardened like the generator's pods; the CRD's object; the patch.
    web = _object(root, f"{STANDARD}/deployment_llm_status-page.yaml")
    pod = web["spec"]["template"]["spec"]
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["securityContext"]["runAsUser"] == 101
    assert pod["containers"][0]["image"] == "nginxinc/nginx-unprivileged:1.27"
    monitor = _object(root, f"{STANDARD}/podmonitoring_llm_tgi-metrics.yaml")
    assert (monitor["apiVersion"], monitor["spec"]["endpoints"]) == ("monitoring.googleapis.com/v1",
                                                                     [{"port": "http", "interval": "30s"}])
    assert _object(root, f"{STANDARD}/deployment_llm_tgi-gemma-deployment.yaml")["spec"]["revisionHistoryLimit"] == 3
    kustomization = _object(root, f"{STANDARD}/kustomization.yaml")
    assert {"deployment_llm_status-page.yaml", "podmonitoring_llm_tgi-metrics.yaml"} <= set(kustomization["resources"])

    code, out, err = helpers.run_cli(capsys, "check", "--spec", spec, "--out", root)
    assert code == 0, err
    (root / f"{STANDARD}/podmonitoring_llm_tgi-metrics.yaml").unlink()
    code, out, err = helpers.run_cli(capsys, "check", "--spec", spec, "--out", root)
    assert code == 1 and f"missing: {STANDARD}/podmonitoring_llm_tgi-metrics.yaml" in err
    assert helpers.run_cli(capsys, "synth", "--spec", spec, "--out", root)[0] == 0

    code, out, err = helpers.run_cli(capsys, "validate", "--spec", spec, "--out", root)
    assert code == 0 and "0 error(s)" in out + err, out + err

    code, out, err = helpers.run_cli(capsys, "plan", str(root / STANDARD))
    assert "llm/status-page#1" in out, out

    code, out, err = helpers.run_cli(capsys, "diff", "--out", root, "--spec", spec)
    assert code == 0, err
    assert "    + Deployment llm/status-page" in out.splitlines()
    assert "    + PodMonitoring llm/tgi-metrics" in out.splitlines()
    assert "        spec.revisionHistoryLimit: (unset) → 3" in out.splitlines()


def _refused(capsys, root, spec) -> str:
    code, _, err = helpers.run_cli(capsys, "synth", "--spec", spec, "--out", root / "out")
    lines = helpers.without_warnings(err)
    assert (code, len(lines)) == (2, 1), err
    assert not (root / "out").exists()
    return lines[0]


def test_an_exception_names_the_file_and_line(tmp_path, capsys):
    code = EXAMPLE.group(1).replace('find(chart, "Deployment", "tgi-gemma-deployment")', 'find(chart, "Deployment", "tgi")')
    line = next(i for i, text in enumerate(code.splitlines(), 1) if 'find(chart, "Deployment", "tgi")' in text)
    err = _refused(capsys, tmp_path, _repo(tmp_path, code))
    assert err.endswith(f"constructs[0]: constructs/sidecars.py:{line}: LookupError: no Deployment objects named "
                        "'tgi' in chart overlays--l4-standard"), err


def test_an_error_on_import_names_the_file_and_line(tmp_path, capsys):
    err = _refused(capsys, tmp_path, _repo(tmp_path, "import cdk8s\n\nraise RuntimeError('not ready')\n"))
    assert err.endswith("constructs[0]: constructs/sidecars.py:3: RuntimeError: not ready"), err


def test_a_pod_of_a_construct_must_run_as_non_root(tmp_path, capsys):
    code = EXAMPLE.group(1).replace("security_context=kplus.PodSecurityContextProps(user=101, group=101, "
                                    "ensure_non_root=True),", "")
    err = _refused(capsys, tmp_path, _repo(tmp_path, code))
    assert err.endswith("constructs: the pods of Deployment status-page would run as root: give them runAsNonRoot: "
                        "true and a runAsUser in the pod's securityContext"), err


@pytest.mark.parametrize("name, message", [
    ("../sidecars.py", "'../sidecars.py': a .py file inside the repository, relative to the spec file "
                       "(like constructs/sidecars.py)"),
    ("/etc/sidecars.py", "'/etc/sidecars.py': a .py file inside the repository, relative to the spec file "
                         "(like constructs/sidecars.py)"),
    ("constructs/missing.py", "constructs/missing.py: no such file beside the spec"),
])
def test_a_file_outside_the_repository_is_refused(tmp_path, capsys, name, message):
    err = _refused(capsys, tmp_path, _repo(tmp_path, None, name))
    assert err.endswith(f"constructs[0]: {message}"), err


def test_a_symbolic_link_out_of_the_repository_is_refused(tmp_path, capsys):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "sidecars.py").write_text("def build(app, charts, spec):\n    pass\n")
    root = tmp_path / "repo"
    spec = _repo(root, None, "linked/sidecars.py")
    (root / "linked").symlink_to(outside)
    err = _refused(capsys, root, spec)
    assert err.endswith("constructs[0]: linked/sidecars.py: linked is a symbolic link; constructs are read from "
                        "the repository itself"), err


def test_init_writes_an_example_constructs_file_that_synth_runs(tmp_path, capsys):
    repo = tmp_path / "platform"
    code, _, err = helpers.run_cli(capsys, "init", "--no-git", "--constructs", repo)
    assert code == 0, err
    assert "constructs: [constructs/example.py]" in (repo / "platform.yaml").read_text()
    code, _, err = helpers.run_cli(capsys, "synth", "--spec", repo / "platform.yaml", "--out", repo)
    assert code == 0, err
    made = sorted(repo.glob("overlays/*/configmap_*_platform-info.yaml"))
    assert made and len(made) == len(list((repo / "overlays").iterdir()))
    info = _object(repo, str(made[0].relative_to(repo)))
    assert info["data"]["profile"] == made[0].parent.name


def test_a_credential_in_a_constructs_object_is_refused(tmp_path, capsys):
    # A GitHub personal access token's shape (ghp_ and 36 characters), split so that no scanner flags this file.
    token = "ghp" + "_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    code = EXAMPLE.group(1) + (
        "\n\ndef _extra(chart):\n    cdk8s.ApiObject(chart, 'cm', api_version='v1', kind='ConfigMap',\n"
        "                    metadata=cdk8s.ApiObjectMetadata(name='cm', namespace='llm'))"
        f".add_json_patch(cdk8s.JsonPatch.add('/data', {{'token': '{token}'}}))\n\n\n"
        "_build = build\n\n\ndef build(app, charts, spec):\n    _build(app, charts, spec)\n"
        "    _extra(charts['overlays/l4-standard'])\n")
    err = _refused(capsys, tmp_path, _repo(tmp_path, code))
    assert "constructs: ConfigMap/cm: data.token: " in err and token not in err, err
