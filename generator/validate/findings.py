"""What the validator reports: one Finding per problem, printed one per line
or as JSON. Paths are written the way kubectl explain and jq read them:
dots for plain keys, ["..."] for keys with dots or slashes, [i] for items."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from ..kernel.errors import format_path  # noqa: F401  the one path writer (rules and cel import it from here)

ERROR, WARNING, INFO = "error", "warning", "info"
SEVERITIES = (ERROR, WARNING, INFO)


@dataclass(frozen=True)
class Finding:
    source: str       # overlay directory, file, or <stdin>
    rule: str         # e.g. KQ001
    severity: str     # error | warning | info
    kind: str         # object kind, or "-" when the document is not an object
    namespace: str    # "" when cluster-scoped or unset
    name: str
    path: str         # field path inside the object ("" for the whole object)
    message: str
    hint: str

    @property
    def object(self) -> str:
        return "/".join(p for p in (self.kind, self.namespace, self.name) if p)

    def line(self) -> str:
        where = "".join(f"{part}: " for part in (self.object, self.path) if part)
        hint = f" (hint: {self.hint})" if self.hint else ""
        return f"{self.source}: {where}{self.rule} {self.severity}: {self.message}{hint}"


def render_text(findings: list[Finding], summary: dict) -> str:
    lines = [f.line() for f in findings]
    extra = "".join(f", {summary[k]} {k}" for k in ("notes", "ignored") if summary.get(k))
    groups = f", {summary['groups']} MultiKueue group(s)" if summary.get("groups") else ""
    lines.append(f"validate: {summary['sources']} source(s), {summary['objects']} object(s){groups}: "
                 f"{summary['errors']} error(s), {summary['warnings']} warning(s){extra}")
    return "\n".join(lines) + "\n"


def render_usage_error(message: str, fmt: str) -> str:
    """What an exit-2 run prints on stdout: nothing as text (the message goes to stderr),
    a JSON document naming the error with --format json, so CI always parses stdout."""
    if fmt != "json":
        return ""
    return json.dumps({"error": message, "summary": None, "sources": [], "findings": []},
                      indent=2, sort_keys=True) + "\n"


def render_json(findings: list[Finding], summary: dict, sources: list[dict], groups: list[dict] | None = None) -> str:
    doc = {"summary": summary, "sources": sources, "findings": [asdict(f) for f in findings]}
    if groups:
        doc["groups"] = groups   # MultiKueue groups: {"manager": source, "workers": [source, ...]}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
