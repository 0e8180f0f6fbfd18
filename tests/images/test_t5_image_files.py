"""Static checks of images/t5-torchserve's build files (no Docker needed).

They pin down what the Kubernetes manifests rely on: one TorchServe version,
the pinned base image, uid 1000, the CMD, the ports and the model name/version.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

IMAGE_DIR = Path(__file__).resolve().parents[2] / "images" / "t5-torchserve"
TORCHSERVE_VERSION = "0.12.0"
MODEL_STORE = "/home/model-server/model-store"


def dockerfile_instructions():
    """(INSTRUCTION, argument) pairs, with line continuations joined."""
    text = (IMAGE_DIR / "Dockerfile").read_text()
    logical, buf = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not buf and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        logical.append(buf + line)
        buf = ""
    out = []
    for line in logical:
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def properties(path: Path) -> dict:
    props = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            k, v = line.split("=", 1)
            props[k.strip()] = v.strip()
    return props


def pins(path: Path) -> dict:
    result = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([A-Za-z0-9_.+\-]+)", line)
        assert m, f"{path.name}: not pinned exactly: {line!r}"
        result[m.group(1).lower().replace("_", "-")] = m.group(2)
    return result


def test_base_image_is_pinned_torchserve_and_never_latest():
    ins = dockerfile_instructions()
    args = dict(a.split("=", 1) for w, a in ins if w == "ARG" and "=" in a)
    assert args["TORCHSERVE_TAG"] == f"{TORCHSERVE_VERSION}-cpu"
    froms = [a for w, a in ins if w == "FROM"]
    assert len(froms) == 2, "multi-stage: archive stage + runtime stage"
    for f in froms:
        assert f.split()[0] == "pytorch/torchserve:${TORCHSERVE_TAG}"
    assert "latest" not in (IMAGE_DIR / "Dockerfile").read_text()


def test_runtime_runs_as_uid_1000_with_the_expected_cmd():
    ins = dockerfile_instructions()
    runtime = ins[max(i for i, (w, _) in enumerate(ins) if w == "FROM") :]
    users = [a for w, a in runtime if w == "USER"]
    assert users[-1].split(":")[0] == "1000"
    cmd = json.loads([a for w, a in runtime if w == "CMD"][-1])
    assert cmd[:3] == ["torchserve", "--start", "--foreground"]
    assert "--disable-token-auth" in cmd
    assert cmd[cmd.index("--model-store") + 1] == MODEL_STORE
    assert cmd[cmd.index("--ts-config") + 1] == "/home/model-server/config.properties"
    entry = json.loads([a for w, a in runtime if w == "ENTRYPOINT"][-1])
    assert entry[0].endswith("tini")
    expose = " ".join(a for w, a in runtime if w == "EXPOSE").split()
    assert {"8080", "8081", "8082"} <= set(expose)
    env = " ".join(a for w, a in runtime if w == "ENV")
    assert "TS_CONFIG_FILE=/home/model-server/config.properties" in env
    assert "HF_HUB_OFFLINE=1" in env


def test_archive_step_names_model_and_version():
    run = " ".join(a for w, a in dockerfile_instructions() if w == "RUN" and "torch-model-archiver" in a)
    argv = run.split()
    assert argv[argv.index("--model-name") + 1] == "t5-small"
    assert argv[argv.index("--version") + 1] == "1.0"
    assert argv[argv.index("--handler") + 1] == "handler.py"
    extra = argv[argv.index("--extra-files") + 1].strip('"').split(",")
    assert {"t5_translation.py", "setup_config.json"} <= set(extra)
    assert argv[argv.index("--config-file") + 1] == "model-config.yaml"


def test_every_copied_file_exists_and_is_not_dockerignored():
    ignored = {line.strip().rstrip("/") for line in (IMAGE_DIR / ".dockerignore").read_text().splitlines() if line.strip()}
    for word, arg in dockerfile_instructions():
        if word != "COPY" or "--from=" in arg:
            continue
        parts = [p for p in arg.split() if not p.startswith("--")]
        for src in parts[:-1]:
            assert (IMAGE_DIR / src).is_file(), src
            assert src not in ignored, src


def test_config_properties_ports_and_metrics():
    props = properties(IMAGE_DIR / "config.properties")
    assert props["inference_address"] == "http://0.0.0.0:8080"
    assert props["management_address"] == "http://0.0.0.0:8081"
    assert props["metrics_address"] == "http://0.0.0.0:8082"
    assert props["metrics_mode"] == "prometheus"
    assert props["model_store"] == MODEL_STORE
    assert props["load_models"] == "all"
    assert props["disable_token_authorization"] == "true"
    assert props["install_py_dep_per_model"] == "false"


def test_one_torchserve_version_everywhere():
    runtime = pins(IMAGE_DIR / "requirements.txt")
    test = pins(IMAGE_DIR / "requirements-test.txt")
    for name in ("torchserve", "torch-model-archiver"):
        assert runtime[name] == TORCHSERVE_VERSION
        assert test[name] == TORCHSERVE_VERSION
    assert "torch" not in runtime, "torch comes from the pytorch/torchserve base image"
    assert {"torch", "transformers", "sentencepiece", "psutil", "pyyaml"} <= set(test)


def test_setup_and_model_config():
    setup = json.loads((IMAGE_DIR / "setup_config.json").read_text())
    assert setup["save_mode"] == "pretrained"
    cfg = yaml.safe_load((IMAGE_DIR / "model-config.yaml").read_text())
    assert cfg["batchSize"] >= 1 and cfg["maxBatchDelay"] >= 0 and cfg["responseTimeout"] > 0


@pytest.mark.parametrize("name", ["handler.py", "t5_translation.py", "download_model.py"])
def test_python_files_parse_as_python_3_9(name):
    """pytorch/torchserve:0.12.0 images run Python 3.9."""
    import ast

    ast.parse((IMAGE_DIR / name).read_text(), feature_version=(3, 9))
