"""How `generator validate` does on manifests we did not write.

    python -m bench.corpus ROOT [--list bench/corpus.yaml] [--out bench/corpus-results.md] [--unclassified]

ROOT holds a local copy of the upstream files named in bench/corpus.yaml, at
ROOT/<owner>/<repo>/<path> as of the listed commit (for example from `git
clone` and `git show <commit>:<path>`). Nothing is downloaded: upstream files
stay out of the project; only the list, with each error and warning the
validator reported classified right or wrong by hand, is committed.

Each file is validated on its own (a file is open-world), with the pinned
default releases (the list's commits are the matching upstream tags where the
project has them). The report gives findings per file, how many errors and
warnings were classified right and wrong, findings not classified yet, and
crashes (exit 2 or IE001), which must be none."""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from generator.kernel import paths, yamlio

LIST = paths.ROOT / "bench" / "corpus.yaml"


def key(f) -> str:
    return f"{f.rule} {f.object} @ {f.path}"


def run(root: Path, entries: list[dict]) -> dict:
    """{file id: (findings, crash message or None)} for every listed file present under root."""
    from generator.validate import Options, validate
    from generator.validate.context import UsageError

    out: dict[str, tuple[list | None, str | None]] = {}
    for e in entries:
        fid = f"{e['repo']}:{e['path']}"
        local = root / e["repo"] / e["path"]
        if not local.is_file():
            out[fid] = (None, "missing from the local copy")
            continue
        opts = Options(paths=[str(local)], spec=str(root / "no-spec.yaml"), spec_explicit=False, out=str(root))
        try:
            report = validate(opts)
        except UsageError as err:
            out[fid] = ([], f"exit 2: {err}")
            continue
        crash = next((f.message for f in report.findings if f.rule == "IE001"), None)
        out[fid] = (report.findings, crash)
    return out


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.corpus", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", help="local copy: ROOT/<owner>/<repo>/<path>")
    ap.add_argument("--list", default=str(LIST), help="the corpus list with verdicts (default bench/corpus.yaml)")
    ap.add_argument("--out", help="write the Markdown report here (default: stdout)")
    ap.add_argument("--unclassified", action="store_true", help="print errors and warnings with no verdict, as YAML")
    return ap.parse_args(argv)


def _tally_file(fid: str, findings: list, crash: str | None, verdicts: dict, counts: Counter, unclassified: dict) -> str:
    """Count one validated file's findings against its verdicts; its table row. Errors and warnings
    with no verdict yet are collected in `unclassified` (notes are never classified)."""
    counts["files"] += 1
    if crash:
        counts["crashes"] += 1
    sev = Counter(f.severity for f in findings)
    wrong = 0
    for f in findings:
        counts[f.severity] += 1
        if f.severity == "info":
            continue
        v = verdicts.get(fid, {}).get(key(f))
        if v is None:
            counts[f"{f.severity} unclassified"] += 1
            unclassified.setdefault(fid, []).append({"finding": key(f), "verdict": "?", "why": f.message[:160]})
        else:
            counts[f"{f.severity} {v['verdict']}"] += 1
            wrong += v["verdict"] == "wrong"
    return f"| {fid} | {sev['error']} | {sev['warning']} | {sev['info']} | {wrong} | {crash or ''} |"


def _summary(counts: Counter) -> list[str]:
    """The report's bullet lines: files, right and wrong findings, wrong errors per finding."""
    findings_total = counts["error"] + counts["warning"]
    wrong_errors = counts["error wrong"]
    return [
        f"- files validated: {counts['files']} (missing from the local copy: {counts['missing']}); crashes: "
        f"{counts['crashes']}",
        f"- errors: {counts['error']} ({counts['error right']} right, {wrong_errors} wrong, "
        f"{counts['error unclassified']} unclassified); warnings: {counts['warning']} ({counts['warning right']} right, "
        f"{counts['warning wrong']} wrong, {counts['warning unclassified']} unclassified); notes: {counts['info']}",
        f"- wrong errors per finding (errors and warnings): {wrong_errors} / {findings_total}"
        + (f" = 1 in {findings_total / wrong_errors:.0f}" if wrong_errors else ""), ""]


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    data = yamlio.load_strict(Path(args.list).read_text())
    entries = data["files"]
    verdicts = {fid: {v["finding"]: v for v in vs or []} for fid, vs in (data.get("verdicts") or {}).items()}
    results = run(Path(args.root), entries)

    counts: Counter = Counter()
    lines = ["# validate on upstream example manifests", "",
             f"{len(entries)} files listed in bench/corpus.yaml; each validated alone (open world), default pins.", "",
             "| file | errors | warnings | notes | wrong | note |", "|---|---:|---:|---:|---:|---|"]
    unclassified: dict = {}
    for e in entries:
        fid = f"{e['repo']}:{e['path']}"
        findings, crash = results[fid]
        if findings is None:
            counts["missing"] += 1
            continue
        lines.append(_tally_file(fid, findings, crash, verdicts, counts, unclassified))
    # the summary goes above the table, but needs the table's counts
    lines[3:3] = _summary(counts)
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    if args.unclassified and unclassified:
        sys.stdout.write(yamlio.dump({"verdicts": unclassified}))
    return 1 if counts["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
