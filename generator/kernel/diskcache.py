"""Values kept between runs in the per-user cache (paths.cache_dir()), each under a digest of
everything it was computed from, so a stale entry is never read: a changed input is a new key.
Keeping is best effort (a read-only home only costs speed), and a file is written beside its
name and renamed into place, so a reader never sees half of one."""
from __future__ import annotations

import os
from pathlib import Path

from . import paths


def entry(kind: str, key: str, suffix: str = "json") -> Path:
    """Where the value of `kind` computed from inputs whose digest is `key` is kept."""
    return paths.cache_dir() / f"{kind}-{key}.{suffix}"


def read(path: Path) -> str | None:
    """The kept text, or None when there is none (or it cannot be read)."""
    try:
        return path.read_text()
    except OSError:
        return None


def write_atomically(path: Path, data: bytes) -> None:
    """`data` at `path`, all or nothing: written beside it under a per-process name, then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def keep(path: Path, text: str) -> None:
    """Best effort: a cache that cannot be written only costs the next run the time to compute."""
    try:
        write_atomically(path, text.encode())
    except OSError:
        pass
