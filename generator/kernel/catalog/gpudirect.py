"""GPUDirect networking per GPU machine type: what GKE publishes for multi-node
NCCL on A3 High (GPUDirect-TCPX), A3 Mega (GPUDirect-TCPXO) and A3 Ultra, A4 and
A4X (GPUDirect-RDMA).

Every value below is read from GKE's published manifests,
GoogleCloudPlatform/container-engine-accelerators at 992db812
(../shared/reference/container-engine-accelerators@992db81/, sources.GPUDIRECT_MANIFESTS):
the NCCL plugin installer DaemonSets (gpudirect-*/nccl-*-installer.yaml) and the
NCCL test workloads (gpudirect-*/nccl-test*.yaml), cross-checked with xpk's
pod-template decorators (src/xpk/core/workload_decorators/{tcpx,tcpxo,rdma}_decorator.py)
and its multi-networking objects (src/xpk/core/network.py). Facts only: the
builders (generator/builders/gpudirect_objects.py) turn them into objects."""
from __future__ import annotations

from dataclasses import dataclass, replace

from .sources import GPUDIRECT_MANIFESTS, XPK_DECORATORS, Source

# The pause image every installer DaemonSet runs after its init container, pinned by
# digest as all three installer manifests have it.
PAUSE_IMAGE = "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830"
# Host paths the installers write and the workloads mount (installer and test manifests).
NVIDIA_LIB64 = "/home/kubernetes/bin/nvidia/lib64"
NVIDIA_DIR = "/home/kubernetes/bin/nvidia"
GIB_DIR = "/home/kubernetes/bin/gib"
# Requests of the TCPX/TCPXO daemon sidecar: GKE's TCPX Autopilot test workload gives its
# tcpx-daemon these (gpudirect-tcpx/nccl-test-latest-autopilot.yaml); its Standard test pods and the
# TCPXO ones give the daemon none. The generator requests them for both daemons on both modes, so
# Kueue, the scheduler and plan count the daemon.
DAEMON_REQUESTS = {"cpu": "1", "memory": "2Gi", "ephemeral-storage": "10Gi"}
INTERFACES_ANNOTATION = "networking.gke.io/interfaces"
DEFAULT_INTERFACE_ANNOTATION = "networking.gke.io/default-interface"
# devices.gke.io/container.<name>: the GPU device nodes GKE exposes to a container that
# requests no GPU (the TCPX/TCPXO daemon), as the test workloads annotate the pod.
DEVICES_ANNOTATION_PREFIX = "devices.gke.io/container."


@dataclass(frozen=True)
class Network:
    """One additional pod interface: the Network and GKENetworkParamSet objects GKE
    multi-networking needs, and the VPC/subnet (by name suffix) behind them."""
    interface: str        # interface name in the pod, e.g. eth1
    name: str             # Network and GKENetworkParamSet name, e.g. vpc1 or rdma-0
    device_mode: str      # GKENetworkParamSet spec.deviceMode: NetDevice or RDMA
    vpc_suffix: str       # VPC name: <prefix><vpc_suffix>
    subnet_suffix: str    # subnet name: <prefix><subnet_suffix>


@dataclass(frozen=True)
class Daemon:
    """The receive-datapath daemon (TCPX, TCPXO) that runs beside the workload."""
    name: str
    image: str
    command: tuple[str, ...]
    args: tuple[str, ...]
    capabilities: tuple[str, ...]
    mounts: tuple[tuple[str, str], ...]    # (volume, mountPath)
    device_paths: tuple[str, ...]          # devices.gke.io/container.<name> annotation
    env: tuple[tuple[str, str], ...] = (("LD_LIBRARY_PATH", "/usr/local/nvidia/lib64"),)


@dataclass(frozen=True)
class Installer:
    """The NCCL plugin installer DaemonSet (kube-system), one per networking type: its
    node affinity, host volumes and init containers as the manifest has them; the rest
    (privileged init container, pause container, tolerate everything, host network and
    PID, system-node-critical) is the same in all four and lives in the builder."""
    name: str
    image: str
    accelerators: tuple[str, ...]          # its node affinity: cloud.google.com/gke-accelerator In
    manifest: str                          # path under the reference folder
    volumes: tuple[dict, ...]              # hostPath volumes, as written
    mounts: tuple[tuple[str, str], ...]    # (volume, mountPath) of the installer container
    args: str                              # the installer's shell script (command /bin/sh -c)
    arch: str | None = None                # kubernetes.io/arch In (A4X: arm64)
    pre_install: tuple[str, ...] = ()      # TCPXO: the ubuntu nsenter pre-installation command
    namespace: str = "kube-system"
    create_namespace: bool = False         # the manifest creates its namespace (RDMA on Autopilot)
    priority_class: str | None = "system-node-critical"
    limits: tuple[tuple[str, str], ...] = ()   # Autopilot TCPX/TCPXO: limits on every container
    container: str | None = None           # the installer container's name, where not the DaemonSet's

    @property
    def container_name(self) -> str:
        return self.container or self.name


def _host(name: str, path: str, kind: str | None = None) -> dict:
    return {"name": name, "hostPath": {"path": path, **({"type": kind} if kind else {})}}


# gpudirect-tcpxo/nccl-tcpxo-installer.yaml, init container pre-installation (image "ubuntu",
# privileged): accept TCP, load import-helper, bind-mount the aperture devices.
_TCPXO_PRE_INSTALL = (
    "nsenter", "-at", "1", "--", "sh", "-c",
    "/sbin/iptables -I INPUT -p tcp -m tcp -j ACCEPT && modprobe import-helper\n"
    "sudo mkdir -p /dev/aperture_devices\n"
    "while IFS= read -r line; do\n"
    "  BDF=$( echo \"$line\" | awk '{print $1}' );\n"
    "  target_aperture_path=\"/dev/aperture_devices/$BDF\"\n"
    "  host_aperture_device=$(readlink -f \"/sys/bus/pci/devices/$BDF\");\n"
    "  sudo mkdir -p $target_aperture_path;\n"
    "  sudo umount -R $target_aperture_path;\n"
    "  sudo mount --bind $host_aperture_device $target_aperture_path;\n"
    "done < <(lspci -nn -D | grep '1ae0:0084')\n"
    "if [ -d /dev/aperture_devices ]; then\n"
    "    chmod -R a+r /dev/aperture_devices/\n"
    "    chmod a+rw /dev/aperture_devices/*/resource*\n"
    "fi\n")
_RDMA_INSTALL = ("set -ex\n/scripts/container_entry.sh install\n"
                 "cp -r /var/lib/gib/lib64/. /usr/local/home/kubernetes/bin/nvidia/lib64\n"
                 "cp -r /var/lib/gib/. /usr/local/home/kubernetes/bin/gib\n"
                 "echo \"installation finishes\"\n")
_RDMA_INSTALL_MOUNTS = (("library-dir-host", "/usr/local/home/kubernetes/bin/nvidia/lib64"),
                        ("gib", "/usr/local/home/kubernetes/bin/gib"))


@dataclass(frozen=True)
class GpuDirect:
    key: str                               # tcpx, tcpxo, rdma
    title: str
    machine_types: tuple[str, ...]
    networks: tuple[Network, ...]          # attached to the pod, in interface order after eth0
    volumes: tuple[tuple[str, str], ...]   # (name, hostPath) the workload pod gets
    mounts: tuple[tuple[str, str], ...]    # (volume, mountPath) on the GPU container
    env: tuple[tuple[str, str], ...]       # on the GPU container
    env_script: str | None                 # sourced before the program starts (NCCL settings)
    daemon: Daemon | None
    installer: Installer
    test_manifest: str                     # the GKE test workload the golden test compares with
    sources: tuple[Source, ...]
    autopilot_installer: str | None = None  # GKE's Autopilot installer manifest, where published
    capabilities: tuple[str, ...] = ()     # added to the GPU container
    empty_dirs: tuple[str, ...] = ()       # volumes that are emptyDirs instead of host paths
    read_only: bool = False                # the GPU container's mounts read-only

    @property
    def daemon_name(self) -> str | None:
        return self.daemon.name if self.daemon else None

    def network_names(self) -> tuple[str, ...]:
        return tuple(n.name for n in self.networks)


_GPU_DEVICES = tuple(f"/dev/nvidia{i}" for i in range(8)) + ("/dev/nvidiactl", "/dev/nvidia-uvm")


def _vpcs(count: int) -> tuple[Network, ...]:
    """TCPX/TCPXO: one VPC and subnet per GPU NIC, vpc<i> on eth<i> (test workloads'
    interfaces annotation; xpk network.py names them <cluster>-net-<i>, <cluster>-sub-<i>)."""
    return tuple(Network(f"eth{i}", f"vpc{i}", "NetDevice", f"-net-{i}", f"-sub-{i}") for i in range(1, count + 1))


def _rdma(count: int) -> tuple[Network, ...]:
    """RDMA: rdma-<i> on eth<i+2> (gpudirect-rdma/nccl-test.yaml; eth1 is the second gVNIC,
    which the Standard test pod does not attach). One RoCE VPC, one subnet per NIC, deviceMode
    RDMA, as GKE's GPUDirect-RDMA guide creates them (<prefix>-rdma-net, <prefix>-rdma-sub-<i>)."""
    return tuple(Network(f"eth{i + 2}", f"rdma-{i}", "RDMA", "-rdma-net", f"-rdma-sub-{i}") for i in range(count))


TCPX = GpuDirect(
    key="tcpx", title="GPUDirect-TCPX",
    machine_types=("a3-highgpu-8g",),
    networks=_vpcs(4),
    # gpudirect-tcpx/nccl-test-latest.yaml: libraries, tcpx-socket, sys, proc-sys volumes.
    volumes=(("libraries", NVIDIA_LIB64), ("tcpx-socket", "/run/tcpx"), ("sys", "/sys"), ("proc-sys", "/proc/sys")),
    mounts=(("tcpx-socket", "/tmp"), ("libraries", "/usr/local/nvidia/lib64")),
    # LD_LIBRARY_PATH as the test pod sets it; the NCCL settings as GKE's run-nccl.sh passes
    # them to every rank (gpudirect-tcpx/nccl-config.yaml, `mpirun -x ...`).
    env=(("LD_LIBRARY_PATH", "/usr/local/nvidia/lib64"),
         ("NCCL_SOCKET_IFNAME", "eth0"), ("NCCL_ALGO", "Ring,Tree"), ("NCCL_PROTO", "Simple"),
         ("NCCL_CROSS_NIC", "0"), ("NCCL_NET_GDR_LEVEL", "PIX"), ("NCCL_P2P_PXN_LEVEL", "0"),
         ("NCCL_GPUDIRECTTCPX_SOCKET_IFNAME", "eth1,eth2,eth3,eth4"), ("NCCL_GPUDIRECTTCPX_CTRL_DEV", "eth0"),
         ("NCCL_DYNAMIC_CHUNK_SIZE", "524288"), ("NCCL_P2P_NET_CHUNKSIZE", "524288"),
         ("NCCL_P2P_PCI_CHUNKSIZE", "524288"), ("NCCL_P2P_NVL_CHUNKSIZE", "1048576"),
         ("NCCL_BUFFSIZE", "4194304"), ("NCCL_NSOCKS_PERTHREAD", "4"), ("NCCL_SOCKET_NTHREADS", "1"),
         ("NCCL_GPUDIRECTTCPX_TX_BINDINGS",
          "eth1:8-21,112-125;eth2:8-21,112-125;eth3:60-73,164-177;eth4:60-73,164-177"),
         ("NCCL_GPUDIRECTTCPX_RX_BINDINGS",
          "eth1:22-35,126-139;eth2:22-35,126-139;eth3:74-87,178-191;eth4:74-87,178-191"),
         ("NCCL_GPUDIRECTTCPX_PROGRAM_FLOW_STEERING_WAIT_MICROS", "500000")),
    env_script=None,
    daemon=Daemon(
        name="tcpx-daemon",
        image="us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.12",
        command=("/tcpgpudmarxd/build/app/tcpgpudmarxd", "--gpu_nic_preset", "a3vm", "--gpu_shmem_type", "fd",
                 "--uds_path", "/run/tcpx", "--setup_param",
                 # verbatim: the manifest's plain YAML scalar keeps the backslashes (xpk passes
                 # the same words without them)
                 r'\"--verbose 128 2 0 \"'),
        args=(),
        capabilities=("NET_ADMIN",),
        mounts=(("libraries", "/usr/local/nvidia/lib64"), ("tcpx-socket", "/run/tcpx"),
                ("sys", "/hostsysfs"), ("proc-sys", "/hostprocsysfs")),
        device_paths=_GPU_DEVICES),
    installer=Installer(
        "nccl-tcpx-installer", "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev:v3.1.9",
        ("nvidia-h100-80gb",), "gpudirect-tcpx/nccl-tcpx-installer.yaml",
        volumes=(_host("var-lib", "/var/lib"), _host("tcpx", "/var/lib/tcpx"),
                 _host("library-dir-host", "/home/kubernetes/bin")),
        mounts=(("var-lib", "/var/lib"), ("library-dir-host", "/usr/local")),
        args="set -ex\n/scripts/container_entry.sh install --install-nccl\nmkdir -p /usr/local/nvidia/lib64\n"
             "cp -r /var/lib/tcpx/lib64/. /usr/local/nvidia/lib64\necho \"installation finishes\"\n"),
    test_manifest="gpudirect-tcpx/nccl-test-latest.yaml",
    sources=(GPUDIRECT_MANIFESTS, XPK_DECORATORS),
    autopilot_installer="gpudirect-tcpx/nccl-tcpx-installer-autopilot.yaml",
    capabilities=("IPC_LOCK",),   # the test workload's nccl-test container
)

TCPXO = GpuDirect(
    key="tcpxo", title="GPUDirect-TCPXO",
    machine_types=("a3-megagpu-8g",),
    networks=_vpcs(8),
    # gpudirect-tcpxo/nccl-test-latest.yaml: nvidia, sys, proc-sys, aperture-devices.
    volumes=(("nvidia", NVIDIA_LIB64), ("sys", "/sys"), ("proc-sys", "/proc/sys"),
             ("aperture-devices", "/dev/aperture_devices")),
    mounts=(("nvidia", "/usr/local/nvidia/lib64"), ("aperture-devices", "/dev/aperture_devices")),
    # The test pod's two variables; NCCL_LIB_DIR and its nccl-env-profile.sh: the release
    # notes' way to "set all the configurations at once" (gpudirect-tcpxo/README.md, NCCL configs).
    env=(("LD_LIBRARY_PATH", "/usr/local/nvidia/lib64"),
         ("NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY", "/dev/aperture_devices"),
         ("NCCL_LIB_DIR", "/usr/local/nvidia/lib64")),
    env_script="${NCCL_LIB_DIR}/nccl-env-profile.sh",
    daemon=Daemon(
        name="tcpxo-daemon",
        image="us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21",
        command=("/bin/sh", "-c"),
        args=("set -ex\nchmod 755 /fts/entrypoint_rxdm_container.sh\n"
              "/fts/entrypoint_rxdm_container.sh --num_hops=2\n",),
        capabilities=("NET_ADMIN", "NET_BIND_SERVICE"),
        mounts=(("nvidia", "/usr/local/nvidia/lib64"), ("sys", "/hostsysfs"), ("proc-sys", "/hostprocsysfs")),
        device_paths=_GPU_DEVICES + ("/dev/dmabuf_import_helper",)),
    installer=Installer(
        "nccl-tcpxo-installer", "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15",
        ("nvidia-h100-mega-80gb",), "gpudirect-tcpxo/nccl-tcpxo-installer.yaml",
        volumes=(_host("var-lib", "/var/lib"), _host("tcpxo", "/var/lib/tcpxo"),
                 _host("library-dir-host", "/home/kubernetes/bin")),
        mounts=(("var-lib", "/var/lib"), ("library-dir-host", "/usr/local")),
        args="set -ex\nchmod 755 /scripts/container_entry.sh\n/scripts/container_entry.sh install --install-nccl\n"
             "mkdir -p /usr/local/nvidia/lib64\ncp -r /var/lib/tcpxo/lib64/. /usr/local/nvidia/lib64\n"
             "echo \"installation finishes\"\n",
        pre_install=_TCPXO_PRE_INSTALL),
    test_manifest="gpudirect-tcpxo/nccl-test-latest.yaml",
    sources=(GPUDIRECT_MANIFESTS, XPK_DECORATORS),
    autopilot_installer="gpudirect-tcpxo/nccl-tcpxo-installer-autopilot.yaml",
)

# gpudirect-rdma/nccl-test.yaml: library-dir-host and gib volumes and mounts, LD_LIBRARY_PATH,
# and `source /usr/local/gib/scripts/set_nccl_env.sh` before the program. No daemon: the
# plugin talks to the RDMA NICs directly.
_RDMA_VOLUMES = (("library-dir-host", NVIDIA_DIR), ("gib", GIB_DIR))
_RDMA_MOUNTS = (("library-dir-host", "/usr/local/nvidia"), ("gib", "/usr/local/gib"))

RDMA = GpuDirect(
    key="rdma", title="GPUDirect-RDMA",
    machine_types=("a3-ultragpu-8g", "a4-highgpu-8g"),
    networks=_rdma(8),
    volumes=_RDMA_VOLUMES, mounts=_RDMA_MOUNTS,
    env=(("LD_LIBRARY_PATH", "/usr/local/nvidia/lib64"),),
    env_script="/usr/local/gib/scripts/set_nccl_env.sh",
    daemon=None,
    installer=Installer(
        "nccl-rdma-installer", "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib:v1.1.1",
        ("nvidia-h200-141gb", "nvidia-b200"), "gpudirect-rdma/nccl-rdma-installer.yaml",
        volumes=(_host("library-dir-host", NVIDIA_LIB64, "DirectoryOrCreate"), _host("gib", GIB_DIR)),
        mounts=_RDMA_INSTALL_MOUNTS, args=_RDMA_INSTALL),
    test_manifest="gpudirect-rdma/nccl-test.yaml",
    sources=(GPUDIRECT_MANIFESTS, XPK_DECORATORS),
    autopilot_installer="gpudirect-rdma/nccl-rdma-installer-autopilot.yaml",
)

# A4X (GB200, arm64): four RDMA NICs per 4-GPU VM, rdma-0..rdma-3 on eth2..eth5
# (gpudirect-rdma/nccl-test-imex-a4x.yaml); its own arm64 installer (nccl-rdma-installer-a4x.yaml).
RDMA_A4X = GpuDirect(
    key="rdma-a4x", title="GPUDirect-RDMA (A4X)",
    machine_types=("a4x-highgpu-4g",),
    networks=_rdma(4),
    volumes=_RDMA_VOLUMES, mounts=_RDMA_MOUNTS,
    env=(("LD_LIBRARY_PATH", "/usr/local/nvidia/lib64"),),
    env_script="/usr/local/gib/scripts/set_nccl_env.sh",
    daemon=None,
    # Named nccl-rdma-installer upstream too; -a4x here, so that a cluster with A4 and A4X
    # pools gets both DaemonSets (the golden test lists the difference).
    installer=Installer(
        "nccl-rdma-installer-a4x", "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib-arm64:v1.1.0",
        ("nvidia-gb200",), "gpudirect-rdma/nccl-rdma-installer-a4x.yaml",
        volumes=(_host("library-dir-host", NVIDIA_LIB64, "DirectoryOrCreate"), _host("gib", GIB_DIR),
                 _host("nvidia-dir", NVIDIA_DIR, "Directory")),
        mounts=_RDMA_INSTALL_MOUNTS, args=_RDMA_INSTALL, arch="arm64", container="nccl-rdma-installer"),
    test_manifest="gpudirect-rdma/nccl-test-imex-a4x.yaml",
    sources=(GPUDIRECT_MANIFESTS,),
)

# ---------------------------------------------------------------- Autopilot
# GKE's Autopilot variants of the same manifests, as differences from the Standard ones:
# installers in their own namespace without a priority class (Autopilot runs no user pods at
# system-node-critical), the TCPX/TCPXO installers with limits on every container; test pods whose
# daemon has no environment and whose GPU container mounts no plugin libraries (Autopilot mounts
# the driver's /usr/local/nvidia itself).
_AP_LIMITS = (("cpu", "50m"), ("memory", "64Mi"), ("ephemeral-storage", "10Mi"))

# gpudirect-tcpx/nccl-test-latest-autopilot.yaml and nccl-tcpx-installer-autopilot.yaml: the socket
# volume an emptyDir, no IPC_LOCK, no library mount on the GPU container.
TCPX_AUTOPILOT = replace(
    TCPX, mounts=(("tcpx-socket", "/tmp"),), capabilities=(), empty_dirs=("tcpx-socket",),
    daemon=replace(TCPX.daemon, env=()) if TCPX.daemon else None,
    test_manifest="gpudirect-tcpx/nccl-test-latest-autopilot.yaml",
    installer=replace(TCPX.installer, manifest="gpudirect-tcpx/nccl-tcpx-installer-autopilot.yaml",
                      namespace="gpudirect-system", priority_class=None, limits=_AP_LIMITS))
# gpudirect-tcpxo/nccl-test-latest-autopilot.yaml: the GPU container keeps LD_LIBRARY_PATH and the
# aperture devices, not NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY or the plugin mount.
TCPXO_AUTOPILOT = replace(
    TCPXO, mounts=(("aperture-devices", "/dev/aperture_devices"),),
    env=(("LD_LIBRARY_PATH", "/usr/local/nvidia/lib64"), ("NCCL_LIB_DIR", "/usr/local/nvidia/lib64")),
    daemon=replace(TCPXO.daemon, env=()) if TCPXO.daemon else None,
    test_manifest="gpudirect-tcpxo/nccl-test-latest-autopilot.yaml",
    installer=replace(TCPXO.installer, manifest="gpudirect-tcpxo/nccl-tcpxo-installer-autopilot.yaml",
                      namespace="gpudirect-system", priority_class=None, limits=_AP_LIMITS))
# gpudirect-rdma/nccl-test-autopilot.yaml: the second gVNIC (eth1 on gvnic-1) attached too, the
# mounts read-only; nccl-rdma-installer-autopilot.yaml: its own rdma-system namespace, and the
# installer's `install --install-nccl`.
RDMA_AUTOPILOT = replace(
    RDMA, networks=(Network("eth1", "gvnic-1", "NetDevice", "-net", "-sub"), *RDMA.networks), read_only=True,
    test_manifest="gpudirect-rdma/nccl-test-autopilot.yaml",
    installer=replace(RDMA.installer, manifest="gpudirect-rdma/nccl-rdma-installer-autopilot.yaml",
                      namespace="rdma-system", create_namespace=True, priority_class=None,
                      args=_RDMA_INSTALL.replace("container_entry.sh install", "container_entry.sh install --install-nccl")))

GPUDIRECT: dict[str, GpuDirect] = {g.key: g for g in (TCPX, TCPXO, RDMA, RDMA_A4X)}
# Autopilot: by the accelerator the profile requests (GKE picks the machine).
AUTOPILOT: dict[str, GpuDirect] = {a: g for g in (TCPX_AUTOPILOT, TCPXO_AUTOPILOT, RDMA_AUTOPILOT)
                                   for a in g.installer.accelerators}
BY_MACHINE_TYPE: dict[str, GpuDirect] = {m: g for g in GPUDIRECT.values() for m in g.machine_types}
# By the accelerator label value of its nodes (the installers' node affinity). nvidia-h100-80gb
# also comes on a3-highgpu-1g/2g/4g, which have no GPUDirect: a pod asking for all 8 GPUs is on
# an a3-highgpu-8g.
BY_ACCELERATOR: dict[str, GpuDirect] = {a: g for g in GPUDIRECT.values() for a in g.installer.accelerators}


def for_machine(machine_type: str) -> GpuDirect | None:
    """The GPUDirect networking GKE publishes for this machine type, or None."""
    return BY_MACHINE_TYPE.get(machine_type)
