"""Atomic checkpoint directories: stage, fsync, mark complete, rename.

A checkpoint is written into a staging directory beside its final place. Only
after every file is on disk does the main process write a marker listing each
file and its size, then rename the staging directory to its final name. A
directory counts as a checkpoint only if it has the final name, the marker,
and every file the marker lists at the listed size. So a process killed at any
moment during a save leaves either the previous checkpoint as the newest one,
or the new one complete. The size check also covers storage where a directory
rename is a copy of one object after another (Cloud Storage through gcsfuse).

Standard library only; the training code decides what goes inside.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

MARKER = "COMPLETE.json"
STAGING_PREFIX = ".staging-"
_CHECKPOINT_NAME = re.compile(r"^checkpoint-(\d+)$")


def checkpoint_dir(root: Path, step: int) -> Path:
    return root / f"checkpoint-{step:08d}"


def staging_dir(final: Path) -> Path:
    return final.parent / (STAGING_PREFIX + final.name)


def start_staging(final: Path) -> Path:
    """An empty staging directory for `final`; leftovers of an earlier try are removed."""
    staging = staging_dir(final)
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    return staging


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    # Makes new directory entries durable. Some FUSE file systems reject
    # fsync on a directory; their entries are durable once created.
    try:
        fsync_file(path)
    except OSError:
        pass


def _manifest(directory: Path) -> dict[str, int]:
    return {
        str(path.relative_to(directory)): path.stat().st_size
        for path in sorted(directory.rglob("*"))
        if path.is_file() and path.name != MARKER
    }


def commit(staging: Path, final: Path) -> None:
    """Makes `staging` durable, marks it complete and renames it to `final`."""
    for path in staging.rglob("*"):
        if path.is_file():
            fsync_file(path)
        else:
            _fsync_dir(path)
    files = _manifest(staging)
    _write_marker(staging, files)
    _fsync_dir(staging)
    if final.exists():  # an incomplete directory left at this name by an earlier try
        shutil.rmtree(final)
    try:
        os.rename(staging, final)
    except OSError:
        # gcsfuse refuses to rename a non-empty directory of a flat bucket
        # unless mounted with rename-dir-limit. Copying with the marker last
        # still makes the checkpoint count only once it is whole.
        for name in files:
            if (staging / name).exists():  # not already moved by a rename that failed half way
                (final / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(staging / name, final / name)
                fsync_file(final / name)
        _write_marker(final, files)
        shutil.rmtree(staging)
    _fsync_dir(final.parent)


def _write_marker(directory: Path, files: dict[str, int]) -> None:
    with open(directory / MARKER, "w", encoding="utf-8") as f:
        json.dump({"files": files}, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())


def is_complete(directory: Path) -> bool:
    try:
        with open(directory / MARKER, encoding="utf-8") as f:
            files = json.load(f)["files"]
        return all((directory / name).stat().st_size == size for name, size in files.items())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _checkpoints(root: Path) -> list[tuple[int, Path]]:
    """(step, path) of every directory named like a checkpoint, oldest first."""
    if not root.is_dir():
        return []
    found = []
    for path in root.iterdir():
        match = _CHECKPOINT_NAME.match(path.name)
        if match and path.is_dir():
            found.append((int(match.group(1)), path))
    return sorted(found)


def latest_checkpoint(root: Path) -> tuple[int, Path] | None:
    """The complete checkpoint with the highest step, if any."""
    for step, path in reversed(_checkpoints(root)):
        if is_complete(path):
            return step, path
    return None


def remove_staging(root: Path) -> list[Path]:
    """Deletes staging directories left by saves that never finished."""
    removed = []
    if root.is_dir():
        for path in root.iterdir():
            if path.name.startswith(STAGING_PREFIX) and path.is_dir():
                shutil.rmtree(path)
                removed.append(path)
    return removed


def prune(root: Path, keep: int) -> None:
    """Keeps the newest `keep` complete checkpoints and deletes every other one."""
    complete = [(step, path) for step, path in _checkpoints(root) if is_complete(path)]
    if not complete:  # never delete the last chance to resume
        return
    kept = {path for _, path in complete[-keep:]}
    for _, path in _checkpoints(root):
        if path not in kept:
            shutil.rmtree(path)
