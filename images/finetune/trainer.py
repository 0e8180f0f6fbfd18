"""LoRA fine-tuning loop that stops cleanly on SIGTERM and resumes exactly.

A checkpoint holds what the next step depends on: the trainable (LoRA)
weights, the optimizer and LR scheduler, each rank's RNG states and the step
number. The base model's frozen weights are not saved; they are reloaded from
MODEL_NAME, which keeps a save small enough to finish in the grace period.
The data position follows from the step number (see data.BatchSchedule).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import random
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
import torch.distributed.checkpoint as dcp
from accelerate import Accelerator
from accelerate.optimizer import AcceleratedOptimizer
from accelerate.utils import set_seed
from peft import LoraConfig, get_peft_model
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_state_dict,
    set_state_dict,
)
from transformers import AutoModelForCausalLM, AutoTokenizer, get_linear_schedule_with_warmup

import checkpointing
import data
from finetune_config import Config

# Attention and MLP projections; Gemma and Llama use the same module names.
LORA_TARGET_MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
MAX_GRAD_NORM = 1.0
WARMUP_FRACTION = 0.03
# Frozen base weights come from MODEL_NAME; strict=False lets them be absent on load.
TRAINABLE_ONLY = StateDictOptions(ignore_frozen_params=True, strict=False)
# Settings that shape the training trajectory; resuming under different ones
# would silently repeat or skip data.
RUN_FIELDS = (
    "experiment",
    "model_name",
    "dataset_name",
    "dataset_path",
    "dataset_limit",
    "epochs",
    "gradient_accumulation_steps",
    "learning_rate",
    "per_device_batch_size",
    "max_seq_length",
    "lora_r",
    "lora_alpha",
    "lora_dropout",
    "seed",
)


class SettingsError(Exception):
    """The settings cannot work with this dataset, or do not match the checkpoints in MODEL_PATH."""


def log(accelerator: Accelerator, event: str, **fields) -> None:
    """One JSON object per line on stdout (Cloud Logging parses these), main process only."""
    if accelerator.is_main_process:
        print(json.dumps({"event": event, **fields}), flush=True)


def run_settings(cfg: Config, world_size: int) -> dict:
    return {**{name: getattr(cfg, name) for name in RUN_FIELDS}, "world_size": world_size}


def build_model(cfg: Config):
    # fp32 master weights; the accelerate config's mixed precision sets the compute dtype.
    # Eager attention: Gemma 2's attention-logit soft-capping is exact only there.
    model = AutoModelForCausalLM.from_pretrained(
        cfg.model_name, token=cfg.hf_token, dtype=torch.float32, attn_implementation="eager"
    )
    lora = LoraConfig(
        r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        target_modules=LORA_TARGET_MODULES,
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, lora)


def _rng_states() -> dict:
    numpy_state = np.random.get_state(legacy=True)  # the default: the tuple form for MT19937
    assert isinstance(numpy_state, tuple), "the global RandomState is MT19937"
    return {
        "python": random.getstate(),
        # Stored as a tensor so torch.load(weights_only=True) can read it back.
        "numpy": (numpy_state[0], torch.from_numpy(numpy_state[1].astype(np.int64)), *numpy_state[2:]),
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state() if torch.cuda.is_available() else None,
    }


def _restore_rng_states(states: dict) -> None:
    random.setstate(states["python"])
    name, keys, *rest = states["numpy"]
    np.random.set_state((name, keys.numpy().astype(np.uint32), *rest))
    torch.set_rng_state(states["torch"])
    if states["cuda"] is not None:
        torch.cuda.set_rng_state(states["cuda"])


@dataclasses.dataclass
class TrainingState:
    """What a checkpoint restores, besides the RNG states."""

    accelerator: Accelerator
    model: torch.nn.Module
    optimizer: AcceleratedOptimizer  # steps through accelerate (fp16 loss scaling, if configured)
    scheduler: torch.optim.lr_scheduler.LRScheduler

    def save(self, final: Path, meta: dict, hang_before_commit: bool = False) -> None:
        """Collective: every rank writes its shard; the main process commits the directory."""
        acc = self.accelerator
        staging = checkpointing.staging_dir(final)
        if acc.is_main_process:
            checkpointing.start_staging(final)
        acc.wait_for_everyone()
        model_state, optimizer_state = get_state_dict(self.model, self.optimizer.optimizer, options=TRAINABLE_ONLY)
        dcp.save({"model": model_state, "optimizer": optimizer_state}, checkpoint_id=staging / "weights")
        rng_file = staging / f"rng-rank{acc.process_index:05d}.pt"
        torch.save(_rng_states(), rng_file)
        checkpointing.fsync_file(rng_file)
        acc.wait_for_everyone()
        if acc.is_main_process:
            torch.save(self.scheduler.state_dict(), staging / "scheduler.pt")
            (staging / "trainer_state.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
            if hang_before_commit:  # test hook: lets a test SIGKILL us mid-save
                log(acc, "test_hang_in_checkpoint", step=meta["step"])
                while True:
                    time.sleep(60)
            checkpointing.commit(staging, final)
        acc.wait_for_everyone()

    def load(self, directory: Path) -> None:
        model_state, optimizer_state = get_state_dict(self.model, self.optimizer.optimizer, options=TRAINABLE_ONLY)
        state = {"model": model_state, "optimizer": optimizer_state}
        # Fails if any trainable tensor is missing from the checkpoint.
        dcp.load(state, checkpoint_id=directory / "weights")
        set_state_dict(
            self.model,
            self.optimizer.optimizer,
            model_state_dict=state["model"],
            optim_state_dict=state["optimizer"],
            options=TRAINABLE_ONLY,
        )
        self.scheduler.load_state_dict(torch.load(directory / "scheduler.pt", weights_only=True))
        # Last, so nothing above can advance the restored generators.
        rng_file = directory / f"rng-rank{self.accelerator.process_index:05d}.pt"
        _restore_rng_states(torch.load(rng_file, weights_only=True))


def _train_step(state: TrainingState, batches: list[dict[str, torch.Tensor]]) -> float:
    """One optimizer step over this rank's micro-batches; returns the local mean loss."""
    acc, model = state.accelerator, state.model
    total = 0.0
    for i, batch in enumerate(batches):
        # Gradients are averaged across ranks once, on the last micro-batch.
        sync = i == len(batches) - 1
        with contextlib.nullcontext() if sync else acc.no_sync(model):
            loss = model(**{k: v.to(acc.device) for k, v in batch.items()}).loss / len(batches)
            acc.backward(loss)
        total += loss.item()
    acc.clip_grad_norm_(model.parameters(), MAX_GRAD_NORM)
    state.optimizer.step()
    state.scheduler.step()
    state.optimizer.zero_grad(set_to_none=True)
    return total


def _export_adapter(state: TrainingState, tokenizer, final: Path) -> None:
    """Writes the trained LoRA adapter and tokenizer to `final`, atomically."""
    acc = state.accelerator
    full = StateDictOptions(full_state_dict=True, cpu_offload=True, ignore_frozen_params=True)
    adapter_state = get_model_state_dict(state.model, options=full)  # collective; filled on rank 0
    if acc.is_main_process:
        staging = checkpointing.start_staging(final)
        acc.unwrap_model(state.model).save_pretrained(staging, state_dict=adapter_state)
        tokenizer.save_pretrained(staging)
        checkpointing.commit(staging, final)
    acc.wait_for_everyone()


def train(cfg: Config, stop_requested: Callable[[], bool]) -> None:
    """Runs or resumes training until it finishes or a stop is requested."""
    acc = Accelerator()
    _train(acc, cfg, stop_requested)
    acc.end_training()  # tears the process group down cleanly


def _load_examples(acc: Accelerator, cfg: Config, tokenizer) -> tuple[list[dict], data.BatchSchedule]:
    with acc.local_main_process_first():  # one download per node; the others read the cache
        rows = data.load_rows(cfg.dataset_name, cfg.dataset_path, cfg.hf_token)
    examples = data.tokenize(data.select_rows(rows, cfg.dataset_limit, cfg.seed), tokenizer, cfg.max_seq_length)
    schedule = data.BatchSchedule(
        len(examples), cfg.per_device_batch_size, cfg.gradient_accumulation_steps, acc.num_processes, cfg.seed
    )
    if schedule.steps_per_epoch == 0:
        raise SettingsError(
            f"{len(examples)} examples are fewer than one optimizer step needs ({schedule.global_batch} ="
            " PER_DEVICE_BATCH_SIZE x GRADIENT_ACCUMULATION_STEPS x processes)"
        )
    return examples, schedule


def _resume(state: TrainingState, checkpoint_root: Path, settings: dict) -> int:
    """Loads the newest complete checkpoint; returns its step (0 when there is none)."""
    latest = checkpointing.latest_checkpoint(checkpoint_root)
    if latest is None:
        return 0
    step, directory = latest
    saved = json.loads((directory / "trainer_state.json").read_text())["settings"]
    changed = sorted(k for k in settings.keys() | saved.keys() if settings.get(k) != saved.get(k))
    if changed:
        raise SettingsError(f"{directory} was written with different settings: {', '.join(changed)}")
    state.load(directory)
    return step


def _train(acc: Accelerator, cfg: Config, stop_requested: Callable[[], bool]) -> None:
    root = Path(cfg.model_path)
    checkpoint_root = root / "checkpoints"
    final = root / cfg.new_model
    if checkpointing.is_complete(final):
        log(acc, "already_complete", output=str(final))
        return
    if acc.is_main_process:
        for leftover in checkpointing.remove_staging(checkpoint_root) + checkpointing.remove_staging(root):
            log(acc, "removed_incomplete_save", path=str(leftover))
    acc.wait_for_everyone()

    set_seed(cfg.seed)
    tokenizer = AutoTokenizer.from_pretrained(cfg.model_name, token=cfg.hf_token)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    examples, schedule = _load_examples(acc, cfg, tokenizer)
    total_steps = schedule.steps_per_epoch * cfg.epochs

    model = build_model(cfg)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.learning_rate)
    # FSDP2 needs the model and optimizer prepared together: it swaps the parameters.
    model, prepared_optimizer = acc.prepare(model, optimizer)
    # The scheduler stays unprepared: accelerate's wrapper would step it once per process.
    scheduler = get_linear_schedule_with_warmup(optimizer, int(WARMUP_FRACTION * total_steps), total_steps)
    state = TrainingState(acc, model, prepared_optimizer, scheduler)
    settings = run_settings(cfg, acc.num_processes)
    step = _resume(state, checkpoint_root, settings)
    log(
        acc,
        "resumed" if step else "started",
        step=step,
        total_steps=total_steps,
        experiment=cfg.experiment,
        processes=acc.num_processes,
    )

    def save(at_step: int) -> None:
        meta = {
            "step": at_step,
            "epoch": schedule.epoch_of(at_step),
            "samples_seen": at_step * schedule.global_batch,
            "settings": settings,
        }
        hang = at_step == cfg.test_hang_in_checkpoint_step
        state.save(checkpointing.checkpoint_dir(checkpoint_root, at_step), meta, hang_before_commit=hang)
        if acc.is_main_process:
            checkpointing.prune(checkpoint_root, cfg.keep_checkpoints)
        log(acc, "checkpoint_saved", step=at_step)

    model.train()
    while step < total_steps:
        step += 1
        micro = schedule.micro_batches(step, acc.process_index)
        local_loss = _train_step(state, [data.collate([examples[i] for i in ids], pad_id) for ids in micro])
        if cfg.test_step_delay_seconds:
            time.sleep(cfg.test_step_delay_seconds)
        # One all-reduce carries the loss and the stop flag: every rank learns
        # of a SIGTERM that reached any rank at the same step, so all of them
        # enter the collective save together instead of deadlocking.
        flags = torch.tensor([local_loss, float(stop_requested())], device=acc.device)
        loss_sum, stops = acc.reduce(flags, reduction="sum").tolist()
        log(
            acc,
            "step",
            step=step,
            epoch=schedule.epoch_of(step),
            loss=loss_sum / acc.num_processes,
            lr=scheduler.get_last_lr()[0],
        )
        if stops or step % cfg.checkpoint_save_steps == 0 or step == total_steps:
            save(step)
        if stops:
            log(acc, "stopped_for_preemption", step=step)
            return

    _export_adapter(state, tokenizer, final)
    log(acc, "finished", step=step, output=str(final))
