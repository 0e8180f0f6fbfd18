"""T5 on TorchServe, autoscaled on queue latency, with the tutorial's optional
web client and Locust load generator."""
from __future__ import annotations

import re
from typing import Annotated, ClassVar, Literal

from pydantic import Field

from ...kernel.errors import Problem
from ..check_context import CheckContext
from ..fields import DnsLabel, PositiveCount, ServiceName, SpecModel
from ..pod import Security
from .base import ImageContract, Resources, WorkloadBase, autopilot_requests
from .gpu import gpu_checks

DURATION = r"^([1-9][0-9]*)(ms|s|m|h)$"
_DURATION = re.compile(DURATION)
MODEL_VERSION = r"^[0-9]+(\.[0-9]+)*$"
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}
# A duration both Prometheus and Go parse (the PodMonitoring CRD field has format: duration).
Duration = str


def duration_ms(text: str) -> int:
    """'60s' -> 60000."""
    m = _DURATION.match(text)
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    return int(m.group(1)) * _UNIT_MS[m.group(2)]


class T5Model(SpecModel):
    """Name and version of the model archive in the image (torch-model-archiver --model-name/--version)."""
    name: DnsLabel
    version: str = Field(pattern=MODEL_VERSION, max_length=60)


class Autoscaling(SpecModel):
    min_replicas: PositiveCount
    max_replicas: PositiveCount
    queue_latency_target: PositiveCount = Field(description=(
        "HPA AverageValue target per pod for TorchServe's ts_queue_latency_microseconds counter as the "
        "metrics adapter serves it (a rate: microseconds queued per second). Tutorial: 30000."))


class Monitoring(SpecModel):
    interval: Duration = Field(pattern=_DURATION.pattern)
    timeout: Duration = Field(pattern=_DURATION.pattern)


# The tutorial's client-app image (kubernetes-engine-samples ai-ml/t5-model-serving/client-app/Dockerfile,
# FROM python:3.12.7-alpine) sets no USER, so it runs as root unless told otherwise.
CLIENT_IMAGE = "fastdash (the tutorial's client-app)"
# locustio/locust's Dockerfile: `RUN useradd --create-home locust` then `USER locust`, on a Debian
# Python image where the first account useradd creates gets uid 1000 (UID_MIN in Debian's
# /etc/login.defs). The kubelet cannot check runAsNonRoot against a user given by name, so the
# uid is written out.
LOCUST_UID = 1000


class Client(SpecModel):
    """The fastdash web client (Deployment and Service), pointed at this model."""
    name: ServiceName = "fastdash"
    image: DnsLabel
    resources: Resources
    security: Security = Field(default_factory=Security, description=(
        "How the client runs. Its image sets no USER (root): declare `runAsRoot: true` or give a `runAsUser`."))


class LoadGenerator(SpecModel):
    """Locust running images/t5-loadgen/locustfile.py against this model."""
    name: ServiceName = "loadgenerator"
    image: DnsLabel
    users: PositiveCount
    spawn_rate: Annotated[int | float, Field(gt=0)]
    log_level: Literal["debug", "info", "warning", "error", "critical"] = "error"
    resources: Resources
    security: Security = Field(default_factory=Security, description=(
        f"How Locust runs; by default as the image's own user, uid {LOCUST_UID}, non-root."))


class T5Inference(WorkloadBase):
    """T5 translation on TorchServe (images/t5-torchserve), autoscaled on queue latency: Deployment (no
    replicas: the HPA owns them), Service, PodMonitoring and HorizontalPodAutoscaler; optionally the
    tutorial's web client and Locust load generator."""
    serves: ClassVar = True
    kind: Literal["t5-inference"]
    model: T5Model
    gpus: PositiveCount
    resources: Resources
    service_name: ServiceName | None = None
    autoscaling: Autoscaling
    monitoring: Monitoring
    client: Client | None = None
    load_generator: LoadGenerator | None = None

    priority_kind: ClassVar = "priorityClass"
    frameworks: ClassVar = ("pod", "deployment")
    device: ClassVar = "gpu"
    # images/t5-torchserve/Dockerfile: USER 1000:1000; TorchServe writes TEMP=/home/model-server/tmp
    # (the unpacked archive) and /home/model-server/logs.
    image_contract: ClassVar = ImageContract("images/t5-torchserve", 1000,
                                             ("/tmp", "/home/model-server/tmp", "/home/model-server/logs"))

    @property
    def service(self) -> str:
        return self.service_name or self.name

    def images(self) -> list[tuple[tuple, str]]:
        out = super().images()
        if self.client:
            out.append((("client", "image"), self.client.image))
        if self.load_generator:
            out.append((("loadGenerator", "image"), self.load_generator.image))
        return out

    def check(self, ctx: CheckContext) -> list[Problem]:
        out = gpu_checks(self, ctx, self.gpus, self.resources)
        a, m = self.autoscaling, self.monitoring
        if a.min_replicas > a.max_replicas:
            out.append(Problem("autoscaling.minReplicas", f"{a.min_replicas} is more than maxReplicas ({a.max_replicas})"))
        if duration_ms(m.timeout) > duration_ms(m.interval):
            out.append(Problem("monitoring.timeout", f"{m.timeout} is longer than the scrape interval ({m.interval})"))
        if self.client:
            out += autopilot_requests(self.client.resources, ctx, "client.resources")
            sec = self.client.security
            if not sec.run_as_root and sec.run_as_user is None:
                out.append(Problem("client.security", f"the {CLIENT_IMAGE} image runs as root: say so with "
                                                      "`security: {runAsRoot: true}`, or give a runAsUser it supports"))
        if self.load_generator:
            out += autopilot_requests(self.load_generator.resources, ctx, "loadGenerator.resources")
        return out

    def companions(self) -> dict[tuple[str, str], tuple[str, Security, int | None]]:
        out: dict[tuple[str, str], tuple[str, Security, int | None]] = {}
        if self.client:
            out[("Deployment", self.client.name)] = ("client.security", self.client.security, None)
        if self.load_generator:
            out[("Deployment", self.load_generator.name)] = ("loadGenerator.security", self.load_generator.security,
                                                             LOCUST_UID)
        return out

    def names_of_objects(self) -> list[tuple[str, str]]:
        out = [("Deployment", self.name), ("Service", self.service), ("PodMonitoring", self.name),
               ("HorizontalPodAutoscaler", self.name)]
        for block in (self.client, self.load_generator):
            if block:
                out += [("Deployment", block.name), ("Service", block.name)]
        return out
