"""Dataset loading, prompt formatting and the deterministic batch schedule.

The order of examples is a pure function of (seed, epoch), and the samples a
step uses are a pure function of the step number. That is what lets a resumed
run continue with exactly the batches an uninterrupted run would have used.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import torch

IGNORE_INDEX = -100  # label value the loss skips


def load_rows(dataset_name: str, dataset_path: str | None, hf_token: str | None) -> Sequence[dict]:
    """Rows with question/context/answer fields, from a local file or the Hub."""
    if dataset_path is not None:
        with open(dataset_path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    # Imported here so the tests, which use dataset_path, need not install `datasets`.
    from datasets import load_dataset

    return load_dataset(dataset_name, split="train", token=hf_token)


def select_rows(rows: Sequence[dict], limit: int, seed: int) -> list[dict]:
    """A seeded random subset of `limit` rows (all rows when limit is 0)."""
    order = np.random.default_rng(seed).permutation(len(rows))
    if limit:
        order = order[:limit]
    return [rows[int(i)] for i in order]


PROMPT_TEMPLATE = "### Context:\n{context}\n### Question:\n{question}\n### Answer:\n"


def prompt_and_answer(row: dict) -> tuple[str, str]:
    prompt = PROMPT_TEMPLATE.format(context=row["context"].strip(), question=row["question"].strip())
    return prompt, row["answer"].strip()


def tokenize(rows: Sequence[dict], tokenizer, max_seq_length: int) -> list[dict[str, list[int]]]:
    """Token ids and labels; the loss covers only the answer and the end token."""
    examples = []
    for row in rows:
        prompt, answer = prompt_and_answer(row)
        # Tokenized apart so the prompt/answer boundary is exact.
        prompt_ids = tokenizer(prompt, add_special_tokens=True)["input_ids"]
        answer_ids = tokenizer(answer, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        input_ids = (prompt_ids + answer_ids)[:max_seq_length]
        labels = ([IGNORE_INDEX] * len(prompt_ids) + answer_ids)[:max_seq_length]
        if any(label != IGNORE_INDEX for label in labels):  # a prompt longer than the limit teaches nothing
            examples.append({"input_ids": input_ids, "labels": labels})
    return examples


def collate(examples: Sequence[dict[str, list[int]]], pad_token_id: int) -> dict[str, torch.Tensor]:
    """Right-pads a micro-batch to its longest example."""
    width = max(len(e["input_ids"]) for e in examples)
    input_ids, labels, mask = [], [], []
    for e in examples:
        pad = width - len(e["input_ids"])
        input_ids.append(e["input_ids"] + [pad_token_id] * pad)
        labels.append(e["labels"] + [IGNORE_INDEX] * pad)
        mask.append([1] * len(e["input_ids"]) + [0] * pad)
    return {
        "input_ids": torch.tensor(input_ids),
        "labels": torch.tensor(labels),
        "attention_mask": torch.tensor(mask),
    }


class BatchSchedule:
    """Which examples each rank uses for each micro-batch of each optimizer step.

    One optimizer step consumes `global_batch` examples: every rank runs
    `accumulation` micro-batches of `per_device` examples. Examples left over
    at the end of an epoch are dropped so every step has the same size.
    """

    def __init__(self, num_examples: int, per_device: int, accumulation: int, world_size: int, seed: int):
        self.per_device = per_device
        self.accumulation = accumulation
        self.world_size = world_size
        self.seed = seed
        self.num_examples = num_examples
        self.global_batch = per_device * accumulation * world_size
        self.steps_per_epoch = num_examples // self.global_batch

    def epoch_of(self, step: int) -> int:
        """Epoch (counted from 0) of optimizer step `step` (counted from 1)."""
        return (step - 1) // self.steps_per_epoch

    def micro_batches(self, step: int, rank: int) -> list[list[int]]:
        """Example indices of this rank's micro-batches for optimizer step `step` (counted from 1)."""
        order = np.random.default_rng([self.seed, self.epoch_of(step)]).permutation(self.num_examples)
        start = ((step - 1) % self.steps_per_epoch) * self.global_batch
        chunk = order[start : start + self.global_batch]
        batches = []
        for micro in range(self.accumulation):
            offset = (micro * self.world_size + rank) * self.per_device
            batches.append([int(i) for i in chunk[offset : offset + self.per_device]])
        return batches
