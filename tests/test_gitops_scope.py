"""Least privilege in Argo CD: each AppProject allows exactly what its Applications
sync, no wider. The overlays' side is checked against what kustomize builds from
the synthesized overlays (every example and the fixture spec); the controllers'
side against the pinned CRD files of each release; and only the bootstrap project
may create AppProjects."""
from __future__ import annotations

import copy
import fnmatch
from pathlib import Path

import pytest

from generator.builders import gitops
from generator.kernel import versions, yamlio
from generator.kernel.errors import SpecError
from tests import helpers

EXAMPLES = sorted((helpers.ROOT / "examples").glob("*.yaml"))
SOURCES = ["fixture"] + [p.stem for p in EXAMPLES]


def _raw(source: str) -> dict:
    if source == "fixture":
        return helpers.fixture_raw()
    raw = helpers.example_raw(helpers.ROOT / "examples" / f"{source}.yaml")
    # Examples without a gitops block get one: every example's projects are checked.
    raw.setdefault("gitops", {"repoURL": "https://git.example.com/platform.git", "targetRevision": "main",
                              "clusters": {p: {"name": p} for p in raw["profiles"]}})
    return raw


def _objects(directory: Path) -> list[dict]:
    return [o for f in sorted(directory.glob("*.yaml")) if f.name != "kustomization.yaml"
            for o in yamlio.load_all(f.read_text())]


def _dest_key(d: dict) -> tuple:
    return (d.get("server"), d.get("name"))


def _permits_cluster(project: dict, group: str, kind: str, name: str) -> bool:
    """Argo CD's IsGroupKindNamePermitted for a cluster-scoped object (name globs as filepath.Match)."""
    return any(e["group"] == group and e["kind"] == kind and fnmatch.fnmatchcase(name, e.get("name", "*"))
               for e in project.get("clusterResourceWhitelist", []))


@pytest.fixture(scope="module", params=SOURCES)
def synthesized(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(request.param)
    helpers.synth_into(out, _raw(request.param))
    projects = {p["metadata"]["name"]: p for d in ("argocd", "argocd/apps") for p in _objects(out / d)
                if p["kind"] == "AppProject"}
    apps = [a for d in ("argocd", "argocd/apps") for a in _objects(out / d) if a["kind"] == "Application"]
    return out, projects, apps


def test_the_overlays_project_allows_exactly_what_the_overlays_sync(synthesized):
    out, projects, apps = synthesized
    overlay_apps = [a for a in apps if a["spec"]["source"]["path"].startswith("overlays/")]
    (name,) = {a["spec"]["project"] for a in overlay_apps}
    spec = projects[name]["spec"]
    cluster, namespaced, destinations = set(), set(), set()
    for app in overlay_apps:
        for o in helpers.kustomize(out / app["spec"]["source"]["path"]):
            group, ns = gitops.api_group(o["apiVersion"]), o["metadata"].get("namespace")
            if ns:
                namespaced.add((group, o["kind"]))
                destinations.add((*_dest_key(app["spec"]["destination"]), ns))
            else:
                cluster.add((group, o["kind"], o["metadata"]["name"]))
    assert {(e["group"], e["kind"], e["name"]) for e in spec["clusterResourceWhitelist"]} == cluster
    assert {(e["group"], e["kind"]) for e in spec["namespaceResourceWhitelist"]} == namespaced
    assert {(*_dest_key(d), d["namespace"]) for d in spec["destinations"]} == destinations
    assert not any("*" in d["namespace"] for d in spec["destinations"])


def test_the_controllers_project_allows_the_pinned_installs_and_no_more(synthesized):
    out, projects, apps = synthesized
    install_apps = [a for a in apps if a["spec"]["source"]["path"].startswith("controllers/")]
    (name,) = {a["spec"]["project"] for a in install_apps}
    spec = projects[name]["spec"]
    # No kind, name or namespace wildcard of its own: CRDs, RBAC and webhooks by (glob) name.
    assert all(e["kind"] != "*" and e["group"] != "*" and e.get("name") for e in spec["clusterResourceWhitelist"])
    assert all(e["kind"] != "*" for e in spec["namespaceResourceWhitelist"])
    assert not any(e["group"] == "argoproj.io" for e in spec["namespaceResourceWhitelist"])
    used = set()
    for app in install_apps:
        path = Path(app["spec"]["source"]["path"])
        ctl = path.name
        if ctl == "gpudirect":
            # No release: GKE's NCCL installers (kube-system) and multi-networking objects, all generated.
            dest = app["spec"]["destination"]
            assert dest["namespace"] == "kube-system"
            for o in _objects(out / path):
                group = gitops.api_group(o["apiVersion"])
                if o["metadata"].get("namespace"):
                    assert o["metadata"]["namespace"] == dest["namespace"]
                    assert (group, o["kind"]) in {(e["group"], e["kind"]) for e in spec["namespaceResourceWhitelist"]}
                else:
                    assert _permits_cluster(spec, group, o["kind"], o["metadata"]["name"]), o["metadata"]["name"]
            used.add((*_dest_key(dest), ctl))
            continue
        kust = yamlio.load_strict((out / path / "kustomization.yaml").read_text())
        (url,) = [r for r in kust["resources"] if r.startswith("https://")]
        tag = url.split("/download/")[1].split("/")[0]
        # Every CRD the pinned release installs (the upstream CRD files of that tag) is allowed by name.
        crd_dir = helpers.CRD_ROOT / {"lws": "lws", "jobset": "jobset", "kueue": "kueue"}[ctl] / tag
        crds = [d for f in sorted(crd_dir.glob("*.yaml")) for d in yamlio.load_all(f.read_text())
                if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"]
        assert crds, crd_dir
        for crd in crds:
            assert _permits_cluster(spec, "apiextensions.k8s.io", "CustomResourceDefinition", crd["metadata"]["name"])
        # The release's namespace (the Application's destination) and the objects synth adds
        # to the install (Kueue's manager configuration) are allowed.
        dest = app["spec"]["destination"]
        assert dest["namespace"] == f"{ctl}-system"
        assert _permits_cluster(spec, "", "Namespace", f"{ctl}-system")
        for o in _objects(out / path):
            assert o["metadata"]["namespace"] == dest["namespace"]
            assert (gitops.api_group(o["apiVersion"]), o["kind"]) in \
                {(e["group"], e["kind"]) for e in spec["namespaceResourceWhitelist"]}
        used.add((*_dest_key(dest), ctl))
        # Destinations: this cluster gets the namespaces of the installs it runs, nothing else.
    by_cluster: dict[tuple, set[str]] = {}
    for server, cname, ctl in used:
        by_cluster.setdefault((server, cname), set()).update(versions.install_scope(ctl).namespaces)
    assert {(*_dest_key(d), d["namespace"]) for d in spec["destinations"]} == \
        {(*k, ns) for k, names in by_cluster.items() for ns in names}


def test_only_the_bootstrap_project_manages_projects_and_applications(synthesized):
    _, projects, apps = synthesized
    root = [a for a in apps if a["spec"]["source"]["path"] == "argocd/apps"]
    (bootstrap,) = {a["spec"]["project"] for a in root}
    for name, p in projects.items():
        kinds = {(e["group"], e["kind"]) for e in p["spec"].get("namespaceResourceWhitelist", [])}
        kinds |= {(e["group"], e["kind"]) for e in p["spec"].get("clusterResourceWhitelist", [])}
        if name == bootstrap:
            assert kinds == {("argoproj.io", "Application"), ("argoproj.io", "AppProject")}
            assert [d["namespace"] for d in p["spec"]["destinations"]] == [root[0]["spec"]["destination"]["namespace"]]
        else:
            assert not any(g in ("argoproj.io", "*") for g, _ in kinds), name


def test_every_application_destination_is_permitted_by_its_project(synthesized):
    """Argo CD refuses an Application whose destination (server or name, and namespace) no
    destination of its project matches (AppProject.IsDestinationPermitted)."""
    _, projects, apps = synthesized
    for app in apps:
        dest = app["spec"]["destination"]
        allowed = projects[app["spec"]["project"]]["spec"]["destinations"]
        assert any(_dest_key(d) == _dest_key(dest) and fnmatch.fnmatchcase(dest.get("namespace", ""), d["namespace"])
                   for d in allowed), app["metadata"]["name"]
        assert app["spec"]["source"]["repoURL"] in projects[app["spec"]["project"]]["spec"]["sourceRepos"]


def test_a_project_is_widened_only_on_purpose(tmp_path):
    raw = helpers.fixture_raw()
    raw["gitops"]["allow"] = {
        "overlays": {"namespaces": ["team-x"],
                     "clusterResources": [{"group": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                           "name": "team-x-*"}],
                     "namespacedKinds": [{"group": "", "kind": "Secret"}]},
        "controllers": {"clusterResources": [{"group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition"}]},
    }
    tree = helpers.render(raw)
    projects = {o["metadata"]["name"]: o["spec"] for p, t in tree.items() if p.startswith("argocd/apps/appproject_")
                for o in yamlio.load_all(t)}
    overlays = projects[raw["gitops"]["project"] if raw["gitops"].get("project") else raw["name"]]
    assert {d["namespace"] for d in overlays["destinations"]} >= {"team-x"}
    assert {"group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "team-x-*"} in \
        overlays["clusterResourceWhitelist"]
    assert {"group": "", "kind": "Secret"} in overlays["namespaceResourceWhitelist"]
    controllers = next(v for k, v in projects.items() if k.endswith("-controllers"))
    crds = [e for e in controllers["clusterResourceWhitelist"] if e["kind"] == "CustomResourceDefinition"]
    assert crds == [{"group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition"}]   # the wide entry covers the named
    bad = copy.deepcopy(raw)
    bad["gitops"]["allow"]["overlays"]["namespaces"] = ["Team X"]
    with pytest.raises(SpecError, match="allow.overlays.namespaces"):
        helpers.render(bad)
