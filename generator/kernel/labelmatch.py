"""Label and node selectors, matched the way the API server and the scheduler
match them. The one matcher of the project: the validator (Services,
PodMonitorings, InferencePools selecting pods), the planner (ClusterQueue
namespace selectors, flavors against pod node selectors and affinity) and the
generator use it.

A label value may be a `Wild`: a value a controller sets per pod (a Job's
completion index, a hash), which matches whatever values it can take."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Wild:
    """A label value set per pod by a controller: it can equal any value except the excluded ones."""
    excluded: frozenset = frozenset()

    def matches(self, value: Any) -> bool:
        return value not in self.excluded


ANY = Wild()


def _equal(have: Any, want: Any) -> bool:
    return have.matches(want) if isinstance(have, Wild) else have == want


def _requirement(labels: Mapping, key: Any, op: Any, values: list) -> bool:
    """One matchExpressions / nodeSelectorTerm requirement (metav1 and core/v1 operators)."""
    present = key in labels
    have: Any = labels.get(key)   # a value or a Wild; a non-number fails int() below
    if op == "In":
        return present and any(_equal(have, v) for v in values)
    if op == "NotIn":
        # A Wild value can always differ from the listed ones.
        return not present or isinstance(have, Wild) or have not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and not isinstance(have, Wild) and len(values) == 1:
        try:
            a, b = int(have), int(values[0])
        except (TypeError, ValueError):
            return False
        return a > b if op == "Gt" else a < b
    return False


def _expressions_match(expressions: Any, labels: Mapping) -> bool:
    for e in expressions if isinstance(expressions, list) else []:
        if not isinstance(e, dict):
            return False
        values = e.get("values")
        if not _requirement(labels, e.get("key"), e.get("operator"), values if isinstance(values, list) else []):
            return False
    return True


def selector_matches(selector: Mapping | None, labels: Mapping) -> bool:
    """A metav1.LabelSelector against labels. None selects nothing; {} selects everything
    (ClusterQueue namespaceSelector semantics)."""
    if selector is None:
        return False
    match_labels = selector.get("matchLabels")
    for k, v in (match_labels.items() if isinstance(match_labels, dict) else ()):
        if k not in labels or not _equal(labels[k], v):
            return False
    return _expressions_match(selector.get("matchExpressions"), labels)


def is_empty(selector: Mapping | None) -> bool:
    """An empty LabelSelector ({}) selects everything."""
    return selector is not None and not selector.get("matchLabels") and not selector.get("matchExpressions")


def node_selector_term_matches(term: Mapping, labels: Mapping) -> bool:
    """A core/v1 NodeSelectorTerm against node labels (matchExpressions only; matchFields
    name node fields, not labels, and are treated as unknown: no match)."""
    if term.get("matchFields"):
        return False
    return _expressions_match(term.get("matchExpressions"), labels)


def required_node_affinity(pod_spec: Mapping) -> list[Mapping] | None:
    """The pod's requiredDuringSchedulingIgnoredDuringExecution node selector terms (ORed),
    or None when it has none."""
    affinity = pod_spec.get("affinity")
    node = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(node, dict) else None
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    if not isinstance(terms, list) or not terms:
        return None
    return [t for t in terms if isinstance(t, dict)]


def node_matches(pod_spec: Mapping, node_labels: Mapping) -> bool:
    """Would the scheduler's node-label filters accept a node with these labels: the pod's
    nodeSelector and its required node affinity (any one term)."""
    selector = pod_spec.get("nodeSelector")
    for k, v in (selector.items() if isinstance(selector, dict) else ()):
        if k not in node_labels or not _equal(node_labels[k], v):
            return False
    terms = required_node_affinity(pod_spec)
    return terms is None or any(node_selector_term_matches(t, node_labels) for t in terms)


def describe(selector: Mapping) -> str:
    """k=v, key In [a, b] ... for messages."""
    match_labels = selector.get("matchLabels")
    parts = [f"{k}={v}" for k, v in sorted((match_labels or {}).items())] if isinstance(match_labels, dict) else []
    parts += [f"{e.get('key')} {e.get('operator')} {e.get('values') or ''}".strip()
              for e in selector.get("matchExpressions") or [] if isinstance(e, dict)]
    return ", ".join(parts)


def tolerates(toleration: Mapping, taint: Mapping) -> bool:
    """core/v1 Toleration.ToleratesTaint: effect (empty matches all), key (empty matches all),
    then Exists, or Equal (the default operator) with the same value."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if key and key != taint.get("key"):
        return False
    if operator == "Exists":
        return True
    if operator != "Equal":
        return False
    return (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated_taint(taints, tolerations) -> Mapping | None:
    """The first NoSchedule or NoExecute taint no toleration tolerates (the scheduler's
    TaintToleration filter, as Kueue's flavor assigner applies it to a flavor's nodeTaints);
    None when all are tolerated. Malformed entries are skipped."""
    tols = [t for t in tolerations or () if isinstance(t, dict)]
    for taint in taints or ():
        if not isinstance(taint, dict) or taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tolerates(t, taint) for t in tols):
            return taint
    return None
