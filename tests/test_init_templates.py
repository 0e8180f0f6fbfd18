"""The files `init` writes are Jinja2 templates (generator/template/*.j2, StrictUndefined),
rendered for every example and every form of --tool-source; the requirement they write
names where the tool comes from (a direct reference with its hash where it is known), and
the placeholder makes synth warn."""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest
import yaml

from generator import init, toolsource
from generator.kernel import paths
from tests import helpers

SHA = "ab" * 32


def _sources(tmp: Path) -> dict[str, str | None]:
    wheel = tmp / "gke_ml_platform-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"not really a wheel")
    return {
        "placeholder": None,
        "wheel-file": str(wheel),
        "wheel-url": f"https://wheels.example.com/t/gke_ml_platform-0.1.0-py3-none-any.whl#sha256={SHA}",
        "git": "git+https://github.com/example/gke-ml-platform.git@v0.1.0",
        "pypi": "pypi",
        "index": "https://pypi.example.com/simple/",
    }


def _requirement_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


@pytest.mark.parametrize("example", sorted(init.examples()))
def test_every_template_renders_for_every_example_and_source(example, tmp_path):
    for kind, value in _sources(tmp_path).items():
        source = toolsource.parse(value)
        assert source.kind == kind
        out = init.files(example, "my-platform", source)
        wf = yaml.safe_load(out[init.WORKFLOW])
        assert wf["name"] == "platform" and "${{" in out[init.WORKFLOW]   # GitHub's expressions left as they are
        assert out["README.md"].startswith("# my-platform\n")
        assert f"init --example {example}`" in out["README.md"]
        assert ("placeholder source" in out["README.md"]) == (kind == "placeholder")
        assert "{{" not in out["requirements.txt"] + out["README.md"] + out[".gitignore"]
        assert all(text.endswith("\n") for text in out.values())


def test_the_requirement_names_its_source(tmp_path):
    src = _sources(tmp_path)
    digest = hashlib.sha256(b"not really a wheel").hexdigest()   # computed here, from the bytes written above
    want = {
        "placeholder": ["gke-ml-platform @ https://tool-source.invalid/gke_ml_platform-0.1.0-py3-none-any.whl"],
        "wheel-file": [f"gke-ml-platform @ file://{tmp_path.resolve()}/gke_ml_platform-0.1.0-py3-none-any.whl"
                       f"#sha256={digest}"],
        "wheel-url": [f"gke-ml-platform @ {src['wheel-url']}"],
        "git": [f"gke-ml-platform @ {src['git']}"],
        "pypi": ["gke-ml-platform==0.1.0"],
        "index": ["--index-url https://pypi.example.com/simple/", "gke-ml-platform==0.1.0"],
    }
    for kind, value in src.items():
        text = init.files(init.DEFAULT_EXAMPLE, "p", toolsource.parse(value))["requirements.txt"]
        assert _requirement_lines(text) == want[kind], kind


@pytest.mark.parametrize("value, message", [
    ("http://wheels.example.com/gke_ml_platform-0.1.0-py3-none-any.whl", "an https URL"),
    ("https://x.example.com/other_tool-0.1.0-py3-none-any.whl", "is not a wheel of gke-ml-platform"),
    ("https://x.example.com/gke_ml_platform-0.1.0-py3-none-any.whl#md5=abc", "#sha256= and 64 hex digits"),
    ("git+https://github.com/example/gke-ml-platform.git", "name the tag"),
    ("gke-ml-platform==0.1.0", "give a wheel file"),
    ("missing/gke_ml_platform-0.1.0-py3-none-any.whl", "cannot read it"),
])
def test_a_source_that_is_none_of_the_forms_is_one_line(value, message, tmp_path, capsys):
    code, out, err = helpers.run_cli(capsys, "init", "--no-git", "--tool-source", value, tmp_path / "p")
    assert (code, out) == (2, "") and err.startswith("init: --tool-source") and message in err, err
    assert len(err.splitlines()) == 1 and not (tmp_path / "p").exists()


def test_strict_undefined_refuses_a_missing_value():
    with pytest.raises(jinja2.UndefinedError):
        init.render("README.md.j2", version="0.1.0", example="x", source=toolsource.placeholder())   # no name


def test_the_placeholder_makes_synth_warn_until_it_is_replaced(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "p"
    code, _, err = helpers.run_cli(capsys, "init", "--no-git", repo)
    assert code == 0 and "init: warning: requirements.txt names no source for the tool yet" in err
    monkeypatch.chdir(repo)
    code, _, err = helpers.run_cli(capsys, "synth")
    assert code == 0
    assert "warning: requirements.txt:9: the tool's source is still the placeholder" in err
    req = repo / "requirements.txt"
    req.write_text(req.read_text().replace("tool-source.invalid", "wheels.example.com"))
    code, _, err = helpers.run_cli(capsys, "synth")
    assert code == 0 and "tool's source" not in err


@pytest.mark.slow   # builds a wheel of this checkout
def test_the_workflow_install_step_installs_a_local_wheel(tmp_path, capsys):
    """The install step of the workflow init writes, run against the requirement that
    `init --tool-source WHEEL` wrote: pip installs that wheel (checking its hash), and
    refuses it once the file changed."""
    from tests.test_installed import _NOT_THE_TOOL, _git_files
    src = tmp_path / "src"   # a copy: building writes build/ and *.egg-info beside the sources
    for name in _git_files():
        if not name.startswith(_NOT_THE_TOOL):
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(paths.ROOT / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(src)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = (tmp_path / "dist").glob("gke_ml_platform-*.whl")
    repo = tmp_path / "repo"
    assert helpers.run_cli(capsys, "init", "--no-git", "--tool-source", str(wheel), repo)[0] == 0
    wf = yaml.safe_load((repo / init.WORKFLOW).read_text())
    (step,) = [s for s in wf["jobs"]["platform"]["steps"] if s.get("name") == "Install the pinned platform tool"]
    install = step["run"].splitlines()[0]
    assert install == "python -m pip install --disable-pip-version-check -r requirements.txt"
    # No index and no dependencies here: what is checked is the requirement line itself.
    cmd = install.replace("python", sys.executable, 1) + f" --no-deps --no-index --target {tmp_path / 'site'}"
    r = subprocess.run(cmd, shell=True, cwd=repo, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert list((tmp_path / "site").glob("gke_ml_platform-0.1.0.dist-info"))
    with open(wheel, "ab") as f:   # another file under the same name: pip refuses it
        f.write(b"\0")
    r = subprocess.run(cmd.replace("site", "site2"), shell=True, cwd=repo, capture_output=True, text=True, timeout=600)
    assert r.returncode != 0 and "hash" in r.stderr.lower()
