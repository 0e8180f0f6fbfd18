"""Helpers for typed core objects (cdk8s-plus-33's `Kube*` classes and structs,
through generator/builders/k8s.py). Only typed structs go into core kinds' props: a plain
dict inside a typed prop would keep snake_case or unknown keys silently."""
from __future__ import annotations

import functools

from ..kernel import catalog
from ..model import Profile
from . import k8s


def meta(name: str, namespace: str | None = None, labels: dict | None = None,
         annotations: dict | None = None) -> k8s.ObjectMeta:
    return k8s.ObjectMeta(name=name, namespace=namespace, labels=labels or None,
                          annotations=annotations or None)


def qty(value) -> k8s.Quantity:
    """A Quantity, one per distinct value for the whole run: each new one is a call to Node."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _quantity_number(value)
    return _quantity_string(str(value))


def int_or_string(value: int | str) -> k8s.IntOrString:
    """An IntOrString (a port by number or by name), one per distinct value, as qty."""
    return _ios_number(value) if isinstance(value, int) else _ios_string(value)


# Keyed by type too: 2 and 2.0 would be one cache entry, and cdk8s writes them alike anyway.
_quantity_number = functools.lru_cache(maxsize=None, typed=True)(k8s.Quantity.from_number)
_quantity_string = functools.lru_cache(maxsize=None)(k8s.Quantity.from_string)
_ios_number = functools.lru_cache(maxsize=None)(k8s.IntOrString.from_number)
_ios_string = functools.lru_cache(maxsize=None)(k8s.IntOrString.from_string)


def env(name: str, value) -> k8s.EnvVar:
    return k8s.EnvVar(name=name, value=str(value))


def env_field(name: str, field_path: str) -> k8s.EnvVar:
    """An env var from the downward API (a fieldRef on the pod's own metadata)."""
    return k8s.EnvVar(name=name, value_from=k8s.EnvVarSource(field_ref=k8s.ObjectFieldSelector(field_path=field_path)))


def env_secret(name: str, secret: str, key: str) -> k8s.EnvVar:
    # Secrets are referenced by name only; their values never enter the output.
    return k8s.EnvVar(name=name, value_from=k8s.EnvVarSource(
        secret_key_ref=k8s.SecretKeySelector(name=secret, key=key)))


def container_resources(profile: Profile, requests: dict, accelerators: dict[str, int] | None = None) -> k8s.ResourceRequirements:
    """Requests and limits by the profile's rules.

    Autopilot sets limits equal to requests for every resource, so we write
    them that way and the manifest says what runs. Standard lets CPU burst
    (no CPU limit, no CFS throttling of tokenizer and data-loader threads);
    memory, ephemeral storage and accelerators keep limit = request."""
    reqs = {r: requests[r] for r in ("cpu", "memory", "ephemeral-storage") if r in requests}
    reqs.update({r: str(n) for r, n in (accelerators or {}).items() if n})
    limits = dict(reqs) if profile.autopilot else {r: v for r, v in reqs.items() if r != "cpu"}
    return k8s.ResourceRequirements(
        requests={r: qty(v) for r, v in reqs.items()} or None,
        limits={r: qty(v) for r, v in limits.items()} or None,
    )


def accelerator_selector(accelerator: str) -> dict:
    # Autopilot needs it to pick the Accelerator compute class; on Standard it
    # keeps the pod off other accelerators' pools (and Kueue off their flavors).
    return catalog.accelerator(accelerator).node_labels()


def accelerator_request(accelerator: str, count: int) -> dict[str, int]:
    return {catalog.accelerator(accelerator).resource: count}


def shm_volume() -> k8s.Volume:
    return k8s.Volume(name="dshm", empty_dir=k8s.EmptyDirVolumeSource(medium="Memory"))


def shm_mount() -> k8s.VolumeMount:
    return k8s.VolumeMount(name="dshm", mount_path="/dev/shm")
