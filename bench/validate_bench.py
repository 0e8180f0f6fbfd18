"""`make bench` rows for `generator validate` on many files: one call over a
directory of up to 300 single-object files (objects of the largest synthesized
platform, one per file, validated as one open-world stream, CEL rules included)
against the core-schema floor bench/validate_floor.py on the same files, in
alternation; and the start-up of a one-file call."""
from __future__ import annotations

from pathlib import Path

from generator.kernel import paths, versions, writer, yamlio

from . import targets

FILES = 300


def write_files(synth_out: Path, dest: Path, limit: int = FILES) -> int:
    """One object per file from the overlays synth wrote; returns how many."""
    dest.mkdir(parents=True, exist_ok=True)
    n = 0
    for rel, text in sorted(writer.read_tree(synth_out, ("overlays",)).items()):
        if not rel.endswith(".yaml") or rel.endswith("kustomization.yaml"):
            continue
        for doc in yamlio.load_all(text):
            if n >= limit:
                return n
            (dest / f"{n:04d}.yaml").write_text(yamlio.dump(doc))
            n += 1
    return n


def measure(run_timed, series_cls, synth_out: Path, work: Path, reps: int, spec: Path) -> list[str]:
    """Markdown lines for the report. `spec` gives the versions (the one the files were made from)."""
    import sys

    py = sys.executable
    files = work / "validate-files"
    n = write_files(synth_out, files)
    one = files / "0000.yaml"
    crd = ["--crd-dir", str(_crd_root()), "--spec", str(spec)]
    ours = [py, "-m", "generator", "validate", *crd, str(files)]
    floor = [py, str(paths.ROOT / "bench" / "validate_floor.py"), str(files), versions.table()["kubernetes"]["default"]]
    single = [py, "-m", "generator", "validate", *crd, str(one)]
    merged = [py, "-m", "generator", "validate", *crd, "--one-stream", str(files)]
    a, b, c, d = series_cls(), series_cls(), series_cls(), series_cls()
    for _ in range(reps):
        a.add(run_timed(ours, ok=(0, 1), no_node=True)[0])
        b.add(run_timed(floor)[0])
        c.add(run_timed(single, ok=(0, 1), no_node=True)[0])
        d.add(run_timed(merged, ok=(0, 1), no_node=True)[0])
    ratio = a.median / b.median
    targets.record(f"validate ÷ kubernetes-validate, {n} files", ratio, 0.5, note="wall")
    return [
        "", f"## validate on {n} files", "",
        f"One `generator validate DIR` call over {n} files of one object each (the largest platform's overlay "
        "objects; open world, each file its own stream with the others as context, CRD defaults and CEL rules "
        "included; and with --one-stream) against **kubernetes-validate** "
        "run on the same objects in one process (bench/validate_floor.py: strict core schemas, the floor the "
        "validator issue names). Seconds of wall clock, min / median:", "",
        "| command | seconds | ÷ floor |", "|---|---:|---:|",
        f"| generator validate, {n} files | {a.min:.2f} / {a.median:.2f} | {ratio:.2f}× |",
        f"| generator validate --one-stream, {n} files | {d.min:.2f} / {d.median:.2f} | {d.median / b.median:.2f}× |",
        f"| kubernetes-validate floor, {n} files | {b.min:.2f} / {b.median:.2f} | 1.00× |",
        f"| generator validate, one file (start-up) | {c.min:.2f} / {c.median:.2f} | |", "",
        f"Target: within 0.5× of the floor: {'met' if ratio <= 0.5 else 'NOT met'} ({ratio:.2f}×).",
    ] + recall_lines()


def recall_lines() -> list[str]:
    """The recall corpora (bench/recall.py: recall.yaml, recall-fresh.yaml, recall-third.yaml) on
    ../shared/reference, when it is there."""
    from . import recall

    shared = paths.ROOT.parent / "shared"
    if not (shared / "reference").is_dir():
        return ["", "## validate recall", "", f"skipped: no {shared / 'reference'}"]
    out = []
    for listing in recall.LISTS:
        data = yamlio.load_strict(listing.read_text())
        text, _ = recall.report(data["variants"], shared, name=listing.name, base_right=data.get("base_right"))
        out += ["", "#" + text.rstrip("\n")]
    return out


def _crd_root() -> Path:
    from generator.kernel import crd_dirs
    return crd_dirs.default_root()
