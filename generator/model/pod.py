"""What a workload's spec entry may add to its pods (`pod:`), and how its
containers run (`security:`). The generator applies both to every pod template
of the workload's queued objects (generator/builders/podpolicy.py)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from .fields import DnsLabel, DnsSubdomain, EnvName, LabelKey, Labels, LabelValue, Quantity, SpecModel


class Toleration(SpecModel):
    key: LabelKey | None = None
    operator: Literal["Exists", "Equal"] = "Equal"
    # A label value (ValidateTolerations: validation.IsValidLabelValue), so no spaces.
    value: LabelValue | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    toleration_seconds: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _consistent(self) -> Toleration:
        # k8s.io/kubernetes pkg/apis/core/validation/validation.go, ValidateTolerations.
        if self.operator == "Exists" and self.value:
            raise ValueError("operator Exists takes no value")
        if self.toleration_seconds is not None and self.effect != "NoExecute":
            raise ValueError("tolerationSeconds needs effect NoExecute (the API server refuses it with any other)")
        if self.key is None and self.operator != "Exists":
            raise ValueError("a toleration without a key must use operator Exists")
        return self

    def body(self) -> dict:
        return self.model_dump(by_alias=True, exclude_none=True)


class ConfigMapVolume(SpecModel):
    name: DnsSubdomain


class SecretVolume(SpecModel):
    secret_name: DnsSubdomain


class EmptyDirVolume(SpecModel):
    medium: Literal["", "Memory"] = ""
    size_limit: Quantity | None = None


class PvcVolume(SpecModel):
    claim_name: DnsSubdomain
    read_only: bool = False


class CsiVolume(SpecModel):
    driver: DnsSubdomain
    read_only: bool = False
    volume_attributes: dict[str, str] = Field(default_factory=dict)


class Volume(SpecModel):
    """A pod volume: exactly one source."""
    name: DnsLabel
    config_map: ConfigMapVolume | None = None
    secret: SecretVolume | None = None
    empty_dir: EmptyDirVolume | None = None
    persistent_volume_claim: PvcVolume | None = None
    csi: CsiVolume | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Volume:
        sources = [s for s in ("config_map", "secret", "empty_dir", "persistent_volume_claim", "csi")
                   if getattr(self, s) is not None]
        if len(sources) != 1:
            raise ValueError("give exactly one source: configMap, secret, emptyDir, persistentVolumeClaim or csi")
        return self

    def body(self) -> dict:
        return self.model_dump(by_alias=True, exclude_none=True)


class VolumeMount(SpecModel):
    name: DnsLabel
    mount_path: str = Field(pattern=r"^/[^:]*$")
    read_only: bool = False
    sub_path: str | None = Field(None, pattern=r"^[^/].*$")

    def body(self) -> dict:
        out = self.model_dump(by_alias=True, exclude_none=True)
        if not self.read_only:
            out.pop("readOnly")
        return out


class PodExtras(SpecModel):
    """Additions to every pod of the workload: environment and mounts on its main containers;
    labels, annotations, node selectors, tolerations and volumes on the pod."""
    env: dict[EnvName, str] = Field(default_factory=dict)
    labels: Labels = Field(default_factory=dict)
    annotations: dict[LabelKey, str] = Field(default_factory=dict)
    node_selector: Labels = Field(default_factory=dict)
    tolerations: list[Toleration] = Field(default_factory=list)
    volumes: list[Volume] = Field(default_factory=list)
    volume_mounts: list[VolumeMount] = Field(default_factory=list)

    @field_validator("annotations")
    @classmethod
    def _annotations_size(cls, v: dict[str, str]) -> dict[str, str]:
        # k8s.io/apimachinery pkg/api/validation/objectmeta.go, ValidateAnnotationsSize: keys and
        # values together at most TotalAnnotationSizeLimitB (256 KiB), counted in bytes.
        size = sum(len(k.encode()) + len(val.encode()) for k, val in v.items())
        if size > ANNOTATIONS_MAX_BYTES:
            raise ValueError(f"annotations hold {size:,} bytes, over the API server's limit of "
                             f"{ANNOTATIONS_MAX_BYTES:,} (256 KiB) for all of an object's annotations")
        return v


# apimachinery's TotalAnnotationSizeLimitB = 256 * (1 << 10).
ANNOTATIONS_MAX_BYTES = 256 * 1024


class Security(SpecModel):
    """How the workload's containers run. Every pod runs with seccomp RuntimeDefault, no
    privilege escalation and all capabilities dropped; the project's own images also run as
    their non-root user with a read-only root filesystem."""
    run_as_root: bool = Field(False, description="The image needs root (upstream TGI and vLLM images do): "
                                                 "say so here; it still runs without privilege escalation or "
                                                 "capabilities.")
    run_as_user: int | None = Field(None, ge=1, le=2147483647, description="Run as this non-root uid (and gid).")
    read_only_root_filesystem: bool | None = Field(None, description="Default: true for the project's own "
                                                                     "images, false for upstream ones.")

    @model_validator(mode="after")
    def _one(self) -> Security:
        if self.run_as_root and self.run_as_user is not None:
            raise ValueError("runAsRoot and runAsUser exclude each other")
        return self
