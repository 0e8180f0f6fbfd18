"""`python -m generator validate` end to end: exit codes, text and JSON output,
stdin, kustomize errors, malformed YAML, CRD hash pins, and the generated overlays."""
from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator import cli
from generator.kernel import paths, versions, yamlio
from tests import helpers

CORPUS = Path(__file__).parent / "validate_corpus"
CRDS = ["--crd-dir", str(helpers.CRD_ROOT)]


def validate(capsys, *args, stdin: str | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    # The tests' own spec and its generated overlays, never the shipped ones
    # (a later --spec/--out in args wins).
    code = cli.main(["validate", "--spec", str(helpers.FIXTURE_SPEC), "--out", str(helpers.generated()), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_generated_overlays_are_clean(capsys):
    """`make validate`: every overlay synth wrote validates with no finding."""
    code, out, err = validate(capsys, *CRDS)
    overlays = sorted(p.name for p in (helpers.generated() / "overlays").iterdir() if p.is_dir())
    assert code == 0, out + err
    assert f"validate: {len(overlays)} source(s)" in out and "0 error(s), 0 warning(s)" in out


def test_overlay_profiles_pick_their_rules(capsys):
    code, out, _ = validate(capsys, *CRDS, "--format", "json")
    sources = {Path(s["name"]).name: s for s in json.loads(out)["sources"]}
    spec = helpers.fixture_spec()
    assert set(sources) == {p.name for p in (helpers.generated() / "overlays").iterdir() if p.is_dir()}
    for name, s in sources.items():
        if name in spec.profiles:
            prof = spec.profiles[name]
            assert s["profile"] == name and s["autopilot"] == prof.autopilot
            assert s["kueueVersion"] == prof.kueue.version and s["kubernetesVersion"] == spec.kubernetes_version


def test_findings_exit_1_one_line_each(capsys):
    code, out, err = validate(capsys, *CRDS, "--closed", str(CORPUS / "KQ001" / "bad.yaml"))
    assert code == 1 and err == ""
    line, summary = out.splitlines()
    # The label's line and column in the file (line 36, indented 4: read off the corpus file).
    assert line == ('tests/validate_corpus/KQ001/bad.yaml:36:5: Job/team/train: '
                    'metadata.labels["kueue.x-k8s.io/queue-name"]: KQ001 error: no LocalQueue \'team-queue\' in '
                    'namespace \'team\' (LocalQueues there: lq) (hint: create the LocalQueue in that namespace or '
                    'fix the label; otherwise the workload never admits (pods stay SchedulingGated))')
    assert summary == "validate: 1 source(s), 4 object(s): 1 error(s), 0 warning(s)"
    # Open world (a file on its own): the absent LocalQueue is a note, and the run passes.
    code, out, _ = validate(capsys, *CRDS, str(CORPUS / "KQ001" / "bad.yaml"))
    assert code == 0 and "KQ001 info: LocalQueue 'team-queue' in namespace 'team' is not in the input" in out


def test_json_output(capsys):
    code, out, _ = validate(capsys, *CRDS, "--format", "json", str(CORPUS / "TP005" / "bad.yaml"))
    doc = json.loads(out)
    assert code == 1
    assert doc["summary"] == {"sources": 1, "objects": 2, "errors": 3, "warnings": 0, "notes": 0, "ignored": 0}
    f = doc["findings"][0]
    assert set(f) == {"source", "line", "column", "rule", "severity", "kind", "namespace", "name", "path", "message",
                      "hint"}
    assert isinstance(f["line"], int) and isinstance(f["column"], int)   # a file given as such
    assert (f["rule"], f["kind"], f["namespace"], f["name"]) == ("TP005", "JobSet", "team", "jax")
    assert doc["sources"][0]["kueueVersion"] == versions.default("kueue")


def test_warnings_pass_unless_strict(capsys):
    bad = str(CORPUS / "SC004" / "bad.yaml")
    code, out, _ = validate(capsys, *CRDS, bad)
    assert code == 0 and "SC004 warning" in out
    code, _, _ = validate(capsys, *CRDS, "--strict", bad)
    assert code == 1


def test_stdin(capsys, monkeypatch):
    text = (CORPUS / "KQ006" / "bad.yaml").read_text()
    code, out, _ = validate(capsys, *CRDS, "--closed", "-", stdin=text, monkeypatch=monkeypatch)
    assert code == 1 and out.startswith("<stdin>: Job/team/train: ") and "KQ006" in out
    code, out, _ = validate(capsys, *CRDS, "--closed", "-", stdin=(CORPUS / "KQ006" / "good.yaml").read_text(),
                            monkeypatch=monkeypatch)
    assert code == 0, out


def test_stdin_subprocess_and_no_heavy_imports():
    """The real entry point reads stdin; the validate path never imports cdk8s or the kubernetes client."""
    # At exit (the command ends the process itself, after the atexit functions: generator/cli.py).
    probe = ("import atexit, sys, runpy; sys.argv = ['generator', 'validate', '--crd-dir', sys.argv[1], '--spec', "
             "sys.argv[2], '-']\n"
             "def heavy():\n"
             "    found = sorted(m for m in ('cdk8s', 'jsii', 'kubernetes', 'cdk8s_plus_33') if m in sys.modules)\n"
             "    print('HEAVY', found, file=sys.stderr)\n"
             "atexit.register(heavy)\n"
             "runpy.run_module('generator', run_name='__main__')\n")
    out = subprocess.run([sys.executable, "-c", probe, str(helpers.CRD_ROOT), str(helpers.FIXTURE_SPEC)], cwd=paths.ROOT,
                         capture_output=True, text=True, input=(CORPUS / "PD001" / "bad.yaml").read_text(), timeout=60)
    assert out.returncode == 0, out.stderr   # unpinned images are a lint: warnings
    assert out.stdout.count("PD001 warning") == 2
    assert "HEAVY []" in out.stderr, out.stderr


def test_malformed_yaml_is_a_finding(capsys, tmp_path):
    bad = tmp_path / "broken.yaml"
    bad.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: [1, 2\n")
    code, out, err = validate(capsys, *CRDS, str(bad))
    assert code == 1 and "Traceback" not in out + err
    assert "IN001 error: not valid YAML" in out and "line 7, column 1" in out


def test_kustomize_error_exits_2(capsys, tmp_path):
    (tmp_path / "kustomization.yaml").write_text("resources:\n- missing.yaml\n")
    code, out, err = validate(capsys, *CRDS, str(tmp_path))
    assert code == 2 and out == ""
    assert err.startswith(f"validate: {tmp_path}: kubectl kustomize failed:") and "missing.yaml" in err
    assert "Traceback" not in err


def test_plain_directory_is_one_stream(capsys, tmp_path):
    """A directory without a kustomization: its YAML files are one stream (references across files resolve)."""
    docs = (CORPUS / "KQ001" / "good.yaml").read_text().split("\n---\n")
    for i, d in enumerate(docs):
        (tmp_path / f"{i}.yaml").write_text(d)
    code, out, _ = validate(capsys, *CRDS, str(tmp_path))
    assert code == 0, out
    (tmp_path / "0.yaml").unlink()   # the ResourceFlavor goes: the ClusterQueue's reference breaks
    code, out, _ = validate(capsys, *CRDS, "--closed", str(tmp_path))
    assert code == 1 and "KQ003" in out


@pytest.mark.parametrize("args, message", [
    (["no/such/file.yaml"], "no/such/file.yaml: no such file or directory"),
    (["--kubernetes-version", "1.12", "x.yaml"], "Kubernetes 1.12 has no bundled schemas"),
    (["--kueue-version", "v0.1.0", "x.yaml"], "Kueue 'v0.1.0' is not pinned"),
    (["--profile", "nope", "x.yaml"], "no profile 'nope'"),
    (["-", "-"], "stdin (-) can be read once"),
])
def test_usage_errors_exit_2(capsys, args, message):
    code, out, err = validate(capsys, *CRDS, *args)
    assert code == 2 and out == "" and message in err, err


def test_bad_spec_exits_2(capsys, tmp_path):
    spec = tmp_path / "platform.yaml"
    spec.write_text("name: [unclosed\n")
    code, _, err = validate(capsys, *CRDS, "--spec", str(spec), str(CORPUS / "KQ001" / "good.yaml"))
    assert code == 2 and helpers.without_positions(err).startswith(f"validate: {spec}: <root>: not valid YAML")


def test_spec_with_problems_stops_validate_with_synths_lines(capsys, tmp_path):
    # The spec decides versions and profiles; validate reads it through the same model as synth.
    raw = helpers.fixture_raw()
    raw["profiles"]["l4-standard"]["nodePool"]["nodes"] = -1
    raw["kueue"]["version"] = "v0.99.0"
    spec = tmp_path / "platform.yaml"
    spec.write_text(yamlio.dump(raw))
    code, out, err = validate(capsys, *CRDS, "--spec", str(spec), str(CORPUS / "KQ001" / "good.yaml"))
    assert code == 2
    lines = helpers.without_positions(err).splitlines()
    assert f"validate: {spec}: profiles.l4-standard.nodePool.nodes: -1 is too small: the least allowed is 1" in lines
    assert any(line.startswith(f"validate: {spec}: kueue.version: ") and "v0.99.0" in line for line in lines), err


def _crd_copy(tmp_path) -> Path:
    root = tmp_path / "crds"
    shutil.copytree(helpers.CRD_ROOT, root)
    return root


def test_tampered_crd_exits_2(capsys, tmp_path):
    root = _crd_copy(tmp_path)
    target = root / "kueue" / versions.default("kueue") / "kueue.x-k8s.io_clusterqueues.yaml"
    target.chmod(0o644)
    target.write_text(target.read_text() + "# one byte more than upstream\n")
    code, out, err = validate(capsys, "--crd-dir", str(root), str(CORPUS / "KQ001" / "good.yaml"))
    assert code == 2 and out == ""
    assert err.startswith(f"validate: {target}: sha256 ") and "differs from the pin" in err
    assert "raw.githubusercontent.com/kubernetes-sigs/kueue/" in err


def test_missing_crd_exits_2(capsys, tmp_path):
    root = _crd_copy(tmp_path)
    gone = root / "prometheus-engine" / "v0.17.2" / "monitoring.googleapis.com_podmonitorings.yaml"
    gone.chmod(0o644)
    gone.unlink()
    code, _, err = validate(capsys, "--crd-dir", str(root), str(CORPUS / "KQ001" / "good.yaml"))
    assert code == 2 and str(gone) in err and "cannot read the pinned CRD file" in err
    code, _, err = validate(capsys, "--crd-dir", str(tmp_path / "nowhere"), str(CORPUS / "KQ001" / "good.yaml"))
    assert code == 2 and "no CRD directory" in err


def test_secret_values_never_printed(capsys):
    for rule in ("SE001", "SE002"):
        bad = CORPUS / rule / "bad.yaml"
        _, out, _ = validate(capsys, *CRDS, "--format", "json", str(bad))
        for secret in ("not-a-real-token-0123456789", "hf_NotARealTokenButShapedLikeOne42",
                       "0123456789abcdef0123456789abcdef"):
            assert secret not in out


def test_output_is_deterministic(capsys):
    runs = [validate(capsys, *CRDS, "--format", "json", str(CORPUS / d / "bad.yaml"), str(CORPUS / "TP005" / "bad.yaml"))
            for d in ("KQ009", "KQ009")]
    assert runs[0] == runs[1]


def test_schema_broken_input_never_crashes(capsys):
    """Wrong shapes everywhere: SC001 findings, no traceback; rules that cannot read it are listed."""
    bad = Path(__file__).parent / "validate_inputs" / "schema-broken.yaml"
    code, out, err = validate(capsys, *CRDS, "--format", "json", str(bad))
    doc = json.loads(out)
    assert code == 1 and err == ""
    assert sum(f["rule"] == "SC001" for f in doc["findings"]) >= 10
    assert doc["summary"]["objects"] == 11
    assert isinstance(doc["sources"][0]["skippedRules"], list)


def test_namespace_flag_places_unnamespaced_objects(capsys, tmp_path):
    """Like kubectl apply -n: a Job without a namespace finds the LocalQueue of that namespace."""
    text = (CORPUS / "KQ001" / "good.yaml").read_text()
    job = text.index("kind: Job")
    bare = tmp_path / "bare.yaml"
    bare.write_text(text[:job] + text[job:].replace("  namespace: team\n", "", 1))
    code, out, _ = validate(capsys, *CRDS, "--closed", str(bare))
    assert code == 1 and "KQ001" in out and "Job/default/train" in out   # kubectl's default namespace
    code, out, _ = validate(capsys, *CRDS, "--closed", "-n", "team", str(bare))
    assert code == 0, out
