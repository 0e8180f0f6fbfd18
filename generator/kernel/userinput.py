"""Reading the files users write (the spec, plan scenarios): YAML that must be
a mapping, and JSON Schema errors turned into path-precise problems."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import yamlio
from .errors import Problem, SpecError, format_path, hint, show

if TYPE_CHECKING:   # jsonschema is imported where it is used: loading the spec needs none of it
    import jsonschema


def load_mapping(path: str | Path, what: str) -> dict:
    """The YAML mapping in `path`; any failure is a SpecError naming the file
    (read through yamlio's bounded reader: size, encoding, depth, aliases)."""
    source = str(path)
    try:
        text = yamlio.read_text(path)
    except OSError as e:
        raise SpecError(source, [Problem("", f"cannot read the {what}: {e.strerror or e}")]) from None
    except yamlio.InputError as e:
        raise SpecError(source, [_input_problem(e)]) from None
    try:
        raw = yamlio.load_user(text)
    except yamlio.InputError as e:
        raise SpecError(source, [_input_problem(e)]) from None
    if not isinstance(raw, dict):
        raise SpecError(source, [Problem("", f"the {what} must be a YAML mapping")])
    return raw


def _input_problem(e: yamlio.InputError) -> Problem:
    """A file that is not YAML within the limits: FILE:LINE:COLUMN: <root>: what is wrong."""
    return Problem("", e.message, e.line, e.column)


def load_objects(path: str | Path, what: str) -> list[dict]:
    """The Kubernetes objects of a user's manifest file (one or more YAML documents, each a
    mapping), through the same bounded reader; any failure is a SpecError naming the file."""
    source = str(path)
    try:
        docs = yamlio.load_user_all(yamlio.read_text(path))
    except OSError as e:
        raise SpecError(source, [Problem("", f"cannot read the {what}: {e.strerror or e}")]) from None
    except yamlio.InputError as e:
        raise SpecError(source, [_input_problem(e)]) from None
    bad = [Problem(f"document {i + 1}", f"a {what} holds Kubernetes objects (YAML mappings)")
           for i, d in enumerate(docs) if not isinstance(d, dict)]
    if bad or not docs:
        raise SpecError(source, bad or [Problem("", f"the {what} holds no object")])
    return docs


def _schema(err: jsonschema.ValidationError) -> Mapping[str, Any]:
    """The (sub)schema that failed: a mapping in the spec's schema (JSON Schema also allows true/false)."""
    return err.schema if isinstance(err.schema, Mapping) else {}


def schema_problem(err: jsonschema.ValidationError) -> Problem:
    """One problem per schema error, worded for the user: the field path, what
    is wrong and, where the schema knows it, what is allowed."""
    import jsonschema

    if err.validator == "oneOf" and _schema(err).get("description"):
        got = f" (got {err.instance!r})" if not isinstance(err.instance, (dict, list)) else ""
        return Problem(format_path(list(err.absolute_path)), _schema(err)["description"] + got)
    # For if/then failures the most specific sub-error is the useful one.
    best = jsonschema.exceptions.best_match([err]) if err.context else err
    msg = best.message
    if best.validator in ("additionalProperties", "unevaluatedProperties"):
        allowed = sorted(_schema(best).get("properties", {}))
        if allowed:
            msg += f" (allowed: {', '.join(allowed)})"
    elif best.validator == "enum":
        msg = f"{show(best.instance)} is not allowed" + hint(best.instance, map(str, _schema(best)["enum"]), "allowed")
    elif best.validator == "pattern":
        msg = f"{best.instance!r} does not match the required format {best.validator_value}"
    return Problem(format_path(list(best.absolute_path)), msg)
