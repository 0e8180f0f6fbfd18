"""Scenario steps that change queue objects (a quota, a stop policy, a namespace's labels,
apply or remove an object, an admission check's verdict): what each does to the simulator,
as Kueue's controllers would. simulate.Simulator has them as methods."""
from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from ..kernel.errors import Problem, SpecError
from ..kernel.quantity import show as fmt
from . import overlay, tpusetup
from .quota import ZERO
from .state import ADMITTED, PENDING, RESERVED

if TYPE_CHECKING:
    from .simulate import Simulator


def _q(resource: str, v) -> str:
    return "none" if v is None else str(fmt(resource, v))


def set_quota(sim: Simulator, cq_name: str, flavor: str, resource: str, nominal: Decimal | None,
              borrowing: Decimal | None | str = "keep", lending: Decimal | None | str = "keep",
              cohort: bool = False) -> None:
    owner = sim.cluster.cohorts[cq_name] if cohort else sim.cluster.cluster_queues[cq_name]
    what = "Cohort" if cohort else "ClusterQueue"
    for q in (fq.resources[resource] for group in owner.groups for fq in group.flavors
              if fq.flavor == flavor and resource in fq.resources):
        changes = _change(q, resource, nominal, borrowing, lending)
        sim.store.events.append(f"{what} {cq_name}: {resource} in {flavor}: " + (", ".join(changes) or "unchanged"))
    sim.rebuild()
    if not cohort:
        _over_quota(sim, cq_name, flavor, resource)


def _change(q, resource: str, nominal, borrowing, lending) -> list[str]:
    """Set a quota's values ("keep": leave it); what changed, in words."""
    changes = []
    if nominal is not None and nominal != q.nominal:
        changes.append(f"nominalQuota {fmt(resource, q.nominal)} -> {fmt(resource, nominal)}")
        q.nominal = nominal
    for label, attr, value in (("borrowingLimit", "borrowing", borrowing), ("lendingLimit", "lending", lending)):
        if value != "keep" and value != getattr(q, attr):
            changes.append(f"{label} {_q(resource, getattr(q, attr))} -> {_q(resource, value)}")
            setattr(q, attr, value)
    return changes


def _over_quota(sim: Simulator, cq_name: str, flavor: str, resource: str) -> None:
    """Kueue never evicts for a quota cut; admitted Workloads keep running: say so."""
    cq = sim.cluster.cluster_queues[cq_name]
    used = sum((st.usage.get((flavor, resource), ZERO) for st in sim.states.values()
                if st.holds_quota and st.cluster_queue == cq_name), ZERO)
    now = cq.quota(flavor, resource)
    if now is not None and used > now.nominal:
        sim.store.events.append(f"ClusterQueue {cq_name}: {fmt(resource, used)} {resource} already admitted in "
                          f"{flavor} stays over the new quota until it finishes")


def set_stop_policy(sim: Simulator, kind: str, name: str, namespace: str | None, policy: str) -> None:
    if kind == "ClusterQueue":
        sim.cluster.cluster_queues[name].stop_policy = policy
        affected = [st for st in sim.states.values() if st.cluster_queue == name]
    else:
        sim.cluster.local_queues[(namespace or "default", name)].stop_policy = policy
        affected = [st for st in sim.states.values()
                    if st.wl.namespace == namespace and st.wl.queue == name]
    sim.store.events.append(f"{kind} {namespace + '/' if namespace else ''}{name}: stopPolicy {policy}")
    for st in affected:
        # Hold: quota reserved but not admitted is taken back; HoldAndDrain evicts the admitted too
        # (workload_controller.go reconcileOnClusterQueueActiveState / ...LocalQueue...).
        if (st.status == RESERVED and policy != "None") or (st.status == ADMITTED and policy == "HoldAndDrain"):
            sim.workloads.release(st)
            st.status, st.evicted = PENDING, True
            st.reason = f"evicted: the {kind} is stopped ({policy})"
            sim.store.events.append(f"{st.key} evicted: {kind} {name} is stopped ({policy})")
            sim.store.evictions.append((st.key, None))
    sim.rebuild()

def set_namespace_labels(sim: Simulator, namespace: str, labels: dict) -> None:
    sim.cluster.namespaces[namespace] = dict(labels)
    sim.store.events.append(f"Namespace {namespace}: labels {labels}")
    sim.queues.requeue_all()

def apply(sim: Simulator, obj: dict) -> str:
    """Create or replace a queue object (ClusterQueue, Cohort, LocalQueue, ResourceFlavor,
    AdmissionCheck, Namespace, priority classes, Topology)."""
    problems: list[Problem] = []
    what = overlay.read_object(sim.cluster, obj, 0, problems, replace=True)
    if problems:
        raise SpecError(sim.cluster.source, problems)
    sim.store.events.append(f"applied {what}")
    cache = sim.cache
    if obj.get("kind") == "ClusterQueue":
        cache.reservations = {**tpusetup.reservations(sim.cluster, None, "--cubes", sim.store.notes), **cache.reservations}
    cache.static = tpusetup.static_pools(sim.cluster, cache.reservations, sim.store.notes)
    sim.rebuild()
    return what or ""

def remove_object(sim: Simulator, kind: str, name: str, namespace: str | None = None) -> None:
    c = sim.cluster
    if kind == "ClusterQueue":
        held = [st for st in sim.states.values() if st.holds_quota and st.cluster_queue == name]
        if held:
            # A ClusterQueue with admitted Workloads stays (terminating) until they finish.
            c.cluster_queues[name].stop_policy = "Hold"
            sim.store.events.append(f"ClusterQueue {name} is terminating: {len(held)} admitted Workload(s) keep it "
                               "until they finish; it admits nothing more")
        else:
            c.cluster_queues.pop(name, None)
            sim.store.events.append(f"ClusterQueue {name} deleted")
    elif kind == "ResourceFlavor":
        c.flavors.pop(name, None)
        sim.store.events.append(f"ResourceFlavor {name} deleted")
    elif kind == "Cohort":
        c.cohorts.pop(name, None)
        sim.store.events.append(f"Cohort {name} deleted")
    elif kind == "LocalQueue":
        c.local_queues.pop((namespace or "default", name), None)
        sim.store.events.append(f"LocalQueue {namespace}/{name} deleted")
    elif kind == "AdmissionCheck":
        c.admission_checks.pop(name, None)
        sim.store.events.append(f"AdmissionCheck {name} deleted")
    sim.rebuild()

def set_check(sim: Simulator, check: str, state: str, ref: tuple | None = None) -> None:
    """An admission check's verdict, for one object's Workloads or (ref None) for all."""
    targets = [st for st in sim.states.values() if ref is None or st.wl.owner == ref]
    if ref is None:
        sim.workloads.check_defaults[check] = state
    for st in targets:
        st.checks[check] = state
    sim.store.events.append(f"AdmissionCheck {check}: {state}" + (f" for {ref[0]} {ref[1]}/{ref[2]}" if ref else ""))
    for st in targets:
        if st.holds_quota:
            sim.workloads.apply_checks(st)
