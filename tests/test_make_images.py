"""`make images`: the project's images built from images/<key>, tagged as
the manifests reference them (<registry>/<name>:<tag> from the spec). The
expected commands are written out by hand; the GPU build argument is the one
images/t5-torchserve/Dockerfile's header documents."""
from __future__ import annotations

import copy

from generator import images
from generator.kernel import yamlio
from tests import helpers

REGISTRY = "us-docker.pkg.dev/my-ml-project/ml-platform"


def _dry_run(capsys, *args) -> tuple[int, list[str], str]:
    code = images.main(["--spec", str(helpers.FIXTURE_SPEC), "--dry-run", *args])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_docker_builds_every_project_image_with_the_spec_tags(capsys):
    code, lines, err = _dry_run(capsys, "--platform", "linux/amd64")
    assert code == 0
    assert lines == [
        f"docker buildx build --platform linux/amd64 --tag {REGISTRY}/finetune:0.1.0 --push images/finetune",
        f"docker buildx build --platform linux/amd64 --tag {REGISTRY}/jax-slice-check:0.1.0 --push images/jax-slice-check",
        ("docker buildx build --platform linux/amd64 --build-arg TORCHSERVE_TAG=0.12.0-gpu "
        f"--tag {REGISTRY}/t5-small:1.0-gpu --push images/t5-torchserve"),
    ]
    assert err.splitlines() == [("images: images.fastdash (fastdash) is not built here: no images/fastdash/Dockerfile; "
                                "build it from its own source and push it to the same registry")]


def test_the_tags_are_what_synth_writes_into_the_manifests():
    refs = {ref for b in images.plan(helpers.fixture_raw())[0] for ref in b.refs}
    written = set()
    for text in helpers.writer.read_tree(helpers.generated(), ("overlays",)).values():
        for doc in yamlio.load_all(text):
            written |= {line.split("image: ", 1)[1].strip() for line in yamlio.dump(doc).splitlines()
                        if line.strip().startswith(("image: ", "- image: "))}
    assert refs <= written, refs - written


def test_cloud_build_pushes_each_tag_to_each_registry(tmp_path, capsys):
    raw = copy.deepcopy(helpers.fixture_raw())
    raw["profiles"]["l4-autopilot"]["values"]["registry"] = "europe-docker.pkg.dev/other/ml"
    spec = helpers.write_spec(tmp_path / "platform.yaml", raw)
    (finetune,) = [b for b in images.plan(raw)[0] if b.key == "finetune"]
    assert finetune.refs == ("europe-docker.pkg.dev/other/ml/finetune:0.1.0", f"{REGISTRY}/finetune:0.1.0")
    config = yamlio.load_user(images.cloudbuild_config(finetune, None))
    assert config == {
        "steps": [{"name": "gcr.io/cloud-builders/docker",
                   "args": ["build", "--tag", "europe-docker.pkg.dev/other/ml/finetune:0.1.0",
                            "--tag", f"{REGISTRY}/finetune:0.1.0", "."]}],
        "images": ["europe-docker.pkg.dev/other/ml/finetune:0.1.0", f"{REGISTRY}/finetune:0.1.0"]}
    assert images.main(["--spec", str(spec), "--dry-run", "--builder", "gcloud"]) == 0
    commands = [line for line in capsys.readouterr()[0].splitlines() if line.startswith("gcloud ")]
    assert [c.split()[-3:] for c in commands] == [["--project", "my-ml-project", "images/finetune"],
                                                  ["--project", "my-ml-project", "images/jax-slice-check"],
                                                  ["--project", "my-ml-project", "images/t5-torchserve"]]


def test_invalid_spec_is_refused(tmp_path, capsys):
    raw = copy.deepcopy(helpers.fixture_raw())
    raw["images"]["finetune"]["tag"] = "latest"
    code, lines, err = _dry_run(capsys, "--spec", str(helpers.write_spec(tmp_path / "bad.yaml", raw)))
    assert code == 2 and lines == [] and "images.finetune.tag" in err
