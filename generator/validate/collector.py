"""Turns the problems schema checks and rules find into findings (the same Problems with
their rule, severity, object and hint filled): severities from the rule
selection, inline ignores applied, placeholders (templated values) reported once per
document instead of as false findings."""
from __future__ import annotations

import dataclasses

from ..kernel.errors import Problem, format_path
from .findings import INFO


def _value_at(body, path):
    for part in path:
        try:
            body = body[part]
        except (KeyError, IndexError, TypeError):
            return None
    return body


# Rules whose findings add up a pod template's requests and counts (TPU slices, quota fit,
# covered resources): a placeholder anywhere in the pod spec may be what they trip on.
_FROM_POD_SPEC = ("TP", "KQ007", "KQ009")


class Collector:
    """Turns problems into findings: world (open: absent objects are notes), placeholders
    (templated values are not checked, one IN004 note per document), inline ignores,
    rule selection and severities."""

    def __init__(self, stream_name: str, closed: bool, selection):
        self.stream_name, self.closed, self.selection = stream_name, closed, selection
        self.keyed: list = []        # (document index, rule, path, finding)
        self.templated: dict = {}    # document index -> (object, placeholders)
        self.ignored: list = []      # (finding, reason)
        self.paths_of: dict = {}     # id(object) -> placeholder paths in it

    def finding(self, rule_id, source, obj, path, message, severity, hint) -> Problem:
        from .rules import RULES
        rule = RULES[rule_id]
        severity = self.selection.severity(rule_id, severity or rule.severity)
        return Problem(format_path(path), message, source=source or self.stream_name, rule=rule_id, severity=severity,
                       kind=obj.kind if obj else "", namespace=obj.namespace if obj else "",
                       name=obj.name if obj else "", hint=hint if hint is not None else rule.hint,
                       document=obj.index if obj else -1)

    def add(self, rule_id, found: Problem):
        from .loader import placeholders
        if not self.selection.on(rule_id):
            return
        o = found.obj
        held = placeholders(_value_at(o.body, found.parts)) if o is not None else []
        if not held and o is not None and not rule_id.startswith(("SC", "IN")):
            held = self._related_placeholders(rule_id, o, found.parts, found.message)
        if held:
            self.templated.setdefault(o.index, (o, set()))[1].update(held)
            return
        severity, message = found.severity, found.message
        if found.missing and not self.closed:
            severity = INFO
            message = f"{found.missing} is not in the input; checked against nothing (--context names where it is)"
        f = self.finding(rule_id, o.source if o else "", o, found.path, message, severity, found.hint)
        if o is not None and rule_id in o.ignores and o.ignores[rule_id]:
            self.ignored.append((f, o.ignores[rule_id]))
            return
        self.keyed.append((o.index if o else -1, rule_id, found.parts, f))

    def _related_placeholders(self, rule_id: str, o, path: tuple, message: str) -> list[str]:
        """Placeholders a finding may stem from though its own field holds none: one beneath
        the field, one its message quotes (a name built from the object's name), or one
        anywhere in the spec of the pod template the finding is about (a `<number_of_chips>`
        request makes the slice's chips come out wrong elsewhere)."""
        from .loader import placeholder_paths
        key = id(o)
        if key not in self.paths_of:
            self.paths_of[key] = placeholder_paths(o.body)
        found = self.paths_of[key]
        if not found:
            return []
        held = [h for p, hs in found if p[:len(path)] == path or any(h in message for h in hs) for h in hs]
        if not rule_id.startswith(_FROM_POD_SPEC):
            return held
        for ps in o.podsets:
            if path[:len(ps.path)] == ps.path:
                spec = ps.path + ("spec",)
                held += [h for p, hs in found if p[:len(spec)] == spec for h in hs]
        return held

    def add_problem(self, p: Problem):
        """A problem of the input itself (IN001, IN002...), found before there are objects."""
        if not self.selection.on(p.rule):
            return
        # No object yet: the place in the file ("line 4, column 2", "document 3") stands in its name.
        f = self.finding(p.rule, p.source, None, (), p.message, p.severity, None)
        f = dataclasses.replace(f, name=p.path)
        self.keyed.append((p.document, p.rule, (), f))

    def internal(self, obj, what: str, error: BaseException):
        f = self.finding("IE001", obj.source if obj else "", obj, (), f"{what} failed: {type(error).__name__}: "
                         f"{str(error)[:200]}", None, None)
        self.keyed.append((obj.index if obj else -1, "IE001", (), f))

    def findings(self) -> list[Problem]:
        for o, held in self.templated.values():
            shown = sorted(held)[:5]
            more = f" and {len(held) - len(shown)} more" if len(held) > len(shown) else ""
            text = f"templated: {', '.join(shown)}{more}; values holding them are not checked"
            if self.selection.on("IN004"):
                self.keyed.append((o.index, "IN004", (), self.finding("IN004", o.source, o, (), text, None, None)))
        self.keyed.sort(key=lambda k: (k[0], k[1], [str(p) for p in k[2]], k[3].message))
        return [k[3] for k in self.keyed]
