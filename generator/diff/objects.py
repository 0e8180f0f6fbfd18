"""The objects of an output tree, keyed the way Kubernetes identifies them:
(API group, kind, namespace, name), never by file, so a renamed file or an
object moved between base/ and an overlay is reported as such.

What an overlay applies is base/ plus its own directory, so each overlay is a
unit made of both; controller installs and argocd/ directories are units of
their own, their kustomization.yaml included (it holds the pinned release URLs)."""
from __future__ import annotations

from dataclasses import dataclass

import yaml

from ..kernel import yamlio
from .gitio import DiffError

Key = tuple  # (api group, kind, namespace or None, name)
Unit = dict  # Key -> Located: what one directory (or overlay with base) applies


@dataclass(frozen=True)
class Located:
    obj: dict
    dir: str
    file: str


def key_of(obj: dict) -> Key:
    meta = obj.get("metadata", {})
    return (obj["apiVersion"].rpartition("/")[0], obj["kind"], meta.get("namespace"), meta["name"])


def label(key: Key) -> str:
    _, kind, ns, name = key
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def sort_key(key: Key):
    return (key[1], key[2] or "", key[3], key[0])


def is_overlay(d: str) -> bool:
    return d.startswith("overlays/") and d.count("/") == 1


def _load(path: str, text: str) -> list[dict]:
    try:
        return [x for x in yamlio.load_all(text) if isinstance(x, dict)]
    except yaml.YAMLError as e:
        raise DiffError(f"{path}: not valid YAML: {e}") from None


def _documents(path: str, text: str, d: str) -> list[dict]:
    if path.rpartition("/")[2] == "kustomization.yaml":
        # One per directory, named after it (its own metadata is rarely set).
        return [{**doc, "metadata": {"name": d}} for doc in _load(path, text)[:1]]
    return [x for x in _load(path, text)
            if x.get("apiVersion") and x.get("kind") and isinstance(x.get("metadata"), dict)
            and x["metadata"].get("name")]


def objects_by_dir(tree: dict[str, str]) -> dict[str, Unit]:
    out: dict[str, Unit] = {}
    for path in sorted(tree):
        d, _, file = path.rpartition("/")
        if not file.endswith((".yaml", ".yml")):
            continue
        if file == "kustomization.yaml" and (d == "base" or is_overlay(d)):
            out.setdefault(d, {})   # lists the files beside it; the objects say it all
            continue
        for obj in _documents(path, tree[path], d):
            out.setdefault(d, {})[key_of(obj)] = Located(obj, d, path)
    return out


def units(tree: dict[str, str]) -> dict[str, Unit]:
    """What each overlay applies (base + overlay) and each other directory on its own."""
    dirs = objects_by_dir(tree)
    base = dirs.pop("base", {})
    return {d: ({**base, **objs} if is_overlay(d) else objs) for d, objs in dirs.items()}
