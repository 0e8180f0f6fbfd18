"""What looks like a credential. Used by the spec checks (nothing that looks
like one reaches the output: the spec refuses it and says how to reference a
Secret) and by the validator's secret rules. Findings never repeat the value."""
from __future__ import annotations

import re

# Names of env vars that hold credentials: a TOKEN, PASSWORD, SECRET or KEY word
# (HF_TOKEN, DB_PASSWORD, AWS_SECRET_ACCESS_KEY), not TOKENIZER or MONKEY.
SECRET_NAME = re.compile(r"(^|_)(TOKENS?|PASSWORDS?|PASSWD|PWD|SECRETS?|KEYS?|APIKEY|CREDENTIALS?)(_|$)")

# Published token formats, each with where its prefix is documented:
KNOWN_TOKENS = (
    # Hugging Face User Access Tokens start with "hf_" (huggingface.co/docs/hub/security-tokens).
    ("a Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{20,}")),
    # GitHub token prefixes ghp_/gho_/ghu_/ghs_/ghr_ and github_pat_
    # (github.blog, "Behind GitHub's new authentication token formats", 2021).
    ("a GitHub token", re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    # AWS access key IDs: AKIA/ASIA + 16 upper-case letters or digits (AWS IAM user guide, "Access key IDs").
    ("an AWS access key", re.compile(r"\b(AKIA|ASIA)[A-Z0-9]{16}\b")),
    # Google API keys start with "AIza" (cloud.google.com/docs/authentication/api-keys).
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    # PEM private keys (RFC 7468), e.g. a service account key file pasted in.
    ("a private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
)

# user:password@ or token@ in a URL's authority.
_URL_CREDENTIALS = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@\s]+@", re.IGNORECASE)
_URL_QUERY_SECRET = re.compile(r"[?&](access_?token|token|password|passwd|secret|key|api_?key|private_token)=",
                               re.IGNORECASE)
# Command-line flags that carry a credential as their value.
_SECRET_FLAG = re.compile(r"^--?[a-z0-9-]*(token|password|passwd|secret|api-key|apikey|credentials?)(=|$)",
                          re.IGNORECASE)
_REFERENCE = re.compile(r"^\$(\([A-Za-z_][A-Za-z0-9_]*\)|\{[A-Za-z_][A-Za-z0-9_]*\})$")

HOW = "reference a Secret instead (the profile's values.hfTokenSecret names one; its value stays out of Git)"


def looks_like_token(value: str, stand_ins_allowed: bool = False) -> bool:
    """A literal that could be a credential: one word, 8+ characters, not a
    reference ($(VAR), ${VAR}), a placeholder (<...>), a path, a URL or a number.
    stand_ins_allowed (the validator, on manifests nobody here wrote): generated
    credentials mix letters and digits, so a value without both ("nvapi-NVKEY",
    "my-secret-here") is a stand-in a tutorial asks you to replace, not a finding.
    The spec allows none: a credential-named value there is a Secret reference."""
    v = value.strip()
    if len(v) < 8 or any(ch.isspace() for ch in v):
        return False
    if v.startswith(("$(", "${", "<", "/")) or "://" in v or v.lower() in ("true", "false"):
        return False
    if re.fullmatch(r"[0-9.]+", v):
        return False
    return not stand_ins_allowed or (any(ch.isdigit() for ch in v) and any(ch.isalpha() for ch in v))


def known_token(value: str) -> str | None:
    """The kind of credential a value contains, when it has a published token format."""
    for what, pattern in KNOWN_TOKENS:
        if pattern.search(value):
            return what
    return None


def in_url(url: str) -> str | None:
    m = _URL_CREDENTIALS.match(url)
    # ssh://git@host is a user name, not a credential; anything else before '@' is.
    if m and not (url.lower().startswith("ssh://") and ":" not in url[6:m.end(0)]):
        return ("carries credentials before '@'; give Argo CD the repository credentials (a repository "
                "Secret) and keep the URL plain")
    if _URL_QUERY_SECRET.search(url):
        return "carries a credential in its query string; keep the URL plain and give the credential to Argo CD"
    what = known_token(url)
    return f"contains {what}; keep the URL plain" if what else None


def in_argument(arg: str) -> str | None:
    """A command-line word that passes a credential (`--hf-token=hf_...`)."""
    flag, eq, value = arg.partition("=")
    if _SECRET_FLAG.match(flag + eq) and eq and value and not _REFERENCE.match(value):
        return f"{flag} passes a credential on the command line; {HOW} and read it from the environment"
    what = known_token(arg)
    return f"contains {what}; {HOW}" if what else None


def in_env(name: str, value: str) -> str | None:
    """An environment variable whose literal value is a credential."""
    if _REFERENCE.match(value.strip()):
        return None
    if SECRET_NAME.search(name.upper()) and looks_like_token(value):
        return f"{name} looks like a credential; {HOW} (valueFrom.secretKeyRef)"
    what = known_token(value)
    return f"contains {what}; {HOW}" if what else None
