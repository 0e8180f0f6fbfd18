"""The coverage tables: for each upstream source `validate` follows (the API server's
validation of a group at the pinned Kubernetes release, a webhook of a pinned
controller), one row per upstream validation function saying whether a rule ports it.
One YAML file per source under generator/validate/coverage/:

    source: kubernetes/kubernetes@v1.31.1 pkg/apis/core/validation/validation.go
    upstream: reference/kubernetes@v1.31.1/pkg/apis/core/validation   # optional: the Go files
    entry_points: [ValidatePodCreate, ValidateService, ...]           # optional, with upstream
    rows:
    - function: ValidateProbe        # the upstream Go function
      kinds: [Pod templates]         # optional
      status: ported                 # ported | not-applicable | not-ported
      rules: [AS120]                 # the rule ids, required when ported
      why: "..."                     # required unless ported

Where a table names its upstream Go files and entry points, the rows must be exactly the
functions reachable from those entry points (`reachable`, a plain reading of the Go
source: tests/test_validate_coverage.py regenerates the list and fails on a function
without a row). docs/validate-rules.md is generated from these tables (generator.docsgen).

A row is checkable unless it is not-applicable (it needs a live cluster or the stored
object, or it is a helper that reports nothing itself): the ported share is ported rows
over checkable rows."""
from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from ..kernel import yamlio

# Package data (setup.cfg package_data), read the way the installed tool reads it.
COVERAGE_DIR = resources.files("generator.validate") / "coverage"
PORTED, NOT_APPLICABLE, NOT_PORTED = "ported", "not-applicable", "not-ported"
STATUSES = (PORTED, NOT_APPLICABLE, NOT_PORTED)
_ROW_KEYS = {"function", "kinds", "status", "rules", "why"}
_TABLE_KEYS = {"source", "upstream", "entry_points", "rows"}


@dataclass(frozen=True)
class Row:
    function: str
    status: str
    rules: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    why: str = ""


@dataclass(frozen=True)
class Table:
    name: str                       # the file's stem: core, batch, jobset-webhook, ...
    source: str                     # "owner/repo@release path"
    rows: tuple[Row, ...]
    upstream: str = ""              # Go files' folder under the upstream data root (reference/...)
    entry_points: tuple[str, ...] = ()

    @property
    def checkable(self) -> list[Row]:
        return [r for r in self.rows if r.status != NOT_APPLICABLE]

    @property
    def ported(self) -> list[Row]:
        return [r for r in self.rows if r.status == PORTED]


class CoverageError(ValueError):
    pass


def _strings(v, where: str) -> tuple[str, ...]:
    if v is None:
        return ()
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise CoverageError(f"{where}: must be a list of strings")
    return tuple(v)


def _row(raw, where: str) -> Row:
    if not isinstance(raw, dict) or set(raw) - _ROW_KEYS:
        raise CoverageError(f"{where}: a row is a mapping of {', '.join(sorted(_ROW_KEYS))}")
    function, status, why = raw.get("function"), raw.get("status"), raw.get("why") or ""
    if not isinstance(function, str) or not function:
        raise CoverageError(f"{where}: function is required")
    if status not in STATUSES:
        raise CoverageError(f"{where} ({function}): status must be one of {', '.join(STATUSES)}")
    rules = _strings(raw.get("rules"), f"{where} ({function}).rules")
    if status == PORTED and not rules:
        raise CoverageError(f"{where} ({function}): a ported row names its rules")
    if status != PORTED and not (isinstance(why, str) and why.strip()):
        raise CoverageError(f"{where} ({function}): a row that is not ported says why")
    return Row(function, status, rules, _strings(raw.get("kinds"), f"{where} ({function}).kinds"), str(why))


def load_table(path: Traversable) -> Table:
    doc = yamlio.load_strict(path.read_text())
    where = path.name
    if not isinstance(doc, dict) or set(doc) - _TABLE_KEYS or not isinstance(doc.get("source"), str):
        raise CoverageError(f"{where}: a table is a mapping of {', '.join(sorted(_TABLE_KEYS))} with a source")
    rows = doc.get("rows")
    if not isinstance(rows, list) or not rows:
        raise CoverageError(f"{where}: rows must be a non-empty list")
    parsed = tuple(_row(r, f"{where} rows[{i}]") for i, r in enumerate(rows))
    seen: set[str] = set()
    for r in parsed:
        if r.function in seen:
            raise CoverageError(f"{where}: {r.function} has two rows")
        seen.add(r.function)
    return Table(path.name.removesuffix(".yaml"), doc["source"], parsed, str(doc.get("upstream") or ""),
                 _strings(doc.get("entry_points"), f"{where}.entry_points"))


def tables(root: Traversable = COVERAGE_DIR) -> list[Table]:
    """Every coverage table, in file-name order."""
    return [load_table(p) for p in sorted(root.iterdir(), key=lambda p: p.name) if p.name.endswith(".yaml")]


def share(rows: list[Row], of: list[Row]) -> str:
    return f"{len(rows)}/{len(of)} = {100 * len(rows) / len(of):.0f} %" if of else "0/0"


# ---------------------------------------------------------------- the Go source

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STRING = re.compile(r"`[^`]*`|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'")
_FUNC = re.compile(r"^func (?:\([^)]*\) )?([A-Za-z_]\w*)\s*[\[(]", re.M)
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


def go_functions(text: str) -> dict[str, str]:
    """Top-level function (and method) name -> body, of Go source with its comments and
    string literals blanked (so a brace or a name inside them is not read as code)."""
    code = _STRING.sub('""', _COMMENT.sub("", text))
    out: dict[str, str] = {}
    for m in _FUNC.finditer(code):
        start = _body_start(code, m.end())
        depth, j = 0, start
        while j < len(code):
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            if depth == 0:
                break
            j += 1
        out[m.group(1)] = code[start:j + 1]
    return out


def _body_start(code: str, at: int) -> int:
    """The `{` opening the body: the first one outside the signature's parentheses."""
    depth = 1   # the pattern consumed the first ( or [
    j = at
    while depth:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(code[j], 0)
        j += 1
    while code[j] != "{":
        if code[j] in "([":      # results list or generic parameters
            j = _body_start(code, j + 1) - 1
            continue
        j += 1
    return j


def reachable(sources: list[str], entry_points: tuple[str, ...] | list[str]) -> list[str]:
    """The functions of the Go sources the entry points reach, entry points first, then
    in breadth-first order. A function is reached when its name occurs in a reached body,
    called or passed as a value (ValidateNameFunc(ValidatePodName)). Functions of other
    packages (apimachinery's ValidateObjectMeta, metav1validation) are not in the sources
    and are not followed."""
    funcs: dict[str, str] = {}
    for text in sources:
        funcs.update(go_functions(text))
    order: list[str] = []
    queue = [e for e in entry_points if e in funcs]
    seen = set(queue)
    while queue:
        f = queue.pop(0)
        order.append(f)
        for tok in _IDENT.findall(funcs[f]):
            if tok in funcs and tok not in seen:
                seen.add(tok)
                queue.append(tok)
    return order


def unlisted(table: Table, root: Path) -> tuple[list[str], list[str]]:
    """(reachable functions without a row, rows no entry point reaches) of a table whose Go
    sources are under `root` (the upstream data root: ../shared, or the download cache)."""
    folder = root / table.upstream
    sources = [p.read_text() for p in sorted(folder.glob("*.go"))]
    reached = reachable(sources, table.entry_points)
    rows = {r.function for r in table.rows}
    return [f for f in reached if f not in rows], sorted(rows - set(reached))


def main(argv: list[str] | None = None) -> int:
    """`python -m generator.validate.coverage`: for each table with Go sources, the rows to add
    (as YAML stubs, not ported yet) and the rows to drop; exit 1 if there are any."""
    from ..kernel import upstream
    root = upstream.data_root()
    dirty = False
    for t in tables():
        if not t.upstream:
            continue
        missing, extra = unlisted(t, root)
        for f in missing:
            print(f"{t.name}: add\n- function: {f}\n  status: not-ported\n  why: not ported yet")
        for f in extra:
            print(f"{t.name}: drop the row for {f} (no entry point reaches it)")
        dirty |= bool(missing or extra)
    return 1 if dirty else 0


if __name__ == "__main__":
    raise SystemExit(main())
