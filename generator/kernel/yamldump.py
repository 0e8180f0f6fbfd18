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

from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_CACHE_LIMIT = 200_000   # distinct (value, implicit) answers kept; cleared when full


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
                tag = super().resolve(kind, value, implicit)
                if len(answers) >= _CACHE_LIMIT:
                    answers.clear()
                answers[key] = tag
            return tag

    Dumper.__name__ = Dumper.__qualname__ = f"Fast{base.__name__}"
    return Dumper
