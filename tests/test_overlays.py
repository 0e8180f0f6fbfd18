"""Every overlay builds with the real kustomize and every object validates
strictly against the pinned schemas (core + upstream CRDs)."""
import pytest

from generator.builders import controllers
from generator.kernel import yamlio
from generator.kernel.apiscope import is_cluster_scoped
from tests import helpers

SPEC = helpers.fixture_spec()
PROFILES = sorted(SPEC.profiles)


@pytest.mark.parametrize("profile", PROFILES)
def test_overlay_builds_and_validates(profile):
    objs = helpers.kustomize(helpers.generated() / "overlays" / profile)
    assert objs, f"overlay {profile} is empty"
    helpers.assert_valid(helpers.schemas_for(SPEC, profile), objs, f"overlays/{profile}")


@pytest.mark.parametrize("profile", PROFILES)
def test_overlay_hygiene(profile):
    for o in helpers.kustomize(helpers.generated() / "overlays" / profile):
        name = f"{o['kind']}/{o['metadata']['name']}"
        if is_cluster_scoped(o["apiVersion"], o["kind"]):
            assert "namespace" not in o["metadata"], f"{name} is cluster-scoped but namespaced"
        if o["kind"] in ("Job", "JobSet"):
            assert "suspend" not in o["spec"], f"{name}: Kueue sets spec.suspend, Git must not"
        for image in _images(o):
            assert ":" in image.rsplit("/", 1)[-1] and not image.endswith(":latest"), f"{name}: unpinned image {image}"


def test_base_validates():
    objs = helpers.kustomize(helpers.generated() / "base")
    kinds = sorted((o["kind"], o["metadata"]["name"]) for o in objs)
    assert ("Namespace", "llm") in kinds
    helpers.assert_valid(helpers.schemas_for(SPEC, PROFILES[0]), objs, "base")


@pytest.mark.parametrize("profile", PROFILES)
def test_kueue_config_patch(profile):
    """The manager config keeps upstream's structure and metrics address for the pinned release."""
    release = SPEC.profiles[profile].kueue
    (cm,) = yamlio.load_all((helpers.generated() / "controllers" / profile / "kueue" / "kueue-manager-config.yaml").read_text())
    helpers.assert_valid(helpers.schemas_for(SPEC, profile), [cm], "controllers")
    cfg = yamlio.load_strict(cm["data"][controllers.KUEUE_CONFIG_KEY])
    upstream_file = helpers.CRD_ROOT / "kueue" / release.version / "config" / "controller_manager_config.yaml"
    upstream = yamlio.load_strict(upstream_file.read_text())
    assert cfg["apiVersion"] == upstream["apiVersion"]
    assert cfg["metrics"]["bindAddress"] == upstream["metrics"]["bindAddress"]
    assert cfg["webhook"] == upstream["webhook"] and cfg["leaderElection"] == upstream["leaderElection"]
    for fw in cfg["integrations"]["frameworks"]:
        assert fw in upstream["integrations"]["frameworks"] or fw in ("pod", "deployment", "statefulset",
                                                                      "leaderworkerset.x-k8s.io/leaderworkerset")
    excluded = cfg["managedJobsNamespaceSelector"]["matchExpressions"][0]
    assert excluded["operator"] == "NotIn" and {"kube-system", "kueue-system"} <= set(excluded["values"])
    kust = yamlio.load_strict((helpers.generated() / "controllers" / profile / "kueue" / "kustomization.yaml").read_text())
    assert kust["resources"] == [release.manifests] and release.version in release.manifests


@pytest.mark.parametrize("profile", PROFILES)
def test_integrations_are_what_workloads_need(profile):
    (cm,) = yamlio.load_all((helpers.generated() / "controllers" / profile / "kueue" / "kueue-manager-config.yaml").read_text())
    frameworks = set(yamlio.load_strict(cm["data"][controllers.KUEUE_CONFIG_KEY])["integrations"]["frameworks"])
    kinds = {o["kind"] for o in helpers.kustomize(helpers.generated() / "overlays" / profile)}
    # Kueue's own default (apis/config defaults.go: batch/job) is always listed, so a team's Job queues.
    expected = {"batch/job"}
    installed = helpers.generated() / "controllers" / profile
    if (installed / "jobset").is_dir():   # a team may submit its own JobSet
        expected.add("jobset.x-k8s.io/jobset")
    if (installed / "lws").is_dir():
        expected |= {"pod", "leaderworkerset.x-k8s.io/leaderworkerset"}
    if "Deployment" in kinds:
        expected |= {"pod", "deployment"}
    if "JobSet" in kinds:
        expected.add("jobset.x-k8s.io/jobset")
    if "LeaderWorkerSet" in kinds:
        expected |= {"pod", "leaderworkerset.x-k8s.io/leaderworkerset"}
    assert frameworks == expected


def _images(o):
    spec = o.get("spec", {})
    templates = [spec.get("template", {})]
    templates += [rj["template"]["spec"]["template"] for rj in spec.get("replicatedJobs", [])]
    lwt = spec.get("leaderWorkerTemplate", {})
    templates += [lwt.get("leaderTemplate", {}), lwt.get("workerTemplate", {})]
    for t in templates:
        pod = t.get("spec", {}) if t else {}
        for c in pod.get("containers", []) + pod.get("initContainers", []):
            yield c["image"]
