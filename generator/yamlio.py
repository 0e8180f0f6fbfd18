"""YAML in and out. Loading refuses duplicate keys (PyYAML keeps the last one
silently); dumping is deterministic and uses the C emitter when present.

Input written by others is bounded (`load_all_bounded`): a document whose
aliases expand past MAX_NODES nodes ("billion laughs"), or that nests deeper
than MAX_DEPTH, is refused before it is built, as is a text over MAX_BYTES.
libyaml itself stops at 1,000 levels of nesting."""
from __future__ import annotations

from collections.abc import Hashable, Iterator

import yaml

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class DuplicateKeyError(yaml.constructor.ConstructorError):
    pass


class _StrictLoader(_Loader):
    # The C parser when present: the pure-Python one dominates loading a large spec.
    pass


def _construct_mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, Hashable):   # `? [a, b]`, or `{{VAR}}` read as a flow mapping
            raise yaml.constructor.ConstructorError(
                None, None, f"a mapping key must be a plain value, not a {type(key).__name__}", key_node.start_mark)
        if key in seen:
            raise DuplicateKeyError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _str(dumper, value: str):
    # Multi-line strings (embedded configs, scripts) as literal blocks, so
    # they read and diff line by line.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def load_strict(text: str):
    """One YAML document, duplicate keys refused (used for the hand-written spec)."""
    return yaml.load(text, Loader=_StrictLoader)


# Limits for documents from outside the project (validate's inputs). A large
# Kubernetes object (a CRD with its schema) has some 30,000 nodes and nests
# about 40 deep; the Kubernetes API server refuses requests over 3 MiB.
MAX_BYTES = 10 * 2**20
MAX_DEPTH = 100
MAX_NODES = 1_000_000


class LimitError(yaml.MarkedYAMLError):
    """A document over one of the limits above (no YAML syntax error)."""


def _bounds(root: yaml.Node) -> None:
    """Refuse a node graph that expands past MAX_NODES, nests past MAX_DEPTH or
    refers to itself: one pass over the graph, each shared (aliased) node once."""
    done: dict[int, tuple[int, int]] = {}   # id(node) -> (expanded nodes, depth)
    active: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        kids = _children(node)
        if children_done:
            size = 1 + sum(done[id(k)][0] for k in kids)
            depth = 1 + max((done[id(k)][1] for k in kids), default=0)
            active.discard(id(node))
            done[id(node)] = (size, depth)
            if size > MAX_NODES:
                raise LimitError(None, None, f"aliases expand to more than {MAX_NODES:,} values", node.start_mark)
            if depth > MAX_DEPTH:
                raise LimitError(None, None, f"nested more than {MAX_DEPTH} levels deep", node.start_mark)
            continue
        if id(node) in done:
            continue
        if id(node) in active:
            raise LimitError(None, None, "an alias refers to a value that contains it", node.start_mark)
        active.add(id(node))
        stack.append((node, True))
        stack.extend((k, False) for k in kids if id(k) not in done)


def _children(node: yaml.Node) -> list:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def load_all_bounded(text: str) -> Iterator[tuple[object, int, int]]:
    """(document, first line, last line) of each document of a text from outside the
    project, one at a time, duplicate keys refused and within the limits above (lines count
    from 1, for comments that belong to a document). Raises yaml.YAMLError (LimitError for a
    limit) at the first bad document; the documents before it have been yielded."""
    if len(text) > MAX_BYTES:
        raise LimitError(None, None, f"the input is over {MAX_BYTES // 2**20} MiB")
    loader = _StrictLoader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            _bounds(node)
            doc = loader.construct_document(node)
            if doc is not None:
                yield doc, node.start_mark.line + 1, node.end_mark.line + 1
    finally:
        loader.dispose()


def load_all(text: str) -> list:
    return [d for d in yaml.load_all(text, Loader=_Loader) if d is not None]


def dump(obj) -> str:
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=4096)


def dump_all(objs) -> str:
    return yaml.dump_all(objs, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                         allow_unicode=True, width=4096)
