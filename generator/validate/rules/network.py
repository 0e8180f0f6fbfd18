"""GPUDirect networking: a multi-node GPU workload on machines GKE publishes GPUDirect
for (A3 High, A3 Mega, A3 Ultra, A4, A4X) that does not attach the GPU NICs runs NCCL
over the primary NIC. The machine facts come from the device catalog
(generator/kernel/catalog/gpudirect.py, read from GKE's container-engine-accelerators
manifests)."""
from __future__ import annotations

from decimal import Decimal

from ...kernel import catalog
from ...kernel.catalog import gpudirect, node_labels
from ..findings import WARNING
from . import hit, rule


def _gpudirect_of(spec: dict) -> gpudirect.GpuDirect | None:
    """The GPUDirect type of the nodes the pod's nodeSelector names (machine type, else accelerator)."""
    found = spec.get("nodeSelector")
    selector: dict = found if isinstance(found, dict) else {}
    machine = selector.get(node_labels.MACHINE_TYPE_LABEL)
    if isinstance(machine, str):
        return gpudirect.for_machine(machine)
    accel = selector.get(node_labels.GPU_ACCELERATOR_LABEL)
    return gpudirect.BY_ACCELERATOR.get(accel) if isinstance(accel, str) else None


def _full_node(g: gpudirect.GpuDirect) -> Decimal:
    """GPUs of one node of the type's machines (all 8, or 4 on A4X)."""
    return Decimal(catalog.machine(g.machine_types[0]).accelerators)


@rule("NW001", WARNING, "a multi-node GPU workload on GPUDirect machines attaches no GPU NICs",
      "a `training` workload gets it by default (unless `gpudirect: false`); elsewhere add the interfaces "
      "annotation, plugin volumes and NCCL settings as GKE's GPUDirect test workloads have them")
def gpudirect_missing(model):
    for o, ps in model.workloads():
        g = _gpudirect_of(ps.spec)
        if g is None or o.demand.pods < 2:
            continue
        if ps.requests.get(node_labels.GPU_RESOURCE, Decimal(0)) != _full_node(g):
            continue   # a pod of part of a node: an a3-highgpu-4g, or not NCCL across nodes
        if gpudirect.INTERFACES_ANNOTATION in ps.annotations:
            continue
        yield hit(o, ps.path + ("metadata", "annotations"),
                  f"{o.demand.pods} pods of {int(_full_node(g))} GPUs each on {g.title} machines "
                  f"({', '.join(g.machine_types)}) attach no GPU NICs ({gpudirect.INTERFACES_ANNOTATION}): "
                  "NCCL falls back to the primary NIC, several times slower between nodes")
