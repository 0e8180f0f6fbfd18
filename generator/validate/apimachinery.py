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
PERCENT_MESSAGE = E.regex_error("a valid percent string must be a numeric string followed by an ending '%'", "[0-9]+%",
                                "1%", "93%")
WILDCARD_DNS1123_FMT = r"\*\." + E.DNS1123_SUBDOMAIN_FMT
WILDCARD_DNS1123 = re.compile("^" + WILDCARD_DNS1123_FMT + "$")


def is_int(v) -> TypeGuard[int]:
    """An integer as Go decodes it into an int32 (bool is no integer; out-of-range is AS005)."""
    return isinstance(v, int) and not isinstance(v, bool) and -E.INT32_MAX - 1 <= v <= E.INT32_MAX


def dns1123_label(s: str) -> list[str]:
    """IsDNS1123Label."""
    return E.is_dns1123_label(s)


def dns1123_subdomain(s: str) -> list[str]:
    """IsDNS1123Subdomain."""
    return E.is_dns1123_subdomain(s)


def dns1035_label(s: str) -> list[str]:
    """IsDNS1035Label (ValidateServiceName)."""
    return E.is_dns1035_label(s)


def wildcard_dns1123_subdomain(s: str) -> list[str]:
    """IsWildcardDNS1123Subdomain."""
    out = [E.max_len_error(253)] if len(s) > 253 else []
    if not WILDCARD_DNS1123.match(s):
        out.append(E.regex_error("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, "
                                 "which must consist of lower case alphanumeric characters, '-' or '.' and end with an "
                                 "alphanumeric character", WILDCARD_DNS1123_FMT, "*.example.com"))
    return out


def path_segment_name(s: str) -> list[str]:
    """path.IsValidPathSegmentName."""
    if s in (".", ".."):
        return [f"may not be '{s}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in s]


def port_name(s: str) -> list[str]:
    """IsValidPortName."""
    return E.is_valid_port_name(s)


def percent(s: str) -> list[str]:
    """IsValidPercent."""
    return [] if PERCENT.match(s) else [PERCENT_MESSAGE]


def label_value(v: str) -> list[str]:
    """IsValidLabelValue."""
    return E.is_label_value(v)


def ip(s: str) -> bool:
    """netutils.ParseIPSloppy succeeds."""
    return E.is_valid_ip(s)


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


def qualified_name(s: str) -> list[str]:
    """IsQualifiedName."""
    return E.is_qualified_name(s)


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
