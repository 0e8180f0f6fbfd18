"""The installed tool acts on the platform repository of the working directory
(the folder of the nearest platform.yaml at or above it), never on its own
install location; `init` makes such a repository from an example; the wheel
carries every file the tool reads and declares every package it imports."""
from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import sys
from pathlib import Path

import pytest
import yaml

from generator import cli, init
from generator.kernel import paths
from tests import helpers


def _run(capsys, *args) -> tuple[int, str, str]:
    return helpers.run_cli(capsys, *args)


# ---------------------------------------------------------------- finding the repository

def test_the_spec_is_found_in_the_working_directory_or_above(tmp_path, monkeypatch):
    (tmp_path / "platform.yaml").write_text("specVersion: 1\n")
    (tmp_path / "overlays" / "x").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "overlays" / "x")
    assert paths.find_spec() == tmp_path.resolve() / "platform.yaml"
    assert paths.platform_dir() == tmp_path.resolve()


def test_outside_a_platform_repository_commands_say_so_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for command in ("synth", "check", "diff"):
        code, out, err = _run(capsys, command)
        assert (code, out) == (2, ""), command
        assert err == (f"{command}: no platform.yaml in {tmp_path.resolve()} or any folder above it; run the command "
                       "inside a platform repository, create one with `gke-ml-platform init DIR`, or pass "
                       "--spec FILE\n")


def test_version_names_the_pinned_releases_of_the_versions_table(capsys):
    table = yaml.safe_load(paths.VERSIONS.read_text())   # read here, not through generator.kernel.versions
    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    out = capsys.readouterr().out
    assert e.value.code == 0
    assert out == (f"python -m generator {importlib.metadata.version('gke-ml-platform')} "
                   f"(Kueue {table['kueue']['default']}, JobSet {table['jobset']['default']}, "
                   f"LWS {table['lws']['default']}, Kubernetes {table['kubernetes']['default']})\n")


# ---------------------------------------------------------------- init

def test_init_lists_every_example_file(capsys):
    code, out, _ = _run(capsys, "init", "--list-examples")
    names = sorted(p.stem for p in (paths.ROOT / "examples").glob("*.yaml"))
    assert code == 0 and [line.split(":")[0].removesuffix(" (default)") for line in out.splitlines()] == names
    assert f"{init.DEFAULT_EXAMPLE} (default): " in out


def test_each_example_is_listed_by_its_first_sentence(capsys):
    # Issue 34 acceptance: the multikueue header's table and the cohort header's note on this checkout's tests ran
    # into the listing. The expected sentences are read off the example files by eye.
    code, out, _ = _run(capsys, "init", "--list-examples")
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert lines["multikueue"].endswith("and the first worker that admits it runs it.")
    assert lines["team-jobset"].endswith("and the spec says where it runs.")
    assert lines["kueue-cohort"].endswith("a spillover ClusterQueue that lends it to both.")


@pytest.mark.parametrize("name", sorted(p.stem for p in (paths.ROOT / "examples").glob("*.yaml")))
def test_an_inited_repository_names_no_file_or_command_of_this_checkout(tmp_path, capsys, name):
    """What init writes is the user's: its comments name `gke-ml-platform` commands and documentation pages by
    title, never this checkout's tests/, docs/, examples/ paths, `generator ...`, `python -m` or make."""
    repo = tmp_path / "p"
    assert _run(capsys, "init", "--no-git", "--example", name, repo)[0] == 0
    bad = re.compile(r"(?<![\w./-])(tests|docs|examples)/|`generator |python -m generator\b|`make ")
    for path in sorted(p for p in repo.rglob("*") if p.is_file() and p.suffix in (".yaml", ".md", ".txt")):
        if ".github" in path.parts:
            continue   # the workflow runs the tool's helper module (`python -m generator.fittext`) on purpose
        hits = [line for line in path.read_text().splitlines() if bad.search(line)]
        assert hits == [], f"{path.relative_to(repo)}: {hits}"


def test_init_writes_a_repository_from_the_default_example(tmp_path, capsys):
    target = tmp_path / "my-platform"
    code, out, err = _run(capsys, "init", target)
    assert code == 0, err
    scen = paths.ROOT / "examples" / "scenarios" / init.DEFAULT_EXAMPLE
    expected = {"platform.yaml", "requirements.txt", ".gitignore", "README.md", ".github/workflows/platform.yaml",
                *(f"scenarios/{p.relative_to(scen).as_posix()}" for p in scen.glob("*/*.yaml"))}
    written = {p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file() and ".git/" not in
               p.relative_to(target).as_posix() + "/" and not p.relative_to(target).as_posix().startswith(".git/")}
    assert written == expected
    assert (target / "platform.yaml").read_bytes() == (paths.ROOT / "examples" / f"{init.DEFAULT_EXAMPLE}.yaml").read_bytes()
    pins = [line for line in (target / "requirements.txt").read_text().splitlines() if not line.startswith("#")]
    version = importlib.metadata.version('gke-ml-platform')   # no --tool-source: the placeholder, never a bare pin
    assert pins == [f"gke-ml-platform @ https://tool-source.invalid/gke_ml_platform-{version}-py3-none-any.whl"]
    assert (target / ".git").is_dir()                                   # git init, no commit
    assert oct((target).stat().st_mode & 0o777) != oct(0o700)           # an ordinary folder, not mkdtemp's
    assert out.splitlines()[-1] == f"next: cd {target} && gke-ml-platform synth && gke-ml-platform validate && " \
                                   "gke-ml-platform plan"


@pytest.mark.parametrize("name", sorted(p.stem for p in (paths.ROOT / "examples").glob("*.yaml")))
def test_init_takes_any_example(tmp_path, capsys, name, monkeypatch):
    code, _, err = _run(capsys, "init", "--no-git", "--example", name, tmp_path / "p")
    assert code == 0, err
    assert (tmp_path / "p" / "platform.yaml").read_text() == (paths.ROOT / "examples" / f"{name}.yaml").read_text()
    monkeypatch.chdir(tmp_path / "p")       # with every file it names (a manifest workload's): the spec loads
    from generator import model as spec_model
    spec_model.load(tmp_path / "p" / "platform.yaml")


def test_init_refuses_a_non_empty_folder_and_an_unknown_example(tmp_path, capsys):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine\n")
    code, out, err = _run(capsys, "init", tmp_path / "taken")
    assert (code, out) == (2, "")
    assert err == (f"init: {tmp_path / 'taken'} is not empty (it has notes.txt); init writes a new platform "
                   "repository into a new or empty folder only\n")
    assert os.listdir(tmp_path / "taken") == ["notes.txt"]
    code, out, err = _run(capsys, "init", "--example", "nope", tmp_path / "new")
    assert (code, out) == (2, "") and err.startswith("init: no example 'nope'; the examples are: ")
    assert len(err.splitlines()) == 1 and sorted(os.listdir(tmp_path)) == ["taken"]   # nothing half-written


def test_init_fills_an_empty_folder_in_place(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(capsys, "init", "--no-git")
    assert code == 0 and (tmp_path / "platform.yaml").is_file()
    assert out.splitlines()[-1] == "next: gke-ml-platform synth && gke-ml-platform validate && gke-ml-platform plan"


def test_the_written_workflow_is_hardened_like_this_repositorys():
    from tests.test_ci_workflow import VERIFIED
    text = init.files(init.DEFAULT_EXAMPLE)[init.WORKFLOW]
    wf = yaml.safe_load(text)
    assert wf["permissions"] == {}
    for ref, comment in re.findall(r"^\s*(?:- )?uses: (\S+)(.*)$", text, re.MULTILINE):
        action, _, sha = ref.partition("@")
        assert (sha, comment.strip()) == (VERIFIED[action][0], f"# {VERIFIED[action][1]}"), ref
    for name, job in wf["jobs"].items():
        assert job["timeout-minutes"]
        for step in job["steps"]:
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, name
            assert "${{" not in step.get("run", ""), f"{name}: expressions go through env, not into shell"
    runs = [s.get("run", "") for s in wf["jobs"]["platform"]["steps"]]
    order = ["pip install --disable-pip-version-check -r requirements.txt", "gke-ml-platform crds",
             "gke-ml-platform check", "gke-ml-platform validate", "gke-ml-platform plan --format markdown"]
    at = [next(i for i, r in enumerate(runs) if o in r) for o in order]
    assert at == sorted(at)


def test_the_written_plan_step_reports_to_the_job_summary_also_when_the_plan_fails(tmp_path):
    from tests.test_ci_workflow import run_plan_step_that_fails
    wf = yaml.safe_load(init.files(init.DEFAULT_EXAMPLE)[init.WORKFLOW])
    (step,) = [s for s in wf["jobs"]["platform"]["steps"] if "gke-ml-platform plan" in s.get("run", "")]
    assert step["if"] == "${{ !cancelled() }}"     # also after a failed check or validate
    assert run_plan_step_that_fails(step, tmp_path, "gke-ml-platform") == (1, "## Kueue plan\n")


# ---------------------------------------------------------------- what the wheel carries

def _read_by_the_tool() -> list[Path]:
    """The data files the code reads through generator.kernel.paths."""
    return [paths.VERSIONS, paths.SPEC_SCHEMA, paths.SCHEMAS / "scenario.schema.json", paths.LOCUSTFILE,
            *paths.EXAMPLES.rglob("*.yaml")]


def test_the_wheel_carries_every_data_file_the_tool_reads():
    import fnmatch
    for f in _read_by_the_tool():
        rel = f.relative_to(paths.DATA).as_posix()
        assert f.is_file() and any(fnmatch.fnmatchcase(rel, p) for p in paths.DATA_FILES), rel
    setup_py = (paths.ROOT / "setup.py").read_text()
    assert "paths.py" in setup_py and "DATA_FILES" in setup_py   # setup.py copies what paths names


# Modules that may name this checkout: paths itself, bench's and `make images`' helpers, the docs
# generator (docs/reference/ of this repository), and two
# fallbacks that apply only when the tool runs from a checkout (upstream.shared_dir, tree._source_name).
CHECKOUT_ONLY = {"kernel/paths.py", "images.py", "builders/tree.py", "kernel/upstream.py", "docsgen.py"}


def test_no_command_reads_or_writes_the_checkout():
    users = set()
    for f in (paths.ROOT / "generator").rglob("*.py"):
        if re.search(r"\bpaths\.ROOT\b|\bROOT\b\s*/|__file__", f.read_text()):
            users.add(f.relative_to(paths.ROOT / "generator").as_posix())
    assert users - {"__init__.py", "validate/cel.py", "kernel/schemacheck.py"} == CHECKOUT_ONLY


def _install_requires() -> set[str]:
    import configparser
    cfg = configparser.ConfigParser()
    cfg.read(paths.ROOT / "setup.cfg")
    lines = [x.split("#")[0].strip() for x in cfg["options"]["install_requires"].splitlines()]
    return {re.split(r"[<>=!~ ;\[]", x)[0].lower().replace("_", "-") for x in lines if x}


# Imported only on request, with a one-line message when missing: `plan --plot` draws with matplotlib.
OPTIONAL = {"matplotlib"}


def test_every_package_the_generator_imports_is_declared():
    tops: set[str] = set()
    for f in (paths.ROOT / "generator").rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Import):
                tops |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                tops.add(node.module.split(".")[0])
    third_party = tops - set(sys.stdlib_module_names) - {"generator"} - OPTIONAL
    dists = importlib.metadata.packages_distributions()
    needed = {d.lower().replace("_", "-") for m in third_party for d in dists.get(m, [m])}
    assert needed - _install_requires() == set()
    heavy = {"torch", "jax", "jaxlib", "torchserve", "transformers"}
    assert not heavy & _install_requires()


# ---------------------------------------------------------------- working in the new repository

def test_commands_act_on_the_repository_of_the_working_directory(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "my-platform"
    assert _run(capsys, "init", "--no-git", repo)[0] == 0
    (repo / ".validate.yaml").write_text("disable: [XX]\n")    # read beside the spec: an unknown family
    monkeypatch.chdir(repo / "scenarios")                       # any folder inside the repository
    monkeypatch.setenv("CRD_DIR", str(helpers.CRD_ROOT))
    code, out, err = _run(capsys, "synth")
    assert code == 0, err
    # The example has no `gitops:`: no argocd/ folder, not even an empty one.
    assert out == f"synth: wrote 16 files under base/, overlays/, controllers/ of {repo.resolve()}\n"
    assert sorted(p.name for p in repo.iterdir() if p.is_dir()) == [".github", "base", "controllers", "overlays",
                                                                       "scenarios"]
    assert _run(capsys, "check")[:2] == (0, f"check: 16 generated files match {repo.resolve() / 'platform.yaml'}\n")
    code, out, err = _run(capsys, "validate")
    assert code == 2 and f"{repo.resolve() / '.validate.yaml'}: disable: unknown rule XX" in err
    (repo / ".validate.yaml").write_text("disable: [SE]\n")
    code, out, err = _run(capsys, "validate")
    assert code == 0, out + err
    assert out == "validate: 1 source(s), 11 object(s): 0 error(s), 0 warning(s)\n"


def test_every_example_brings_scenarios():
    """The CI that init writes replays scenarios/<profile>/*.yaml: an example without any would fail it."""
    for spec in (paths.ROOT / "examples").glob("*.yaml"):
        assert list((paths.ROOT / "examples" / "scenarios" / spec.stem).glob("*/*.yaml")), (
            f"examples/{spec.name} has no scenarios: add examples/scenarios/{spec.stem}/<profile>/<story>.yaml "
            "(what Kueue admits and preempts with that spec; tests/test_platform_repo.py replays it)")


@pytest.mark.parametrize("name", sorted(p.name for p in (paths.ROOT / "examples" / "scenarios").iterdir()))
def test_the_scenarios_init_writes_hold_for_their_spec(tmp_path, monkeypatch, capsys, name):
    repo = tmp_path / "p"
    assert _run(capsys, "init", "--no-git", "--example", name, repo)[0] == 0
    monkeypatch.chdir(repo)
    assert _run(capsys, "synth")[0] == 0
    scenarios = sorted((repo / "scenarios").glob("*/*.yaml"))
    assert scenarios
    for s in scenarios:
        code, out, err = _run(capsys, "plan", f"overlays/{s.parent.name}", "--scenario", s)
        assert code == 0 and "expectation failed" not in err, f"{s}: {err}"


def test_an_installed_tool_prints_the_schema_instead_of_writing_into_itself(capsys, monkeypatch, tmp_path):
    from generator.model import json_schema
    monkeypatch.setattr(paths, "INSTALLED", True)
    monkeypatch.setattr(paths, "SPEC_SCHEMA", tmp_path / "must-not-be-written.json")
    code, out, _ = _run(capsys, "schema")
    assert code == 0 and out == json_schema.render() and not (tmp_path / "must-not-be-written.json").exists()


def test_validate_outside_a_platform_repository(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "validate")
    assert code == 2 and err.splitlines() == [
        f"validate: no platform.yaml in {tmp_path} or any folder above it, and no inputs named: run inside a "
        "platform repository (gke-ml-platform init DIR makes one) or name the overlays or YAML files to check"]
    good = paths.ROOT / "tests" / "validate_corpus" / "KQ001" / "good.yaml"   # any YAML is still checked
    assert _run(capsys, "validate", "--crd-dir", helpers.CRD_ROOT, good)[0] == 0
