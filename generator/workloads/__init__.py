"""Workload kinds. Each kind is a module with a `KIND` (WorkloadKind) that
says where it runs, which Kueue integrations and controllers it needs, how to
check its spec entry and how to build its objects. Adding a kind: write the
module, add it to _MODULES, and add its fields to schemas/platform.schema.json."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from ..errors import Problem


@dataclass(frozen=True)
class WorkloadKind:
    name: str
    accelerators: tuple[str, ...]          # profiles it can run on
    priority_kind: str                      # "priorityClass" | "workloadPriorityClass"
    frameworks: tuple[str, ...]             # Kueue integrations it needs
    controllers: tuple[str, ...]            # controller installs it needs besides Kueue
    check: Callable[[dict, dict, str], list[Problem]]   # (workload, raw profile, profile name)
    build: Callable[["BuildContext", dict], None]        # noqa: F821


_MODULES = ("tgi", "finetune", "t5", "tpu_jobset", "tpu_pd_serving")

KINDS: dict[str, WorkloadKind] = {}
for _m in _MODULES:
    _kind = importlib.import_module(f"{__name__}.{_m}").KIND
    KINDS[_kind.name] = _kind
