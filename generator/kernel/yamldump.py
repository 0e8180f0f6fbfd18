"""A faster PyYAML dumper for generated files: node for node what yamlio's
dumper builds, so the text is the same byte for byte (tests/test_yamldump.py).

Writing YAML was over a quarter of a 1,000-workload synth, nearly all of it in
PyYAML's pure-Python half: the representer's generic dispatch for every scalar,
and the resolver, which the C emitter asks twice per scalar whether the plain
text would read back as the same type. Here plain scalars (str, int, bool,
None), dicts and lists become nodes directly (dicts and lists still registered
for aliases, as PyYAML does), and the resolver's answers are remembered per
value; everything else (floats, subclasses, sorted keys, flow style) takes
PyYAML's path."""
from __future__ import annotations

import re
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_CACHE_LIMIT = 200_000   # distinct (value, implicit) answers kept; cleared when full
# Not a tag any reader knows: a string the resolver answers this for is never written plain.
_QUOTE = "tag:gke-ml-platform,2026:quote"

# Plain words other YAML readers take for something else than a string, which PyYAML's own
# resolver (YAML 1.1 without y/n) writes unquoted. kubectl and Argo CD read YAML through
# sigs.k8s.io/yaml, i.e. go-yaml v2 (resolve.go): its table of YAML 1.1 words (y, Y, n, N,
# yes, on, off, ~, null, .inf, .nan, <<, ...), then, for a word starting with a digit, sign or
# dot, Go's strconv.ParseInt/ParseUint with base 0 (0x, 0o, 0b, a leading-0 octal, `_`
# between digits) and ParseFloat for `yamlStyleFloat` (1e3, 1., .5), and timestamps. YAML 1.1's
# own types (yaml.org/type/bool.html, int.html, float.html, null.html) and YAML 1.2's core
# schema (0o7) are covered by the same patterns. Quoting a string more often than needed is
# harmless; leaving one plain that a reader turns into a number or a boolean is not.
_WORDS = frozenset(
    "y Y yes Yes YES n N no No NO true True TRUE false False FALSE on On ON off Off OFF "
    "~ null Null NULL .nan .NaN .NAN .inf .Inf .INF +.inf +.Inf +.INF -.inf -.Inf -.INF <<".split())
_NUMBER = re.compile(r"""[-+]?(
      0[xX][0-9a-fA-F_]+ | 0[oO][0-7_]+ | 0[bB][01_]+ | [0-9][0-9_]*          # ints, any base (Go and YAML 1.1)
    | [0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?                                # YAML 1.1 sexagesimal
    | ([0-9][0-9_]*)?\.?[0-9_]*([eE][-+]?[0-9]+)?                           # floats: 1e3, 1., .5, 1.5e-3
    )""", re.VERBOSE)


def ambiguous(value: str) -> bool:
    """Whether some YAML reader (YAML 1.1, go-yaml v2 as kubectl uses it, YAML 1.2) reads this
    string, written plain, as anything but the same string."""
    if value in _WORDS or value == "":
        return True
    return value[:1] in "0123456789+-." and _NUMBER.fullmatch(value) is not None and any(
        ch.isdigit() for ch in value)


def _quoted(tag: str, value: str, implicit: Any) -> str:
    """The resolver's tag, except for a string that plain would read back as another type
    somewhere: a tag no reader knows, so the emitter quotes it."""
    return _QUOTE if tag == _STR and implicit[0] and ambiguous(value) else tag


def faster(base: type) -> type:
    """`base` (yamlio's dumper, whose str representer writes multi-line strings as
    literal blocks) with the fast paths above."""
    answers: dict[tuple[str, tuple[bool, bool]], Any] = {}

    class Dumper(base):   # a PyYAML dumper class chosen at import
        def represent_data(self, data: Any) -> Node:
            t = type(data)
            if t is str:   # yamlio._str: literal block when multi-line
                return ScalarNode(_STR, data, style="|" if "\n" in data else None)
            if t is int:
                return ScalarNode(_INT, str(data))
            if t is bool:
                return ScalarNode(_BOOL, "true" if data else "false")
            if data is None:
                return ScalarNode(_NULL, "null")
            if (t is dict or t is list) and self.default_flow_style is not None and not self.sort_keys \
                    and id(data) not in self.represented_objects:
                return self._collection(data, t is dict)
            return super().represent_data(data)

        def _collection(self, data: Any, mapping: bool) -> Node:
            # SafeRepresenter.represent_data + represent_mapping / represent_sequence, unrolled.
            self.object_keeper.append(data)
            value: list = []
            node: Node = MappingNode(_MAP, value, flow_style=self.default_flow_style) if mapping \
                else SequenceNode(_SEQ, value, flow_style=self.default_flow_style)
            self.represented_objects[id(data)] = node
            represent = self.represent_data
            if mapping:
                for k, v in data.items():
                    value.append((represent(k), represent(v)))
            else:
                for item in data:
                    value.append(represent(item))
            return node

        def resolve(self, kind: type, value: Any, implicit: Any) -> Any:
            if kind is not ScalarNode:
                return super().resolve(kind, value, implicit)
            key = (value, implicit)
            tag = answers.get(key)
            if tag is None:
                tag = _quoted(super().resolve(kind, value, implicit), value, implicit)
                if len(answers) >= _CACHE_LIMIT:
                    answers.clear()
                answers[key] = tag
            return tag

    Dumper.__name__ = Dumper.__qualname__ = f"Fast{base.__name__}"
    return Dumper
