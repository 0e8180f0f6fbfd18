"""The API-server (AS*) and webhook (WH*) rules, one test per upstream function they
follow, named after it. The expected messages are copied from the upstream source at
the pinned releases (kubernetes pkg/apis/*/validation and apimachinery's validation
helpers; JobSet v0.11.1, LWS v0.8.0, Kueue v0.17.4 and Managed Prometheus v0.17.2),
never computed by the code under test."""
from __future__ import annotations

import tempfile
from pathlib import Path

from tests.test_validate_corpus import run

POD = """apiVersion: v1
kind: Pod
metadata: {{name: p, namespace: team}}
spec:
  restartPolicy: Never
{extra}  containers:
{containers}"""
C = """  - name: {name}
    image: registry.example/app:1.0.0
{more}    resources:
      requests: {{cpu: "1", memory: 1Gi{req}}}
{lim}"""


def ctr(name="app", more="", req="", lim=""):
    return C.format(name=name, more=more, req=req, lim=lim)


def findings(text: str, rule: str) -> list[tuple[str, str]]:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "in.yaml"
        path.write_text(text)
        report = run(path, ["--disable", "KQ001"])
    return [(f.path, f.message) for f in report.findings if f.rule == rule]


# ------------------------------------------------------------ core/validation


def test_validateContainers():
    got = findings(POD.format(extra="", containers=ctr("app") + ctr("app")), "AS001")
    assert got == [("spec.containers[1].name", 'Duplicate value: "app"')]


def test_validateContainerPorts():
    ports = "    ports:\n    - {containerPort: 70000, name: http}\n    - {containerPort: 9090, name: http}\n"
    got = findings(POD.format(extra="", containers=ctr(more=ports)), "AS002")
    assert got == [("spec.containers[0].ports[0].containerPort",
                    "Invalid value: 70000: must be between 1 and 65535, inclusive"),
                   ("spec.containers[0].ports[1].name", 'Duplicate value: "http"')]


def test_ValidateResourceRequirements():
    no_limit = ctr(req=", google.com/tpu: 4")
    unequal = ctr("b", req=", nvidia.com/gpu: 2", lim="      limits: {nvidia.com/gpu: 1}\n")
    over = ctr("c", lim="      limits: {cpu: 500m}\n")
    got = findings(POD.format(extra="", containers=no_limit + unequal + over), "AS003")
    assert sorted(got) == sorted([
        ('spec.containers[0].resources.limits["google.com/tpu"]',
         "Required value: Limit must be set for non overcommitable resources"),
        ('spec.containers[1].resources.requests["nvidia.com/gpu"]',
         'Invalid value: "2": must be equal to nvidia.com/gpu limit of 1'),
        ("spec.containers[2].resources.requests.cpu", 'Invalid value: "1": must be less than or equal to cpu limit of 500m'),
    ])


def test_ValidateVolumeMounts():
    mounts = "    volumeMounts:\n    - {name: cache, mountPath: /data}\n    - {name: data, mountPath: /data}\n"
    volumes = "  volumes:\n  - {name: data, emptyDir: {}}\n  - {name: data, emptyDir: {}}\n"
    got = findings(POD.format(extra=volumes, containers=ctr(more=mounts)), "AS004")
    assert sorted(got) == sorted([
        ("spec.volumes[1].name", 'Duplicate value: "data"'),
        ("spec.containers[0].volumeMounts[0].name", 'Not found: "cache"'),
        ("spec.containers[0].volumeMounts[1].mountPath", 'Invalid value: "/data": must be unique'),
    ])


def test_validateProbe_validateHandler_validateLivenessProbe():
    probes = ("    livenessProbe: {tcpSocket: {port: 0}, successThreshold: 2}\n"
              "    lifecycle: {preStop: {httpGet: {path: /drain, port: 70000}}}\n")
    got = findings(POD.format(extra="", containers=ctr(more=probes)), "AS006")
    assert sorted(got) == sorted([
        ("spec.containers[0].livenessProbe.tcpSocket.port", "Invalid value: 0: must be between 1 and 65535, inclusive"),
        ("spec.containers[0].livenessProbe.successThreshold", "Invalid value: 2: must be 1"),
        ("spec.containers[0].lifecycle.preStop.httpGet.port",
         "Invalid value: 70000: must be between 1 and 65535, inclusive"),
    ])


def test_int32_fields_are_decoded_as_int32():
    got = findings(POD.format(extra="", containers=ctr(more="    ports:\n    - {containerPort: 4294967376}\n")), "AS005")
    # kubectl's BadRequest: 'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number
    # ... into Go struct field <Go type>.<json path> of type int32' (the Go type's name left out).
    assert got == [("spec.containers[0].ports[0].containerPort",
                    'Pod in version "v1" cannot be handled as a Pod'
                    ": json: cannot unmarshal number 4294967376 into "
                    "Go struct field spec.containers.ports.containerPort of type int32")]


SERVICE = """apiVersion: v1
kind: Service
metadata: {{name: web, namespace: team}}
spec:
  type: {type}
  ports:
{ports}"""


def test_validateServicePort():
    ports = "  - {port: 80}\n  - {name: b, port: 0, targetPort: 70000}\n  - {name: b, port: 81, nodePort: 30001}\n"
    got = findings(SERVICE.format(type="ClusterIP", ports=ports), "AS010")
    assert sorted(got) == sorted([
        ("spec.ports[0].name", "Required value"),
        ("spec.ports[1].port", "Invalid value: 0: must be between 1 and 65535, inclusive"),
        ("spec.ports[1].targetPort", "Invalid value: 70000: must be between 1 and 65535, inclusive"),
        ("spec.ports[2].name", 'Duplicate value: "b"'),
        ("spec.ports[2].nodePort", "Forbidden: may not be used when `type` is 'ClusterIP'"),
    ])


JOB = """apiVersion: batch/v1
kind: Job
metadata: {{name: j, namespace: team}}
spec:
{spec}  template:
    spec:
      restartPolicy: {policy}
      containers:
      - name: app
        image: registry.example/app:1.0.0
        resources: {{requests: {{cpu: "1", memory: 1Gi}}}}
"""


def test_validateJobSpec():
    got = findings(JOB.format(spec="  completionMode: Indexed\n  parallelism: 200000\n  backoffLimit: -1\n",
                              policy="Always"), "AS011")
    assert sorted(got) == sorted([
        ("spec.backoffLimit", "Invalid value: -1: must be greater than or equal to 0"),
        ("spec.completions", "Required value: when completion mode is Indexed"),
        ("spec.parallelism", "Invalid value: 200000: must be less than or equal to 100000 when completion mode is Indexed"),
        # v1.31 validateJobSpec: Always (and unset, which defaults to Always) is "Required".
        ("spec.template.spec.restartPolicy", 'Required value: valid values: "OnFailure", "Never"'),
    ])


def test_ValidatePodTemplateSpecForReplicaSet():
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: team}
spec:
  replicas: -1
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      restartPolicy: Never
      containers:
      - {name: app, image: "registry.example/app:1.0.0", resources: {requests: {cpu: "1", memory: 1Gi}}}
"""
    assert sorted(findings(text, "AS012")) == sorted([
        ("spec.replicas", "Invalid value: -1: must be greater than or equal to 0"),
        ("spec.template.spec.restartPolicy", 'Unsupported value: "Never": supported values: "Always"'),
    ])


def test_ValidateRollingUpdateDeployment_and_progressDeadlineSeconds():
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: team}
spec:
  minReadySeconds: 600
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: "0%"}}
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      containers:
      - {name: app, image: "registry.example/app:1.0.0", resources: {requests: {cpu: "1", memory: 1Gi}}}
"""
    assert sorted(findings(text, "AS012")) == sorted([
        ("spec.progressDeadlineSeconds", "Invalid value: 600: must be greater than minReadySeconds"),
        ("spec.strategy.rollingUpdate.maxUnavailable", 'Invalid value: "0%": may not be 0 when `maxSurge` is 0'),
    ])


def test_ValidatePriorityClass():
    text = """apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: urgent}
value: 1000000001
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: system-urgent}
value: 10
"""
    assert findings(text, "AS013") == [
        ("value", "Forbidden: maximum allowed value of a user defined priority is 1000000000"),
        ("metadata.name", "Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
                          "error: system-urgent is not a known system priority class"),
    ]


def test_validateHorizontalPodAutoscalerSpec():
    text = """apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: h, namespace: team}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: d}
  minReplicas: 0
  maxReplicas: 0
"""
    assert sorted(findings(text, "AS014")) == sorted([
        ("spec.minReplicas", "Invalid value: 0: must be greater than or equal to 1"),
        ("spec.maxReplicas", "Invalid value: 0: must be greater than 0"),
    ])
    text = text.replace("minReplicas: 0", "minReplicas: 5").replace("maxReplicas: 0", "maxReplicas: 2")
    assert findings(text, "AS014") == [("spec.maxReplicas", "Invalid value: 2: must be greater than or equal to "
                                                            "`minReplicas`")]


def test_v2beta1_HPA_metrics_are_not_read_as_v2():
    """autoscaling/v2beta1 spells targets targetAverageUtilization, ...; AS330/AS331 read v2 and v2beta2 only."""
    text = """apiVersion: autoscaling/{v}
kind: HorizontalPodAutoscaler
metadata: {{name: h, namespace: team}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: d}}
  minReplicas: 1
  maxReplicas: 4
  metrics:
  - type: Resource
    resource: {{name: cpu, targetAverageUtilization: 60}}
"""
    assert findings(text.format(v="v2beta1"), "AS330") == []
    assert findings(text.format(v="v2beta2"), "AS330") != []


def test_ValidateConfigMap_and_ValidateSecret():
    text = """apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: team}
data: {"a b": x, k: y}
binaryData: {k: eQ==}
---
apiVersion: v1
kind: Secret
metadata: {name: s, namespace: team}
type: kubernetes.io/tls
stringData: {tls.crt: x}
"""
    key_message = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  "
                   "or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")
    assert sorted(findings(text, "AS015")) == sorted([
        ('data["a b"]', f'Invalid value: "a b": {key_message}'),
        ("binaryData", 'Invalid value: "k": duplicate of key present in data'),
        ('data["tls.key"]', "Required value"),
    ])


def test_ValidatePolicyRule():
    text = """apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: r, namespace: team}
rules:
- {resources: [pods]}
- {verbs: [get], nonResourceURLs: [/metrics]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: b}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}
subjects: [{kind: User, name: u, apiGroup: rbac.authorization.k8s.io}]
"""
    assert sorted(findings(text, "AS016")) == sorted([
        ("rules[0].verbs", "Required value: verbs must contain at least one value"),
        ("rules[0].apiGroups", "Required value: resource rules must supply at least one api group"),
        ("rules[1].nonResourceURLs", 'Invalid value: ["/metrics"]: namespaced rules cannot apply to non-resource URLs'),
        ("roleRef.kind", 'Unsupported value: "Role": supported values: "ClusterRole"'),
    ])


# ------------------------------------------------------------ CEL (apiextensions-apiserver)


def test_validateExpressions_evaluation_error_is_an_invalid_field_error():
    text = """apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: tas}
spec: {topologyName: default}
"""
    # validation.go: fmt.Sprintf("%v evaluating rule: %v", err, ruleErrorString(rule)); the rule's message
    # is the Kueue v0.17.4 CRD's.
    assert findings(text, "CE002") == [
        ("spec", "no such key: nodeLabels evaluating rule: at least one nodeLabel is required when topology is set")]


# ------------------------------------------------------------ webhooks


def _jobset(name: str, body: str) -> str:
    return f"""apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {{name: {name}, namespace: team}}
spec:
{body}"""


RJ = """  - name: {name}
    replicas: {replicas}
{more}    template:
      spec:
        template:
          spec:
            containers:
            - {{name: app, image: "registry.example/app:1.0.0", resources: {{requests: {{cpu: "1", memory: 1Gi}}}}}}
"""


def test_jobSetWebhook_ValidateCreate():
    name = "a" * 55
    body = ("  successPolicy: {operator: All, targetReplicatedJobs: [driver]}\n  replicatedJobs:\n"
            + RJ.format(name="workers", replicas=20, more="    dependsOn: [{name: x, status: Ready}]\n"))
    got = findings(_jobset(name, body), "WH001")
    assert sorted(got) == sorted([
        ("spec.replicatedJobs[0].name", f'Invalid value: "{name}-workers-19": JobSet name is too long, job names '
                                        f'generated for this JobSet will exceed 63 characters'),
        ("spec.replicatedJobs[0].dependsOn", "DependsOn can't be set for the first ReplicatedJob"),
        ("spec.successPolicy.targetReplicatedJobs",
         "invalid replicatedJob name 'driver' does not appear in .spec.ReplicatedJobs"),
    ])


def test_validateFailurePolicy():
    body = ("  failurePolicy:\n    maxRestarts: 1\n    rules:\n"
            "    - {name: r, action: FailJobSet, targetReplicatedJobs: [driver], onJobFailureReasons: [OOMKilled]}\n"
            "    - {name: r, action: FailJobSet}\n"
            "  replicatedJobs:\n" + RJ.format(name="workers", replicas=1, more=""))
    assert sorted(findings(_jobset("js", body), "WH002")) == sorted([
        ("spec.failurePolicy.rules[0].targetReplicatedJobs",
         "invalid replicatedJob name 'driver' in failure policy does not appear in .spec.ReplicatedJobs"),
        ("spec.failurePolicy.rules[0].onJobFailureReasons",
         "invalid job failure reason 'OOMKilled' in failure policy is not a recognized job failure reason"),
        ("spec.failurePolicy.rules[1].name", "rule names are not unique, rules with indices [0 1] all have the same "
                                             "name 'r'"),
    ])


def test_LeaderWorkerSetWebhook_generalValidate():
    text = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: 1-model, namespace: team}
spec:
  leaderWorkerTemplate:
    size: 5
    subGroupPolicy: {subGroupSize: 3}
    workerTemplate:
      spec:
        containers:
        - {name: app, image: "registry.example/app:1.0.0", resources: {requests: {cpu: "1", memory: 1Gi}}}
"""
    dns1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
               "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
               "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
    assert findings(text, "WH003") == [
        ("metadata.name", f'Invalid value: "1-model": {dns1035}'),
        ("spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize",
         "Invalid value: 3: size or size - 1 must be divisible by subGroupSize"),
    ]


def test_jobframework_ValidateQueueName_and_validateCreateForMaxExecTime():
    text = JOB.format(spec="  parallelism: 4\n", policy="Never").replace(
        "metadata: {name: j, namespace: team}",
        "metadata:\n  name: j\n  namespace: team\n  labels: {kueue.x-k8s.io/queue-name: Team_A, "
        "kueue.x-k8s.io/max-exec-time-seconds: \"0\"}\n  annotations: {kueue.x-k8s.io/job-min-parallelism: \"4\"}")
    subdomain = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                 "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                 r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
    assert sorted(findings(text, "WH004")) == sorted([
        ('metadata.labels["kueue.x-k8s.io/queue-name"]', f'Invalid value: "Team_A": {subdomain}'),
        ('metadata.labels["kueue.x-k8s.io/max-exec-time-seconds"]', "Invalid value: 0: should be greater than 0"),
        ('metadata.annotations["kueue.x-k8s.io/job-min-parallelism"]', "Invalid value: 4: should be between 0 and 3"),
    ])


def test_PodMonitoring_scrapeConfigs_validateDistinctJobNames():
    text = """apiVersion: monitoring.googleapis.com/v1
kind: PodMonitoring
metadata: {name: vllm, namespace: team}
spec:
  selector: {matchLabels: {app: vllm}}
  endpoints:
  - {port: 8000, interval: 15s}
  - {port: 8000, path: /other, interval: 15s}
"""
    assert findings(text, "WH005") == [(
        "spec.endpoints[1].port",
        "duplicated job name PodMonitoring/team/vllm/8000 for endpoints with index 0 and 1;consider creating a separate "
        "custom resource (PodMonitoring, etc.) for endpoints that share the same resource name, namespace and port "
        "name")]
