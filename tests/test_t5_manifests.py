"""T5 on TorchServe with autoscaling (workload kind t5-inference): the
overlays that carry it build and validate strictly, the pieces point at each
other (HPA -> Deployment, Service/PodMonitoring -> pod labels and named
ports, client/load generator -> the model's URLs), the manifests agree with
the serving image (ports, model, user, metric), the locustfile works against
the handler's input format, and bad spec input is refused with a path."""
from __future__ import annotations

import ast
import copy
import importlib.util
import json
import os
import subprocess
import sys
import threading
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from generator import cli
from generator.builders.workloads import t5, t5_autoscaling, t5_clients
from generator.kernel import kueue_api, paths, yamlio
from generator.kernel.errors import SpecError
from generator.model.kinds import T5Inference
from tests import helpers

SPEC = helpers.fixture_spec()
RAW = helpers.fixture_raw()
T5 = [w for w in RAW["workloads"] if w["kind"] == "t5-inference"]
PROFILES = sorted({p for w in T5 for p in w["profiles"]})
IMAGE_DIR = paths.ROOT / "images" / "t5-torchserve"
LOADGEN_DIR = paths.ROOT / "images" / "t5-loadgen"


def test_the_fixture_spec_runs_t5_on_autopilot_as_the_tutorial():
    assert len(T5) == 1 and PROFILES == ["l4-autopilot"]


@cache
def _built(profile: str) -> tuple:
    return tuple(helpers.kustomize(helpers.generated() / "overlays" / profile))


def overlay(profile: str) -> list[dict]:
    return copy.deepcopy(list(_built(profile)))


def get(objs, kind, name, ns="llm") -> dict:
    found = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name
             and o["metadata"].get("namespace") == ns]
    assert len(found) == 1, f"expected one {kind} {ns}/{name}, found {len(found)}"
    return found[0]


def pod_spec(deployment: dict) -> dict:
    return deployment["spec"]["template"]["spec"]


def container_ports(deployment: dict) -> dict[str, int]:
    return {p["name"]: p["containerPort"] for c in pod_spec(deployment)["containers"] for p in c.get("ports", [])}


def env_of(container: dict) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container.get("env", [])}


def t5_objects(objs, w) -> dict[str, dict]:
    ns, name = w["namespace"], w["name"]
    return {
        "deployment": get(objs, "Deployment", name, ns),
        "service": get(objs, "Service", w.get("serviceName", name), ns),
        "podmonitoring": get(objs, "PodMonitoring", name, ns),
        "hpa": get(objs, "HorizontalPodAutoscaler", name, ns),
        "client": get(objs, "Deployment", w["client"].get("name", "fastdash"), ns),
        "client-service": get(objs, "Service", w["client"].get("name", "fastdash"), ns),
        "loadgen": get(objs, "Deployment", w["loadGenerator"].get("name", "loadgenerator"), ns),
        "loadgen-service": get(objs, "Service", w["loadGenerator"].get("name", "loadgenerator"), ns),
    }


# ---------------------------------------------------------------- validation

@pytest.mark.parametrize("profile", PROFILES)
def test_overlay_with_t5_builds_and_validates_strictly(profile):
    objs = overlay(profile)
    schemas = helpers.schemas_for(SPEC, profile)
    helpers.assert_valid(schemas, objs, f"overlays/{profile}")
    # PodMonitoring is checked against the upstream CRD, not skipped.
    (pm,) = [o for o in objs if o["kind"] == "PodMonitoring"]
    info = schemas.crd_info(pm["apiVersion"], pm["kind"])
    assert info is not None and "prometheus-engine/v0.17.2" in info[0] and info[1], info


@pytest.mark.parametrize("mutate, where", [
    (lambda o: o["spec"]["endpoints"][0].update(intervall="60s"), "PodMonitoring"),
    (lambda o: o["spec"]["endpoints"][0].pop("port"), "PodMonitoring"),
    (lambda o: o["spec"]["metrics"][0]["pods"]["target"].update(averagevalue="1"), "HorizontalPodAutoscaler"),
    (lambda o: o["spec"]["template"]["spec"]["securityContext"].update(runAsNonroot=True), "Deployment"),
])
def test_the_strict_validation_catches_a_broken_t5_object(mutate, where):
    profile = PROFILES[0]
    objs = overlay(profile)
    obj = copy.deepcopy(next(o for o in objs if o["kind"] == where and o["metadata"]["name"] == "t5-inference"))
    mutate(obj)
    assert helpers.schemas_for(SPEC, profile).errors(obj), f"a broken {where} passed validation"


# ---------------------------------------------------------------- wiring

@pytest.mark.parametrize("profile", PROFILES)
def test_hpa_targets_the_deployment_which_has_no_replicas(profile):
    objs = overlay(profile)
    for w in T5:
        o = t5_objects(objs, w)
        ref = o["hpa"]["spec"]["scaleTargetRef"]
        assert (ref["apiVersion"], ref["kind"], ref["name"]) == ("apps/v1", "Deployment", o["deployment"]["metadata"]["name"])
        assert "replicas" not in o["deployment"]["spec"], "the HPA owns replicas; Argo CD would fight it"
        a = w["autoscaling"]
        assert (o["hpa"]["spec"]["minReplicas"], o["hpa"]["spec"]["maxReplicas"]) == (a["minReplicas"], a["maxReplicas"])
        (metric,) = o["hpa"]["spec"]["metrics"]
        assert metric["type"] == "Pods"
        assert metric["pods"]["target"] == {"type": "AverageValue", "averageValue": str(a["queueLatencyTarget"])}
    # Every HPA in the overlay (not only T5's) targets an existing Deployment without replicas.
    for hpa in (x for x in objs if x["kind"] == "HorizontalPodAutoscaler"):
        ref = hpa["spec"]["scaleTargetRef"]
        target = get(objs, ref["kind"], ref["name"], hpa["metadata"]["namespace"])
        assert "replicas" not in target["spec"], f"{ref['name']} is scaled by an HPA and sets replicas"


def _matches(selector: dict, labels: dict) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


@pytest.mark.parametrize("profile", PROFILES)
def test_selectors_match_pod_labels_and_named_ports_exist(profile):
    objs = overlay(profile)
    deployments = [o for o in objs if o["kind"] == "Deployment"]
    for w in T5:
        o = t5_objects(objs, w)
        pairs = [(o["service"], o["deployment"]), (o["client-service"], o["client"]),
                 (o["loadgen-service"], o["loadgen"])]
        for svc, dep in pairs:
            sel = svc["spec"]["selector"]
            selected = [d["metadata"]["name"] for d in deployments
                        if d["metadata"]["namespace"] == svc["metadata"]["namespace"]
                        and _matches(sel, d["spec"]["template"]["metadata"]["labels"])]
            assert selected == [dep["metadata"]["name"]], f"Service {svc['metadata']['name']} selects {selected}"
            named = container_ports(dep)
            for port in svc["spec"]["ports"]:
                assert port["targetPort"] in named, f"{svc['metadata']['name']}: no container port {port['targetPort']}"
                assert port["port"] == named[port["targetPort"]]
            assert _matches(dep["spec"]["selector"]["matchLabels"], dep["spec"]["template"]["metadata"]["labels"])
        pm = o["podmonitoring"]
        pod_labels = o["deployment"]["spec"]["template"]["metadata"]["labels"]
        assert _matches(pm["spec"]["selector"]["matchLabels"], pod_labels)
        assert [d["metadata"]["name"] for d in deployments
                if _matches(pm["spec"]["selector"]["matchLabels"], d["spec"]["template"]["metadata"]["labels"])] \
            == [w["name"]]
        (ep,) = pm["spec"]["endpoints"]
        assert container_ports(o["deployment"])[ep["port"]] == t5.PORTS["metrics"]
        assert (ep["interval"], ep["timeout"], ep["path"]) == \
            (w["monitoring"]["interval"], w["monitoring"]["timeout"], "/metrics")
        # Probes name ports the container has.
        (c,) = pod_spec(o["deployment"])["containers"]
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert c[probe]["httpGet"]["port"] in container_ports(o["deployment"]), probe


@pytest.mark.parametrize("profile", PROFILES)
def test_t5_is_queued_with_a_priority_and_its_helpers_are_not(profile):
    objs = overlay(profile)
    base = helpers.kustomize(helpers.generated() / "base")
    local_queues = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs if o["kind"] == "LocalQueue"}
    priority_classes = {o["metadata"]["name"] for o in base if o["kind"] == "PriorityClass"}
    (cq,) = [o for o in objs if o["kind"] == "ClusterQueue"]
    covered = {r for g in cq["spec"]["resourceGroups"] for r in g["coveredResources"]}
    for w in T5:
        o = t5_objects(objs, w)
        dep = o["deployment"]
        for labels in (dep["metadata"]["labels"], dep["spec"]["template"]["metadata"]["labels"]):
            assert (w["namespace"], labels[kueue_api.QUEUE_LABEL]) in local_queues
        assert pod_spec(dep)["priorityClassName"] in priority_classes
        assert pod_spec(dep)["priorityClassName"] == SPEC.priority_class(w["priority"])
        (c,) = pod_spec(dep)["containers"]
        assert set(c["resources"]["requests"]) <= covered, "a requested resource is not covered: admission would block"
        assert c["resources"]["requests"]["nvidia.com/gpu"] == str(w["gpus"])
        assert pod_spec(dep)["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-l4"}
        for helper in ("client", "loadgen"):
            assert kueue_api.QUEUE_LABEL not in o[helper]["metadata"].get("labels", {})
            assert kueue_api.QUEUE_LABEL not in o[helper]["spec"]["template"]["metadata"]["labels"]
            assert "nodeSelector" not in pod_spec(o[helper]), "helpers stay off the GPU nodes"


@pytest.mark.parametrize("profile", PROFILES)
def test_requests_follow_the_profile_rules(profile):
    autopilot = SPEC.profiles[profile].autopilot
    objs = overlay(profile)
    for w in T5:
        o = t5_objects(objs, w)
        for dep in (o["deployment"], o["client"], o["loadgen"]):
            (c,) = pod_spec(dep)["containers"]
            req, lim = c["resources"]["requests"], c["resources"]["limits"]
            expected = {r: v for r, v in req.items() if autopilot or r != "cpu"}
            assert lim == expected, f"{dep['metadata']['name']}: limits {lim} for requests {req}"


@pytest.mark.parametrize("profile", PROFILES)
def test_t5_pod_runs_hardened_as_the_image_user(profile):
    o = t5_objects(overlay(profile), T5[0])
    sc = pod_spec(o["deployment"])["securityContext"]
    # images/t5-torchserve/Dockerfile: USER 1000:1000.
    assert sc == {"fsGroup": 1000, "runAsUser": 1000, "runAsGroup": 1000, "runAsNonRoot": True,
                  "seccompProfile": {"type": "RuntimeDefault"}}
    (c,) = pod_spec(o["deployment"])["containers"]
    assert c["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                                    "readOnlyRootFilesystem": True}
    # Writable: the Dockerfile's TEMP and logs directories, and /tmp.
    assert {m["mountPath"] for m in c["volumeMounts"]} == {"/tmp", "/home/model-server/tmp", "/home/model-server/logs"}
    for dep in (o["client"], o["loadgen"]):
        (c,) = pod_spec(dep)["containers"]
        assert c["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
        assert pod_spec(dep)["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}


@pytest.mark.parametrize("profile", PROFILES)
def test_client_and_load_generator_use_the_model_urls(profile):
    objs = overlay(profile)
    w = T5[0]
    o = t5_objects(objs, w)
    svc = o["service"]
    port = {p["name"]: p["port"] for p in svc["spec"]["ports"]}
    host = svc["metadata"]["name"]
    name, version = w["model"]["name"], w["model"]["version"]
    (client,) = pod_spec(o["client"])["containers"]
    env = env_of(client)
    assert env["MODEL_PREDICTION"] == f"http://{host}:{port['http']}/predictions/{name}/{version}"
    # TorchServe's management API: GET /models/<name> (the tutorial's
    # /predictions/models/<name> on the management port does not exist).
    assert env["MODEL_MANAGEMENT"] == f"http://{host}:{port['management']}/models/{name}"
    (lg,) = pod_spec(o["loadgen"])["containers"]
    env = env_of(lg)
    assert env["LOCUST_HOST"] == f"http://{host}:{port['http']}"
    assert (env["MODEL_NAME"], env["MODEL_VERSION"]) == (name, version)
    assert env["LOCUST_WEB_PORT"] == str(container_ports(o["loadgen"])["http"])
    # The liveness probe is the same management endpoint the client uses.
    (server,) = pod_spec(o["deployment"])["containers"]
    assert server["livenessProbe"]["httpGet"] == {"path": f"/models/{name}", "port": "management"}


@pytest.mark.parametrize("profile", PROFILES)
def test_images_come_from_the_spec_and_are_pinned(profile):
    text = "".join(p.read_text() for p in sorted((helpers.generated() / "overlays" / profile).glob("*.yaml")))
    assert "PROJECT_ID" not in text
    o = t5_objects(overlay(profile), T5[0])
    registry = SPEC.profiles[profile].values.registry
    images = {k: pod_spec(o[k])["containers"][0]["image"] for k in ("deployment", "client", "loadgen")}
    assert images["deployment"] == f"{registry}/t5-small:1.0-gpu"
    assert images["client"] == f"{registry}/fastdash:{RAW['images']['fastdash']['tag']}"
    assert images["loadgen"] == f"docker.io/locustio/locust:{RAW['images']['locust']['tag']}"
    for image in images.values():
        tag = image.rsplit(":", 1)[1]
        assert tag and tag != "latest"


# ---------------------------------------------------------------- agreement with the image

def test_hpa_metric_is_the_one_the_image_test_asserts_torchserve_exposes():
    """One name in the generator; the image's integration test checks TorchServe serves it."""
    objs = overlay(PROFILES[0])
    hpa = get(objs, "HorizontalPodAutoscaler", T5[0]["name"])
    name = hpa["spec"]["metrics"][0]["pods"]["metric"]["name"]
    assert name == t5_autoscaling.HPA_METRIC
    domain, metric, kind = name.split("|")
    assert (domain, metric, kind) == ("prometheus.googleapis.com", t5_autoscaling.QUEUE_LATENCY_METRIC, "counter")
    tree = ast.parse((paths.ROOT / "tests" / "images" / "test_t5_torchserve.py").read_text())
    (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "test_metrics_expose_queue_latency_for_the_hpa"]
    asserted = {n.test.left.value for n in ast.walk(fn)
                if isinstance(n, ast.Assert) and isinstance(n.test, ast.Compare)
                and isinstance(n.test.ops[0], ast.In) and isinstance(n.test.left, ast.Constant)}
    assert metric in asserted, f"the image test asserts {asserted}, the HPA scales on {metric}"


def _properties(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            k, _, v = line.partition("=")
            out[k.strip()] = v.strip()
    return out


def test_ports_model_and_user_match_the_serving_image():
    props = _properties(IMAGE_DIR / "config.properties")
    listeners = {"http": "inference_address", "management": "management_address", "metrics": "metrics_address"}
    for name, key in listeners.items():
        assert props[key].rsplit(":", 1)[1] == str(t5.PORTS[name]), key
    assert props["metrics_mode"] == "prometheus", "the HPA metric is scraped in Prometheus format"
    dockerfile = (IMAGE_DIR / "Dockerfile").read_text()
    w = T5[0]
    assert f"--model-name {w['model']['name']}" in dockerfile
    assert f"--version {w['model']['version']}" in dockerfile
    uid = T5Inference.image_contract.uid
    assert f"USER {uid}:{uid}" in dockerfile
    assert RAW['images'][w["image"]]["name"] == w["model"]["name"]


# ---------------------------------------------------------------- locustfile

def test_locustfile_configmap_is_the_project_file_and_named_by_content():
    objs = overlay(PROFILES[0])
    o = t5_objects(objs, T5[0])
    (vol,) = pod_spec(o["loadgen"])["volumes"]
    cm = get(objs, "ConfigMap", vol["configMap"]["name"])
    source = (LOADGEN_DIR / "locustfile.py").read_text()
    assert cm["data"] == {"locustfile.py": source}
    assert cm["metadata"]["name"] == t5_clients.content_name("loadgenerator-files", cm["data"])
    changed = t5_clients.content_name("loadgenerator-files", {"locustfile.py": source + "# edit\n"})
    assert changed != cm["metadata"]["name"] and changed.startswith("loadgenerator-files-")
    (c,) = pod_spec(o["loadgen"])["containers"]
    (mount,) = c["volumeMounts"]
    assert mount["name"] == vol["name"] and mount["readOnly"] is True
    assert c["command"] == ["locust", "--autostart", "--locustfile", f"{mount['mountPath']}/locustfile.py"]


def test_locust_image_and_test_pin_are_the_same_release():
    pins = [line for line in (LOADGEN_DIR / "requirements-test.txt").read_text().splitlines() if line.startswith("locust==")]
    assert pins == [f"locust=={RAW['images']['locust']['tag']}"]


def _translation_module():
    spec = importlib.util.spec_from_file_location("t5_translation_for_loadgen", IMAGE_DIR / "t5_translation.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod   # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def _python(code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    # Locust monkey-patches the process with gevent on import: keep it out of pytest's.
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=LOADGEN_DIR, env={**os.environ, **(env or {})})


def test_locustfile_payload_is_the_handler_input_format():
    compile((LOADGEN_DIR / "locustfile.py").read_text(), "locustfile.py", "exec")
    out = _python(
        "import json, locustfile as lf\n"
        "print(json.dumps({'payload': lf.PAYLOAD, 'path': lf.predictions_path(),\n"
        "  'good': lf.translation_error(200, json.dumps([{'text': 'ceci'}])),\n"
        "  'item_error': lf.translation_error(200, json.dumps([{'error': 'x', 'code': 400}])),\n"
        "  'http_error': lf.translation_error(400, 'bad'),\n"
        "  'users': [c.__name__ for c in vars(lf).values()\n"
        "            if isinstance(c, type) and issubclass(c, lf.FastHttpUser) and c is not lf.FastHttpUser]}))",
        env={"MODEL_NAME": "t5-small", "MODEL_VERSION": "1.0"})
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(got["payload"]) == {"text", "from", "to"}
    parsed = _translation_module().parse_request({"body": json.dumps(got["payload"]).encode()})
    assert parsed.results == [None] and len(parsed.pending()) == 1, parsed.results   # valid, nothing rejected
    assert got["path"] == "/predictions/t5-small/1.0"
    assert got["good"] is None and got["item_error"] and got["http_error"].startswith("HTTP 400")
    assert got["users"] == ["T5User"]


class _FakeTorchServe(BaseHTTPRequestHandler):
    """Answers like the T5 handler: parses the body with the image's own
    request parser (t5_translation.parse_request)."""
    parse = None
    requests: list = []
    broken = False

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        parsed = self.parse({"body": body})
        ok = self.path == "/predictions/t5-small/1.0" and parsed.results == [None]
        self.requests.append((self.path, body, ok))
        status = 500 if self.broken else (200 if ok else 400)
        answer = [{"text": "ceci est une phrase de test"}] if ok else parsed.response()
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def _run_locust(tmp_path: Path, broken: bool):
    objs = overlay(PROFILES[0])
    o = t5_objects(objs, T5[0])
    (c,) = pod_spec(o["loadgen"])["containers"]
    (vol,) = pod_spec(o["loadgen"])["volumes"]
    (tmp_path / "locustfile.py").write_text(get(objs, "ConfigMap", vol["configMap"]["name"])["data"]["locustfile.py"])
    handler: type[_FakeTorchServe] = type("Handler", (_FakeTorchServe,),
                                          {"parse": staticmethod(_translation_module().parse_request),
                                           "requests": [], "broken": broken})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env = {**os.environ, **env_of(c), "LOCUST_HOST": f"http://127.0.0.1:{server.server_address[1]}"}
        for key in ("LOCUST_USERS", "LOCUST_SPAWN_RATE", "LOCUST_WEB_PORT"):
            env.pop(key)
        out = subprocess.run(
            [str(Path(sys.executable).parent / "locust"), "--headless", "-f", str(tmp_path / "locustfile.py"),
             "-u", "2", "-r", "2", "--run-time", "3s", "--stop-timeout", "2", "--only-summary"],
            capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env)
    finally:
        server.shutdown()
        server.server_close()
    return out, handler.requests


@pytest.mark.slow  # runs locust for real
def test_locustfile_drives_the_handler_format_end_to_end(tmp_path):
    out, requests = _run_locust(tmp_path, broken=False)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert requests and all(ok for _, _, ok in requests), requests


@pytest.mark.slow  # runs locust for real
def test_locustfile_reports_a_failing_server(tmp_path):
    out, requests = _run_locust(tmp_path, broken=True)
    assert requests, out.stderr[-2000:]
    assert out.returncode != 0, "locust did not count HTTP 500 answers as failures"


# ---------------------------------------------------------------- bad input

def _t5(raw: dict) -> dict:
    return next(w for w in raw["workloads"] if w["kind"] == "t5-inference")


@pytest.mark.parametrize("edit, path, fragment", [
    (lambda w: w["autoscaling"].update(minReplicas=6, maxReplicas=5), "autoscaling.minReplicas", "more than maxReplicas"),
    (lambda w: w["monitoring"].update(timeout="2m"), "monitoring.timeout", "longer than the scrape interval"),
    (lambda w: w["monitoring"].update(interval="1d"), "monitoring.interval", "use a duration such as 30s"),
    (lambda w: w["client"].update(image="nope"), "client.image", "unknown image 'nope'"),
    (lambda w: w["loadGenerator"]["resources"].pop("ephemeral-storage"), "loadGenerator.resources", "ephemeral-storage"),
    (lambda w: w["autoscaling"].update(targetValue=1), "autoscaling.targetValue", "unknown field 'targetValue'"),
    (lambda w: w.pop("monitoring"), "monitoring", "is required but missing"),
    (lambda w: w["model"].update(version="v1"), "model.version", "use a version such as 1.0"),
])
def test_bad_t5_input_is_refused_with_its_path(raw, edit, path, fragment):
    edit(_t5(raw))
    index = raw["workloads"].index(_t5(raw))
    with pytest.raises(SpecError) as err:
        helpers.render(raw)
    where = f"workloads[{index}]" + (f".{path}" if path else "")
    hits = [p for p in err.value.problems if p.path == where and fragment in p.message]
    assert hits, f"no problem at {where} mentioning {fragment!r}: {err.value.render()}"


def test_cli_exits_2_and_writes_nothing_on_bad_t5_input(raw, tmp_path, capsys):
    _t5(raw)["autoscaling"]["minReplicas"] = 9
    spec_file = tmp_path / "bad.yaml"
    spec_file.write_text(yamlio.dump(raw))
    out = tmp_path / "out"
    assert cli.main(["synth", "--spec", str(spec_file), "--out", str(out)]) == 2
    assert not out.exists()
    assert "bad.yaml: workloads['" in helpers.without_positions(capsys.readouterr().err)


def test_synth_is_deterministic(raw):
    first = helpers.render(raw)
    assert first == helpers.render(raw)
    names = [p for p in first if "t5-inference" in p or "loadgenerator" in p or "fastdash" in p]
    assert len(names) == 9 * len(PROFILES), names   # 9 objects on each profile that runs T5
