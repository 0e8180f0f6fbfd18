"""Configuration of the fine-tuning Job, read from environment variables.

Standard library only: the manifest generator's tests import this file by path
(without torch installed) to check that the Job sets the variables read here.
The names of the first ten variables are the ones the GKE tutorial's Job sets.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Mapping
from typing import overload

# Variables the tutorial's Job sets, in its order.
TUTORIAL_ENV_VARS = (
    "EXPERIMENT",
    "MODEL_NAME",
    "NEW_MODEL",
    "MODEL_PATH",
    "DATASET_NAME",
    "DATASET_LIMIT",
    "EPOCHS",
    "GRADIENT_ACCUMULATION_STEPS",
    "CHECKPOINT_SAVE_STEPS",
    "HF_TOKEN",
)

# Optional tuning knobs; each has a default.
EXTRA_ENV_VARS = (
    "LEARNING_RATE",
    "PER_DEVICE_BATCH_SIZE",
    "MAX_SEQ_LENGTH",
    "LORA_R",
    "LORA_ALPHA",
    "LORA_DROPOUT",
    "SEED",
    "KEEP_CHECKPOINTS",
    "DATASET_PATH",
)

# Hooks for the CPU tests only; a production Job never sets them.
TEST_HOOK_ENV_VARS = (
    "TEST_STEP_DELAY_SECONDS",
    "TEST_HANG_IN_CHECKPOINT_STEP",
)

ENV_VARS = TUTORIAL_ENV_VARS + EXTRA_ENV_VARS + TEST_HOOK_ENV_VARS
REQUIRED_ENV_VARS = ("MODEL_PATH",)


class ConfigError(ValueError):
    """One or more environment variables are missing or malformed."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclasses.dataclass(frozen=True)
class Config:
    experiment: str
    model_name: str
    new_model: str
    model_path: str
    dataset_name: str
    dataset_limit: int  # 0 means every row
    epochs: int
    gradient_accumulation_steps: int
    checkpoint_save_steps: int
    hf_token: str | None = dataclasses.field(repr=False)  # never printed
    learning_rate: float
    per_device_batch_size: int
    max_seq_length: int
    lora_r: int
    lora_alpha: int
    lora_dropout: float
    seed: int
    keep_checkpoints: int
    dataset_path: str | None  # local JSON Lines file used instead of DATASET_NAME
    test_step_delay_seconds: float
    test_hang_in_checkpoint_step: int  # 0 means off


class _Reader:
    """Reads typed values and collects every problem, so one run reports them all."""

    def __init__(self, environ: Mapping[str, str]):
        self._environ = environ
        self.problems: list[str] = []

    @overload
    def _raw(self, name: str, default: str) -> str: ...
    @overload
    def _raw(self, name: str, default: None) -> str | None: ...

    def _raw(self, name: str, default: str | None) -> str | None:
        value = self._environ.get(name)
        if value is None or not value.strip():
            return default
        return value.strip()

    @overload
    def string(self, name: str, default: str) -> str: ...
    @overload
    def string(self, name: str, default: None) -> str | None: ...

    def string(self, name: str, default: str | None) -> str | None:
        value = self._raw(name, default)
        if value is None and name in REQUIRED_ENV_VARS:
            self.problems.append(f"{name} is required but not set")
        return value

    def integer(self, name: str, default: int, minimum: int) -> int:
        raw = self._raw(name, str(default))
        try:
            value = int(raw)
        except ValueError:
            self.problems.append(f"{name} must be an integer, got {raw!r}")
            return default
        if value < minimum:
            self.problems.append(f"{name} must be >= {minimum}, got {value}")
        return value

    def number(self, name: str, default: float, valid: Callable[[float], bool], requirement: str) -> float:
        raw = self._raw(name, repr(default))
        try:
            value = float(raw)
        except ValueError:
            self.problems.append(f"{name} must be a number, got {raw!r}")
            return default
        if not valid(value):  # also rejects nan
            self.problems.append(f"{name} must be {requirement}, got {raw}")
        return value


def load_config(environ: Mapping[str, str] | None = None) -> Config:
    """Parses the environment; raises ConfigError naming every bad variable."""
    r = _Reader(os.environ if environ is None else environ)
    cfg = Config(
        experiment=r.string("EXPERIMENT", "finetune-experiment"),
        model_name=r.string("MODEL_NAME", "google/gemma-2-2b"),
        new_model=r.string("NEW_MODEL", "gemma-ft"),
        model_path=r.string("MODEL_PATH", None) or "",  # "" only when unset, a problem raised below
        dataset_name=r.string("DATASET_NAME", "b-mc2/sql-create-context"),
        dataset_limit=r.integer("DATASET_LIMIT", 5000, minimum=0),
        epochs=r.integer("EPOCHS", 1, minimum=1),
        gradient_accumulation_steps=r.integer("GRADIENT_ACCUMULATION_STEPS", 2, minimum=1),
        checkpoint_save_steps=r.integer("CHECKPOINT_SAVE_STEPS", 10, minimum=1),
        hf_token=r.string("HF_TOKEN", None),
        learning_rate=r.number("LEARNING_RATE", 2e-4, lambda v: 0 < v <= 1, "in (0, 1]"),
        per_device_batch_size=r.integer("PER_DEVICE_BATCH_SIZE", 1, minimum=1),
        max_seq_length=r.integer("MAX_SEQ_LENGTH", 512, minimum=16),
        lora_r=r.integer("LORA_R", 8, minimum=1),
        lora_alpha=r.integer("LORA_ALPHA", 16, minimum=1),
        lora_dropout=r.number("LORA_DROPOUT", 0.05, lambda v: 0 <= v < 1, "in [0, 1)"),
        seed=r.integer("SEED", 42, minimum=0),
        keep_checkpoints=r.integer("KEEP_CHECKPOINTS", 2, minimum=1),
        dataset_path=r.string("DATASET_PATH", None),
        test_step_delay_seconds=r.number("TEST_STEP_DELAY_SECONDS", 0.0, lambda v: 0 <= v <= 60, "in [0, 60]"),
        test_hang_in_checkpoint_step=r.integer("TEST_HANG_IN_CHECKPOINT_STEP", 0, minimum=0),
    )
    # NEW_MODEL names a directory directly under MODEL_PATH, beside checkpoints/.
    if "/" in cfg.new_model or cfg.new_model in (".", "..", "checkpoints"):
        r.problems.append(f"NEW_MODEL must be a plain directory name other than 'checkpoints', got {cfg.new_model!r}")
    if cfg.dataset_path is not None and not os.path.isfile(cfg.dataset_path):
        r.problems.append(f"DATASET_PATH {cfg.dataset_path!r} is not a file")
    if r.problems:
        raise ConfigError(r.problems)
    return cfg


def load_config_or_exit(program: str) -> Config:
    """load_config(), or exit 2 with one line per problem on stderr."""
    try:
        return load_config()
    except ConfigError as err:
        for problem in err.problems:
            print(f"{program}: configuration error: {problem}", file=sys.stderr)
        raise SystemExit(2) from None
