"""YAML in and out, and the one reader of YAML written by others: the spec,
plan scenarios, and the manifests given to `plan` and `validate`.

Reading such input is bounded, so a hostile or broken file costs a clear
error, never a hang (docs/changing.md, "Limits on input"):

- size: at most MAX_BYTES (10 MiB) per file or stream;
- encoding: UTF-8 (a byte-order mark is allowed);
- nesting: at most MAX_DEPTH (100) levels (a scalar counts as one);
- aliases: each alias counts as a copy of what it names, and a document may
  expand to at most MAX_NODES (1,000,000) values that way ("billion laughs"
  is 1 KB that expands to 10^9); an alias inside its own anchor is refused;
- a key given twice in one mapping is an error (PyYAML keeps the last one
  silently), as is a list or mapping used as a key.

Limits are checked on the composed node graph, before anything is built.
Dumping is deterministic and uses the C emitter when present."""
from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import stat
import sys
from collections.abc import Hashable, Iterator
from pathlib import Path
from typing import Any

import yaml

from . import yamldump

try:   # the C parser and emitter when PyYAML has them: the pure-Python ones dominate a large spec
    from yaml import CSafeDumper as _Dumper, CSafeLoader as _Loader
except ImportError:
    from yaml import SafeDumper as _Dumper, SafeLoader as _Loader  # type: ignore[assignment]  # the same API, in pure Python

# A large Kubernetes object (a CRD with its schema) has some 30,000 nodes and
# nests about 40 deep; the Kubernetes API server refuses requests over 3 MiB.
MAX_BYTES = 10 * 2**20
MAX_DEPTH = 100
MAX_NODES = 1_000_000


class DuplicateKeyError(yaml.constructor.ConstructorError):
    pass


class LimitError(yaml.MarkedYAMLError):
    """A document over one of the limits above (no YAML syntax error)."""


class InputError(ValueError):
    """A file of the user's that is not YAML within the limits. str() says where
    and why, without the file name (callers add it); `line`/`column` (1-based)
    and `message` are there for callers that place the location themselves."""

    def __init__(self, message: str, mark=None, syntax: bool = False):
        self.line = mark.line + 1 if mark is not None else None
        self.column = mark.column + 1 if mark is not None else None
        self.message = f"not valid YAML: {message}" if syntax else message
        where = f"line {self.line}, column {self.column}: " if mark is not None else ""
        super().__init__(f"not valid YAML: {where}{message}" if syntax else f"{where}{message}")


class _StrictLoader(_Loader):
    def resolve(self, kind, value, implicit):
        """The tag of a node, as PyYAML's resolver gives it, remembered for short scalars: the
        parser asks for every scalar of every file (a spec of 1,000 workloads holds 50,000, most
        of them values seen before), and PyYAML's answer is a pure function of the text and
        how it was written (plain or quoted), since this loader has no path resolvers."""
        if kind is not yaml.ScalarNode or len(value) > _RESOLVED_MAX_CHARS:
            return super().resolve(kind, value, implicit)
        key = (value, implicit)
        tag = _RESOLVED.get(key)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(_RESOLVED) < _RESOLVED_MAX and not self.yaml_path_resolvers:
                _RESOLVED[key] = tag
        return tag


_RESOLVED: dict[tuple[str, tuple], str] = {}   # (scalar text, (plain, quoted)) -> tag
_RESOLVED_MAX, _RESOLVED_MAX_CHARS = 100_000, 64


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

# No field of a spec, scenario or Kubernetes object takes an integer past 64 bits (19 digits):
# one of over 1,000 digits is refused as it is read, never converted (Python refuses to
# convert one of over 4,300 digits, and arithmetic on a huge one is slow); shorter ones reach
# the field's own check, which names the field and its range.
MAX_INT_DIGITS = 1_000


def _construct_int(loader, node):
    digits = sum(ch.isdigit() for ch in node.value)
    if digits > MAX_INT_DIGITS:
        raise LimitError(None, None, f"an integer of {digits:,} digits, over the limit of {MAX_INT_DIGITS} "
                         "(no field takes a number past 64 bits, 19 digits)", node.start_mark)
    value = yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)
    if abs(value).bit_length() > MAX_INT_DIGITS * 4:   # 0x..., sexagesimal 1:2:3:... grow past their digits
        raise LimitError(None, None, f"an integer over the limit of {MAX_INT_DIGITS} digits", node.start_mark)
    return value


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)

_STR, _SEQ, _MAP = "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"
_PLAIN_SCALARS = frozenset({"tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int",
                            "tag:yaml.org,2002:float"})
_MERGE = frozenset({"tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"})


def _construct_tree(loader: _StrictLoader, node: yaml.Node) -> Any:
    """What loader.construct_document(node) returns, for a node graph without aliases (a
    tree), built directly: strings, lists and plain mappings without PyYAML's per-node
    bookkeeping (shared nodes, recursion, deferred generators), which a tree does not
    need. Null, bool, int and float go to PyYAML's own constructors; any other tag, and a
    mapping with merge keys, to construct_document as before. Duplicate and unhashable
    keys are refused as _construct_mapping refuses them: all keys first, then the values."""
    tag = node.tag
    if tag == _STR and isinstance(node, yaml.ScalarNode):
        return node.value
    if tag in _PLAIN_SCALARS and isinstance(node, yaml.ScalarNode):
        return loader.yaml_constructors[tag](loader, node)
    if tag == _SEQ and isinstance(node, yaml.SequenceNode):
        return [_construct_tree(loader, item) for item in node.value]
    if tag == _MAP and isinstance(node, yaml.MappingNode) and not any(k.tag in _MERGE for k, _ in node.value):
        keys = _tree_keys(loader, node)
        return {key: _construct_tree(loader, value) for key, (_, value) in zip(keys, node.value, strict=True)}
    return loader.construct_document(node)


def _tree_keys(loader: _StrictLoader, node: yaml.MappingNode) -> list:
    """The keys of a mapping of a tree, in order, refused as _construct_mapping refuses them."""
    keys: list = []
    seen: set = set()
    for key_node, _ in node.value:
        key = _construct_tree(loader, key_node)
        if not isinstance(key, Hashable):
            raise yaml.constructor.ConstructorError(
                None, None, f"a mapping key must be a plain value, not a {type(key).__name__}", key_node.start_mark)
        if key in seen:
            raise DuplicateKeyError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
        keys.append(key)
    return keys


def _str(dumper, value: str):
    # Multi-line strings (embedded configs, scripts) as literal blocks, so
    # they read and diff line by line.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


# ---------------------------------------------------------------- bounded reading

def _within_as_tree(root: yaml.Node) -> bool:
    """Whether a node graph without aliases (a tree: no node is reached twice) is within
    MAX_NODES and MAX_DEPTH: level by level, a count and a depth, without _bounds'
    per-node bookkeeping (it dominated reading a 1,000-workload spec). A tree's largest
    subtree is the whole tree and its depth is the deepest level, so this agrees with
    _bounds; over a limit, _bounds runs to raise its own error."""
    level, count, depth = [root], 0, 0
    while level:
        depth += 1
        count += len(level)
        if depth > MAX_DEPTH or count > MAX_NODES:
            return False
        below: list = []
        for node in level:
            if isinstance(node, yaml.MappingNode):
                for pair in node.value:
                    below += pair
            elif isinstance(node, yaml.SequenceNode):
                below += node.value
        level = below
    return True


def _bounds(root: yaml.Node, aliases: bool = True) -> None:
    """Refuse a node graph that expands past MAX_NODES, nests past MAX_DEPTH or
    refers to itself: one pass over the graph, each shared (aliased) node once.
    `aliases=False`: the text has none (no `&` or no `*` in it), so the graph is a tree."""
    if not aliases and _within_as_tree(root):
        return
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


def _prescan(text: str) -> None:
    """Refuse an alias bomb while it is read, before anything is composed: one streaming
    pass over the parser's events, counting what each alias expands to. Composing first
    (and _bounds after) would build the whole node graph of a 10 MiB file before saying no.
    Per document at most MAX_NODES values; per stream at most MAX_NODES added by aliases
    (a stream of documents that each stay under the limit is still a bomb)."""
    loader = _StrictLoader(text)
    sizes: dict[str, int] = {}
    frames: list[list] = []            # open collections: [anchor, expanded size so far]
    total = aliased = 0

    def done(size: int, anchor, mark) -> None:
        nonlocal total
        if anchor is not None:
            sizes[anchor] = size
        if frames:
            frames[-1][1] += size
        if total > MAX_NODES or aliased > MAX_NODES:
            raise LimitError(None, None, f"aliases expand to more than {MAX_NODES:,} values", mark)

    try:
        while loader.check_event():
            e = loader.get_event()
            mark: Any = getattr(e, "start_mark", None)   # the C parser's marks are typed apart from the pure-Python ones
            if isinstance(e, yaml.DocumentStartEvent):
                sizes, total = {}, 0
            elif isinstance(e, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                if len(frames) >= MAX_DEPTH:
                    raise LimitError(None, None, f"nested more than {MAX_DEPTH} levels deep", mark)
                frames.append([e.anchor, 1])
                total += 1
            elif isinstance(e, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                anchor, size = frames.pop()
                done(size, anchor, e.start_mark)
            elif isinstance(e, yaml.ScalarEvent):
                total += 1
                done(1, e.anchor, e.start_mark)
            elif isinstance(e, yaml.AliasEvent):
                if any(f[0] == e.anchor for f in frames):
                    raise LimitError(None, None, "an alias refers to a value that contains it", mark)
                size = sizes.get(e.anchor or "", 1)   # an unknown alias: the composer says so
                total += size
                aliased += size
                done(size, None, e.start_mark)
    finally:
        loader.dispose()


def load_all_bounded(text: str) -> Iterator[tuple[object, int, int]]:
    """(document, first line, last line) of each document of a text from outside the
    project, one at a time, duplicate keys refused and within the limits above (lines count
    from 1, for comments that belong to a document). Raises yaml.YAMLError (LimitError for a
    limit) at the first bad document; the documents before it have been yielded."""
    if len(text) > MAX_BYTES:
        raise LimitError(None, None, f"the input is over {MAX_BYTES // 2**20} MiB")
    aliases = "&" in text and "*" in text   # an alias needs both: else the graph is a tree
    if aliases:   # no anchor, no alias: nothing to expand
        _prescan(text)
    loader = _StrictLoader(text)
    try:
        while (read := _next_document(loader, aliases)) is not None:
            node, doc = read
            if doc is not None:
                yield doc, node.start_mark.line + 1, node.end_mark.line + 1
    finally:
        loader.dispose()


def _next_document(loader: _StrictLoader, aliases: bool) -> tuple[yaml.Node, Any] | None:
    """The next document's node graph and value, None at the end of the stream."""
    with gc_paused():
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                _bounds(node, aliases)
                return node, loader.construct_document(node) if aliases else _construct_tree(loader, node)
        return None


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a large acyclic value is built (a parsed
    document, JSON): building one makes Python run the collector again and again over
    everything allocated so far, a seventh of validating 300 files against a 1,000-workload
    spec, while what is built holds no cycles to collect. Reference counting still frees."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


# ---------------------------------------------------------------- the user's files

def decode(data: bytes) -> str:
    """The text of a file's bytes, size and encoding checked."""
    if len(data) > MAX_BYTES:
        raise InputError(f"larger than the limit of {MAX_BYTES // 2**20} MiB ({len(data):,} bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text: byte 0x{data[e.start]:02x} on line {line} cannot be decoded; "
                         f"save the file as UTF-8") from None


def not_regular(path: str | Path) -> str | None:
    """Why `path` is not a regular file to read (a FIFO or a device would block or never
    end: refused before it is opened), or None. OSError when it cannot be looked at."""
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode):
        return None
    kind = "a directory" if stat.S_ISDIR(mode) else "a named pipe (FIFO)" if stat.S_ISFIFO(mode) \
        else "a device or socket"
    return f"{kind}, not a regular file; give a file (or - for standard input)"


def read_text(path: str | Path) -> str:
    """A file's text; OSError when it cannot be read, InputError when it is too
    large or not UTF-8. Reads at most one byte past the limit."""
    problem = not_regular(path)
    if problem:
        raise InputError(problem)
    with open(path, "rb") as f:
        return decode(f.read(MAX_BYTES + 1))


def read_stdin() -> str:
    """Standard input's text, with the same limits as a file."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:   # replaced by a text stream (tests)
        return decode(sys.stdin.read(MAX_BYTES + 1).encode())
    return decode(stream.read(MAX_BYTES + 1))


def _input_error(e: yaml.YAMLError) -> InputError:
    if isinstance(e, yaml.MarkedYAMLError):
        what = str(e.problem or e.context)
        mark = e.problem_mark or e.context_mark
        return InputError(what, mark, syntax=not isinstance(e, LimitError))
    return InputError(str(e), syntax=True)


def load_user_all(text: str) -> list:
    """The documents of a YAML stream of the user's (empty ones dropped), within the limits."""
    try:
        return [doc for doc, _, _ in load_all_bounded(text)]
    except yaml.YAMLError as e:
        raise _input_error(e) from None
    except RecursionError:   # the pure-Python parser, when the C one is absent
        raise InputError(f"nested more than {MAX_DEPTH} levels deep") from None


def load_user(text: str):
    """The one document of a file of the user's (None when empty), within the limits."""
    docs = load_user_all(text)
    if len(docs) > 1:
        raise InputError("holds more than one YAML document; expected one")
    return docs[0] if docs else None


# ---------------------------------------------------------------- the project's files

def load_strict(text: str):
    """One YAML document, duplicate keys refused: the project's own files (schemas/versions.yaml);
    the same bounded reader as the user's."""
    return load_user(text)


def load_all(text: str) -> list:
    """Documents of YAML the project generated itself (trusted; fast path)."""
    return [d for d in yaml.load_all(text, Loader=_Loader) if d is not None]


_FastDumper = yamldump.faster(_Dumper)   # the same text, less pure-Python work per node


def dump(obj) -> str:
    return yaml.dump(obj, Dumper=_FastDumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=4096)


def dump_styled(obj, flow: bool | None, width: int) -> str:
    """dump() with another flow style and width (a scenario's expectations, rewritten in place):
    the same quoting of strings other readers would take for numbers or booleans."""
    return yaml.dump(obj, Dumper=_FastDumper, sort_keys=False, default_flow_style=flow, allow_unicode=True,
                     width=width)


def dump_all(objs) -> str:
    return yaml.dump_all(objs, Dumper=_FastDumper, sort_keys=False, default_flow_style=False,
                         allow_unicode=True, width=4096)


# ---------------------------------------------------------------- positions, for error messages

def document_nodes(source: str, raw=None) -> yaml.Node | None:
    """The node graph of the user's file `source` (marks: line and column of each value),
    composed again only when an error is reported; else the nodes of `raw` (no marks); else None."""
    try:
        text = read_text(source) if Path(source).is_file() else None
    except (OSError, ValueError):
        text = None
    if text is not None:
        try:
            aliases = "&" in text and "*" in text
            if aliases:
                _prescan(text)   # the same bounds as the first read: an alias bomb is not composed
            loader = _StrictLoader(text)
            try:
                node = loader.get_single_node()
            finally:
                loader.dispose()
            if node is not None:
                _bounds(node, aliases)   # without aliases a tree: counted level by level
                return node
        except (yaml.YAMLError, RecursionError):
            pass
    if raw is None:
        return None
    try:
        return yaml.representer.SafeRepresenter().represent_data(raw)
    except (yaml.YAMLError, RecursionError, TypeError):
        return None


_INDEX = re.compile(r"\[(\d+)\]")
_QUOTED = re.compile(r"\[(\"(?:[^\"\\]|\\.)*\"|'[^']*')\]")


def _named(seq: yaml.SequenceNode, i: int):
    """Item i of a list by its `name`, when it has one no other item has."""
    def name(node):
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if k.value == "name" and isinstance(v, yaml.ScalarNode) and v.value:
                    return v.value
        return None
    mine = name(seq.value[i])
    if mine is None or sum(name(n) == mine for n in seq.value) > 1:
        return i
    from .credentials import known_token
    from .errors import Named
    return i if known_token(mine) else Named(mine)


def _unquote(quoted: str) -> str:
    """A bracketed key as written: JSON escapes inside double quotes, none inside single."""
    return json.loads(quoted) if quoted.startswith('"') else quoted[1:-1]


def _item_step(node: yaml.SequenceNode, rest: str):
    """(part, item, None, rest) for a list item by index or by quoted name, or None."""
    m = _INDEX.match(rest)
    if m and int(m.group(1)) < len(node.value):
        i = int(m.group(1))
        return _named(node, i), node.value[i], None, rest[m.end():]
    m = _QUOTED.match(rest)
    if m:
        name = _unquote(m.group(1))
        for i, item in enumerate(node.value):
            if isinstance(item, yaml.MappingNode) and any(
                    k.value == "name" and getattr(v, "value", None) == name for k, v in item.value):
                return _named(node, i), item, None, rest[m.end():]
    return None


def _key_step(node: yaml.MappingNode, rest: str):
    """(key, value, key node, rest) for a mapping entry by quoted or plain key, or None. A plain
    key may itself hold dots, so the longest key that the path starts with wins."""
    m = _QUOTED.match(rest)
    if m:
        key = _unquote(m.group(1))
        candidates = [(k, v, rest[m.end():]) for k, v in node.value if str(k.value) == key]
    else:
        plain = rest[1:] if rest.startswith(".") else rest
        candidates = [(k, v, plain[len(str(k.value)):]) for k, v in node.value
                      if isinstance(k, yaml.ScalarNode) and plain.startswith(str(k.value))
                      and plain[len(str(k.value)):][:1] in ("", ".", "[")]
    if not candidates:
        return None
    k, v, tail = max(candidates, key=lambda c: len(str(c[0].value)))
    return str(k.value), v, k, tail


def _step(node: yaml.Node, rest: str):
    """(part, child node, key node or None, rest) one path element down, or None."""
    if isinstance(node, yaml.SequenceNode):
        return _item_step(node, rest)
    if isinstance(node, yaml.MappingNode):
        return _key_step(node, rest)
    return None


def locate(root: yaml.Node, path: str) -> tuple[str, tuple[int, int] | None]:
    """(the path rewritten by the one path writer, with list items by name, and the 1-based
    line and column of the deepest part of it the document has) for a path as written by a
    check. A mapping entry's position is its key's; what the document lacks is kept as written."""
    from .errors import format_path
    parts: list = []
    mark = None
    node, rest = root, path
    while rest:
        step = _step(node, rest)
        if step is None:
            break
        part, node, key, rest = step
        parts.append(part)
        m = (key or node).start_mark
        mark = (m.line + 1, m.column + 1) if m is not None else None
    if not parts:
        return path, None
    tail = rest if not rest or rest.startswith(("[", ".")) else "." + rest
    return format_path(parts) + tail, mark


def file_documents(source: str | Path) -> list[yaml.Node]:
    """The node graphs (marks: line and column) of a user's file, one per document as
    load_all_bounded yields them (empty and null documents left out), read again only when a
    report wants positions; the documents before a bad one when one is bad, [] when unreadable."""
    try:
        text = read_text(source)
    except (OSError, ValueError):
        return []
    out: list[yaml.Node] = []
    try:
        aliases = "&" in text and "*" in text
        if aliases:
            _prescan(text)   # the same bounds as the first read
        loader = _StrictLoader(text)
        try:
            while loader.check_node():
                node = loader.get_node()
                if node is None:
                    continue
                _bounds(node, aliases)   # without aliases a tree: counted level by level
                if not (isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null"):
                    out.append(node)
        finally:
            loader.dispose()
    except (yaml.YAMLError, RecursionError):
        pass
    return out
