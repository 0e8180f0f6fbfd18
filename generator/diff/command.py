"""`python -m generator diff [BASE_REF]`: the base side read from git (no
checkout), the other side from the working tree; the spec regenerated to catch
stale output."""
from __future__ import annotations

import os
from pathlib import Path

from ..kernel import paths, writer
from . import gitio, markdown, stale, text
from .report import Report, compare


def _spec_rel(root: Path, spec: Path) -> str | None:
    """The spec's path inside the repository root, for reading it at the base commit."""
    rel = os.path.relpath(spec.resolve(), root.resolve())
    return None if rel.startswith("..") else Path(rel).as_posix()


def _shown(path: Path) -> str:
    """The path as messages show it: relative when under the working directory."""
    rel = os.path.relpath(path)
    return str(path) if rel.startswith("..") else rel


def review(root: Path, base_ref: str | None, spec: str | Path | None = None, regenerate: bool = True,
           crd_root: Path | None = None) -> Report:
    root = Path(root)
    commit, how = gitio.resolve_base(root, base_ref)
    old_tree = gitio.tree_at(root, commit, paths.OUTPUT_DIRS)
    new_tree = writer.read_tree(root, paths.OUTPUT_DIRS)
    report = compare(old_tree, new_tree, commit, how, crd_root)
    spec_path = Path(spec) if spec else root / "platform.yaml"
    if regenerate:
        result = stale.check(spec_path, root)
    else:
        result = stale.Staleness(str(spec_path), error="regeneration skipped (--no-regenerate)")
    result.spec = _shown(spec_path)
    rel = _spec_rel(root, spec_path)
    at_base = gitio.file_at(root, commit, rel) if rel else None
    now = spec_path.read_text() if spec_path.is_file() else None
    report.stale = stale.with_base(result, at_base, now, output_changed=old_tree != new_tree)
    return report


def run(root: Path, base_ref: str | None, fmt: str, spec: str | Path | None = None, regenerate: bool = True,
        crd_root: Path | None = None) -> str:
    report = review(root, base_ref, spec, regenerate, crd_root)
    if fmt == "json":
        from . import jsonreport
        return jsonreport.render(report)
    return markdown.render(report) if fmt == "markdown" else text.render(report)
