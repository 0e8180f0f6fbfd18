"""YAML in and out. Loading refuses duplicate keys (PyYAML keeps the last one
silently); dumping is deterministic and uses the C emitter when present."""
from __future__ import annotations

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


def load_all(text: str) -> list:
    return [d for d in yaml.load_all(text, Loader=_Loader) if d is not None]


def dump(obj) -> str:
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=4096)


def dump_all(objs) -> str:
    return yaml.dump_all(objs, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                         allow_unicode=True, width=4096)
