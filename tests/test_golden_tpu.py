"""Golden comparison with the TPU dynamic-slicing codelab (devrel-demos
ai-ml/dynamic-slicing) and the llm-d gateway recipe, object by object and
field by field. Every difference is listed below with its reason; a listed
difference that no longer occurs fails too, so the list stays true.

The codelab fills `${NAMESPACE}` (envsubst) and `MODEL_WEIGHT_BUCKET` (sed) in
by hand; we fill them with the spec's values before comparing, since filling
them from the spec is what the generator does. Nothing else is rewritten."""
import shlex

import pytest

from generator.builders.workloads import tpu_pd_serving as pd
from generator.kernel import yamlio
from tests import golden, helpers

SUB, SUPER = "tpu7x-subslice", "tpu7x-superslice"
CODELAB = "devrel-demos/ai-ml/dynamic-slicing/"
RAW = helpers.fixture_raw()
PLACEHOLDERS = {"${NAMESPACE}": "llm", "MODEL_WEIGHT_BUCKET": RAW["profiles"][SUB]["values"]["modelBucket"]}

ARGO = {"metadata.annotations.argocd.argoproj.io/": "Argo CD sync waves and options (docs/gitops.md); "
                                                    "the codelab applies by hand"}
KUEUE_API = {"apiVersion": "the pinned Kueue (v0.17.4, as the codelab installs) stores v1beta2; "
                           "the codelab's file still says the deprecated v1beta1"}
SLICE_NAME = ("the slice controller names Slices <namespace>-<kind>-<name>-<hash>-<podset>-<index>, capped at 49 characters; "
              "the codelab's name is longer")
JOB_POD = "spec.replicatedJobs[job-jax].template.spec.template.spec.containers"
JOBSET = {
    **ARGO,
    "metadata.name": SLICE_NAME,
    "spec.replicatedJobs[job-jax].template.spec.completionMode":
        "Indexed written out (JobSet's default): GKE derives TPU_WORKER_ID from the completion index",
    f"{JOB_POD}[simple-container]": "python:3.12 that pip-installs jax[tpu] at every pod start is replaced by ...",
    f"{JOB_POD}[slice-check]": "... the project's jax-slice-check image (JAX baked in), told the device counts the shape implies",
    "spec.replicatedJobs[job-jax].template.spec.template.spec.securityContext":
        "hardened: runs as the image's non-root user 10001, seccomp RuntimeDefault",
    "spec.replicatedJobs[job-jax].template.spec.template.spec.volumes[writable-":
        "the image runs with a read-only root filesystem; emptyDirs for $HOME and /tmp, where JAX and libtpu write",
    "spec.failurePolicy": "the platform's failure policy (JobSet's host-maintenance-event-model example): up to 3 "
                          "restarts, a node disruption restarts without counting (tests/test_training_failures.py)",
    "spec.replicatedJobs[job-jax].template.spec.podFailurePolicy": "... the DisruptionTarget rule that tells the JobSet "
                                                                   "a pod was lost to its node, not to the program",
}


def _secret(role: str) -> dict:
    c = f"spec.leaderWorkerTemplate.{role}Template.spec.containers[vllm-{role}]"
    return {
        f"{c}.env[HF_TOKEN].valueFrom.secretKeyRef": "the platform's Hugging Face Secret "
                                                     "(profile values.hfTokenSecret, key hf_api_token), by name only",
        f"{c}.imagePullPolicy": "IfNotPresent is the default for a tagged image",
        f"{c}.resources.limits.cpu": "GKE Standard profiles let CPU burst (no CFS throttling); "
                                     "memory and TPU keep limit = request",
    }


HARDENED = ("hardened: seccomp RuntimeDefault, no privilege escalation, all capabilities dropped; the upstream "
            "vLLM TPU image still runs as root, as the spec says (security.runAsRoot)")
LWS = {
    **ARGO, **_secret("leader"), **_secret("worker"),
    "spec.leaderWorkerTemplate.leaderTemplate.spec.containers[vllm-leader].securityContext": HARDENED,
    "spec.leaderWorkerTemplate.leaderTemplate.spec.securityContext": HARDENED,
    "spec.leaderWorkerTemplate.workerTemplate.spec.containers[vllm-worker].securityContext": HARDENED,
    "spec.leaderWorkerTemplate.workerTemplate.spec.securityContext": HARDENED,
    "metadata.name": SLICE_NAME,
    "spec.leaderWorkerTemplate.leaderTemplate.spec.containers[vllm-leader].command[2]":
        "same script; `vllm serve` options in another order (--tensor-parallel-size, derived from the shape, "
        "after the spec's engineArgs): compared option by option in test_vllm_serve_options",
}

# (file, kind, codelab name) -> (profile, our name, {path prefix: reason})
CASES = {
    ("kueue-resources.yaml.template", "Topology", "slice-topology"): (SUB, "slice-topology", ARGO),
    ("kueue-resources.yaml.template", "ResourceFlavor", "slice-rf"): (SUB, "slice-rf", {
        **ARGO,
        "spec.tolerations": "Kueue TAS cannot see the TPU toleration GKE injects into pods; on the flavor it can",
    }),
    ("kueue-resources.yaml.template", "AdmissionCheck", "ac"): (SUB, "ac", ARGO),
    ("kueue-resources.yaml.template", "ClusterQueue", "cq"): (SUB, "cq", {
        **ARGO,
        "spec.resourceGroups[0].flavors[slice-rf].resources[": "quotas from the reservation (2 cubes = 128 chips, 32 VMs "
                                                               "x 224 vCPU / 960 GiB) instead of 999999 "
                                                               "(kept for tpu.unlimitedQuota)",
    }),
    ("kueue-resources.yaml.template", "LocalQueue", "lq"): (SUB, "lq", ARGO),
    ("workload-priority-class.yaml", "WorkloadPriorityClass", "low-priority-1000"):
        (SUB, "low-priority-1000", {**ARGO, **KUEUE_API}),
    ("workload-priority-class.yaml", "WorkloadPriorityClass", "medium-priority-2000"):
        (SUB, "medium-priority-2000", {**ARGO, **KUEUE_API}),
    ("workload-priority-class.yaml", "WorkloadPriorityClass", "high-priority-3000"):
        (SUB, "high-priority-3000", {**ARGO, **KUEUE_API}),
    ("kueue-jobset-simple-subslicing.yaml", "JobSet", "kueue-jobset-simple-subslicing"): (SUB, "jax-subslice", JOBSET),
    ("kueue-jobset-simple-superslicing.yaml", "JobSet", "kueue-jobset-simple-superslicing"): (SUPER, "jax-superslice", JOBSET),
    ("kueue-lws-prefill-model-streamer.yaml", "LeaderWorkerSet", "kueue-vllm-prefill-model-streamer"): (SUB, "qwen-prefill", LWS),
    ("kueue-lws-decode-model-streamer.yaml", "LeaderWorkerSet", "kueue-vllm-decode-model-streamer"): (SUB, "qwen-decode", {
        **LWS,
        "spec.leaderWorkerTemplate.leaderTemplate.spec.initContainers[routing-proxy].securityContext.capabilities": HARDENED,
        "spec.leaderWorkerTemplate.leaderTemplate.spec.initContainers[routing-proxy].imagePullPolicy":
            "the sidecar's tag is pinned; `Always` re-pulls it on every restart",
        "spec.leaderWorkerTemplate.leaderTemplate.spec.initContainers[routing-proxy].resources":
            "explicit CPU and memory requests (spec sidecar.resources), so Kueue and the scheduler count the sidecar",
    }),
}


def _codelab(file: str) -> list[dict]:
    text = (helpers.REFERENCE / CODELAB / file).read_text()
    for placeholder, value in PLACEHOLDERS.items():
        text = text.replace(placeholder, value)
    return yamlio.load_all(text)


@pytest.fixture(scope="module")
def overlays():
    return {p: helpers.kustomize(helpers.generated() / "overlays" / p) for p in (SUB, SUPER)}


def _ours(overlays, profile, kind, name):
    (o,) = [o for o in overlays[profile] if o["kind"] == kind and o["metadata"]["name"] == name]
    return o


def _compare(ref: dict, ours: dict, intended: dict, what: str):
    diffs = golden.differing_paths(ref, ours)
    unexplained = sorted(p for p in diffs if not any(p.startswith(prefix) for prefix in intended))
    assert not unexplained, f"{what}: differences without a reason: {unexplained}"
    stale = sorted(prefix for prefix in intended if not any(p.startswith(prefix) for p in diffs))
    assert not stale, f"{what}: listed differences that no longer occur: {stale}"


@pytest.mark.parametrize("case", sorted(CASES), ids=lambda c: f"{c[1]}/{c[2]}")
def test_matches_codelab_except_intended(case, overlays):
    file, kind, name = case
    profile, our_name, intended = CASES[case]
    (ref,) = [o for o in _codelab(file) if o["kind"] == kind and o["metadata"]["name"] == name]
    _compare(ref, _ours(overlays, profile, kind, our_name), intended, f"{kind}/{name}")


def test_superslice_topology(overlays):
    """The superslice profile keeps the codelab's levels above and below the
    sub-slice partitions it does not use."""
    (ref,) = [o for o in _codelab("kueue-resources.yaml.template") if o["kind"] == "Topology"]
    levels = [lv["nodeLabel"] for lv in ref["spec"]["levels"]]
    ours = [lv["nodeLabel"] for lv in _ours(overlays, SUPER, "Topology", "slice-topology")["spec"]["levels"]]
    assert ours == [levels[0], levels[1], levels[-1]]
    assert [lv for lv in levels if lv not in ours] == [
        f"cloud.google.com/gke-tpu-partition-{s}-id" for s in ("2x4x4", "2x2x4", "2x2x2", "2x2x1")]


def test_unlimited_quota_is_the_codelab_queue():
    raw = helpers.fixture_raw()
    raw["profiles"][SUB]["tpu"]["unlimitedQuota"] = True
    tree = helpers.render(raw)
    (ours,) = yamlio.load_all(tree[f"overlays/{SUB}/clusterqueue_cq.yaml"])
    (ref,) = [o for o in _codelab("kueue-resources.yaml.template") if o["kind"] == "ClusterQueue"]
    _compare(ref, ours, ARGO, "ClusterQueue/cq (unlimitedQuota)")


def _options(script_line: str) -> list[tuple[str, ...]]:
    """`vllm serve --a=1 --b x --c` -> sorted [("--a=1",), ("--b", "x"), ("--c",)]."""
    words = shlex.split(script_line)
    assert words[:2] == ["vllm", "serve"], script_line
    groups: list[list[str]] = []
    for word in words[2:]:
        if word.startswith("--"):
            groups.append([word])
        else:
            groups[-1].append(word)
    return sorted(tuple(g) for g in groups)


@pytest.mark.parametrize("role", pd.ROLES)
def test_vllm_serve_options(role, overlays):
    """Same script as the codelab, line by line; the `vllm serve` line has the
    same options with the same values, in another order."""
    (ref,) = _codelab(f"kueue-lws-{role}-model-streamer.yaml")
    ours = _ours(overlays, SUB, "LeaderWorkerSet", f"qwen-{role}")

    def get(o):
        return o["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]["command"]
    ref_cmd, our_cmd = get(ref), get(ours)
    assert ref_cmd[:2] == our_cmd[:2] == ["sh", "-c"]
    ref_lines, our_lines = ref_cmd[2].splitlines(), our_cmd[2].splitlines()
    assert ref_lines[:-1] == our_lines[:-1] and len(ref_lines) == len(our_lines) == 3
    assert _options(ref_lines[-1]) == _options(our_lines[-1])
    assert ref_lines[-1] != our_lines[-1], "identical now: drop the command[2] entry from LWS"


def test_gateway_matches_the_llm_d_recipe(overlays):
    """llm-d's base Gateway with the gke-l7-rilb overlay's patch applied."""
    (ref,) = helpers.load_reference("zetxqx-llm-d/guides/recipes/gateway/base/gateway.yaml")
    kust_file = helpers.REFERENCE / "yuanwu2017-llm-d/guides/recipes/gateway/gke-l7-rilb/kustomization.yaml"
    kust = yamlio.load_strict(kust_file.read_text())
    (patch,) = [p for p in kust["patches"] if p["target"]["kind"] == "Gateway"]
    (op,) = yamlio.load_strict(patch["patch"])
    assert (op["op"], op["path"]) == ("add", "/spec/gatewayClassName")
    ref["spec"]["gatewayClassName"] = op["value"]
    ours = _ours(overlays, SUB, "Gateway", ref["metadata"]["name"])
    _compare(ref, ours, {
        **ARGO,
        "metadata.namespace": "the recipe relies on `kubectl -n`; generated objects say where they go",
        "spec.listeners[default].allowedRoutes.namespaces.from": "Same, not All: the route lives beside the Gateway, "
                                                                 "and no other namespace should attach to it",
    }, "Gateway")


def test_pool_follows_the_llm_d_router_values(overlays):
    base = yamlio.load_strict((helpers.REFERENCE / "llm-d/guides/recipes/router/base.values.yaml").read_text())
    guide_file = helpers.REFERENCE / "llm-d/guides/pd-disaggregation/router/pd-disaggregation.values.yaml"
    guide = yamlio.load_strict(guide_file.read_text())
    pool = _ours(overlays, SUB, "InferencePool", "qwen")
    assert pool["spec"]["endpointPickerRef"]["failureMode"] == base["router"]["inferencePool"]["failureMode"]
    selector = pool["spec"]["selector"]["matchLabels"]
    # The chart selects on the guide label alone, which also matches LWS workers
    # (they serve no port); ours adds the leader's worker index.
    assert selector == {**guide["router"]["modelServers"]["matchLabels"], "leaderworkerset.sigs.k8s.io/worker-index": "0"}
