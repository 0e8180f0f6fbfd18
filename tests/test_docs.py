"""The documentation: the generated reference pages are current, the rules
page is what `validate --list-rules` prints, the README stays a few screens
and its quick start runs, and the suite never reads the shipped spec,
scenarios/ or committed output (tests/conftest.py's guard, and a run in a
copy of the repository without them)."""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator import cli, docsgen
from generator.kernel import paths
from tests import conftest, helpers

README = paths.ROOT / "README.md"
GETTING_STARTED = paths.ROOT / "docs" / "getting-started.md"


# ---------------------------------------------------------------- generated pages

@pytest.mark.parametrize("name", sorted(docsgen.PAGES))
def test_generated_reference_page_is_current(name):
    page = docsgen.DOCS / name
    assert page.is_file(), f"docs/{name} is missing; run `{docsgen.FIX}` (make docs-ref) and commit it"
    assert page.read_text() == docsgen.PAGES[name](), (
        f"docs/{name} is stale; run `{docsgen.FIX}` (make docs-ref) and commit it")


def test_stale_pages_are_named_and_written(tmp_path):
    assert docsgen.stale(tmp_path) == [tmp_path / n for n in docsgen.PAGES]   # none there yet
    docsgen.write(tmp_path)
    assert docsgen.stale(tmp_path) == []
    rules = tmp_path / "reference" / "rules.md"
    rules.write_text(rules.read_text().replace("KQ001", "KQ999"))
    assert docsgen.stale(tmp_path) == [rules]


def test_rules_page_is_exactly_what_list_rules_prints(capsys):
    assert cli.main(["validate", "--list-rules"]) == 0
    printed = capsys.readouterr().out
    page = (docsgen.REFERENCE / "rules.md").read_text()
    table = page[page.index("| rule |"):]
    assert table == printed
    from generator.validate.rules import RULES
    assert len([line for line in printed.splitlines() if re.match(r"\| [A-Z]{2}\d{3} \|", line)]) == len(RULES)


def test_cli_page_names_every_command_and_option():
    page = (docsgen.REFERENCE / "cli.md").read_text()
    parser = cli.build_parser(prog=docsgen.COMMAND)
    for name, sub, _ in docsgen._subcommands(parser):
        assert f"\n## {name}\n" in page, name
        for action in sub._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}`" in page.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0], (name, option)


def test_cli_page_does_not_depend_on_the_working_directory(tmp_path, monkeypatch):
    expected = docsgen.cli_reference()
    monkeypatch.chdir(tmp_path)
    assert docsgen.cli_reference() == expected
    assert str(paths.ROOT) not in expected


def test_spec_page_has_every_field_of_the_schema():
    import json

    from generator.model import json_schema
    doc = json.loads(json_schema.render())
    page = (docsgen.REFERENCE / "spec.md").read_text()
    sections = dict(re.findall(r"\n## (\S+)\n(.*?)(?=\n## |\Z)", page, re.S))
    for key in doc["properties"]:
        assert f"| `{key}` |" in page.split("\n## ", 2)[1], key
    for name, definition in doc["$defs"].items():
        for key in definition.get("properties", {}):
            assert f"| `{key}` |" in sections[name], (name, key)


# ---------------------------------------------------------------- the README

def test_readme_is_a_few_screens():
    size = len(README.read_text())
    assert size < 12_000, f"README.md is {size} characters; move detail into docs/"


def test_readme_links_resolve():
    links = re.findall(r"\]\(([^)\s]+)\)", README.read_text())
    local = [link.split("#", 1)[0] for link in links if "://" not in link]
    assert local and [link for link in local if not (paths.ROOT / link).exists()] == []


@pytest.mark.parametrize("page", ["README.md", "docs/performance.md"])
def test_performance_pages_quote_the_latest_bench_run(page):
    """The Performance tables are the targets table bench/run.py wrote into bench/results.md in the
    same run (bench/readme.py), never typed."""
    from bench import readme
    results = (paths.ROOT / "bench" / "results.md").read_text()
    assert readme.targets_table(results), "bench/results.md has no targets table"
    assert readme.quoted((paths.ROOT / page).read_text()) == readme.block(results, page)


def test_performance_sync_rewrites_only_its_block(tmp_path):
    from bench import readme
    (tmp_path / "docs").mkdir()
    for page in readme.LEADS:
        (tmp_path / page).write_text(f"intro\n{readme.START}\nold | 9.99× |\n{readme.END}\nafter\n")
    results = ("Measured 2026-01-02 by x\n\n## Targets\n\n| measure | this run |\n|---|---:|\n| a | 1.00× |\n"
               "\n| not this |\n")
    readme.sync(tmp_path, results)
    for page in readme.LEADS:
        text = (tmp_path / page).read_text()
        assert text.startswith("intro\n") and text.endswith("\nafter\n") and "9.99" not in text
        assert "| a | 1.00× |" in text and "not this" not in text and "2026-01-02" in text


def _block_after(text: str, heading: str) -> str:
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```sh\n", 1)[1].split("```", 1)[0]


def _quick_start() -> list[str]:
    return [line for line in _block_after(README.read_text(), "The first five minutes").splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_readme_and_getting_started_show_the_same_commands():
    readme, page = README.read_text(), GETTING_STARTED.read_text()
    for heading in ("Install", "The first five minutes"):
        assert _block_after(readme, heading) == _block_after(page, heading), heading


def test_quick_start_is_the_contract():
    lines = _quick_start()
    assert re.fullmatch(r"gke-ml-platform init --example [a-z0-9-]+ my-platform", lines[0]), lines[0]
    assert lines[1:5] == ["cd my-platform", "gke-ml-platform synth", "gke-ml-platform validate",
                          "gke-ml-platform plan"]
    assert re.fullmatch(r"kubectl apply -k overlays/[a-z0-9-]+", lines[5]), lines[5]
    assert len(lines) == 6
    assert any(line.startswith("pip install ") for line in _block_after(README.read_text(), "Install").splitlines())


@pytest.mark.slow   # init, synth (Node), validate and plan as whole processes
def test_quick_start_runs(tmp_path):
    """Every command of the README's quick start, in order, in an empty folder: the
    installed command is this checkout's `python -m generator`; `kubectl apply -k`
    becomes `kubectl kustomize` (no cluster here), which proves the overlay builds.
    Needs `init` and the spec found from the working directory (the installed command)."""
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "gke-ml-platform").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m generator "$@"\n')
    (shim / "gke-ml-platform").chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, PATH=os.pathsep.join([str(shim), str(Path(helpers.kubectl()).parent), os.environ["PATH"]]),
               PYTHONPATH=str(paths.ROOT), CRD_DIR=str(helpers.CRD_ROOT), SHARED_DIR=str(helpers.SHARED),
               GENERATOR_CACHE_DIR=str(tmp_path / "cache"))
    cwd = work
    for line in _quick_start():
        words = line.split()
        if words[0] == "cd":
            cwd = cwd / words[1]
            assert cwd.is_dir(), f"{line}: no such folder"
            continue
        if words[:3] == ["kubectl", "apply", "-k"]:
            words = ["kubectl", "kustomize", words[3]]
        r = subprocess.run(words, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)
        assert r.returncode == 0, f"{line}: exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


# ---------------------------------------------------------------- tests never read the shipped files

def test_the_guard_notices_a_test_reading_the_shipped_files():
    with contextlib.suppress(OSError):   # seen as it is tried, whether or not it is there
        open(paths.ROOT / "scenarios" / "x.yaml").close()  # noqa: SIM115
    os.listdir(paths.ROOT / "tests" / "fixtures" / "scenarios")   # the tests' own: fine
    seen = list(conftest._opened_shipped)
    conftest._opened_shipped.clear()
    assert seen == [str(paths.ROOT / "scenarios" / "x.yaml")]
    assert helpers.shipped_path(paths.ROOT / "overlays" / "l4-standard" / "kustomization.yaml")
    assert helpers.shipped_path(paths.ROOT / "platform.yaml")
    assert not helpers.shipped_path(paths.ROOT / "tests" / "fixtures" / "platform.yaml")
    assert not helpers.shipped_path(paths.ROOT / "examples" / "multikueue.yaml")


# A part of the suite that synthesizes, validates, plans and diffs: in a copy of
# the repository whose platform.yaml is broken and without scenarios/ or output.
# These files read the shipped spec once (validate's default --spec, in process and in
# subprocesses, and the committed overlay as --context).
SUBSET = ("tests/test_spec_errors.py", "tests/test_validate_cli.py", "tests/test_validate_robust.py",
          "tests/test_multikueue_validate.py", "tests/test_bench.py", "tests/test_limits.py", "tests/test_docs.py")


@pytest.mark.slow   # a part of the suite, again, in a copy
def test_the_suite_passes_with_the_shipped_spec_broken_and_the_output_gone(tmp_path):
    repo = helpers.copy_of_repository(tmp_path / "repo")
    (repo / "platform.yaml").write_text("specVersion: [this is not a spec\n")
    assert not any((repo / d).exists() for d in ("scenarios", *paths.OUTPUT_DIRS))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(repo), SHARED_DIR=str(helpers.SHARED))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-m", "not slow", "-p", "no:cacheprovider",
                        *SUBSET], cwd=repo, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-2000:]
    shutil.rmtree(repo)
