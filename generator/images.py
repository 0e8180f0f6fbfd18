"""`make images`: build the project's own images and push them where the
manifests expect them.

For each `images.<key>` of the spec with a `name` (the project's images; the
others name an upstream `repository`), the build context is `images/<key>/`
and the image goes to `<registry>/<name>:<tag>` for every distinct
`profiles.*.values.registry`, exactly the references synth writes. An image
key without a folder here (the T5 tutorial's `fastdash` client) is listed as
not built.

Builders: `docker` runs `docker buildx build --push` (log in first:
`gcloud auth configure-docker <region>-docker.pkg.dev`); `gcloud` runs
`gcloud builds submit` (Cloud Build, no local Docker; the project is the
profile's `values.projectId`).

A tag ending in `-gpu` builds the GPU variant: each `ARG NAME=...-cpu` of the
Dockerfile is passed as `NAME=...-gpu` (images/t5-torchserve: its Dockerfile's
header shows the same for `TORCHSERVE_TAG`).

    python -m generator.images [--spec FILE] [--builder docker|gcloud] [--platform P] [--dry-run]"""
from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .kernel import paths, userinput, yamlio
from .kernel.errors import SpecError

IMAGES_DIR = paths.ROOT / "images"
_CPU_ARG = re.compile(r"^ARG\s+([A-Za-z_][A-Za-z0-9_]*)=(\S+)-cpu\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Build:
    key: str
    context: Path
    refs: tuple[str, ...]          # every <registry>/<name>:<tag> to push
    build_args: tuple[tuple[str, str], ...]
    project: str | None            # for Cloud Build


def plan(raw: dict, images_dir: Path = IMAGES_DIR) -> tuple[list[Build], list[str]]:
    """What to build, and the image keys with no folder here."""
    profiles = raw.get("profiles") or {}
    registries = sorted({p["values"]["registry"] for p in profiles.values() if p.get("values", {}).get("registry")})
    projects = sorted({p["values"]["projectId"] for p in profiles.values() if p.get("values", {}).get("projectId")})
    builds, missing = [], []
    for key, image in sorted((raw.get("images") or {}).items()):
        if "name" not in image:
            continue   # an upstream image, pulled as it is
        context = images_dir / key
        if not (context / "Dockerfile").is_file():
            missing.append(key)
            continue
        tag = str(image["tag"])
        args: tuple[tuple[str, str], ...] = ()
        if tag.endswith("-gpu"):
            args = tuple((name, f"{base}-gpu") for name, base in _CPU_ARG.findall((context / "Dockerfile").read_text()))
        refs = tuple(f"{r}/{image['name']}:{tag}" for r in registries)
        builds.append(Build(key, context, refs, args, projects[0] if projects else None))
    return builds, missing


def docker_command(b: Build, platform: str | None) -> list[str]:
    cmd = ["docker", "buildx", "build"]
    if platform:
        cmd += ["--platform", platform]
    for name, value in b.build_args:
        cmd += ["--build-arg", f"{name}={value}"]
    for ref in b.refs:
        cmd += ["--tag", ref]
    return [*cmd, "--push", str(b.context.relative_to(paths.ROOT))]


def cloudbuild_config(b: Build, platform: str | None) -> str:
    """A Cloud Build config: one docker build with the build args, every tag pushed."""
    args = ["build"] + (["--platform", platform] if platform else [])
    for name, value in b.build_args:
        args += ["--build-arg", f"{name}={value}"]
    for ref in b.refs:
        args += ["--tag", ref]
    return yamlio.dump({"steps": [{"name": "gcr.io/cloud-builders/docker", "args": [*args, "."]}],
                        "images": list(b.refs)})


def gcloud_command(b: Build, config: Path) -> list[str]:
    cmd = ["gcloud", "builds", "submit", "--config", str(config)]
    if b.project:
        cmd += ["--project", b.project]
    return [*cmd, str(b.context.relative_to(paths.ROOT))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m generator.images", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", default=str(paths.DEFAULT_SPEC))
    ap.add_argument("--builder", choices=("docker", "gcloud"), default="docker")
    ap.add_argument("--platform", help="target platform, e.g. linux/amd64 (default: the builder's own)")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    args = ap.parse_args(argv)
    try:
        from . import model as spec
        spec.load(args.spec)   # refuse an invalid spec as synth does
        raw = userinput.load_mapping(args.spec, "spec")
    except SpecError as e:
        print(e.render(), file=sys.stderr)
        return 2
    builds, missing = plan(raw)
    for key in missing:
        print(f"images: images.{key} ({raw['images'][key]['name']}) is not built here: no images/{key}/Dockerfile; "
              f"build it from its own source and push it to the same registry", file=sys.stderr)
    if not builds:
        print("images: the spec names none of the project's images", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        for b in builds:
            if args.builder == "docker":
                cmd = docker_command(b, args.platform)
            else:
                config = Path(tmp) / f"cloudbuild-{b.key}.yaml"
                config.write_text(cloudbuild_config(b, args.platform))
                if args.dry_run:
                    print(f"# {config.name}:\n" + "".join(f"#   {line}\n" for line in config.read_text().splitlines()))
                cmd = gcloud_command(b, config)
            print(shlex.join(cmd), flush=True)
            if not args.dry_run and subprocess.run(cmd, cwd=paths.ROOT, check=False).returncode != 0:
                print(f"images: building {b.key} failed (command above)", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
