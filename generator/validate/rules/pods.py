"""Containers: pinned images, explicit requests, Autopilot's requests = limits."""
from __future__ import annotations

from ...kernel import quantity
from ..findings import WARNING
from . import hit, rule


def _all_containers(ps):
    yield from ps.containers()
    for i, c in enumerate(ps.spec.get("ephemeralContainers") or []):
        if isinstance(c, dict):
            yield ps.path + ("spec", "ephemeralContainers", i), c


def unpinned(image: str) -> str | None:
    """Why an image reference is not pinned, or None."""
    if "@sha256:" in image:
        return None
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return "has no tag (means :latest)"
    if last.rsplit(":", 1)[1] == "latest":
        return "uses the moving tag :latest"
    return None


@rule("PD001", WARNING, "an image is not pinned (no tag, or :latest)",
      "pin a release tag or a digest (@sha256:...), so a sync deploys what was reviewed")
def images_pinned(model):
    for o, ps in model.workloads():
        for path, c in _all_containers(ps):
            image = c.get("image")
            why = unpinned(image) if isinstance(image, str) else None
            if why:
                yield hit(o, path + ("image",), f"image {image!r} {why}")


@rule("PD002", WARNING, "a container sets no cpu or memory request",
      "set resources.requests (cpu, memory, and any accelerator); Kueue and the scheduler count requests only")
def requests_set(model):
    for o, ps in model.workloads():
        for path, c in ps.containers():
            res = c.get("resources") or {}
            asked = set(res.get("requests") or {}) | set(res.get("limits") or {})   # a limit implies the request
            missing = [r for r in ("cpu", "memory") if r not in asked]
            if missing:
                yield hit(o, path + ("resources",), f"container {c.get('name')!r} requests no {' or '.join(missing)}")


@rule("PD003", WARNING, "on Autopilot a container's requests and limits differ",
      "write limits equal to requests for every resource: Autopilot sets them so, and Git should say what runs")
def autopilot_limits(model):
    if not model.autopilot:
        return
    for o, ps in model.workloads():
        for path, c in ps.containers():
            res = c.get("resources") or {}
            req, lim = res.get("requests") or {}, res.get("limits") or {}
            for r in sorted(set(req) | set(lim)):
                if r not in req or r not in lim:
                    where = "limits" if r in lim else "requests"
                    yield hit(o, path + ("resources", where, r), f"{r} is in {where} only")
                    continue
                try:
                    same = quantity.parse(req[r]) == quantity.parse(lim[r])
                except ValueError:
                    continue   # the schema layer reports bad quantities
                if not same:
                    yield hit(o, path + ("resources", "limits", r), f"{r} limit {lim[r]} differs from request {req[r]}")
