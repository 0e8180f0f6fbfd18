"""GPUDirect networking as objects: a pod-template decorator per networking type
(as xpk's workload_decorators/{tcpx,tcpxo,rdma}_decorator.py are), and the
cluster-level objects each needs (the NCCL plugin installer DaemonSet and the
multi-networking Network / GKENetworkParamSet pairs).

The facts (images, volumes, interfaces, NCCL environment) are the catalog's
(kernel/catalog/gpudirect.py, read from GKE's published manifests); this module
only shapes them. Workload builders call `pod_parts` and merge its pieces into
the pod template they build; tree.py writes `cluster_objects` to
controllers/<profile>/gpudirect/."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..kernel.catalog import node_labels
from ..kernel.catalog.gpudirect import (
    DAEMON_REQUESTS,
    DEFAULT_INTERFACE_ANNOTATION,
    DEVICES_ANNOTATION_PREFIX,
    INTERFACES_ANNOTATION,
    PAUSE_IMAGE,
    GpuDirect,
)
from . import core, embed, k8s

NAMESPACE = "kube-system"          # where GKE's Standard installer manifests put the DaemonSets
NETWORKING_API = "networking.gke.io/v1"


@dataclass
class PodParts:
    """What one networking type adds to a GPU pod template."""
    annotations: dict[str, str] = field(default_factory=dict)
    volumes: list[k8s.Volume] = field(default_factory=list)
    sidecars: list[k8s.Container] = field(default_factory=list)   # native sidecars (initContainers)
    env: list[k8s.EnvVar] = field(default_factory=list)            # on the GPU container
    mounts: list[k8s.VolumeMount] = field(default_factory=list)    # on the GPU container
    env_script: str | None = None
    capabilities: list[str] = field(default_factory=list)          # added to the GPU container

    def security_context(self) -> k8s.SecurityContext | None:
        """The GPU container's capabilities: all dropped but what the type needs (TCPX: IPC_LOCK)."""
        if not self.capabilities:
            return None
        return k8s.SecurityContext(capabilities=k8s.Capabilities(add=self.capabilities, drop=["ALL"]))

    def command(self, command: list[str]) -> list[str]:
        """The program started after sourcing the NCCL settings script, where the type has one
        (TCPXO's nccl-env-profile.sh, RDMA's set_nccl_env.sh): exec keeps the program PID 1's
        child that receives SIGTERM; "$@" passes its arguments untouched by the shell."""
        if self.env_script is None:
            return command
        return ["/bin/bash", "-c", f'source {self.env_script} && exec "$@"', "--", *command]


def interfaces(g: GpuDirect) -> str:
    """The networking.gke.io/interfaces annotation: eth0 on the default network, then each
    GPU NIC's network, one JSON object a line as GKE's test workloads write it."""
    rows = [{"interfaceName": "eth0", "network": "default"}]
    rows += [{"interfaceName": n.interface, "network": n.name} for n in g.networks]
    return "[\n" + ",\n".join("  " + json.dumps(r, separators=(",", ":")) for r in rows) + "\n]\n"


def _daemon(g: GpuDirect, autopilot: bool) -> tuple[dict[str, str], list[k8s.Container]]:
    d = g.daemon
    if d is None:
        return {}, []
    devices = "".join(f"- path: {p}\n" for p in d.device_paths)
    sidecar = k8s.Container(
        name=d.name,
        image=d.image,
        image_pull_policy="Always",
        # A native sidecar (an init container that keeps running), as xpk's decorators add it:
        # the Job's pods complete when the trainer exits. GKE's test pods run it as a container.
        restart_policy="Always",
        command=list(d.command),
        args=list(d.args) or None,
        # Root with its capabilities, as GKE's test pods run it (even their "unprivileged" variants):
        # the daemon programs the NICs' flow steering.
        security_context=k8s.SecurityContext(capabilities=k8s.Capabilities(add=list(d.capabilities)),
                                             run_as_user=0, run_as_non_root=False),
        volume_mounts=[k8s.VolumeMount(name=v, mount_path=p) for v, p in d.mounts],
        env=[core.env(k, v) for k, v in d.env] or None,
        # Requests only on Standard (GKE's test pods set no limit); Autopilot sets limits = requests.
        resources=k8s.ResourceRequirements(requests={r: core.qty(v) for r, v in DAEMON_REQUESTS.items()},
                                           limits={r: core.qty(v) for r, v in DAEMON_REQUESTS.items()}
                                           if autopilot else None),
    )
    return {DEVICES_ANNOTATION_PREFIX + d.name: devices}, [sidecar]


def pod_parts(g: GpuDirect, autopilot: bool = False) -> PodParts:
    """The decorator: annotations, host volumes, the daemon sidecar (TCPX, TCPXO), and the
    GPU container's environment and mounts."""
    annotations, sidecars = _daemon(g, autopilot)
    annotations = {**annotations, DEFAULT_INTERFACE_ANNOTATION: "eth0", INTERFACES_ANNOTATION: interfaces(g)}
    return PodParts(
        annotations=annotations,
        volumes=[k8s.Volume(name=n, empty_dir=k8s.EmptyDirVolumeSource()) if n in g.empty_dirs
                 else k8s.Volume(name=n, host_path=k8s.HostPathVolumeSource(path=p)) for n, p in g.volumes],
        sidecars=sidecars,
        env=[core.env(k, v) for k, v in g.env],
        mounts=[k8s.VolumeMount(name=v, mount_path=p, read_only=g.read_only or None) for v, p in g.mounts],
        env_script=g.env_script,
        capabilities=list(g.capabilities),
    )


def decorate(template: dict, parts: PodParts, gpu_resource: str) -> None:
    """Add the parts to a pod template written as a dict (a team's own manifest): the pod's
    annotations, volumes and sidecars, and on every container that asks for GPUs the
    environment, mounts, capabilities and, where the type has one, the NCCL settings script
    before its command (the model's checks made sure it has one). What is there stays."""
    rendered = embed.pod_template_now(k8s.PodTemplateSpec(
        metadata=k8s.ObjectMeta(annotations=parts.annotations or None),
        spec=k8s.PodSpec(init_containers=parts.sidecars or None, volumes=parts.volumes or None,
                         containers=[k8s.Container(name="gpu", env=parts.env or None,
                                                   volume_mounts=parts.mounts or None,
                                                   security_context=parts.security_context())])))
    template.setdefault("metadata", {}).setdefault("annotations", {}).update(rendered["metadata"].get("annotations", {}))
    spec = template.setdefault("spec", {})
    _extend(spec, "volumes", rendered["spec"].get("volumes", []), "name")
    if rendered["spec"].get("initContainers"):
        spec.setdefault("initContainers", []).extend(rendered["spec"]["initContainers"])
    (gpu,) = rendered["spec"]["containers"]
    for c in spec.get("containers") or []:
        if _asks_for(c, gpu_resource):
            _decorate_container(c, gpu, parts)


def _asks_for(c: dict, resource: str) -> bool:
    res = c.get("resources") or {}
    return any(resource in (res.get(k) or {}) for k in ("limits", "requests"))


def _extend(node: dict, key: str, items: list[dict], by: str) -> None:
    """Append the items whose `by` field the list does not have yet."""
    have = {i.get(by) for i in node.get(key) or []}
    node.setdefault(key, []).extend(i for i in items if i[by] not in have)


def _decorate_container(c: dict, gpu: dict, parts: PodParts) -> None:
    _extend(c, "env", gpu.get("env", []), "name")
    _extend(c, "volumeMounts", gpu.get("volumeMounts", []), "mountPath")
    if "securityContext" in gpu:
        c.setdefault("securityContext", {}).setdefault("capabilities", gpu["securityContext"]["capabilities"])
    if parts.env_script is not None and c.get("command"):
        c["command"] = parts.command([*c["command"], *c.pop("args", [])])


# ---------------------------------------------------------------- cluster objects

def installer(g: GpuDirect) -> dict:
    """The NCCL plugin installer DaemonSet, as GKE's manifest has it."""
    i = g.installer
    labels = {"k8s-app": i.name}
    terms: list[dict] = [{"key": node_labels.GPU_ACCELERATOR_LABEL, "operator": "In", "values": list(i.accelerators)}]
    if i.arch:
        terms.append({"key": "kubernetes.io/arch", "operator": "In", "values": [i.arch]})
    # Autopilot's TCPX/TCPXO installers put limits on every container instead of the cpu request.
    limits = {"resources": {"limits": dict(i.limits)}} if i.limits else {}
    inits: list[dict] = []
    if i.pre_install:
        inits.append({"image": "ubuntu", "name": "pre-installation", "securityContext": {"privileged": True},
                      **limits, "command": list(i.pre_install)})
    inits.append({"image": i.image, "name": i.container_name,
                  **(limits or {"resources": {"requests": {"cpu": "150m"}}}), "securityContext": {"privileged": True},
                  "volumeMounts": [{"name": v, "mountPath": p} for v, p in i.mounts],
                  "command": ["/bin/sh", "-c"], "args": [i.args]})
    spec = {
        **({"priorityClassName": i.priority_class} if i.priority_class else {}),
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": terms}]}}},
        "tolerations": [{"operator": "Exists"}],
        "hostNetwork": True,
        "hostPID": True,
        "volumes": [dict(v, hostPath=dict(v["hostPath"])) for v in i.volumes],
        "initContainers": inits,
        "containers": [{"image": PAUSE_IMAGE, "name": "pause", **limits}],
    }
    return {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": i.name, "namespace": i.namespace, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {"metadata": {"labels": {"name": i.name, **labels}}, "spec": spec},
        },
    }


def namespace(g: GpuDirect) -> dict | None:
    """The installer's own namespace on Autopilot (RDMA's manifest creates rdma-system, labelled
    name=rdma-system; the TCPX/TCPXO ones expect gpudirect-system to exist: created the same way)."""
    ns = g.installer.namespace
    if ns == NAMESPACE:
        return None
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"name": ns}}}


def networks(g: GpuDirect, prefix: str) -> list[dict]:
    """A GKENetworkParamSet and a Network per GPU NIC (xpk core/network.py's objects; VPC
    and subnet names <prefix>-net-<i>/-sub-<i>, RDMA <prefix>-rdma-net/-rdma-sub-<i>)."""
    out = []
    for n in g.networks:
        out.append({"apiVersion": NETWORKING_API, "kind": "GKENetworkParamSet", "metadata": {"name": n.name},
                    "spec": {"vpc": prefix + n.vpc_suffix, "vpcSubnet": prefix + n.subnet_suffix,
                             "deviceMode": n.device_mode}})
        out.append({"apiVersion": NETWORKING_API, "kind": "Network", "metadata": {"name": n.name},
                    "spec": {"parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet",
                                               "name": n.name},
                             "type": "Device"}})
    return out


def cluster_objects(types: list[GpuDirect], prefix: str) -> list[dict]:
    """Every installer and network the profile's GPUDirect pools need (a network shared by
    two types, rdma-0 on A4 and A4X, once)."""
    out: list[dict] = []
    seen: set[tuple[str, str]] = set()
    for g in types:
        ns = namespace(g)
        for obj in [*([ns] if ns else []), installer(g), *networks(g, prefix)]:
            key = (obj["kind"], obj["metadata"]["name"])
            if key not in seen:
                seen.add(key)
                out.append(obj)
    return out
