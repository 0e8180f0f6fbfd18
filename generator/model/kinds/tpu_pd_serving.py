"""Prefill/decode disaggregated vLLM on TPU sub-slices (the dynamic-slicing codelab)."""
from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from ...kernel import tpu_slices
from ...kernel.errors import Problem
from ..check_context import CheckContext
from ..fields import Count, DnsLabel, EnvName, Port, PositiveCount, SpecModel
from .base import Resources, WorkloadBase
from .tpu_common import shape_checks, slice_of, target, vm_fit
from .tpu_jobset import SHAPE

ROLES = ("prefill", "decode")
MODEL_LABEL = "llm-d.ai/model"
# KV-cache transfer ports of tpu_inference's TPU connector; the pods' container ports.
KV_TRANSFER_PORT, SIDE_CHANNEL_PORT = 9100, 9600
# Flags the generator sets itself; engineArgs may not repeat them.
OWN_FLAGS = ("--model", "--load-format", "--served-model-name", "--tensor-parallel-size",
             "--kv-transfer-config", "--port", "--disable-access-log-for-endpoints")


class Role(SpecModel):
    replicas: Count = Field(description="LWS groups, one slice each.")
    name: DnsLabel | None = Field(None, description="LeaderWorkerSet name; default: <workload name>-<role>.")


class ServedModel(SpecModel):
    served_name: str = Field(min_length=1, pattern=r"^[^\s]+$",
                             description="--served-model-name; its last path part is the llm-d.ai/model label.")
    path: str = Field(pattern=r"^[^/\s][^\s]*$", description="Weights path inside the profile's modelBucket.")


class Sidecar(SpecModel):
    """The llm-d routing sidecar in decode leaders."""
    image: DnsLabel
    resources: Resources


class GatewaySpec(SpecModel):
    name: DnsLabel
    class_name: str = Field(pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", max_length=253)
    port: Port = 80


class EndpointPicker(SpecModel):
    """The EPP Service the llm-d router chart creates; written to the pool's endpointPickerRef."""
    service: DnsLabel
    port: Port = 9002
    failure_mode: Literal["FailOpen", "FailClose"] = "FailOpen"


class HealthCheck(SpecModel):
    path: str = Field("/health", pattern=r"^/[^\s]*$")


class BackendPolicy(SpecModel):
    timeout_sec: PositiveCount
    logging: bool = False


class TpuPdServing(WorkloadBase):
    """Prefill/decode disaggregated vLLM on TPU sub-slices: prefill and decode LeaderWorkerSets, a
    Gateway, an HTTPRoute, an InferencePool (named like the workload) and optional GKE health-check and
    backend policies. The endpoint picker comes from the llm-d router Helm chart."""
    serves: ClassVar = True
    kind: Literal["tpu-pd-serving"]
    shape: str = Field(pattern=SHAPE)
    prefill: Role
    decode: Role
    model: ServedModel
    engine_args: list[str] = Field(default_factory=list, description="More `vllm serve` arguments, one argv word each.")
    engine_env: dict[EnvName, str] = Field(default_factory=dict,
                                           description="Overrides or additions to the vLLM TPU environment.")
    resources: Resources
    sidecar: Sidecar
    port: Port = Field(8000, description="Port the pool targets: prefill vLLM and the decode sidecar.")
    decode_engine_port: Port = 8200
    guide: str | None = Field(None, pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", max_length=63,
                              description="llm-d.ai/guide label of the pods the pool selects; default: the name.")
    gateway: GatewaySpec
    endpoint_picker: EndpointPicker
    health_check: HealthCheck | None = None
    backend_policy: BackendPolicy | None = None

    priority_kind: ClassVar = "workloadPriorityClass"
    frameworks: ClassVar = ("pod", "leaderworkerset.x-k8s.io/leaderworkerset")
    controllers: ClassVar = ("lws",)
    device: ClassVar = "tpu"
    required_values: ClassVar = ("modelBucket", "serviceAccount", "hfTokenSecret")
    root_image: ClassVar = "vLLM TPU"

    def role(self, role: str) -> Role:
        return self.prefill if role == "prefill" else self.decode

    def lws_name(self, role: str) -> str:
        return self.role(role).name or f"{self.name}-{role}"

    @property
    def guide_label(self) -> str:
        return self.guide or self.name

    @property
    def model_label(self) -> str:
        return self.model.served_name.rsplit("/", 1)[-1]

    def images(self) -> list[tuple[tuple, str]]:
        return super().images() + [(("sidecar", "image"), self.sidecar.image)]

    def slice_demand(self, ctx: CheckContext) -> tpu_slices.Demand | None:
        shape = slice_of(self, ctx)
        if shape is None:
            return None
        # Each LWS group is its own Kueue workload: admitted one slice at a time,
        # but every replica is wanted at once.
        slices = sum(self.role(r).replicas for r in ROLES)
        split = " + ".join(f"{self.role(r).replicas} {r}" for r in ROLES)
        return tpu_slices.Demand(slices * shape.chips, shape.chips, shape.chips, f"{slices} LWS groups ({split}) of {shape.text}")

    def check(self, ctx: CheckContext) -> list[Problem]:
        out = self._check_engine() + self._check_ports()
        out += [Problem(f"{where}resources", f"TPU pods need explicit {r} requests")
                for where, res in (("", self.resources), ("sidecar.", self.sidecar.resources))
                for r in ("cpu", "memory") if r not in res.requests()]
        t = target(self, ctx)
        if t is not None and not t.dynamic:
            return out + [Problem("shape", "prefill/decode serving runs on TPU7x sub-slices of a reservation "
                                           "(a profile with `tpu: {slicing: subslice}`), not on static node pools")]
        if t is not None and tpu_slices.dynamic(t.generation).slice_label is None:
            # Each LWS group is one slice by the slice controller's exclusive-topology label (TPU7x).
            return out + [Problem("shape", f"prefill/decode serving runs on TPU7x sub-slices; "
                                           f"{t.generation.accelerator} sub-slicing has no per-slice node label "
                                           "for LeaderWorkerSet exclusive placement")]
        bad = shape_checks(self, ctx, self.slice_demand(ctx), "shape")
        if bad:
            return out + bad
        for role in ROLES:
            longest = tpu_slices.slice_name_problem(self.namespace, "LeaderWorkerSet",
                                             f"{self.lws_name(role)}-{max(self.role(role).replicas - 1, 0)}",
                                             "worker", 0, f"the namespace or the {role} LeaderWorkerSet's name")
            if longest:
                out.append(Problem(f"{role}.name" if self.role(role).name else "name", longest))
        # Decode leaders carry the routing sidecar too: the biggest pod.
        pod = [("resources", self.resources.requests()), ("sidecar.resources", self.sidecar.resources.requests())]
        return out + vm_fit(self, ctx, pod)

    def _check_engine(self) -> list[Problem]:
        out = []
        for i, arg in enumerate(self.engine_args):
            flag = arg.split("=", 1)[0]
            if flag in OWN_FLAGS:
                out.append(Problem(f"engineArgs[{i}]", f"{flag} is set by the generator (from model, shape and "
                                                       f"port); remove it from engineArgs"))
        for key in sorted(self.engine_env):
            if key == "HF_TOKEN":
                out.append(Problem(f"engineEnv.{key}", "the token comes from the profile's hfTokenSecret by "
                                                       "reference; never put its value in the spec"))
            elif key in ("TPU_KV_TRANSFER_PORT", "TPU_SIDE_CHANNEL_PORT"):
                out.append(Problem(f"engineEnv.{key}", f"the generator sets {key} to match the pods' container ports"))
        label = self.model_label
        if len(label) > 63 or not label.replace("-", "").replace(".", "").replace("_", "").isalnum() \
                or not label[0].isalnum() or not label[-1].isalnum():
            out.append(Problem("model.servedName", f"the last part {label!r} becomes the {MODEL_LABEL} label, "
                                                   "which must be at most 63 letters, digits, '-', '_' or '.', "
                                                   "starting and ending with a letter or digit"))
        return out

    def _check_ports(self) -> list[Problem]:
        reserved = {KV_TRANSFER_PORT: "the KV transfer port", SIDE_CHANNEL_PORT: "the KV side channel"}
        out = []
        if self.port == self.decode_engine_port:
            out.append(Problem("decodeEnginePort", f"decode's vLLM and its routing sidecar cannot share port "
                                                   f"{self.port}; the sidecar takes `port` (the pool's target port)"))
        for field, value in (("port", self.port), ("decodeEnginePort", self.decode_engine_port)):
            if value in reserved:
                out.append(Problem(field, f"{value} is {reserved[value]} of the TPU connector; pick another port"))
        return out

    def names_of_objects(self) -> list[tuple[str, str]]:
        out = [("LeaderWorkerSet", self.lws_name(r)) for r in ROLES]
        out += [("Gateway", self.gateway.name), ("InferencePool", self.name), ("HTTPRoute", f"{self.name}-route")]
        if self.health_check:
            out.append(("HealthCheckPolicy", f"{self.name}-health"))
        if self.backend_policy:
            out.append(("GCPBackendPolicy", f"{self.name}-backend"))
        return out
