"""What every generated pod gets, applied once to the emitted objects of an
overlay, each with the workload that emitted it (generator/builders/tree.py; the pod
templates are found by the demand module, so every kind is covered the same way):

- hardening: seccomp RuntimeDefault for the pod; no privilege escalation and
  all capabilities dropped for every container; the project's own images run
  as their non-root user with a read-only root filesystem and an emptyDir for
  each path they write; upstream images as the spec's `security` says;
- the workload's `pod:` additions on its queued objects: environment and
  mounts on the main containers, labels, annotations, node selectors,
  tolerations and volumes on the pod."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..kernel import demand
from ..kernel.errors import Problem
from ..model import Platform, Profile, flavors as flavors_mod
from ..model.kinds import Workload
from ..model.kinds.base import ImageContract
from ..model.pod import PodExtras, Security

SECCOMP = {"type": "RuntimeDefault"}


def _at(obj: dict, path: tuple) -> dict:
    node: Any = obj
    for part in path:
        node = node[part]
    return node


def _volume_name(path: str) -> str:
    return "writable" + path.replace("/", "-").replace(".", "-").replace("_", "-").lower()


def harden(template: dict, security: Security | None, contract: ImageContract | None = None,
           image_uid: int | None = None) -> bool:
    """Make one pod template run hardened (see the module docstring). `image_uid`: the non-root
    uid an upstream image runs as. True when the pod runs as non-root."""
    spec = template.setdefault("spec", {})
    non_root = _harden_pod(spec, security, _run_as(security, contract, image_uid))
    read_only = _read_only_root(security, contract)
    writable = contract.writable if (contract and read_only) else ()
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            # init containers keep a writable root: they prepare files before the main ones start
            _harden_container(c, read_only and key == "containers", writable)
    _add_writable_volumes(spec, writable)
    return non_root


def _run_as(security: Security | None, contract: ImageContract | None, image_uid: int | None) -> int | None:
    """The uid the pod runs as: the spec's runAsUser, else the project image's own user, else the upstream image's."""
    if security and security.run_as_user:
        return security.run_as_user
    return contract.uid if contract else image_uid


def _harden_pod(spec: dict, security: Security | None, uid: int | None) -> bool:
    """The pod's securityContext: seccomp always, the uid unless the spec asks for root. True when non-root."""
    pod_sc = spec.setdefault("securityContext", {})
    pod_sc.setdefault("seccompProfile", dict(SECCOMP))
    if uid is not None and not (security and security.run_as_root):
        pod_sc.update(runAsUser=uid, runAsGroup=uid, fsGroup=uid, runAsNonRoot=True)
        return True
    # a team's own manifest (kind `manifest`) that says so itself
    return pod_sc.get("runAsNonRoot") is True and isinstance(pod_sc.get("runAsUser"), int) and pod_sc["runAsUser"] > 0


def _read_only_root(security: Security | None, contract: ImageContract | None) -> bool:
    """The spec's readOnlyRootFilesystem when it says; else read-only exactly for the project's own images."""
    if security and security.read_only_root_filesystem is not None:
        return security.read_only_root_filesystem
    return contract is not None


def _harden_container(c: dict, read_only: bool, writable: tuple[str, ...]) -> None:
    """No privilege escalation, no capabilities; a read-only root gets a mount for each path the image writes."""
    sc = c.setdefault("securityContext", {})
    sc.setdefault("allowPrivilegeEscalation", False)
    sc.setdefault("capabilities", {"drop": ["ALL"]})
    if read_only:
        sc["readOnlyRootFilesystem"] = True
        mounted = {m["mountPath"] for m in c.get("volumeMounts") or []}
        c.setdefault("volumeMounts", []).extend(
            {"name": _volume_name(p), "mountPath": p} for p in writable if p not in mounted)


def _add_writable_volumes(spec: dict, writable: tuple[str, ...]) -> None:
    """An emptyDir per writable path (once per pod); an empty volume list is dropped again."""
    if writable:
        volumes = spec.setdefault("volumes", [])
        have = {v["name"] for v in volumes}
        for p in writable:
            if _volume_name(p) not in have:
                volumes.append({"name": _volume_name(p), "emptyDir": {}})
    if not spec.get("volumes"):
        spec.pop("volumes", None)


def extend(template: dict, w: Workload, where: str) -> list[Problem]:
    """Add the workload's `pod:` entries to one pod template; what would hide a generated
    entry is a problem instead."""
    extras = w.pod
    meta = template.setdefault("metadata", {})
    spec = template.setdefault("spec", {})
    out = _extend_metadata(meta, extras, where)
    out += _extend_node_selector(spec, extras, where)
    spec.setdefault("tolerations", []).extend(t.body() for t in extras.tolerations)
    spec.setdefault("volumes", []).extend(v.body() for v in extras.volumes)
    for c in spec.get("containers") or []:
        out += _extend_container(c, extras, where)
    for key in ("tolerations", "volumes"):
        if not spec[key]:
            del spec[key]
    for key in ("labels", "annotations"):
        if key in meta and not meta[key]:
            del meta[key]
    return out


def _extend_metadata(meta: dict, extras: PodExtras, where: str) -> list[Problem]:
    out = []
    for field, items in (("labels", extras.labels), ("annotations", extras.annotations)):
        have = meta.setdefault(field, {}) if items else meta.get(field, {})
        for k, v in items.items():
            if k in have and have[k] != v:
                out.append(Problem(f"{where}.pod.{field}.{k}", f"the generator sets {k} on these pods itself"))
            have[k] = v
    return out


def _extend_node_selector(spec: dict, extras: PodExtras, where: str) -> list[Problem]:
    out = []
    if extras.node_selector:
        selector = spec.setdefault("nodeSelector", {})
        for k, v in extras.node_selector.items():
            if k in selector and selector[k] != v:
                out.append(Problem(f"{where}.pod.nodeSelector.{k}", f"the generator selects {k}={selector[k]}"))
            selector[k] = v
    return out


def _extend_container(c: dict, extras: PodExtras, where: str) -> list[Problem]:
    """The extra env and volume mounts, in one container; empty lists are dropped again."""
    out = []
    env = c.setdefault("env", [])
    names = {e["name"] for e in env}
    for k, v in extras.env.items():
        if k in names:
            out.append(Problem(f"{where}.pod.env.{k}", f"the generator sets {k} in container {c['name']!r}"))
        env.append({"name": k, "value": v})
    c.setdefault("volumeMounts", []).extend(m.body() for m in extras.volume_mounts)
    for key in ("env", "volumeMounts"):
        if not c[key]:
            del c[key]
    return out


def keep_off_for(platform: Platform, profile: Profile) -> Callable[[Workload], list[dict]]:
    """For a workload of the profile: the node selector requirements that keep its pods off the
    capacity it may not use (the profile's flavors read once, not once a workload)."""
    fs = flavors_mod.flavors(platform, profile)
    return lambda w: flavors_mod.capacity_affinity(fs, platform.capacity_of(w))[0]


def keep_off(template: dict, requirements: list[dict]) -> None:
    """Add the requirements to every required node affinity term of a pod template (terms are
    ORed, a term's expressions ANDed), or as its one term."""
    if not requirements:
        return
    spec = template.setdefault("spec", {})
    node = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
    required = node.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = required.setdefault("nodeSelectorTerms", [])
    if not terms:
        terms.append({})
    for term in terms:
        have = term.setdefault("matchExpressions", [])
        have.extend(dict(r, values=list(r["values"])) for r in requirements if r not in have)


def _sorted(value: Any) -> Any:
    """Keys in order, as cdk8s writes the typed pod templates this module edits: the edits
    come after cdk8s rendered them (they depend on every pod template of the overlay, the
    embedded ones included), and the written output keeps cdk8s' order."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def apply(pairs: list[tuple[dict, tuple[int, Workload] | str | None]],
          keep_off_for: Callable[[Workload], list[dict]] | None = None) -> list[Problem]:
    """Harden every pod template of a folder's objects and add each workload's extras to its
    queued objects (in place). `pairs`: each emitted object with what emitted it: a workload
    (its index in the spec, and the workload), a string for a user's constructs (their pods
    are hardened and must say themselves that they run as non-root), None for the generator's
    objects of no workload (which have no pods). A clash with what the generator sets is a
    SpecError. `keep_off_for`: a workload's node selector requirements that keep its pods off
    the capacity it may not use (an overlay's; base/ has no pods)."""
    problems: list[Problem] = []
    for obj, owner in pairs:
        meta = obj.get("metadata", {})
        for ps in demand.podsets(obj):
            template = _at(obj, ps.path) if ps.path else obj
            if owner is None:   # every generated pod belongs to a workload
                raise AssertionError(f"pod template of {obj.get('kind')}/{meta.get('name')} has no owner in the spec")
            problems += _apply_one(template, obj, owner, keep_off_for)
            template.update(_sorted(dict(template)))
    return problems


def _apply_one(template: dict, obj: dict, owner: tuple[int, Workload] | str,
               keep_off_for: Callable[[Workload], list[dict]] | None) -> list[Problem]:
    meta = obj.get("metadata", {})
    if isinstance(owner, str):
        if harden(template, None):
            return []
        return [Problem(owner, f"the pods of {obj.get('kind')} {meta.get('name')} would run as root: give them "
                               "runAsNonRoot: true and a runAsUser in the pod's securityContext")]
    i, w = owner
    companion = w.companions().get((str(obj.get("kind")), str(meta.get("name"))))
    out: list[Problem] = []
    if companion is None:
        out += extend(template, w, f"workloads[{i}]")
        if keep_off_for is not None:
            keep_off(template, keep_off_for(w))
        where, security, non_root = f"workloads[{i}].security", w.security, \
            harden(template, w.security, w.image_contract)
    else:
        field, security, uid = companion
        where, non_root = f"workloads[{i}].{field}", harden(template, security, None, uid)
    if not non_root and not security.run_as_root:
        out.append(Problem(where, "these pods would run as root: say so with `runAsRoot: true` "
                                  "(the image needs it), or give a runAsUser"))
    return out
