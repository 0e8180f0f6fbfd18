"""The helpers of k8s.io/apimachinery that the API groups' validation functions call,
as plain checks that return the server's detail strings (apierrors words the field
error around them). Each names its upstream function; read from the apimachinery
copy vendored with kubernetes v1.31 (pkg/util/validation/validation.go,
pkg/apis/meta/v1/validation/validation.go, pkg/api/validation/path/name.go)."""
from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from typing import TypeGuard

from . import apierrors as E

# IsValidPercent: percentFmt and its RegexError message.
PERCENT = re.compile(r"^[0-9]+%$")
PERCENT_MESSAGE = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
                   "regex used for validation is '[0-9]+%')")
# IsDNS1123Label / IsDNS1123Subdomain / IsDNS1035Label: formats and RegexError messages.
_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL = re.compile(rf"^{_LABEL}$")
DNS1123_LABEL_MESSAGE = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                         "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                         "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS1123_SUBDOMAIN = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
DNS1123_SUBDOMAIN_MESSAGE = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                             "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
                             r"used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1035_LABEL_MESSAGE = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                         "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
                         "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
WILDCARD_DNS1123 = re.compile(rf"^\*\.{_LABEL}(\.{_LABEL})*$")
WILDCARD_DNS1123_MESSAGE = ("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, "
                            "which must consist of lower case alphanumeric characters, '-' or '.' and end with an "
                            "alphanumeric character (e.g. '*.example.com', regex used for validation is "
                            r"'\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
# IsQualifiedName's name part (qualifiedNameFmt) and IsValidLabelValue (labelValueFmt).
_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
# IsValidPortName (IANA_SVC_NAME).
_PORT_NAME_CHARS = re.compile(r"^[-a-z0-9]+$")
_HAS_LETTER = re.compile(r"[a-z]")


def is_int(v) -> TypeGuard[int]:
    """An integer as Go decodes it into an int32 (bool is no integer; out-of-range is AS005)."""
    return isinstance(v, int) and not isinstance(v, bool) and -E.INT32_MAX - 1 <= v <= E.INT32_MAX


def dns1123_label(s: str) -> list[str]:
    """IsDNS1123Label."""
    out = ["must be no more than 63 characters"] if len(s) > 63 else []
    return out + ([] if DNS1123_LABEL.match(s) else [DNS1123_LABEL_MESSAGE])


def dns1123_subdomain(s: str) -> list[str]:
    """IsDNS1123Subdomain."""
    out = ["must be no more than 253 characters"] if len(s) > 253 else []
    return out + ([] if DNS1123_SUBDOMAIN.match(s) else [DNS1123_SUBDOMAIN_MESSAGE])


def dns1035_label(s: str) -> list[str]:
    """IsDNS1035Label (ValidateServiceName)."""
    out = ["must be no more than 63 characters"] if len(s) > 63 else []
    return out + ([] if DNS1035_LABEL.match(s) else [DNS1035_LABEL_MESSAGE])


def wildcard_dns1123_subdomain(s: str) -> list[str]:
    """IsWildcardDNS1123Subdomain."""
    out = ["must be no more than 253 characters"] if len(s) > 253 else []
    return out + ([] if WILDCARD_DNS1123.match(s) else [WILDCARD_DNS1123_MESSAGE])


def path_segment_name(s: str) -> list[str]:
    """path.IsValidPathSegmentName."""
    if s in (".", ".."):
        return [f"may not be '{s}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in s]


def port_name(s: str) -> list[str]:
    """IsValidPortName (its checks in its order)."""
    out = ["must be no more than 15 characters"] if len(s) > 15 else []
    if not _PORT_NAME_CHARS.match(s):
        out.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _HAS_LETTER.search(s):
        out.append("must contain at least one letter (a-z)")
    if "--" in s:
        out.append("must not contain consecutive hyphens")
    if s.startswith("-") or s.endswith("-"):
        out.append("must not begin or end with a hyphen")
    return out


def percent(s: str) -> list[str]:
    """IsValidPercent."""
    return [] if PERCENT.match(s) else [PERCENT_MESSAGE]


def label_value(v: str) -> list[str]:
    """IsValidLabelValue."""
    out = ["must be no more than 63 characters"] if len(v) > 63 else []
    if v and not _NAME_PART.match(v):
        out.append("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                   "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                   "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
    return out


def ip(s: str) -> bool:
    """netutils.ParseIPSloppy succeeds (leading zeros in IPv4 allowed, as Go's legacy parser)."""
    try:
        ipaddress.ip_address(s)
        return True
    except ValueError:
        return bool(re.fullmatch(r"\d{1,3}(\.\d{1,3}){3}", s)) and all(int(p) < 256 for p in s.split("."))


def cidr(s: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """netutils.ParseCIDRSloppy: the network a CIDR names (host bits allowed), or None."""
    if "/" not in s:
        return None
    addr, _, bits = s.partition("/")
    if not bits.isdigit():
        return None
    try:
        return ipaddress.ip_network(f"{ipaddress.ip_address(addr)}/{int(bits)}", strict=False)
    except ValueError:
        return None


# IsValidCIDR's message (apimachinery validation/ip.go, v1.31).
CIDR_MESSAGE = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"


# --------------------------------------------------------------- int or percent (apps/validation)


def int_or_percent_value(v) -> int | None:
    """getIntOrPercentValue: the number of "N%", or an int; None when neither."""
    if is_int(v):
        return v
    if isinstance(v, str):
        if not percent(v):
            return int(v[:-1])
        if re.fullmatch(r"[-+]?\d+", v):   # IntValue() on a string: strconv.Atoi
            return int(v)
        return 0
    return None


def positive_int_or_percent(v) -> list[str]:
    """ValidatePositiveIntOrPercent."""
    if isinstance(v, str):
        return percent(v)
    if is_int(v) and v < 0:
        return [E.NEGATIVE]
    return []


def not_more_than_100_percent(v) -> list[str]:
    """IsNotMoreThan100Percent."""
    if isinstance(v, str) and not percent(v) and int(v[:-1]) > 100:
        return ["must not be greater than 100%"]
    return []


# --------------------------------------------------------------- label selectors (meta/v1/validation)


def label_selector(sel, path: tuple) -> Iterator[tuple[tuple, str]]:
    """ValidateLabelSelector (ValidateLabels on matchLabels, ValidateLabelSelectorRequirement
    on each expression): (path, message) for each key that is no qualified name, each value
    that is no label value, each operator with the wrong values."""
    if not isinstance(sel, dict):
        return
    labels = sel.get("matchLabels")
    for k, v in sorted(labels.items()) if isinstance(labels, dict) else ():
        for msg in qualified_name(str(k)):   # ValidateLabels: ValidateLabelName, IsValidLabelValue
            yield path + ("matchLabels",), E.invalid(k, msg)
        for msg in label_value(v) if isinstance(v, str) else ():
            yield path + ("matchLabels",), E.invalid(v, msg)
    exprs = sel.get("matchExpressions")
    for i, req in enumerate(exprs if isinstance(exprs, list) else []):
        if isinstance(req, dict):
            yield from _requirement(req, path + ("matchExpressions", i))


def _requirement(req: dict, at: tuple) -> Iterator[tuple[tuple, str]]:
    """ValidateLabelSelectorRequirement."""
    op, values = req.get("operator"), req.get("values")
    values = values if isinstance(values, list) else []
    if op in ("In", "NotIn"):
        if not values:
            yield at + ("values",), E.required("must be specified when `operator` is 'In' or 'NotIn'")
    elif op in ("Exists", "DoesNotExist"):
        if values:
            yield at + ("values",), E.forbidden("may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
    elif isinstance(op, str):
        yield at + ("operator",), E.invalid(op, "not a valid selector operator")
    key = req.get("key")
    for msg in qualified_name(key) if isinstance(key, str) else ():
        yield at + ("key",), E.invalid(key, msg)
    for j, v in enumerate(values):
        for msg in label_value(v) if isinstance(v, str) else ():
            yield at + ("values", j), E.invalid(v, msg)


def selector_empty(sel) -> bool:
    """len(MatchLabels)+len(MatchExpressions) == 0."""
    return isinstance(sel, dict) and not sel.get("matchLabels") and not sel.get("matchExpressions")


QUALIFIED_NAME_MESSAGE = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                          "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                          "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def qualified_name(s: str) -> list[str]:
    """IsQualifiedName."""
    parts = s.split("/")
    if len(parts) > 2:
        return ["a qualified name " + QUALIFIED_NAME_MESSAGE + " with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"]
    out = []
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            out.append("prefix part must be non-empty")
        else:
            out += ["prefix part " + m for m in dns1123_subdomain(parts[0])]
    if not name:
        out.append("name part must be non-empty")
    elif len(name) > 63:
        out.append("name part must be no more than 63 characters")
    if name and not _NAME_PART.match(name):
        out.append("name part " + QUALIFIED_NAME_MESSAGE)
    return out


# IsDomainPrefixedPath: httpPathFmt.
HTTP_PATH = re.compile(r"^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$")


def domain_prefixed_path(v: str) -> list[str]:
    """IsDomainPrefixedPath: whole field errors (Required / Invalid value: ...)."""
    host, slash, rest = v.partition("/")
    if not v:
        return [E.required()]
    if not slash or not host or not rest:
        return [E.invalid(v, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    out = [E.invalid(host, m) for m in dns1123_subdomain(host)]
    if not HTTP_PATH.match(rest):
        out.append(E.invalid(rest, f"Invalid path (regex used for validation is '{HTTP_PATH.pattern[1:-1]}')"))
    return out
