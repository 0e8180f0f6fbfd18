"""What looks like a credential: the one check every value and every key of the
spec goes through (`scan`), that synth's last guard and the validator's SE rules
run on the emitted objects too. Nothing that looks like one reaches Git: the
spec refuses it and says how to reference a Secret. Findings never repeat the
value (`redact` removes any that a message would quote).

Only published formats are refused: a token kind's own prefix and shape, as its
vendor documents it or a public secret-scanning ruleset (gitleaks) encodes it.
Entropy alone never refuses: a git commit SHA (a model revision), an image
digest (sha256:...), a UUID are long random-looking strings and are not secrets.
docs/credentials.md lists each format with its source."""
from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

# Names of env vars that hold credentials: a TOKEN, PASSWORD, SECRET or KEY word
# (HF_TOKEN, DB_PASSWORD, AWS_SECRET_ACCESS_KEY), not TOKENIZER or MONKEY.
SECRET_NAME = re.compile(r"(^|_)(TOKENS?|PASSWORDS?|PASSWD|PWD|SECRETS?|KEYS?|APIKEY|CREDENTIALS?)(_|$)")

_GITLEAKS = "https://github.com/gitleaks/gitleaks/blob/master/cmd/generate/config/rules/"

# (what, pattern). Each pattern's source is in the comment above it; gitleaks rules are
# under _GITLEAKS. Patterns search inside a value (a token inside a URL, an argument,
# an embedded config file), bounded by non-token characters so a longer word is not cut.
KNOWN_TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # Hugging Face User Access Tokens start with "hf_" (huggingface.co/docs/hub/security-tokens;
    # gitleaks huggingface.go: hf_ + 34 letters). 20+ letters or digits here, the shorter
    # tokens of older accounts included.
    ("a Hugging Face token", re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{20,}")),
    # GitHub: ghp_ (personal), gho_ (OAuth), ghu_ (user-to-server), ghs_ (server-to-server),
    # ghr_ (refresh) + 36 base62 characters, and fine-grained github_pat_ tokens
    # (github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/; gitleaks github.go).
    ("a GitHub token", re.compile(r"(?<![A-Za-z0-9])(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    # GitLab personal (glpat-) and pipeline trigger (glptt-) tokens
    # (docs.gitlab.com/ee/security/token_overview.html#token-prefixes; gitleaks gitlab.go: glpat-[0-9a-zA-Z_-]{20}).
    ("a GitLab token", re.compile(r"(?<![A-Za-z0-9])gl(pat|ptt)-[0-9A-Za-z_-]{20,}")),
    # AWS access key IDs: AKIA (long-term), ASIA (STS), ABIA, ACCA + 16 upper-case letters or digits
    # (docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids; gitleaks aws.go).
    ("an AWS access key", re.compile(r"(?<![A-Z0-9])(AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])")),
    # An AWS secret access key (40 characters of [A-Za-z0-9/+=], gitleaks aws_secret.go) next to
    # the name it is given in the AWS CLI's files and variables (aws_secret_access_key,
    # docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html): a 40-character string
    # alone is not refused (a git SHA is 40 hex characters).
    ("an AWS secret access key", re.compile(
        r"(?i)aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])")),
    # A Google Cloud service account key file: JSON with "type": "service_account" and a
    # "private_key" (cloud.google.com/iam/docs/keys-create-delete, the key file's format).
    ("a Google service account key", re.compile(r"\"type\"\s*:\s*\"service_account\"")),
    # Google API keys: AIza + 35 characters (cloud.google.com/docs/authentication/api-keys; gitleaks gcp.go).
    ("a Google API key", re.compile(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}")),
    # Slack tokens: xoxb- (bot), xoxp- (user), xoxa-/xoxr- (workspace access/refresh), xoxs-, xoxe-,
    # and app-level xapp- tokens (api.slack.com/authentication/token-types; gitleaks slack.go).
    ("a Slack token", re.compile(r"(?<![A-Za-z0-9])(xox[abeoprs]-[0-9A-Za-z-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})")),
    # JSON Web Tokens: three base64url parts, the first two JSON objects, so both start
    # "ey" (base64 of '{"') (RFC 7519, section 3; gitleaks jwt.go).
    ("a JSON Web Token", re.compile(r"(?<![A-Za-z0-9_-])ey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{8,}")),
    # OAuth 2.0 bearer tokens: the Authorization request header field "Bearer <token>" (RFC 6750,
    # section 2.1) and the access_token URI query parameter (RFC 6750, section 2.3).
    ("a bearer token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{16,}=*")),
    ("a bearer token in a URL", re.compile(r"(?i)[?&#](access_?token|private_token|api_?key|token)=[^&#\s]{8,}")),
    # A password in a URL's userinfo, scheme://user:password@host (RFC 3986, section 3.2.1:
    # "Use of the format user:password in the userinfo field is deprecated").
    # Searched only from the start of a run of scheme characters, the whole run taken as the
    # scheme (more is redacted, never less): from every word start, as `\b` did, a 9 MB word
    # like "a-a-a-..." was scanned again from each of its millions of starts.
    ("credentials in a URL (user:password@)", re.compile(r"(?i)(?<![a-z0-9+.-])[a-z0-9+.-]+://[^/?#@\s:]*:[^/?#@\s]+@")),
    # PEM private keys (RFC 7468, section 10 and 11), e.g. a service account key file pasted in.
    # The whole block is matched, so `redact` removes the key material too.
    ("a private key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?s:.*?)"
                                 r"(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)")),
)

# token@ or user:password@ in a URL's authority (the Argo CD repository URL: Argo CD holds
# the repository credentials; any userinfo but ssh's user name carries one).
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
    The spec allows none: a credential-named value there is a Secret reference.
    Used only where a name says the value is a credential (an env var, a flag)."""
    v = value.strip()
    if len(v) < 8 or any(ch.isspace() for ch in v):
        return False
    if v.startswith(("$(", "${", "<", "/")) or "://" in v or v.lower() in ("true", "false"):
        return False
    if re.fullmatch(r"[0-9.]+", v):
        return False
    return not stand_ins_allowed or (any(ch.isdigit() for ch in v) and any(ch.isalpha() for ch in v))


# For each format, words one of which any match contains (lower case): a value holding none of
# a format's words is not searched with its pattern. A substring test is a fast linear pass,
# where running every pattern over a 9 MB value took seconds; most values hold no such word.
ANCHORS: dict[str, tuple[str, ...]] = {
    "a Hugging Face token": ("hf_",),
    "a GitHub token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "a GitLab token": ("glpat-", "glptt-"),
    "an AWS access key": ("akia", "asia", "abia", "acca"),
    "an AWS secret access key": ("secret",),
    "a Google service account key": ("service_account",),
    "a Google API key": ("aiza",),
    "a Slack token": ("xox", "xapp-"),
    "a JSON Web Token": (".ey",),
    "a bearer token": ("bearer",),
    "a bearer token in a URL": ("token=", "key="),
    "credentials in a URL (user:password@)": ("://",),
    "a private key": ("private key",),
}


def _candidates(text: str) -> list[tuple[str, re.Pattern[str]]]:
    """The formats whose words the text holds, in KNOWN_TOKENS' order."""
    low = text.lower()
    return [(what, p) for what, p in KNOWN_TOKENS if any(a in low for a in ANCHORS[what])]


@lru_cache(maxsize=4096)   # the same keys and values recur: a 1,000-workload spec has 400 distinct in 43,000
def known_token(value: str) -> str | None:
    """The kind of credential a value contains, when it has a published token format."""
    for what, pattern in _candidates(value):
        if pattern.search(value):
            return what
    return None


def redact(text: str) -> str:
    """text with every credential of a published format replaced by <redacted>: for
    messages that quote what the user wrote. Linear in the text's length."""
    for _, pattern in _candidates(text):
        text = pattern.sub("<redacted>", text)
    return text


def _service_account(node: dict) -> bool:
    """A service account key file read into a mapping (`type: service_account` with `private_key`)."""
    return node.get("type") == "service_account" and "private_key" in node


def scan(tree, path: tuple = ()) -> Iterator[tuple[tuple, str]]:
    """(path, what is wrong) for every key and every string value under `tree` that
    carries a credential. A key's problem is reported at its mapping's path, by
    position, so the key itself is never printed."""
    if isinstance(tree, dict):
        if _service_account(tree):
            yield path, "is a Google service account key (type service_account with a private_key)"
        for n, (key, value) in enumerate(tree.items(), 1):
            what = known_token(key) if isinstance(key, str) else None
            if what:
                yield path, f"key #{n} of this mapping contains {what} (not shown); keys reach the output as written; {HOW}"
                yield from scan(value, path + (f"<key #{n}>",))
            else:
                yield from scan(value, path + (key,))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            yield from scan(value, path + (i,))
    elif isinstance(tree, str):
        what = known_token(tree)
        if what:
            yield path, f"contains {what} (not shown); {HOW}"


def in_url(url: str, tokens: bool = True) -> str | None:
    """A credential in a repository URL. tokens=False: only what `scan` does not already
    find in any value (a user name or token before '@', a credential-named query parameter)."""
    if not tokens and known_token(url):
        return None
    m = _URL_CREDENTIALS.match(url)
    # ssh://git@host is a user name, not a credential; anything else before '@' is.
    if m and not (url.lower().startswith("ssh://") and ":" not in url[6:m.end(0)]):
        return ("carries credentials before '@'; give Argo CD the repository credentials (a repository "
                "Secret) and keep the URL plain")
    if _URL_QUERY_SECRET.search(url):
        return "carries a credential in its query string; keep the URL plain and give the credential to Argo CD"
    what = known_token(url) if tokens else None
    return f"contains {what}; keep the URL plain" if what else None


def in_argument(arg: str, tokens: bool = True) -> str | None:
    """A command-line word that passes a credential (`--hf-token=hf_...`). tokens=False:
    only the flag-named case, which `scan` cannot know."""
    flag, eq, value = arg.partition("=")
    if _SECRET_FLAG.match(flag + eq) and eq and value and not _REFERENCE.match(value) \
            and not (tokens is False and known_token(arg)):
        return f"{flag} passes a credential on the command line; {HOW} and read it from the environment"
    what = known_token(arg) if tokens else None
    return f"contains {what}; {HOW}" if what else None


def in_env(name: str, value: str, tokens: bool = True) -> str | None:
    """An environment variable whose literal value is a credential. tokens=False: only the
    name-based case (a published format anywhere is `scan`'s)."""
    if _REFERENCE.match(value.strip()) or (not tokens and known_token(value)):
        return None
    if SECRET_NAME.search(name.upper()) and looks_like_token(value):
        return f"{name} looks like a credential; {HOW} (valueFrom.secretKeyRef)"
    what = known_token(value) if tokens else None
    return f"contains {what}; {HOW}" if what else None


# ---------------------------------------------------------------- objects a user's file holds

# Kubernetes Secret types whose values are credentials by definition (every type is:
# kubernetes.io/docs/concepts/configuration/secret/#secret-types); `data` and `stringData`
# hold them (core/v1 Secret).
SECRET_HOW = ("create the Secret outside Git (`kubectl create secret generic NAME --from-literal=...`, or an "
              "external secret store: Secret Manager with the External Secrets Operator or the Secrets Store "
              "CSI driver) and reference it by name (env valueFrom.secretKeyRef, envFrom.secretRef, a secret volume)")


def in_object(obj: dict) -> Iterator[tuple[tuple, str]]:
    """(path, what is wrong) for credential data an object of a user's manifest file carries
    beyond what `scan` finds: a Secret's literal values, and credential-named env vars and
    flags with literal values in any container (as the spec's own fields are checked)."""
    if obj.get("kind") == "Secret" and str(obj.get("apiVersion", "v1")) == "v1":
        for field in ("data", "stringData"):
            if isinstance(obj.get(field), dict) and obj[field]:
                yield (field,), (f"a Secret with literal values ({len(obj[field])} in {field}) would be committed "
                                 f"to Git; {SECRET_HOW}")
    yield from _containers(obj, ())


_POD_LISTS = ("containers", "initContainers", "ephemeralContainers")


def _containers(node, path: tuple) -> Iterator[tuple[tuple, str]]:
    """Every container list under `node` (pod templates nest at different depths per kind)."""
    stack = [(node, path)]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key in _POD_LISTS and isinstance(value, list):
                    for i, c in enumerate(value):
                        if isinstance(c, dict):
                            yield from _container(c, path + (key, i))
                elif isinstance(value, (dict, list)):
                    stack.append((value, path + (key,)))
        elif isinstance(node, list):
            stack += [(v, path + (i,)) for i, v in enumerate(node)]


def _container(c: dict, path: tuple) -> Iterator[tuple[tuple, str]]:
    for i, e in enumerate(c.get("env") or []):
        if isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(e.get("value"), str):
            bad = in_env(e["name"], e["value"], tokens=False)
            if bad:
                yield path + ("env", i, "value"), bad
    for field in ("command", "args"):
        for i, arg in enumerate(c.get(field) or []):
            if isinstance(arg, str):
                bad = in_argument(arg, tokens=False)
                if bad:
                    yield path + (field, i), bad
