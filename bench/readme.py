"""The README's Performance section quotes the targets table of the latest `make bench`
run: bench/run.py writes it between two markers after writing bench/results.md, and
tests/test_docs.py holds the two equal, so the README never shows a figure typed by hand."""
from __future__ import annotations

import re
from pathlib import Path

START = "<!-- bench:targets (written by make bench; do not edit) -->"
END = "<!-- /bench:targets -->"


def targets_table(results: str) -> list[str]:
    """The rows of the first table under the report's Targets heading."""
    rows: list[str] = []
    for line in results.split("## Targets", 1)[1].splitlines() if "## Targets" in results else []:
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break
    return rows


def measured_on(results: str) -> str:
    m = re.search(r"Measured (\d{4}-\d{2}-\d{2})", results)
    return m.group(1) if m else "unknown date"


def block(results: str) -> str:
    return "\n".join([START, f"From `make bench` on {measured_on(results)} (two cores; details in "
                      "[bench/results.md](bench/results.md) and [Performance](docs/performance.md)):", "",
                      *targets_table(results), END])


def quoted(readme: str) -> str:
    """What the README quotes now (between the markers), or '' when it has no such block."""
    if START not in readme or END not in readme:
        return ""
    return START + readme.split(START, 1)[1].split(END, 1)[0] + END


def sync(readme_path: Path, results: str) -> None:
    readme = readme_path.read_text()
    old = quoted(readme)
    if old:
        readme_path.write_text(readme.replace(old, block(results)))
