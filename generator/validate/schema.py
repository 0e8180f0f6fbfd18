"""The schema layer: every object against its schema (core kinds at the
pinned Kubernetes minor, custom resources at the pinned CRD, objects closed
so unknown fields are errors), plus served/deprecated versions."""
from __future__ import annotations

from ..kernel.apiscope import WELL_KNOWN_NAMESPACED
from ..kernel.errors import Problem
from .findings import INFO, WARNING
from .rules import hit

_MAX = 240


def _short(text: str) -> str:
    return text if len(text) <= _MAX else text[:_MAX - 3] + "..."


def _message(err) -> str:
    if err.context:  # anyOf/oneOf: the most specific branch says what is wrong
        from jsonschema.exceptions import best_match
        err = best_match([err])
    if err.validator in ("additionalProperties", "unevaluatedProperties"):
        allowed = sorted(err.schema.get("properties") or {})
        if allowed:
            return _short(f"{err.message} (allowed: {', '.join(allowed)})")
    return _short(err.message)


def built_in(schemas, api: str, kind: str) -> bool:
    """A kind of Kubernetes itself (some version of it has a bundled schema), or of a group
    without a dot (the core API groups): a missing schema is then an error, not a CRD
    that may be installed elsewhere."""
    group = api.rpartition("/")[0]
    return "." not in group or schemas.core_kind_known(group, kind)


def check(schemas, obj) -> list[tuple[str, Problem]]:
    """[(rule id, hit)] for one object."""
    body = obj.body
    api, kind = body.get("apiVersion"), body.get("kind")
    validator = schemas.validator(api, kind)
    if validator is None:
        message = f"no schema for {kind} {api} (Kubernetes {schemas.k8s_minor} or the pinned CRDs)"
        missing = None if built_in(schemas, api, kind) else f"the CRD of {kind} {api}"
        if (obj.group, kind) in WELL_KNOWN_NAMESPACED:
            # A job kind Kueue manages (TrainJob, RayJob, ...): it exists, its CRD is just not
            # pinned here. Not checked, in any world; its cross-object rules still run.
            return [("SC002", hit(obj, ("apiVersion",), f"{message}: a kind Kueue manages whose CRD is not "
                                  f"pinned; its fields are not checked", severity=INFO))]
        return [("SC002", hit(obj, ("apiVersion",), message, missing=missing))]
    out = []
    info = schemas.crd_info(api, kind)
    if info is not None:
        path, served, deprecated, _ = info
        if not served:
            out.append(("SC003", hit(obj, ("apiVersion",), f"{api} {kind} is not served by the pinned release")))
        elif deprecated:
            storage = _storage_hint(schemas, api, kind)
            out.append(("SC004", hit(obj, ("apiVersion",), f"{api} {kind} is deprecated in the pinned release"
                                     + (f"; use {storage}" if storage else ""), severity=WARNING)))
    errors = sorted(validator.iter_errors(body), key=lambda e: [str(p) for p in e.absolute_path])
    for e in errors:
        out.append(("SC001", hit(obj, tuple(e.absolute_path), _message(e))))
    return out


def _storage_hint(schemas, api: str, kind: str) -> str | None:
    """Another served, non-deprecated version of the same group and kind."""
    group = api.rpartition("/")[0]
    return next((v for v, served, deprecated in schemas.crd_versions(group, kind)
                 if served and not deprecated and v != api), None)
