"""No secret values in Git. Findings never repeat the value."""
from __future__ import annotations

from ...credentials import SECRET_NAME, looks_like_token
from ..findings import WARNING
from . import Hit, rule
from .multikueue import inlined_kubeconfig


@rule("SE001", WARNING, "a Secret carries data or stringData in the manifests",
      "create the Secret out of band (or with External Secrets / Secret Manager) and reference it by name")
def secret_objects(model):
    for o in model.all("", "Secret"):
        if inlined_kubeconfig(o):
            continue   # MK001: a kubeconfig in Git is an error of its own
        for key in ("data", "stringData"):
            if o.body.get(key):
                yield Hit(o, (key,), f"Secret holds {len(o.body[key])} value(s) in {key} (values not shown)")


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
                    yield Hit(o, path + ("env", i, "value"),
                              f"env {e.get('name')!r} has a literal value that looks like a credential (not shown)")
