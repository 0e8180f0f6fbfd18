"""Locust load for the t5-small TorchServe endpoint (images/t5-torchserve).

Runs in the locustio/locust image; the generator ships this file in a
ConfigMap (name hashed on content, so an edit rolls the load generator).
Configured by environment: LOCUST_HOST (the T5 Service's inference port),
MODEL_NAME and MODEL_VERSION (the model archive's name and version).
"""
import json
import os

from locust import FastHttpUser, between, task

MODEL_NAME = os.getenv("MODEL_NAME", "t5-small")
MODEL_VERSION = os.getenv("MODEL_VERSION", "1.0")

# One item in the handler's input format: {"text", "from", "to"}, and a
# language pair T5 was trained on (images/t5-torchserve/t5_translation.py).
PAYLOAD = {"text": "this is a test sentence", "from": "en", "to": "fr"}


def predictions_path(name: str = MODEL_NAME, version: str = MODEL_VERSION) -> str:
    return f"/predictions/{name}/{version}"


def translation_error(status: int, body: str):
    """Why a response is not a good translation, or None when it is one.

    A good answer is HTTP 200 with a JSON list holding one {"text": ...}."""
    if status != 200:
        return f"HTTP {status}: {body[:200]}"
    try:
        entries = json.loads(body)
    except ValueError:
        return f"response is not JSON: {body[:200]}"
    if not (isinstance(entries, list) and len(entries) == 1 and isinstance(entries[0], dict)
            and isinstance(entries[0].get("text"), str)):
        return f"unexpected response: {body[:200]}"
    return None


class T5User(FastHttpUser):
    wait_time = between(2.0, 2.5)

    @task
    def translate(self):
        with self.client.post(predictions_path(), json=PAYLOAD, catch_response=True) as response:
            error = translation_error(response.status_code, response.text or "")
            if error:
                response.failure(error)
            else:
                response.success()
