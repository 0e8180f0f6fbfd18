"""CPU tests for images/t5-torchserve: request parsing and the TorchServe handler.

The handler runs in-process against a tiny T5 (d_model 32, 2 layers, random
weights) and a real T5Tokenizer whose unigram vocabulary comes from a
sentencepiece model trained on a few sentences in the test: nothing is
downloaded (HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

IMAGE_DIR = Path(__file__).resolve().parents[2] / "images" / "t5-torchserve"
if str(IMAGE_DIR) not in sys.path:
    sys.path.insert(0, str(IMAGE_DIR))

import t5_translation as tt  # noqa: E402  (pure module, no torch)
from tests.images.tiny_t5 import build_tiny_t5  # noqa: E402

# Settings for the tiny model: short generations keep the tests fast.
FAST_SETUP = {"max_new_tokens": 8, "num_beams": 1}



def _load_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_setup_config(model_dir: Path, **overrides) -> None:
    setup = json.loads((IMAGE_DIR / "setup_config.json").read_text())
    setup.update(overrides)
    (model_dir / "setup_config.json").write_text(json.dumps(setup))


class FakeContext:
    """What the handler reads from TorchServe's Context, nothing more."""

    def __init__(self, model_dir, gpu_id=None):
        self.system_properties = {"model_dir": str(model_dir), "gpu_id": gpu_id, "batch_size": 8}
        self.manifest = {"model": {"modelName": "t5-small", "modelVersion": "1.0", "handler": "handler.py"}}
        self.metrics = None
        self.request_processor = None


def ts_context(model_dir, n_requests):
    """A real ts.context.Context with per-request processors, as the worker builds it."""
    from ts.context import Context, RequestProcessor

    ctx = Context("t5-small", str(model_dir), {"model": {"modelName": "t5-small"}}, 8, None, "0.12.0")
    ctx.request_processor = [RequestProcessor({}) for _ in range(n_requests)]
    return ctx


def req(payload, key="data", encode="bytes"):
    if encode == "bytes":
        return {key: json.dumps(payload).encode("utf-8")}
    if encode == "bytearray":
        return {key: bytearray(json.dumps(payload).encode("utf-8"))}
    if encode == "str":
        return {key: json.dumps(payload)}
    return {key: payload}  # already decoded, as TorchServe does for application/json


GOOD = {"text": "this is a test sentence", "from": "en", "to": "fr"}


@pytest.fixture(scope="module")
def handler_module():
    return _load_module("t5_torchserve_handler", IMAGE_DIR / "handler.py")


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    model_dir = build_tiny_t5(tmp_path_factory.mktemp("t5") / "model")
    write_setup_config(model_dir, **FAST_SETUP)
    return model_dir


@pytest.fixture(scope="module")
def handler(handler_module, tiny_model_dir):
    h = handler_module.T5TranslationHandler()
    h.initialize(FakeContext(tiny_model_dir))
    return h


def assert_success(entries, n):
    assert isinstance(entries, list) and len(entries) == n
    for e in entries:
        assert set(e) == {"text"}, e
        assert isinstance(e["text"], str)


def assert_error(entries, fragment, code=400):
    assert isinstance(entries, list) and len(entries) == 1, entries
    e = entries[0]
    assert set(e) == {"error", "code"}, e
    assert e["code"] == code
    assert fragment in e["error"], e["error"]


# ----------------------------------------------------------- pure parsing


@pytest.mark.parametrize("encode", ["bytes", "bytearray", "str", "decoded"])
@pytest.mark.parametrize("key", ["data", "body"])
def test_decode_body_accepts_every_encoding(encode, key):
    assert tt.decode_body(req(GOOD, key=key, encode=encode)) == GOOD


@pytest.mark.parametrize(
    "pair,prefix",
    [
        (("en", "fr"), "translate English to French: "),
        (("en", "de"), "translate English to German: "),
        (("en", "ro"), "translate English to Romanian: "),
    ],
)
def test_prompt_uses_t5_task_prefix(pair, prefix):
    item = tt.validate_item({"text": "  Hello  ", "from": pair[0], "to": pair[1]})
    assert item.prompt == prefix + "Hello"


def test_language_names_and_case_are_accepted():
    item = tt.validate_item({"text": "hi", "from": "English", "to": " DE "})
    assert (item.source, item.target) == ("en", "de")


def test_supported_pairs_are_english_to_fr_de_ro():
    assert set(tt.SUPPORTED_PAIRS) == {("en", "fr"), ("en", "de"), ("en", "ro")}


BAD_REQUESTS = [
    pytest.param({"data": None}, "request body is empty", id="no-body"),
    pytest.param({"body": b""}, "request body is empty", id="empty-bytes"),
    pytest.param({"body": b"not json at all"}, "not valid JSON", id="non-json"),
    pytest.param({"body": b"\xff\xfe\xfa"}, "not valid UTF-8", id="bad-utf8"),
    pytest.param({"data": "{\"text\": "}, "not valid JSON", id="truncated-json"),
    pytest.param({"data": 42}, "must be a JSON object or a list", id="number-body"),
    pytest.param(req("just a string"), "must be a JSON object or a list", id="json-string"),
    pytest.param(req([]), "empty list", id="empty-list"),
    pytest.param(req([GOOD] * 33), "too many items", id="too-many-items"),
    pytest.param(req({"from": "en", "to": "fr"}), "missing required field(s): 'text'", id="missing-text"),
    pytest.param(req({"text": "hi"}), "'from', 'to'", id="missing-from-to"),
    pytest.param(req({"text": "hi", "from": "en"}), "'to'", id="missing-to"),
    pytest.param(req({"text": "", "from": "en", "to": "fr"}), "'text' must not be empty", id="empty-text"),
    pytest.param(req({"text": "   ", "from": "en", "to": "fr"}), "'text' must not be empty", id="blank-text"),
    pytest.param(req({"text": 5, "from": "en", "to": "fr"}), "'text' must be a string", id="text-int"),
    pytest.param(req({"text": ["a"], "from": "en", "to": "fr"}), "'text' must be a string", id="text-list"),
    pytest.param(req({"text": None, "from": "en", "to": "fr"}), "'text' must be a string", id="text-null"),
    pytest.param(req({"text": "hi", "from": 1, "to": "fr"}), "'from' must be a string", id="from-int"),
    pytest.param(req({"text": "hi", "from": "en", "to": None}), "'to' must be a string", id="to-null"),
    pytest.param(req({"text": "hi", "from": "en", "to": ""}), "'to' must not be empty", id="to-empty"),
    pytest.param(req({"text": "hi", "from": "en", "to": "es"}), "unsupported language 'es'", id="spanish"),
    pytest.param(req({"text": "hi", "from": "fr", "to": "en"}), "unsupported language pair fr->en", id="fr-en"),
    pytest.param(req({"text": "hi", "from": "de", "to": "fr"}), "unsupported language pair de->fr", id="de-fr"),
    pytest.param(req({"text": "hi", "from": "en", "to": "en"}), "unsupported language pair en->en", id="en-en"),
    pytest.param(req({"text": "x" * 5001, "from": "en", "to": "fr"}), "too long", id="text-too-long"),
    pytest.param(req(["not an object"]), "each item must be a JSON object", id="item-not-object"),
]


@pytest.mark.parametrize("request_, fragment", BAD_REQUESTS)
def test_parse_request_turns_bad_input_into_an_error_entry(request_, fragment):
    parsed = tt.parse_request(request_)
    assert_error(parsed.response(), fragment)
    assert parsed.status() == 400
    assert parsed.pending() == []


def test_unsupported_pair_message_lists_supported_pairs():
    parsed = tt.parse_request(req({"text": "hi", "from": "fr", "to": "en"}))
    assert "en->fr, en->de, en->ro" in parsed.response()[0]["error"]


def test_parse_request_keeps_item_order_and_per_item_errors():
    bad = {"text": "hi", "from": "en", "to": "xx"}
    parsed = tt.parse_request(req([GOOD, bad, GOOD]))
    assert [i for i, _ in parsed.pending()] == [0, 2]
    assert parsed.results[1]["code"] == 400


# ------------------------------------------------------------------ handler


def test_initialize_loads_on_cpu(handler):
    assert handler.initialized
    assert handler.device.type == "cpu"
    assert handler.setup["save_mode"] == "pretrained"
    assert handler.setup["max_new_tokens"] == FAST_SETUP["max_new_tokens"]


def test_single_translation(handler):
    out = handler.handle([req(GOOD)], FakeContext("unused"))
    assert len(out) == 1
    assert_success(out[0], 1)


@pytest.mark.parametrize("encode", ["bytes", "bytearray", "str", "decoded"])
def test_body_encodings_through_handle(handler, encode):
    out = handler.handle([req(GOOD, key="body", encode=encode)], FakeContext("unused"))
    assert_success(out[0], 1)


def test_batched_list_in_one_request(handler):
    items = [dict(GOOD, to=t) for t in ("fr", "de", "ro")]
    out = handler.handle([req(items)], FakeContext("unused"))
    assert len(out) == 1
    assert_success(out[0], 3)


def test_batch_of_requests_gets_one_response_each(handler):
    batch = [req(GOOD), req([GOOD, dict(GOOD, to="de")]), req(dict(GOOD, to="ro"), encode="decoded")]
    out = handler.handle(batch, FakeContext("unused"))
    assert len(out) == 3
    assert_success(out[0], 1)
    assert_success(out[1], 2)
    assert_success(out[2], 1)


def test_preprocess_inference_postprocess(handler):
    parsed = handler.preprocess([req(GOOD), {"body": b"nope"}])
    assert len(parsed) == 2
    assert len(parsed[0].pending()) == 1 and parsed[1].pending() == []
    out = handler.postprocess(handler.inference(parsed))
    assert_success(out[0], 1)
    assert_error(out[1], "not valid JSON")


def test_batched_result_equals_single_result(handler):
    """Padding in a batch must not change a translation (greedy decoding)."""
    short = {"text": "hi", "from": "en", "to": "fr"}
    long = {"text": "the house is wonderful and the table is here", "from": "en", "to": "de"}
    alone = handler.handle([req(short)], FakeContext("unused"))[0][0]["text"]
    together = handler.handle([req([short, long])], FakeContext("unused"))[0][0]["text"]
    assert alone == together


@pytest.mark.parametrize("request_, fragment", BAD_REQUESTS)
def test_bad_input_gives_an_error_and_does_not_raise(handler, request_, fragment):
    out = handler.handle([request_], FakeContext("unused"))
    assert len(out) == 1
    assert_error(out[0], fragment)


def test_mixed_batch_one_good_one_bad(handler, tiny_model_dir):
    ctx = ts_context(tiny_model_dir, 2)
    out = handler.handle([req(GOOD), req({"text": "hi", "from": "fr", "to": "en"})], ctx)
    assert len(out) == 2
    assert_success(out[0], 1)
    assert_error(out[1], "unsupported language pair fr->en")
    # per-request HTTP status: the good one stays 200, the bad one is 400
    assert ctx.get_response_status(0) == (200, "OK")
    assert ctx.get_response_status(1) == (400, "Bad Request")
    assert ctx.get_response_content_type(0) == "application/json"


def test_mixed_items_in_one_request(handler, tiny_model_dir):
    ctx = ts_context(tiny_model_dir, 1)
    out = handler.handle([req([GOOD, {"text": 3, "from": "en", "to": "fr"}, dict(GOOD, to="ro")])], ctx)
    entries = out[0]
    assert len(entries) == 3
    assert set(entries[0]) == {"text"} and set(entries[2]) == {"text"}
    assert entries[1]["code"] == 400 and "'text' must be a string" in entries[1]["error"]
    assert ctx.get_response_status(0) == (200, "OK")  # partial success answers 200


def test_overlong_input_is_rejected_not_truncated(handler_module, tiny_model_dir):
    h = handler_module.T5TranslationHandler()
    h.initialize(FakeContext(tiny_model_dir))
    h.setup["max_input_tokens"] = 10
    out = h.handle([req({"text": "the house is wonderful " * 5, "from": "en", "to": "de"}), req(GOOD)], None)
    assert_error(out[0], "text is too long")
    assert_error(out[1], "text is too long")  # prefix alone is > 10 tokens here
    h.setup["max_input_tokens"] = 512
    assert_success(h.handle([req(GOOD)], None)[0], 1)


def test_generation_failure_is_a_500_for_those_items_only(handler_module, tiny_model_dir, monkeypatch):
    h = handler_module.T5TranslationHandler()
    h.initialize(FakeContext(tiny_model_dir))

    def boom(*args, **kwargs):
        raise RuntimeError("simulated failure")

    monkeypatch.setattr(h.model, "generate", boom)
    ctx = ts_context(tiny_model_dir, 2)
    out = h.handle([req(GOOD), {"body": b"{}"}], ctx)
    assert_error(out[0], "translation failed: simulated failure", code=500)
    assert_error(out[1], "missing required field(s)")
    assert ctx.get_response_status(0) == (500, "Internal Server Error")
    assert ctx.get_response_status(1)[0] == 400
    monkeypatch.undo()
    assert_success(h.handle([req(GOOD)], None)[0], 1)  # the same handler still works


def test_empty_batch(handler):
    assert handler.handle([], FakeContext("unused")) == []


def test_shipped_setup_config(handler_module, tmp_path):
    shipped = json.loads((IMAGE_DIR / "setup_config.json").read_text())
    assert shipped["save_mode"] == "pretrained"
    (tmp_path / "setup_config.json").write_text(json.dumps(shipped))
    setup = handler_module.load_setup_config(str(tmp_path))
    assert setup["max_input_tokens"] == 512
    assert setup["num_beams"] >= 1 and setup["max_new_tokens"] > 0


@pytest.mark.slow  # beam search to the shipped output lengths
def test_shipped_generation_settings_translate(handler_module, tiny_model_dir, tmp_path):
    """The image's own setup_config.json (beam search, long outputs) on the tiny model."""
    import shutil

    model_dir = tmp_path / "model"
    shutil.copytree(tiny_model_dir, model_dir)
    shutil.copy(IMAGE_DIR / "setup_config.json", model_dir / "setup_config.json")
    h = handler_module.T5TranslationHandler()
    h.initialize(FakeContext(model_dir))
    assert h.setup["num_beams"] == json.loads((IMAGE_DIR / "setup_config.json").read_text())["num_beams"]
    out = h.handle([req([GOOD, dict(GOOD, to="de")])], None)
    assert_success(out[0], 2)


def test_save_mode_other_than_pretrained_is_refused(handler_module, tmp_path):
    (tmp_path / "setup_config.json").write_text(json.dumps({"save_mode": "torchscript"}))
    with pytest.raises(ValueError, match="save_mode"):
        handler_module.load_setup_config(str(tmp_path))


def test_handler_module_has_exactly_one_class_for_torchserve(handler_module):
    """TorchServe's loader needs exactly one class defined in the handler module."""
    from ts.utils.util import list_classes_from_module

    classes = list_classes_from_module(handler_module)
    assert [c.__name__ for c in classes] == ["T5TranslationHandler"]


def test_download_model_saves_a_loadable_copy(tiny_model_dir, tmp_path, handler_module):
    """download_model.py (the Dockerfile's stage 1) run on a local copy instead of the hub."""
    dl = _load_module("t5_torchserve_download_model", IMAGE_DIR / "download_model.py")
    out_dir = tmp_path / "saved"
    assert dl.main(["--model-id", str(tiny_model_dir), "--output", str(out_dir)]) == 0
    names = set(os.listdir(out_dir))
    assert {"config.json", "tokenizer.json"} <= names
    assert any(n.endswith(".safetensors") for n in names)
    write_setup_config(out_dir, **FAST_SETUP)
    h = handler_module.T5TranslationHandler()
    h.initialize(FakeContext(out_dir))
    assert_success(h.handle([req(GOOD)], None)[0], 1)
