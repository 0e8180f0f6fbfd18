"""Field errors worded as the API server words them (k8s.io/apimachinery/pkg/util/
validation/field, errors.go: ErrorType strings and Error.ErrorBody), so that a finding
reads like the `kubectl apply` rejection it predicts. The field path is the finding's
own; these are the text after it ("Invalid value: 70000: must be between 1 and 65535,
inclusive")."""
from __future__ import annotations

import json
import re

# k8s.io/apimachinery/pkg/util/validation: InclusiveRangeError(1, 65535), used by IsValidPortNum.
PORT_RANGE = "must be between 1 and 65535, inclusive"
# k8s.io/apimachinery/pkg/api/validation: ValidateNonnegativeField's isNegativeErrorMsg.
NEGATIVE = "must be greater than or equal to 0"
INT32_MAX = 2**31 - 1


def value(v) -> str:
    """A bad value as field.Error prints it: strings quoted (%q), numbers and booleans bare."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def invalid(v, detail: str) -> str:
    return f"Invalid value: {value(v)}: {detail}"


def duplicate(v) -> str:
    return f"Duplicate value: {value(v)}"


def required(detail: str = "") -> str:
    return "Required value" + (f": {detail}" if detail else "")


def not_found(v) -> str:
    return f"Not found: {value(v)}"


def not_supported(v, allowed) -> str:
    return f"Unsupported value: {value(v)}: supported values: {', '.join(json.dumps(a) for a in allowed)}"


def forbidden(detail: str) -> str:
    return f"Forbidden: {detail}"


def too_long(limit: int) -> str:
    return f"Too long: must have at most {limit} bytes"


def port_num(n) -> bool:
    """k8s.io/apimachinery/pkg/util/validation IsValidPortNum: 1..65535."""
    return isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= 65535


def too_many(actual: int, limit: int) -> str:
    """field.TooMany."""
    return f"Too many: {actual}: must have at most {limit} items"


# ---------------------------------------------------------------- apimachinery's format checks
# k8s.io/apimachinery/pkg/util/validation (validation.go) at the pinned minor: each returns the
# list of messages the Go function returns ([] when the value is valid), word for word.

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_VALUE_FMT = "(" + QUALIFIED_NAME_FMT + ")?"
_QUALIFIED_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_RE = {f: re.compile("^" + f + "$") for f in (DNS1123_LABEL_FMT, DNS1123_SUBDOMAIN_FMT, DNS1035_LABEL_FMT,
                                              QUALIFIED_NAME_FMT, LABEL_VALUE_FMT)}


def max_len_error(n: int) -> str:
    return f"must be no more than {n} characters"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """RegexError: the message, examples and the pattern, spaced as Go spaces them."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    return msg + " (e.g. " + " or ".join(f"'{e}', " for e in examples) + f"regex used for validation is '{fmt}')"


def is_dns1123_label(v: str) -> list[str]:
    errs = [max_len_error(63)] if len(v) > 63 else []
    if not _RE[DNS1123_LABEL_FMT].match(v):
        errs.append("must not contain dots" if _RE[DNS1123_SUBDOMAIN_FMT].match(v) else regex_error(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
            "end with an alphanumeric character", DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(v: str) -> list[str]:
    errs = [max_len_error(253)] if len(v) > 253 else []
    if not _RE[DNS1123_SUBDOMAIN_FMT].match(v):
        errs.append(regex_error("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                                "'-' or '.', and must start and end with an alphanumeric character",
                                DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


_UNDERSCORE_LABEL = "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_UNDERSCORE_FMT = _UNDERSCORE_LABEL + "(\\." + _UNDERSCORE_LABEL + ")*"


def is_dns1123_subdomain_with_underscore(v: str) -> list[str]:
    errs = [max_len_error(253)] if len(v) > 253 else []
    if not re.match("^" + DNS1123_SUBDOMAIN_UNDERSCORE_FMT + "$", v):
        errs.append(regex_error("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                                "'_', '-' or '.', and must start and end with an alphanumeric character",
                                DNS1123_SUBDOMAIN_UNDERSCORE_FMT, "example.com"))
    return errs


def is_dns1035_label(v: str) -> list[str]:
    errs = [max_len_error(63)] if len(v) > 63 else []
    if not _RE[DNS1035_LABEL_FMT].match(v):
        errs.append(regex_error("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
                                "with an alphabetic character, and end with an alphanumeric character",
                                DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_qualified_name(v: str) -> list[str]:
    parts = v.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return ["a qualified name " + regex_error(_QUALIFIED_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        errs += ["prefix part must be non-empty"] if not prefix else \
            ["prefix part " + m for m in is_dns1123_subdomain(prefix)]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _RE[QUALIFIED_NAME_FMT].match(name):
        errs.append("name part " + regex_error(_QUALIFIED_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_label_value(v: str) -> list[str]:
    errs = [max_len_error(63)] if len(v) > 63 else []
    if not _RE[LABEL_VALUE_FMT].match(v):
        errs.append(regex_error("a valid label must be an empty string or consist of alphanumeric characters, '-', "
                                "'_' or '.', and must start and end with an alphanumeric character", LABEL_VALUE_FMT,
                                "MyValue", "my_value", "12345"))
    return errs


def is_valid_port_name(v: str) -> list[str]:
    errs = [max_len_error(15)] if len(v) > 15 else []
    if not re.match(r"^[-a-z0-9]+$", v):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search(r"[a-z]", v):
        errs.append("must contain at least one letter (a-z)")
    if "--" in v:
        errs.append("must not contain consecutive hyphens")
    if v and (v[0] == "-" or v[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_http_header_name(v: str) -> list[str]:
    if re.match(r"^[-A-Za-z0-9]+$", v):
        return []
    return [regex_error("a valid HTTP header must consist of alphanumeric characters or '-'", "[-A-Za-z0-9]+",
                        "X-Header-Name")]


def is_relaxed_env_var_name(v: str) -> list[str]:
    """IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation, on by default from 1.32): printable ASCII
    other than '='. The strict IsEnvVarName of 1.31's default would be a false alarm on 1.32 and later."""
    errs = ["environment variable name must be non-empty"] if not v else []
    if any(ord(ch) > 127 or not ch.isprintable() or ch == "=" for ch in v):
        errs.append("a valid environment variable name must consist only of printable ASCII characters other than '='")
    return errs


def is_config_map_key(v: str) -> list[str]:
    errs = [max_len_error(253)] if len(v) > 253 else []
    if not re.match(r"^[-._a-zA-Z0-9]+$", v):
        errs.append(regex_error("a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                                "[-._a-zA-Z0-9]+", "key.name", "KEY_NAME", "key-name"))
    if v == ".":
        errs.append("must not be '.'")
    elif v == "..":
        errs.append("must not be '..'")
    elif v.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def is_valid_ip(v: str) -> bool:
    """netutils.ParseIPSloppy accepts the address (IPv4 octets may have leading zeros)."""
    import ipaddress
    if ":" not in v and re.match(r"^\d{1,3}(\.\d{1,3}){3}$", v):
        return all(int(x) <= 255 for x in v.split("."))
    try:
        ipaddress.IPv6Address(v)
    except ValueError:
        return False
    return True


IP_MESSAGE = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


def inclusive_range(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"
