"""The issue's "done when", end to end, with the tool as a user gets it: a
wheel built from (a copy of) this repository, installed into a fresh virtual
environment outside it; a platform repository made with `init` in an empty
temporary folder; every command run from that folder; upstream CRDs from a
local mirror of raw.githubusercontent.com. Also the CI workflow that init
writes, run step by step.

pip installs the wheel's dependencies from its configured indexes (this
machine's local ones first, PyPI for the rest), helped by the pip cache: a
few minutes, hence `slow`.

`plan` with no overlay argument (replay every scenarios/<profile>/*.yaml
against overlays/<profile>) and `plan --update-expectations` are the plan
command's contract; these tests use them as that contract states."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from generator.kernel import paths
from tests import helpers

pytestmark = pytest.mark.slow


def _git_files() -> list[str]:
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=paths.ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    return [n for n in names if n and (paths.ROOT / n).is_file()]


def _checkout_state() -> tuple[str, dict[str, tuple[int, int]]]:
    """git status of this checkout (which compares contents), and the mtime and size of every file git
    knows here (stat only: this process never opens the shipped spec or output, see tests/conftest.py)."""
    status = subprocess.run(["git", "status", "--porcelain"], cwd=paths.ROOT, capture_output=True, text=True,
                            check=True).stdout
    return status, {n: ((paths.ROOT / n).stat().st_mtime_ns, (paths.ROOT / n).stat().st_size) for n in _git_files()}


# What the wheel is built from: the checkout less the shipped spec, scenarios and output (a user's
# platform, not the tool; the wheel carries none of them).
_NOT_THE_TOOL = ("platform.yaml", "scenarios/", "base/", "overlays/", "controllers/", "argocd/")


def _tree_state(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


class Installed:
    def __init__(self, tmp: Path, wheel: Path, venv: Path, env: dict[str, str]):
        self.tmp, self.wheel, self.venv, self.env = tmp, wheel, venv, env

    @property
    def package(self) -> Path:
        (site,) = (self.venv / "lib").glob("python3*/site-packages")
        return site / "generator"

    def run(self, cwd: Path, *args: str, check: bool = True, **env: str) -> subprocess.CompletedProcess:
        r = subprocess.run([str(self.venv / "bin" / "gke-ml-platform"), *args], cwd=cwd, env={**self.env, **env},
                           capture_output=True, text=True, timeout=600, check=False)
        if check:
            assert r.returncode == 0, f"{' '.join(args)}: exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        return r


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Iterator[Installed]:
    tmp = tmp_path_factory.mktemp("installed")
    src = tmp / "src"   # a copy of the checkout: building writes build/ and *.egg-info beside the sources
    for name in _git_files():
        if not name.startswith(_NOT_THE_TOOL):
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(paths.ROOT / name, src / name)
    base_env = {k: v for k, v in os.environ.items()
                if k not in ("PYTHONPATH", "CRD_DIR", "SHARED_DIR", "UPSTREAM_CACHE", "UPSTREAM_BASE_URL",
                             "VIRTUAL_ENV", "GENERATOR_CACHE_DIR", "JSII_NODE")}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp / "dist"), str(src)],
                   env=base_env, check=True, capture_output=True, timeout=600)
    (wheel,) = (tmp / "dist").glob("gke_ml_platform-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], env=base_env, check=True, timeout=300)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], env=base_env, check=True,
                   capture_output=True, timeout=1200)
    env = {**base_env, "PATH": f"{venv / 'bin'}{os.pathsep}{base_env.get('PATH', '')}",
           "GENERATOR_CACHE_DIR": str(tmp / "user-cache"), "HOME": str(tmp / "home"),
           "GIT_AUTHOR_NAME": "ci", "GIT_AUTHOR_EMAIL": "ci@example.com",
           "GIT_COMMITTER_NAME": "ci", "GIT_COMMITTER_EMAIL": "ci@example.com"}
    (tmp / "home").mkdir()
    with helpers.upstream_mirror() as base:
        env["UPSTREAM_BASE_URL"] = base
        yield Installed(tmp, wheel, venv, env)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def _edit(spec: Path) -> None:
    """The user's first edit: more H100 nodes, a second serving workload, a team."""
    s = yaml.safe_load(spec.read_text())
    s["profiles"]["gpu-cluster"]["nodePools"][0]["nodes"] += 1
    second = {**s["workloads"][0], "name": "mistral-serving", "model": "mistralai/Mistral-7B-Instruct-v0.3"}
    s["workloads"].append(second)
    s["namespaces"].append({"name": "team-a"})
    s["queues"][0]["cohort"] = "gpu-teams"
    s["teams"] = [{"name": "team-a", "namespaces": ["team-a"], "profiles": {"gpu-cluster": {"quotas": {
        "l4-spot": {"cpu": 8, "memory": "32Gi", "nvidia.com/gpu": 2}}}}}]
    spec.write_text(yaml.safe_dump(s, sort_keys=False))


def test_a_user_platform_from_init_to_diff_never_touches_this_checkout(installed):
    before = _checkout_state()
    package = _tree_state(installed.package)
    work = installed.tmp / "work"
    work.mkdir()
    r = installed.run(work, "--version")
    assert r.stdout.startswith("gke-ml-platform 0.1.0 (Kueue ")
    installed.run(work, "init", "--example", "h100-l4-spot", "my-platform")
    repo = work / "my-platform"
    assert installed.run(repo, "synth").stdout.startswith("synth: wrote ")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "platform from init")
    first = _git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    installed.run(repo, "check")
    installed.run(repo, "validate")   # the first validate fills the per-user cache from the mirror
    assert list((installed.tmp / "user-cache" / "upstream" / "crds").rglob("*.yaml"))
    installed.run(repo, "plan")

    _edit(repo / "platform.yaml")
    sub = repo / "overlays"   # every command from a folder inside the repository, too
    installed.run(sub, "synth")
    installed.run(sub, "check")
    out = installed.run(repo, "validate").stdout.splitlines()
    assert out[-1].startswith("validate: 1 source(s), ") and " 0 error(s)" in out[-1], out
    # The edit put a team in a cohort with the platform's queue and listed only l4-spot for it:
    # the cohort's policy holes are warned about, each with its fix (generator/kernel/policy.py).
    assert any(" KQ031 warning: " in line for line in out), out
    diff = installed.run(sub, "diff", first).stdout
    assert "ClusterQueue gpus, flavor h100, nvidia.com/gpu: quota 16 → 24 (+8)" in diff, diff   # the pool's 8 more H100s
    assert "mistral-serving" in diff and "team-a" in diff
    md = installed.run(repo, "diff", first, "--format", "markdown").stdout
    assert "ClusterQueue" in md and md != diff

    failed = installed.run(repo, "plan", check=False)
    assert failed.returncode == 1
    (line,) = [x for x in failed.stderr.splitlines() if "expectation failed" in x]   # names the expectation:
    assert "serving-burst" in failed.stderr or "serving-burst" in failed.stdout      # the scenario,
    assert "serving asks for a third replica" in line                              # the step,
    assert "llama-serving#3" in line and "pending" in line                         # what it expected
    installed.run(repo, "plan", "--update-expectations")
    installed.run(repo, "plan")
    assert "llama-serving#3" in (repo / "scenarios" / "gpu-cluster" / "serving-burst.yaml").read_text()

    assert _checkout_state() == before
    assert _tree_state(installed.package) == package    # nor the install location


def _steps(workflow: dict, job: str) -> list[dict]:
    return workflow["jobs"][job]["steps"]


def _run_step(step: dict, repo: Path, env: dict) -> subprocess.CompletedProcess:
    """One `run:` step as GitHub runs it (bash -eo pipefail); its env's ${{ }} values come from `env`."""
    step_env = {k: str(v) for k, v in step.get("env", {}).items() if "${{" not in str(v)}
    assert all(k in env for k in set(step.get("env", {})) - set(step_env)), step["name"]
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=repo,
                          env={**env, **step_env}, capture_output=True, text=True, timeout=600, check=False)


def test_the_workflow_init_writes_runs_its_steps_here(installed):
    work = installed.tmp / "ci"
    work.mkdir()
    # Not published: the install line points at the wheel (with its sha256), as --tool-source writes it.
    installed.run(work, "init", "--tool-source", str(installed.wheel), "repo")
    repo = work / "repo"
    wf = yaml.safe_load((repo / ".github" / "workflows" / "platform.yaml").read_text())
    assert f"gke-ml-platform @ {installed.wheel.as_uri()}#sha256=" in (repo / "requirements.txt").read_text()
    installed.run(repo, "synth")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "platform from init")
    summary = installed.tmp / "summary.md"
    fake_bin = installed.tmp / "fake-bin"   # `gh` stands in for the comment: it records what it was asked
    fake_bin.mkdir()
    (fake_bin / "gh").write_text(f'#!/bin/sh\necho "$@" > {installed.tmp}/gh-args\ncp comment.md {installed.tmp}/gh-body\n')
    (fake_bin / "gh").chmod(0o755)
    env = {**installed.env, "GITHUB_STEP_SUMMARY": str(summary), "GENERATOR_CACHE_DIR": str(installed.tmp / "ci-cache"),
           "PATH": f"{fake_bin}{os.pathsep}{installed.env['PATH']}"}

    def job(name: str, expect_fail: frozenset[str] = frozenset()) -> list[str]:
        ran = []
        for step in _steps(wf, name):
            if "uses" in step:   # this folder, the venv's Python and the cache folder stand in for the actions
                assert step["uses"].split("@")[0] in ("actions/checkout", "actions/setup-python", "actions/cache")
                continue
            r = _run_step(step, repo, env)
            wanted = 1 if step["name"] in expect_fail else 0
            assert r.returncode == wanted, f"{name}: {step['name']}: {r.stdout[-2000:]}\n{r.stderr[-2000:]}"
            ran.append(step["name"])
        return ran

    assert len(job("platform")) == 5   # install, crds, check, validate, plan
    assert list((installed.tmp / "ci-cache" / "upstream" / "crds").rglob("*.yaml"))   # crds filled the cache
    report = summary.read_text()
    assert "serving-burst" in report

    # A change whose scenario no longer holds: the plan step fails, and its report still reaches the summary.
    _edit(repo / "platform.yaml")
    installed.run(repo, "synth")
    _git(repo, "checkout", "-q", "-b", "more-nodes")
    _git(repo, "commit", "-q", "-am", "more nodes, a second server, a team")
    _git(repo, "update-ref", "refs/remotes/origin/main", "main")
    summary.write_text("")
    job("platform", expect_fail=frozenset({"What Kueue admits and preempts in each scenario"}))
    assert "serving-burst" in summary.read_text() and "llama-serving#3" in summary.read_text()

    summary.write_text("")
    env.update(BASE_REF="main", PR="7", GH_TOKEN="not-a-token")
    job("change-summary")
    assert (installed.tmp / "gh-args").read_text() == "pr comment 7 --body-file comment.md --edit-last --create-if-none\n"
    body = (installed.tmp / "gh-body").read_text()
    assert "ClusterQueue" in body and body.strip() and body == summary.read_text()
