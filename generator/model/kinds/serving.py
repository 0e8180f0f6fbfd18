"""Model serving on any engine of the engine catalog (generator/kernel/catalog/engines.py)
and any accelerator: one replica is one pod (a Deployment) or a group of
pods over several hosts (a LeaderWorkerSet, with the engine's documented
multi-node launch). Optional: a PodMonitoring, an HPA on the engine's metric
through Managed Prometheus, and the inference gateway (Gateway, HTTPRoute,
InferencePool pointing at an endpoint picker)."""
from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import Field

from ...kernel import tpu_slices
from ...kernel.catalog.engines import ENGINES, Engine
from ...kernel.catalog.gpudirect import GpuDirect
from ...kernel.errors import Problem
from .. import hardware
from ..check_context import CheckContext
from ..fields import DnsLabel, PositiveCount, ServiceName, SpecModel
from .base import Resources, WorkloadBase
from .gpu import gpu_checks, gpudirect_of, gpudirect_problems
from .tpu_common import shape_checks, slice_of, target, vm_fit
from .tpu_jobset import SHAPE
from .tpu_pd_serving import EndpointPicker, GatewaySpec

DURATION = r"^([1-9][0-9]*)(ms|s|m|h)$"
METRIC = r"^[a-zA-Z_:][a-zA-Z0-9_:]*$"     # a Prometheus metric name
LABEL_VALUE = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
HF_TOKEN_KEY = "hf_api_token"              # the platform's Secret contract (README "Secrets")


class Autoscaling(SpecModel):
    """An HPA on a server metric that Managed Prometheus exports and the Custom Metrics
    Stackdriver Adapter serves (install the adapter once per cluster)."""
    min_replicas: PositiveCount
    max_replicas: PositiveCount
    target: PositiveCount = Field(description="AverageValue per pod of the metric (GKE's vLLM samples: 5 or 10 "
                                              "waiting requests).")
    metric: str | None = Field(None, pattern=METRIC, description="Default: the engine's metric in the catalog.")
    metric_type: Literal["gauge", "counter"] = Field("gauge", description="Prometheus type of `metric`.")


class Monitoring(SpecModel):
    """A PodMonitoring on the engine's metrics endpoint (implied by `autoscaling`)."""
    interval: str = Field("15s", pattern=DURATION)


class InferenceGateway(GatewaySpec):
    """A Gateway, an HTTPRoute to an InferencePool of this workload's serving pods, and the pool's
    endpoint picker: the EPP Service the llm-d router chart installs (see docs/serving.md)."""
    endpoint_picker: EndpointPicker


class Serving(WorkloadBase):
    """A model server: `engine` from the engine catalog, `accelerators` GPUs per pod (or a TPU
    `shape`), `hosts` pods per replica (more than one: a LeaderWorkerSet)."""
    serves: ClassVar = True
    kind: Literal["serving"]
    engine: Literal[tuple(ENGINES)]   # type: ignore[valid-type]
    model: str = Field(min_length=1, max_length=253, pattern=r"^[^\s]+$",
                       description="Model id (Hugging Face) or, for Triton, the model repository path in the pod.")
    replicas: PositiveCount = Field(1, description="Replicas when there is no autoscaling.")
    accelerators: PositiveCount | None = Field(None, description="GPUs per pod; tensor parallelism over them.")
    hosts: PositiveCount = Field(1, description="GPU pods per replica; more than one runs the engine's multi-node "
                                                "launch in a LeaderWorkerSet group.")
    shape: str | None = Field(None, pattern=SHAPE, description="TPU: the slice topology of one replica (a static "
                                                               "node pool's topology).")
    resources: Resources | None = None
    port: int | None = Field(None, ge=1, le=65535, description="Default: the engine's port.")
    engine_args: list[str] = Field(default_factory=list, description="More engine arguments, one argv word each.")
    service_name: ServiceName | None = None
    app_label: DnsLabel | None = None
    http_image: DnsLabel | None = Field(None, description="JetStream: key into `images` of the HTTP front end.")
    monitoring: Monitoring | None = None
    autoscaling: Autoscaling | None = None
    gateway: InferenceGateway | None = None
    gpudirect: bool | None = Field(None, description="GPUDirect networking (TCPX, TCPXO, RDMA) for the pods of a "
                                                     "multi-host group on GPUs whose machine type has it: default "
                                                     "on; false turns it off; true requires it.")

    priority_kind: ClassVar = "priorityClass"

    # ------------------------------------------------------------ what it needs
    @property
    def engine_facts(self) -> Engine:
        return ENGINES[self.engine]

    @property
    def device(self) -> Literal["gpu", "tpu"]:   # type: ignore[override]
        if self.accelerator:
            return "tpu" if hardware.device_of(self.accelerator) == "tpu" else "gpu"
        return "tpu" if self.shape is not None or self.engine_facts.devices == ("tpu",) else "gpu"

    @property
    def multi_host(self) -> bool:
        return self.hosts > 1

    @property
    def frameworks(self) -> tuple[str, ...]:   # type: ignore[override]
        return ("pod", "leaderworkerset.x-k8s.io/leaderworkerset") if self.multi_host else ("pod", "deployment")

    @property
    def controllers(self) -> tuple[str, ...]:   # type: ignore[override]
        return ("lws",) if self.multi_host else ()

    @property
    def required_values(self) -> tuple[str, ...]:   # type: ignore[override]
        e = self.engine_facts
        return ("hfTokenSecret",) if e.token_env or e.hf_mount else ()

    @property
    def root_image(self) -> str:   # type: ignore[override]
        return f"{self.engine_facts.title} server"

    @property
    def service(self) -> str:
        return self.service_name or self.name

    @property
    def app(self) -> str:
        return self.app_label or self.name

    @property
    def serving_port(self) -> int:
        return self.port or self.engine_facts.port

    @property
    def model_label(self) -> str:
        """The ai.gke.io/model label GKE's samples put on serving pods: the model's last path part."""
        return self.model.rstrip("/").rsplit("/", 1)[-1]

    @property
    def scrape(self) -> Monitoring | None:
        return self.monitoring or (Monitoring() if self.autoscaling else None)

    @property
    def pool_name(self) -> str:
        return self.name

    @property
    def launch_config(self) -> str:
        return f"{self.name}-launch"

    def images(self) -> list[tuple[tuple, str]]:
        out = super().images()
        if self.http_image:
            out.append((("httpImage",), self.http_image))
        return out

    def replicas_at_most(self) -> int:
        return self.autoscaling.max_replicas if self.autoscaling else self.replicas

    # ------------------------------------------------------------ checks
    def check(self, ctx: CheckContext) -> list[Problem]:
        out = self._check_engine()
        if self.device == "tpu":
            return out + self._check_tpu(ctx)
        if self.accelerators is None:
            return out + [Problem("accelerators", "give the GPUs of one pod (the engine's tensor parallelism)")]
        return out + gpu_checks(self, ctx, self.accelerators, self.resources) + \
            gpudirect_problems(self, ctx, self.hosts, self.accelerators, self.gpudirect, "accelerators")

    def uses_gpudirect(self, ctx: CheckContext) -> GpuDirect | None:
        """The networking the pods of a multi-host group get (the group's NCCL traffic crosses nodes)."""
        return gpudirect_of(self, ctx, self.hosts, self.accelerators or 0, self.gpudirect)

    def _check_engine(self) -> list[Problem]:
        e = self.engine_facts
        return (self._check_engine_fit(e) + self._check_autoscaling(e) + self._check_model_label()
                + self._check_engine_args(e))

    def _check_engine_fit(self, e: Engine) -> list[Problem]:
        """What the engine catalog says the engine can do: device, multi-host launch, HTTP front end, metrics."""
        out = []
        if self.device not in e.devices:
            out.append(Problem("engine", f"{e.title} runs on {' or '.join(d.upper() + 's' for d in e.devices)} "
                                         f"here; this workload runs on {self.device.upper()}s"))
        if self.multi_host and not e.multi_host:
            out.append(Problem("hosts", f"{e.title} has no multi-node launch in the engine catalog; serve on one "
                                        "host (hosts: 1) or pick an engine that has one (vllm, sglang)"))
        if (self.http_image is None) != (self.engine != "jetstream"):
            out.append(Problem("httpImage", "JetStream needs its HTTP front end (httpImage)" if self.http_image is None
                               else f"only JetStream has an HTTP front end; {e.title} serves HTTP itself"))
        if self.scrape and e.metrics_path is None:
            out.append(Problem("monitoring" if self.monitoring else "autoscaling",
                               f"the engine catalog knows no metrics endpoint of {e.title}"))
        return out

    def _check_autoscaling(self, e: Engine) -> list[Problem]:
        out: list[Problem] = []
        a = self.autoscaling
        if a is None:
            return out
        if a.min_replicas > a.max_replicas:
            out.append(Problem("autoscaling.minReplicas", f"{a.min_replicas} is more than maxReplicas "
                                                          f"({a.max_replicas})"))
        if a.metric is None and e.metric is None:
            out.append(Problem("autoscaling.metric", f"the engine catalog has no autoscaling metric for "
                                                     f"{e.title}: name the metric the HPA scales on"))
        return out

    def _check_model_label(self) -> list[Problem]:
        if not re.fullmatch(LABEL_VALUE, self.model_label) or len(self.model_label) > 63:
            return [Problem("model", f"its last part {self.model_label!r} becomes the ai.gke.io/model label: at "
                                     "most 63 letters, digits, '-', '_' or '.', starting and ending with a letter "
                                     "or digit")]
        return []

    def _check_engine_args(self, e: Engine) -> list[Problem]:
        """engineArgs may not repeat a flag the generator writes itself: the engine would see it twice."""
        out = []
        own = _own_flags(e)
        for i, arg in enumerate(self.engine_args):
            flag = arg.split("=", 1)[0]
            if flag in own:
                out.append(Problem(f"engineArgs[{i}]", f"{flag} is set by the generator (from model, "
                                                       "accelerators and port); remove it from engineArgs"))
        return out

    def _check_tpu(self, ctx: CheckContext) -> list[Problem]:
        out = []
        if self.shape is None:
            return [Problem("shape", "a TPU server names the slice topology of one replica (`shape`)")]
        if self.accelerators is not None:
            out.append(Problem("accelerators", "on TPUs the chips per pod follow from `shape`; remove accelerators"))
        if self.hosts != 1:
            out.append(Problem("hosts", "on TPUs the hosts follow from `shape`; remove hosts"))
        t = target(self, ctx)
        if t is not None and t.dynamic:
            return out + [Problem("shape", "serving runs on static TPU node pools here; on a TPU7x reservation "
                                           "use the tpu-pd-serving kind")]
        bad = shape_checks(self, ctx, None, "replicas")
        if bad:
            return out + bad
        s = slice_of(self, ctx)
        if s is not None and s.pods > 1:
            out.append(Problem("shape", f"a {self.shape} slice spans {s.pods} VMs; multi-host TPU serving is not "
                                        "in the engine catalog yet: pick a one-VM topology"))
        out += [Problem("resources", f"TPU pods need explicit {r} requests (a pod takes a whole VM)")
                for r in ("cpu", "memory") if r not in (self.resources.requests() if self.resources else {})]
        return out + vm_fit(self, ctx, [("resources", self.resources.requests() if self.resources else {})])

    def slice_demand(self, ctx: CheckContext) -> tpu_slices.Demand | None:
        return None   # static pools only: the dynamic-slicing fit check does not apply

    # ------------------------------------------------------------ demand
    def per_pod(self, ctx: CheckContext) -> tuple[str | None, int, int]:
        """(accelerator, accelerators per pod, pods per replica) on this profile."""
        accel = hardware.accelerator_for(self, ctx.profile, ctx.platform)
        if self.device == "tpu":
            s = slice_of(self, ctx)
            return (accel, s.tpus_per_pod, s.pods) if s else (accel, 0, 1)
        return accel, self.accelerators or 0, self.hosts

    def names_of_objects(self) -> list[tuple[str, str]]:
        out = [("LeaderWorkerSet" if self.multi_host else "Deployment", self.name), ("Service", self.service)]
        if self.engine_facts.script:
            out.append(("ConfigMap", self.launch_config))
        if self.scrape:
            out.append(("PodMonitoring", self.name))
        if self.autoscaling:
            out.append(("HorizontalPodAutoscaler", self.name))
        if self.gateway:
            out += [("Gateway", self.gateway.name), ("InferencePool", self.pool_name),
                    ("HTTPRoute", f"{self.name}-route")]
        return out


def _own_flags(e: Engine) -> set[str]:
    """The flags the generator writes for this engine (engineArgs may not repeat them)."""
    return {m.group(0) for a in e.args for m in [re.match(r"^--[A-Za-z0-9_-]+", a)] if m}
