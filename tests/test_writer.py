"""All-or-nothing output: a synth killed at any moment leaves the old tree
or the new one, byte for byte; concurrent synths wait for each other; what
killed runs leave behind is cleaned up; Ctrl-C prints one line, exits 130.

The kill test runs the writer in a child process whose renames, file writes
and deletions announce themselves on stdout; at the step the parent chose,
the child waits for a line on stdin, and the parent signals it there: every
step of the protocol is hit, none by timing luck."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator.kernel import paths, writer
from tests import helpers

OWNED = ("base", "overlays", "controllers")
HEAD = writer.GENERATED_PREFIX + " (test tree)\n"
OLD = {**{f"base/b{i}.yaml": f"{HEAD}old {i}\n" for i in range(20)},
       **{f"overlays/p/o{i}.yaml": f"{HEAD}old {i}\n" for i in range(20)},
       "controllers/k/gone.yaml": f"{HEAD}only in the old tree\n"}
NEW = {**{f"base/b{i}.yaml": f"{HEAD}new {i}\n" for i in range(25)},
       **{f"overlays/p/o{i}.yaml": f"{HEAD}new {i}\n" for i in range(20)},
       "overlays/q/added.yaml": f"{HEAD}only in the new tree\n"}

# The child: announce each step; at step number PAUSE (-1: before writing),
# wait for the parent. Steps: file writes (staging), renames (the journal's
# commit, then the folder switch), deletions (cleanup).
CHILD = r"""
import json, os, pathlib, shutil, sys
from generator.kernel import writer

root, tree, owned, pause = sys.argv[1], json.loads(sys.argv[2]), tuple(sys.argv[3].split(",")), int(sys.argv[4])
count = [0]

def announce(name):
    print(name, flush=True)
    if count[0] == pause:
        sys.stdin.readline()   # the parent signals here, then lets go
    count[0] += 1

def step(name, fn):
    def run(*a, **k):
        announce(name)
        return fn(*a, **k)
    return run

os.replace = step("rename", os.replace)
shutil.rmtree = step("delete", shutil.rmtree)
write_new = writer._write_new
writer._write_new = lambda path, text: (
    step("write", write_new)(path, text) if path.name.endswith("0.yaml") else write_new(path, text))
try:
    count[0] = -1
    announce("ready")
    writer.write_tree(tree, pathlib.Path(root), owned)
except KeyboardInterrupt as e:   # writer.Interrupted, or Ctrl-C before the write began
    print("interrupted", getattr(e, "committed", False), file=sys.stderr)
    sys.exit(130)
print("done", flush=True)
"""


def _tree(root: Path) -> dict[str, str]:
    return writer.read_tree(root, OWNED)


# A suite started in the background (`make test &`) inherits an ignored
# SIGINT, and so would its children: this runs a command with Ctrl-C's
# default restored (exec keeps it), as a terminal would.
WITH_SIGINT = ["-c", ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                      "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")]


def _start(root: Path, pause: int = -2) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, *WITH_SIGINT, "-c", CHILD, str(root), json.dumps(NEW), ",".join(OWNED),
                             str(pause)], cwd=paths.ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _steps(tmp_path) -> list[str]:
    """The announced steps of one uninterrupted run over OLD."""
    root = tmp_path / "dry"
    writer.write_tree(OLD, root, OWNED)
    proc = _start(root)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert _tree(root) == NEW
    lines = out.split()
    assert lines[0] == "ready" and lines[-1] == "done"
    return lines[1:-1]


def _kill_before(root: Path, n: int, sig: int) -> subprocess.Popen:
    """Run the child and send `sig` while it waits before step n ("ready" is
    step -1: before anything is written), then let it go on."""
    proc = _start(root, pause=n)
    assert proc.stdout is not None and proc.stdin is not None
    for _ in range(n + 2):
        proc.stdout.readline()
    proc.send_signal(sig)
    try:
        proc.stdin.write("\n")
        proc.stdin.close()
    except BrokenPipeError:   # killed
        pass
    proc.wait(timeout=60)
    return proc


def test_steps_cover_the_whole_protocol(tmp_path):
    steps = _steps(tmp_path)
    # writes while staging, then the journal rename, one rename per old folder
    # (retired) and one per new folder (switched in), then the cleanup.
    assert steps[0] == "write" and steps.count("rename") == 1 + 2 * len(OWNED)
    assert steps[-1] == "delete"


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_killed_at_every_step_leaves_old_or_new(tmp_path, sig):
    steps = _steps(tmp_path)
    outcomes = []
    for n in range(-1, len(steps)):
        root = tmp_path / f"run{n + 1}"
        writer.write_tree(OLD, root, OWNED)
        proc = _kill_before(root, n, sig)
        if sig == signal.SIGINT:
            # Ctrl-C is handled: the tree is whole at once, no recovery needed,
            # and the child reports whether the switch happened.
            assert proc.returncode in (0, 130), proc.stderr.read()
            got = _tree(root)
        else:
            assert proc.returncode == -signal.SIGKILL
            # What readers do first (check does): finish a switch that was committed.
            writer.settle(root)
            got = _tree(root)
            assert not [p for p in root.glob(".synth-*") if p.name != writer.LOCK]
        assert got in (OLD, NEW), f"killed before step {n} ({steps[n] if n >= 0 else 'start'}): mixed tree"
        outcomes.append("new" if got == NEW else "old")
    # outcomes[i] is the kill before step i - 1. SIGKILL before the journal's
    # rename (the commit point) leaves the old tree, after it the new one.
    # Ctrl-C waits from just before that rename until the switch is done.
    commit = steps.index("rename")
    first_new = commit + 1 if sig == signal.SIGKILL else commit
    assert outcomes == ["old"] * (first_new + 1) + ["new"] * (len(steps) - first_new)


def test_next_run_cleans_what_a_killed_run_left(tmp_path):
    steps = _steps(tmp_path)
    root = tmp_path / "out"
    writer.write_tree(OLD, root, OWNED)
    _kill_before(root, steps.index("rename") + 2, signal.SIGKILL)   # mid-switch
    assert (root / writer.JOURNAL).exists() and list(root.glob(writer.STAGING + "*"))
    writer.write_tree(NEW, root, OWNED)
    assert _tree(root) == NEW
    assert sorted(p.name for p in root.iterdir() if p.name.startswith(".")) == [writer.LOCK]


def test_a_second_writer_waits_for_the_first(tmp_path):
    root = tmp_path / "out"
    writer.write_tree(OLD, root, OWNED)
    waited = []
    with writer.locked(root):
        with pytest.raises(writer.WriteError, match=r"another synth \(pid \d+\) has been writing here for 0 s"):
            writer.write_tree(NEW, root, OWNED, on_wait=waited.append, wait_s=0.3)
        assert waited == [str(os.getpid())] and _tree(root) == OLD
        proc = _start(root)   # waits for the lock held here
        proc.stdin.close()
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        assert proc.poll() is None and _tree(root) == OLD
    proc.stdout.read()
    assert proc.wait(timeout=60) == 0 and _tree(root) == NEW


@pytest.mark.slow   # two whole synth processes
def test_two_synth_processes_at_once_both_finish(tmp_path):
    """Two real synths into one folder: one waits, neither fails, the tree is whole."""
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "generator", "synth", "--spec", str(helpers.FIXTURE_SPEC), "--out", str(out)]
    procs = [subprocess.Popen(cmd, cwd=paths.ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    assert writer.read_tree(out, paths.OUTPUT_DIRS) == writer.read_tree(helpers.generated(), paths.OUTPUT_DIRS)


def test_ctrl_c_prints_one_line_and_exits_130(tmp_path):
    """Ctrl-C in a terminal signals the whole process group, jsii's Node included."""
    out = tmp_path / "out"
    cmd = [sys.executable, *WITH_SIGINT, "-m", "generator", "synth", "--spec", str(helpers.FIXTURE_SPEC),
           "--out", str(out)]
    env = dict(os.environ, GENERATOR_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.Popen(cmd, cwd=paths.ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    # Wait until the command is under way (its private temporary folder, made
    # just before Node starts), not for a guessed time: in the interpreter's
    # own first milliseconds Ctrl-C is Python's business.
    deadline = time.monotonic() + 60
    while not list((tmp_path / "cache" / "tmp").glob("run-*")) and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert helpers.without_warnings(err) == ["synth: interrupted (Ctrl-C); nothing was written"]
    assert not (out / "base").exists()


@pytest.mark.parametrize("make_bad, message", [
    (lambda p: p.write_text("a file\n"), "cannot write the output: File exists"),
    (lambda p: (p.mkdir(), (p / "base").write_text("a file where base/ goes\n")),
     "synth would delete 1 file(s) it did not generate: base;"),
])
def test_unwritable_output_exits_2_with_one_line(tmp_path, capsys, make_bad, message):
    out = tmp_path / "out"
    make_bad(out)
    code, _, err = helpers.run_cli(capsys, "synth", "--spec", helpers.FIXTURE_SPEC, "--out", out)
    assert code == 2 and len(helpers.without_warnings(err)) == 1 and message in err, err
