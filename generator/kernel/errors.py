"""The one problem type (Problem: what every tool reports about what the user
gave), errors that end a run with a message for the user instead of a
traceback, and the one way a field path is written (docs/errors.md).

A SpecError holds Problems (a field path and what is wrong). It renders one
clean line per problem, `FILE:LINE:COLUMN: PATH: MESSAGE`: the position is
looked up in the file only when there is something to report (loading a good
spec costs nothing for it); list items that have a unique `name` are shown by
it (`workloads['tgi-gemma']`); control characters are escaped, long values
cut, and credentials of a published format never repeated."""
from __future__ import annotations

import difflib
import json
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

# Longest value a message quotes, and longest message, in characters (an ellipsis ends a cut).
MAX_VALUE = 80
MAX_MESSAGE = 600
MAX_PLACE = 400     # a file name, a field path
# At most this many valid names are listed after an unknown one.
MAX_CHOICES = 8


@dataclass(frozen=True, order=True)
class Problem:
    """The one problem type: something wrong in what the user gave, wherever it was found
    (a spec field, a plan scenario, a manifest `validate` reads, a change `diff` compares).
    Every reader fills what it knows; the rest keeps its default."""
    path: str      # field path (format_path), e.g. profiles.l4-standard.nodePool.nodes
    message: str   # what is wrong and what is allowed
    # 1-based position in the file when the problem's reader knows it (a YAML syntax error);
    # otherwise SpecError finds it from the path.
    line: int | None = None
    column: int | None = None
    source: str = ""               # the file or stream it is in, when a report names it per problem
    rule: str = ""                 # the check's id (KQ001, CE001), when a report names it
    severity: str | None = None    # error | warning | info; None: the rule's own
    # The Kubernetes object it is about (validate), "" when none or not known.
    kind: str = ""
    namespace: str = ""
    name: str = ""
    hint: str | None = None        # what would be right, when not in the message; None: the rule's own
    missing: str | None = None     # the absent object it is about ("LocalQueue 'lq' in namespace 'team'")
    document: int = -1             # the document's index in its input stream; -1: before any document
    expression: str = ""           # the CEL rule that found it (a CRD's x-kubernetes-validations)
    # The path as keys and indexes (to read the value there), and the object it was found
    # on (validate's Obj): for the checks on the way to a report, never compared or printed.
    parts: tuple = field(default=(), compare=False)
    obj: Any = field(default=None, compare=False, repr=False)

    @property
    def object(self) -> str:
        """KIND/NAMESPACE/NAME of the object it is about, the empty parts left out."""
        return "/".join(p for p in (self.kind, self.namespace, self.name) if p)

    def report_line(self) -> str:
        """The line `validate` prints: SOURCE: KIND/NAMESPACE/NAME: PATH: RULE SEVERITY: MESSAGE (hint: HINT)."""
        where = "".join(f"{part}: " for part in (self.object, self.path) if part)
        hint = f" (hint: {self.hint})" if self.hint else ""
        # One line whatever the input held: a name or file name with a newline or a terminal
        # escape is printed escaped (nothing is cut: the line is what it was for any other input).
        at = f":{self.line}:{self.column}" if self.line is not None and self.column is not None else ""
        return clean(f"{self.source}{at}: {where}{self.rule} {self.severity}: {self.message}{hint}", sys.maxsize,
                     False)


class Named(str):
    """A list item picked by its `name`: written ['name'] in a path."""


_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def format_path(parts, start: str = "") -> str:
    """The one field path writer (spec errors, validate findings, plan scenarios): dots for
    plain keys, ["..."] for keys with dots, slashes or spaces, [i] for list items, ['name']
    for a list item named by its `name`. ('workloads', Named('tgi'), 'pod', 'nodeSelector',
    'cloud.google.com/gke-nodepool') -> workloads['tgi'].pod.nodeSelector["cloud.google.com/gke-nodepool"].
    A string is a path already written; `start` is one the parts extend."""
    if isinstance(parts, str):
        return parts
    out = start
    for part in parts:
        if isinstance(part, bool) or not isinstance(part, (int, str)):
            part = str(part)
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, Named):
            out += f"[{str(part)!r}]"
        elif _PLAIN_KEY.match(part):
            out += ("." if out else "") + part
        else:
            out += f"[{json.dumps(part)}]"
    return out


def problem(path, message: str, **known: Any) -> Problem:
    """A Problem at `path` (keys and indexes, or a path already written); `known`: the
    other fields its finder fills (rule, severity, obj...)."""
    parts = () if isinstance(path, str) else tuple(path)
    return Problem(format_path(path), message, parts=parts, **known)


# ---------------------------------------------------------------- hints

def unknown(kind: str, value: Any, choices: Iterable[str], listed: str = "known") -> str:
    """'unknown machine type 'g2-standard-25'; did you mean 'g2-standard-24'?': the nearest
    known name when one is close, all of them when there are few, never the value itself."""
    return f"unknown {kind} {show(value)}" + hint(value, choices, listed)


def hint(value: Any, choices: Iterable[str], listed: str = "known", none: str = "none is declared") -> str:
    """What to append to a message about a name that is not among `choices`: the nearest one
    when one is close, all when there are at most MAX_CHOICES, a count and a few otherwise."""
    names = sorted({str(c) for c in choices} - {str(value)})
    out = ""
    near = nearest(str(value), names)
    if near:
        out += f"; did you mean {near!r}?"
    if not names:
        out += f" ({none})"
    elif len(names) <= MAX_CHOICES:
        out += f" ({listed}: {', '.join(names)})"
    elif not near:
        out += f" ({len(names)} are {listed}, e.g. {', '.join(names[:3])})"
    return out


def nearest(value: str, names: list[str]) -> str | None:
    """The known name closest to value (difflib's ratio, at least 0.6); ties go to the longest
    common prefix, then to the nearest number at the end (g2-standard-25 -> g2-standard-24)."""
    matcher = difflib.SequenceMatcher(b=value)

    def score(name: str) -> tuple:
        matcher.set_seq1(name)
        prefix = len(os.path.commonprefix([name, value]))
        a, b = _TRAILING_NUMBER.search(name), _TRAILING_NUMBER.search(value)
        distance = abs(int(a.group()) - int(b.group())) if a and b else 0
        return round(matcher.ratio(), 6), prefix, -distance

    scored = [(score(n), n) for n in names]
    good = [(s, n) for s, n in scored if s[0] >= 0.6]
    return max(good)[1] if good else None


_TRAILING_NUMBER = re.compile(r"\d+$")


# ---------------------------------------------------------------- one clean line

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# A run of text without spaces this long is a value no `show` cut (a file's path is shorter).
MAX_WORD = 200
# Characters past a cut that are still searched for a credential starting before it (every
# format's pattern matches a token's first few hundred characters; a key block runs to the end).
REDACT_MARGIN = 4096
_LONG_WORD = re.compile(r"\S{" + str(MAX_WORD + 1) + ",}")


def show(value: Any) -> str:
    """A value as a message quotes it: repr, cut to MAX_VALUE characters."""
    from .credentials import redact
    # Redacted before the cut (a cut token would no longer match its format), on what is shown
    # and a margin past it for a token that starts within: never the whole of a 9 MB value.
    text = redact(repr(value)[:MAX_VALUE + REDACT_MARGIN])
    return text if len(text) <= MAX_VALUE else text[:MAX_VALUE - 1] + "…"


def _escaped(control: re.Match) -> str:
    """A control character as Python writes it in a string: \\n, \\x1b, \\u2028."""
    c = control.group()
    return _ESCAPES.get(c, f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}")


def has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


_CONTROL_IN_REPORT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def printable(report: str) -> str:
    """A whole report (plan's, diff's) as a terminal or a pull-request comment shows it: its own
    lines and tabs kept, any other control character from the input escaped, so a name holding a
    terminal escape or a newline cannot rewrite what is shown; a credential of a published format
    (a scenario title, a hand-written manifest) replaced, as in every message."""
    from .credentials import redact
    report = redact(report)
    return _CONTROL_IN_REPORT.sub(_escaped, report)


def clean(text: str, limit: int = MAX_MESSAGE, cut_words: bool = True) -> str:
    """One line: control characters escaped, credentials replaced, long values cut (values a
    message quotes through `show` are cut at MAX_VALUE already; any other run of more than
    MAX_WORD characters without a space is cut here), the whole at `limit`."""
    from .credentials import redact
    text = _CONTROL.sub(_escaped, redact(text))
    if cut_words:
        text = _LONG_WORD.sub(lambda m: m.group()[:MAX_VALUE - 1] + "…", text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ---------------------------------------------------------------- the error

class SpecError(Exception):
    """The spec (or another file of the user's) is invalid. Exit code 2; nothing is written.
    `raw`: the document as read, for naming list items when `source` is not a file."""

    def __init__(self, source: str, problems: list[Problem], raw: Any = None):
        self.source = source
        self.problems = sorted(set(problems))
        self._raw = raw
        self._rendered: str | None = None
        super().__init__(source)

    def __str__(self) -> str:
        return self.render()

    def render(self) -> str:
        """The lines, positions looked up in the file now (once: the file is read only when asked)."""
        if self._rendered is None:
            self._rendered = self._render()
        return self._rendered

    def _render(self) -> str:
        from . import yamlio
        # The file is composed again only when a problem needs a position looked up (never for
        # a file refused by its size: that would be the work the refusal saves).
        wanted = any(p.path and p.line is None for p in self.problems)
        root = yamlio.document_nodes(self.source, self._raw) if wanted else None
        lines = []
        for p in self.problems:
            path, mark = yamlio.locate(root, p.path) if root is not None and p.path else (p.path, None)
            line, column = (p.line, p.column) if p.line is not None else mark or (None, None)
            where = f"{self.source}:{line}:{column}" if line is not None else str(self.source)
            lines.append(((line is None, line or 0, column or 0, path, p.message),
                          f"{clean(where, MAX_PLACE, False)}: {clean(path or '<root>', MAX_PLACE, False)}: "
                          f"{clean(p.message)}"))
        return "\n".join(text for _, text in sorted(lines))

