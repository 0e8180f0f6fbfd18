"""MultiKueue: a manager cluster dispatches the Jobs and JobSets it admits to
worker clusters (Kueue docs at v0.12.3, v0.17.4, v0.19.2: concepts/multikueue.md,
tasks/manage/setup_multikueue.md).

MK0xx rules run on one input like every other rule: what the manager's own
objects get wrong (a kubeconfig in Git, an AdmissionCheck -> MultiKueueConfig ->
MultiKueueCluster chain that breaks, a ClusterQueue Kueue keeps inactive, a
Configuration field the release lacks). MK1xx rules run on a group of inputs, a
manager and its workers (`validate --multikueue`, or `make validate` on a spec
with multiKueue groups: generator/validate/group.py), checked against each other."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from ... import kueue as kq
from ... import quantity, yamlio
from ..findings import ERROR, INFO, WARNING
from ..objects import Model, Obj, describe
from . import RULES, Hit, Rule, rule
from .kueue import KUEUE, admission_checks, queued, resource_groups

# The Secret key Kueue reads a worker's kubeconfig from (apis/kueue/v1beta2/multikueue_types.go
# MultiKueueConfigSecretKey, v0.17.4; the same key in v0.12.3's v1beta1).
KUBECONFIG_KEY = "kubeconfig"
# Namespaces every cluster has from the start (Kubernetes docs, "Namespaces": initial namespaces).
INITIAL_NAMESPACES = {"default", "kube-system", "kube-public", "kube-node-lease"}
JOBSET_CRD = "jobsets.jobset.x-k8s.io"
JOBSET_INTEGRATION = kq.INTEGRATIONS[("jobset.x-k8s.io", "JobSet")]
# Kueue quotes for the hints.
MIRROR_QUOTE = ('"you should ensure that the worker cluster configuration mirrors the one of the manager cluster in '
                'terms of namespaces and LocalQueues" (Kueue docs, setup_multikueue)')
QUOTA_QUOTE = ('"Ideally, the quota in the manager cluster should equal the total quota available in all worker '
               'clusters" (Kueue docs, concepts/multikueue)')


def release(version: str) -> tuple[int, ...]:
    """'v0.17.4' -> (0, 17, 4); () when unknown."""
    try:
        return tuple(int(p) for p in version.lstrip("v").split("."))
    except ValueError:
        return ()


def controller_of(model: Model, check: str) -> str | None:
    ac = model.get(KUEUE, "AdmissionCheck", check)
    name = ac.spec.get("controllerName") if ac else None
    return name if isinstance(name, str) else None


def multikueue_checks(model: Model, cq: Obj) -> list[str]:
    """The MultiKueue admission checks a ClusterQueue names (those whose AdmissionCheck is known)."""
    return [name for _, name in admission_checks(cq) if controller_of(model, name) == kq.MULTIKUEUE_CONTROLLER]


def config_of(model: Model, check: str) -> Obj | None:
    """The MultiKueueConfig a MultiKueue AdmissionCheck's parameters name, if known."""
    ac = model.get(KUEUE, "AdmissionCheck", check)
    params = ac.spec.get("parameters") if ac else None
    if not isinstance(params, dict) or params.get("kind") != "MultiKueueConfig" or not params.get("name"):
        return None
    return model.get(KUEUE, "MultiKueueConfig", params["name"])


def clusters_of(config: Obj) -> list[str]:
    return [c for c in config.spec.get("clusters") or [] if isinstance(c, str)]


def dispatching_queues(model: Model) -> list[tuple[Obj, Obj]]:
    """(ClusterQueue, MultiKueueConfig) for each ClusterQueue of the input whose first
    MultiKueue check resolves to a config (MK005 reports queues with several)."""
    out = []
    for cq in model.kueue("ClusterQueue"):
        checks = multikueue_checks(model, cq)
        config = config_of(model, checks[0]) if checks else None
        if config is not None:
            out.append((cq, config))
    return out


def dispatched(model: Model) -> list[tuple[Obj, Obj]]:
    """(object, ClusterQueue) of the queued objects of the input that MultiKueue dispatches."""
    return [(o, cq) for o, cq in queued(model) if multikueue_checks(model, cq)]


# ---------------------------------------------------------------- the manager's Kueue Configuration
@dataclass(frozen=True)
class KueueConfig:
    """Kueue's manager Configuration, as a ConfigMap kueue-manager-config or a Configuration object."""
    obj: Obj
    doc: dict
    path: tuple    # where the Configuration sits in obj (("data", key) in the ConfigMap)

    @property
    def where(self) -> str:
        what = " ".join(p for p in (self.obj.kind, self.obj.name) if p)
        return f"{what} ({self.obj.source})" if self.obj.source else what

    @property
    def frameworks(self) -> list[str]:
        integrations = self.doc.get("integrations")
        frameworks = integrations.get("frameworks") if isinstance(integrations, dict) else None
        return [f for f in frameworks or [] if isinstance(f, str)]


def kueue_config(objs: Iterable[Obj]) -> KueueConfig | None:
    """The first Kueue Configuration among objs; None when there is none, or it is not YAML (the
    controller would not start: a finding for the controller's own rollout, not for queues)."""
    for o in objs:
        if o.kind == "Configuration" and o.group.startswith("config.kueue.x-k8s.io"):
            return KueueConfig(o, o.body, ())
        if (o.group, o.kind) == ("", "ConfigMap") and o.name == kq.CONFIG_MAP:
            text = (o.body.get("data") or {}).get(kq.CONFIG_KEY)
            try:
                doc = yamlio.load_strict(text) if isinstance(text, str) else None
            except Exception:   # noqa: BLE001  any parse failure: no configuration to read
                doc = None
            if isinstance(doc, dict):
                return KueueConfig(o, doc, ("data", kq.CONFIG_KEY))
    return None


def dispatcher_hits(config: KueueConfig, kueue_version: str) -> Iterable[Hit]:
    mk = config.doc.get("multiKueue")
    if isinstance(mk, dict) and "dispatcherName" in mk and release(kueue_version) and \
            release(kueue_version) < (0, 13):
        yield Hit(config.obj, config.path, f"multiKueue.dispatcherName is set, but Kueue {kueue_version} has no "
                  f"dispatcher choice (it nominates every worker at once); its strict config loader refuses the "
                  f"field and the controller does not start")


# ---------------------------------------------------------------- one input
@rule("MK001", ERROR, "a Secret in the manifests holds a kubeconfig (key `kubeconfig`): a cluster's credentials "
      "in Git",
      "create it out of band (`kubectl create secret generic NAME -n kueue-system --from-file=kubeconfig=FILE`, "
      "Kueue docs setup_multikueue) and reference it by name from the MultiKueueCluster")
def kubeconfig_in_git(model):
    for o in model.all("", "Secret"):
        key = inlined_kubeconfig(o)
        if key:
            users = [c.name for c in model.known(KUEUE, "MultiKueueCluster")
                     if _kubeconfig_source(c)[1].get("location") == o.name]
            used = f" (MultiKueueCluster {', '.join(users)} reads it)" if users else ""
            yield Hit(o, (key, KUBECONFIG_KEY), f"Secret holds a kubeconfig in {key}{used}; values not shown")


def inlined_kubeconfig(o: Obj) -> str | None:
    """'data' or 'stringData' when a Secret carries a non-empty `kubeconfig` there."""
    for key in ("data", "stringData"):
        values = o.body.get(key)
        if isinstance(values, dict) and values.get(KUBECONFIG_KEY):
            return key
    return None


def _kubeconfig_source(mkc: Obj) -> tuple[tuple, dict]:
    """(path, kubeConfig) of a MultiKueueCluster: spec.clusterSource.kubeConfig (v1beta2) or
    spec.kubeConfig (v1beta1)."""
    source = mkc.spec.get("clusterSource")
    if isinstance(source, dict):
        kc = source.get("kubeConfig")
        return ("spec", "clusterSource", "kubeConfig"), kc if isinstance(kc, dict) else {}
    kc = mkc.spec.get("kubeConfig")
    return ("spec", "kubeConfig"), kc if isinstance(kc, dict) else {}


@rule("MK002", WARNING, "a MultiKueueCluster reads its kubeconfig from a file in the Kueue controller's pod "
      "(locationType: Path), not from a Secret",
      "reference a Secret in the Kueue namespace (locationType: Secret, key `kubeconfig`), or a ClusterProfile "
      "(clusterProfileRef, Kueue v0.15 and later); a file needs a volume patched into Kueue's Deployment")
def kubeconfig_by_path(model):
    for c in model.kueue("MultiKueueCluster"):
        path, kc = _kubeconfig_source(c)
        if kc.get("locationType") == "Path":
            yield Hit(c, path + ("locationType",), f"kubeconfig read from path {kc.get('location')!r}")


@rule("MK003", ERROR, "a MultiKueue AdmissionCheck's parameters name no MultiKueueConfig",
      "set parameters {apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: ...} naming an existing config; "
      "until then Kueue keeps the check inactive (BadConfig) and its ClusterQueues admit nothing")
def check_names_config(model):
    for ac in model.kueue("AdmissionCheck"):
        if ac.spec.get("controllerName") != kq.MULTIKUEUE_CONTROLLER:
            continue
        params = ac.spec.get("parameters")
        if not isinstance(params, dict):
            yield Hit(ac, ("spec",), "no parameters: Kueue reports \"missing parameters reference\"")
        elif params.get("apiGroup") != KUEUE or params.get("kind") != "MultiKueueConfig":
            yield Hit(ac, ("spec", "parameters"), f"parameters name a {params.get('kind')!r} of group "
                      f"{params.get('apiGroup')!r}: Kueue reports \"bad parameters reference\"")
        elif model.get(KUEUE, "MultiKueueConfig", params.get("name")) is None:
            yield Hit(ac, ("spec", "parameters", "name"), f"no MultiKueueConfig {params.get('name')!r} "
                      f"(MultiKueueConfigs: {describe(model.names(KUEUE, 'MultiKueueConfig'))})",
                      missing=f"MultiKueueConfig {params.get('name')!r}")


@rule("MK004", ERROR, "a MultiKueueConfig lists a cluster that is no MultiKueueCluster",
      "create the MultiKueueCluster (cluster-scoped, named as listed) or drop it from spec.clusters; Kueue never "
      "dispatches to it (\"Missing clusters\")")
def config_clusters_exist(model):
    for config in model.kueue("MultiKueueConfig"):
        for i, name in enumerate(config.spec.get("clusters") or []):
            if isinstance(name, str) and model.get(KUEUE, "MultiKueueCluster", name) is None:
                yield Hit(config, ("spec", "clusters", i), f"no MultiKueueCluster {name!r} (MultiKueueClusters: "
                          f"{describe(model.names(KUEUE, 'MultiKueueCluster'))})",
                          missing=f"MultiKueueCluster {name!r}")


@rule("MK005", ERROR, "a ClusterQueue's MultiKueue admission check is one Kueue refuses: two MultiKueue checks, a "
      "MultiKueue check limited to some flavors (onFlavors), or beside a ProvisioningRequest check (v0.16 and later)",
      "give the manager's ClusterQueue exactly one MultiKueue check, for every flavor; put ProvisioningRequest "
      "checks on the workers' ClusterQueues. Kueue keeps such a ClusterQueue inactive")
def multikueue_check_shape(model):
    # Kueue's ClusterQueue soft validation (pkg/cache/scheduler/clusterqueue.go at v0.17.4, pkg/cache/
    # clusterqueue.go at v0.12.3): MultipleMultiKueueAdmissionChecks, MultiKueueAdmissionCheckAppliedPerFlavor,
    # and MultiKueueWithProvisioningRequest (added in v0.16.0).
    with_provisioning = release(model.kueue_version) >= (0, 16)
    for cq in model.kueue("ClusterQueue"):
        checks = list(admission_checks(cq))
        mk = [(p, n) for p, n in checks if controller_of(model, n) == kq.MULTIKUEUE_CONTROLLER]
        if not mk:
            continue
        if len(mk) > 1:
            yield Hit(cq, mk[1][0], f"MultiKueue checks {', '.join(n for _, n in mk)}: Kueue reports \"Cannot use "
                      f"multiple MultiKueue AdmissionChecks on the same ClusterQueue\"")
        strategy = cq.spec.get("admissionChecksStrategy") or {}
        for i, entry in enumerate(strategy.get("admissionChecks") or []):
            if isinstance(entry, dict) and entry.get("onFlavors") and \
                    controller_of(model, entry.get("name")) == kq.MULTIKUEUE_CONTROLLER:
                yield Hit(cq, ("spec", "admissionChecksStrategy", "admissionChecks", i, "onFlavors"),
                          f"MultiKueue check {entry.get('name')!r} limited to flavors {entry['onFlavors']}: Kueue "
                          f"reports \"Cannot specify MultiKueue AdmissionCheck per flavor\"")
        prov = [(p, n) for p, n in checks if controller_of(model, n) == kq.PROVISIONING_CONTROLLER]
        if prov and with_provisioning:
            yield Hit(cq, prov[0][0], f"ProvisioningRequest check {prov[0][1]!r} beside MultiKueue check "
                      f"{mk[0][1]!r}: Kueue {model.kueue_version} reports \"Cannot use both MultiKueue and "
                      f"ProvisioningRequest AdmissionChecks together\"")


@rule("MK006", ERROR, "the Kueue Configuration sets multiKueue.dispatcherName on a release without dispatchers "
      "(before v0.13), whose strict config loader refuses it",
      "drop multiKueue.dispatcherName, or pin Kueue v0.13 or later")
def dispatcher_needs_release(model):
    for o in model.objects:
        config = kueue_config([o])
        if config is not None:
            yield from dispatcher_hits(config, model.kueue_version)


# ---------------------------------------------------------------- a group: a manager and its workers
@dataclass
class Member:
    """One cluster of a group: an input, its checked model, and what is visible around it."""
    name: str                          # its MultiKueueCluster name (the overlay's profile, or NAME=)
    source: str                        # the input, as findings name it
    model: Model
    closed: bool                       # closed world: what the input lacks, the cluster lacks
    config: KueueConfig | None = None  # its Kueue Configuration, from the input, context or controllers/
    jobset: bool = False               # a JobSet install is visible (controllers/<name>/jobset, or the CRD)


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
    """`missing` for a Hit about something a worker lacks: a note when its input is open-world."""
    return None if worker.closed else f"{what} on worker {worker.name!r}"


GROUP_RULES: dict[str, Callable[[Group], Iterable[Hit]]] = {}


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
            f"a workload copied to a worker without them stays pending there")
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
                    yield Hit(lq, (), f"worker {w.name!r} ({w.source}) has no LocalQueue {lq.name!r} in namespace "
                              f"{lq.namespace!r}{also} (LocalQueues there: "
                              f"{describe(w.model.names(KUEUE, 'LocalQueue', lq.namespace))})",
                              missing=unseen(w, f"LocalQueue {lq.name!r} in namespace {lq.namespace!r}"))
                elif not has_ns:
                    yield Hit(lq, ("metadata", "namespace"), f"worker {w.name!r} ({w.source}) has no Namespace "
                              f"{lq.namespace!r}", missing=unseen(w, f"Namespace {lq.namespace!r}"))


def _quotas(cq: Obj) -> dict[tuple, tuple[Decimal, tuple]]:
    """(flavor, resource) -> (nominalQuota as Decimal, path) of a ClusterQueue."""
    out = {}
    for i, g in enumerate(resource_groups(cq)):
        for j, f in enumerate(g.get("flavors") or []):
            if not isinstance(f, dict):
                continue
            for k, r in enumerate(f.get("resources") or []):
                try:
                    value = quantity.parse(r.get("nominalQuota", 0))
                except (AttributeError, TypeError, ValueError):
                    continue   # the schema layer reports it
                out[(f.get("name"), r.get("name"))] = (value, ("spec", "resourceGroups", i, "flavors", j,
                                                                "resources", k, "nominalQuota"))
    return out


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
        mine = _quotas(cq)
        theirs = [(w, wcq, _quotas(wcq)) for w, wcq in related]
        manager_flavors = {f for f, _ in mine}
        worker_flavors = {f for _, _, q in theirs for f, _ in q}
        # Shared flavor names: compared flavor by flavor (MK103 checks they mean the same nodes).
        # None shared (a manager booking one flavor for all, as KEP-9988 sums): resource by resource.
        per_flavor = bool(manager_flavors & worker_flavors)
        key = (lambda f, r: (f, r)) if per_flavor else (lambda f, r: (None, r))  # noqa: E731
        total: dict = {}
        parts: dict = {}
        for w, wcq, q in theirs:
            for (f, r), (v, _) in q.items():
                total[key(f, r)] = total.get(key(f, r), 0) + v
                parts.setdefault(key(f, r), []).append(f"{w.name} {quantity.fmt_plain(v)}")
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
            yield Hit(cq, where.get(k, ("spec", "resourceGroups")),
                      f"{what}: manager {quantity.fmt_plain(a)}, {word} the workers' total {quantity.fmt_plain(b)} "
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
                yield Hit(rf, ("spec", "nodeLabels"), f"selects {_labels(labels)} on {member.name!r}, but "
                          f"{_labels(theirs)} on {other.name!r} ({other.source})")


def _labels(labels: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) or "every node (no nodeLabels)"


@group_rule("MK104", ERROR, "a kind MultiKueue dispatches is not enabled on both sides: the manager's or a "
            "worker's Kueue Configuration lacks its integration (batch/job, jobset.x-k8s.io/jobset), or a worker "
            "has no visible JobSet install while JobSets are dispatched",
            "list the integration in integrations.frameworks of the manager's and every worker's Kueue "
            "Configuration (kueue-manager-config), and install JobSet on every worker: the manager watches JobSets "
            "there, and a worker without the CRD stays inactive")
def kinds_enabled(group):
    mgr = group.manager
    mine = set(mgr.config.frameworks) if mgr.config else None
    sent = dispatched(mgr.model)
    kinds = {kq.INTEGRATIONS[(o.group, o.kind)] for o, _ in sent if (o.group, o.kind) in kq.INTEGRATIONS}
    if mine is not None:
        for o, cq in sent:
            name = kq.INTEGRATIONS.get((o.group, o.kind))
            if name and name not in mine:
                yield Hit(o, (), f"queued to ClusterQueue {cq.name!r}, which dispatches through MultiKueue, but "
                          f"the manager's {mgr.config.where} does not enable {name}: Kueue neither queues nor "
                          f"dispatches it")
        kinds |= mine & set(kq.INTEGRATIONS.values())
    elif sent:
        yield Hit(sent[0][0], (), f"no Kueue Configuration of manager {mgr.name!r} in its input or beside it "
                  f"(controllers/{mgr.name}/kueue); its integrations are not checked", severity=INFO)
    if not kinds:
        return
    workers = {w.name: w for _, config in dispatching_queues(mgr.model) for w in group.workers(config)}
    for w in workers.values():
        if w.config is None:
            yield Hit(group.anchor(w.name), (), f"no Kueue Configuration of worker {w.name!r} in its input or "
                      f"beside it (controllers/{w.name}/kueue); {', '.join(sorted(kinds))} not checked there",
                      severity=INFO)
        else:
            lacking = sorted(kinds - set(w.config.frameworks))
            if lacking:
                yield Hit(w.config.obj, w.config.path, f"worker {w.name!r}: integrations.frameworks lacks "
                          f"{', '.join(lacking)}, which manager {mgr.name!r} dispatches; the worker's Kueue must "
                          f"admit the copies it receives")
        if JOBSET_INTEGRATION in kinds and not w.jobset:
            yield Hit(group.anchor(w.name), (), f"JobSets are dispatched, but worker {w.name!r} ({w.source}) shows "
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
            yield Hit(anchor, ("apiVersion",) if anchor else (), f"manager {group.manager.name!r} writes "
                      f"{', '.join(mine)}; worker {w.name!r} ({w.source}) writes {', '.join(theirs)}")


@group_rule("MK106", WARNING, "an input of a MultiKueue group is no cluster of the manager's MultiKueueConfigs, or "
            "a cluster they list is not among the inputs (a note)",
            "name each input after its MultiKueueCluster (NAME=PATH, or a directory or file of that name), and "
            "give every worker the MultiKueueConfig lists")
def members_match(group):
    configs = group.manager.model.kueue("MultiKueueConfig")
    listed = {c for config in configs for c in clusters_of(config)}
    for config in configs:
        for i, c in enumerate(config.spec.get("clusters") or []):
            if isinstance(c, str) and c not in group.members:
                yield Hit(config, ("spec", "clusters", i), f"worker {c!r} is not among the inputs; the group rules "
                          f"did not check it", severity=INFO)
    for w in group.members.values():
        if w.name not in listed:
            yield Hit(configs[0] if configs else None, (), f"input {w.name!r} ({w.source}) is no cluster of the "
                      f"manager's MultiKueueConfigs (clusters: {describe(sorted(listed))})")
