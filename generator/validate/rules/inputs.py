"""Rules about the input itself, the schema layer and the CRDs' CEL rules; the
loader, generator/validate/schema.py and the runner report them."""
from ..findings import ERROR, INFO, WARNING
from . import declare

declare("IN001", ERROR, "the input is not valid YAML (syntax error, duplicate key, non-scalar key, not UTF-8, over "
        "the size, nesting or alias-expansion limits)",
        "fix the YAML at the line and column given")
declare("IN002", ERROR, "a document is not a Kubernetes object (not a mapping, no apiVersion/kind, neither "
        "metadata.name nor metadata.generateName)",
        "every document needs apiVersion, kind and metadata.name (or generateName)")
declare("IN004", INFO, "templated input: placeholders ($VAR, ${VAR}, {{ }}, PV_NAME, <number_of_gpus>, NAMESPACE "
        "inside a name) are reported once per document and their values, and what they cascade into, are not "
        "checked; a file that is a template rather than YAML is a warning",
        "render the template (envsubst, helm template, kustomize) and validate the result")
declare("IN006", INFO, "a kustomization file, or a patch its kustomization applies, given as a plain file: not "
        "checked on its own", "validate the directory, which kustomize builds")
declare("IN005", WARNING, "an inline `# validate: ignore=RULE` has no reason",
        "write why after the rule ids: `# validate: ignore=SV001 pods come from the operator`")
declare("IE001", ERROR, "the validator failed on this input (a bug in the validator, not in the input)",
        "report it with the input; the other findings are complete")
declare("SC001", ERROR, "the object violates its schema (core kinds at the pinned Kubernetes version, "
        "custom resources at the pinned CRD; unknown fields are errors; quantities and RE2 patterns checked)",
        "compare with `kubectl explain` for the pinned version, or the pinned CRD")
declare("SC002", ERROR, "no schema for the apiVersion/kind at the pinned Kubernetes version or in the pinned CRDs "
        "(a note in an open world for kinds of non-Kubernetes API groups, whose CRD may be installed)",
        "check the apiVersion (removed or not yet served?) or pin the CRD in schemas/versions.yaml")
declare("SC003", ERROR, "the apiVersion exists in the pinned CRD but is not served",
        "use the version the pinned release serves")
declare("SC004", WARNING, "the apiVersion is deprecated in the pinned CRD (for example Kueue v1beta1 on v0.17+)",
        "move to the storage version before the next upgrade removes it")
declare("CE001", ERROR, "the object breaks a CEL validation rule (x-kubernetes-validations) of its pinned CRD",
        "the message is the CRD's own; fix the field it names")
declare("CE002", ERROR, "a CEL rule of the pinned CRD fails to evaluate on this object (a missing map key, an "
        "index out of bounds, ...): the API server rejects the object with an Invalid field error",
        "the message is the API server's (\"no such key: k evaluating rule: ...\"); set the field the rule reads")
declare("CE003", WARNING, "a CEL rule of the pinned CRD calls what this validator's engine lacks: not checked",
        "the API server evaluates it; check the field by hand or report the missing function")
