"""Write the rendered tree. Everything is rendered in memory first; then the
new tree is written beside the old one and swapped in directory by directory,
so a failed synth never leaves half-written output, and files that the spec no
longer produces disappear."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def write_tree(tree: dict[str, str], root: Path, owned: tuple[str, ...]) -> None:
    """Replace the `owned` top-level directories of `root` with `tree`."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    stray = sorted({p.split("/", 1)[0] for p in tree} - set(owned))
    if stray:
        raise ValueError(f"tree has paths outside the owned directories: {stray}")
    staging = Path(tempfile.mkdtemp(prefix=".synth-new-", dir=root))
    retired = Path(tempfile.mkdtemp(prefix=".synth-old-", dir=root))
    try:
        made: set[Path] = set()
        for rel, text in tree.items():
            path = staging / rel
            if path.parent not in made:   # once per directory, not once per file
                path.parent.mkdir(parents=True, exist_ok=True)
                made.add(path.parent)
            path.write_text(text)
        for top in owned:
            (staging / top).mkdir(exist_ok=True)
        for top in owned:
            current = root / top
            if current.exists():
                os.replace(current, retired / top)
            os.replace(staging / top, current)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(retired, ignore_errors=True)


def read_tree(root: Path, owned: tuple[str, ...]) -> dict[str, str]:
    root = Path(root)
    out = {}
    for top in owned:
        base = root / top
        if not base.exists():
            continue
        for path in sorted(base.rglob("*")):
            if path.is_file():
                out[path.relative_to(root).as_posix()] = path.read_text()
    return out


def diff_trees(expected: dict[str, str], actual: dict[str, str]) -> list[str]:
    """Lines naming each file that is missing, extra or different."""
    lines = []
    for path in sorted(set(expected) | set(actual)):
        if path not in actual:
            lines.append(f"missing: {path}")
        elif path not in expected:
            lines.append(f"not generated (stale or hand-added): {path}")
        elif expected[path] != actual[path]:
            lines.append(f"differs: {path}")
    return lines
