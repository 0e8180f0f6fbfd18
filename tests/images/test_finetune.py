"""CPU tests of images/finetune: configuration, atomic checkpoints, and
preemption (SIGTERM, SIGKILL) of real 2-process `accelerate launch` runs.

The runs use a tiny Gemma 2 model with random weights and a word-level
tokenizer, both built here from the in-repo dataset; nothing is downloaded.
CPU runs are deterministic (one thread per process, gloo collectives), so an
interrupted-and-resumed run must reproduce an uninterrupted one bit for bit.
"""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil  # an accelerate dependency
import pytest

REPO = Path(__file__).resolve().parents[2]
FINETUNE_DIR = REPO / "images" / "finetune"
DATASET = FINETUNE_DIR / "testdata" / "sql_tiny.jsonl"
CPU_ACCELERATE_CONFIG = FINETUNE_DIR / "testdata" / "accelerate_cpu.yaml"
PYTHON = sys.executable
RUN_TIMEOUT = 240  # seconds for one launch to finish on a 2-core machine
GRACE_PERIOD = 60  # the Job's terminationGracePeriodSeconds

# 40 examples / (2 per device x 2 accumulation x 2 processes) = 5 steps per epoch, 2 epochs.
TOTAL_STEPS = 10
TRAINING_ENV = {
    "EPOCHS": "2",
    "PER_DEVICE_BATCH_SIZE": "2",
    "GRADIENT_ACCUMULATION_STEPS": "2",
    "CHECKPOINT_SAVE_STEPS": "4",
    "KEEP_CHECKPOINTS": "2",
    "LORA_R": "4",
    "LORA_DROPOUT": "0.1",  # dropout draws random numbers: resuming must restore the RNG
    "MAX_SEQ_LENGTH": "128",
    "LEARNING_RATE": "0.01",
}


def _load(name: str):
    """Imports images/finetune/<name>.py under a unique module name."""
    spec = importlib.util.spec_from_file_location(f"finetune_{name}", FINETUNE_DIR / f"{name}.py")
    assert spec is not None and spec.loader is not None, name
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


finetune_config = _load("finetune_config")
checkpointing = _load("checkpointing")


# ---------------------------------------------------------------- configuration


def test_env_var_names_match_the_tutorial_job():
    tutorial = {
        "EXPERIMENT", "MODEL_NAME", "NEW_MODEL", "MODEL_PATH", "DATASET_NAME", "DATASET_LIMIT",
        "EPOCHS", "GRADIENT_ACCUMULATION_STEPS", "CHECKPOINT_SAVE_STEPS", "HF_TOKEN",
    }  # fmt: skip
    assert tutorial <= set(finetune_config.ENV_VARS)
    assert set(finetune_config.REQUIRED_ENV_VARS) <= set(finetune_config.ENV_VARS)
    assert len(set(finetune_config.ENV_VARS)) == len(finetune_config.ENV_VARS)


def test_every_env_var_is_read():
    """ENV_VARS lists exactly the variables load_config reads."""
    read = []

    class Recorder(dict):
        def get(self, key, default=None):
            read.append(key)
            return {"MODEL_PATH": "/tmp/m"}.get(key, default)

    finetune_config.load_config(Recorder())
    assert sorted(read) == sorted(finetune_config.ENV_VARS)


def test_defaults_follow_the_tutorial():
    cfg = finetune_config.load_config({"MODEL_PATH": "/model-data/x"})
    assert cfg.model_name == "google/gemma-2-2b"
    assert cfg.dataset_name == "b-mc2/sql-create-context"
    assert (cfg.epochs, cfg.checkpoint_save_steps, cfg.dataset_limit) == (1, 10, 5000)
    assert cfg.hf_token is None


def test_hf_token_is_never_printed():
    cfg = finetune_config.load_config({"MODEL_PATH": "/m", "HF_TOKEN": "hf_secret"})
    assert cfg.hf_token == "hf_secret"
    assert "hf_secret" not in repr(cfg)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "MODEL_PATH is required but not set"),
        ({"MODEL_PATH": " "}, "MODEL_PATH is required but not set"),
        ({"CHECKPOINT_SAVE_STEPS": "ten"}, "CHECKPOINT_SAVE_STEPS must be an integer, got 'ten'"),
        ({"EPOCHS": "-1"}, "EPOCHS must be >= 1, got -1"),
        ({"GRADIENT_ACCUMULATION_STEPS": "1.5"}, "GRADIENT_ACCUMULATION_STEPS must be an integer, got '1.5'"),
        ({"DATASET_LIMIT": "-5"}, "DATASET_LIMIT must be >= 0, got -5"),
        ({"LEARNING_RATE": "nan"}, "LEARNING_RATE must be in (0, 1], got nan"),
        ({"LORA_DROPOUT": "1"}, "LORA_DROPOUT must be in [0, 1), got 1"),
        ({"NEW_MODEL": "a/b"}, "NEW_MODEL must be a plain directory name other than 'checkpoints', got 'a/b'"),
        (
            {"NEW_MODEL": "checkpoints"},
            "NEW_MODEL must be a plain directory name other than 'checkpoints', got 'checkpoints'",
        ),
        ({"DATASET_PATH": "/no/such.jsonl"}, "DATASET_PATH '/no/such.jsonl' is not a file"),
    ],
)
def test_bad_values_name_the_variable(env, message):
    env = {"MODEL_PATH": "/m", **env} if "MODEL_PATH" not in message else env
    with pytest.raises(finetune_config.ConfigError) as err:
        finetune_config.load_config(env)
    assert err.value.problems == [message]


def test_every_problem_is_reported_at_once():
    with pytest.raises(finetune_config.ConfigError) as err:
        finetune_config.load_config({"EPOCHS": "0", "LORA_R": "x"})
    assert [p.split()[0] for p in err.value.problems] == ["MODEL_PATH", "EPOCHS", "LORA_R"]


def test_config_module_imports_without_torch():
    code = (
        "import sys, importlib.util; sys.modules['torch'] = None; "
        f"spec = importlib.util.spec_from_file_location('c', {str(FINETUNE_DIR / 'finetune_config.py')!r}); "
        "m = importlib.util.module_from_spec(spec); sys.modules['c'] = m; spec.loader.exec_module(m); "
        "print(','.join(m.REQUIRED_ENV_VARS))"
    )
    out = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "MODEL_PATH"


def test_entry_point_exits_2_on_bad_config(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in finetune_config.ENV_VARS}
    env.update(MODEL_PATH=str(tmp_path), EPOCHS="-3", CHECKPOINT_SAVE_STEPS="often")
    result = subprocess.run(
        [PYTHON, "fine_tune.py"], cwd=FINETUNE_DIR, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "EPOCHS must be >= 1, got -3" in result.stderr
    assert "CHECKPOINT_SAVE_STEPS must be an integer, got 'often'" in result.stderr


def test_launcher_exits_2_on_bad_config_before_starting_anything(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in finetune_config.ENV_VARS}
    env.update(EPOCHS="-3")
    marker = tmp_path / "started"
    result = subprocess.run(
        [PYTHON, "launch.py", PYTHON, "-c", f"open({str(marker)!r}, 'w')"],
        cwd=FINETUNE_DIR, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert "launch.py: configuration error: MODEL_PATH is required but not set" in result.stderr
    assert "launch.py: configuration error: EPOCHS must be >= 1, got -3" in result.stderr
    assert not marker.exists()


# ---------------------------------------------------------------- checkpoint directories


def _write_checkpoint(root: Path, step: int, payload: bytes = b"weights") -> Path:
    final = checkpointing.checkpoint_dir(root, step)
    staging = checkpointing.start_staging(final)
    (staging / "weights").mkdir()
    (staging / "weights" / "shard0").write_bytes(payload)
    (staging / "trainer_state.json").write_text(json.dumps({"step": step}))
    checkpointing.commit(staging, final)
    return final


def test_commit_publishes_a_complete_checkpoint(tmp_path):
    final = _write_checkpoint(tmp_path, 4)
    assert checkpointing.latest_checkpoint(tmp_path) == (4, final)
    assert not checkpointing.staging_dir(final).exists()
    marker = json.loads((final / checkpointing.MARKER).read_text())
    assert marker["files"] == {"trainer_state.json": len('{"step": 4}'), "weights/shard0": len(b"weights")}


def test_failure_while_writing_leaves_the_previous_checkpoint_newest(tmp_path):
    previous = _write_checkpoint(tmp_path, 4)
    final = checkpointing.checkpoint_dir(tmp_path, 8)
    staging = checkpointing.start_staging(final)
    with pytest.raises(RuntimeError):
        (staging / "half-written").write_bytes(b"x")
        raise RuntimeError("killed mid-save")
    assert checkpointing.latest_checkpoint(tmp_path) == (4, previous)
    assert checkpointing.remove_staging(tmp_path) == [staging]
    assert sorted(p.name for p in tmp_path.iterdir()) == [previous.name]


class Killed(BaseException):
    """Stands in for SIGKILL: nothing in the code under test may catch it."""


def test_kill_just_before_the_rename_leaves_the_previous_checkpoint_newest(tmp_path, monkeypatch):
    previous = _write_checkpoint(tmp_path, 4)

    def killed(src, dst):
        raise Killed

    monkeypatch.setattr(checkpointing.os, "rename", killed)
    with pytest.raises(Killed):
        _write_checkpoint(tmp_path, 8)
    assert checkpointing.latest_checkpoint(tmp_path) == (4, previous)


def test_kill_while_copying_instead_of_renaming_leaves_no_complete_checkpoint(tmp_path, monkeypatch):
    """On storage that cannot rename directories the files are copied, marker last."""
    previous = _write_checkpoint(tmp_path, 4)

    def refuse(src, dst):
        raise OSError(errno.ENOTSUP, "directory rename not supported")

    def killed(src, dst):
        raise Killed

    monkeypatch.setattr(checkpointing.os, "rename", refuse)
    monkeypatch.setattr(checkpointing.shutil, "copyfile", killed)
    with pytest.raises(Killed):
        _write_checkpoint(tmp_path, 8)
    assert checkpointing.latest_checkpoint(tmp_path) == (4, previous)

    monkeypatch.undo()
    monkeypatch.setattr(checkpointing.os, "rename", refuse)
    final = _write_checkpoint(tmp_path, 8)
    assert checkpointing.latest_checkpoint(tmp_path) == (8, final)
    assert not checkpointing.staging_dir(final).exists()


def test_directories_without_a_valid_marker_are_ignored(tmp_path):
    previous = _write_checkpoint(tmp_path, 4)
    checkpointing.checkpoint_dir(tmp_path, 12).mkdir()  # no marker at all
    truncated = _write_checkpoint(tmp_path, 8, payload=b"0123456789")
    (truncated / "weights" / "shard0").write_bytes(b"01234")  # e.g. a non-atomic rename cut short
    assert checkpointing.latest_checkpoint(tmp_path) == (4, previous)


def test_a_checkpoint_can_replace_an_incomplete_one_at_the_same_step(tmp_path):
    checkpointing.checkpoint_dir(tmp_path, 8).mkdir()
    final = _write_checkpoint(tmp_path, 8)
    assert checkpointing.latest_checkpoint(tmp_path) == (8, final)


def test_prune_keeps_the_newest_complete_checkpoints(tmp_path):
    for step in (2, 4, 6, 8):
        _write_checkpoint(tmp_path, step)
    checkpointing.checkpoint_dir(tmp_path, 10).mkdir()  # incomplete
    checkpointing.prune(tmp_path, keep=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint-00000006", "checkpoint-00000008"]


# ---------------------------------------------------------------- data schedule


def test_each_epoch_uses_every_example_once_across_ranks():
    data = _load("data")
    schedule = data.BatchSchedule(num_examples=40, per_device=2, accumulation=2, world_size=2, seed=1)
    assert schedule.steps_per_epoch == 5
    for epoch in range(2):
        steps = range(epoch * 5 + 1, epoch * 5 + 6)
        used = [i for s in steps for rank in range(2) for batch in schedule.micro_batches(s, rank) for i in batch]
        assert sorted(used) == list(range(40))
    assert schedule.micro_batches(1, 0) != schedule.micro_batches(6, 0)  # reshuffled per epoch


# ---------------------------------------------------------------- real launches


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    """A 2-layer Gemma 2 with random weights and a word-level tokenizer over the dataset."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import Gemma2Config, Gemma2ForCausalLM, PreTrainedTokenizerFast

    out = tmp_path_factory.mktemp("tiny-gemma2")
    pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    words: set[str] = set()
    for line in DATASET.read_text().splitlines():
        row = json.loads(line)
        for text in (row["question"], row["context"], row["answer"], "### Context Question Answer :"):
            words.update(word for word, _ in pre_tokenizer.pre_tokenize_str(text))
    vocab = {token: i for i, token in enumerate(["<pad>", "<eos>", "<bos>", "<unk>", *sorted(words)])}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizer
    tokenizer.post_processor = processors.TemplateProcessing(single="<bos> $A", special_tokens=[("<bos>", 2)])
    PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token="<pad>", eos_token="<eos>", bos_token="<bos>", unk_token="<unk>"
    ).save_pretrained(out)

    import torch

    torch.manual_seed(0)
    config = Gemma2Config(
        vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=256,
        pad_token_id=0, eos_token_id=1, bos_token_id=2,
    )  # fmt: skip
    Gemma2ForCausalLM(config).save_pretrained(out)
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Run:
    """One container-like launch: launch.py -> accelerate launch -> 2 workers."""

    def __init__(self, log: Path, env: dict[str, str], config: Path, script: str):
        self.log = log
        command = [
            PYTHON, str(FINETUNE_DIR / "launch.py"), PYTHON, "-m", "accelerate.commands.launch",
            "--config_file", str(config), "--main_process_ip", "127.0.0.1",
            "--main_process_port", str(_free_port()), "--machine_rank", "0",
            "--num_processes", "2", "--num_machines", "1", script,
        ]  # fmt: skip
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(
                command, cwd=FINETUNE_DIR, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def events(self) -> list[dict]:
        lines = self.log.read_text(errors="replace").splitlines()
        return [json.loads(line) for line in lines if line.startswith('{"event"')]

    def wait_for_event(self, predicate, timeout: float = RUN_TIMEOUT) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in self.events():
                if predicate(event):
                    return event
            assert self.proc.poll() is None, f"exited early with {self.proc.returncode}:\n{self.tail()}"
            time.sleep(0.05)
        raise AssertionError(f"no matching event within {timeout} s:\n{self.tail()}")

    def wait(self, timeout: float = RUN_TIMEOUT) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"still running after {timeout} s:\n{self.tail()}") from None

    def kill(self) -> None:
        """SIGKILL everything, as the kubelet does after the grace period.

        torch elastic starts each worker in its own session, so the process
        group alone would miss them.
        """
        try:
            processes = [psutil.Process(self.proc.pid), *psutil.Process(self.proc.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            processes = []
        for process in processes:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        self.proc.wait(30)

    def tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-40:])


class Launcher:
    """Starts runs against one MODEL_PATH, like restarts of the same Job pod."""

    def __init__(self, tiny_model: Path, tmp_path: Path):
        self.tmp_path = tmp_path
        self.model_path = tmp_path / "model-data"
        self.runs: list[Run] = []
        self.env = {k: v for k, v in os.environ.items() if k not in finetune_config.ENV_VARS}
        self.env.update(
            HF_HUB_OFFLINE="1",
            HF_HOME=str(tmp_path / "hf-home"),
            CUDA_VISIBLE_DEVICES="",
            OMP_NUM_THREADS="1",
            TOKENIZERS_PARALLELISM="false",
            # Selects gloo/CPU in the workers; see testdata/accelerate_cpu.yaml.
            ACCELERATE_USE_CPU="true",
            MODEL_PATH=str(self.model_path),
            MODEL_NAME=str(tiny_model),
            DATASET_PATH=str(DATASET),
            **TRAINING_ENV,
        )

    def start(self, name: str, config: Path = CPU_ACCELERATE_CONFIG, script: str = "fine_tune.py", **env) -> Run:
        run = Run(self.tmp_path / f"{name}.log", {**self.env, **env}, config, script)
        self.runs.append(run)
        return run

    def close(self) -> None:
        for run in self.runs:
            if run.proc.poll() is None:
                run.kill()


@pytest.fixture
def launcher(tiny_model, tmp_path):
    launcher = Launcher(tiny_model, tmp_path)
    yield launcher
    launcher.close()


def _steps(run: Run) -> list[int]:
    return [e["step"] for e in run.events() if e["event"] == "step"]


def _losses(*runs: Run) -> dict[int, float]:
    return {e["step"]: e["loss"] for run in runs for e in run.events() if e["event"] == "step"}


def _adapter(model_path: Path) -> dict:
    from safetensors.torch import load_file

    final = model_path / "gemma-ft"
    assert checkpointing.is_complete(final)
    return load_file(final / "adapter_model.safetensors")


def _assert_same_weights(actual: dict, expected: dict) -> None:
    import torch

    assert actual.keys() == expected.keys() and actual
    for name, tensor in expected.items():
        assert torch.equal(actual[name], tensor), name


def _uninterrupted_run(launcher: Launcher, **start_args) -> tuple[dict[int, float], dict]:
    """Per-step losses and final adapter weights of a run nobody interrupts."""
    run = launcher.start("uninterrupted", **start_args)
    assert run.wait() == 0, run.tail()
    assert _steps(run) == list(range(1, TOTAL_STEPS + 1))
    return _losses(run), _adapter(launcher.model_path)


@pytest.fixture(scope="module")
def reference(tiny_model, tmp_path_factory):
    launcher = Launcher(tiny_model, tmp_path_factory.mktemp("reference"))
    try:
        yield _uninterrupted_run(launcher)
    finally:
        launcher.close()


def _preempt_and_resume(launcher: Launcher, reference, **start_args) -> None:
    """SIGTERM a run after step 3, restart it, and compare with the reference run."""
    losses, weights = reference
    first = launcher.start("preempted", TEST_STEP_DELAY_SECONDS="0.3", **start_args)
    first.wait_for_event(lambda e: e["event"] == "step" and e["step"] >= 3)
    signalled = time.monotonic()
    first.proc.send_signal(signal.SIGTERM)  # what the kubelet sends to PID 1
    assert first.wait(GRACE_PERIOD) == 0, first.tail()
    assert time.monotonic() - signalled < GRACE_PERIOD
    stop = next(e["step"] for e in first.events() if e["event"] == "stopped_for_preemption")
    assert 3 <= stop < TOTAL_STEPS
    assert _steps(first) == list(range(1, stop + 1))
    assert checkpointing.latest_checkpoint(launcher.model_path / "checkpoints")[0] == stop
    assert not (launcher.model_path / "gemma-ft").exists()

    second = launcher.start("resumed", **start_args)
    assert second.wait() == 0, second.tail()
    resumed = second.events()[0]
    assert (resumed["event"], resumed["step"]) == ("resumed", stop)
    assert _steps(first) + _steps(second) == list(range(1, TOTAL_STEPS + 1))  # no repeat, no skip
    assert _losses(first, second) == losses
    _assert_same_weights(_adapter(launcher.model_path), weights)


@pytest.mark.slow  # multi-process accelerate training runs
def test_sigterm_saves_exits_0_and_resume_matches_uninterrupted_run(launcher, reference):
    _preempt_and_resume(launcher, reference)


def _worker_of_rank(run: Run, rank: int) -> int:
    """Pid of the training process with RANK=rank."""
    for process in psutil.Process(run.proc.pid).children(recursive=True):
        if process.cmdline()[-1:] == ["fine_tune.py"] and process.environ().get("RANK") == str(rank):
            return process.pid
    raise AssertionError(f"no worker with RANK={rank}")


@pytest.mark.slow  # multi-process accelerate training runs
def test_sigterm_to_one_rank_stops_every_rank_at_the_same_step(launcher):
    """A rank that stopped alone would wait forever in the collective save."""
    run = launcher.start("one-rank-signalled", TEST_STEP_DELAY_SECONDS="0.3")
    run.wait_for_event(lambda e: e["event"] == "step" and e["step"] >= 2)
    os.kill(_worker_of_rank(run, 1), signal.SIGTERM)
    assert run.wait(GRACE_PERIOD) == 0, run.tail()
    stop = next(e["step"] for e in run.events() if e["event"] == "stopped_for_preemption")
    assert _steps(run) == list(range(1, stop + 1))
    checkpoint = checkpointing.latest_checkpoint(launcher.model_path / "checkpoints")[1]
    assert checkpoint.name == f"checkpoint-{stop:08d}"
    assert sorted(p.name for p in checkpoint.glob("rng-rank*.pt")) == ["rng-rank00000.pt", "rng-rank00001.pt"]


@pytest.mark.slow  # multi-process accelerate training runs
def test_sigkill_during_a_save_resumes_from_the_previous_checkpoint(launcher, reference):
    losses, weights = reference
    first = launcher.start("killed", TEST_HANG_IN_CHECKPOINT_STEP="8")
    first.wait_for_event(lambda e: e["event"] == "test_hang_in_checkpoint")
    checkpoints = launcher.model_path / "checkpoints"
    staging = checkpoints / ".staging-checkpoint-00000008"
    assert (staging / "weights" / ".metadata").is_file()  # the save is half done
    first.kill()
    assert checkpointing.latest_checkpoint(checkpoints)[0] == 4
    assert not checkpointing.checkpoint_dir(checkpoints, 8).exists()

    second = launcher.start("restarted")
    assert second.wait() == 0, second.tail()
    events = second.events()
    assert {"event": "removed_incomplete_save", "path": str(staging)} in events
    assert next(e for e in events if e["event"] == "resumed")["step"] == 4
    assert _steps(second) == list(range(5, TOTAL_STEPS + 1))
    assert _losses(second) == {step: loss for step, loss in losses.items() if step > 4}
    _assert_same_weights(_adapter(launcher.model_path), weights)
    assert sorted(p.name for p in checkpoints.iterdir()) == ["checkpoint-00000008", "checkpoint-00000010"]

    # A pod started again after the result exists (say, a retried index) does nothing.
    adapter = launcher.model_path / "gemma-ft" / "adapter_model.safetensors"
    written = adapter.stat().st_mtime_ns
    again = subprocess.run(
        [PYTHON, "fine_tune.py"], cwd=FINETUNE_DIR, env=launcher.env, capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout.splitlines()[-1])["event"] == "already_complete"
    assert adapter.stat().st_mtime_ns == written


# Accelerate turns FSDP on only for accelerator devices: on CPU its state stays
# MULTI_CPU. This shim flips the state the way accelerate does on GPUs, so the
# production fsdp_config.yaml (FSDP2, bf16) runs the real fine_tune.py on CPU.
FSDP_ON_CPU_SHIM = """
import runpy, sys
from accelerate.state import AcceleratorState
from accelerate.utils import DistributedType

original_init = AcceleratorState.__init__

def init(self, *args, fsdp_plugin=None, **kwargs):
    original_init(self, *args, fsdp_plugin=fsdp_plugin, **kwargs)
    if self.distributed_type == DistributedType.MULTI_CPU and fsdp_plugin is not None:
        self.distributed_type = DistributedType.FSDP
        if self._mixed_precision != "no":
            fsdp_plugin.set_mixed_precision(self._mixed_precision)
        self.fsdp_plugin = fsdp_plugin

AcceleratorState.__init__ = init
sys.path.insert(0, ".")
runpy.run_path("fine_tune.py", run_name="__main__")
"""


@pytest.mark.slow  # multi-process accelerate training runs
def test_fsdp2_config_preempt_and_resume(launcher, tiny_model, tmp_path_factory):
    shim = tmp_path_factory.mktemp("shim") / "fine_tune_fsdp_on_cpu.py"
    shim.write_text(FSDP_ON_CPU_SHIM)
    start_args = {"config": FINETUNE_DIR / "fsdp_config.yaml", "script": str(shim)}
    reference = Launcher(tiny_model, tmp_path_factory.mktemp("fsdp-reference"))
    try:
        expected = _uninterrupted_run(reference, **start_args)
    finally:
        reference.close()
    checkpoint = reference.model_path / "checkpoints" / "checkpoint-00000010" / "weights"
    assert sorted(p.name for p in checkpoint.glob("*.distcp")) == ["__0_0.distcp", "__1_0.distcp"]
    _preempt_and_resume(launcher, expected, **start_args)
