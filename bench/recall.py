"""Recall and precision of `generator validate` on broken variants of upstream files.

    python -m bench.recall [--list LIST ...] [--shared ../shared] [--out FILE] [--verbose]

Three lists: bench/recall.yaml (the first corpus), bench/recall-fresh.yaml (a second one,
written later and independently, over every class of issue 36's table) and bench/recall-third.yaml
(a third, on upstream files and fields the other two leave out). Each variant names
an upstream file under ../shared/reference (read at run time, never copied into the project)
or carries a small upstream object inline (`inline:`, with `source:` naming its repository
and path, for kinds no reference file holds), one object in it, and one edit that puts
one real bug in it, with the rule that must report it and the message the API server or
the controller gives. The file is validated as the docs say a user would: on its own
(open world), or with its tutorial folder (`folder:`, file by file with the other files as
context). A variant is caught when a finding of the expected rule, at the expected path,
appears that the unedited file does not have. Precision: of the errors and warnings the
edit adds, the share that is right: the expected finding, or a finding the bug causes
elsewhere that the variant's `also_right` classifies by hand, with the reason. Crashes (exit 2 or IE001) must be none.
A list with `base_right` (file -> rule -> why) also counts the errors and warnings on the unedited
files that it does not classify right: false alarms, which must be none. Variants with a `class`
get a per-class recall table."""
from __future__ import annotations

import argparse
import copy
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

from generator.kernel import paths, yamlio

LIST = paths.ROOT / "bench" / "recall.yaml"
FRESH = paths.ROOT / "bench" / "recall-fresh.yaml"
THIRD = paths.ROOT / "bench" / "recall-third.yaml"
LISTS = (LIST, FRESH, THIRD)


def _key(f) -> tuple:
    """A finding without its object's name: an edit that renames the object keeps the rest."""
    return (f.rule, f.kind, f.path, f.message)


def _find(docs: list, ref: str) -> dict:
    kind, _, name = ref.partition("/")
    for d in docs:
        meta = (d.get("metadata") or {}) if isinstance(d, dict) else {}
        if isinstance(d, dict) and d.get("kind") == kind and name in (meta.get("name"), meta.get("generateName")):
            return d
    raise KeyError(f"no {ref} in the file")


def _parent(body, path: list):
    for part in path[:-1]:
        body = body[part]
    return body, path[-1]


def mutate(docs: list, variant: dict) -> list:
    """The documents with the variant's one edit: set, delete or append at a path of one object."""
    docs = copy.deepcopy(docs)
    obj = _find(docs, variant["object"])
    if "set" in variant:
        path, value = variant["set"]
        parent, last = _parent(obj, path)
        parent[last] = value
    elif "delete" in variant:
        parent, last = _parent(obj, variant["delete"])
        del parent[last]
    elif "append" in variant:
        path, value = variant["append"]
        parent, last = _parent(obj, path)
        parent[last].append(copy.deepcopy(value) if value != "$copy-last" else copy.deepcopy(parent[last][-1]))
    else:
        raise ValueError(f"{variant['id']}: no edit (set, delete, append)")
    if "also" in variant:          # the same bug needs a second field (a subGroupSize with its size)
        path, value = variant["also"]
        parent, last = _parent(obj, path)
        parent[last] = value
    if "also_delete" in variant:
        parent, last = _parent(obj, variant["also_delete"])
        del parent[last]
    return docs


def _validate(target: Path, args: list[str], crd_dir: Path):
    from generator.validate import command, validate

    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    opts = command.options(parser.parse_args(["validate", "--crd-dir", str(crd_dir), *args, str(target)]))
    opts.spec, opts.spec_explicit = str(target.parent / "no-spec.yaml"), False
    return validate(opts)


def _source_text(v: dict, reference: Path) -> str:
    """The unedited file: the reference file, or the upstream object carried inline."""
    return v["inline"] if "inline" in v else (reference / v["file"]).read_text()


def _prepare_case(v: dict, reference: Path, work: Path) -> tuple[Path, Path]:
    """Copy the variant's file (or its whole tutorial folder) under work; (what to validate, the file to edit)."""
    if "inline" in v:
        edited = work / v["id"] / f"{v['id']}.yaml"
        edited.parent.mkdir(parents=True)
        edited.write_text(v["inline"])
        return edited, edited
    src = reference / v["file"]
    folder = reference / v["folder"] if v.get("folder") else None
    case = work / v["id"]
    if folder is not None:
        shutil.copytree(folder, case / folder.name)
        return case / folder.name, case / folder.name / src.relative_to(folder)
    case.mkdir(parents=True)
    edited = case / src.name
    shutil.copyfile(src, edited)
    return edited, edited


def _score(v: dict, findings: list, base: set[tuple]) -> dict:
    """Judge the findings the edit added against the variant's expected finding."""
    crash = next((f.message for f in findings if f.rule == "IE001"), None)
    new = [f for f in findings if _key(f) not in base and f.severity in ("error", "warning")]
    want = v["expect"]
    hits = [f for f in new if f.rule == want["rule"] and f.path == want.get("path", f.path)]
    # Findings the bug causes elsewhere, classified right by hand with the reason (`also_right`).
    also = [f for f in new if f not in hits and f.rule in (v.get("also_right") or {})]
    return {"caught": bool(hits), "new": new, "right": len(hits) + len(also), "expected": len(hits),
            "crash": crash, "message": hits[0].message if hits else ""}


def run_variant(v: dict, reference: Path, crd_dir: Path, work: Path) -> dict:
    """{caught, new (errors and warnings the edit adds), crash} for one variant."""
    from generator.validate.context import UsageError

    text = _source_text(v, reference)
    target, edited = _prepare_case(v, reference, work)
    args = list(v.get("args") or [])
    try:
        unedited = _validate(target, args, crd_dir).findings
        base = {_key(f) for f in unedited}
        edited.write_text(yamlio.dump_all(mutate(yamlio.load_all(text), v)))
        report = _validate(target, args, crd_dir)
    except UsageError as e:
        return {"caught": False, "new": [], "crash": f"exit 2: {e}", "base": []}
    # Errors and warnings on the unedited file: false alarms unless the file really has that bug.
    return _score(v, report.findings, base) | {
        "base": [f"{f.rule} {f.kind} {f.path}" for f in unedited if f.severity in ("error", "warning")]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.recall", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="append", help="a variant list (default: the three lists, bench/recall*.yaml)")
    ap.add_argument("--shared", default=str(paths.ROOT.parent / "shared"), help="the shared folder (reference/, crds/)")
    ap.add_argument("--out", help="write the Markdown report here (default: stdout)")
    ap.add_argument("--verbose", action="store_true", help="print every finding a variant adds")
    args = ap.parse_args(argv)
    shared = Path(args.shared)
    texts, crashes = [], 0
    for name in args.list or [str(p) for p in LISTS]:
        data = yamlio.load_strict(Path(name).read_text())
        text, counts = report(data["variants"], shared, args.verbose, Path(name).name, data.get("base_right"))
        texts.append(text)
        crashes += counts["crashes"]
    text = "\n".join(texts)
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    return 1 if crashes else 0


def _row(v: dict, r: dict) -> str:
    extra = "; ".join(f"{f.rule} {f.path}" + (" (right: a consequence)" if f.rule in (v.get("also_right") or {}) else "")
                      for f in r["new"] if not (f.rule == v["expect"]["rule"]))
    return (f"| {v['id']} | {v['expect']['rule']} | {'yes' if r['caught'] else '**no**'} | "
            f"{extra or ''} | {(r['crash'] or '')[:80]} |")


def _by_class(variants: list[dict], caught: dict[str, bool]) -> list[str]:
    """Recall per class of issue 36's table, where the list names each variant's `class`."""
    classes: dict[str, list[bool]] = {}
    for v in variants:
        if v.get("class"):
            classes.setdefault(v["class"], []).append(caught[v["id"]])
    if not classes:
        return []
    return ["", "| class | caught |", "|---|---:|"] + [
        f"| {c} | {sum(hits)}/{len(hits)} |" for c, hits in classes.items()]


def report(variants: list[dict], shared: Path, verbose: bool = False, name: str = "recall.yaml",
           base_right: dict | None = None) -> tuple[str, Counter]:
    """The Markdown report of one list. With `base_right` (the list's: file -> rule -> why the finding on
    the unedited file is right), every other error or warning on an unedited file is counted a false alarm."""
    counts: Counter = Counter()
    rows, base_alarms, caught = [], set(), {}
    with tempfile.TemporaryDirectory() as d:
        for v in variants:
            r = run_variant(v, shared / "reference", shared / "crds", Path(d))
            caught[v["id"]] = r["caught"]
            counts.update(variants=1, caught=r["caught"], crashes=bool(r["crash"]), right=r.get("right", 0),
                          expected=r.get("expected", 0), added=len(r["new"]))
            src = v.get("file") or v.get("source") or v["id"]
            base_alarms |= {(src, b) for b in r["base"] if b.split()[0] not in (base_right or {}).get(src, {})}
            rows.append(_row(v, r))
            if verbose:
                for f in r["new"]:
                    sys.stderr.write(f"{v['id']}: {f.report_line()}\n")
    recall = counts["caught"] / counts["variants"] if counts["variants"] else 0.0
    precision = counts["right"] / counts["added"] if counts["added"] else 1.0
    counts["base_alarms"] = len(base_alarms) if base_right is not None else 0
    head = [
        f"# validate: recall on broken variants of upstream files ({name})", "",
        f"{counts['variants']} variants in bench/{name}, each one real bug put into an upstream file "
        "(../shared/reference, or an upstream object carried inline) and validated as the docs say (a file on its "
        "own, open world; a tutorial folder file by file).", "",
        f"- caught: {counts['caught']} / {counts['variants']} = {recall:.1%} (recall)",
        f"- errors and warnings the edits add: {counts['added']}, of which right: {counts['right']} = {precision:.1%} "
        f"(precision; the expected finding: {counts['expected']}, the others true consequences of the bug, "
        f"classified by hand in `also_right`)",
    ] + ([] if base_right is None else [
        f"- errors and warnings on the unedited files not classified right (`base_right`): {len(base_alarms)}"
        + "".join(f"\n  - {f}: {b}" for f, b in sorted(base_alarms))]) + [
        f"- crashes (exit 2 or IE001): {counts['crashes']}",
    ] + _by_class(variants, caught) + [
        "", "| variant | expected | caught | other findings it adds | crash |", "|---|---|---|---|---|"]
    counts["recall_permille"] = round(recall * 1000)
    counts["precision_permille"] = round(precision * 1000)
    return "\n".join(head + rows) + "\n", counts


if __name__ == "__main__":
    sys.exit(main())
