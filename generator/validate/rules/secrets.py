"""No secret values in Git. Findings never repeat the value."""
from __future__ import annotations

import re

from ..findings import WARNING
from . import Hit, rule
from .multikueue import inlined_kubeconfig

# Names of env vars that hold credentials: a TOKEN, PASSWORD, SECRET or KEY word
# (HF_TOKEN, DB_PASSWORD, AWS_SECRET_ACCESS_KEY), not TOKENIZER or MONKEY.
_SECRET_NAME = re.compile(r"(^|_)(TOKENS?|PASSWORDS?|PASSWD|PWD|SECRETS?|KEYS?|APIKEY|CREDENTIALS?)(_|$)")


def looks_like_token(value: str) -> bool:
    """A literal that could be a credential: one word, 8+ characters, not a
    reference ($(VAR), ${VAR}), a placeholder (<...>), a path, a URL or a number."""
    v = value.strip()
    if len(v) < 8 or any(ch.isspace() for ch in v):
        return False
    if v.startswith(("$(", "${", "<", "/")) or "://" in v or v.lower() in ("true", "false"):
        return False
    # Generated credentials mix letters and digits; a value without a digit ("nvapi-NVKEY",
    # "my-secret-here") is a stand-in that a tutorial asks you to replace.
    return not re.fullmatch(r"[0-9.]+", v) and any(ch.isdigit() for ch in v) and any(ch.isalpha() for ch in v)


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
                if _SECRET_NAME.search(str(e.get("name", "")).upper()) and looks_like_token(e["value"]):
                    yield Hit(o, path + ("env", i, "value"),
                              f"env {e.get('name')!r} has a literal value that looks like a credential (not shown)")
