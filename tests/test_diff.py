"""`python -m generator diff` on real git repositories built in a temporary
directory: synthesize, commit, change the spec, synthesize again, and check
the reviewer's summary line by line."""
from __future__ import annotations

import copy
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from generator import cli, diff, yamlio
from tests import helpers

SPEC = """
specVersion: 1
name: demo
kubernetesVersion: "1.33"
gitops:
  repoURL: https://example.com/demo.git
  targetRevision: main
  clusters:
    std: {server: "https://10.0.0.1"}
    auto: {name: auto}
namespaces: [{name: llm}]
priorityTiers:
  low:
    priorityClass: {name: low-priority, value: 20}
    workloadPriorityClass: {name: low-wpc, value: 1000}
  high:
    priorityClass: {name: high-priority, value: 30}
profiles:
  std:
    platform: standard
    accelerator: nvidia-l4
    nodePool: {machineType: g2-standard-24, nodes: 3}
    values: {projectId: demo-project, registry: us-docker.pkg.dev/demo-project/ml, modelBucket: demo-models, hfTokenSecret: hf-secret}
  auto:
    platform: autopilot
    accelerator: nvidia-l4
    budget: {cpu: 72, memory: 288Gi, nvidia.com/gpu: 6, ephemeral-storage: 200Gi}
    values: {projectId: demo-project, registry: us-docker.pkg.dev/demo-project/ml, modelBucket: demo-models, hfTokenSecret: hf-secret}
queues:
  - clusterQueue: cq
    resourceFlavor: flavor
    profiles: [std, auto]
    localQueues: [{name: lq, namespace: llm}]
images:
  tgi: {repository: ghcr.io/huggingface/text-generation-inference, tag: "2.4.1"}
  finetune: {name: finetune, tag: "0.1.0"}
workloads:
  - name: tgi
    kind: tgi
    profiles: [std, auto]
    namespace: llm
    queue: lq
    priority: high
    image: tgi
    model: google/gemma-2-9b-it
    gpus: 2
    resources: {cpu: "4", memory: 30Gi, ephemeral-storage: 30Gi}
  - name: ft
    kind: finetune
    profiles: [std, auto]
    namespace: llm
    queue: lq
    priority: low
    image: finetune
    model: google/gemma-2-2b
    dataset: b-mc2/sql-create-context
    nodes: 2
    gpusPerNode: 2
    resources: {cpu: "8", memory: 32Gi, ephemeral-storage: 10Gi}
"""


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(var, None)
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, f"git {args}: {out.stderr}"
    return out.stdout


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def _tgi(raw: dict) -> dict:
    return next(w for w in raw["workloads"] if w["name"] == "tgi")


def _ft(raw: dict) -> dict:
    return next(w for w in raw["workloads"] if w["name"] == "ft")


@pytest.fixture
def repo(tmp_path):
    """A repository with the synthesized spec committed on main, and a branch checked out."""
    if not shutil.which("git"):
        pytest.fail("git is required for generator diff")
    raw = yamlio.load_strict(SPEC)
    git(tmp_path, "init", "-q", "-b", "main")
    helpers.synth_into(tmp_path, raw)
    commit_all(tmp_path, "platform")
    git(tmp_path, "checkout", "-q", "-b", "change")
    return tmp_path, raw


def run_diff(repo: Path, capsys, *args: str) -> list[str]:
    assert cli.main(["diff", "--out", str(repo), *args]) == 0
    return capsys.readouterr().out.splitlines()


def test_quota_and_model_change(repo, capsys):
    root, raw = repo
    raw = copy.deepcopy(raw)
    raw["profiles"]["std"]["nodePool"]["nodes"] = 4
    _tgi(raw)["model"] = "google/gemma-2-27b-it"
    helpers.synth_into(root, raw)
    commit_all(root, "bigger pool, bigger model")

    lines = run_diff(root, capsys)
    base = git(root, "rev-parse", "main").strip()
    tgi = [
        "  ~ Deployment llm/tgi",
        "      spec.template.metadata.labels[ai.gke.io/model]: gemma-2-9b-it → gemma-2-27b-it",
        "      spec.template.spec.containers[inference-server].env[MODEL_ID].value: google/gemma-2-9b-it → google/gemma-2-27b-it",
    ]
    quota = "spec.resourceGroups[0].flavors[flavor].resources"
    assert lines == [
        f"generator diff: {base[:12]} (merge base with main) → working tree",
        "0 added, 0 removed, 3 changed, 0 moved",
        "",
        "overlays/auto",
        *tgi,
        "",
        "overlays/std",
        "  ~ ClusterQueue cq",
        f"      {quota}[cpu].nominalQuota: 72 → 96",
        f"      {quota}[memory].nominalQuota: 288Gi → 384Gi",
        f"      {quota}[nvidia.com/gpu].nominalQuota: 6 → 8",
        f"      {quota}[ephemeral-storage].nominalQuota: 300Gi → 400Gi",
        *tgi,
        "",
        "Capacity impact",
        "  overlays/std",
        "    quota ClusterQueue cq [flavor] cpu: 72 → 96 (+24)",
        "    quota ClusterQueue cq [flavor] memory: 288Gi → 384Gi (+96Gi)",
        "    quota ClusterQueue cq [flavor] nvidia.com/gpu: 6 → 8 (+2)",
        "    quota ClusterQueue cq [flavor] ephemeral-storage: 300Gi → 400Gi (+100Gi)",
    ]


def test_accelerators_priorities_moves_and_renames(repo, capsys):
    root, raw = repo
    raw = copy.deepcopy(raw)
    _ft(raw)["nodes"] = 3
    _ft(raw)["priority"] = "high"
    helpers.synth_into(root, raw)
    # By hand, as a refactoring of the generator would: one PriorityClass moves
    # from base into both overlays, the other into one overlay only, and a file
    # is renamed without any change to its object.
    pc_high, pc_low = "priorityclass_high-priority.yaml", "priorityclass_low-priority.yaml"
    for overlay in ("auto", "std"):
        shutil.copy(root / "base" / pc_high, root / "overlays" / overlay / pc_high)
    (root / "base" / pc_high).unlink()
    (root / "base" / pc_low).rename(root / "overlays" / "std" / pc_low)
    (root / "overlays" / "std" / "localqueue_llm_lq.yaml").rename(root / "overlays" / "std" / "lq.yaml")

    lines = run_diff(root, capsys, "main")      # uncommitted: the working tree is compared
    # How the trainer is launched is finetune.py's business: its lines are
    # only required to be container fields; everything else is exact.
    launch = "      spec.template.spec.containers[gpu-job]."
    starts = [i for i, line in enumerate(lines) if line == "  ~ Job llm/ft"]
    assert len(starts) == 2
    for i in reversed(starts):
        end = next(j for j in range(i + 1, len(lines)) if not lines[j].startswith("      "))
        assert any(line.startswith(launch) for line in lines[i:end]), lines[i:end]
        lines[i:end] = [line for line in lines[i:end] if not line.startswith(launch)]
    ft = [
        "  ~ Job llm/ft",
        "      spec.completions: 2 → 3",
        "      spec.parallelism: 2 → 3",
        "      spec.template.spec.priorityClassName: low-priority → high-priority",
    ]
    assert lines[1:] == [
        "0 added, 1 removed, 2 changed, 3 moved",
        "",
        "base",
        "  > PriorityClass high-priority (moved from base to overlays/auto, overlays/std)",
        "",
        "overlays/auto",
        *ft,
        "  - PriorityClass low-priority (via base)",
        "",
        "overlays/std",
        *ft,
        "  > LocalQueue llm/lq (file renamed from overlays/std/localqueue_llm_lq.yaml to overlays/std/lq.yaml)",
        "  > PriorityClass low-priority (moved from base)",
        "",
        "Capacity impact",
        "  overlays/auto",
        "    accelerators Job llm/ft nvidia.com/gpu: 2 × 2 pods = 4 → 2 × 3 pods = 6",
        "    accelerators total nvidia.com/gpu: 6 → 8",
        "    priority Job llm/ft priorityClassName: low-priority → high-priority",
        "  overlays/std",
        "    accelerators Job llm/ft nvidia.com/gpu: 2 × 2 pods = 4 → 2 × 3 pods = 6",
        "    accelerators total nvidia.com/gpu: 6 → 8",
        "    priority Job llm/ft priorityClassName: low-priority → high-priority",
    ]


def test_markdown_for_pull_requests(repo, capsys):
    root, raw = repo
    raw = copy.deepcopy(raw)
    raw["profiles"]["std"]["nodePool"]["nodes"] = 4
    helpers.synth_into(root, raw)
    lines = run_diff(root, capsys, "--format", "markdown")
    assert lines[0].startswith("### Generated manifests: changes since `")
    assert "#### `overlays/std`" in lines
    assert "- `~` **ClusterQueue** `cq`" in lines
    assert ("  - `spec.resourceGroups[0].flavors[flavor].resources[cpu].nominalQuota`: `72` → `96`") in lines
    assert "| overlay | what | object | resource / field | before | after |" in lines
    assert "| `std` | quota | `ClusterQueue cq [flavor]` | `cpu` | `72` | `96 (+24)` |" in lines


def test_new_profile_and_hpa_ranges(repo, capsys):
    """A profile added to the spec is a new overlay: everything it applies is
    listed, base objects marked as coming through base."""
    root, raw = repo
    raw = copy.deepcopy(raw)
    raw["profiles"]["std2"] = copy.deepcopy(raw["profiles"]["std"])
    raw["queues"][0]["profiles"].append("std2")
    raw["gitops"]["clusters"]["std2"] = {"server": "https://10.0.0.2"}
    for w in raw["workloads"]:
        w["profiles"].append("std2")
    helpers.synth_into(root, raw)
    lines = run_diff(root, capsys)
    start = lines.index("overlays/std2 (new overlay)")
    block = lines[start + 1:lines.index("", start)]
    assert "  + Namespace llm (via base)" in block and "  + ClusterQueue cq" in block
    assert "  + Application argocd/demo-std2" in lines
    assert "    accelerators Job llm/ft nvidia.com/gpu: (new) → 2 × 2 pods = 4" in lines


def test_no_changes(repo, capsys):
    root, _ = repo
    lines = run_diff(root, capsys)
    assert lines[1:] == ["No changes to generated objects."]


def test_hpa_target_counts_a_replica_range():
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "t5", "namespace": "llm"},
           "spec": {"template": {"spec": {"containers": [
               {"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}}
    hpa = {("Deployment", "llm", "t5"): (1, 5)}
    assert diff.accelerator_summary(dep, hpa, "nvidia.com/gpu") == ("1 × 1–5 pods (HPA) = 1–5", 1, 5)
    assert diff.accelerator_summary(dep, {}, "nvidia.com/gpu") == ("1 × 1 pod = 1", 1, 1)
    assert diff.accelerator_summary(dep, {}, "google.com/tpu") is None


def test_bad_ref_and_no_repository(tmp_path_factory, repo, capsys):
    root, _ = repo
    assert cli.main(["diff", "no-such-ref", "--out", str(root)]) == 2
    assert "'no-such-ref' is not a commit" in capsys.readouterr().err
    lone = tmp_path_factory.mktemp("lone")
    assert cli.main(["diff", "--out", str(lone)]) == 2
    assert "diff:" in capsys.readouterr().err


def _tree(files: dict[str, dict]) -> dict[str, str]:
    return {path: yamlio.dump(obj) for path, obj in files.items()}


def test_objects_moving_into_base():
    """Without git: compare() on two trees. An object both overlays had moves
    into base (reported once); one only overlay a had arrives in b via base."""
    def pc(name, value=1):
        return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
    kust = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": ["../../base"]}
    overlays = {"overlays/a/kustomization.yaml": kust, "overlays/b/kustomization.yaml": kust}
    old = _tree({**overlays, "overlays/a/pc_x.yaml": pc("x"), "overlays/b/pc_x.yaml": pc("x"),
                 "overlays/a/pc_y.yaml": pc("y"), "overlays/b/pc_z.yaml": pc("z")})
    new = _tree({**overlays, "base/pc_x.yaml": pc("x"), "base/pc_y.yaml": pc("y", 2), "overlays/b/pc_z.yaml": pc("z")})
    text = diff.render_text(diff.compare(old, new, "0" * 40, "test")).splitlines()
    assert text[1:] == [
        "1 added, 0 removed, 0 changed, 2 moved",
        "",
        "base",
        "  > PriorityClass x (moved to base from overlays/a, overlays/b)",
        "",
        "overlays/a",
        "  > PriorityClass y (moved to base)",
        "      value: 1 → 2",
        "",
        "overlays/b",
        "  + PriorityClass y (via base)",
        "",
        "Capacity impact",
        "  overlays/a",
        "    priority PriorityClass y value: 1 → 2",
    ]
