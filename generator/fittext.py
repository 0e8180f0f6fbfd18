"""Print a Markdown file cut to fit a size limit, for GitHub surfaces that
refuse longer text: a pull-request comment body (65,536 characters) or a
step's job summary (1 MiB).

    python -m generator.fittext FILE --limit N [--bytes]

Text within the limit is printed unchanged. Longer text is cut at a line
boundary, an open ``` block is closed, and a last line says how much was
left out and where the whole text is (the run's job summary, when the
GitHub Actions environment names the run). Standard library only. Both
this repository's CI and the CI `gke-ml-platform init` writes use it."""
from __future__ import annotations

import argparse
import os
import sys


def _size(text: str, in_bytes: bool) -> int:
    return len(text.encode()) if in_bytes else len(text)


def fit(text: str, limit: int, in_bytes: bool = False, where: str = "") -> str:
    if _size(text, in_bytes) <= limit:
        return text
    total = _size(text, in_bytes)

    def note(shown: int) -> str:
        unit = "bytes" if in_bytes else "characters"
        return (f"\n\n**Cut to fit:** {shown:,} of {total:,} {unit} shown"
                + (f"; the whole text is in the job summary of {where}" if where else "") + ".\n")

    room = limit - _size(note(total) + "\n```", in_bytes)   # the note with the widest numbers
    lines = text.splitlines(keepends=True)
    kept, used = [], 0
    for line in lines:
        n = _size(line, in_bytes)
        if used + n > room:
            break
        kept.append(line)
        used += n
    body = "".join(kept)
    if sum(line.lstrip().startswith("```") for line in kept) % 2:
        body += "```"
    return body + note(_size(body, in_bytes))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--limit", type=int, required=True)
    ap.add_argument("--bytes", action="store_true", help="the limit counts UTF-8 bytes, not characters")
    args = ap.parse_args(argv)
    with open(args.file, encoding="utf-8") as f:
        text = f.read()
    server, repo, run = (os.environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    where = f"{server}/{repo}/actions/runs/{run}" if server and repo and run else ""
    sys.stdout.write(fit(text, args.limit, args.bytes, where))
    return 0


if __name__ == "__main__":
    sys.exit(main())
