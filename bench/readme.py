"""The README's Performance section and docs/performance.md quote the targets table of the
latest `make bench` run: bench/run.py writes it between two markers in each after writing
bench/results.md, and tests/test_docs.py holds them equal, so neither page shows a figure
typed by hand."""
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


# Each page's lead-in: the README links the report; the docs site (MkDocs, strict) can only
# name it, since it lies outside docs/.
LEADS = {
    "README.md": "(two cores; details in [bench/results.md](bench/results.md) and [Performance](docs/performance.md))",
    "docs/performance.md": "(two cores; every table of the run is in `bench/results.md`)",
}


def block(results: str, page: str = "README.md") -> str:
    return "\n".join([START, f"From `make bench` on {measured_on(results)} {LEADS[page]}:", "",
                      *targets_table(results), END])


def quoted(readme: str) -> str:
    """What the README quotes now (between the markers), or '' when it has no such block."""
    if START not in readme or END not in readme:
        return ""
    return START + readme.split(START, 1)[1].split(END, 1)[0] + END


def sync(root: Path, results: str) -> None:
    """Rewrite the block of every page in LEADS under `root` (a page without one is left alone)."""
    for page in LEADS:
        path = root / page
        text = path.read_text()
        old = quoted(text)
        if old:
            path.write_text(text.replace(old, block(results, page)))
