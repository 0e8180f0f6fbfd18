"""Your own constructs in the same cdk8s app (platform.yaml `constructs:`; docs/constructs.md).

Each file named there is a Python module of the platform repository with an entry point

    def build(app: cdk8s.App, charts: Mapping[str, cdk8s.Chart], spec: Platform) -> None

called once per synth (and check, and diff) after the generator's own objects are in the
app and before anything is rendered: `charts` maps each output folder ("base",
"overlays/<profile>") to its chart, `spec` is a copy of the typed spec (frozen models). It
may add any construct to a chart (cdk8s-plus, an `ApiObject`, a `cdk8s import`ed class,
`Include` of a local file) and patch the generated objects (`find`, then JSON patches). Its
objects are rendered with the generator's and go through the same pod hardening, fit
checks and guard.

A file is loaded only from inside the repository (the folder of platform.yaml): a path
that leaves it, or a symlink anywhere on the way out of it, is refused. An exception in a
file is one line naming the file and line; nothing is written."""
from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path
from types import MappingProxyType, ModuleType

import cdk8s

from ..kernel.errors import Problem, SpecError
from ..model import Platform


def find(chart: cdk8s.Chart, kind: str, name: str, namespace: str | None = None) -> cdk8s.ApiObject:
    """The object of this kind and name in the chart (any namespace unless given), for JSON patches."""
    found = [o for o in chart.node.find_all() if isinstance(o, cdk8s.ApiObject) and o.kind == kind
             and o.name == name and (namespace is None or o.metadata.namespace == namespace)]
    if len(found) != 1:
        raise LookupError(f"{len(found) or 'no'} {kind} objects named {name!r} in chart {chart.node.id}")
    return found[0]


def run(spec: Platform, app: cdk8s.App, charts: dict[str, cdk8s.Chart]) -> None:
    """Call each constructs file's build(); a problem is a SpecError naming it."""
    if not spec.constructs:
        return
    root = Path(spec.source).parent
    view = spec.model_copy(deep=True)
    for i, rel in enumerate(spec.constructs):
        path = _inside(root, rel, i, spec.source)
        module = _load(path, rel, i, spec.source)
        build = getattr(module, "build", None)
        if not callable(build):
            raise SpecError(spec.source, [Problem(f"constructs[{i}]", f"{rel} defines no build(app, charts, spec)")])
        try:
            build(app, MappingProxyType(charts), view)
        except Exception as e:  # noqa: BLE001  a user's code: any exception is one line naming where
            raise SpecError(spec.source, [Problem(f"constructs[{i}]", _where(e, path, rel))]) from None


def _inside(root: Path, rel: str, i: int, source: str) -> Path:
    """The file, refused unless it and every folder on the way are inside the repository (no symlinks)."""
    here = root.resolve()
    path = here
    for part in Path(rel).parts:
        path = path / part
        if path.is_symlink():
            raise SpecError(source, [Problem(f"constructs[{i}]", f"{rel}: {path.relative_to(here)} is a symbolic "
                                                                 "link; constructs are read from the repository itself")])
    if not path.resolve().is_relative_to(here):
        raise SpecError(source, [Problem(f"constructs[{i}]", f"{rel} is outside the repository")])
    if not path.is_file():
        raise SpecError(source, [Problem(f"constructs[{i}]", f"{rel}: no such file beside the spec")])
    return path


def _load(path: Path, rel: str, i: int, source: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"platform_constructs_{i}", path)
    assert spec is not None and spec.loader is not None, "a .py file has a source loader"
    module = importlib.util.module_from_spec(spec)
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = True   # no __pycache__ left in the user's repository
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise SpecError(source, [Problem(f"constructs[{i}]", f"{rel}:{e.lineno}: SyntaxError: {e.msg}")]) from None
    except Exception as e:  # noqa: BLE001  as in run()
        raise SpecError(source, [Problem(f"constructs[{i}]", _where(e, path, rel))]) from None
    finally:
        sys.dont_write_bytecode = before
    return module


def _where(e: BaseException, path: Path, rel: str) -> str:
    """`file:line: Type: first line of the message`, at the innermost frame in the user's file."""
    lines = [f.lineno for f in traceback.extract_tb(e.__traceback__) if Path(f.filename) == path]
    message = (str(e).strip().splitlines() or [""])[0]
    return f"{rel}:{lines[-1] if lines else '?'}: {type(e).__name__}: {message}"
