"""Integration test for images/t5-torchserve against a real TorchServe 0.12.

A tiny random T5 (see test_t5_handler.py for why it is tiny and offline) is
packed with torch-model-archiver exactly as the Dockerfile packs t5-small, and
served by `torchserve --start --foreground` with the image's config.properties
rewritten to listen on 127.0.0.1 only, on free ports, with every file TorchServe
writes (logs, pid file, unpacked archive) under the test's tmp dir.

Skipped only when `java` is not on PATH.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.images.tiny_t5 import build_tiny_t5

IMAGE_DIR = Path(__file__).resolve().parents[2] / "images" / "t5-torchserve"
MODEL_NAME = "t5-small"
MODEL_VERSION = "1.0"
STARTUP_TIMEOUT_S = 120
HTTP_TIMEOUT_S = 60

pytestmark = [
    pytest.mark.slow,   # a real TorchServe with its Java frontend
    pytest.mark.skipif(shutil.which("java") is None, reason="java not found on PATH: TorchServe needs a JRE"),
]

GOOD = {"text": "this is a test sentence", "from": "en", "to": "fr"}



def _venv_tool(name: str) -> str:
    """The console script next to this interpreter (the venv's), else PATH."""
    candidate = Path(sys.executable).parent / name
    if candidate.exists():
        return str(candidate)
    found = shutil.which(name)
    if not found:
        pytest.fail(f"{name} not found next to {sys.executable} or on PATH")
    return found


def _free_ports(n: int) -> list:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def loopback_config(shipped: str, ports: dict, model_store: Path) -> str:
    """The image's config.properties, bound to 127.0.0.1 on the given ports."""
    replacements = {
        "inference_address": f"http://127.0.0.1:{ports['inference']}",
        "management_address": f"http://127.0.0.1:{ports['management']}",
        "metrics_address": f"http://127.0.0.1:{ports['metrics']}",
        "model_store": str(model_store),
    }
    lines, seen = [], set()
    for line in shipped.splitlines():
        key = line.split("=", 1)[0].strip()
        if not line.lstrip().startswith("#") and key in replacements:
            line = f"{key}={replacements[key]}"
            seen.add(key)
        lines.append(line)
    assert seen == set(replacements), f"config.properties lacks {set(replacements) - seen}"
    # gRPC (127.0.0.1:7070/7071 by default) moves to free ports too, so a
    # TorchServe already running on this machine cannot clash with the test.
    lines.append(f"grpc_inference_port={ports['grpc_inference']}")
    lines.append(f"grpc_management_port={ports['grpc_management']}")
    # One worker is enough here and keeps a 2-core machine responsive.
    lines.append("default_workers_per_model=1")
    return "\n".join(lines) + "\n"


def http(method: str, url: str, body=None, content_type: str = "application/json"):
    """(status, body text) for any status, without raising on 4xx/5xx."""
    data = None
    headers = {}
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        headers["Content-Type"] = content_type
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as resp:
            return resp.status, resp.read().decode("utf-8")
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode("utf-8")


def _log_tail(log_file: Path, logs_dir: Path, n: int = 60) -> str:
    parts = []
    for path in [log_file, logs_dir / "model_log.log", logs_dir / "ts_log.log"]:
        if path.exists():
            text = path.read_text(errors="replace").splitlines()[-n:]
            parts.append(f"--- {path.name}\n" + "\n".join(text))
    return "\n".join(parts)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("torchserve")
    model_dir = build_tiny_t5(root / "t5-small")
    setup = json.loads((IMAGE_DIR / "setup_config.json").read_text())
    setup.update({"max_new_tokens": 8, "num_beams": 1})
    setup_file = root / "setup_config.json"
    setup_file.write_text(json.dumps(setup))
    store = root / "model-store"
    store.mkdir()
    logs = root / "logs"
    tmp = root / "tmp"
    tmp.mkdir()

    env = dict(os.environ)
    for key in list(env):
        if key.startswith("TS_"):
            env.pop(key)
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "LOG_LOCATION": str(logs),
            "METRICS_LOCATION": str(logs),
            "TMPDIR": str(tmp),  # the launcher's .model_server.pid lives in tempfile.gettempdir()
            "TEMP": str(tmp),  # java.io.tmpdir: where the .mar is unpacked
            "PATH": str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
            "OMP_NUM_THREADS": "1",
        }
    )

    # Same archive command as the Dockerfile's stage 1.
    subprocess.run(
        [
            _venv_tool("torch-model-archiver"),
            "--model-name", MODEL_NAME,
            "--version", MODEL_VERSION,
            "--handler", str(IMAGE_DIR / "handler.py"),
            "--extra-files", f"{IMAGE_DIR / 't5_translation.py'},{setup_file},{model_dir}",
            "--config-file", str(IMAGE_DIR / "model-config.yaml"),
            "--export-path", str(store),
        ],
        cwd=root, env=env, check=True, timeout=120,
    )  # fmt: skip
    assert (store / f"{MODEL_NAME}.mar").is_file()

    ports = dict(zip(("inference", "management", "metrics", "grpc_inference", "grpc_management"), _free_ports(5), strict=True))
    config = root / "config.properties"
    config.write_text(loopback_config((IMAGE_DIR / "config.properties").read_text(), ports, store))

    torchserve = _venv_tool("torchserve")
    log_file = root / "torchserve.out"
    with open(log_file, "wb") as out:
        proc = subprocess.Popen(
            [torchserve, "--start", "--ncs", "--foreground",
             "--ts-config", str(config), "--model-store", str(store), "--disable-token-auth"],
            cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    base = {k: f"http://127.0.0.1:{ports[k]}" for k in ("inference", "management", "metrics")}
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        started = time.monotonic()
        healthy = False
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"torchserve exited with {proc.returncode}\n{_log_tail(log_file, logs)}")
            try:
                status, text = http("GET", base["inference"] + "/ping")
                if status == 200 and json.loads(text).get("status") == "Healthy":
                    status, text = http("GET", f"{base['management']}/models/{MODEL_NAME}")
                    workers = json.loads(text)[0].get("workers", []) if status == 200 else []
                    if any(w.get("status") == "READY" for w in workers):
                        healthy = True
                        break
            except (OSError, ValueError):
                pass
            time.sleep(0.5)
        if not healthy:
            pytest.fail(f"TorchServe not healthy after {STARTUP_TIMEOUT_S}s\n{_log_tail(log_file, logs)}")
        info = {"base": base, "root": root, "logs": logs, "log_file": log_file, "pid": proc.pid, "ports": ports,
                "startup_s": round(time.monotonic() - started, 1)}  # fmt: skip
        yield info
    finally:
        try:
            subprocess.run([torchserve, "--stop"], cwd=root, env=env, timeout=60,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
            proc.wait(timeout=30)
        except Exception:
            pass
        finally:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                if proc.poll() is not None:
                    break
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    continue
            # the Java frontend and Python workers share the launcher's group
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def predict_url(server):
    return f"{server['base']['inference']}/predictions/{MODEL_NAME}/{MODEL_VERSION}"


def test_ping_is_healthy(server):
    status, text = http("GET", server["base"]["inference"] + "/ping")
    assert status == 200
    assert json.loads(text)["status"] == "Healthy"


def test_prediction_returns_text(server):
    status, text = http("POST", predict_url(server), GOOD)
    assert status == 200, text
    body = json.loads(text)
    assert isinstance(body, list) and len(body) == 1
    assert set(body[0]) == {"text"} and isinstance(body[0]["text"], str)


def test_prediction_list_body(server):
    items = [dict(GOOD, to="de"), dict(GOOD, to="ro")]
    status, text = http("POST", predict_url(server), items)
    assert status == 200, text
    body = json.loads(text)
    assert len(body) == 2 and all(set(e) == {"text"} for e in body)


def test_unversioned_path_serves_the_same_model(server):
    status, text = http("POST", f"{server['base']['inference']}/predictions/{MODEL_NAME}", GOOD)
    assert status == 200, text
    assert "text" in json.loads(text)[0]


@pytest.mark.parametrize(
    "body, content_type, fragment",
    [
        (b"this is not json", "application/json", "not valid JSON"),
        (b"this is not json", "text/plain", "not valid JSON"),
        ({"text": "hello", "from": "fr", "to": "en"}, "application/json", "unsupported language pair fr->en"),
        ({"from": "en", "to": "fr"}, "application/json", "missing required field(s): 'text'"),
        ({"text": "", "from": "en", "to": "de"}, "application/json", "'text' must not be empty"),
        ([], "application/json", "empty list"),
    ],
)
def test_bad_request_is_a_400_and_the_worker_keeps_serving(server, body, content_type, fragment):
    status, text = http("POST", predict_url(server), body, content_type=content_type)
    assert status == 400, text
    entries = json.loads(text)
    assert entries[0]["code"] == 400 and fragment in entries[0]["error"]
    status, text = http("POST", predict_url(server), GOOD)
    assert status == 200, text
    assert "text" in json.loads(text)[0]


def test_concurrent_good_and_bad_requests(server):
    """Sent together they may share one batch (batchSize 8, maxBatchDelay 50 ms)."""
    bodies = [GOOD, {"text": "hi", "from": "en", "to": "es"}] * 3
    results = [None] * len(bodies)

    def send(i):
        results[i] = http("POST", predict_url(server), bodies[i])

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=HTTP_TIMEOUT_S + 5)
    for i, (status, text) in enumerate(results):
        if i % 2 == 0:
            assert status == 200 and "text" in json.loads(text)[0], text
        else:
            assert status == 400 and "unsupported language 'es'" in json.loads(text)[0]["error"], text


def test_management_model_endpoint_liveness_path(server):
    status, text = http("GET", f"{server['base']['management']}/models/{MODEL_NAME}")
    assert status == 200, text
    desc = json.loads(text)[0]
    assert desc["modelName"] == MODEL_NAME
    assert desc["modelVersion"] == MODEL_VERSION
    assert any(w["status"] == "READY" for w in desc["workers"])


def test_metrics_expose_queue_latency_for_the_hpa(server):
    assert http("POST", predict_url(server), GOOD)[0] == 200
    status, text = http("GET", server["base"]["metrics"] + "/metrics")
    assert status == 200
    assert "ts_queue_latency_microseconds" in text
    assert f'model_name="{MODEL_NAME}"' in text


def test_torchserve_files_stay_in_tmp(server):
    assert any(server["logs"].glob("*.log"))
    assert (server["root"] / "tmp" / ".model_server.pid").is_file()
    repo = IMAGE_DIR.parents[1]
    assert not (repo / "logs").exists()
    assert not (IMAGE_DIR / "logs").exists()


def test_listens_on_loopback_only(server):
    """Every socket the server tree listens on is on 127.0.0.1 (HTTP and gRPC)."""
    import psutil

    launcher = psutil.Process(server["pid"])
    listening = []
    for proc in [launcher] + launcher.children(recursive=True):
        try:
            conns = proc.net_connections(kind="inet")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        listening += [c.laddr for c in conns if c.status == psutil.CONN_LISTEN]
    ports = {addr.port for addr in listening}
    assert set(server["ports"].values()) <= ports, (server["ports"], listening)
    for addr in listening:
        assert addr.ip in ("127.0.0.1", "::ffff:127.0.0.1"), listening
