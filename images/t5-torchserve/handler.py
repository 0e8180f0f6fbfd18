"""TorchServe custom handler: English -> French / German / Romanian with T5.

Served as model ``t5-small`` version ``1.0`` (POST /predictions/t5-small/1.0).
Request/response format and error handling: see README.md and t5_translation.py.

The archive holds the Hugging Face ``save_pretrained`` output of the model and
tokenizer at its root, plus ``setup_config.json`` (``save_mode: pretrained``
and generation settings) and ``t5_translation.py`` (pure request parsing).
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

import torch
from ts.torch_handler.base_handler import BaseHandler

try:  # the archive puts t5_translation.py next to this file, on sys.path
    from t5_translation import SERVER_ERROR, ParsedRequest, error_entry, parse_request
except ImportError:  # pragma: no cover - imported as part of a package
    from .t5_translation import (  # type: ignore[import-not-found, no-redef]  # the same names
        SERVER_ERROR,
        ParsedRequest,
        error_entry,
        parse_request,
    )

logger = logging.getLogger(__name__)

DEFAULT_SETUP = {
    "save_mode": "pretrained",
    "max_input_tokens": 512,
    "max_new_tokens": 256,
    "num_beams": 4,
    "early_stopping": True,
    "max_text_chars": 5000,
    "max_items_per_request": 32,
    "max_generation_batch": 16,
}

_REASONS = {200: "OK", 400: "Bad Request", 413: "Payload Too Large", 500: "Internal Server Error"}


def load_setup_config(model_dir: str) -> dict[str, Any]:
    """Read setup_config.json from the model directory, over the defaults."""
    setup = dict(DEFAULT_SETUP)
    path = os.path.join(model_dir, "setup_config.json")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            setup.update(json.load(f))
    else:
        logger.warning("setup_config.json not found in %s, using defaults", model_dir)
    if setup.get("save_mode") != "pretrained":
        raise ValueError(
            f"setup_config.json save_mode must be 'pretrained', got {setup.get('save_mode')!r}"
        )
    return setup


class T5TranslationHandler(BaseHandler):
    """Batched T5 translation; bad input becomes a per-request error entry."""

    def __init__(self):
        super().__init__()
        self.tokenizer: Any = None  # a transformers tokenizer, from initialize()
        self.setup: dict[str, Any] = dict(DEFAULT_SETUP)

    # ---------------------------------------------------------------- loading
    def initialize(self, context):
        from transformers import AutoTokenizer, T5ForConditionalGeneration

        self.context = context
        self.manifest = getattr(context, "manifest", None)
        properties = context.system_properties
        model_dir = properties.get("model_dir")
        self.setup = load_setup_config(model_dir)

        gpu_id = properties.get("gpu_id")
        if torch.cuda.is_available() and gpu_id is not None:
            self.map_location = "cuda"
            self.device = torch.device(f"cuda:{gpu_id}")
        else:
            self.map_location = "cpu"
            self.device = torch.device("cpu")

        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = T5ForConditionalGeneration.from_pretrained(model_dir)
        self.model.to(self.device)
        self.model.eval()
        self.initialized = True
        logger.info("T5 translation model loaded from %s on %s", model_dir, self.device)

    # ------------------------------------------------------------- pipeline
    def preprocess(self, data) -> list[ParsedRequest]:
        limits = {
            "max_text_chars": int(self.setup["max_text_chars"]),
            "max_items_per_request": int(self.setup["max_items_per_request"]),
        }
        requests = [parse_request(req, limits) for req in (data or [])]
        self._reject_overlong(requests)
        return requests

    def _reject_overlong(self, requests: list[ParsedRequest]) -> None:
        """Items whose prompt exceeds max_input_tokens get a 400 (no silent truncation)."""
        limit = int(self.setup["max_input_tokens"])
        for req in requests:
            for idx, item in req.pending():
                try:
                    n = len(self.tokenizer(item.prompt)["input_ids"])
                except Exception as exc:  # tokenizer failure is that item's problem
                    req.results[idx] = error_entry(f"could not tokenize text: {exc}")
                    continue
                if n > limit:
                    req.results[idx] = error_entry(
                        f"text is too long: {n} tokens with the task prefix, limit is {limit}"
                    )

    def inference(self, requests: list[ParsedRequest], *args, **kwargs) -> list[ParsedRequest]:
        work = [(req, idx, item) for req in requests for idx, item in req.pending()]
        chunk = max(1, int(self.setup["max_generation_batch"]))
        for start in range(0, len(work), chunk):
            part = work[start : start + chunk]
            try:
                texts = self._translate([item.prompt for _, _, item in part])
            except Exception as exc:  # never crash the worker; fail these items
                logger.exception("translation failed for %d item(s)", len(part))
                if self.device is not None and self.device.type == "cuda":
                    torch.cuda.empty_cache()
                for req, idx, _ in part:
                    req.results[idx] = error_entry(f"translation failed: {exc}", SERVER_ERROR)
                continue
            for (req, idx, _), text in zip(part, texts, strict=True):
                req.results[idx] = {"text": text}
        return requests

    def _translate(self, prompts: list[str]) -> list[str]:
        enc = self.tokenizer(
            prompts,
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=int(self.setup["max_input_tokens"]),
        )
        gen_kwargs = {
            "max_new_tokens": int(self.setup["max_new_tokens"]),
            "num_beams": int(self.setup["num_beams"]),
        }
        if gen_kwargs["num_beams"] > 1:
            gen_kwargs["early_stopping"] = bool(self.setup["early_stopping"])
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=enc["input_ids"].to(self.device),
                attention_mask=enc["attention_mask"].to(self.device),
                **gen_kwargs,
            )
        return [t.strip() for t in self.tokenizer.batch_decode(out, skip_special_tokens=True)]

    def postprocess(self, requests: list[ParsedRequest]) -> list[list[dict[str, Any]]]:
        return [req.response() for req in requests]

    def handle(self, data, context):
        """Run the pipeline; each request gets its own list and HTTP status."""
        start = time.time()
        self.context = context
        data = data or []
        try:
            requests = self.preprocess(data)
            requests = self.inference(requests)
            output = self.postprocess(requests)
            statuses = [req.status() for req in requests]
        except Exception as exc:  # defensive: answer every request, keep the worker
            logger.exception("T5 handler failed")
            output = [[error_entry(f"internal error: {exc}", SERVER_ERROR)] for _ in data]
            statuses = [SERVER_ERROR for _ in data]

        for idx, status in enumerate(statuses):
            _set_response(context, idx, status)
        metrics = getattr(context, "metrics", None)
        if metrics is not None:
            try:
                metrics.add_time("HandlerTime", round((time.time() - start) * 1000, 2), None, "ms")
            except Exception:  # metrics must never fail a request
                logger.debug("could not record HandlerTime", exc_info=True)
        return output


def _set_response(context, idx: int, status: int) -> None:
    """Per-request status and content type, when the context supports it."""
    try:
        if getattr(context, "request_processor", None) is None:
            return
        context.set_response_status(status, _REASONS.get(status, "Error"), idx)
        context.set_response_content_type(idx, "application/json")
    except Exception:
        logger.debug("could not set response status for request %d", idx, exc_info=True)

