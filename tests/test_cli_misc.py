"""Small CLI promises: --version, and warnings for the example spec's placeholders."""
from __future__ import annotations

import pytest

from generator import cli, paths, yamlio
from generator.spec import placeholders


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
