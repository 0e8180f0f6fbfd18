"""What the validator checks an input against: the Kubernetes minor, the
Kueue/JobSet/LWS releases whose CRDs apply, and whether the cluster is
Autopilot. Overlays built from the spec take them from the spec (the
profile's platform and Kueue version); other inputs from the spec's
top-level pins, a named --profile, or the flags.

The spec is read through the one typed model (generator.model, which imports
neither cdk8s nor Node), so validate and synth agree on every default; a
spec with problems stops validate with synth's own lines (exit 2)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import model as spec_model
from ..kernel import versions
from ..kernel.errors import SpecError
from ..model import Platform, Profile


class UsageError(Exception):
    """The validator cannot run: exit 2 with this message."""


@dataclass(frozen=True)
class Target:
    k8s: str
    kueue: str
    jobset: str
    lws: str
    autopilot: bool
    profile: str | None = None

    def describe(self) -> dict:
        return {"kubernetesVersion": self.k8s, "kueueVersion": self.kueue, "jobsetVersion": self.jobset,
                "lwsVersion": self.lws, "autopilot": self.autopilot, "profile": self.profile}


def read_spec(path: Path, explicit: bool) -> Platform | None:
    """The typed spec, or None when the default spec is absent (arbitrary inputs need none)."""
    if not path.exists() and not explicit:
        return None
    try:
        return spec_model.load(path)
    except SpecError as e:
        raise UsageError(e.render()) from None


def _pick(kind: str, value, known: list[str], source: str) -> str:
    if value not in known:
        raise UsageError(f"{source}: {kind} {value!r} is not pinned in schemas/versions.yaml (known: {', '.join(known)})")
    return value


def profiles(spec: Platform | None) -> dict:
    return spec.profiles if spec is not None else {}


def _profile(spec: Platform | None, spec_name: str, profile: str | None) -> Profile | None:
    """The named profile of the spec (None when no --profile was given)."""
    if profile is None:
        return None
    if profile not in profiles(spec):
        raise UsageError(f"{spec_name}: no profile {profile!r} (profiles: {', '.join(sorted(profiles(spec))) or 'none'})")
    return profiles(spec)[profile]


def _kubernetes(spec: Platform | None, k8s: str | None) -> str:
    """The Kubernetes minor: the flag, else the spec's, else the pinned default; it must have bundled schemas."""
    supported = [str(v) for v in versions.table()["kubernetes"]["supported"]]
    k8s = str(k8s or (spec.kubernetes_version if spec else versions.table()["kubernetes"]["default"]))
    if k8s not in supported:
        raise UsageError(f"Kubernetes {k8s} has no bundled schemas (supported: {', '.join(supported)})")
    return k8s


def target(spec: Platform | None, spec_name: str, profile: str | None = None, k8s: str | None = None,
           kueue: str | None = None, autopilot: bool = False) -> Target:
    prof = _profile(spec, spec_name, profile)
    k8s = _kubernetes(spec, k8s)
    kueue = kueue or (prof and prof.kueue_version) or (spec.kueue.version if spec else versions.default("kueue"))
    return Target(
        k8s=k8s,
        kueue=_pick("Kueue", kueue, versions.known("kueue"), spec_name),
        jobset=_pick("JobSet", spec.jobset.version if spec else versions.default("jobset"),
                     versions.known("jobset"), spec_name),
        lws=_pick("LWS", spec.lws.version if spec else versions.default("lws"), versions.known("lws"), spec_name),
        autopilot=autopilot or (prof is not None and prof.platform == "autopilot"),
        profile=profile,
    )
