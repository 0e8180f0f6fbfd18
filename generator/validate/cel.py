"""The CRDs' CEL validation rules (`x-kubernetes-validations`), evaluated the
way the API server does: each rule at its schema node, with `self` bound to
the value there, for every value the object has at that node.

Engine: the `common-expression-language` package (Rust `cel` crate, PyPI),
chosen over `cel-python` after measuring both on the pinned CRDs' 889 rules
(160 distinct): both compile all of them; `cel-python` took 0.42 s to compile
them and about 2.9 ms per evaluation of a ClusterQueue rule, the Rust engine
0.02-0.07 s and about 0.25 ms (most of it converting the Python value), and its
`matches` uses a RE2-syntax engine as Kubernetes does.

Kubernetes CEL library functions the pinned CRDs call, written here after
k8s.io/apiserver/pkg/cel/library (urls.go, ip.go, format.go) and cel-go's
strings extension: `isURL`, `isIP`, `split`, `substring`,
`format.dns1123Label().validate`. Other library functions are not used by the
pinned CRDs and not provided: a rule that calls one reports that it could not
be evaluated (a warning), never a violation. An evaluation error the API server
meets as well (a missing map key, an index out of bounds, a division by zero, a
runtime overload mismatch) is an error, worded as the server words it: the server
turns it into an Invalid field error and rejects the object.

Transition rules (those that read `oldSelf`) compare an update with the stored
object; `validate` sees no stored object and skips them. `transition_violations`
evaluates them on an (old, new) pair, for `generator diff`."""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..kernel.errors import Problem, problem


def _engine():
    """The package's compiled extension alone: `import cel` also loads its command-line
    front end (typer, rich, prompt_toolkit), 0.18 s that every validate run would pay."""
    import importlib.machinery
    import importlib.util
    import sys

    if "cel.cel" in sys.modules:
        return sys.modules["cel.cel"]
    spec = importlib.util.find_spec("cel")
    for directory in (spec.submodule_search_locations if spec else None) or []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(directory) / f"cel{suffix}"
            if path.is_file():
                loader = importlib.machinery.ExtensionFileLoader("cel.cel", str(path))
                module_spec = importlib.util.spec_from_loader("cel.cel", loader)
                assert module_spec is not None, "made from a loader"
                module = importlib.util.module_from_spec(module_spec)
                loader.exec_module(module)
                sys.modules["cel.cel"] = module
                return module
    import cel  # a layout without the extension beside the package: the ordinary import
    return cel


celengine = _engine()


@dataclass(frozen=True)
class Rule:
    source: str
    program: Any
    message: str
    message_program: Any | None
    field_path: tuple
    transition: bool


# The rule ids of what a CEL rule finds (validate's CE rules; diff reads them too): the object
# breaks the rule, the rule fails on it as on the API server (the server rejects the object),
# or this engine could not evaluate the rule (not checked).
BROKEN, REJECTED, UNEVALUATED = "CE001", "CE002", "CE003"


def _found(rule: Rule, path: tuple, message: str, rule_id: str = BROKEN) -> Problem:
    """A Problem at the rule's node plus its fieldPath, with the rule's CEL source."""
    return problem(path + rule.field_path, message, rule=rule_id, expression=rule.source)


@dataclass
class Node:
    """A schema node on the way to some rule; subtrees without rules are dropped."""
    rules: list[Rule] = field(default_factory=list)
    properties: dict[str, Node] = field(default_factory=dict)
    items: Node | None = None
    additional: Node | None = None
    list_type: str | None = None
    map_keys: tuple[str, ...] = ()


# ------------------------------------------------------------------ Kubernetes CEL library

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def is_url(s: Any) -> bool:
    """Go's url.ParseRequestURI accepts it: an absolute URI or an absolute path, no fragment
    (k8s.io/apiserver/pkg/cel/library/urls.go)."""
    if not isinstance(s, str) or not s or "#" in s or any(c.isspace() or ord(c) < 0x20 for c in s):
        return False
    return s.startswith("/") or bool(_SCHEME.match(s))


def is_ip(s: Any) -> bool:
    """IPv4 or IPv6 address, no zone, no IPv4-mapped IPv6, no leading zeros
    (k8s.io/apiserver/pkg/cel/library/ip.go)."""
    if not isinstance(s, str) or "%" in s:
        return False
    try:
        ip = ipaddress.ip_address(s)
    except ValueError:
        return False
    return not (isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None)


_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _dns1123_label():
    """`format.dns1123Label()`: a format name that `validate` reads."""
    return "dns1123Label"


def _validate(fmt: Any, s: Any):
    if fmt == "dns1123Label":
        problems = []
        if not isinstance(s, str):
            return ["must be a string"]
        if len(s) > 63:
            problems.append("must be no more than 63 characters")
        if not _DNS1123_LABEL.match(s):
            problems.append("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                            "and must start and end with an alphanumeric character")
        return problems or None
    raise ValueError(f"unknown format {fmt!r}")


def _split(s: str, sep: str, n: int | None = None) -> list[str]:
    if n is None or n < 0:
        return s.split(sep) if sep else list(s)
    if n == 0:
        return []
    return s.split(sep, n - 1) if sep else list(s[:n - 1]) + ([s[n - 1:]] if len(s) >= n else [])


def _substring(s: str, start: int, end: int | None = None) -> str:
    end = len(s) if end is None else end
    if not 0 <= start <= end <= len(s):
        raise ValueError(f"substring({start}, {end}) out of range for a string of {len(s)}")
    return s[start:end]


FUNCTIONS = {"isURL": is_url, "isIP": is_ip, "split": _split, "substring": _substring,
             "format.dns1123Label": _dns1123_label, "validate": _validate}


# ------------------------------------------------------------------ compiling a schema

def _field_path(text: str | None) -> tuple:
    """A rule's fieldPath (`.spec.foo`, `.items['a.b']`) as path parts."""
    if not text:
        return ()
    parts: list = []
    for m in re.finditer(r"\.([A-Za-z0-9_-]+)|\['([^']*)'\]|\[(\d+)\]", text):
        parts.append(m.group(1) if m.group(1) is not None else m.group(2) if m.group(2) is not None
                     else int(m.group(3)))
    return tuple(parts)


@lru_cache(maxsize=1024)
def _compile(source: str):
    return celengine.compile(source)


def _rule(v: dict) -> Rule | None:
    source = v.get("rule")
    if not isinstance(source, str):
        return None
    try:
        program = _compile(source)
    except (ValueError, RuntimeError):
        return None   # not valid CEL for this engine: nothing to check against
    message_program = None
    if isinstance(v.get("messageExpression"), str):
        try:
            message_program = _compile(v["messageExpression"])
        except (ValueError, RuntimeError):
            message_program = None
    return Rule(source, program, v.get("message") or "", message_program, _field_path(v.get("fieldPath")),
                "oldSelf" in source)


def _rules(schema: dict) -> list[Rule]:
    """The node's own x-kubernetes-validations that this engine can compile."""
    return [r for r in (_rule(v) for v in schema.get("x-kubernetes-validations") or [] if isinstance(v, dict))
            if r is not None]


def compile_schema(schema: Any) -> Node | None:
    """The rule tree of a schema node, or None when nothing below it has rules."""
    if not isinstance(schema, dict):
        return None
    node = Node(list_type=schema.get("x-kubernetes-list-type"),
                map_keys=tuple(schema.get("x-kubernetes-list-map-keys") or ()))
    node.rules = _rules(schema)
    for name, sub in (schema.get("properties") or {}).items():
        child = compile_schema(sub)
        if child is not None:
            node.properties[name] = child
    node.items = compile_schema(schema.get("items"))
    if isinstance(schema.get("additionalProperties"), dict):
        node.additional = compile_schema(schema["additionalProperties"])
    if not (node.rules or node.properties or node.items or node.additional):
        return None
    return node


_TREES: dict[int, tuple[Any, Node | None]] = {}


def tree(schema: dict) -> Node | None:
    """compile_schema, once per schema object (the CRD index keeps them alive)."""
    key = id(schema)
    if key not in _TREES or _TREES[key][0] is not schema:
        _TREES[key] = (schema, compile_schema(schema))
    return _TREES[key][1]


# ------------------------------------------------------------------ evaluating

def _run(rule: Rule, ctx, path: tuple) -> Problem | None:
    try:
        ok = rule.program.execute(ctx)
    except Exception as e:   # the engine raises ValueError/TypeError/RuntimeError/KeyError
        server = _server_error(e, rule)
        if server is not None:   # the API server fails the rule the same way and rejects the object
            return _found(rule, path, server, REJECTED)
        return _found(rule, path, f"rule could not be evaluated ({type(e).__name__}: {e})", UNEVALUATED)
    if ok is True:
        return None
    message = rule.message
    if rule.message_program is not None:
        try:
            text = rule.message_program.execute(ctx)
            message = text if isinstance(text, str) and text else message
        except Exception:   # noqa: BLE001  (Kubernetes falls back to message too)
            pass
    if ok is not False:
        return _found(rule, path, f"rule did not return a bool ({ok!r})", UNEVALUATED)
    return _found(rule, path, message or f"failed rule: {rule.source}")


def _rule_error_string(rule: Rule) -> str:
    """apiextensions-apiserver pkg/apiserver/schema/cel/validation.go ruleErrorString: the
    rule's message if it has one, else its source."""
    return rule.message.strip() if rule.message else rule.source.strip()


def _server_error(e: Exception, rule: Rule) -> str | None:
    """The API server's field error text for a CEL evaluation error, where the engine's
    error is one the server meets too (validation.go, Validator.validateExpressions: "no
    such key", "index out of bounds", "division by zero" become Invalid "<err> evaluating
    rule: <rule>"; a runtime "no such overload" its own sentence). None for errors of this
    engine only (a library function it lacks): those stay "could not be evaluated"."""
    if isinstance(e, KeyError):
        err = f"no such key: {e.args[0] if e.args else ''}"
    elif isinstance(e, IndexError):
        err = str(e) if str(e).startswith("index out of bounds") else f"index out of bounds: {e}"
    elif isinstance(e, ZeroDivisionError):
        err = "division by zero"
    elif isinstance(e, OverflowError):
        err = "integer overflow"
    elif isinstance(e, TypeError) and str(e).lower().startswith("no such overload"):
        return (f"'no such overload': call arguments did not match a supported operator, function or macro "
                f"signature for rule: {_rule_error_string(rule)}")
    else:
        return None
    return f"{err} evaluating rule: {_rule_error_string(rule)}"


def _context(variables: dict):
    return celengine.Context(variables, FUNCTIONS)


def _broken(rules: list[Rule], ctx, path: tuple) -> list[Problem]:
    return [x for x in (_run(r, ctx, path) for r in rules) if x is not None]


def _by_path(found: list[Problem]) -> list[Problem]:
    """Problems in a stable order: by field path, then message."""
    return sorted(found, key=lambda x: ([str(s) for s in x.parts], x.message))


def _children(n: Node, v: Any, p: tuple) -> list[tuple[Node | None, Any, tuple]]:
    """(schema node, value, path) below n for the parts of v it describes: named properties
    first, then the other keys (additionalProperties), or the items of a list."""
    if isinstance(v, dict):
        out: list[tuple[Node | None, Any, tuple]] = [(child, v[k], p + (k,)) for k, child in n.properties.items() if k in v]
        if n.additional is not None:
            out += [(n.additional, sub, p + (k,)) for k, sub in v.items() if k not in n.properties]
        return out
    if isinstance(v, list) and n.items is not None:
        return [(n.items, sub, p + (i,)) for i, sub in enumerate(v)]
    return []


def violations(node: Node | None, value: Any, path: tuple = (), skip=lambda path: False) -> list[Problem]:
    """Every non-transition rule under node that `value` breaks. `skip(path)`: leave out the
    rules at nodes where the schema layer already found the value wrong."""
    out: list[Problem] = []
    stack = [(node, value, path)]
    while stack:
        n, v, p = stack.pop()
        if n is None or v is None:
            continue
        rules = [r for r in n.rules if not r.transition]
        if rules and not skip(p):
            out += _broken(rules, _context({"self": v}), p)
        stack.extend(_children(n, v, p))
    return _by_path(out)


def _correlate(node: Node, old: list, new: list):
    """(old item, new item, index in new) pairs the API server correlates for transition rules:
    list-type map items by their keys, set items by value; atomic lists not at all."""
    if node.list_type == "map" and node.map_keys:
        def key(x):
            return tuple(x.get(k) for k in node.map_keys) if isinstance(x, dict) else None
        before = {key(x): x for x in old}
        return [(before[key(x)], x, i) for i, x in enumerate(new) if key(x) in before]
    if node.list_type == "set":
        return [(x, x, i) for i, x in enumerate(new) if x in old]
    return []


def _paired_children(n: Node, o: Any, v: Any, p: tuple) -> list[tuple[Node | None, Any, Any, tuple]]:
    """As _children, for an old and a new value: only the parts present in both, list items
    paired as the API server correlates them."""
    if isinstance(v, dict) and isinstance(o, dict):
        out: list[tuple[Node | None, Any, Any, tuple]] = [
            (child, o[k], v[k], p + (k,)) for k, child in n.properties.items() if k in v and k in o]
        if n.additional is not None:
            out += [(n.additional, o[k], sub, p + (k,)) for k, sub in v.items() if k not in n.properties and k in o]
        return out
    if isinstance(v, list) and isinstance(o, list) and n.items is not None:
        return [(n.items, a, b, p + (i,)) for a, b, i in _correlate(n, o, v)]
    return []


def transition_pairs(node: Node | None, old: Any, new: Any, path: tuple = ()) -> list[Problem]:
    out: list[Problem] = []
    stack = [(node, old, new, path)]
    while stack:
        n, o, v, p = stack.pop()
        if n is None or o is None or v is None:
            continue
        rules = [r for r in n.rules if r.transition]
        if rules:
            out += _broken(rules, _context({"self": v, "oldSelf": o}), p)
        stack.extend(_paired_children(n, o, v, p))
    return _by_path(out)


def transition_violations(old: dict, new: dict, crd_root: str | Path | None = None, target=None) -> list[Problem]:
    """The transition rules (`oldSelf`) of the object's pinned CRD that updating `old` to
    `new` breaks: what the API server would refuse on `kubectl apply` of `new` over `old`
    (immutable fields and the like). Each Problem has the field path (`.path`, and `.parts`
    to read the values there), the rule's message, its CEL source (`.expression`) and
    `.rule` BROKEN, or REJECTED / UNEVALUATED where the rule could not be evaluated.
    Objects with no CRD among the pins (core kinds) give []. `target` (a
    validate.context.Target) picks the releases; default: versions.yaml's defaults."""
    from ..kernel import crd_dirs
    from .context import target as make_target
    from .defaults import apply
    from .run import schemas_for

    t = target or make_target(None, "versions.yaml")
    schemas = schemas_for(t, Path(crd_root) if crd_root else crd_dirs.default_root())
    api, kind = new.get("apiVersion"), new.get("kind")
    schema = schemas.crd_schema(api, kind) if isinstance(api, str) and isinstance(kind, str) else None
    if schema is None or old.get("apiVersion") != api or old.get("kind") != kind:
        return []
    return transition_pairs(tree(schema), apply(old, schema), apply(new, schema))
