"""Git access for `generator diff`: the base commit and the files at it, read
from git objects (`ls-tree` + `cat-file`), never by checking anything out."""
from __future__ import annotations

import subprocess
from pathlib import Path


class DiffError(Exception):
    """The comparison cannot be made (not a git repository, unknown ref)."""


def git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    try:
        out = subprocess.run(["git", "-C", str(root), *args], input=stdin, capture_output=True, timeout=120)
    except FileNotFoundError:
        raise DiffError("git is not installed") from None
    if out.returncode != 0:
        raise DiffError(f"git {' '.join(args[:2])} failed: {out.stderr.decode(errors='replace').strip()}")
    return out.stdout


def resolve_base(root: Path, ref: str | None) -> tuple[str, str]:
    """(commit, how it was chosen). Default: the merge base of HEAD and main
    (origin/main where there is no local main, as in CI checkouts)."""
    if ref:
        try:
            return git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").decode().strip(), ref
        except DiffError:
            raise DiffError(f"{ref!r} is not a commit in {root}") from None
    for main in ("main", "origin/main"):
        try:
            git(root, "rev-parse", "--verify", "--quiet", f"{main}^{{commit}}")
        except DiffError:
            continue
        return git(root, "merge-base", "HEAD", main).decode().strip(), f"merge base with {main}"
    raise DiffError(f"no branch main or origin/main in {root}; name the base: gke-ml-platform diff BASE_REF")


def tree_at(root: Path, commit: str, dirs: tuple[str, ...]) -> dict[str, str]:
    """The files under `dirs` at a commit, read from git objects."""
    listing = git(root, "ls-tree", "-r", "-z", commit, "--", *dirs)
    blobs = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        _mode, kind, sha = meta.split()
        if kind == b"blob":
            blobs.append((path.decode(), sha.decode()))
    if not blobs:
        return {}
    data = git(root, "cat-file", "--batch", stdin="".join(f"{sha}\n" for _, sha in blobs).encode())
    out: dict[str, str] = {}
    pos = 0
    for name, _ in blobs:
        header_end = data.index(b"\n", pos)
        size = int(data[pos:header_end].split()[2])
        start = header_end + 1
        out[name] = data[start:start + size].decode()
        pos = start + size + 1
    return out


def file_at(root: Path, commit: str, path: str) -> str | None:
    """One file's text at a commit (`path` relative to `root`), or None where it does not exist."""
    listing = git(root, "ls-tree", "-z", commit, "--", path)
    if not listing.strip(b"\0"):
        return None
    return git(root, "cat-file", "-p", f"{commit}:./{path}").decode(errors="replace")
