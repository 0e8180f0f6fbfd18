"""What `synth` runs on everything it is about to write, all or nothing: every rule of
the validator for what the API server or an admission webhook refuses (the registry's
AS*, WH*, KQ*, NM* and WK* rules over the model, SE003 for credentials: a rule added
there is run here without editing this file), plus the API server's object size limit
and selector uniqueness between workloads of one namespace. Each overlay is checked as
the set `kubectl apply -k` sends (base/ and the overlay: its kustomization lists only
resources), closed (what it names must be in it); other folders object by object.
A hit is a generator bug or a spec the checks let through: synth refuses to write,
naming the object and the rule."""
from __future__ import annotations

from ..kernel import yamlio
from ..kernel.demand import api_group
from ..kernel.errors import Problem
from ..kernel.paths import file_name

# Rules of generator/validate/rules run here: those for what the API server (AS, NM, WK) or a
# webhook (WH; Kueue's KQ) refuses, chosen from the registry by their id's family, and SE003 (no
# credential of a published format in any key or value). Only their errors stop synth.
API_FAMILIES = ("AS", "WH", "KQ", "NM", "WK")
EXTRA_RULES = ("SE003",)
# Rules that need more than the objects themselves (a cluster's live state, the Kueue
# Configuration in controllers/) or judge a plan, not what the API server accepts.
NOT_HERE = frozenset({"KQ009"})


def api_rules() -> list[str]:
    """The ids of the rules the guard runs, from the registry (h36's new AS/WH rules included)."""
    from .rules import RULES
    # Only rules that can refuse: a rule declared a warning or a note never raises one of its
    # hits to an error (the rules lower a hit's severity, never raise it), and the guard keeps errors.
    return sorted(r.id for r in RULES.values() if r.check is not None and r.id not in NOT_HERE
                  and r.severity == "error"
                  and (r.id.rstrip("0123456789") in API_FAMILIES or r.id in EXTRA_RULES))
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
    out: list[Problem] = []
    by_dir = _objects(tree, emitted or {})
    base = [o for o, _ in by_dir.get("base", [])]
    rule_ids = api_rules()
    for directory, sized in by_dir.items():
        objs = [o for o, _ in sized]
        overlay = directory.startswith("overlays/")
        # An overlay with base/: the set applied together. base/ alone is checked with each overlay.
        checked = base + objs if overlay else objs
        if directory != "base" or not any(d.startswith("overlays/") for d in by_dir):
            out += _rule_problems(directory, checked, rule_ids, whole_set=overlay or directory == "base",
                                  from_base=len(base) if overlay else 0)
        out += _sizes(directory, sized) + _selectors(directory, objs)
    return sorted(set(out), key=lambda p: (p.path, p.message))


def _rule_problems(directory: str, objs: list[dict], rule_ids: list[str], whole_set: bool,
                   from_base: int = 0) -> list[Problem]:
    """The errors the rules find in `objs`: as one closed set (an overlay), or each object on its
    own (a folder of controller configuration, whose references lie elsewhere). The first
    `from_base` objects are base/'s: a problem of theirs is named there (once, not per overlay)."""
    from .objects import Model, Obj
    from .rules import RULES

    groups = [objs] if whole_set else [[o] for o in objs]
    out = []
    for group in groups:
        model = Model([Obj(i, o) for i, o in enumerate(group)], closed=whole_set)
        for rule_id in rule_ids:
            rule = RULES[rule_id]
            assert rule.check is not None, "api_rules() are rules over the model"
            out += [_named(directory, rule_id, hit, from_base) for hit in rule.check(model)
                    if (hit.severity or rule.severity) == "error" and not (hit.missing and not whole_set)]
    return out


def _named(directory: str, rule_id: str, hit, from_base: int) -> Problem:
    """A rule's hit as synth reports it: the folder, kind and name of the object."""
    if hit.obj is None:
        return Problem(directory, f"{rule_id}: {hit.message} (a generator bug, or a spec value the checks missed)")
    meta = hit.obj.body.get("metadata") or {}
    folder = "base" if hit.obj.index < from_base else directory
    return Problem(f"{folder}/{hit.obj.kind}/{meta.get('name')}",
                   f"{rule_id}: {hit.message} (a generator bug, or a spec value the checks missed)")


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
