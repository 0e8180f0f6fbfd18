"""A rename that fails in the middle of the folder switch (an immutable folder, a
permission or I/O error): synth undoes the folders it already switched and says the
output is unchanged; when the undo fails too, the tree is mid-update, and `check`
names that state and the command that finishes it, which then leaves a whole tree."""
from __future__ import annotations

import errno
import os

import pytest

from generator.kernel import writer
from tests import helpers
from tests.test_writer import HEAD, NEW, OLD, OWNED


def _files(root) -> dict[str, str]:
    return writer.read_tree(root, OWNED)


class Faulty:
    """os.replace that succeeds `ok` times, then fails (EPERM, as on an immutable folder)."""

    def __init__(self, ok: int, lasting: bool):
        self.ok, self.lasting, self.calls = ok, lasting, 0
        self.real = os.replace

    def __call__(self, src, dst):
        self.calls += 1
        if self.calls > self.ok and (self.lasting or self.calls == self.ok + 1):
            raise PermissionError(errno.EPERM, "Operation not permitted", str(src))
        return self.real(src, dst)


def _old_tree(tmp_path):
    writer.write_tree(OLD, tmp_path, OWNED)
    assert _files(tmp_path) == OLD


# os.replace calls of a switch: 1 the journal's commit, then per owned folder (base,
# overlays, controllers) retire the old one and move the new one in.
@pytest.mark.parametrize("ok", [2, 3, 4, 5, 6])
def test_a_failed_rename_mid_switch_is_undone(tmp_path, monkeypatch, ok):
    _old_tree(tmp_path)
    monkeypatch.setattr(writer.os, "replace", Faulty(ok, lasting=False))
    with pytest.raises(writer.WriteError) as e:
        writer.write_tree(NEW, tmp_path, OWNED)
    assert not isinstance(e.value, writer.MidUpdate)
    assert "Operation not permitted" in str(e.value) and "the output is unchanged" in str(e.value)
    monkeypatch.undo()
    assert _files(tmp_path) == OLD                       # the old tree, byte for byte
    assert not (tmp_path / writer.JOURNAL).exists()
    assert not list(tmp_path.glob(".synth-new-*")) and not list(tmp_path.glob(".synth-old-*"))
    writer.write_tree(NEW, tmp_path, OWNED)              # and the next synth works
    assert _files(tmp_path) == NEW


@pytest.mark.parametrize("ok", [3, 4, 5])
def test_when_the_undo_fails_too_the_tree_is_mid_update_until_the_next_run(tmp_path, monkeypatch, ok):
    _old_tree(tmp_path)
    monkeypatch.setattr(writer.os, "replace", Faulty(ok, lasting=True))
    with pytest.raises(writer.MidUpdate) as e:
        writer.write_tree(NEW, tmp_path, OWNED)
    assert "mid-update" in str(e.value) and "run synth (or check) again" in str(e.value)
    assert writer.pending(tmp_path) and "mid-update" in writer.pending(tmp_path)
    # While the cause lasts, reading the output says so instead of failing.
    with pytest.raises(writer.MidUpdate):
        writer.settle(tmp_path)
    monkeypatch.undo()                                   # the cause is fixed
    writer.settle(tmp_path)                              # what check does first
    assert _files(tmp_path) == NEW                       # the new tree was complete: finished forward
    assert writer.pending(tmp_path) is None
    assert not list(tmp_path.glob(".synth-*-*"))


def test_check_names_the_state_and_its_fix(tmp_path, monkeypatch, capsys):
    """End to end through the CLI: synth exits 2 with one line; check on the mid-update tree
    exits 2 naming the state, never an internal error; once the cause is gone, check
    finishes the switch and compares a whole tree."""
    spec = helpers.write_spec(tmp_path / "platform.yaml", helpers.fixture_raw())
    out = tmp_path / "out"
    code, _, err = helpers.run_cli(capsys, "synth", "--spec", spec, "--out", out)
    assert code == 0, err
    before = writer.read_tree(out, ("base", "overlays", "controllers", "argocd"))
    (out / "base" / next(p.name for p in (out / "base").iterdir())).write_text(HEAD + "edited\n")
    monkeypatch.setattr(writer.os, "replace", Faulty(3, lasting=True))
    code, _, err = helpers.run_cli(capsys, "synth", "--spec", spec, "--out", out)
    assert code == 2 and len(helpers.without_warnings(err)) == 1 and "mid-update" in err, err
    code, _, err = helpers.run_cli(capsys, "check", "--spec", spec, "--out", out)
    assert code == 2 and "mid-update" in err and "internal error" not in err, err
    monkeypatch.undo()
    code, out_text, err = helpers.run_cli(capsys, "check", "--spec", spec, "--out", out)
    assert code == 0, err                                 # finished forward: the new, whole tree
    assert writer.read_tree(out, ("base", "overlays", "controllers", "argocd")) == before


@pytest.mark.parametrize("command", ["validate", "diff"])
def test_commands_that_only_read_the_output_say_it_is_mid_update(tmp_path, monkeypatch, capsys, command):
    _old_tree(tmp_path)
    monkeypatch.setattr(writer.os, "replace", Faulty(3, lasting=True))
    with pytest.raises(writer.MidUpdate):
        writer.write_tree(NEW, tmp_path, OWNED)
    monkeypatch.undo()
    code, out, err = helpers.run_cli(capsys, command, "--out", tmp_path)
    assert code == 2, (out, err)
    assert "mid-update" in err and "internal error" not in err and "Traceback" not in err
    assert (tmp_path / writer.JOURNAL).exists()          # reading never changes the tree


@pytest.mark.parametrize("command", ["validate", "plan"])
def test_explicit_overlay_paths_say_the_tree_is_mid_update(tmp_path, monkeypatch, capsys, command):
    """validate and plan given an overlay's path (not the repository's) see the journal beside it:
    a tree half switched is a mix of two trees, read silently before."""
    _old_tree(tmp_path)
    monkeypatch.setattr(writer.os, "replace", Faulty(3, lasting=True))
    with pytest.raises(writer.MidUpdate):
        writer.write_tree(NEW, tmp_path, OWNED)
    monkeypatch.undo()
    overlay = tmp_path / "overlays" / "p"
    assert overlay.is_dir()
    code, out, err = helpers.run_cli(capsys, command, overlay)
    assert code == 2, (out, err)
    assert "mid-update" in err and "internal error" not in err and "Traceback" not in err
    assert (tmp_path / writer.JOURNAL).exists()
    # The negative half: once a synth (here: settle) finishes the switch, the same path is read.
    writer.settle(tmp_path)
    assert writer.pending_under([str(overlay)]) is None
