"""`plan --update-expectations`: a scenario's `expect:` rewritten from the current plan, as
snapshot tools do, so a spec change that changes an outcome shows up in the pull request
as a change to the scenario.

Only what the author wrote is rewritten, in the author's terms: the same workloads (each
moved to the state it is now in), the same usage rows and counts, the same flavors,
preemptions and details with today's values. The file is edited in place, value by value,
so its comments, order and layout outside the changed values stay as they were."""
from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from ..kernel import yamlio
from ..kernel.errors import Problem, SpecError
from ..kernel.quantity import fmt
from . import scenario as scenario_mod
from .simulate import Plan, StepResult

STATE_KEYS = ("admitted", "reserved", "pending", "preempted", "never", "unmanaged", "finished")


# ---------------------------------------------------------------- new values
def updated(raw: dict, step: StepResult) -> dict:
    """The `expect:` mapping `raw` with every value taken from the step's outcome."""
    rows = {r.workload: r for r in step.rows}
    out: dict[str, Any] = {}
    moved: dict[str, list[str]] = {}
    for key in raw:
        if key in STATE_KEYS:
            for name in raw[key]:
                row = scenario_mod._find(rows, name)
                if row is not None:
                    moved.setdefault(row.state, []).append(name)
    for key, value in raw.items():
        if key in STATE_KEYS:
            if key in moved:
                out[key] = moved.pop(key)
            continue
        new = _UPDATERS[key](value, rows, step)
        if new:
            out[key] = new
    for state in STATE_KEYS:            # states the author did not name before
        if state in moved:
            out[state] = moved[state]
    return out


def _flavors(value: dict, rows: dict, step: StepResult) -> dict:
    out: dict[str, Any] = {}
    for name, want in value.items():
        row = scenario_mod._find(rows, name)
        if row is None or not row.flavors:
            continue
        got = dict(row.flavors)
        if isinstance(want, str) and len(set(got.values())) == 1:
            out[name] = next(iter(got.values()))
        elif isinstance(want, dict) and all(r in got for r in want):
            out[name] = {r: got[r] for r in want}
        else:
            out[name] = got
    return out


def _quantity(resource: str, value: Decimal) -> Any:
    return fmt(resource, value)


def _usage(value: list, rows: dict, step: StepResult) -> list:
    out = []
    for u in value:
        match = [x for x in step.usage if x.cluster_queue == u["clusterQueue"] and x.resource == u["resource"]
                 and ("flavor" not in u or x.flavor == u["flavor"]) and ("cluster" not in u or x.cluster == u["cluster"])]
        if not match:
            continue
        new = dict(u)
        for key in ("used", "borrowed"):
            if key in u:
                new[key] = _quantity(u["resource"], sum((getattr(x, key) for x in match), Decimal(0)))
        out.append(new)
    return out


def _count(value: dict, rows: dict, step: StepResult) -> dict:
    return {state: sum(1 for r in step.rows if r.state == state) for state in value}


def _spelled(actual: str, like: str) -> str:
    """The actual workload named as the author named the expected one (ns/name or name)."""
    return actual if "/" in like else actual.split("/", 1)[-1]


def _preempted_by(value: dict, rows: dict, step: StepResult) -> dict:
    out = {}
    events = [scenario_mod._untagged(e) for e in step.events]
    for victim, preemptor in value.items():
        row = scenario_mod._find(rows, victim)
        key = row.workload if row else victim
        hit = next((e for e in events if e.startswith(f"{key} preempted by ")), None)
        if hit is not None:
            out[victim] = _spelled(hit[len(f"{key} preempted by "):].split(" (", 1)[0], preemptor)
    return out


def _detail(value: dict, rows: dict, step: StepResult) -> dict:
    out = {}
    for name, words in value.items():
        row = scenario_mod._find(rows, name)
        if row is not None:
            out[name] = words if words in row.detail else row.detail
    return out


def _clusters(value: dict, rows: dict, step: StepResult) -> dict:
    out = {}
    for name in value:
        row = scenario_mod._find(rows, name)
        if row is not None and row.cluster:
            out[name] = row.cluster
    return out


def _copies(value: dict, rows: dict, step: StepResult) -> dict:
    out = {}
    for name, want in value.items():
        row = scenario_mod._find(rows, name)
        if row is not None:
            got = dict(row.copies)
            out[name] = {w: got.get(w, "none") for w in want}
    return out


_UPDATERS: dict[str, Callable[[Any, dict, StepResult], Any]] = {
    "flavors": _flavors, "usage": _usage, "count": _count, "preemptedBy": _preempted_by,
             "detail": _detail, "clusters": _clusters, "copies": _copies}


# ---------------------------------------------------------------- the file
def rewrite(path: str | Path, plan: Plan, flags: list[str] | None = None) -> int:
    """Write the plan's outcomes into the scenario file's expectations that do not hold;
    returns how many `expect:` blocks changed. `flags` gets one line for the description and
    each step title that may describe the old outcome (see stale_words)."""
    path = Path(path)
    text = path.read_text()
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    data = yaml.safe_load(text)
    edits: list[tuple[int, int, str]] = []
    blocks = _blocks(data, root, plan)
    changed = 0
    words: set[str] = set()
    for i, (raw, node, step) in enumerate(blocks):
        if node is None or not raw.get("expect") or not step.failures:
            continue
        new = updated(raw["expect"], step)
        if new == raw["expect"]:
            continue
        changed += 1
        edits += _edits(node, raw["expect"], new, text)
        mine = stale_words(raw["expect"], new)
        words |= mine
        if flags is not None and i:
            flags += _flag(f"step {step.index}'s title", raw.get("title"), mine)
    if flags is not None and changed:
        line = next((k.start_mark.line + 1 for k, _ in getattr(root, "value", []) if k.value == "description"), 0)
        flags[:0] = _flag(f"the description (line {line})", data.get("description"), words)
    for start, end, repl in sorted(edits, reverse=True):
        text = text[:start] + repl + text[end:]
    if changed:
        _replace_file(path, text)
    return changed


def _blocks(data: dict, root, plan: Plan) -> list[tuple[dict, Any, StepResult]]:
    """(the step as read, its `expect:` node, its outcome): the overlay's step 0 (the top-level
    `expect:`), then each step."""
    blocks = [(data, _value(root, "expect"), plan.steps[0])]
    steps_node = _value(root, "steps")
    for i, raw in enumerate(data.get("steps") or []):
        node = steps_node.value[i] if steps_node is not None else None
        blocks.append((raw, _value(node, "expect"), plan.steps[i + 1]))
    return blocks


# Words a text uses for a state (what a description of the old outcome would say).
STATE_WORDS = {"pending": ("wait", "pending", "queued"), "preempted": ("preempt", "evict"),
               "admitted": ("admit", "runs", "running"), "never": ("never",), "reserved": ("reserv",),
               "finished": ("finish",)}


def stale_words(old: dict, new: dict) -> set[str]:
    """What a text about the old outcome would mention: the workloads whose state moved (their
    names without the replica), the words of the states they left, and the numbers that changed."""
    out: set[str] = set()
    before = {n: s for s in STATE_KEYS for n in old.get(s) or []}
    after = {n: s for s in STATE_KEYS for n in new.get(s) or []}
    for name, state in before.items():
        if after.get(name) != state:
            out.add(name.split("#", 1)[0].rsplit("/", 1)[-1])
            out.update(STATE_WORDS.get(state, ()))
    out.update(_numbers(old) - _numbers(new))
    return out


def _numbers(value: Any) -> set[str]:
    if isinstance(value, dict):
        return {n for v in value.values() for n in _numbers(v)}
    if isinstance(value, list):
        return {n for v in value for n in _numbers(v)}
    text = str(value)
    return {text} if text[:1].isdigit() else set()


def _flag(what: str, text: Any, words: set[str]) -> list[str]:
    """One line when `text` mentions what the old outcome had."""
    hits = _mentions(text, words) if isinstance(text, str) else set()
    shown = f" {text!r}" if what.endswith("title") else ""
    return [f"{what}{shown} may describe the old outcome ({', '.join(sorted(hits))}): check it"] if hits else []


def _mentions(text: str, words: set[str]) -> set[str]:
    lower = text.lower()
    return {w for w in words if re.search(rf"(?<![\w.-]){re.escape(w.lower())}", lower)}


def _replace_file(path: Path, text: str) -> None:
    """Rewrite the scenario in place of the file itself: a new file beside it, renamed over
    it (a rename replaces a name, never what a link points to). A scenario that is a
    symbolic link is refused: the file it names may be anywhere."""
    if path.is_symlink():
        raise SpecError(str(path), [Problem("", "the scenario is a symbolic link; --update-expectations rewrites "
                                                "only a plain file (replace the link by the file)")])
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, stat.S_IMODE(path.stat().st_mode))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _value(node, key: str):
    if not isinstance(node, yaml.MappingNode):
        return None
    return next((v for k, v in node.value if k.value == key), None)


def _edits(node, old: dict, new: dict, text: str) -> list[tuple[int, int, str]]:
    """Each changed value replaced in place, a key that goes deleted with its lines, a new
    key added after the last; a flow-style `expect: {...}` is replaced whole."""
    if not isinstance(node, yaml.MappingNode) or node.flow_style or not new:
        inplace = _inplace(node, old, new, text)
        return inplace if inplace is not None else [_replace(node, new, text)]
    out = []
    for k, v in node.value:
        if k.value not in new:
            start = text.rfind("\n", 0, k.start_mark.index) + 1
            end = text.find("\n", _end(v))
            out.append((start, len(text) if end < 0 else end + 1, ""))
        elif old[k.value] != new[k.value]:
            inplace = _inplace(v, old[k.value], new[k.value], text)
            out += inplace if inplace is not None else [_replace(v, new[k.value], text)]
    added = {k: v for k, v in new.items() if k not in old}
    if added:
        at = _end(node.value[-1][1])
        eol = text.find("\n", at)
        eol = len(text) if eol < 0 else eol
        pad = " " * node.start_mark.column
        dumped = yamlio.dump_styled(added, None, 10**9)
        out.append((eol, eol, "".join(f"\n{pad}{ln}" for ln in dumped.rstrip("\n").split("\n"))))
    return out


def _inplace(node, old: Any, new: Any, text: str) -> list[tuple[int, int, str]] | None:
    """The edits that change only the scalars that differ, when old and new have the same shape
    (the same keys in the same order, lists of the same length): the author's flow style,
    spacing, quoting and comments stay. None: the shape changed, the value is rewritten whole."""
    if old == new:
        return []
    if isinstance(node, yaml.ScalarNode):
        return None if isinstance(new, (dict, list)) else [(node.start_mark.index, node.end_mark.index,
                                                             _scalar(node, new))]
    pairs = _same_shape(node, old, new)
    if pairs is None:
        return None
    out: list[tuple[int, int, str]] = []
    for child, a, b in pairs:
        edits = _inplace(child, a, b, text)
        if edits is None:
            return None
        out += edits
    return out


def _same_shape(node, old: Any, new: Any) -> list[tuple[Any, Any, Any]] | None:
    """(child node, old value, new value) of a mapping with the same keys in the same order, or
    a list of the same length; None when the shape changed."""
    if isinstance(node, yaml.MappingNode) and isinstance(old, dict) and isinstance(new, dict) \
            and list(old) == list(new) and [k.value for k, _ in node.value] == list(old):
        return [(v, old[k.value], new[k.value]) for k, v in node.value]
    if isinstance(node, yaml.SequenceNode) and isinstance(old, list) and isinstance(new, list) \
            and len(old) == len(new) == len(node.value):
        return list(zip(node.value, old, new, strict=True))
    return None


def _scalar(node, value: Any) -> str:
    """A scalar written as the author wrote the one it replaces: in the author's quotes, or plain
    when plain reads back as the same value (16, 1600Gi)."""
    if isinstance(value, (str, int, Decimal)) and not isinstance(value, bool):
        text = str(value)
        if node.style == "'":
            return "'" + text.replace("'", "''") + "'"
        if node.style == '"':
            return json.dumps(text, ensure_ascii=False)
        if not isinstance(value, str):
            return text
        try:
            back = yaml.safe_load(text)
        except yaml.YAMLError:
            back = None
        if isinstance(back, (str, int)) and not isinstance(back, bool) and str(back) == text \
                and "#" not in text and ": " not in text:
            return text
    dumped = yaml.safe_dump(value, default_flow_style=True, width=10**9, allow_unicode=True)
    return dumped.strip().removesuffix("\n...").removesuffix("...").strip()


def _end(node) -> int:
    """Where a node's own text ends: a block collection's end mark lies past the comments
    after it, so take its last child's."""
    if isinstance(node, yaml.ScalarNode) or node.flow_style or not node.value:
        return node.end_mark.index
    last = node.value[-1]
    return _end(last[1] if isinstance(last, tuple) else last)


def _replace(node, value: Any, text: str) -> tuple[int, int, str]:
    start, end = node.start_mark.index, _end(node)
    flow = isinstance(node, yaml.ScalarNode) or node.flow_style
    if flow or not value:
        dumped = yamlio.dump_styled(value, True, 10**9)
        return start, end, dumped.strip().removesuffix("\n...").removesuffix("...").strip()
    dumped = yamlio.dump_styled(value, False, 100)
    pad = " " * node.start_mark.column
    lines = dumped.rstrip("\n").split("\n")
    return start, end, "\n".join([lines[0]] + [pad + ln for ln in lines[1:]])
