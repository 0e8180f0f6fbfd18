"""MultiKueue across clusters: the MK1xx rules run on a group of inputs, a manager
and its workers (`validate --multikueue`, or `make validate` on a spec with
multiKueue groups: generator/validate/group.py), checked against each other.
Sources: Kueue docs at v0.12.3, v0.17.4, v0.19.2 (tasks/manage/setup_multikueue.md,
concepts/multikueue.md) and KEP-9988 (keps/9988-multikueue-manager-quota-automation,
v0.19.2) for which worker ClusterQueues serve a manager's."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal

from ...kernel import kueue_api, quantity, supply
from ...kernel.errors import Problem
from ..findings import ERROR, INFO, WARNING
from ..objects import Model, Obj, describe
from . import RULES, Rule, hit
from .kueue import KUEUE
from .multikueue import KueueConfig, clusters_of, dispatched, dispatching_queues

# Namespaces every cluster has from the start (Kubernetes docs, "Namespaces": initial namespaces).
INITIAL_NAMESPACES = {"default", "kube-system", "kube-public", "kube-node-lease"}
JOBSET_CRD = "jobsets.jobset.x-k8s.io"
JOBSET_INTEGRATION = kueue_api.INTEGRATIONS[("jobset.x-k8s.io", "JobSet")]
# Kueue quotes for the hints.
MIRROR_QUOTE = ('"you should ensure that the worker cluster configuration mirrors the one of the manager cluster in '
                'terms of namespaces and LocalQueues" (Kueue docs, setup_multikueue)')
QUOTA_QUOTE = ('"Ideally, the quota in the manager cluster should equal the total quota available in all worker '
               'clusters" (Kueue docs, concepts/multikueue)')


@dataclass
class Member:
    """One cluster of a group: an input, its checked model, and what is visible around it."""
    name: str                          # its MultiKueueCluster name (the overlay's profile, or NAME=)
    source: str                        # the input, as findings name it
    model: Model
    closed: bool                       # closed world: what the input lacks, the cluster lacks
    config: KueueConfig | None = None  # its Kueue Configuration, from the input, context or controllers/
    jobset: bool = False               # a JobSet install is visible (controllers/<name>/jobset, or the CRD)
    config_beside: bool = False        # the config is controllers/<name>/kueue's, not in the input or context


@dataclass
class Group:
    manager: Member
    members: dict[str, Member] = field(default_factory=dict)   # every other input, by name

    def workers(self, config: Obj) -> list[Member]:
        """The inputs that a MultiKueueConfig of the manager lists, in its order."""
        return [self.members[c] for c in clusters_of(config) if c in self.members]

    def anchor(self, worker: str) -> Obj | None:
        """The manager's MultiKueueCluster for a worker: where findings about the worker point."""
        return self.manager.model.get(KUEUE, "MultiKueueCluster", worker)


def unseen(worker: Member, what: str) -> str | None:
    """`missing` for a problem about something a worker lacks: a note when its input is open-world."""
    return None if worker.closed else f"{what} on worker {worker.name!r}"


GROUP_RULES: dict[str, Callable[[Group], Iterable[Problem]]] = {}


def group_rule(rule_id: str, severity: str, summary: str, hint: str):
    def register(fn):
        if rule_id in RULES:
            raise ValueError(f"rule {rule_id} registered twice")
        RULES[rule_id] = Rule(rule_id, severity, summary, hint, None)
        GROUP_RULES[rule_id] = fn
        return fn
    return register


@group_rule("MK101", ERROR, "a LocalQueue (or its namespace) of a MultiKueue manager is missing on a worker",
            f"create the same namespace and LocalQueue on every worker of the MultiKueueConfig: {MIRROR_QUOTE}; "
            f"MultiKueue sends a workload to the LocalQueue of the same name in the same namespace")
def local_queues_mirrored(group):
    m = group.manager.model
    for cq, config in dispatching_queues(m):
        for lq in m.kueue("LocalQueue"):
            if lq.spec.get("clusterQueue") != cq.name:
                continue
            for w in group.workers(config):
                has_ns = lq.namespace in INITIAL_NAMESPACES or w.model.get("", "Namespace", lq.namespace) is not None
                if w.model.get(KUEUE, "LocalQueue", lq.name, lq.namespace) is None:
                    also = "" if has_ns else f", nor its namespace {lq.namespace!r}"
                    yield hit(lq, (), f"worker {w.name!r} ({w.source}) has no LocalQueue {lq.name!r} in namespace "
                              f"{lq.namespace!r}{also} (LocalQueues there: "
                              f"{describe(w.model.names(KUEUE, 'LocalQueue', lq.namespace))})",
                              missing=unseen(w, f"LocalQueue {lq.name!r} in namespace {lq.namespace!r}"))
                elif not has_ns:
                    yield hit(lq, ("metadata", "namespace"), f"worker {w.name!r} ({w.source}) has no Namespace "
                              f"{lq.namespace!r}", missing=unseen(w, f"Namespace {lq.namespace!r}"))


def _quotas(cq: Obj) -> dict[tuple, tuple[Decimal, tuple]]:
    """(flavor, resource) -> (nominalQuota, path) of a ClusterQueue, as the supply model reads it."""
    return {(q.flavor, q.resource): (q.quota.nominal, (*q.path, "nominalQuota")) for q in supply.quotas_at(cq.spec)}


def related_queues(group: Group, cq: Obj, config: Obj) -> list[tuple[Member, Obj]]:
    """The workers' ClusterQueues that serve a manager ClusterQueue: those that the workers'
    LocalQueues of the same namespace and name as the manager's LocalQueues of `cq` point to
    (KEP-9988, "Defining related worker ClusterQueues"), each once per worker."""
    m = group.manager.model
    names = [(lq.namespace, lq.name) for lq in m.kueue("LocalQueue") if lq.spec.get("clusterQueue") == cq.name]
    out = []
    for w in group.workers(config):
        seen = set()
        for ns, name in names:
            wlq = w.model.get(KUEUE, "LocalQueue", name, ns)
            target = wlq.spec.get("clusterQueue") if wlq else None
            wcq = w.model.get(KUEUE, "ClusterQueue", target) if isinstance(target, str) else None
            if wcq is not None and wcq.name not in seen:
                seen.add(wcq.name)
                out.append((w, wcq))
    return out


@group_rule("MK102", WARNING, "a MultiKueue manager's quota per flavor and resource differs from its workers' total "
            "(the nominal quotas of the workers' ClusterQueues behind the same LocalQueues)",
            f"{QUOTA_QUOTE}: more dispatches workloads no worker can admit, less leaves workers idle. Where the "
            f"manager shares no flavor name with its workers, resources are compared across flavors")
def quota_is_workers_total(group):
    m = group.manager.model
    for cq, config in dispatching_queues(m):
        related = related_queues(group, cq, config)
        if {w.name for w, _ in related} != set(clusters_of(config)):
            # A worker that is not among the inputs (MK106's note) or serves none of the queue's
            # LocalQueues (MK101): no total to compare until every worker is there and mirrors.
            continue
        yield from _quota_differences(cq, [(w, _quotas(wcq)) for w, wcq in related])


def _quota_differences(cq: Obj, theirs: list) -> Iterator[Problem]:
    """One hit per (flavor, resource) where the manager ClusterQueue's quota is not the sum of
    its workers' (`theirs`: each worker with its quotas)."""
    mine = _quotas(cq)
    manager_flavors = {f for f, _ in mine}
    worker_flavors = {f for _, q in theirs for f, _ in q}
    # Shared flavor names: compared flavor by flavor (MK103 checks they mean the same nodes).
    # None shared (a manager booking one flavor for all, as KEP-9988 sums): resource by resource.
    per_flavor = bool(manager_flavors & worker_flavors)
    key = (lambda f, r: (f, r)) if per_flavor else (lambda f, r: (None, r))  # noqa: E731
    total: dict = {}
    parts: dict = {}
    for w, q in theirs:
        for (f, r), (v, _) in q.items():
            total[key(f, r)] = total.get(key(f, r), 0) + v
            parts.setdefault(key(f, r), []).append(f"{w.name} {quantity.show(r, v)}")
    have: dict = {}
    where: dict = {}
    for (f, r), (v, path) in mine.items():
        have[key(f, r)] = have.get(key(f, r), 0) + v
        where.setdefault(key(f, r), path)
    for k in sorted(set(have) | set(total), key=lambda k: (str(k[0]), str(k[1]))):
        a, b = have.get(k, 0), total.get(k, 0)
        if a == b:
            continue
        f, r = k
        what = f"flavor {f!r} {r}" if per_flavor else f"{r} (all flavors; manager flavors " \
            f"{describe(sorted(manager_flavors))}, workers' {describe(sorted(worker_flavors))})"
        word = "above" if a > b else "below"
        yield hit(cq, where.get(k, ("spec", "resourceGroups")),
                  f"{what}: manager {quantity.show(r, a)}, {word} the workers' total {quantity.show(r, b)} "
                  f"({', '.join(parts.get(k, [])) or 'no worker quota'})")


@group_rule("MK103", WARNING, "ResourceFlavors of the same name select different node labels on two clusters of a "
            "MultiKueue group",
            "give a flavor name one meaning across the group (the same spec.nodeLabels), or rename one: the "
            "manager's quota per flavor is the sum of the workers' quotas of that name")
def flavor_names_agree(group):
    first: dict[str, tuple[Member, dict]] = {}
    for member in [group.manager, *group.members.values()]:
        for rf in member.model.kueue("ResourceFlavor"):
            labels = rf.spec.get("nodeLabels") or {}
            if member is group.manager and not labels:
                continue   # the manager runs no pods: a flavor without labels only books quota
            if rf.name not in first:
                first[rf.name] = (member, labels)
            elif labels != first[rf.name][1]:
                other, theirs = first[rf.name]
                yield hit(rf, ("spec", "nodeLabels"), f"selects {_labels(labels)} on {member.name!r}, but "
                          f"{_labels(theirs)} on {other.name!r} ({other.source})")


def _labels(labels) -> str:
    if not isinstance(labels, dict):
        return repr(labels)   # the schema layer reports it
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) or "every node (no nodeLabels)"


@group_rule("MK104", ERROR, "a kind MultiKueue dispatches is not enabled on both sides: the manager's or a "
            "worker's Kueue Configuration lacks its integration (batch/job, jobset.x-k8s.io/jobset), or a worker "
            "has no visible JobSet install while JobSets are dispatched",
            "list the integration in integrations.frameworks of the manager's and every worker's Kueue "
            "Configuration (kueue-manager-config), and install JobSet on every worker: the manager watches JobSets "
            "there, and a worker without the CRD stays inactive")
def kinds_enabled(group):
    # The manager builds a MultiKueue adapter per enabled integration and rejects a workload whose
    # kind has none ("No multikueue adapter found", Kueue v0.17.4 test/integration/multikueue/
    # enabled_integration_test.go); it watches each adapter's kind on every worker, and a watch that
    # cannot start fails the connection (pkg/controller/admissionchecks/multikueue/multikueuecluster.go
    # setConfig: "let's not accept this for now").
    mgr = group.manager
    sent = dispatched(mgr.model)
    yield from _manager_integrations(mgr, sent)
    kinds: set[str] = {kueue_api.INTEGRATIONS[(o.group, o.kind)] for o, _ in sent if (o.group, o.kind) in kueue_api.INTEGRATIONS}
    if mgr.config is not None:
        kinds |= set(mgr.config.frameworks) & set(kueue_api.INTEGRATIONS.values())
    if not kinds:
        return
    workers = {w.name: w for _, config in dispatching_queues(mgr.model) for w in group.workers(config)}
    for w in workers.values():
        yield from _worker_integrations(group, w, kinds)


def _manager_integrations(mgr: Member, sent: list) -> Iterator[Problem]:
    """The dispatched objects whose integration the manager's Kueue Configuration lacks; a
    note when there is no Configuration to check."""
    if mgr.config is not None:
        mine = set(mgr.config.frameworks)
        for o, cq in sent:
            name = kueue_api.INTEGRATIONS.get((o.group, o.kind))
            if name and name not in mine:
                yield hit(o, (), f"queued to ClusterQueue {cq.name!r}, which dispatches through MultiKueue, but "
                          f"the manager's {mgr.config.where} does not enable {name}: Kueue neither queues nor "
                          f"dispatches it")
    elif sent:
        yield hit(sent[0][0], (), f"no Kueue Configuration of manager {mgr.name!r} in its input or beside it "
                  f"(controllers/{mgr.name}/kueue); its integrations are not checked", severity=INFO)


def _worker_integrations(group, w: Member, kinds: set[str]) -> Iterator[Problem]:
    """What worker `w` lacks of the integrations (`kinds`) its manager dispatches: in its Kueue
    Configuration, and a JobSet install where JobSets are sent."""
    mgr = group.manager
    if w.config is None:
        yield hit(group.anchor(w.name), (), f"no Kueue Configuration of worker {w.name!r} in its input or "
                  f"beside it (controllers/{w.name}/kueue); {', '.join(sorted(kinds))} not checked there",
                  severity=INFO)
    else:
        lacking = sorted(kinds - set(w.config.frameworks))
        if lacking:
            yield hit(w.config.obj, w.config.path, f"worker {w.name!r}: integrations.frameworks lacks "
                      f"{', '.join(lacking)}, which manager {mgr.name!r} dispatches; the worker's Kueue must "
                      f"admit the copies it receives")
    if JOBSET_INTEGRATION in kinds and not w.jobset:
        yield hit(group.anchor(w.name), (), f"JobSets are dispatched, but worker {w.name!r} ({w.source}) shows "
                  f"no JobSet install (no controllers/{w.name}/jobset, no CustomResourceDefinition {JOBSET_CRD})",
                  missing=unseen(w, "a JobSet install"))


def kueue_apis(member: Member) -> list[str]:
    """The kueue.x-k8s.io versions an input writes its Kueue objects in (Topology aside: it had its
    own v1alpha1 before v1beta2)."""
    return sorted({str(o.body.get("apiVersion")) for o in member.model.objects
                   if o.group == KUEUE and o.kind != "Topology"})


@group_rule("MK105", ERROR, "a MultiKueue manager and a worker use different Kueue API versions "
            "(kueue.x-k8s.io/v1beta1 against v1beta2)",
            "run one Kueue release across the group: the manager creates its Workloads on the workers in its own "
            "API version")
def same_api(group):
    mine = kueue_apis(group.manager)
    for w in group.members.values():
        theirs = kueue_apis(w)
        if mine and theirs and mine != theirs:
            anchor = group.anchor(w.name)
            yield hit(anchor, ("apiVersion",) if anchor else (), f"manager {group.manager.name!r} writes "
                      f"{', '.join(mine)}; worker {w.name!r} ({w.source}) writes {', '.join(theirs)}")


@group_rule("MK106", WARNING, "an input of a MultiKueue group is no cluster of the manager's MultiKueueConfigs, or "
            "a cluster they list is not among the inputs (a note)",
            "name each input after its MultiKueueCluster (NAME=PATH, or a directory or file of that name), and "
            "give every worker the MultiKueueConfig lists")
def members_match(group):
    configs = group.manager.model.kueue("MultiKueueConfig")
    listed = {c for config in configs for c in clusters_of(config)}
    for config in configs:
        for i, c in enumerate(config.spec.get("clusters") if isinstance(config.spec.get("clusters"), list) else []):
            if isinstance(c, str) and c not in group.members:
                yield hit(config, ("spec", "clusters", i), f"worker {c!r} is not among the inputs; the group rules "
                          f"did not check it", severity=INFO)
    for w in group.members.values():
        if w.name not in listed:
            yield hit(configs[0] if configs else None, (), f"input {w.name!r} ({w.source}) is no cluster of the "
                      f"manager's MultiKueueConfigs (clusters: {describe(sorted(listed))})")
