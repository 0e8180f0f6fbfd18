"""Workload kinds of the spec: each a model with its own fields and checks,
joined in one union discriminated by `kind` (a mistake in one workload is
reported against its kind's fields only). Adding a kind: write its module
here and its builder in generator/builders/workloads/, and list both."""
from __future__ import annotations

from .base import WorkloadBase
from .finetune import Finetune
from .manifest import Manifest
from .serving import Serving
from .t5 import T5Inference
from .tgi import Tgi
from .tpu_jobset import TpuJobset
from .tpu_pd_serving import TpuPdServing
from .training import Training

KINDS: dict[str, type[WorkloadBase]] = {
    "tgi": Tgi,
    "finetune": Finetune,
    "t5-inference": T5Inference,
    "tpu-jobset": TpuJobset,
    "tpu-pd-serving": TpuPdServing,
    "serving": Serving,
    "training": Training,
    "manifest": Manifest,
}
Workload = Tgi | Finetune | T5Inference | TpuJobset | TpuPdServing | Serving | Training | Manifest

__all__ = ["KINDS", "Workload", "WorkloadBase", "Tgi", "Finetune", "T5Inference", "TpuJobset", "TpuPdServing", "Training",
           "Manifest"]
