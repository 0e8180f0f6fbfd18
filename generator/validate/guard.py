"""What `synth` runs on everything it is about to write: the validator's rules
for what the API server refuses that need no schemas (names, label keys and
values, port names, selectors that do not match their pod templates), plus
the API server's object size limit and selector uniqueness between workloads
of one namespace. A hit is a generator bug or a spec the checks let through:
synth refuses to write, naming the object and the rule."""
from __future__ import annotations

from ..kernel import yamlio
from ..kernel.demand import api_group
from ..kernel.errors import Problem
from ..kernel.paths import file_name

# Rules of generator/validate/rules that need no CRD or core schemas (SE003: no credential of a
# published format in any key or value, the spec check's last guard on what is written).
API_RULES = ("NM001", "NM002", "NM003", "WK001", "SE003")
# etcd's default request limit (--max-request-bytes 1.5 MiB, the limit the Kubernetes
# docs quote for object size); the stored object must fit in one request.
MAX_OBJECT_BYTES = 1_572_864
SELECTING = {("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "StatefulSet"), ("apps", "DaemonSet")}


def _objects(tree: dict[str, str], emitted: dict[str, list[dict]]) -> dict[str, list[tuple[dict, int]]]:
    """(object, bytes) per output directory, kustomization files left out. Directories the
    build already holds as objects (`emitted`: base/ and the overlays) are not parsed
    again; their files hold one object each, so a file's size is its object's."""
    out: dict[str, list[tuple[dict, int]]] = {}
    for path, text in sorted(tree.items()):
        directory, _, name = path.rpartition("/")
        if name == "kustomization.yaml" or not name.endswith(".yaml") or directory in emitted:
            continue
        out.setdefault(directory, []).extend((d, len(yamlio.dump(d).encode()))
                                             for d in yamlio.load_all(text) if isinstance(d, dict))
    for directory, objs in emitted.items():
        files = {name: len(text.encode()) - len(_header(text)) for path, text in tree.items()
                 for d, _, name in [path.rpartition("/")] if d == directory}
        out[directory] = [(o, files.get(file_name(o), 0)) for o in objs]
    return dict(sorted(out.items()))


def _header(text: str) -> str:
    """The leading comment lines synth writes above each object."""
    end = 0
    for line in text.splitlines(keepends=True):
        if not line.startswith("#"):
            break
        end += len(line)
    return text[:end]


def problems(tree: dict[str, str], emitted: dict[str, list[dict]] | None = None) -> list[Problem]:
    """`emitted`: the objects of some directories as the build made them (else parsed from the tree)."""
    from .objects import Model, Obj
    from .rules import RULES

    out: list[Problem] = []
    for directory, sized in _objects(tree, emitted or {}).items():
        objs = [o for o, _ in sized]
        model = Model([Obj(i, o) for i, o in enumerate(objs)], closed=True)
        for rule_id in API_RULES:
            check = RULES[rule_id].check
            assert check is not None, "API_RULES are rules over the model"
            for hit in check(model):
                assert hit.obj is not None, "these rules report on an object"
                meta = hit.obj.body.get("metadata") or {}
                out.append(Problem(f"{directory}/{hit.obj.kind}/{meta.get('name')}",
                                   f"{rule_id}: {hit.message} (a generator bug, or a spec value the checks missed)"))
        out += _sizes(directory, sized) + _selectors(directory, objs)
    return out


def _sizes(directory: str, sized: list[tuple[dict, int]]) -> list[Problem]:
    return [Problem(f"{directory}/{o['kind']}/{o['metadata']['name']}",
                    f"the object is {size} bytes; the API server stores at most {MAX_OBJECT_BYTES}")
            for o, size in sized if size > MAX_OBJECT_BYTES]


def _selectors(directory: str, objs: list[dict]) -> list[Problem]:
    """Two controllers with the same selector in one namespace fight over each other's pods."""
    seen: dict[tuple, str] = {}
    out = []
    for o in objs:
        if (api_group(o), o.get("kind")) not in SELECTING:
            continue
        meta = o["metadata"]
        selector = (o.get("spec") or {}).get("selector") or {}
        key = (meta.get("namespace"), yamlio.dump(selector))
        name = f"{o['kind']}/{meta['name']}"
        if key in seen:
            out.append(Problem(f"{directory}/{name}", f"selects the same pods as {seen[key]} in namespace "
                                                      f"{meta.get('namespace')!r}; give one a distinct appLabel"))
        seen.setdefault(key, name)
    return out
