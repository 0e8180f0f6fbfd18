"""False alarms the validator must not raise on correct upstream-style manifests: TPU
selectors that GKE compute classes or Kueue flavors supply, folders of alternative example
files, and the placeholders of the GKE tutorials; and namespaces for kinds without a pinned
CRD. Each case also has its negative half: the alarm is still raised when it is right."""
from __future__ import annotations

import argparse

from generator.validate import command, validate
from tests import helpers

JOBSET = """apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: train
  namespace: team
  labels: {{kueue.x-k8s.io/queue-name: tpu-queue}}
spec:
  replicatedJobs:
  - name: slice
    replicas: 1
    template:
      spec:
        parallelism: 4
        completions: 4
        template:
          spec:
            restartPolicy: Never
{selector}            containers:
            - name: jax
              image: registry.example/jax:1.0.0
              resources:
                requests: {{cpu: "8", memory: 32Gi, google.com/tpu: "4"}}
                limits: {{google.com/tpu: "4"}}
"""

# A ResourceFlavor whose nodeLabels select the TPU (as kubernetes-engine-samples' TPU queues do).
QUEUE = """apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: v6e}}
spec:
  nodeLabels: {{{labels}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: tpu}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu, memory, google.com/tpu]
    flavors:
    - name: v6e
      resources:
      - {{name: cpu, nominalQuota: 64}}
      - {{name: memory, nominalQuota: 256Gi}}
      - {{name: google.com/tpu, nominalQuota: 16}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: tpu-queue, namespace: team}}
spec: {{clusterQueue: tpu}}
"""


def run(*args: str):
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    opts = command.options(parser.parse_args(["validate", "--crd-dir", str(helpers.CRD_ROOT), *args]))
    opts.spec, opts.spec_explicit = "no-spec.yaml", False
    return validate(opts)


def lines(report, rule: str) -> list[str]:
    return [f.report_line() for f in report.findings if f.rule == rule]


def test_tpu_selector_injected_by_the_queue_flavor(tmp_path):
    job = tmp_path / "job.yaml"
    job.write_text(JOBSET.format(selector=""))
    ctx = tmp_path / "queue.yaml"
    ctx.write_text(QUEUE.format(labels="cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice"))
    assert lines(run("--context", str(ctx), str(job)), "TP003") == []
    # Open world, no --context: a note that the queue may inject it.
    open_world = run(str(job))
    assert [f.severity for f in open_world.findings if f.rule == "TP003"] == ["info"]
    # The flavor selects no TPU: the pods land nowhere with TPUs; still an error.
    ctx.write_text(QUEUE.format(labels="cloud.google.com/gke-nodepool: cpu-pool"))
    assert [f.severity for f in run("--context", str(ctx), str(job)).findings if f.rule == "TP003"] == ["error"]


def test_tpu_selected_by_a_compute_class(tmp_path):
    job = tmp_path / "job.yaml"
    job.write_text(JOBSET.format(selector="            nodeSelector: {cloud.google.com/compute-class: tpu-class}\n"))
    assert lines(run("--closed", "--disable", "KQ", str(job)), "TP003") == []
    job.write_text(JOBSET.format(selector="            nodeSelector: {cloud.google.com/gke-nodepool: x}\n"))
    assert len(lines(run("--closed", "--disable", "KQ", str(job)), "TP003")) == 1


def test_folder_files_are_streams_and_duplicates_need_one_stream(tmp_path):
    """Alternative example files define the same Deployment; a Service in a third file selects it."""
    deploy = (helpers.ROOT / "tests" / "validate_corpus" / "SV001" / "good.yaml").read_text().split("---\n")
    (tmp_path / "a.yaml").write_text(deploy[0])
    (tmp_path / "b.yaml").write_text(deploy[0].replace("ghcr.io/huggingface/text-generation-inference:2.4.1",
                                                       "vllm/vllm-openai:v0.6.0"))
    (tmp_path / "svc.yaml").write_text(deploy[1])
    per_file = run("--closed", str(tmp_path))
    assert per_file.findings == [], [f.report_line() for f in per_file.findings]
    assert [s["name"].rsplit("/", 1)[-1] for s in per_file.sources] == ["a.yaml", "b.yaml", "svc.yaml"]
    one = run("--closed", "--one-stream", str(tmp_path))
    assert [f.rule for f in one.findings] == ["IN003"] and len(one.sources) == 1


def test_tutorial_placeholders_are_notes(tmp_path):
    text = JOBSET.format(selector="            nodeSelector: {cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice, "
                                  "cloud.google.com/gke-tpu-topology: 4x4}\n")
    text = text.replace("name: train", "name: train-NAMESPACE").replace('google.com/tpu: "4"', "google.com/tpu: "
                                                                        "<number_of_chips>")
    f = tmp_path / "tutorial.yaml"
    f.write_text(text)
    report = run("--disable", "KQ001", str(f))
    assert [x.rule for x in report.findings] == ["IN004"], [x.report_line() for x in report.findings]
    assert "<number_of_chips>" in report.findings[0].message and "NAMESPACE" in report.findings[0].message
    # A real value in the same place is checked: 2 chips per pod is no v6e VM.
    f.write_text(text.replace("<number_of_chips>", '"2"').replace("train-NAMESPACE", "train"))
    assert [x.rule for x in run("--disable", "KQ001", str(f)).findings] == ["TP006"]


def test_namespace_applies_to_kinds_without_a_pinned_crd(tmp_path):
    """A TrainJob (Kueue manages it; no pinned CRD) lands in -n's namespace, so its queue resolves."""
    job = tmp_path / "trainjob.yaml"
    job.write_text("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: tj\n"
                   "  labels: {kueue.x-k8s.io/queue-name: tpu-queue}\nspec: {runtimeRef: {name: torch}}\n")
    ctx = tmp_path / "queue.yaml"
    ctx.write_text(QUEUE.format(labels="cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice"))
    report = run("-n", "team", "--context", str(ctx), str(job))
    assert report.errors == 0, [f.report_line() for f in report.findings]
    assert [f.namespace for f in report.findings] == ["team"]   # the SC002 note: not pinned, not checked
    assert report.exit_code() == 0
    report = run("-n", "other", "--context", str(ctx), str(job))
    assert [f.rule for f in report.findings if f.severity == "error"] == ["KQ001"]


def test_folder_file_problems_are_reported_once_per_file(tmp_path):
    """Each file's stream reports its own documents: a non-object and a YAML error, once each."""
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\n---\n- a list\n")
    (tmp_path / "b.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: x}\ndata: [1, 2\n")
    for args in ((), ("--one-stream",)):
        report = run(*args, str(tmp_path))
        assert sorted((f.rule, f.source.rsplit("/", 1)[-1], f.name) for f in report.findings) == [
            ("IN001", "b.yaml", "line 5, column 1"), ("IN002", "a.yaml", "document 2")], args


def test_open_world_selector_typo_beside_its_pods_is_a_warning(tmp_path):
    """Open world: a Service whose own file defines its Deployment but selects none of its pods
    (one label mistyped) is a warning; alone in its file, the pods may be in the cluster: a note."""
    svc_and_deploy = (helpers.ROOT / "tests" / "validate_corpus" / "SV001" / "good.yaml").read_text()
    both = tmp_path / "both.yaml"
    both.write_text(svc_and_deploy.replace("selector: {app: gemma-server}", "selector: {app: gemma-serve}"))
    assert [(f.rule, f.severity) for f in run(str(both)).findings] == [("SV001", "warning")]
    alone = tmp_path / "svc.yaml"
    alone.write_text(svc_and_deploy.split("---\n")[1].replace("{app: gemma-server}", "{app: gemma-serve}"))
    assert [(f.rule, f.severity) for f in run(str(alone)).findings] == [("SV001", "info")]


def _key(f) -> tuple:
    return (f.source, f.rule, f.severity, f.kind, f.namespace, f.name, f.path, f.message)


def test_folder_findings_equal_each_file_checked_with_the_others_as_context(tmp_path):
    """A plain folder checks each file with the other files as context (one index for the
    folder): its findings are those of checking each file alone with --context naming every
    other file. Cross-object cases from the corpus: Services whose selectors match nothing or
    a Deployment in another file, a LocalQueue naming a missing ClusterQueue, an HPA whose
    target is missing; and one file repeating a Deployment another file defines."""
    corpus = helpers.ROOT / "tests" / "validate_corpus"
    n = 0
    for case in ("SV001/good.yaml", "SV001/bad.yaml", "KQ002/bad.yaml", "KQ002/good.yaml", "HP001/bad.yaml",
                 "HP001/good.yaml"):
        for doc in (corpus / case).read_text().split("---\n"):
            (tmp_path / f"{n:02d}.yaml").write_text(doc)
            n += 1
    (tmp_path / "both.yaml").write_text((corpus / "SV001" / "good.yaml").read_text())
    files = sorted(tmp_path.iterdir())
    folder = run("--closed", str(tmp_path))
    alone = [f for path in files
             for f in run(*[a for o in files if o != path for a in ("--context", str(o))], str(path)).findings]
    assert sorted(map(_key, folder.findings)) == sorted(map(_key, alone))
    rules = [f.rule for f in folder.findings]
    assert {"SV001", "KQ002"} <= set(rules) and "HP001" not in rules, [f.report_line() for f in folder.findings]


def test_shell_variables_in_a_command_are_not_placeholders(tmp_path):
    """Issue 36 item 4: `$HOSTNAME` and `${RANK}` in a training script are the shell's, so the pod
    template is not templated and the slice check still runs (a v6e 4x4 slice of 16 chips is 4 pods of
    4: parallelism 2 is wrong, TP006). Negative half: an envsubst placeholder elsewhere in the pod spec
    (the image) still holds the slice finding back as a templated value (IN004)."""
    def jobset(image: str) -> str:
        return JOBSET.format(selector="            nodeSelector:\n"
                                      "              cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice\n"
                                      "              cloud.google.com/gke-tpu-topology: 4x4\n").replace(
            "parallelism: 4\n        completions: 4", "parallelism: 2\n        completions: 2").replace(
            "image: registry.example/jax:1.0.0",
            f"image: {image}\n              command: [bash, -c, 'python train.py --host=$HOSTNAME --rank=${{RANK}}']")
    shell = tmp_path / "shell.yaml"
    shell.write_text(jobset("registry.example/jax:1.0.0"))
    report = run("--disable", "KQ001", str(shell))
    assert len(lines(report, "TP006")) == 1, [f.report_line() for f in report.findings]
    assert lines(report, "IN004") == []
    templated = tmp_path / "templated.yaml"
    templated.write_text(jobset("registry.example/jax:${IMAGE_TAG}"))
    report = run("--disable", "KQ001", str(templated))
    assert lines(report, "TP006") == []
    assert len(lines(report, "IN004")) == 1


RC = """apiVersion: v1
kind: ReplicationController
metadata: {name: web, namespace: team}
spec:
  replicas: 2
  selector: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.example/web:1.0.0
        ports: [{containerPort: 8080, name: http}]
        resources:
          requests: {cpu: "1", memory: 1Gi}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: team}
spec:
  selector: {app: SELECTED}
  ports: [{port: 80, targetPort: http}]
"""


def test_services_select_replication_controller_pods(tmp_path):
    """Issue 36: a ReplicationController's pods are pods: a Service selecting them raises no SV001/SV002,
    and the RC's pod template is checked like any other (duplicate container names, AS001). Negative
    half: a selector typo beside the RC is still the open-world SV001 warning."""
    f = tmp_path / "rc.yaml"
    f.write_text(RC.replace("SELECTED", "web"))
    assert [x.report_line() for x in run(str(f)).findings] == []
    f.write_text(RC.replace("SELECTED", "wbe"))
    assert len(lines(run(str(f)), "SV001")) == 1
    f.write_text(RC.replace("SELECTED", "web").replace("      containers:\n", "      containers:\n"
                 "      - {name: web, image: registry.example/web:1.0.0, resources: {requests: {cpu: '1', memory: 1Gi}}}\n"))
    assert len(lines(run(str(f)), "AS001")) == 1
