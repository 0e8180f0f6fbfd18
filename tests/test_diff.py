"""`python -m generator diff` on real git repositories built in a temporary
directory: synthesize, commit, change the spec, synthesize again (or not), and
check the reviewer's summary line by line.

Expected numbers are worked out by hand from the fixture spec below:
g2-standard-24 is 24 vCPU, 96 GiB, 2 L4 GPUs per node, 100Gi boot disk
(generator/kernel/gke.py, the schema default); the tgi workload is one pod of
4 CPU, 30Gi, 30Gi ephemeral, 2 GPUs; the fine-tuning Job is 2 pods of 8 CPU,
32Gi, 10Gi ephemeral, 2 GPUs."""
from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator import cli, model as specmod
from generator.builders import tree
from generator.diff import markdown
from generator.kernel import paths, stamp, writer, yamlio
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
    values: {projectId: demo-project, registry: us-docker.pkg.dev/demo-project/ml,
             modelBucket: demo-models, hfTokenSecret: hf-secret}
  auto:
    platform: autopilot
    accelerator: nvidia-l4
    budget: {cpu: 72, memory: 288Gi, nvidia.com/gpu: 6, ephemeral-storage: 200Gi}
    values: {projectId: demo-project, registry: us-docker.pkg.dev/demo-project/ml,
             modelBucket: demo-models, hfTokenSecret: hf-secret}
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
    security: {runAsRoot: true}
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


def write_spec(root: Path, raw: dict) -> Path:
    path = root / "platform.yaml"
    path.write_text(yamlio.dump(raw))
    return path


def synth(root: Path, raw: dict) -> None:
    """Write the spec as platform.yaml and synthesize from it, as `gke-ml-platform synth` does."""
    path = write_spec(root, raw)
    writer.write_tree(stamp.add(tree.build(specmod.load(path)), path), root, paths.OUTPUT_DIRS)


def _tgi(raw: dict) -> dict:
    return next(w for w in raw["workloads"] if w["name"] == "tgi")


def _ft(raw: dict) -> dict:
    return next(w for w in raw["workloads"] if w["name"] == "ft")


@pytest.fixture
def repo(tmp_path):
    """A repository with the spec and its output committed on main, and a branch checked out."""
    if not shutil.which("git"):
        pytest.fail("git is required for generator diff")
    raw = yamlio.load_strict(SPEC)
    git(tmp_path, "init", "-q", "-b", "main")
    synth(tmp_path, raw)
    commit_all(tmp_path, "platform")
    git(tmp_path, "checkout", "-q", "-b", "change")
    return tmp_path, copy.deepcopy(raw)


def run_diff(repo: Path, capsys, *args: str) -> list[str]:
    assert cli.main(["diff", "--out", str(repo), *args]) == 0
    return capsys.readouterr().out.splitlines()


def block(lines: list[str], title: str) -> list[str]:
    """The lines from `title` to the next blank line."""
    start = lines.index(title)
    end = next((i for i in range(start, len(lines)) if not lines[i]), len(lines))
    return lines[start:end]


def test_capacity_comes_first_with_quota_demand_and_headroom(repo, capsys):
    root, raw = repo
    raw["profiles"]["std"]["nodePool"]["nodes"] = 4
    _tgi(raw)["model"] = "google/gemma-2-27b-it"
    synth(root, raw)
    lines = run_diff(root, capsys)
    base = git(root, "rev-parse", "main").strip()
    assert lines[:4] == [
        f"diff: {base[:12]} (merge base with main) → working tree",
        f"spec {root / 'platform.yaml'}: changed since the base",
        "",
        "Summary: 0 added, 0 removed, 3 changed, 0 moved; 0 immutable changes; 0 workloads can never be admitted",
    ]
    # std: 4 nodes x (24 CPU, 96Gi, 2 GPUs, 100Gi disk); demand tgi 1 pod + ft 2 pods:
    # cpu 4 + 2x8 = 20, memory 30 + 2x32 = 94Gi, GPUs 2 + 2x2 = 6, ephemeral 30 + 2x10 = 50Gi.
    assert block(lines, "Capacity") == [
        "Capacity",
        "  overlays/std",
        "    ClusterQueue cq, flavor flavor, cpu: quota 72 → 96 (+24); demand 20; headroom 52 → 76",
        "    ClusterQueue cq, flavor flavor, memory: quota 288Gi → 384Gi (+96Gi); demand 94Gi; headroom 194Gi → 290Gi",
        "    ClusterQueue cq, flavor flavor, nvidia.com/gpu: quota 6 → 8 (+2); demand 6; headroom 0 → 2",
        "    ClusterQueue cq, flavor flavor, ephemeral-storage: quota 300Gi → 400Gi (+100Gi); demand 50Gi; "
        "headroom 250Gi → 350Gi",
    ]
    # A Deployment's template may change: not an immutable change.
    assert "Immutable changes: none" in lines
    tgi = [
        "    ~ Deployment llm/tgi",
        "        spec.template.metadata.labels[\"ai.gke.io/model\"]: gemma-2-9b-it → gemma-2-27b-it",
        "        spec.template.spec.containers['inference-server'].env['MODEL_ID'].value: google/gemma-2-9b-it → "
        "google/gemma-2-27b-it",
    ]
    quota = "spec.resourceGroups[0].flavors['flavor'].resources"
    objects = lines[lines.index("Objects: 0 added, 0 removed, 3 changed, 0 moved"):]
    assert objects == [
        "Objects: 0 added, 0 removed, 3 changed, 0 moved",
        "",
        "  overlays/auto",
        *tgi,
        "",
        "  overlays/std",
        "    ~ ClusterQueue cq",
        f"        {quota}['cpu'].nominalQuota: 72 → 96",
        f"        {quota}['memory'].nominalQuota: 288Gi → 384Gi",
        f"        {quota}['nvidia.com/gpu'].nominalQuota: 6 → 8",
        f"        {quota}['ephemeral-storage'].nominalQuota: 300Gi → 400Gi",
        *tgi,
    ]


def test_priority_class_value_is_an_immutable_change(repo, capsys):
    root, raw = repo
    raw["priorityTiers"]["high"]["priorityClass"]["value"] = 40
    synth(root, raw)
    lines = run_diff(root, capsys)
    assert block(lines, "Immutable changes (1): the API server refuses these as updates") == [
        "Immutable changes (1): the API server refuses these as updates",
        "  PriorityClass high-priority (base)",
        "      value: 30 → 40",
        "        a PriorityClass's value and preemptionPolicy are fixed at creation "
        "[kubernetes pkg/apis/scheduling/validation/validation.go ValidatePriorityClassUpdate]",
        "      rollout: delete and recreate; no pod restarts: running pods keep the priority value they were "
        "created with; pods created later get the new one",
        "      affects: Deployment llm/tgi",
        "      Argo CD: NOT handled by the generated sync options: the sync fails (\"field is immutable\") until the "
        "object is deleted; delete it before syncing, or give it argocd.argoproj.io/sync-options: "
        "Force=true,Replace=true",
        "      by hand: kubectl replace --force -f base/priorityclass_high-priority.yaml",
    ]
    # The summary, before the immutable changes, counts it; the markdown says the same.
    assert lines.index("Summary: 0 added, 0 removed, 1 changed, 0 moved; 1 immutable change; "
                       "0 workloads can never be admitted") < lines.index("Capacity")
    md = run_diff(root, capsys, "--format", "markdown")
    assert "- **PriorityClass** `high-priority` (base)" in md
    assert "  - `value`: `30` → `40`" in md


def test_job_template_change_is_immutable_and_replaced_by_argocd(repo, capsys):
    root, raw = repo
    _ft(raw)["model"] = "google/gemma-2-9b"
    synth(root, raw)
    lines = run_diff(root, capsys)
    head = "Immutable changes (2): the API server refuses these as updates"
    immutable = block(lines, head)
    for profile in ("auto", "std"):
        i = immutable.index(f"  Job llm/ft (overlays/{profile})")
        assert immutable[i + 1:i + 8] == [
            "      spec.template.spec.containers['gpu-job'].env['MODEL_NAME'].value: google/gemma-2-2b → google/gemma-2-9b",
            "        Job fields fixed at creation [kubernetes pkg/apis/batch/validation/validation.go "
            "ValidateJobSpecUpdate]",
            "      rollout: delete and recreate; its running pods stop and the Job starts over; Kueue queues it again",
            "      restarts: Job llm/ft",
            "      Argo CD: handled: its sync options Force=true,Replace=true make Argo CD delete and recreate it",
            f"      by hand: kubectl replace --force -f overlays/{profile}/job_llm_ft.yaml",
            *(["  Job llm/ft (overlays/std)"] if profile == "auto" else []),
        ]


def test_crd_transition_rule_change_is_immutable(repo, capsys):
    """Kueue's LocalQueue CRD guards spec.clusterQueue with `self == oldSelf`."""
    root, raw = repo
    raw["queues"][0]["clusterQueue"] = "cq2"
    synth(root, raw)
    lines = run_diff(root, capsys)
    immutable = block(lines, "Immutable changes (1): the API server refuses these as updates")
    assert immutable[1:5] == [
        "  LocalQueue llm/lq (overlays/auto, overlays/std)",
        "      spec.clusterQueue: cq → cq2",
        "        field is immutable [kueue v0.17.4 LocalQueue CRD, x-kubernetes-validations rule `self == oldSelf`]",
        "      rollout: delete and recreate; while it is gone, workloads queued through it are not admitted",
    ]
    assert immutable[5] == "      affects: Deployment llm/tgi, Job llm/ft"
    assert immutable[6].startswith("      Argo CD: NOT handled")


def test_spec_change_without_synth_is_stale(repo, capsys):
    root, raw = repo
    raw["profiles"]["std"]["nodePool"]["nodes"] = 4
    write_spec(root, raw)
    # Refused in one line (exit 2) without --allow-stale.
    assert cli.main(["diff", "--out", str(root)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"diff: {root / 'platform.yaml'} (or a file it names) changed since the output under {root} was "
                   "generated; run `gke-ml-platform synth` and commit the output (or pass --allow-stale to answer "
                   "from it anyway)"]
    lines = run_diff(root, capsys, "--allow-stale")
    assert lines[1:6] == [
        f"spec {root / 'platform.yaml'}: changed since the base",
        "",
        "STALE: the spec changed but the output was not regenerated; run `gke-ml-platform synth` "
        "and commit the regenerated files",
        "  differs: base/.generated-from",
        "  differs: overlays/std/clusterqueue_cq.yaml",
    ]
    assert lines[6:] == ["No changes to generated objects."]
    md = run_diff(root, capsys, "--format", "markdown", "--allow-stale")
    assert md[2:4] == [f"spec {root / 'platform.yaml'}: changed since the base", ""]
    assert md[4].startswith("> **STALE: the spec changed but the output was not regenerated")
    assert md[5:7] == ["> - `differs: base/.generated-from`", "> - `differs: overlays/std/clusterqueue_cq.yaml`"]
    # Without regenerating (no Node), git alone still shows it: the spec moved, the output did not.
    lines = run_diff(root, capsys, "--no-regenerate", "--allow-stale")
    assert lines[3:5] == [
        "STALE: the spec changed but the output was not regenerated; run `gke-ml-platform synth` "
        "and commit the regenerated files",
        "  no generated file differs from the base, though the spec does",
    ]
    # check says the same first, and keeps its exit code.
    assert cli.main(["check", "--spec", str(root / "platform.yaml"), "--out", str(root)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("check: the spec changed but the output was not regenerated")
    assert err[1:] == ["  differs: base/.generated-from", "  differs: overlays/std/clusterqueue_cq.yaml"]
    # Synthesized: not stale any more.
    synth(root, raw)
    lines = run_diff(root, capsys)
    assert not any(line.startswith("STALE") for line in lines)
    assert cli.main(["check", "--spec", str(root / "platform.yaml"), "--out", str(root)]) == 0


def test_invalid_spec_is_said_and_the_diff_still_runs(repo, capsys):
    root, raw = repo
    raw["profiles"]["std"]["nodePool"]["nodes"] = 0
    write_spec(root, raw)
    lines = run_diff(root, capsys, "--allow-stale")
    assert lines[3:7] == [
        "STALE: the spec changed but the output was not regenerated; run `gke-ml-platform synth` "
        "and commit the regenerated files",
        "  no generated file differs from the base, though the spec does",
        "",
        "Stale check not done: the spec does not build:",
    ]
    # The spec's own message is generator/model's business; the line names the file and field.
    assert helpers.without_positions(lines[7]).startswith(f"  {root / 'platform.yaml'}: profiles.std.nodePool.nodes: ")
    assert lines[-1] == "No changes to generated objects."


def test_kueue_version_bump_shows_both_urls(repo, capsys):
    root, raw = repo
    raw["kueue"] = {"version": "v0.19.2"}
    synth(root, raw)
    lines = run_diff(root, capsys)
    # The bump comes first, right after the summary, one line for both clusters.
    i = lines.index("Versions")
    assert lines[i - 2].startswith("Summary: ") and lines[i + 1] == "  kueue v0.17.4 → v0.19.2 on 2 clusters (auto, std)"
    old = "https://github.com/kubernetes-sigs/kueue/releases/download/v0.17.4/manifests.yaml"
    new = "https://github.com/kubernetes-sigs/kueue/releases/download/v0.19.2/manifests.yaml"
    assert block(lines, "  controllers/std/kueue") == [
        "  controllers/std/kueue",
        "    ~ Kustomization controllers/std/kueue",
        "        resources:",
        f"          - {old}",
        f"          + {new}",
    ]
    md = run_diff(root, capsys, "--format", "markdown")
    assert f"  - `resources`: `{old}` → `{new}`" in md


def test_removing_a_workload_is_one_line_in_the_argocd_project(repo, capsys):
    """The AppProject's allow-lists are sets: the one kind no overlay creates any more
    (Deployment: tgi was the only one) is one removal, not a reordering of the list."""
    root, raw = repo
    raw["workloads"] = [w for w in raw["workloads"] if w["name"] != "tgi"]
    synth(root, raw)
    lines = run_diff(root, capsys)
    assert block(lines, "  argocd/apps") == [
        "  argocd/apps",
        "    ~ AppProject argocd/demo",
        '        spec.namespaceResourceWhitelist: - {"group": "apps", "kind": "Deployment"}',
    ]


def test_moves_renames_and_workload_lines(repo, capsys):
    root, raw = repo
    _ft(raw)["nodes"] = 3
    _ft(raw)["priority"] = "high"
    synth(root, raw)
    # By hand, as a refactoring of the generator would: one PriorityClass moves
    # from base into both overlays, the other into one overlay only, and a file
    # is renamed without any change to its object.
    pc_high, pc_low = "priorityclass_high-priority.yaml", "priorityclass_low-priority.yaml"
    for overlay in ("auto", "std"):
        shutil.copy(root / "base" / pc_high, root / "overlays" / overlay / pc_high)
    (root / "base" / pc_high).unlink()
    (root / "base" / pc_low).rename(root / "overlays" / "std" / pc_low)
    (root / "overlays" / "std" / "localqueue_llm_lq.yaml").rename(root / "overlays" / "std" / "lq.yaml")

    # Hand edits make the output stale; --no-regenerate compares the trees only.
    lines = run_diff(root, capsys, "main", "--no-regenerate")
    capacity = block(lines, "Capacity")
    # ft: 3 pods x 2 GPUs = 6; with tgi's 2 the queue's demand is 8 on a quota of 6.
    assert capacity == [
        "Capacity",
        "  overlays/auto",
        "    ClusterQueue cq, flavor flavor, cpu: quota 72; demand 20 → 28; headroom 52 → 44",
        "    ClusterQueue cq, flavor flavor, memory: quota 288Gi; demand 94Gi → 126Gi; headroom 194Gi → 162Gi",
        "    ClusterQueue cq, flavor flavor, nvidia.com/gpu: quota 6; demand 6 → 8; headroom 0 → -2",
        "    ClusterQueue cq, flavor flavor, ephemeral-storage: quota 200Gi; demand 50Gi → 60Gi; headroom 150Gi → 140Gi",
        "    accelerators Job llm/ft nvidia.com/gpu: 2 × 2 pods = 4 → 2 × 3 pods = 6",
        "    accelerators total nvidia.com/gpu: 6 → 8",
        "    priority Job llm/ft priorityClassName: low-priority → high-priority",
        "  overlays/std",
        "    ClusterQueue cq, flavor flavor, cpu: quota 72; demand 20 → 28; headroom 52 → 44",
        "    ClusterQueue cq, flavor flavor, memory: quota 288Gi; demand 94Gi → 126Gi; headroom 194Gi → 162Gi",
        "    ClusterQueue cq, flavor flavor, nvidia.com/gpu: quota 6; demand 6 → 8; headroom 0 → -2",
        "    ClusterQueue cq, flavor flavor, ephemeral-storage: quota 300Gi; demand 50Gi → 60Gi; headroom 250Gi → 240Gi",
        "    accelerators Job llm/ft nvidia.com/gpu: 2 × 2 pods = 4 → 2 × 3 pods = 6",
        "    accelerators total nvidia.com/gpu: 6 → 8",
        "    priority Job llm/ft priorityClassName: low-priority → high-priority",
    ]
    objects = lines[lines.index("Objects: 0 added, 1 removed, 2 changed, 3 moved"):]
    # How the trainer is launched is finetune.py's business: its lines are
    # only required to be container fields; everything else is exact.
    launch = "        spec.template.spec.containers['gpu-job']."
    objects = [line for line in objects if not line.startswith(launch)]
    ft = [
        "    ~ Job llm/ft",
        "        spec.completions: 2 → 3",
        "        spec.parallelism: 2 → 3",
        "        spec.template.spec.priorityClassName: low-priority → high-priority",
    ]
    assert objects[1:] == [
        "",
        "  base",
        "    > PriorityClass high-priority (moved from base to overlays/auto, overlays/std)",
        "",
        "  overlays/auto",
        *ft,
        "    - PriorityClass low-priority (via base)",
        "",
        "  overlays/std",
        *ft,
        "    > LocalQueue llm/lq (file renamed from overlays/std/localqueue_llm_lq.yaml to overlays/std/lq.yaml)",
        "    > PriorityClass low-priority (moved from base)",
    ]


def test_new_profile_lists_everything_it_applies(repo, capsys):
    root, raw = repo
    raw["profiles"]["std2"] = copy.deepcopy(raw["profiles"]["std"])
    raw["queues"][0]["profiles"].append("std2")
    raw["gitops"]["clusters"]["std2"] = {"server": "https://10.0.0.2"}
    for w in raw["workloads"]:
        w["profiles"].append("std2")
    synth(root, raw)
    lines = run_diff(root, capsys)
    overlay = block(lines, "  overlays/std2 (new overlay)")
    assert "    + Namespace llm (via base)" in overlay and "    + ClusterQueue cq" in overlay
    assert "    + Application argocd/demo-std2" in lines
    assert "    accelerators Job llm/ft nvidia.com/gpu: (new) → 2 × 2 pods = 4" in lines
    assert "    ClusterQueue cq, flavor flavor, nvidia.com/gpu: quota (none) → 6; demand (none) → 6; headroom (none) → 0" in lines


def test_no_changes(repo, capsys):
    root, _ = repo
    lines = run_diff(root, capsys)
    assert lines[1:] == [f"spec {root / 'platform.yaml'}: unchanged since the base", "No changes to generated objects."]


def test_bad_ref_and_no_repository(tmp_path_factory, repo, capsys):
    root, _ = repo
    assert cli.main(["diff", "no-such-ref", "--out", str(root)]) == 2
    assert "'no-such-ref' is not a commit" in capsys.readouterr().err
    lone = tmp_path_factory.mktemp("lone")
    assert cli.main(["diff", "--out", str(lone)]) == 2
    assert "diff:" in capsys.readouterr().err


def _many(raw: dict, n: int) -> dict:
    """The fixture spec with n more one-GPU fine-tuning Jobs on both profiles."""
    out = copy.deepcopy(raw)
    for i in range(n):
        out["workloads"].append({**copy.deepcopy(_ft(raw)), "name": f"ft-{i:03d}", "nodes": 1, "gpusPerNode": 1})
    return out


@pytest.mark.slow  # synthesizes a 250-workload platform twice
def test_markdown_of_a_250_workload_change_fits_a_comment(repo, capsys):
    root, raw = repo
    synth(root, _many(raw, 250))
    text = run_diff(root, capsys, "--no-regenerate")
    md = run_diff(root, capsys, "--format", "markdown", "--no-regenerate")
    full = "\n".join(text)
    assert len(full) > markdown.LIMIT          # the change is too big for one comment in full
    body = "\n".join(md) + "\n"
    assert len(body) < 65_000
    # The summary survives: 250 Jobs and their headless Services on each of 2 profiles are
    # 1000 new objects; 250 Jobs of 1 pod x 1 GPU on top of 6 GPUs of demand, quota 6.
    assert "**1000** added, **0** removed, **0** changed, **0** moved; **0** immutable changes; " \
           "**0** workloads can never be admitted" in md
    assert "| std | `ClusterQueue cq` | `flavor` | `nvidia.com/gpu` | `6` | `6 → 256` | `0 → -250` |" in md
    assert any(line.startswith("| auto | `ClusterQueue cq` | `")
               and line.endswith("` | `nvidia.com/gpu` | `6` | `6 → 256` | `0 → -250` |") for line in md)
    # Then one row per object, and a word on what was left out.
    assert "| where | | object | field changes |" in md
    assert md[-1].startswith("_Left out to stay under GitHub's comment limit: the field-level changes of each object")
    assert md[-1].endswith("run `gke-ml-platform diff` locally for the full review._")


# Run in a fresh interpreter: cdk8s, its jsii runtime and Node are made unavailable, then
# `generator diff --no-regenerate` reviews a change that touches an immutable field.
_NO_NODE = """
import importlib.abc, sys
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("cdk8s", "cdk8s_plus_33", "jsii", "constructs"):
            raise ImportError(f"{name} is unavailable in this test")
        return None
sys.meta_path.insert(0, Refuse())
from generator import cli
code = cli.main(sys.argv[1:])
print("HEAVY", sorted(m for m in sys.modules if m.split(".")[0] in ("cdk8s", "cdk8s_plus_33", "jsii")),
      file=sys.stderr)
sys.exit(code)
"""


def test_diff_without_regenerating_needs_no_node_nor_cdk8s(repo, tmp_path):
    root, raw = repo
    _ft(raw)["model"] = "google/gemma-2-9b"     # a Job template: immutable
    synth(root, raw)
    bare = tmp_path / "bin"      # git, and no node, on PATH
    bare.mkdir()
    (bare / "git").symlink_to(shutil.which("git"))
    env = {**os.environ, "PATH": str(bare), "PYTHONPATH": str(paths.ROOT)}
    out = subprocess.run([sys.executable, "-c", _NO_NODE, "diff", "--out", str(root), "--no-regenerate"],
                         capture_output=True, text=True, env=env, timeout=120, cwd=root)
    assert out.returncode == 0, out.stderr
    assert "HEAVY []" in out.stderr
    assert "Immutable changes (2): the API server refuses these as updates" in out.stdout
    assert "Argo CD: handled: its sync options Force=true,Replace=true make Argo CD delete and recreate it" in out.stdout
    assert "internal error" not in out.stdout + out.stderr


def test_json_and_the_summary_lead_with_what_needs_attention(repo, capsys):
    """A third fine-tuning node: 3 pods x 2 GPUs = 6 plus tgi's 2 is 8 (computed here from the spec
    above), over the 6 GPUs of either profile (3 g2-standard-24 x 2 L4; the Autopilot budget of 6):
    negative headroom on both, and the Job's changed template is immutable: named first."""
    root, raw = repo
    _ft(raw)["nodes"] = 3
    synth(root, raw)
    want = [f"{p}: negative headroom: ClusterQueue cq, flavor flavor, nvidia.com/gpu: quota 6; demand 6 → 8; "
            "headroom 0 → -2 (at the most replicas the demand exceeds the quota: what is over it is never admitted)"
            for p in ("auto", "std")]
    lines = run_diff(root, capsys)
    i = lines.index("Needs attention (4):")
    assert lines[i - 2].startswith("Summary: ")
    assert lines[i + 1:i + 3] == [f"  ! {w}" for w in want]
    assert lines[i + 3].startswith("  ! immutable change: Job llm/ft (overlays/auto)")
    md = run_diff(root, capsys, "--format", "markdown")
    j = md.index("#### Needs attention (4)")
    assert md[j - 2].startswith("**") and f"- :warning: {want[0]}" in md
    assert j < md.index("#### Immutable changes") and j < md.index("#### Capacity")
    doc = json.loads("\n".join(run_diff(root, capsys, "--format", "json")))
    assert doc["attention"][:2] == want
    assert doc["summary"]["immutable"] == 2 and doc["summary"]["changed"] == 2
    (gpu,) = [q for q in doc["capacity"]["overlays/auto"]["queues"] if q["resource"] == "nvidia.com/gpu"]
    assert gpu["before"]["headroomAtMost"] == "0" and gpu["after"]["headroomAtMost"] == "-2"
    assert [x["kind"] for x in doc["immutable"]] == ["Job", "Job"]
    # The same bytes for the same change.
    assert run_diff(root, capsys, "--format", "json") == run_diff(root, capsys, "--format", "json")
