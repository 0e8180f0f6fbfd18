"""The rule registry. Each rule is one small function over the Model of one
input that yields Problems (made by `hit`); the collector fills in their rule,
severity, object and hint. Rules whose check is None are emitted by the loader
(IN*) or the schema layer (SC*)."""
from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ...kernel.errors import Problem, problem
from ..objects import Model, Obj


def hit(obj: Obj | None, path: tuple, message: str, severity: str | None = None, hint: str | None = None,
        missing: str | None = None) -> Problem:
    """What a rule found on `obj` at `path` (keys and indexes). `severity` and `hint`
    override the rule's; `missing` names what the problem is about when it is an object
    absent from the input ("LocalQueue 'lq' in namespace 'team'"): in an open world (no
    --context) such a problem is a note, as the object may exist in the cluster."""
    return problem(path, message, severity=severity, hint=hint, missing=missing, obj=obj)


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str
    summary: str       # one line, for --list-rules and docs/reference/rules.md
    hint: str
    check: Callable[[Model], Iterable[Problem]] | None


RULES: dict[str, Rule] = {}


def rule(rule_id: str, severity: str, summary: str, hint: str):
    def register(fn):
        if rule_id in RULES:
            raise ValueError(f"rule {rule_id} registered twice")
        RULES[rule_id] = Rule(rule_id, severity, summary, hint, fn)
        return fn
    return register


def declare(rule_id: str, severity: str, summary: str, hint: str) -> None:
    """A rule reported outside the model (input and schema layers)."""
    RULES[rule_id] = Rule(rule_id, severity, summary, hint, None)


_MODULES = ("inputs", "structure", "names", "kueue", "cohorts", "priority", "pods", "secrets", "hpa", "selectors",
            "gateway", "tpu", "network", "multikueue", "multikueue_group", "apiserver_pods", "apiserver_kinds", "apiserver_core",
            "apiserver_batch", "apiserver_apps", "apiserver_autoscaling", "apiserver_policy", "apiserver_rbac",
            "apiserver_networking", "apiserver_scheduling", "apiserver_crd", "webhooks", "webhooks_jobset", "webhooks_lws",
            "webhooks_kueue", "scope")
for _m in _MODULES:
    importlib.import_module(f"{__name__}.{_m}")
