"""The ClusterQueues and Cohort of a profile as Kueue bodies (plain dicts), from the spec:
quotas computed per capacity source (generator/model/flavors.py), what each team holds, and
what nobody holds. The builders write these bodies (generator/builders/kueue_objects.py) and
the spec checks read the same bodies through the supply model, so the check and the output
cannot drift apart. No cdk8s here."""
from __future__ import annotations

from decimal import Decimal

from ..kernel import kueue_api, quantity
from . import nominal_quota, teams as teams_spec
from .flavors import Flavor
from .spec import Profile

# TPU7x ClusterQueue resources, in the codelab's order, and its "no limit" quotas
# (used only where the spec asks for unlimitedQuota).
TPU_QUOTA_RESOURCES = ("google.com/tpu", "cpu", "memory")
UNLIMITED_QUOTA = {"google.com/tpu": "999999", "cpu": "999999", "memory": "999999Pi"}



def _covered(fs: list[Flavor]) -> list[str]:
    return [r for r, _ in nominal_quota.ordered({r: 0 for f in fs for r in f.quota})]


def cluster_queues(spec, profile: Profile, fs: list[Flavor], checks: tuple) -> list[dict]:
    """The profile's ClusterQueue, each team's, and (v1beta2) its Cohort object."""
    q = spec.queue_for(profile.name)
    k = profile.kueue
    covered = list(TPU_QUOTA_RESOURCES) if profile.tpu is not None else _covered(fs)
    teams = spec.teams_for(profile.name)
    team_quota = {t.name: _team_quota(t, profile.name, fs) for t in teams}
    left = _unassigned(fs, covered, list(team_quota.values()))
    out = []
    if q.cohort and (q.cohort_parent or q.unassigned == "cohort"):
        groups = [_group(covered, left)] if q.unassigned == "cohort" else None
        out.append(kueue_api.cohort(k, q.cohort, parent=q.cohort_parent, resource_groups=groups))
    own = _own_quota(q, left, bool(teams), fs)
    out.append(kueue_api.ClusterQueue(
        name=q.cluster_queue, covered=tuple(covered), flavors=_flavor_quotas(covered, own, fs, profile),
        preemption=q.preemption.body(), admission_checks=checks, cohort=q.cohort).body(k))
    for t in teams:
        ordered = _by_capacity(fs, t.capacity)
        out.append(kueue_api.ClusterQueue(
            name=t.cq_name, covered=tuple(covered), flavors=_flavor_quotas(covered, team_quota[t.name], ordered, profile),
            preemption=t.preemption.body(), admission_checks=checks, cohort=q.cohort,
            namespace_selector=_namespaces(t.namespaces),
            fair_sharing_weight=t.fair_sharing.weight if t.fair_sharing else None).body(k))
    return out


def _by_capacity(fs: list[Flavor], order: list[str] | None) -> list[Flavor]:
    """A team's flavors in the order of its `capacity` list (Kueue tries a ClusterQueue's flavors
    in order: flavorassigner.go), pool order within one kind; kinds it does not list last."""
    if not order:
        return fs
    rank = {c: i for i, c in enumerate(order)}
    return sorted(fs, key=lambda f: rank.get(f.capacity, len(rank)))


Limits = dict[str, dict[str, tuple]]   # flavor -> resource -> (nominal, borrowingLimit, lendingLimit)


def _own_quota(q, left: Limits, has_teams: bool, fs: list[Flavor]) -> Limits:
    """What the profile's own ClusterQueue holds: the unassigned quota when the spec keeps it
    there; with teams, only the flavors it holds something of (it lends them to the teams)."""
    own = left if q.unassigned == "clusterQueue" else {}
    if has_teams:
        own = {f: r for f, r in own.items() if any(v for v in r.values())} or {f.name: {} for f in fs[:1]}
    return own


def _team_quota(team, profile: str, fs: list[Flavor]) -> Limits:
    """flavor -> resource -> (nominal, borrowing limit, lending limit) of one team; flavors it
    does not list hold 0 (it can still borrow them)."""
    share = team.profiles[profile].quotas
    out: Limits = {}
    for f in fs:
        out[f.name] = {}
        for r, cap in f.quota.items():
            rs = share.get(f.name, {}).get(r)
            if rs is None:
                out[f.name][r] = (Decimal(0), None, None)
                continue
            limits = [None if v is None else teams_spec.resolve(v, cap, r) for v in (rs.borrowing_limit, rs.lending_limit)]
            out[f.name][r] = (teams_spec.resolve(rs.nominal, cap, r), *limits)
    return out


def _unassigned(fs: list[Flavor], covered: list[str], teams: list[Limits]) -> Limits:
    """What no team holds nominally: the flavor's capacity minus the teams' nominal quotas."""
    out: Limits = {}
    for f in fs:
        out[f.name] = {}
        for r in covered:
            taken = sum((t[f.name][r][0] for t in teams if r in t.get(f.name, {})), Decimal(0))
            out[f.name][r] = (f.quota.get(r, Decimal(0)) - taken, None, None)
    return out


def _flavor_quotas(covered: list[str], quotas: Limits, fs: list[Flavor], profile: Profile) -> tuple:
    unlimited = profile.tpu is not None and profile.tpu.unlimited_quota
    out = []
    for f in fs:
        if f.name not in quotas:
            continue
        held = quotas[f.name]
        rows = []
        for r in covered:
            nominal, borrowing, lending = held.get(r, (Decimal(0), None, None))
            rows.append(kueue_api.Quota(r, UNLIMITED_QUOTA[r] if unlimited else quantity.fmt(r, nominal),
                                    None if borrowing is None else quantity.fmt(r, borrowing),
                                    None if lending is None else quantity.fmt(r, lending)))
        out.append(kueue_api.FlavorQuota(f.name, tuple(rows)))
    return tuple(out)


def _group(covered: list[str], quotas: Limits) -> dict:
    return {"coveredResources": list(covered), "flavors": [
        {"name": name, "resources": [{"name": r, "nominalQuota": quantity.fmt(r, held.get(r, (Decimal(0),))[0])}
                                     for r in covered]}
        for name, held in quotas.items()]}


def _namespaces(namespaces: list[str]) -> dict:
    """Selects exactly these namespaces, by the label the API server sets on every namespace."""
    key = "kubernetes.io/metadata.name"
    if len(namespaces) == 1:
        return {"matchLabels": {key: namespaces[0]}}
    return {"matchExpressions": [{"key": key, "operator": "In", "values": sorted(namespaces)}]}
