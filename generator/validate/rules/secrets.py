"""No secret values in Git. Findings never repeat the value."""
from __future__ import annotations

from ...kernel.credentials import SECRET_NAME, looks_like_token, scan
from ..findings import ERROR, WARNING
from . import hit, rule
from .multikueue import inlined_kubeconfig


@rule("SE001", WARNING, "a Secret carries data or stringData in the manifests",
      "create the Secret out of band (or with External Secrets / Secret Manager) and reference it by name")
def secret_objects(model):
    for o in model.all("", "Secret"):
        if inlined_kubeconfig(o):
            continue   # MK001: a kubeconfig in Git is an error of its own
        for key in ("data", "stringData"):
            if o.body.get(key):
                yield hit(o, (key,), f"Secret holds {len(o.body[key])} value(s) in {key} (values not shown)")


@rule("SE002", WARNING, "an env var named like a credential (*TOKEN*, *PASSWORD*, *SECRET*, *KEY*) has a literal "
      "value that looks like one",
      "use valueFrom.secretKeyRef with the Secret's name and key")
def literal_credentials(model):
    for o, ps in model.workloads():
        for path, c in ps.containers():
            for i, e in enumerate(c.get("env") or []):
                if not isinstance(e, dict) or not isinstance(e.get("value"), str):
                    continue
                if SECRET_NAME.search(str(e.get("name", "")).upper()) and looks_like_token(e["value"], True):
                    yield hit(o, path + ("env", i, "value"),
                              f"env {e.get('name')!r} has a literal value that looks like a credential (not shown)")


def _credential_env_values(model) -> set[tuple[int, tuple]]:
    """(object, path) of the env values SE002 reports: SE003 leaves them to it."""
    return {(id(h.obj), h.parts) for h in literal_credentials(model)}


@rule("SE003", ERROR, "a key or value of a manifest holds a credential of a published format (a GitHub, GitLab, "
      "Hugging Face, Slack, AWS or Google key, a JWT, a bearer token, a password in a URL, a private key)",
      "reference a Secret by name (valueFrom.secretKeyRef, a volume) and create it out of band; revoke the "
      "credential, it has been shared")
def published_credentials(model):
    left_to_se002 = _credential_env_values(model)
    for o in model.objects:
        if o.kind == "Secret" or not isinstance(o.body, dict):
            continue   # SE001: a Secret's data is a Secret's business
        for path, what in scan(o.body):
            if (id(o), path) not in left_to_se002:
                yield hit(o, path, what.split(";")[0])
