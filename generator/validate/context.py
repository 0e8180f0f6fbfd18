"""What the validator checks an input against: the Kubernetes minor, the
Kueue/JobSet/LWS releases whose CRDs apply, and whether the cluster is
Autopilot. Overlays built from the spec take them from the spec (the
profile's platform and Kueue version); other inputs from the spec's
top-level pins, a named --profile, or the flags.

The spec is read raw (not through generator.spec): its full check imports
the workload kinds and with them cdk8s and Node, seconds the validator must
not spend. `python -m generator check` validates the spec itself."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import userinput, versions
from ..errors import SpecError


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


def read_spec(path: Path, explicit: bool) -> dict | None:
    """The raw spec, or None when the default spec is absent (arbitrary inputs need none)."""
    if not path.exists() and not explicit:
        return None
    try:
        return userinput.load_mapping(path, "spec")
    except SpecError as e:   # problems of the whole file: no field path to show
        raise UsageError("\n".join(f"{e.source}: {p.message}" for p in e.problems)) from None


def _pick(kind: str, value, known: list[str], source: str) -> str:
    if value not in known:
        raise UsageError(f"{source}: {kind} {value!r} is not pinned in schemas/versions.yaml (known: {', '.join(known)})")
    return value


def profiles(spec: dict | None) -> dict:
    p = (spec or {}).get("profiles")
    return p if isinstance(p, dict) else {}


def target(spec: dict | None, spec_name: str, profile: str | None = None, k8s: str | None = None,
           kueue: str | None = None, autopilot: bool = False) -> Target:
    spec = spec or {}
    section = lambda key: spec.get(key) if isinstance(spec.get(key), dict) else {}  # noqa: E731
    prof = {}
    if profile is not None:
        if profile not in profiles(spec):
            raise UsageError(f"{spec_name}: no profile {profile!r} (profiles: {', '.join(sorted(profiles(spec))) or 'none'})")
        prof = profiles(spec)[profile] if isinstance(profiles(spec)[profile], dict) else {}
    supported = [str(v) for v in versions.table()["kubernetes"]["supported"]]
    k8s = str(k8s or spec.get("kubernetesVersion") or versions.table()["kubernetes"]["default"])
    if k8s not in supported:
        raise UsageError(f"Kubernetes {k8s} has no bundled schemas (supported: {', '.join(supported)})")
    kueue = kueue or prof.get("kueueVersion") or section("kueue").get("version") or versions.default("kueue")
    return Target(
        k8s=k8s,
        kueue=_pick("Kueue", kueue, versions.known("kueue"), spec_name),
        jobset=_pick("JobSet", section("jobset").get("version") or versions.default("jobset"),
                     versions.known("jobset"), spec_name),
        lws=_pick("LWS", section("lws").get("version") or versions.default("lws"), versions.known("lws"), spec_name),
        autopilot=autopilot or prof.get("platform") == "autopilot",
        profile=profile,
    )
