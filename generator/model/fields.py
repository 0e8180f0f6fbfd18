"""Field types of the spec model: the base model every spec object derives
from, and the constrained scalar types (names, quantities, tags) with the
limits the Kubernetes API server enforces on what they become.

Strict on purpose: `3.0` is not a node count and `"3"` is not an integer
(both were once written into manifests as `NUM_SHARD='2.0'`)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema
from pydantic.alias_generators import to_camel

from ..kernel import quantity

INT32_MAX = 2**31 - 1


def enum_of(names: Iterable[str]) -> dict[str, Any]:
    """json_schema_extra listing a catalog's names (sorted) as the field's JSON Schema enum."""
    return {"enum": sorted(names)}


class SpecModel(BaseModel):
    """Every spec object: camelCase keys in YAML, snake_case in Python, unknown keys refused."""
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, alias_generator=to_camel,
                              populate_by_name=True, validate_default=True)


# DNS-1123 label (Namespaces, Services, most names): 63 characters, lower case.
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
# DNS-1123 label that starts with a letter (Service names: DNS-1035).
DNS_1035 = r"^[a-z]([-a-z0-9]*[a-z0-9])?$"
# DNS-1123 subdomain (PriorityClass, ClusterQueue, ... names).
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
# A label value: 63 characters, alphanumeric at both ends, -_. inside, or empty.
LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
# A label key: optional DNS subdomain prefix and '/', then a name of 63 characters.
LABEL_KEY = (r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
             r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
# C identifier-like environment variable names (what `kubectl` and most images accept).
ENV_NAME = r"^[-._a-zA-Z][-._a-zA-Z0-9]*$"

DnsLabel = Annotated[str, Field(pattern=DNS_LABEL, max_length=63)]
ServiceName = Annotated[str, Field(pattern=DNS_1035, max_length=63)]
DnsSubdomain = Annotated[str, Field(pattern=DNS_SUBDOMAIN, max_length=253)]
# Names that also become label values (queue and priority-class labels): at most 63.
LabelSafeName = Annotated[str, Field(pattern=DNS_SUBDOMAIN, max_length=63)]
LabelKey = Annotated[str, Field(pattern=LABEL_KEY, max_length=316)]
LabelValue = Annotated[str, Field(pattern=LABEL_VALUE, max_length=63)]
Labels = dict[LabelKey, LabelValue]
EnvName = Annotated[str, Field(pattern=ENV_NAME, max_length=256)]
Count = Annotated[int, Field(ge=0, le=INT32_MAX)]
PositiveCount = Annotated[int, Field(ge=1, le=INT32_MAX)]
Port = Annotated[int, Field(ge=1, le=65535)]
Version = Annotated[str, Field(pattern=r"^v[0-9]+\.[0-9]+\.[0-9]+$")]


def _quantity(value: Any) -> str | int:
    """A Kubernetes quantity, kept as written (int or string); a YAML float such as
    0.5 becomes its decimal text. Refused when Kubernetes would refuse it."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError("should be a quantity such as 4, 500m or 30Gi")
    if isinstance(value, float):
        value = repr(value)
    try:
        parsed = quantity.parse(value)
    except (ValueError, ArithmeticError):
        raise ValueError(f"{value!r} is not a quantity (e.g. 4, 500m, 30Gi)") from None
    if parsed < 0:
        raise ValueError(f"{value!r} is negative")
    if not parsed.is_finite() or parsed > quantity.MAX_QUANTITY:
        raise ValueError(quantity.too_large(value))
    return value


Quantity = Annotated[Any, BeforeValidator(_quantity), WithJsonSchema({
    "description": "A Kubernetes quantity such as 4, 500m or 30Gi.",
    "anyOf": [{"type": "integer", "minimum": 0}, {"type": "number", "minimum": 0},
              {"type": "string", "pattern": r"^[0-9]+(\.[0-9]+)?([eE][0-9]+|m|k|Ki|Mi|Gi|Ti|Pi|Ei|M|G|T|P|E)?$"}]})]


def _tag(value: str) -> str:
    if value == "latest":
        raise ValueError("'latest' moves under the same name; pin a version tag such as 2.4.1")
    return value


ImageTag = Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$"), AfterValidator(_tag)]
Digest = Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]
