"""The coverage tables (generator/validate/coverage/): well formed, every ported row's
rules exist, every new API-server and webhook rule is in a row, and the core table lists
exactly the functions of the pinned validation.go that the create-time entry points
reach (regenerated here from the Go source)."""
from __future__ import annotations

import re

import pytest

from generator.validate import coverage
from generator.validate.rules import RULES
from tests import helpers

TABLES = coverage.tables()


def test_tables_load_and_name_their_source():
    assert TABLES, "no coverage table"
    for t in TABLES:
        assert re.match(r"^[\w.-]+/[\w.-]+@\S+ \S", t.source), t.name


@pytest.mark.parametrize("table", TABLES, ids=[t.name for t in TABLES])
def test_ported_rows_name_registered_rules(table):
    unknown = [(r.function, rule) for r in table.ported for rule in r.rules if rule not in RULES]
    assert unknown == []


def test_every_new_api_rule_is_in_a_row():
    """AS100-AS599 and WH100-WH199 are ported from a coverage row; older ids may be too."""
    named = {rule for t in TABLES for r in t.ported for rule in r.rules}
    new = {r for r in RULES if re.match(r"^(AS[1-5]\d\d|WH1\d\d)$", r)}
    assert sorted(new - named) == []


@pytest.mark.parametrize("table", [t for t in TABLES if t.upstream], ids=[t.name for t in TABLES if t.upstream])
def test_rows_are_the_reachable_functions(table):
    folder = helpers.SHARED / table.upstream
    sources = [p.read_text() for p in sorted(folder.glob("*.go"))]
    assert sources, f"{folder}: the upstream Go source is missing"
    reached = coverage.reachable(sources, table.entry_points)
    assert set(table.entry_points) <= set(reached), "an entry point is not a function of the source"
    missing, extra = coverage.unlisted(table, helpers.SHARED)
    assert missing == [], "reachable functions without a row (python -m generator.validate.coverage prints them)"
    assert extra == [], "rows for functions the entry points do not reach"


def test_reachable_follows_calls_and_function_values():
    go = '''package v
// func Commented() {}
func A(x int) field.ErrorList { return B(x, "}") }
func B(x int, s string) (out field.ErrorList) { return ValidateNameFunc(C)(s) }
func C(name string, prefix bool) []string { return nil }
func D() {}
func (v *T) M() {}
'''
    assert coverage.reachable([go], ["A"]) == ["A", "B", "C"]
    assert set(coverage.go_functions(go)) == {"A", "B", "C", "D", "M"}


def test_a_malformed_row_is_refused(tmp_path):
    (tmp_path / "x.yaml").write_text("source: a/b@v1 f.go\nrows:\n- {function: F, status: ported}\n")
    with pytest.raises(coverage.CoverageError, match="ported row names its rules"):
        coverage.tables(tmp_path)
    (tmp_path / "x.yaml").write_text("source: a/b@v1 f.go\nrows:\n- {function: F, status: not-ported}\n")
    with pytest.raises(coverage.CoverageError, match="says why"):
        coverage.tables(tmp_path)


def test_unlisted_names_missing_and_stale_rows(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "v.go").write_text("package v\nfunc Entry() { helper() }\nfunc helper() {}\nfunc other() {}\n")
    table = coverage.Table("t", "a/b@v1 v.go", (coverage.Row("Entry", "ported", ("AS001",)),
                                               coverage.Row("other", "not-ported", why="x")),
                           upstream="src", entry_points=("Entry",))
    assert coverage.unlisted(table, tmp_path) == (["helper"], ["other"])
