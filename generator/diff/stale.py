"""Stale output: the spec says one thing, the committed output another.

`diff` and `check` regenerate from the spec in the working tree (the public
entry points generator.model.load and generator.builders.tree.build) and compare
with the output directories on disk. `diff` also compares the spec file at
the base commit with the working tree's, which says whether the change touched
the spec at all, and is the only evidence left when the spec cannot be built."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..kernel import paths, stamp, writer
from ..kernel.errors import SpecError

HEADLINE = "the spec changed but the output was not regenerated"
REMEDY = "run `gke-ml-platform synth` and commit the regenerated files"


@dataclass
class Staleness:
    spec: str                                   # the spec file, as given
    spec_changed: bool | None = None            # since the base commit (None: not known)
    files: list[str] = field(default_factory=list)   # writer.diff_trees lines: what regeneration would change
    error: str | None = None                    # why the spec could not be regenerated
    regenerated: bool = False

    @property
    def stale(self) -> bool:
        return bool(self.files)


def regenerate(spec_path: str | Path) -> dict[str, str]:
    """The tree the spec generates (SpecError when it is invalid)."""
    from .. import model as spec  # cdk8s and Node: only when regenerating
    from ..builders import tree
    return stamp.add(tree.build(spec.load(spec_path)), spec_path)


def check(spec_path: str | Path, out: Path) -> Staleness:
    """Regenerate from `spec_path` and compare with the output under `out`."""
    result = Staleness(str(spec_path))
    if not Path(spec_path).is_file():
        result.error = f"no spec at {spec_path}; the output could not be regenerated"
        return result
    try:
        expected = regenerate(spec_path)
    except SpecError as e:
        result.error = "the spec does not build:\n" + e.render()
        return result
    result.regenerated = True
    result.files = writer.diff_trees(expected, writer.read_tree(Path(out), paths.OUTPUT_DIRS))
    return result


def with_base(result: Staleness, spec_at_base: str | None, spec_now: str | None,
              output_changed: bool) -> Staleness:
    """Add what the base commit says: whether the spec changed since, and, when
    regeneration was not possible, a spec change without any output change."""
    if spec_at_base is not None and spec_now is not None:
        result.spec_changed = spec_at_base != spec_now
    if not result.regenerated and result.spec_changed and not output_changed:
        result.files = ["no generated file differs from the base, though the spec does"]
    return result
