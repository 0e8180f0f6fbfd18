"""Golden comparison of the generated T5 objects with the TorchServe
tutorial's manifests (../shared/reference/.../t5-model-serving/kubernetes),
object by object and field by field.

Both sides are flattened to {field path: value}; every field that differs
must be listed below with both values and the reason. Lists of named items
(containers, ports, env, volumes) are keyed by name, so order does not
matter but every entry is compared. Nothing is ignored wholesale: the Argo CD
annotations are checked to be exactly what generator/builders/gitops.py stamps."""
from __future__ import annotations

import copy
from functools import cache

import pytest

from generator.builders import gitops
from generator.builders.workloads import t5_autoscaling, t5_clients
from generator.kernel import paths
from tests import helpers

REF = "kubernetes-engine-samples/ai-ml/t5-model-serving/kubernetes"
SPEC = helpers.fixture_spec()
RAW = helpers.fixture_raw()
W = next(w for w in RAW["workloads"] if w["kind"] == "t5-inference")
NS = W["namespace"]
ABSENT = "<absent>"
LOCUSTFILE = (paths.ROOT / "images" / "t5-loadgen" / "locustfile.py").read_text()
CONFIGMAP = t5_clients.content_name("loadgenerator-files", {"locustfile.py": LOCUSTFILE})

# (reference file, kind, name) -> name of the generated object (same kind, namespace NS).
PAIRS = {
    ("serving-gpu.yaml", "Deployment", "t5-inference"): "t5-inference",
    ("serving-gpu.yaml", "Service", "t5-inference"): "t5-inference",
    ("hpa.yaml", "HorizontalPodAutoscaler", "t5-inference"): "t5-inference",
    ("pod-monitoring.yaml", "PodMonitoring", "torchserve"): "t5-inference",
    ("application.yaml", "Deployment", "fastdash"): "fastdash",
    ("application.yaml", "Service", "fastdash"): "fastdash",
    ("loadgenerator.yaml", "ConfigMap", "loadgenerator-files"): CONFIGMAP,
    ("loadgenerator.yaml", "Deployment", "loadgenerator"): "loadgenerator",
    ("loadgenerator.yaml", "Service", "loadgenerator"): "loadgenerator",
}
# Reference objects with no generated counterpart, and why.
DROPPED = {
    ("loadgenerator.yaml", "ConfigMap", "loadgenerator-env"):
        "its settings are plain env on the load generator container (checked below), so a change rolls the pod",
}

NAMESPACED = "the platform runs T5 in the `llm` namespace, beside the LocalQueue it is admitted through"
QUEUE = "queued through Kueue's LocalQueue so each replica the HPA adds is admitted against the GPU quota"
APP = "`app: <workload>` added to the selector so two T5 workloads in one namespace never select each other's pods"
HARDEN = "hardened: no privilege escalation, all capabilities dropped, RuntimeDefault seccomp"
READ_ONLY = "the project's image runs with a read-only root filesystem; emptyDirs where TorchServe writes (its Dockerfile)"
STARTUP = ("a startup probe (/ping, up to 5 min) gates readiness and liveness instead of fixed initial delays, "
           "so new replicas serve as soon as the model is loaded")
C = "spec.template.spec.containers"


def expected_differences(profile) -> dict:
    registry = profile.values.registry
    t5_image = f"{registry}/{RAW['images'][W['image']]['name']}:{RAW['images'][W['image']]['tag']}"
    fastdash = f"{registry}/{RAW['images']['fastdash']['name']}:{RAW['images']['fastdash']['tag']}"
    locust = f"{RAW['images']['locust']['repository']}:{RAW['images']['locust']['tag']}"
    env = reference(("loadgenerator.yaml", "ConfigMap", "loadgenerator-env"))["data"]
    diffs: dict[tuple[str, str, str], dict] = {
        ("serving-gpu.yaml", "Deployment", "t5-inference"): {
            "metadata.namespace": (ABSENT, NS, NAMESPACED),
            "metadata.labels.app": (ABSENT, "t5-inference", APP),
            "metadata.labels.kueue.x-k8s.io/queue-name": (ABSENT, "lq", QUEUE),
            "spec.replicas": (1, ABSENT, "the HPA owns the replica count; a value in Git makes Argo CD and the HPA fight"),
            "spec.selector.matchLabels.app": (ABSENT, "t5-inference", APP),
            "spec.template.metadata.labels.app": (ABSENT, "t5-inference", APP),
            "spec.template.metadata.labels.kueue.x-k8s.io/queue-name": (ABSENT, "lq", QUEUE),
            "spec.template.spec.priorityClassName": (ABSENT, "high-priority-preempting",
                                                     "priority tier `high`: a scale-up may preempt preemptible training"),
            **{f"{C}[inference].args[{i}]": (a, ABSENT, ("the image's CMD starts TorchServe with its config and "
                                                       "--disable-token-auth/--ncs; these args would drop them"))
               for i, a in enumerate(["torchserve", "--start", "--foreground"])},
            f"{C}[inference].image": ("us-central1-docker.pkg.dev/PROJECT_ID/models/t5-small:1.0-gpu", t5_image,
                                      "image from the profile's registry (images/t5-torchserve), no PROJECT_ID placeholder"),
            f"{C}[inference].readinessProbe.initialDelaySeconds": (120, ABSENT, STARTUP),
            f"{C}[inference].livenessProbe.initialDelaySeconds": (150, ABSENT, STARTUP),
            f"{C}[inference].startupProbe.httpGet.path": (ABSENT, "/ping", STARTUP),
            f"{C}[inference].startupProbe.httpGet.port": (ABSENT, "http", STARTUP),
            f"{C}[inference].startupProbe.periodSeconds": (ABSENT, 5, STARTUP),
            f"{C}[inference].startupProbe.failureThreshold": (ABSENT, 60, STARTUP),
            f"{C}[inference].securityContext.allowPrivilegeEscalation": (ABSENT, False, HARDEN),
            f"{C}[inference].securityContext.capabilities.drop[0]": (ABSENT, "ALL", HARDEN),
            f"{C}[inference].securityContext.readOnlyRootFilesystem": (ABSENT, True, READ_ONLY),
            f"{C}[inference].volumeMounts[writable-tmp].mountPath": (ABSENT, "/tmp", READ_ONLY),
            f"{C}[inference].volumeMounts[writable-home-model-server-tmp].mountPath":
                (ABSENT, "/home/model-server/tmp", READ_ONLY),
            f"{C}[inference].volumeMounts[writable-home-model-server-logs].mountPath":
                (ABSENT, "/home/model-server/logs", READ_ONLY),
            "spec.template.spec.volumes[writable-tmp].emptyDir": (ABSENT, {}, READ_ONLY),
            "spec.template.spec.volumes[writable-home-model-server-tmp].emptyDir": (ABSENT, {}, READ_ONLY),
            "spec.template.spec.volumes[writable-home-model-server-logs].emptyDir": (ABSENT, {}, READ_ONLY),
            "spec.template.spec.securityContext.runAsNonRoot":
                (ABSENT, True, "the image runs as uid 1000; the kubelet refuses root"),
            "spec.template.spec.securityContext.seccompProfile.type": (ABSENT, "RuntimeDefault", HARDEN),
        },
        ("serving-gpu.yaml", "Service", "t5-inference"): {
            "metadata.namespace": (ABSENT, NS, NAMESPACED),
            "metadata.labels.app": (ABSENT, "t5-inference", APP),
            "spec.selector.app": (ABSENT, "t5-inference", APP),
        },
        ("hpa.yaml", "HorizontalPodAutoscaler", "t5-inference"): {
            "metadata.namespace": (ABSENT, NS, NAMESPACED),
        },
        ("pod-monitoring.yaml", "PodMonitoring", "torchserve"): {
            "metadata.name": ("torchserve", "t5-inference", "named after the workload, one per T5 workload"),
            "metadata.namespace": (ABSENT, NS, NAMESPACED),
            "spec.selector.matchLabels.app": (ABSENT, "t5-inference", "selects exactly the Deployment's pods: " + APP),
            "spec.selector.matchLabels.machine": (ABSENT, "gpu", "selects exactly the Deployment's pods"),
            "spec.selector.matchLabels.version": (ABSENT, "v1.0", "selects exactly the Deployment's pods"),
        },
        ("application.yaml", "Deployment", "fastdash"): {
            "metadata.namespace": (ABSENT, NS, NAMESPACED),
            f"{C}[main].image": ("us-central1-docker.pkg.dev/PROJECT_ID/models/fastdash:latest", fastdash,
                                 "image from the profile's registry with a pinned tag, never latest"),
            f"{C}[main].env[MODEL_MANAGEMENT].value": (
                "http://t5-inference:8081/predictions/models/t5-small", "http://t5-inference:8081/models/t5-small",
                "TorchServe's management API describes a model at /models/<name>; the tutorial's URL is a 404"),
            f"{C}[main].securityContext.allowPrivilegeEscalation": (ABSENT, False, HARDEN),
            f"{C}[main].securityContext.capabilities.drop[0]": (ABSENT, "ALL", HARDEN),
            "spec.template.spec.securityContext.seccompProfile.type": (ABSENT, "RuntimeDefault", HARDEN),
        },
        ("application.yaml", "Service", "fastdash"): {
            "metadata.namespace": (ABSENT, NS, NAMESPACED),
        },
        ("loadgenerator.yaml", "ConfigMap", "loadgenerator-files"): {
            "metadata.name": ("loadgenerator-files", CONFIGMAP,
                              "named by content hash: an edited locustfile gets a new name and rolls the Deployment"),
            "metadata.namespace": (ABSENT, NS, NAMESPACED),
            "metadata.labels.app": (ABSENT, "loadgenerator", "labelled with its Deployment's app"),
            "data.locustfile.py": (reference(("loadgenerator.yaml", "ConfigMap", "loadgenerator-files"))["data"]["locustfile.py"],
                                   LOCUSTFILE, ("the project's own images/t5-loadgen/locustfile.py (tested against "
                                               "the handler's input format), not an inline copy")),
        },
        ("loadgenerator.yaml", "Deployment", "loadgenerator"): {
            "metadata.namespace": (ABSENT, NS, NAMESPACED),
            f"{C}[loadgenerator].image": ("locustio/locust", locust, "pinned Locust release (same as the test pin)"),
            f"{C}[loadgenerator].command[2]": (ABSENT, "--locustfile", "the locustfile is mounted at /mnt/locust"),
            f"{C}[loadgenerator].command[3]": (ABSENT, "/mnt/locust/locustfile.py", "the locustfile is mounted at /mnt/locust"),
            f"{C}[loadgenerator].volumeMounts[locustfile].mountPath": (
                "/home/locust", "/mnt/locust", "a ConfigMap mounted on the image's home directory would hide it"),
            f"{C}[loadgenerator].volumeMounts[locustfile].readOnly": (ABSENT, True, "ConfigMap mounts are read-only; say so"),
            "spec.template.spec.volumes[locustfile].configMap.name": ("loadgenerator-files", CONFIGMAP,
                                                                      "the content-hashed ConfigMap"),
            f"{C}[loadgenerator].envFrom[0].configMapRef.name": ("loadgenerator-env", ABSENT, DROPPED[
                ("loadgenerator.yaml", "ConfigMap", "loadgenerator-env")]),
            **{f"{C}[loadgenerator].env[{k}].value": (ABSENT, v, "from the dropped loadgenerator-env ConfigMap, same value")
               for k, v in env.items()},
            f"{C}[loadgenerator].ports[0].containerPort": (8080, ABSENT, "the port is named `http`"),
            f"{C}[loadgenerator].ports[http].containerPort": (ABSENT, 8080, "the port is named `http`"),
            f"{C}[loadgenerator].readinessProbe.httpGet.port": (8080, "http", "probe by port name"),
            f"{C}[loadgenerator].securityContext.allowPrivilegeEscalation": (ABSENT, False, HARDEN),
            f"{C}[loadgenerator].securityContext.capabilities.drop[0]": (ABSENT, "ALL", HARDEN),
            "spec.template.spec.securityContext.seccompProfile.type": (ABSENT, "RuntimeDefault", HARDEN),
            # The image's own user (locustio/locust's Dockerfile: useradd locust, USER locust), by
            # number so that the kubelet can check runAsNonRoot.
            **{f"spec.template.spec.securityContext.{k}": (ABSENT, v, "runs as the image's user, uid 1000, non-root")
               for k, v in (("runAsUser", 1000), ("runAsGroup", 1000), ("fsGroup", 1000), ("runAsNonRoot", True))},
        },
        ("loadgenerator.yaml", "Service", "loadgenerator"): {
            "metadata.namespace": (ABSENT, NS, NAMESPACED),
            "metadata.labels.app": (ABSENT, "loadgenerator", "labelled like its pods"),
            "spec.ports[http].targetPort": (8080, "http", "target port by name"),
        },
    }
    if not profile.autopilot:
        # GKE Standard: CPU may burst (no CFS throttling); Autopilot, the
        # tutorial's platform, sets limits equal to requests, as the tutorial does.
        cpu = "GKE Standard profile: no CPU limit (core.container_resources), memory/storage/GPU limits stay"
        for key, container in ((("serving-gpu.yaml", "Deployment", "t5-inference"), "inference"),
                               (("application.yaml", "Deployment", "fastdash"), "main"),
                               (("loadgenerator.yaml", "Deployment", "loadgenerator"), "loadgenerator")):
            ref = reference(key)
            (c,) = [x for x in ref["spec"]["template"]["spec"]["containers"] if x["name"] == container]
            diffs[key][f"{C}[{container}].resources.limits.cpu"] = (c["resources"]["limits"]["cpu"], ABSENT, cpu)
    return diffs


def flatten(node, prefix: str = "", out: dict | None = None) -> dict:
    out = {} if out is None else out
    if isinstance(node, dict):
        if not node and prefix:
            out[prefix] = {}
        for k, v in node.items():
            flatten(v, f"{prefix}.{k}" if prefix else k, out)
    elif isinstance(node, list):
        if not node:
            out[prefix] = []
        named = all(isinstance(i, dict) and "name" in i for i in node)
        keys = [i["name"] for i in node] if named else []
        if named and len(set(keys)) == len(keys):
            for item in node:
                flatten({k: v for k, v in item.items() if k != "name"}, f"{prefix}[{item['name']}]", out)
        else:
            for i, item in enumerate(node):
                flatten(item, f"{prefix}[{i}]", out)
    else:
        out[prefix] = node
    return out


def reference(key) -> dict:
    f, kind, name = key
    (obj,) = [o for o in helpers.load_reference(f"{REF}/{f}") if o and o["kind"] == kind and o["metadata"]["name"] == name]
    return obj


@cache
def _built(profile: str) -> tuple:
    return tuple(helpers.kustomize(helpers.generated() / "overlays" / profile))


def overlay(profile: str) -> list[dict]:
    return copy.deepcopy(list(_built(profile)))


def generated(objs, kind, name) -> dict:
    (obj,) = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name and o["metadata"].get("namespace") == NS]
    return obj


def without_argocd_annotations(obj: dict) -> dict:
    """The object minus its Argo CD annotations, after checking they are exactly
    the ones generator/builders/gitops.py stamps (and no other annotation exists)."""
    obj = copy.deepcopy(obj)
    notes = obj["metadata"].pop("annotations", {})
    expected = gitops.annotate([copy.deepcopy(obj)])[0]["metadata"]["annotations"]
    assert notes == expected, f"{obj['kind']}/{obj['metadata']['name']}: annotations {notes}, gitops stamps {expected}"
    return obj


def field_differences(ref: dict, gen: dict) -> dict:
    a, b = flatten(ref), flatten(gen)
    return {p: (a.get(p, ABSENT), b.get(p, ABSENT)) for p in sorted(set(a) | set(b)) if a.get(p, ABSENT) != b.get(p, ABSENT)}


PROFILES = sorted(p for p in W["profiles"])


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("key", sorted(PAIRS), ids=lambda k: f"{k[1]}/{k[2]}")
def test_generated_object_matches_the_tutorial_except_listed_differences(profile, key):
    objs = overlay(profile)
    gen = without_argocd_annotations(generated(objs, key[1], PAIRS[key]))
    found = field_differences(reference(key), gen)
    listed = expected_differences(SPEC.profiles[profile])[key]
    expected = {p: (r, g) for p, (r, g, _why) in listed.items()}
    unexpected = {p: v for p, v in found.items() if expected.get(p) != v}
    missing = {p: v for p, v in expected.items() if found.get(p) != v}
    assert not unexpected and not missing, (
        f"{key[1]}/{key[2]} on {profile}:\n  differences not listed: {unexpected}\n  listed but not found: {missing}")


def test_every_listed_difference_has_a_reason():
    for profile in PROFILES:
        for key, fields in expected_differences(SPEC.profiles[profile]).items():
            assert key in PAIRS
            for path, (_r, _g, why) in fields.items():
                assert isinstance(why, str) and len(why) > 10, f"{key} {path}: no reason given"


def test_dropped_env_configmap_lives_on_as_container_env():
    ref = reference(("loadgenerator.yaml", "ConfigMap", "loadgenerator-env"))
    for profile in PROFILES:
        objs = overlay(profile)
        dep = generated(objs, "Deployment", "loadgenerator")
        (c,) = dep["spec"]["template"]["spec"]["containers"]
        env = {e["name"]: e["value"] for e in c["env"]}
        assert env == ref["data"], "load generator env differs from the tutorial's loadgenerator-env"
        assert not [o for o in objs if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "loadgenerator-env"]


def test_the_t5_workload_emits_exactly_the_compared_objects(raw):
    """Nothing the T5 workload generates escapes the golden comparison."""
    with_t5 = helpers.render(raw)
    raw["workloads"] = [w for w in raw["workloads"] if w["kind"] != "t5-inference"]
    without = helpers.render(raw)
    for profile in PROFILES:
        prefix = f"overlays/{profile}/"
        added = sorted(p[len(prefix):] for p in set(with_t5) - set(without)
                       if p.startswith(prefix) and not p.endswith("kustomization.yaml"))
        compared = sorted(f"{kind.lower()}_{NS}_{name}.yaml" for (_f, kind, _n), name in PAIRS.items())
        assert added == compared


def test_hpa_metric_and_target_are_the_tutorials():
    ref = reference(("hpa.yaml", "HorizontalPodAutoscaler", "t5-inference"))
    assert ref["spec"]["metrics"][0]["pods"]["metric"]["name"] == t5_autoscaling.HPA_METRIC
    assert ref["spec"]["metrics"][0]["pods"]["target"]["averageValue"] == str(W["autoscaling"]["queueLatencyTarget"])
