"""A private temporary folder for each run that starts Node.

jsii copies its Node runtime (about 2 MB) into a new temporary folder in every
process and removes it at exit; a killed run leaves it in /tmp for good.
Runs therefore use `<cache>/tmp/<run>/` (see paths.cache_dir), each holding
an flock on its folder while it lives; every run removes the folders whose
lock is free, i.e. whose run is gone."""
from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import tempfile
import time
from pathlib import Path

from . import paths

# A folder is only swept when older than this: its run creates it, then
# locks it a moment later.
MIN_AGE_S = 60
_held: list[int] = []   # lock fds of this process, open until exit


def _sweep(base: Path) -> None:
    for d in base.iterdir():
        try:
            if time.time() - d.stat().st_mtime < MIN_AGE_S:
                continue
            fd = os.open(d / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue     # its run is alive
        finally:
            os.close(fd)
        shutil.rmtree(d, ignore_errors=True)


def use_private_tmp() -> None:
    """Point this process's (and its children's) temporary files at a folder
    of its own, after sweeping what dead runs left. Best effort: on any error
    the system temporary folder stays in use."""
    if _held:
        return
    base = paths.cache_dir() / "tmp"
    with contextlib.suppress(OSError):
        base.mkdir(parents=True, exist_ok=True)
        _sweep(base)
        mine = Path(tempfile.mkdtemp(prefix="run-", dir=base))
        fd = os.open(mine / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        _held.append(fd)
        tempfile.tempdir = str(mine)
        os.environ["TMPDIR"] = str(mine)   # Node's os.tmpdir()
        atexit.register(shutil.rmtree, mine, True)
