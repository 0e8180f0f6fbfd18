"""GPUDirect (TCPX on A3 High, TCPXO on A3 Mega, RDMA on A3 Ultra and A4): the generated
objects against GKE's published manifests (GoogleCloudPlatform/container-engine-accelerators
at 992db812, ../shared/reference/container-engine-accelerators@992db81/) field by field, every
difference listed with its reason (a listed difference that no longer occurs fails too); the
multi-networking objects against xpk's (src/xpk/core/network.py); the done-when of issue 38:
a torchrun Job on 2 x a3-megagpu-8g and a JAX JobSet on 2 x a4-highgpu-8g synthesize with
GPUDirect, validate clean and plan admitted."""
from __future__ import annotations

import ast
import copy
import json
from decimal import Decimal

import pytest
import yaml

from generator import model as specmod
from generator.builders import gpudirect_objects as gd, tree
from generator.kernel import demand, yamlio
from generator.kernel.catalog import gpudirect as cat
from generator.kernel.errors import SpecError
from tests import golden, helpers

FIXTURE = helpers.FIXTURES / "gpudirect.yaml"
CEA = "container-engine-accelerators@992db81/"
XPK_NETWORK = helpers.REFERENCE / "xpk" / "src" / "xpk" / "core" / "network.py"


def _raw() -> dict:
    return yamlio.load_user(FIXTURE.read_text())


@pytest.fixture(scope="module")
def built() -> dict[str, str]:
    return tree.build(specmod.load(FIXTURE))


def _obj(t: dict[str, str], path: str) -> dict:
    (o,) = yamlio.load_all(t[path])
    return o


def _pod(o: dict) -> dict:
    spec = o["spec"]
    if o["kind"] == "JobSet":
        spec = spec["replicatedJobs"][0]["template"]["spec"]
    return spec["template"]


# ---------------------------------------------------------------- the workload pods

# case -> (generated file, the GKE test pod compared with, its GPU container's name, the variant)
CASES = {
    "tcpxo": ("overlays/mega/job_research_torch-mega.yaml", "nccl-test-host-1", "nccl-test", cat.TCPXO),
    "rdma": ("overlays/a4/jobset_research_jax-a4.yaml", "nccl-test-host-1", "test", cat.RDMA),
    # host-2: host-1 names the /proc/sys volume `proc`, host-2 and xpk's decorator `proc-sys`.
    "tcpx": ("overlays/a3/jobset_research_torch-a3.yaml", "nccl-test-host-2", "nccl-test", cat.TCPX),
    "tcpxo-autopilot": ("overlays/mega-ap/job_research_torch-mega-ap.yaml", "nccl-test-host-1", "nccl-test",
                        cat.TCPXO_AUTOPILOT),
    "rdma-autopilot": ("overlays/h200-ap/jobset_research_jax-h200-ap.yaml", "nccl-test-host-1", "test",
                       cat.RDMA_AUTOPILOT),
    "tcpx-autopilot": ("overlays/h100-ap/jobset_research_torch-h100-ap.yaml", "nccl-test-host-2", "nccl-test",
                       cat.TCPX_AUTOPILOT),
}


def _common(c: str, daemon: str | None, test_shm: bool = True) -> dict[str, str]:
    out = {
        "metadata.labels.": "the workload's own labels; the test pods' `name` label selects their per-pod Service",
        "metadata.name": "a pod template has no name: the Job or JobSet names its pods",
        f"spec.containers[{c}].command": "the launcher's command line (torchrun, python -m), started through "
                                        "`bash -c 'source <NCCL settings> && exec \"$@\"'` where the type has a "
                                        "settings script; the test pod starts an NCCL benchmark",
        f"spec.containers[{c}].image": "the workload's image; the test runs GKE's NCCL test image",
        f"spec.containers[{c}].ports[rendezvous]": "the launcher's rendezvous port",
        f"spec.containers[{c}].resources": "the spec's cpu and memory requests and the GPUs as requests, so "
                                           "Kueue's quota counts them",
        f"spec.containers[{c}].securityContext.allowPrivilegeEscalation": "hardened (builders/podpolicy.py)",
        f"spec.containers[{c}].securityContext.capabilities.drop": "hardened: every capability dropped but "
                                                                  "what the type needs",
        f"spec.containers[{c}].volumeMounts[dshm]": "shared memory: the training pod's own dshm emptyDir "
                                                    "(Memory, no size limit, as xpk's decorators)",
        "spec.volumes[dshm]": "see volumeMounts[dshm]",
        **({f"spec.containers[{c}].volumeMounts[shared-memory]": "see volumeMounts[dshm]",
            "spec.volumes[shared-memory]": "see volumeMounts[dshm]"} if test_shm else {}),
        "spec.nodeSelector": "every generated GPU pod selects its accelerator (Autopilot's compute class, "
                             "Standard's pool)",
        "spec.restartPolicy": "the Job's pods: OnFailure in an Indexed Job, Never in a JobSet",
        "spec.securityContext": "hardened: runs as the image's non-root user, seccomp RuntimeDefault",
        "spec.terminationGracePeriodSeconds": "the time to save a checkpoint after SIGTERM (spec)",
    }
    if daemon:
        out.update({
            f"spec.containers[{daemon}].restartPolicy": "a native sidecar (an init container with restartPolicy "
                                                        "Always, as xpk's decorators add it), so the Job completes "
                                                        "when the trainer exits; compared here as a container",
            f"spec.containers[{daemon}].resources": "requests cat.DAEMON_REQUESTS (GKE's TCPX Autopilot test's), so "
                                                    "Kueue, the scheduler and plan count the daemon (these "
                                                    "test pods give it none)",
            f"spec.containers[{daemon}].securityContext.allowPrivilegeEscalation": "hardened (podpolicy)",
            f"spec.containers[{daemon}].securityContext.runAs": "root, as in GKE's test pods, while the pod "
                                                                "runs the trainer as non-root",
        })
    return out


def _autopilot(c: str, daemon: str | None) -> dict[str, str]:
    out = {
        f"spec.containers[{c}].resources": "the spec's requests; Autopilot: limits = requests, as it sets them",
        "spec.nodeSelector.cloud.google.com/gke-spot": "the test's own Spot choice; capacity is the profile's",
        "spec.nodeSelector.topology.kubernetes.io/zone": "the test pins a zone; the cluster's location decides",
        "spec.nodeSelector.cloud.google.com/gke-gpu-driver-version": "the test asks for the latest driver; the "
                                                                     "generator leaves GKE's default (a "
                                                                     "`pod.nodeSelector` addition can ask)",
    }
    if daemon:
        out[f"spec.containers[{daemon}].resources.limits"] = "Autopilot: limits = requests, as it sets them"
    return out


INTENDED = {
    "tcpxo": {
        **_common("nccl-test", "tcpxo-daemon"),
        "spec.containers[nccl-test].imagePullPolicy": "tagged images keep the default IfNotPresent",
        "spec.containers[nccl-test].env[NCCL_LIB_DIR]": "the release notes' way to set every NCCL setting at "
                                                        "once (gpudirect-tcpxo/README.md, NCCL configs): "
                                                        "nccl-env-profile.sh is sourced from there",
        "spec.affinity.podAntiAffinity": "two bare Pods kept apart by the test; a training pod asks for all "
                                         "8 GPUs of its node, so no two share one",
        "spec.hostname": "the Indexed Job names its pods <job>-<index> under its headless Service",
        "spec.subdomain": "see spec.hostname",
        "spec.priorityClassName": "the workload's priority tier",
    },
    "rdma": {
        **_common("test", None),
        "spec.containers[test].args": "see command: the test sources set_nccl_env.sh in its shell script",
        "spec.containers[test].env[COORDINATOR_ADDRESS]": "JAX's coordinator, rank count and rank (launcher jax)",
        "spec.containers[test].env[NUM_PROCESSES]": "see COORDINATOR_ADDRESS",
        "spec.containers[test].env[PROCESS_ID]": "see COORDINATOR_ADDRESS",
    },
    "tcpx": {
        **_common("nccl-test", "tcpx-daemon", test_shm=False),   # the TCPX test pod mounts no /dev/shm
        "spec.containers[nccl-test].imagePullPolicy": "tagged images keep the default IfNotPresent",
        "spec.containers[nccl-test].env[NCCL_": "the NCCL settings GKE's run-nccl.sh passes to every rank "
                                                "(gpudirect-tcpx/nccl-config.yaml, mpirun -x), set on the "
                                                "container",
        "spec.containers[nccl-test].volumeMounts[config-volume]": "the test's ConfigMap of benchmark scripts",
        "spec.volumes[config-volume]": "see volumeMounts[config-volume]",
    },
}


INTENDED["tcpxo-autopilot"] = {
    **{k: v for k, v in INTENDED["tcpxo"].items() if "NCCL_LIB_DIR" not in k},
    **_autopilot("nccl-test", "tcpxo-daemon"),
    "spec.containers[nccl-test].env[NCCL_LIB_DIR]": INTENDED["tcpxo"]["spec.containers[nccl-test].env[NCCL_LIB_DIR]"],
}
INTENDED["rdma-autopilot"] = {**INTENDED["rdma"], **_autopilot("test", None)}
del INTENDED["rdma-autopilot"]["spec.nodeSelector.cloud.google.com/gke-spot"]
del INTENDED["rdma-autopilot"]["spec.nodeSelector.topology.kubernetes.io/zone"]
del INTENDED["rdma-autopilot"]["spec.nodeSelector.cloud.google.com/gke-gpu-driver-version"]
del INTENDED["rdma-autopilot"]["spec.nodeSelector"]   # the test selects nvidia-h200-141gb as the generator does
INTENDED["tcpx-autopilot"] = {
    **INTENDED["tcpx"], **_autopilot("nccl-test", "tcpx-daemon"),
    "spec.volumes[tcpx-socket].emptyDir": "the manifest's `emptyDir:` has no value (null); the same empty emptyDir",
}


def _comparable(pod: dict, gpu_container: str) -> dict:
    """The generated pod template in the test pod's terms: the trainer under the test's
    container name, the native sidecar among the containers, and the annotations parsed
    (JSON interfaces, YAML device list), so formatting is no difference."""
    pod = copy.deepcopy(pod)
    spec = pod["spec"]
    spec["containers"] = [dict(c, name=gpu_container) if c["name"] == "trainer" else c
                          for c in spec["containers"]] + spec.pop("initContainers", [])
    _parse_annotations(pod)
    return pod


def _parse_annotations(pod: dict) -> None:
    ann = pod["metadata"].get("annotations") or {}
    for k in list(ann):
        if k == cat.INTERFACES_ANNOTATION:
            ann[k] = json.loads(ann[k])
        elif k.startswith(cat.DEVICES_ANNOTATION_PREFIX):
            ann[k] = yaml.safe_load(ann[k])


@pytest.mark.parametrize("key", sorted(CASES))
def test_pod_matches_gke_test_workload_except_intended(key, built):
    path, ref_name, container, g = CASES[key]
    (ref,) = [d for d in helpers.load_reference(CEA + g.test_manifest)
              if d["kind"] == "Pod" and d["metadata"]["name"] == ref_name]
    ref = {"metadata": copy.deepcopy(ref["metadata"]), "spec": ref["spec"]}
    _parse_annotations(ref)
    ours = _comparable(_pod(_obj(built, path)), container)
    diffs = golden.differing_paths(ref, ours)
    intended = INTENDED[key]
    unexplained = sorted(p for p in diffs if not any(p.startswith(prefix) for prefix in intended))
    assert not unexplained, f"{key}: differences without a reason: {unexplained}"
    stale = sorted(prefix for prefix in intended if not any(p.startswith(prefix) for p in diffs))
    assert not stale, f"{key}: listed differences that no longer occur: {stale}"
    # What GPUDirect is about stays exactly the test pod's: interfaces, devices, host volumes.
    assert ours["metadata"]["annotations"] | ref["metadata"]["annotations"] == ours["metadata"]["annotations"]


def test_golden_comparison_has_a_negative_half(built):
    """A pod whose interfaces annotation lost a NIC is a difference no reason covers."""
    path, ref_name, container, _ = CASES["tcpxo"]
    (ref,) = [d for d in helpers.load_reference(CEA + cat.TCPXO.test_manifest)
              if d["kind"] == "Pod" and d["metadata"]["name"] == ref_name]
    ref = {"metadata": copy.deepcopy(ref["metadata"]), "spec": ref["spec"]}
    _parse_annotations(ref)
    ours = _comparable(_pod(_obj(built, path)), container)
    ours["metadata"]["annotations"][cat.INTERFACES_ANNOTATION].pop()
    diffs = golden.differing_paths(ref, ours)
    assert any(p.startswith(f"metadata.annotations.{cat.INTERFACES_ANNOTATION}") for p in diffs)


# ---------------------------------------------------------------- cluster objects

INSTALLER_INTENDED = {
    "rdma-a4x": {
        "metadata.name": "nccl-rdma-installer upstream too: -a4x keeps it apart from the A3 Ultra/A4 installer "
                         "in a cluster with both",
        "metadata.labels.k8s-app": "see metadata.name",
        "spec.selector.matchLabels.k8s-app": "see metadata.name",
        "spec.template.metadata.labels": "see metadata.name",
    },
}


INSTALLERS = {**cat.GPUDIRECT, **{f"{g.key}-autopilot": g for g in
                                  (cat.TCPX_AUTOPILOT, cat.TCPXO_AUTOPILOT, cat.RDMA_AUTOPILOT)}}


@pytest.mark.parametrize("key", sorted(INSTALLERS))
def test_installer_matches_gke_manifest(key):
    g = INSTALLERS[key]
    (ref,) = [d for d in helpers.load_reference(CEA + g.installer.manifest) if d["kind"] == "DaemonSet"]
    diffs = golden.differing_paths(ref, gd.installer(g))
    intended = INSTALLER_INTENDED.get(key, {})
    assert sorted(p for p in diffs if not any(p.startswith(i) for i in intended)) == []
    assert sorted(i for i in intended if not any(p.startswith(i) for p in diffs)) == []


def test_autopilot_installers_have_their_namespace():
    """GKE's RDMA Autopilot manifest creates rdma-system (labelled name: rdma-system); the TCPX/TCPXO
    ones run in gpudirect-system, which the generator creates the same way."""
    (ns,) = [d for d in helpers.load_reference(CEA + cat.RDMA_AUTOPILOT.installer.manifest) if d["kind"] == "Namespace"]
    assert gd.namespace(cat.RDMA_AUTOPILOT) == ns
    assert gd.namespace(cat.TCPXO_AUTOPILOT)["metadata"]["name"] == "gpudirect-system"
    assert gd.namespace(cat.TCPX) is None


def test_installer_images_are_the_test_workloads_plugin_images():
    """The plugin the installer puts on the node and the one GKE's test pod runs are one release."""
    for g in (cat.TCPX, cat.TCPXO):
        pods = [d for d in helpers.load_reference(CEA + g.test_manifest) if d["kind"] == "Pod"]
        images = {c["image"] for p in pods for c in p["spec"]["containers"]}
        assert g.installer.image in images
        assert g.daemon is not None and g.daemon.image in images


def _xpk_networks(prefix: str) -> list[dict]:
    """xpk's CLUSTER_NETWORK_YAML (core/network.py), read from the source, filled in as xpk does."""
    module = ast.parse(XPK_NETWORK.read_text())
    (text,) = [n.value.value for n in module.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
               and isinstance(n.value.value, str) and getattr(n.targets[0], "id", "") == "CLUSTER_NETWORK_YAML"]
    assert isinstance(text, str)
    return [d for d in yaml.safe_load_all(text.format(cluster_name=prefix)) if d]


def test_tcpx_networks_match_xpk():
    ours = {(o["kind"], o["metadata"]["name"]): o for o in gd.networks(cat.TCPX, "c1")}
    theirs = {(o["kind"], o["metadata"]["name"]): o for o in _xpk_networks("c1")}
    assert ours == theirs


@pytest.mark.parametrize("key", ["tcpxo", "rdma", "rdma-a4x"])
def test_every_network_the_test_pods_attach_has_its_objects(key):
    """The networks GKE's test workloads name in their interfaces annotation (the independent
    source) are exactly those the generator makes Network and GKENetworkParamSet objects for."""
    g = cat.GPUDIRECT[key]
    pods = [d for d in helpers.load_reference(CEA + g.test_manifest) if d["kind"] == "Pod"]
    named = {(i["interfaceName"], i["network"]) for p in pods
             for i in json.loads(p["metadata"]["annotations"][cat.INTERFACES_ANNOTATION])} - {("eth0", "default")}
    assert named == {(n.interface, n.name) for n in g.networks}
    objs = gd.networks(g, "c1")
    assert {o["metadata"]["name"] for o in objs if o["kind"] == "Network"} == {n for _, n in named}
    assert {o["metadata"]["name"] for o in objs if o["kind"] == "GKENetworkParamSet"} == {n for _, n in named}
    # GKE's GPUDirect-RDMA guide: deviceMode RDMA on the rdma-N networks; TCPX/TCPXO NetDevice (xpk).
    modes = {o["spec"]["deviceMode"] for o in objs if o["kind"] == "GKENetworkParamSet"}
    assert modes == ({"RDMA"} if key.startswith("rdma") else {"NetDevice"})


def test_cluster_objects_go_to_controllers_of_profiles_that_use_them(built):
    assert "controllers/mega/gpudirect/daemonset_kube-system_nccl-tcpxo-installer.yaml" in built
    assert _obj(built, "controllers/mega/gpudirect/gkenetworkparamset_vpc8.yaml")["spec"] == {
        "vpc": "mega-cluster-net-8", "vpcSubnet": "mega-cluster-sub-8", "deviceMode": "NetDevice"}
    # Default prefix: the profile name.
    assert _obj(built, "controllers/a4/gpudirect/gkenetworkparamset_rdma-7.yaml")["spec"] == {
        "vpc": "a4-rdma-net", "vpcSubnet": "a4-rdma-sub-7", "deviceMode": "RDMA"}
    assert not any(p.startswith("controllers/mega/gpudirect/") and "rdma" in p for p in built)


# ---------------------------------------------------------------- the switch, and refusals

def test_switch_off_leaves_the_pod_plain_and_no_cluster_objects():
    raw = _raw()
    raw["workloads"][0]["gpudirect"] = False
    t = helpers.render(raw)
    pod = _pod(_obj(t, "overlays/mega/job_research_torch-mega.yaml"))
    assert cat.INTERFACES_ANNOTATION not in (pod["metadata"].get("annotations") or {})
    assert "initContainers" not in pod["spec"]
    assert not any(p.startswith("controllers/mega/gpudirect/") for p in t)
    # and validate says what is missing (NW001)
    assert [f.split(": NW001")[0] for f in helpers.rule_findings([_obj(t, "overlays/mega/job_research_torch-mega.yaml")],
                                                                ("NW001",))] != []


def test_single_node_runs_get_no_gpudirect():
    raw = _raw()
    raw["workloads"][0]["nodes"] = 1
    pod = _pod(_obj(helpers.render(raw), "overlays/mega/job_research_torch-mega.yaml"))
    assert cat.INTERFACES_ANNOTATION not in (pod["metadata"].get("annotations") or {})


def test_required_gpudirect_where_the_pool_has_none_is_one_line():
    raw = _raw()
    raw["profiles"]["mega"]["nodePool"]["machineType"] = "a3-highgpu-4g"
    raw["workloads"][0]["gpudirect"] = True
    raw["workloads"][0]["gpusPerNode"] = 4
    with pytest.raises(SpecError) as e:
        specmod.from_dict(raw, "test-spec.yaml")
    lines = [line for line in str(e.value).splitlines() if "gpudirect" in line]
    assert len(lines) == 1 and "workloads['torch-mega'].gpudirect" in lines[0] and "a3-megagpu-8g" in lines[0]


def test_autopilot_h100_pods_of_part_of_a_node_get_none_and_requiring_it_is_one_line():
    """On Autopilot GKE picks the machine from the GPU count: 4 H100s are an a3-highgpu-4g, which
    has no GPUDirect-TCPX (GKE publishes it for a3-highgpu-8g)."""
    raw = _raw()
    (w,) = [w for w in raw["workloads"] if w["name"] == "torch-h100-ap"]
    w["gpusPerNode"] = 4
    js = _obj(helpers.render(raw), "overlays/h100-ap/jobset_research_torch-h100-ap.yaml")
    assert cat.INTERFACES_ANNOTATION not in (_pod(js)["metadata"].get("annotations") or {})
    w["gpudirect"] = True
    with pytest.raises(SpecError) as e:
        specmod.from_dict(raw, "test-spec.yaml")
    lines = [line for line in str(e.value).splitlines() if ".gpudirect" in line]
    assert len(lines) == 1 and "gpusPerNode 4" in lines[0], lines


# ---------------------------------------------------------------- validate: NW001

def test_nw001_flags_a_multi_node_gpu_job_without_nics_and_not_one_with_them(built):
    decorated = _obj(built, "overlays/a3/jobset_research_torch-a3.yaml")
    assert helpers.rule_findings([decorated], ("NW001",)) == []
    plain = copy.deepcopy(decorated)
    del _pod(plain)["metadata"]["annotations"][cat.INTERFACES_ANNOTATION]
    (line,) = helpers.rule_findings([plain], ("NW001",))
    assert "2 pods of 8 GPUs each on GPUDirect-TCPX machines" in line
    # Part of a node (4 of 8 GPUs): an a3-highgpu-4g, or no NCCL across nodes: no finding.
    half = copy.deepcopy(plain)
    for c in _pod(half)["spec"]["containers"]:
        c["resources"] = {"requests": {"nvidia.com/gpu": "4"}, "limits": {"nvidia.com/gpu": "4"}}
    assert helpers.rule_findings([half], ("NW001",)) == []


# ---------------------------------------------------------------- demand: the daemon counts

def test_daemon_requests_count_in_the_demand(built):
    """Kueue's effective pod request: containers plus native sidecars (KEP-753). The trainer
    asks 150 cpu and 1000Gi; the daemon what GKE's TCPX Autopilot test gives it (cpu 1, memory 2Gi,
    ephemeral-storage 10Gi, gpudirect-tcpx/nccl-test-latest-autopilot.yaml): 2 pods."""
    (ref,) = [d for d in helpers.load_reference(CEA + "gpudirect-tcpx/nccl-test-latest-autopilot.yaml")
              if d["kind"] == "Pod" and d["metadata"]["name"] == "nccl-test-host-1"]
    (daemon,) = [c for c in ref["spec"]["containers"] if c["name"] == "tcpx-daemon"]
    assert daemon["resources"]["requests"] == {"cpu": 1, "memory": "2Gi", "ephemeral-storage": "10Gi"}
    d = demand.of(_obj(built, "overlays/mega/job_research_torch-mega.yaml"))
    assert d.per_workload()["cpu"] == Decimal(302)
    assert d.per_workload()["memory"] == 2 * (1000 * 2**30 + 2 * 2**30)
    assert d.per_workload()["ephemeral-storage"] == 2 * 10 * 2**30
    rdma = demand.of(_obj(built, "overlays/a4/jobset_research_jax-a4.yaml"))   # no daemon on RDMA
    assert rdma.per_workload()["cpu"] == Decimal(300)


# ---------------------------------------------------------------- done when (issue 38)

def test_done_when_synth_validate_plan(tmp_path, capsys, monkeypatch):
    (tmp_path / "platform.yaml").write_text(FIXTURE.read_text())
    monkeypatch.chdir(tmp_path)
    code, out, err = helpers.run_cli(capsys, "synth", "--spec", tmp_path / "platform.yaml")
    assert code == 0, err
    code, out, err = helpers.run_cli(capsys, "validate", "--spec", tmp_path / "platform.yaml")
    assert code == 0, out + err
    assert "0 error(s), 0 warning(s)" in out + err
    for profile, name in (("mega", "torch-mega"), ("a4", "jax-a4"), ("a3", "torch-a3"), ("mega-ap", "torch-mega-ap"),
                          ("h100-ap", "torch-h100-ap"), ("h200-ap", "jax-h200-ap")):
        code, out, err = helpers.run_cli(capsys, "plan", f"overlays/{profile}")
        assert code == 0, out + err
        assert any(f"research/{name}" in line and "admitted" in line for line in out.splitlines()), out


# ---------------------------------------------------------------- diff sees the new objects and resources

def test_diff_shows_the_cluster_objects_and_the_daemons_requests(tmp_path, capsys, monkeypatch):
    from tests.test_diff import git
    raw = _raw()
    raw["workloads"][0]["gpudirect"] = False
    (tmp_path / "platform.yaml").write_text(yamlio.dump(raw))
    monkeypatch.chdir(tmp_path)
    assert helpers.run_cli(capsys, "synth")[0] == 0
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "base")
    (tmp_path / "platform.yaml").write_text(FIXTURE.read_text())
    assert helpers.run_cli(capsys, "synth")[0] == 0
    code, out, err = helpers.run_cli(capsys, "diff", "HEAD")
    # 1 installer DaemonSet + 8 Networks + 8 GKENetworkParamSets + the kustomization of the new directory.
    assert "18 added, 0 removed, 1 changed" in out, out
    assert "controllers/mega/gpudirect" in out
    # The daemon sidecar's 1 cpu per pod, 2 pods: Kueue counts native sidecars' requests.
    assert "cpu: quota 416; demand 300 → 302" in out, out


# ---------------------------------------------------------------- multi-host serving (LWS)

def test_multi_host_serving_groups_get_gpudirect():
    """tests/fixtures/serving.yaml serves vLLM in LWS groups of 2 x 8 H100 on a3-highgpu-8g: both
    templates attach the TCPX NICs and run the daemon; `gpudirect: false` leaves them plain."""
    raw = yamlio.load_user((helpers.FIXTURES / "serving.yaml").read_text())
    t = helpers.render(raw)
    (path,) = [p for p in t if p.startswith("overlays/a3/leaderworkerset_")]
    lws = _obj(t, path)
    for role in ("leaderTemplate", "workerTemplate"):
        pod = lws["spec"]["leaderWorkerTemplate"][role]
        assert json.loads(pod["metadata"]["annotations"][cat.INTERFACES_ANNOTATION])[-1] == \
            {"interfaceName": "eth4", "network": "vpc4"}
        assert [c["name"] for c in pod["spec"]["initContainers"]] == ["tcpx-daemon"]
    assert helpers.rule_findings([lws], ("NW001",)) == []
    assert "controllers/a3/gpudirect/daemonset_kube-system_nccl-tcpx-installer.yaml" in t
    (w,) = [w for w in raw["workloads"] if w.get("hosts", 1) > 1]
    w["gpudirect"] = False
    plain = _obj(helpers.render(raw), path)
    assert "initContainers" not in plain["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    assert helpers.rule_findings([plain], ("NW001",)) != []


# ---------------------------------------------------------------- A4X (GB200)

A4X_INTENDED = {
    **{k: v for k, v in _common("test", None).items()},
    "spec.containers[test].args": "see command: the test sources set_nccl_env.sh in its shell script",
    "spec.affinity.nodeAffinity": "the accelerator node selector of every generated GPU pod instead (GB200 nodes "
                                  "are all arm64: the installer keeps the arch term, as GKE's does)",
    "spec.hostNetwork": "false is the default; not written",
    "spec.hostPID": "false is the default; not written",
    "spec.containers[test].volumeMounts[gib]": "the gIB scripts the program sources (set_nccl_env.sh), mounted as "
                                              "GKE's A3 Ultra/A4 test mounts them; the A4X test sources them "
                                              "without the mount",
    "spec.containers[test].resources.claims": "IMEX (multi-node NVLink) through NVIDIA's ComputeDomain claim is "
                                             "not generated: it needs NVIDIA's DRA driver; NCCL runs over RDMA",
    "spec.resourceClaims": "see resources.claims",
}


def test_a4x_pod_matches_gke_imex_test_except_intended():
    t = tree.build(specmod.load(helpers.FIXTURES / "accelerators.yaml"))
    (ref,) = [d for d in helpers.load_reference(CEA + cat.RDMA_A4X.test_manifest)
              if d["kind"] == "Pod" and d["metadata"]["name"] == "nccl-test-host-1"]
    ref = {"metadata": copy.deepcopy(ref["metadata"]), "spec": ref["spec"]}
    _parse_annotations(ref)
    ours = _comparable(_pod(_obj(t, "overlays/gb200/jobset_research_torch-gb200.yaml")), "test")
    diffs = golden.differing_paths(ref, ours)
    assert sorted(p for p in diffs if not any(p.startswith(i) for i in A4X_INTENDED)) == []
    assert sorted(i for i in A4X_INTENDED if not any(p.startswith(i) for p in diffs)) == []


# ---------------------------------------------------------------- a team's own manifest (opt-in)

def test_manifest_opts_in_and_the_demand_counts_what_is_built():
    """examples/team-jobset.yaml places a team's JobSet of 4 x 8 B200 (a4-highgpu-8g): with
    `gpudirect: true` its pods get GPUDirect-RDMA, its command runs after GKE's settings script,
    validate's NW001 is satisfied, and the demand is read from the built object."""
    raw = helpers.example_raw(helpers.ROOT / "examples" / "team-jobset.yaml")
    (w,) = [w for w in raw["workloads"] if w["kind"] == "manifest"]
    assert helpers.rule_findings([_obj(helpers.render(raw), "overlays/b200-tas/jobset_team-a_llama-ft.yaml")],
                                 ("NW001",)) != []
    w["gpudirect"] = True
    js = _obj(helpers.render(raw), "overlays/b200-tas/jobset_team-a_llama-ft.yaml")
    pod = _pod(js)
    assert '"network":"rdma-7"' in pod["metadata"]["annotations"][cat.INTERFACES_ANNOTATION]
    (c,) = pod["spec"]["containers"]
    assert c["command"][:4] == ["/bin/bash", "-c", 'source /usr/local/gib/scripts/set_nccl_env.sh && exec "$@"', "--"]
    assert c["command"][4] == "torchrun"
    assert helpers.rule_findings([js], ("NW001",)) == []
    # The fit check reads this emitted JobSet: 4 pods of 8 B200, the example's own numbers.
    assert demand.of(js).per_workload()["nvidia.com/gpu"] == 32


def test_manifest_gpudirect_needs_the_command_where_a_script_runs_first(tmp_path):
    raw = helpers.example_raw(helpers.ROOT / "examples" / "team-jobset.yaml")
    (w,) = [w for w in raw["workloads"] if w["kind"] == "manifest"]
    (jobset,) = yamlio.load_all((helpers.ROOT / "examples" / "manifests" / "llama-jobset.yaml").read_text())
    del jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["command"]
    w.update(gpudirect=True, file=str(helpers.write_spec(tmp_path / "jobset.yaml", jobset)))
    with pytest.raises(SpecError) as e:
        specmod.from_dict(raw, str(tmp_path / "test-spec.yaml"))   # the spec beside its manifest
    (line,) = [x for x in str(e.value).splitlines() if ".gpudirect" in x]
    assert "give the container's `command`" in line and "GPUDirect-RDMA" in line
