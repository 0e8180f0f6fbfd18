"""Request parsing and validation for the T5 translation handler.

Pure Python (no torch, no transformers) so it can be unit-tested on its own and
imported by ``handler.py`` inside the TorchServe worker (the model archive puts
this file next to the handler, and TorchServe adds the model directory to
``sys.path``).

Request body, per HTTP request::

    {"text": "...", "from": "en", "to": "fr"}            # one item
    [{"text": ..., "from": ..., "to": ...}, ...]          # several items

Response body, per HTTP request: a JSON list with one entry per input item, in
order.  An entry is ``{"text": "<translation>"}`` or
``{"error": "<message>", "code": <int>}``.  A request that cannot be parsed at
all answers a one-entry list holding the error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# Languages in T5's supervised pre-training mixture (WMT en-de, en-fr, en-ro).
LANGUAGES: dict[str, str] = {
    "en": "English",
    "fr": "French",
    "de": "German",
    "ro": "Romanian",
}

# T5 was only trained to translate *from* English, so only these pairs work.
SUPPORTED_PAIRS: tuple[tuple[str, str], ...] = (("en", "fr"), ("en", "de"), ("en", "ro"))

# Full names are accepted as well as ISO 639-1 codes, case-insensitively.
_ALIASES: dict[str, str] = {name.lower(): code for code, name in LANGUAGES.items()}

DEFAULT_LIMITS = {
    "max_text_chars": 5000,
    "max_items_per_request": 32,
}

BAD_REQUEST = 400
SERVER_ERROR = 500


class RequestError(ValueError):
    """A problem with one request or one item; becomes an error entry."""

    def __init__(self, message: str, code: int = BAD_REQUEST):
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass(frozen=True)
class TranslationItem:
    text: str
    source: str
    target: str

    @property
    def prompt(self) -> str:
        return build_prompt(self.text, self.source, self.target)


Slot = TranslationItem | dict[str, Any]


@dataclass
class ParsedRequest:
    """One HTTP request: its items (valid ones or error entries) and results."""

    slots: list[Slot] = field(default_factory=list)
    results: list[dict[str, Any] | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.results:
            self.results = [s if isinstance(s, dict) else None for s in self.slots]

    def pending(self) -> list[tuple[int, TranslationItem]]:
        return [
            (i, s)
            for i, s in enumerate(self.slots)
            if isinstance(s, TranslationItem) and self.results[i] is None
        ]

    def response(self) -> list[dict[str, Any]]:
        out = []
        for r in self.results:
            out.append(r if r is not None else error_entry("no result produced", SERVER_ERROR))
        return out

    def status(self) -> int:
        """200 if any item succeeded, otherwise the first error's code."""
        entries = self.response()
        if any("text" in e for e in entries):
            return 200
        for e in entries:
            if "code" in e:
                return int(e["code"])
        return 200


def error_entry(message: str, code: int = BAD_REQUEST) -> dict[str, Any]:
    return {"error": message, "code": int(code)}


def supported_pairs_text() -> str:
    return ", ".join(f"{s}->{t}" for s, t in SUPPORTED_PAIRS)


def normalize_language(value: Any, field_name: str) -> str:
    if not isinstance(value, str):
        raise RequestError(
            f"field '{field_name}' must be a string language code "
            f"({', '.join(LANGUAGES)}), got {type(value).__name__}"
        )
    key = value.strip().lower()
    if not key:
        raise RequestError(f"field '{field_name}' must not be empty")
    key = _ALIASES.get(key, key)
    if key not in LANGUAGES:
        raise RequestError(
            f"unsupported language '{value}' in field '{field_name}'; "
            f"supported pairs: {supported_pairs_text()}"
        )
    return key


def build_prompt(text: str, source: str, target: str) -> str:
    """T5 task prefix, e.g. 'translate English to French: <text>'."""
    return f"translate {LANGUAGES[source]} to {LANGUAGES[target]}: {text}"


def validate_item(item: Any, max_text_chars: int = DEFAULT_LIMITS["max_text_chars"]) -> TranslationItem:
    if not isinstance(item, dict):
        raise RequestError(
            'each item must be a JSON object like {"text": "...", "from": "en", "to": "fr"}, '
            f"got {type(item).__name__}"
        )
    missing = [k for k in ("text", "from", "to") if k not in item]
    if missing:
        raise RequestError("missing required field(s): " + ", ".join(f"'{k}'" for k in missing))
    text = item["text"]
    if not isinstance(text, str):
        raise RequestError(f"field 'text' must be a string, got {type(text).__name__}")
    text = text.strip()
    if not text:
        raise RequestError("field 'text' must not be empty")
    if len(text) > max_text_chars:
        raise RequestError(f"field 'text' is too long: {len(text)} characters, limit is {max_text_chars}")
    source = normalize_language(item["from"], "from")
    target = normalize_language(item["to"], "to")
    if (source, target) not in SUPPORTED_PAIRS:
        raise RequestError(
            f"unsupported language pair {source}->{target}; supported pairs: {supported_pairs_text()}"
        )
    return TranslationItem(text=text, source=source, target=target)


def decode_body(request: Any) -> Any:
    """Return the JSON payload of one TorchServe request.

    TorchServe hands the handler a dict per request with the payload under
    "data" or "body": already decoded (dict/list) for application/json, a str
    for text/*, bytes/bytearray otherwise.
    """
    if isinstance(request, dict):
        body = request.get("data")
        if body is None:
            body = request.get("body")
    else:
        body = request
    if body is None:
        raise RequestError("request body is empty; expected JSON like " '{"text": "...", "from": "en", "to": "fr"}')
    if isinstance(body, (bytes, bytearray)):
        try:
            body = bytes(body).decode("utf-8")
        except UnicodeDecodeError:
            raise RequestError("request body is not valid UTF-8") from None
    if isinstance(body, str):
        if not body.strip():
            raise RequestError("request body is empty; expected JSON like " '{"text": "...", "from": "en", "to": "fr"}')
        try:
            body = json.loads(body)
        except ValueError as exc:
            raise RequestError(f"request body is not valid JSON: {exc}") from None
    return body


def parse_request(request: Any, limits: dict[str, int] | None = None) -> ParsedRequest:
    """Parse one TorchServe request into a ParsedRequest; never raises."""
    lim = dict(DEFAULT_LIMITS)
    if limits:
        lim.update({k: v for k, v in limits.items() if k in lim})
    try:
        payload = decode_body(request)
        if isinstance(payload, dict):
            items = [payload]
        elif isinstance(payload, list):
            if not payload:
                raise RequestError("request body is an empty list; send at least one item")
            if len(payload) > lim["max_items_per_request"]:
                raise RequestError(
                    f"too many items in one request: {len(payload)}, limit is {lim['max_items_per_request']}"
                )
            items = payload
        else:
            raise RequestError(
                "request body must be a JSON object or a list of objects, " f"got {type(payload).__name__}"
            )
    except RequestError as exc:
        return ParsedRequest(slots=[error_entry(exc.message, exc.code)])
    except Exception as exc:  # pragma: no cover - defensive: never kill the worker
        return ParsedRequest(slots=[error_entry(f"could not parse request: {exc}", BAD_REQUEST)])

    slots: list[Slot] = []
    for item in items:
        try:
            slots.append(validate_item(item, lim["max_text_chars"]))
        except RequestError as exc:
            slots.append(error_entry(exc.message, exc.code))
    return ParsedRequest(slots=slots)
