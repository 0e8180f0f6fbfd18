"""What the validator reports: one finding (an errors.Problem with its rule, severity,
object and hint filled) per problem, printed one per line or as JSON. Paths are
written by errors.format_path, the way kubectl explain and jq read them: dots for
plain keys, ["..."] for keys with dots or slashes, [i] for items."""
from __future__ import annotations

import json

from ..kernel.errors import (
    Problem,
    format_path,  # noqa: F401  the one path writer (rules and cel import it from here)
)

ERROR, WARNING, INFO = "error", "warning", "info"
SEVERITIES = (ERROR, WARNING, INFO)


# The fields of a finding, as --format json writes them (a Problem's others stay inside).
# line and column: of the field, in a file given as such (null for kustomize builds and stdin).
REPORTED = ("source", "line", "column", "rule", "severity", "kind", "namespace", "name", "path", "message", "hint")


def render_text(findings: list[Problem], summary: dict) -> str:
    lines = [f.report_line() for f in findings]
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


def render_json(findings: list[Problem], summary: dict, sources: list[dict], groups: list[dict] | None = None) -> str:
    doc = {"summary": summary, "sources": sources, "findings": [{k: getattr(f, k) for k in REPORTED} for f in findings]}
    if groups:
        doc["groups"] = groups   # MultiKueue groups: {"manager": source, "workers": [source, ...]}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
