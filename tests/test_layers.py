"""The generator's layers, as docs/design.md draws them, held by its imports:

    kernel/    Kubernetes, Kueue, GKE and Argo CD facts and plumbing; imports no other layer
    model/     the typed spec and what follows from it; imports the kernel
    builders/  the cdk8s app; imports the model and the kernel
    validate/, plan/, diff/   the tools; import the layers below, never the builders except diff
               (it regenerates the platform a change would produce)
    cli.py and the command modules beside it import anything.

Imports are read from the source (every `import` and `from ... import`, also inside functions),
so a lazy import that runs back up a layer is caught as well as a top-level one."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "generator"
LAYERS = ("kernel", "model", "builders", "validate", "plan", "diff")
# Which layers each one may import (besides itself).
ALLOWED = {
    "kernel": set(),
    "model": {"kernel"},
    "builders": {"kernel", "model"},
    "validate": {"kernel", "model"},
    "plan": {"kernel", "model"},
    "diff": {"kernel", "model", "builders", "validate"},
}
TOOLS = ("validate", "plan", "diff")
# The modules that start Node (jsii): only the builders may import them.
NODE_MODULES = ("cdk8s", "cdk8s_plus_33", "constructs", "jsii")


def _modules(layer: str) -> list[Path]:
    return sorted(p for p in (PACKAGE / layer).rglob("*.py"))


def _package_of(path: Path) -> list[str]:
    parts = ["generator", *path.relative_to(PACKAGE).with_suffix("").parts]
    return parts[:-1] if path.name != "__init__.py" else parts[:-1]


def _imports(path: Path) -> set[str]:
    """Every module this file imports, absolute."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                pkg = _package_of(path)
                pkg = pkg[: len(pkg) - (node.level - 1)] if node.level > 1 else pkg
                base = ".".join([*pkg, *([node.module] if node.module else [])])
            out |= {base} | {f"{base}.{a.name}" for a in node.names}
    return out


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "generator" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in LAYERS else "commands"


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_the_layers_below_it(layer):
    wrong = []
    for path in _modules(layer):
        for module in sorted(_imports(path)):
            target = _layer_of(module)
            if target is not None and target != layer and target not in ALLOWED[layer]:
                wrong.append(f"{path.relative_to(PACKAGE.parent)} imports {module}")
    assert wrong == []


@pytest.mark.parametrize("layer", ["kernel", "model", "validate", "plan"])
def test_only_the_builders_start_node(layer):
    wrong = [f"{p.relative_to(PACKAGE.parent)} imports {m}" for p in _modules(layer)
             for m in sorted(_imports(p)) if m.split(".")[0] in NODE_MODULES]
    assert wrong == []


def test_the_layer_test_sees_a_wrong_import(tmp_path, monkeypatch):
    """The negative half: a kernel module importing the model is reported."""
    fake = tmp_path / "generator"
    (fake / "kernel").mkdir(parents=True)
    (fake / "kernel" / "x.py").write_text("def f():\n    from ..model import Platform\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    with pytest.raises(AssertionError, match=r"generator/kernel/x.py imports generator.model"):
        test_a_layer_imports_only_the_layers_below_it("kernel")


def test_no_module_name_is_used_by_two_layers():
    """One home per concept: a module name (say `capacity` or `multikueue`) is not repeated in another layer
    for something else. A workload kind is one concept in two layers and keeps its name in both: its fields
    and checks (model/kinds/) and its builder (builders/workloads/); the validator's rule families
    (validate/rules/) are named after what they check. The three tools are one layer: each has its own
    `command` and `report`."""
    kinds = {p.stem for p in (PACKAGE / "model" / "kinds").glob("*.py")}
    where: dict[str, set[str]] = {}
    for layer in LAYERS:
        for p in _modules(layer):
            if p.name == "__init__.py" or "rules" in p.parts or p.stem in kinds:
                continue
            where.setdefault(p.stem, set()).add("tools" if layer in TOOLS else layer)
    assert {name: sorted(layers) for name, layers in where.items() if len(layers) > 1} == {}


def test_one_problem_type():
    """"This is wrong, here" has one type, kernel/errors.Problem: no other class carries a path and a
    message (a finding, a rule's hit, a loader problem, a CEL or transition-rule violation all are Problems)."""
    others = []
    for p in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ClassDef):
                fields = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
                if {"path", "message"} <= fields:
                    others.append(f"{p.relative_to(PACKAGE)}:{node.name}")
    assert others == ["kernel/errors.py:Problem"]
