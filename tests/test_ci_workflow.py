"""The users' CI workflow (.github/workflows/ci.yaml): hardened (actions
pinned by verified commit, no persisted credentials, least privilege, no
${{ }} in shell), a pull-request comment that fits GitHub's limit, and its
synth-check, validate and plan jobs run here, step by step, in a copy of the
repository with no shared-data folder and `make crds` downloading from a
local mirror."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.fittext import fit
from generator.kernel import paths, yamlio
from tests import helpers

WORKFLOW = paths.ROOT / ".github" / "workflows" / "ci.yaml"
# Read from the tag refs of fetched snapshots of the actions' repositories
# (git for-each-ref refs/tags): the commit each tag points at.
VERIFIED = {
    "actions/checkout": ("3d3c42e5aac5ba805825da76410c181273ba90b1", "v7.0.1"),
    "actions/setup-python": ("5fda3b95a4ea91299a34e894583c3862153e4b97", "v7.0.0"),
    "actions/cache": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
}
COMMENT_LIMIT = 65536      # GitHub's "Body is too long (maximum is 65536 characters)"
SUMMARY_LIMIT = 1024 ** 2  # a step's job summary: 1 MiB


def _workflow() -> dict:
    return yamlio.load_user(WORKFLOW.read_text())


def _steps(job: str) -> list[dict]:
    return _workflow()["jobs"][job]["steps"]


def test_jobs():
    jobs = _workflow()["jobs"]
    assert set(jobs) == {"synth-check", "validate", "plan", "generator-tests", "change-summary"}
    runs = {name: " ".join(s.get("run", "") for s in job["steps"]) for name, job in jobs.items()}
    assert "make check" in runs["synth-check"]
    assert runs["validate"].index("make crds") < runs["validate"].index("make validate")
    assert "make plan" in runs["plan"] and "make test" in runs["generator-tests"]
    assert "generator diff" in runs["change-summary"]
    assert all(j.get("timeout-minutes") for j in jobs.values())


def test_actions_are_pinned_by_verified_commit_with_the_tag_beside_it():
    uses = re.findall(r"^\s*(?:- )?uses: (\S+)(.*)$", WORKFLOW.read_text(), re.MULTILINE)
    assert uses
    for ref, comment in uses:
        action, _, sha = ref.partition("@")
        assert action in VERIFIED, action
        assert (sha, comment.strip()) == (VERIFIED[action][0], f"# {VERIFIED[action][1]}"), ref


def test_least_privilege_and_no_persisted_credentials():
    wf = _workflow()
    assert wf["permissions"] == {}
    for name, job in wf["jobs"].items():
        wanted = {"contents": "read", "pull-requests": "write"} if name == "change-summary" else {"contents": "read"}
        assert job["permissions"] == wanted, name
        for step in job["steps"]:
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, name
            assert "${{" not in step.get("run", ""), f"{name}: expressions go through env, not into shell"


def test_the_comment_is_cut_to_the_limit():
    (comment,) = [s for s in _steps("change-summary") if "gh pr comment" in s.get("run", "")]
    assert f"-m generator.fittext generator-diff.md --limit {COMMENT_LIMIT} > comment.md" in comment["run"]
    assert "--body-file comment.md" in comment["run"]


def test_fit_text_keeps_short_text_and_cuts_long_text_at_a_line():
    assert fit("# title\nshort\n", COMMENT_LIMIT) == "# title\nshort\n"
    exact = "x" * (COMMENT_LIMIT - 1) + "\n"
    assert fit(exact, COMMENT_LIMIT) == exact
    rows = "".join(f"| object {i} | changed |\n" for i in range(10000))   # 20 lines too many, in any case
    long = "## Summary\n\n```text\nquota: 6 -> 8\n```\n\n" + rows + "```diff\n" + rows
    assert len(long) > 3 * COMMENT_LIMIT
    out = fit(long, COMMENT_LIMIT, where="https://github.com/o/r/actions/runs/1")
    assert len(out) <= COMMENT_LIMIT
    body, note = out.rsplit("\n\n**Cut to fit:** ", 1)
    assert long.startswith(body.removesuffix("```")) and body.count("```") % 2 == 0
    assert note == (f"{len(body):,} of {len(long):,} characters shown; the whole text is in the job summary "
                    "of https://github.com/o/r/actions/runs/1.\n")


def test_fit_text_counts_bytes_for_the_job_summary():
    text = "é\n" * SUMMARY_LIMIT             # 3 bytes a line
    out = fit(text, SUMMARY_LIMIT, in_bytes=True)
    assert len(out.encode()) <= SUMMARY_LIMIT < len(out.encode()) + 3 + 200
    assert "bytes shown" in out


# ---------------------------------------------------------------- running the jobs

def _copy_of_the_repository(dest: Path) -> Path:
    """What actions/checkout gives: the files git tracks (and new ones it does not ignore)."""
    helpers.copy_of_repository(dest)
    # The venv this suite runs in stands for the one setup-python + make would
    # build: the copy's install inputs must not look newer than its stamps.
    for name in ("setup.cfg", "pyproject.toml"):
        os.utime(dest / name, (0, 0))
    # The generator's own fixture spec and scenarios, not the shipped ones a user edits
    # (a changed capacity rightly fails the user's scenarios until they are updated).
    shutil.copy2(paths.ROOT / "tests" / "fixtures" / "platform.yaml", dest / "platform.yaml")
    shutil.copytree(paths.ROOT / "tests" / "fixtures" / "scenarios", dest / "scenarios")
    subprocess.run([sys.executable, "-m", "generator", "synth"], cwd=dest, capture_output=True, check=True, timeout=300)
    return dest


@pytest.mark.slow   # three CI jobs end to end: make check, crds, validate, plan
def test_synth_check_validate_and_plan_pass_with_make_crds_as_the_only_data(tmp_path):
    repo = _copy_of_the_repository(tmp_path / "checkout")   # no ../shared beside it
    summary = tmp_path / "summary.md"
    (tmp_path / "no-shared").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("CRD_DIR", "UPSTREAM_CACHE", "MAKEFLAGS")}
    env.update(SHARED_DIR=str(tmp_path / "no-shared"), VENV=str(Path(sys.executable).parent.parent),
               GITHUB_STEP_SUMMARY=str(summary), GENERATOR_CACHE_DIR=str(tmp_path / "user-cache"))
    ran = []
    with helpers.upstream_mirror() as base:
        env["UPSTREAM_BASE_URL"] = base
        for job in ("synth-check", "validate", "plan"):
            for step in _steps(job):
                if "uses" in step:   # the copy and this Python stand in for checkout and setup-python
                    assert step["uses"].split("@")[0] in ("actions/checkout", "actions/setup-python")
                    continue
                assert not any("${{" in str(v) for v in step.get("env", {}).values())
                r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                                   cwd=repo, env={**env, **step.get("env", {})}, capture_output=True, text=True,
                                   timeout=300, check=False)
                assert r.returncode == 0, f"{job}: {step.get('name')}: {r.stdout[-2000:]}\n{r.stderr[-2000:]}"
                ran.append(step.get("name"))
    assert len(ran) == 4
    assert list((tmp_path / "user-cache" / "upstream" / "crds").iterdir())   # make crds filled the per-user cache
    plan = summary.read_text()
    for scenario in sorted(p.relative_to(repo / "scenarios") for p in (repo / "scenarios").glob("*/*.yaml")):
        assert scenario.stem in plan or scenario.parent.name in plan


def run_plan_step_that_fails(step: dict, tmp_path: Path, fake: str) -> tuple[int, str]:
    """Run a workflow's plan step with `fake` (a shell command standing in for the tool or make) printing a
    report and failing as a plan with a broken expectation does; (exit status, the job summary)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / fake).write_text("#!/bin/sh\necho '## Kueue plan'\necho 'expectation failed' >&2\nexit 1\n")
    (bin_dir / fake).chmod(0o755)
    summary = tmp_path / "summary.md"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "GITHUB_STEP_SUMMARY": str(summary), "PYTHONPATH": str(paths.ROOT)}
    r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=60, check=False)
    return r.returncode, summary.read_text() if summary.exists() else ""


def test_the_plan_report_reaches_the_job_summary_also_when_the_plan_fails(tmp_path):
    (step,) = [s for s in _steps("plan") if "make plan" in s.get("run", "")]
    assert run_plan_step_that_fails(step, tmp_path, "make") == (1, "## Kueue plan\n")
