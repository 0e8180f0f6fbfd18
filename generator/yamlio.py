"""YAML in and out, and the one reader of the files users write (the spec,
plan scenarios, manifests given to `plan` and `validate`).

Reading a user file is bounded, so a hostile or broken file costs a clear
error, never a hang (limits documented in the README, "Limits on input"):

- size: at most MAX_BYTES (10 MiB) per file or stream;
- encoding: UTF-8 (a byte-order mark is allowed);
- nesting: at most MAX_DEPTH (100) levels of mappings and lists;
- aliases: each alias counts as a copy of what it names, and aliases may add
  at most MAX_ALIAS_NODES (100,000) nodes to a document ("billion laughs" is
  1 KB that expands to 10^9); an alias that contains itself is refused;
- a key given twice in one mapping is an error (PyYAML keeps the last one
  silently), as is a key that is itself a list or mapping.

Dumping is deterministic and uses the C emitter when present."""
from __future__ import annotations

import sys
from pathlib import Path

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

try:   # the C parser and emitter when PyYAML has them: the pure-Python ones dominate a large spec
    from yaml import CSafeDumper as _Dumper
    from yaml import CSafeLoader as _Loader
except ImportError:
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

MAX_BYTES = 10 * 1024 * 1024
MAX_DEPTH = 100
MAX_ALIAS_NODES = 100_000


class InputError(ValueError):
    """A user file that is not YAML we read. str() says where and why, without
    the file name (callers add it); `line`/`column` (1-based) and `message`
    are there for callers that place the location themselves."""

    def __init__(self, message: str, mark=None, syntax: bool = False):
        self.line = mark.line + 1 if mark is not None else None
        self.column = mark.column + 1 if mark is not None else None
        self.message = f"not valid YAML: {message}" if syntax else message
        where = f"line {self.line}, column {self.column}: " if mark is not None else ""
        super().__init__(f"not valid YAML: {where}{message}" if syntax else f"{where}{message}")


class DuplicateKeyError(yaml.constructor.ConstructorError):
    pass


class _StrictLoader(_Loader):
    pass


def _construct_mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            duplicate = key in seen
        except TypeError:   # a list or mapping as a key
            raise yaml.constructor.ConstructorError(None, None, "a list or mapping cannot be a key",
                                                    key_node.start_mark) from None
        if duplicate:
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


# ---------------------------------------------------------------- user files

def decode(data: bytes) -> str:
    """The text of a user file's bytes (size and encoding checked)."""
    if len(data) > MAX_BYTES:
        raise InputError(f"larger than the limit of {MAX_BYTES // (1024 * 1024)} MiB ({len(data):,} bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text: byte 0x{data[e.start]:02x} on line {line} cannot be decoded; "
                         f"save the file as UTF-8") from None


def read_text(path: str | Path) -> str:
    """A user file's text; OSError when it cannot be read, InputError when it
    is too large or not UTF-8. Reads at most one byte past the limit."""
    with open(path, "rb") as f:
        return decode(f.read(MAX_BYTES + 1))


def read_stdin() -> str:
    """Standard input's text, with the same limits as a file."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:   # replaced by a text stream (tests)
        return decode(sys.stdin.read(MAX_BYTES + 1).encode())
    return decode(stream.read(MAX_BYTES + 1))


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def _check_bounds(root: Node) -> None:
    """Depth, alias expansion and alias cycles of one composed document, in
    time linear in its distinct nodes (an alias is the same Node object as
    its anchor, so shared subtrees are measured once)."""
    size: dict[int, int] = {}    # id -> nodes once aliases are expanded
    depth: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        key = id(node)
        if leaving:
            on_path.discard(key)
            kids = _children(node)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            depth[key] = 1 + max((depth[id(k)] for k in kids), default=0)
            if depth[key] > MAX_DEPTH:
                raise InputError(f"nested more than {MAX_DEPTH} levels deep", node.start_mark)
            continue
        if key in size:
            continue
        if key in on_path:
            raise InputError("an alias refers to a node that contains it", node.start_mark)
        on_path.add(key)
        stack.append((node, True))
        stack.extend((k, False) for k in _children(node) if id(k) not in size)
    added = size[id(root)] - len(size)
    if added > MAX_ALIAS_NODES:
        raise InputError(f"aliases expand this document by {added:,} nodes, over the limit of "
                         f"{MAX_ALIAS_NODES:,}; write the repeated parts out", root.start_mark)


def _documents(text: str):
    loader = _StrictLoader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            _check_bounds(node)
            yield loader.construct_document(node)
    except yaml.MarkedYAMLError as e:
        raise InputError(str(e.problem or e.context), e.problem_mark or e.context_mark, syntax=True) from None
    except yaml.YAMLError as e:
        raise InputError(str(e), syntax=True) from None
    except RecursionError:   # the pure-Python parser, when the C one is absent
        raise InputError(f"nested more than {MAX_DEPTH} levels deep") from None
    finally:
        loader.dispose()


def load_user(text: str):
    """The one document of a user file (None when empty), within the limits."""
    if len(text) > MAX_BYTES:
        raise InputError(f"larger than the limit of {MAX_BYTES // (1024 * 1024)} MiB")
    docs = list(_documents(text))
    if len(docs) > 1:
        raise InputError("holds more than one YAML document; expected one")
    return docs[0] if docs else None


def load_user_all(text: str) -> list:
    """The documents of a user YAML stream (empty ones dropped), within the limits."""
    if len(text) > MAX_BYTES:
        raise InputError(f"larger than the limit of {MAX_BYTES // (1024 * 1024)} MiB")
    return [d for d in _documents(text) if d is not None]


# ---------------------------------------------------------------- project files

def load_strict(text: str):
    """One YAML document, bounded and with duplicate keys refused (the project's
    own files such as schemas/versions.yaml; user files go through load_user)."""
    return load_user(text)


def load_all(text: str) -> list:
    """Documents of YAML the project generated itself (trusted; fast path)."""
    return [d for d in yaml.load_all(text, Loader=_Loader) if d is not None]


def dump(obj) -> str:
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=4096)


def dump_all(objs) -> str:
    return yaml.dump_all(objs, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                         allow_unicode=True, width=4096)
