"""A platform repository is untrusted input: CI runs synth, check, validate, plan and diff
on every pull request's branch, so whatever a branch commits must not make the tool write,
move or delete anything outside the repository.

Each case plants one thing in a repository (a crafted `.synth-journal`, a `.synth-lock`
link, a symlinked spec or scenario, an output folder that is a link, ...), commits it,
takes a real `git clone` of it, runs every command there, and checks that the folder beside
the clone (the "outside" a hostile branch aims at) is byte for byte what it was, and that
every command answered with an exit code and no traceback."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from generator.kernel import writer, yamlio
from tests import helpers

PROFILE = "l4-standard"
SCENARIO = helpers.FIXTURES / "scenarios" / PROFILE / "inference-burst.yaml"
RUN = "0123456789ab"   # a run id in synth's own format


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "init.defaultBranch=main",
                    *args], cwd=cwd, check=True, capture_output=True)


def _digest(root: Path) -> dict[str, str]:
    """Every entry under root: a file's bytes, a link's target, a folder's presence."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _failing_scenario() -> str:
    """The fixture scenario with one expectation that does not hold (so --update-expectations writes)."""
    raw = yamlio.load_user(SCENARIO.read_text())
    raw["expect"]["usage"][0]["used"] = 5
    return yamlio.dump(raw)


def _outside(tmp: Path) -> Path:
    out = tmp / "outside"
    (out / "victim" / "sub").mkdir(parents=True)
    (out / "victim" / "data.txt").write_text("the victim's data\n")
    (out / "victim" / "sub" / "x.yaml").write_text("kept: true\n")
    shutil.copy(helpers.FIXTURE_SPEC, out / "platform.yaml")
    (out / "scenario.yaml").write_text(_failing_scenario())
    return out


# ---------------------------------------------------------------- what a branch plants

def _journal(repo: Path, journal: dict) -> None:
    (repo / writer.JOURNAL).write_text(json.dumps(journal))


def _link(repo: Path, name: str, target: str) -> None:
    p = repo / name
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p)
    elif p.exists() or p.is_symlink():
        p.unlink()
    p.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, p)


def _staged_with_retired_link(repo: Path) -> None:
    (repo / f".synth-new-{RUN}" / "base").mkdir(parents=True)
    (repo / f".synth-new-{RUN}" / "base" / "a.yaml").write_text(writer.GENERATED_PREFIX + "\n")
    _link(repo, f".synth-old-{RUN}", "../outside/victim")
    _journal(repo, {"staging": f".synth-new-{RUN}", "retired": f".synth-old-{RUN}", "owned": ["base"]})


PLANTS = {
    "journal-relative": lambda r: _journal(r, {"staging": "../outside/victim", "retired": "../outside/retired",
                                                "owned": ["sub"]}),
    "journal-absolute": lambda r: _journal(r, {"staging": str(r.parent / "outside" / "victim"),
                                                "retired": str(r.parent / "outside" / "retired"), "owned": ["sub"]}),
    "journal-owned-escapes": lambda r: _journal(r, {"staging": f".synth-new-{RUN}", "retired": f".synth-old-{RUN}",
                                                     "owned": ["../outside/victim"]}),
    "journal-retired-link": _staged_with_retired_link,
    "journal-link": lambda r: _link(r, writer.JOURNAL, "../outside/victim/data.txt"),
    "journal-tmp-link": lambda r: _link(r, writer.JOURNAL + ".tmp", "../outside/victim/data.txt"),
    "lock-link": lambda r: _link(r, writer.LOCK, "../outside/victim/data.txt"),
    "lock-dangling-link": lambda r: _link(r, writer.LOCK, "../outside/created-by-lock"),
    "staging-link": lambda r: _link(r, f".synth-new-{RUN}", "../outside/victim"),
    "spec-link": lambda r: _link(r, "platform.yaml", "../outside/platform.yaml"),
    "output-folder-link": lambda r: _link(r, "base", "../outside/victim"),
    "overlay-link": lambda r: _link(r, f"overlays/{PROFILE}", "../../outside/victim"),
    "scenario-link": lambda r: _link(r, f"scenarios/{PROFILE}/burst.yaml", "../../../outside/scenario.yaml"),
    "scenario-folder-link": lambda r: _link(r, f"scenarios/{PROFILE}", "../../outside"),
    "plot-folder-link": lambda r: _link(r, "plots", "../outside/victim"),
    "output-file-link": lambda r: _link(r, "base/namespace_llm.yaml", "../../outside/victim/data.txt"),
}

COMMANDS = (["synth"], ["check"], ["validate"], ["plan"], ["plan", "--update-expectations"],
            ["plan", f"overlays/{PROFILE}", "--scenario", f"scenarios/{PROFILE}/burst.yaml",
             "--update-expectations"],
            ["diff", "HEAD", "--no-regenerate"], ["diff", "HEAD"], ["plan", "--plot", "plots"])


@pytest.fixture(scope="module")
def origin(tmp_path_factory) -> Path:
    """A platform repository with its output committed (synth run in it, as a user would)."""
    repo = tmp_path_factory.mktemp("origin") / "repo"
    repo.mkdir()
    shutil.copy(helpers.FIXTURE_SPEC, repo / "platform.yaml")
    (repo / "scenarios" / PROFILE).mkdir(parents=True)
    shutil.copy(SCENARIO, repo / "scenarios" / PROFILE / "burst.yaml")
    (repo / ".gitignore").write_text(".synth-lock\n")
    helpers.synth_into(repo, helpers.fixture_raw(), str(repo / "platform.yaml"))
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "platform")
    return repo


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_nothing_outside_the_clone_changes(plant, origin, tmp_path, capsys, monkeypatch):
    from generator import cli

    branch = tmp_path / "branch"
    _git(tmp_path, "clone", "-q", str(origin), str(branch))
    PLANTS[plant](branch)
    _git(branch, "add", "-A", "-f")
    _git(branch, "commit", "-qm", f"plant {plant}")
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(branch), str(clone))
    outside = _outside(tmp_path)
    before = _digest(outside)
    monkeypatch.chdir(clone)
    codes = {}
    for argv in COMMANDS:
        capsys.readouterr()
        codes[" ".join(argv)] = cli.main(argv)
        out, err = capsys.readouterr()
        assert "Traceback" not in err and "internal error" not in err, (argv, err)
        assert _digest(outside) == before, (plant, argv, err)
    assert set(codes.values()) <= {0, 1, 2}, codes
    assert not (tmp_path / "outside" / "created-by-lock").exists()


REFUSED = {   # plant: (command, words of its one line)
    "journal-relative": ("synth", "not a journal synth wrote"),
    "journal-absolute": ("check", "not a journal synth wrote"),
    "journal-owned-escapes": ("synth", "not a journal synth wrote"),
    "journal-retired-link": ("synth", "not a journal synth wrote"),
    "journal-link": ("synth", "is a symbolic link"),
    "lock-link": ("synth", "lock file is a symbolic link"),
    "spec-link": ("synth", "leads outside the repository"),
    "output-folder-link": ("synth", "did not generate"),
    "scenario-link": ("plan", "leads outside the repository"),
}


@pytest.mark.parametrize("plant", sorted(REFUSED))
def test_each_plant_is_refused_in_one_line(plant, origin, tmp_path, capsys, monkeypatch):
    """The negative half: the command does not quietly carry on; it exits 2 with one line naming what is wrong."""
    from generator import cli

    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(origin), str(clone))
    _outside(tmp_path)
    PLANTS[plant](clone)
    monkeypatch.chdir(clone)
    command, words = REFUSED[plant]
    capsys.readouterr()
    code = cli.main([command])
    err = "\n".join(helpers.without_warnings(capsys.readouterr().err))
    assert code == 2 and words in err and len(err.splitlines()) == 1, err


def test_a_plain_clone_still_works(origin, tmp_path, capsys, monkeypatch):
    """Without a plant every command does its job: synth rewrites, check passes, the scenario holds."""
    from generator import cli

    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(origin), str(clone))
    monkeypatch.chdir(clone)
    assert cli.main(["synth"]) == 0
    assert cli.main(["check"]) == 0
    assert cli.main(["plan"]) == 0


def test_check_reads_no_file_through_a_link(origin, tmp_path, capsys, monkeypatch):
    """A generated file replaced by a link: check reports it as differing, never reads its target."""
    from generator import cli

    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(origin), str(clone))
    outside = _outside(tmp_path)
    (outside / "victim" / "data.txt").write_text((clone / "base" / "namespace_llm.yaml").read_text())
    PLANTS["output-file-link"](clone)
    monkeypatch.chdir(clone)
    capsys.readouterr()
    assert cli.main(["check"]) == 1
    assert "differs: base/namespace_llm.yaml" in capsys.readouterr().err   # though the target's text is right
