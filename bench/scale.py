"""Grow the shipped spec to N workloads, to measure how cost grows.

The platform grows the way teams do: copy k of the spec's workloads lands in
its own namespace (a team), with the same LocalQueues as the original
namespace, so object names, Services and app labels are distinct per team
(two workloads creating the same object is a spec error) while every object
keeps the shape the generator really produces. Team namespaces are exactly as
long as the original (`llm` -> `l01`, ...), because derived names such as TPU
Slice names count the namespace against a length limit. Each copy runs on ONE
profile of its original, taken in turn, so the copies spread over the
profiles; each profile's capacity (node pool, Autopilot budget, TPU cubes)
grows with the number of copies it runs, as a real platform's would."""
from __future__ import annotations

import copy
import math
import string

from generator.kernel import quantity

_DIGITS = string.digits + string.ascii_lowercase


def _code(k: int, width: int) -> str:
    out = ""
    for _ in range(width):
        k, d = divmod(k, 36)
        out = _DIGITS[d] + out
    return out


def team_namespace(original: str, copy_no: int, taken: set[str]) -> str:
    """A namespace as long as `original` for copy `copy_no` (copy 0 is the original)."""
    if copy_no == 0:
        return original
    width = max(1, min(len(original) - 1, 3))
    for k in range(copy_no, 36 ** width):
        name = original[: len(original) - width] + _code(k, width)
        if name not in taken:
            return name
    raise ValueError(f"namespace {original!r} is too short for {copy_no} team copies")


def _grow_profile(p: dict, factor: int) -> None:
    if factor <= 1:
        return
    if "nodePool" in p:
        p["nodePool"]["nodes"] *= factor
    if "budget" in p:
        p["budget"] = {r: quantity.fmt(r, quantity.parse(v) * factor) for r, v in p["budget"].items()}
    if "tpu" in p:
        p["tpu"]["reservation"]["cubes"] *= factor


def scaled(raw: dict, n: int) -> dict:
    """A copy of `raw` with exactly `n` workloads, cloned team by team from its own."""
    originals = raw["workloads"]
    if not originals:
        raise ValueError("the spec has no workloads to clone")
    out = copy.deepcopy(raw)
    out["workloads"] = []
    taken = {ns["name"] for ns in raw["namespaces"]}
    team: dict[tuple[str, int], str] = {}
    per_profile: dict[str, int] = {}
    for i in range(n):
        copy_no, j = divmod(i, len(originals))
        w = copy.deepcopy(originals[j])
        key = (w["namespace"], copy_no)
        if key not in team:
            team[key] = team_namespace(w["namespace"], copy_no, taken)
            taken.add(team[key])
        w["namespace"] = team[key]
        w["profiles"] = [w["profiles"][copy_no % len(w["profiles"])]]
        per_profile[w["profiles"][0]] = per_profile.get(w["profiles"][0], 0) + 1
        out["workloads"].append(w)

    labels = {ns["name"]: ns for ns in raw["namespaces"]}
    for (orig, copy_no), ns in sorted(team.items(), key=lambda kv: kv[0][1]):
        if copy_no == 0:
            continue
        out["namespaces"].append({**copy.deepcopy(labels[orig]), "name": ns})
        for q in out["queues"]:
            q["localQueues"] += [{**lq, "namespace": ns} for lq in q["localQueues"] if lq["namespace"] == orig]

    shipped = {p: sum(p in w["profiles"] for w in originals) for p in raw["profiles"]}
    for p, count in per_profile.items():
        _grow_profile(out["profiles"][p], math.ceil(count / max(shipped[p], 1)))
    return out
