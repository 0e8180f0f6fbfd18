"""Golden comparison of the `serving` kind with GKE's serving samples, object
by object and field by field: vLLM on 2 x L4 and on an A100, Triton with
TensorRT-LLM on an L4, TGI on 8 x H100, multi-host vLLM on A3 (LeaderWorkerSet)
with its HPA and PodMonitoring, vLLM on a TPU v6e 2x4 slice with its HPA and
PodMonitoring, and JetStream PyTorch on a TPU v5e 2x4 slice. The spec is
tests/fixtures/serving.yaml, written to match each sample's model, resources
and arguments. Every difference is listed with its reason; a listed
difference that no longer occurs fails too, so the list stays true."""
from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import pytest

from generator import model as specmod
from generator.builders import tree
from generator.kernel import paths, writer
from tests import golden, helpers

FIXTURE = Path(__file__).parent / "fixtures" / "serving.yaml"
R = "kubernetes-engine-samples/ai-ml/"

NAMESPACED = {"metadata.namespace": "the samples rely on the current namespace; generated objects say where they go"}
ARGO = {"metadata.annotations.argocd.argoproj.io/": "Argo CD sync wave and options, stamped by generator/builders/gitops.py"}
QUEUED = {
    "metadata.labels.kueue.x-k8s.io/queue-name": "queued through Kueue: the LocalQueue of the workload",
    "metadata.labels.app": "the workload's app label on the object too (selector of its Service and pool)",
}
POD_QUEUED = {"spec.template.metadata.labels.kueue.x-k8s.io/queue-name": "Deployment pods are queued one by one "
                                                                         "(Kueue's pod integration reads the pod label)",
              "spec.template.spec.priorityClassName": "the workload's priority tier (Kueue and the scheduler read it)"}
HARDENED = "hardened (generator/builders/podpolicy.py): seccomp RuntimeDefault, no privilege escalation, all capabilities dropped"
NO_REPLICAS = {"spec.replicas": "autoscaled: the HPA owns the replica count, so Git does not set it "
                                "(Argo CD would fight the HPA)"}
SOURCE_LABEL = {"spec.template.metadata.labels.examples.ai.gke.io/source": "sample bookkeeping label, not part of "
                                                                           "the platform"}
NAMED_PORT = "container and Service ports are named (http, ...): several ports stay valid, probes can name them"
BY_WORKLOAD = "named after the workload (one HPA and one PodMonitoring per serving workload)"


def _hardened(container: str, pod: str = "spec.template.spec") -> dict:
    return {f"{pod}.containers[{container}].securityContext": HARDENED, f"{pod}.securityContext": HARDENED}


L4 = "spec.template.spec.containers[inference-server]"
TPU = "spec.template.spec.containers[inference-server]"
def _gpudirect_tcpx(container: str, at: str) -> dict[str, str]:
    """The sample runs NCCL over the primary NIC; the generator adds GPUDirect-TCPX on a3-highgpu-8g
    groups, compared with GKE's own TCPX test workload in tests/test_gpudirect.py."""
    why = "GPUDirect-TCPX on a3-highgpu-8g (the sample has none; tests/test_gpudirect.py compares it with GKE's)"
    return {f"{at}.metadata.annotations": why, f"{at}.spec.initContainers[tcpx-daemon]": why,
            f"{at}.spec.containers[{container}].env[LD_LIBRARY_PATH]": why,
            f"{at}.spec.containers[{container}].env[NCCL_": why,
            f"{at}.spec.containers[{container}].volumeMounts[libraries]": why,
            f"{at}.spec.containers[{container}].volumeMounts[tcpx-socket]": why,
            **{f"{at}.spec.volumes[{v}]": why for v in ("libraries", "sys", "proc-sys", "tcpx-socket")}}


LEADER = "spec.leaderWorkerTemplate.leaderTemplate"
WORKER = "spec.leaderWorkerTemplate.workerTemplate"

# (sample file, profile of the fixture, {(kind, sample name): (our name, {path prefix: reason})},
#  {sample container name: ours})
CASES = [
    (R + "llm-serving-gemma/vllm/vllm-2-9b-it.yaml", "l4", {
        ("Deployment", "vllm-gemma-deployment"): ("vllm-gemma-deployment", {
            **NAMESPACED, **QUEUED, **POD_QUEUED, **SOURCE_LABEL, **_hardened("inference-server"),
            f"{L4}.ports[http]": NAMED_PORT,
            f"{L4}.readinessProbe": "route traffic only to a server that listens (the catalog's vLLM probe, from "
                                    "GKE's A3 vLLM sample)",
            f"{L4}.resources.limits.cpu": "GKE Standard: CPU may burst (no CFS throttling); Autopilot keeps "
                                          "limit = request",
            "spec.template.spec.nodeSelector.cloud.google.com/gke-gpu-driver-version":
                "the node pool's driver comes from the cluster's node pool settings, not from each pod",
        }),
        ("Service", "llm-service"): ("llm-service", {**NAMESPACED, "spec.ports": NAMED_PORT}),
    }, {}),
    (R + "llm-serving-gemma/trtllm/deploy-triton-server.yaml", "l4", {
        ("ConfigMap", "launch-tritonserver"): ("triton-gemma-deployment-launch", {
            **NAMESPACED, "metadata.name": "named after the workload (<name>-launch): two Triton servers in one "
                                           "namespace keep their own scripts"}),
        ("Deployment", "triton-gemma-deployment"): ("triton-gemma-deployment", {
            **NAMESPACED, **POD_QUEUED, **SOURCE_LABEL, **_hardened("inference-server"),
            "metadata.labels.kueue.x-k8s.io/queue-name": QUEUED["metadata.labels.kueue.x-k8s.io/queue-name"],
            "metadata.labels.version": "the sample's version label is not part of the platform's selectors",
            "spec.selector.matchLabels.version": "see metadata.labels.version",
            "spec.template.metadata.labels.version": "see metadata.labels.version",
            "spec.template.metadata.labels.ai.gke.io/model": "the model label is the model repository's last path "
                                                             "part (the sample writes `gemma` by hand)",
            f"{L4}.imagePullPolicy": "tagged images keep the default IfNotPresent",
            "spec.template.spec.securityContext.runAsGroup": "security.runAsUser 1000 runs as uid and gid 1000 "
                                                             "(the sample: runAsUser and fsGroup 1000)",
            "spec.template.spec.securityContext.runAsNonRoot": "see runAsGroup",
            "spec.template.spec.volumes[data].persistentVolumeClaim.readOnly":
                "the spec's volume writes readOnly explicitly (false, the default)",
            "spec.template.spec.volumes[scripts-volume].configMap.name": "the launch ConfigMap is named after the "
                                                                        "workload",
        }),
        ("Service", "triton-server"): ("triton-server", {
            **NAMESPACED,
            "metadata.labels.app": "the Service selects by the app label; it does not carry it",
            "spec.ports": "ports named as the container ports (http, grpc, metrics) with numeric targets",
        }),
    }, {}),
    (R + "llm-multihost-gpus/vllm-llama3-405b-A3.yaml", "a3", {
        ("LeaderWorkerSet", "vllm"): ("vllm", {
            **NAMESPACED, **QUEUED, **NO_REPLICAS,
            **_hardened("vllm-leader", f"{LEADER}.spec"), **_hardened("vllm-worker", f"{WORKER}.spec"),
            f"{LEADER}.metadata.labels.a": "the app and ai.gke.io labels of GKE's single-host samples on every pod",
            f"{WORKER}.metadata.labels.a": "see the leader's labels",
            f"{LEADER}.spec.priorityClassName": POD_QUEUED["spec.template.spec.priorityClassName"],
            f"{WORKER}.spec.priorityClassName": POD_QUEUED["spec.template.spec.priorityClassName"],
            f"{LEADER}.spec.containers[vllm-leader].ports": NAMED_PORT,
            f"{LEADER}.spec.containers[vllm-leader].resources.requests": "requests written beside the limits (the "
                                                                         "API server's defaulting made explicit)",
            f"{WORKER}.spec.containers[vllm-worker].resources.requests": "see the leader's requests",
            f"{LEADER}.spec.volumes[dshm].emptyDir.sizeLimit": "no size limit on /dev/shm, as GKE's single-host "
                                                                "vLLM samples (memory-backed: counted as the pod's "
                                                                "memory)",
            f"{WORKER}.spec.volumes[dshm].emptyDir.sizeLimit": "see the leader's /dev/shm",
            **_gpudirect_tcpx("vllm-leader", LEADER), **_gpudirect_tcpx("vllm-worker", WORKER),
        }),
        ("Service", "vllm-leader"): ("vllm-leader", NAMESPACED),
    }, {}),
    (R + "llm-multihost-gpus/vllm-hpa.yaml", "a3", {
        ("HorizontalPodAutoscaler", "lws-hpa"): ("vllm", {**NAMESPACED, "metadata.name": BY_WORKLOAD}),
    }, {}),
    (R + "llm-multihost-gpus/vllm_pod_monitor.yaml", "a3", {
        ("PodMonitoring", "vllm-pod-monitoring"): ("vllm", {**NAMESPACED, "metadata.name": BY_WORKLOAD}),
    }, {}),
    (R + "llm-serving-gemma/tgi/tgi-2b-it-h100-80gb.yaml", "a3", {
        ("Deployment", "tgi-gemma-deployment"): ("tgi-gemma-deployment", {
            **NAMESPACED, **QUEUED, **POD_QUEUED, **SOURCE_LABEL, **_hardened("inference-server"),
            "spec.template.metadata.labels.ai.gke.io/model": "the model label is the model id's last part "
                                                             "(gemma-2b-it; the sample writes gemma-2b by hand)",
            f"{L4}.image": "the sample's Deep Learning Container image has no tag; the spec pins upstream TGI",
            f"{L4}.ports[http]": NAMED_PORT,
            "spec.template.spec.nodeSelector.cloud.google.com/compute-class": "the Accelerator compute class is "
                                                                              "Autopilot's; this profile is Standard",
        }),
        ("Service", "llm-service"): ("llm-service", {**NAMESPACED, "spec.ports": NAMED_PORT}),
    }, {}),
    (R + "llm-serving-tpus-jetstream/pytorch/jetstream-pytorch-gemma-7b-it-2x4.yaml", "v5e", {
        ("Deployment", "jetstream-pytorch-server"): ("jetstream-pytorch-server", {
            **NAMESPACED, **QUEUED, **POD_QUEUED,
            **_hardened("inference-server"), **_hardened("jetstream-http"),
            "spec.template.metadata.labels.ai.gke.io/": "the model and server labels of GKE's GPU serving samples",
            f"{TPU}.name": "the engine's container is named inference-server on every engine",
            f"{TPU}.ports[0]": NAMED_PORT,
            f"{TPU}.ports[jetstream]": NAMED_PORT,
            f"{TPU}.resources": "explicit CPU and memory: a TPU pod takes a whole VM, and Kueue's quota accounts "
                                "for them",
            "spec.template.spec.containers[jetstream-http].ports": NAMED_PORT,
            "spec.template.spec.tolerations": "GKE's TPU node taint, tolerated on every TPU pod",
            "spec.template.spec.volumes[huggingface-credentials].secret.secretName":
                "the profile's Hugging Face token Secret (hfTokenSecret) instead of a fixed name",
        }),
        ("Service", "jetstream-svc"): ("jetstream-svc", {
            **NAMESPACED, "spec.ports": NAMED_PORT,
            "spec.type": "ClusterIP written out (the API server's default)"}),
    }, {"jetstream-pytorch-server": "inference-server"}),
    (R + "llm-serving-gemma/vllm/vllm-2b-it-a100-80gb.yaml", "a100", {
        ("Deployment", "vllm-gemma-deployment"): ("vllm-gemma-a100", {
            **NAMESPACED, **QUEUED, **POD_QUEUED, **SOURCE_LABEL, **_hardened("inference-server"),
            "metadata.name": "workload names are unique per namespace: the L4 sample's Deployment has this name",
            "spec.template.metadata.labels.ai.gke.io/model": "the model label is the model id's last part "
                                                             "(gemma-2b-it; the sample writes gemma-2b by hand)",
            f"{L4}.args[2]": "the catalog's vLLM launch always sets host and port (as the L4 sample does)",
            f"{L4}.args[3]": "see args[2]",
            f"{L4}.ports[http]": NAMED_PORT,
            f"{L4}.readinessProbe": "route traffic only to a server that listens (the catalog's vLLM probe)",
        }),
        ("Service", "llm-service"): ("llm-service", {**NAMESPACED, "spec.ports": NAMED_PORT}),
    }, {}),
    (R + "vllm-tpu/vllm-llama3-70b.yaml", "v6e", {
        ("Deployment", "vllm-tpu"): ("vllm-tpu", {
            **NAMESPACED, **QUEUED, **POD_QUEUED, **NO_REPLICAS, **_hardened("inference-server"),
            "spec.template.metadata.labels.ai.gke.io/": "the model and server labels of GKE's GPU serving samples",
            f"{TPU}.name": "the container is named inference-server on every engine (GKE's GPU samples' name)",
            f"{TPU}.image": "the sample runs vllm/vllm-tpu:latest; the spec pins a tag (the dynamic-slicing "
                            "codelab's)",
            f"{TPU}.args": "the catalog's vLLM launch (model from MODEL_ID, tensor parallel over the slice's 8 chips, "
                           "host and port) first, then the sample's other flags as engineArgs",
            f"{TPU}.env[MODEL_ID]": "the model id goes in MODEL_ID, as GKE's GPU vLLM samples",
            f"{TPU}.ports[0]": NAMED_PORT,
            f"{TPU}.ports[http]": NAMED_PORT,
            f"{TPU}.resources": "explicit CPU and memory: a TPU pod takes a whole VM, and Kueue's quota accounts "
                                "for them; requests written beside the limits",
            "spec.template.spec.serviceAccountName": "the sample's KSA_NAME placeholder (bucket access through "
                                                     "Workload Identity) is not set: the bucket here is the spec's",
            "spec.template.spec.tolerations": "GKE's TPU node taint, tolerated on every TPU pod (GKE adds it on "
                                              "Autopilot)",
            "spec.template.spec.volumes[gcs-fuse-csi-ephemeral].csi.readOnly":
                "the spec's volume writes readOnly explicitly (false, the default)",
            "spec.template.spec.volumes[gcs-fuse-csi-ephemeral].csi.volumeAttributes.bucketName":
                "a bucket name instead of the GSBUCKET placeholder",
        }),
        ("Service", "vllm-service"): ("vllm-service", {
            **NAMESPACED, "spec.type": "ClusterIP: clients come through the Service or the inference gateway, "
                                       "not a public load balancer"}),
    }, {"vllm-tpu": "inference-server"}),
    (R + "vllm-tpu/vllm-hpa.yaml", "v6e", {
        ("HorizontalPodAutoscaler", "vllm-hpa"): ("vllm-tpu", {**NAMESPACED, "metadata.name": BY_WORKLOAD}),
    }, {}),
    (R + "vllm-tpu/vllm_pod_monitor.yaml", "v6e", {
        ("PodMonitoring", "vllm-pod-monitoring"): ("vllm-tpu", {**NAMESPACED, "metadata.name": BY_WORKLOAD}),
    }, {}),
]


@pytest.fixture(scope="module")
def overlays() -> dict[str, list[dict]]:
    out = Path(tempfile.mkdtemp(prefix="serving-golden-"))
    writer.write_tree(tree.build(specmod.load(FIXTURE)), out, paths.OUTPUT_DIRS)
    return {p: helpers.kustomize(out / "overlays" / p) for p in ("l4", "a3", "v6e", "v5e", "a100")}


def _rename_containers(obj: dict, names: dict[str, str]) -> tuple[dict, set[str]]:
    """The sample with its containers renamed to ours, so the fields compare one by one,
    and the renamed containers' name paths (differences the list must explain)."""
    obj, renamed = copy.deepcopy(obj), set()
    for c in obj.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
        if c["name"] in names:
            c["name"] = names[c["name"]]
            renamed.add(f"spec.template.spec.containers[{c['name']}].name")
    return obj, renamed


def _params():
    for f, profile, objects, renames in CASES:
        for ref in helpers.load_reference(f):
            key = (ref["kind"], ref["metadata"]["name"])
            yield pytest.param(ref, profile, *objects[key], renames, id=f"{f.rsplit('/', 1)[-1]}:{key[0]}/{key[1]}")


@pytest.mark.parametrize("ref,profile,name,intended,renames", list(_params()))
def test_matches_sample_except_intended(ref, profile, name, intended, renames, overlays):
    (ours,) = [o for o in overlays[profile] if o["kind"] == ref["kind"] and o["metadata"]["name"] == name]
    sample, renamed = _rename_containers(ref, renames)
    diffs = golden.differing_paths(sample, ours) | renamed
    listed = {**ARGO, **intended}
    unexplained = sorted(p for p in diffs if not any(p.startswith(prefix) for prefix in listed))
    assert not unexplained, f"{ref['kind']}/{name}: differences without a reason: {unexplained}"
    stale = sorted(prefix for prefix in listed if not any(p.startswith(prefix) for p in diffs))
    assert not stale, f"{ref['kind']}/{name}: listed differences that no longer occur: {stale}"


def test_every_sample_object_is_compared():
    for f, _, objects, _ in CASES:
        assert sorted(objects) == sorted((o["kind"], o["metadata"]["name"]) for o in helpers.load_reference(f)), f
