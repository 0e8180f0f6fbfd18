"""TPU capacity behind the flavors, set up once per plan: the dynamically sliced flavors'
reservations (cubes) and the static TPU node pools, with a note on each."""
from __future__ import annotations

from ..kernel.errors import Problem, SpecError
from ..kernel.quantity import show as fmt
from ..kernel.supply import FlavorQuota
from . import assign, overlay, packer
from .overlay import UNLIMITED, ClusterQueue

MAX_CUBES = 64             # TPU cubes per reservation


def reservations(cluster: overlay.Cluster, cubes: int | None, cubes_source: str,
                 notes: list[str]) -> dict[str, packer.Reservation]:
    """The dynamically sliced TPU flavors: a generation with dynamic slicing, a Kueue
    Topology, and the ClusterQueue checked by that slicing mode's AdmissionCheck."""
    out: dict[str, packer.Reservation] = {}
    problems: list[Problem] = []
    for cq in sorted(cluster.cluster_queues.values(), key=lambda q: q.name):
        controllers = {cluster.admission_checks.get(a) for a in cq.admission_checks}
        for fq in (fq for group in cq.groups for fq in group.flavors if fq.flavor not in out):
            rf, gen = _sliced(cluster, fq.flavor, controllers)
            n = _cubes(notes, cq, fq, gen, cubes, cubes_source, problems) if gen is not None else None
            if rf is not None and n is not None:
                out[fq.flavor] = packer.Reservation(gen, n, cluster.topologies[rf.topology],
                                                    f"Topology {rf.topology}")
    if problems:
        raise SpecError(cluster.source, problems)
    if cubes is not None and not out:
        notes.append(f"{cubes_source} ignored: no TPU flavor with slice admission in this overlay")
    return out


def _sliced(cluster: overlay.Cluster, flavor: str, controllers: set) -> tuple:
    """(ResourceFlavor, TPU generation) of a dynamically sliced flavor: a Topology that exists,
    and the slicing mode's AdmissionCheck on the ClusterQueue (v6e sub-slicing has none: its
    flavor selects the whole pool's topology, the mode's cube, instead); else (None, None)."""
    rf = cluster.flavors.get(flavor)
    if rf is None or rf.topology is None or rf.topology not in cluster.topologies:
        return None, None
    gen = rf.tpu_generation()
    if gen is None or gen.dynamic is None:
        return None, None
    mode = gen.dynamic
    if mode.admission_check_controller is None:
        if rf.node_labels.get(gen.static.topology_label) != mode.cube.text:
            return None, None
    elif mode.admission_check_controller not in controllers:
        return None, None
    return rf, gen


def _cubes(notes: list[str], cq: ClusterQueue, fq: FlavorQuota, gen, cubes: int | None, cubes_source: str,
           problems: list[Problem]) -> int | None:
    """How many cubes the reservation behind a flavor has: --cubes, or its quota."""
    resource, per_cube = gen.resource, gen.dynamic.cube.chips
    q = fq.resources.get(resource)
    nominal = q.nominal if q else None
    if cubes is not None:
        n = cubes
        notes.append(f"flavor {fq.flavor}: reservation of {assign.cubes(n)} ({cubes_source})")
    elif nominal is None or nominal >= UNLIMITED:
        problems.append(Problem(
            f"ClusterQueue/{cq.name}.flavors.{fq.flavor}.{resource}",
            f"nominalQuota is {'missing' if nominal is None else fmt(resource, nominal)} (unlimited), "
            "so the reservation's size is unknown: pass --cubes N or set `cubes` in the scenario"))
        return None
    else:
        n = int(nominal // per_cube)
        notes.append(f"flavor {fq.flavor}: reservation of {assign.cubes(n)} "
                          f"({fmt(resource, nominal)} {resource} / {per_cube} chips per cube)")
        if nominal % per_cube:
            notes.append(f"flavor {fq.flavor}: {resource} quota {fmt(resource, nominal)} is not "
                              f"whole cubes; {nominal % per_cube} chips cannot form slices")
    if n > MAX_CUBES:
        notes.append(f"flavor {fq.flavor}: only the first {MAX_CUBES} of {n} cubes are simulated "
                          "(slice placement is capped to keep the plan bounded)")
        n = MAX_CUBES
    return n

def static_pools(cluster: overlay.Cluster, reservations: dict[str, packer.Reservation],
                 notes: list[str]) -> dict[str, packer.StaticPool]:
    """Flavors of static TPU node pools (accelerator and topology labels), with a note
    per ClusterQueue on how many slices its quota is."""
    out: dict[str, packer.StaticPool] = {}
    for name, rf in sorted(cluster.flavors.items()):
        pool = rf.static_pool() if name not in reservations else None
        if pool is not None:
            out[name] = pool
    for cq in sorted(cluster.cluster_queues.values(), key=lambda q: q.name):
        for flavor, resource, q in cq.quotas():
            pool = out.get(flavor)
            if pool is None or resource != pool.resource:
                continue
            extra = q.nominal % pool.shape.chips
            notes.append(
                f"flavor {flavor}: static TPU node pools, {pool.describe()}: ClusterQueue {cq.name}'s "
                f"{fmt(resource, q.nominal)} {resource} = {assign.plural(pool.slices_in(q.nominal), 'slice')}"
                + (f" and {extra} chips that make no slice" if extra else ""))
            m = pool.machine
            if m is not None and not m.allows(pool.shape):
                notes.append(f"flavor {flavor}: a {m.name} node pool cannot have topology {pool.shape} "
                                  f"(it can: {', '.join(s.text for s in m.topologies)})")
    return out
