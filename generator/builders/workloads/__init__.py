"""Workload builders, one module per kind: each turns a workload of the spec
(generator/model/kinds/, where its fields and checks live) into objects.
Registration is explicit: the table below."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import finetune, manifest, t5, tgi, tpu_jobset, tpu_pd_serving, training
from .common import BuildContext
from .serving import build as build_serving

BUILDERS: dict[str, Callable[[BuildContext, Any], None]] = {   # each takes the workload of its kind
    "tgi": tgi.build,
    "finetune": finetune.build,
    "t5-inference": t5.build,
    "tpu-jobset": tpu_jobset.build,
    "tpu-pd-serving": tpu_pd_serving.build,
    "serving": build_serving,
    "training": training.build,
    "manifest": manifest.build,
}
