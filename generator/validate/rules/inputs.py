"""Rules about the input itself and the schema layer; the loader and
generator/validate/schema.py report them."""
from ..findings import ERROR, WARNING
from . import declare

declare("IN001", ERROR, "the input is not valid YAML (syntax error, duplicate key)",
        "fix the YAML at the line and column given")
declare("IN002", ERROR, "a document is not a Kubernetes object (not a mapping, no apiVersion/kind, no metadata.name)",
        "every document needs apiVersion, kind and an explicit metadata.name")
declare("SC001", ERROR, "the object violates its schema (core kinds at the pinned Kubernetes version, "
        "custom resources at the pinned CRD; unknown fields are errors)",
        "compare with `kubectl explain` for the pinned version, or the pinned CRD")
declare("SC002", ERROR, "no schema for the apiVersion/kind at the pinned Kubernetes version or in the pinned CRDs",
        "check the apiVersion (removed or not yet served?) or pin the CRD in schemas/versions.yaml")
declare("SC003", ERROR, "the apiVersion exists in the pinned CRD but is not served",
        "use the version the pinned release serves")
declare("SC004", WARNING, "the apiVersion is deprecated in the pinned CRD (for example Kueue v1beta1 on v0.17+)",
        "move to the storage version before the next upgrade removes it")
