"""Field-by-field comparison of generated objects with the tutorials' manifests."""
from __future__ import annotations


def flatten(node, prefix: str = "") -> dict[str, object]:
    """Leaves by path; list items that have a `name` are keyed by it, so order
    changes inside env/containers/volumes don't show up as differences."""
    out: dict[str, object] = {}
    if isinstance(node, dict):
        if not node and prefix:
            out[prefix] = {}
        for k, v in node.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(node, list):
        if not node:
            out[prefix] = []
        for i, v in enumerate(node):
            key = v.get("name") if isinstance(v, dict) and isinstance(v.get("name"), str) else i
            out.update(flatten(v, f"{prefix}[{key}]"))
    else:
        out[prefix] = _norm(node)
    return out


def _norm(value):
    # Quantities and ports are written as numbers or strings interchangeably.
    if isinstance(value, bool) or value is None:
        return value
    return str(value)


def differing_paths(reference: dict, generated: dict) -> set[str]:
    a, b = flatten(reference), flatten(generated)
    return {p for p in set(a) | set(b) if a.get(p, "<absent>") != b.get(p, "<absent>")}
