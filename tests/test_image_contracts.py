"""The generated fine-tuning Job and the image it runs agree: the environment
the Job sets is what images/finetune reads, and the files the launch line
names are in the image."""
import importlib.util
import re
import sys

import pytest

from generator.kernel import paths
from tests import helpers

IMAGE = paths.ROOT / "images" / "finetune"


def _load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


CONFIG = _load(IMAGE / "finetune_config.py")
SPEC = helpers.fixture_spec()
JOBS = [(p, w.name) for w in SPEC.workloads if w.kind == "finetune" for p in w.profiles]


def _container(profile, name):
    (job,) = [o for o in helpers.kustomize(helpers.generated() / "overlays" / profile)
              if o["kind"] == "Job" and o["metadata"]["name"] == name]
    (c,) = job["spec"]["template"]["spec"]["containers"]
    return job, c


@pytest.mark.parametrize("profile,name", JOBS)
def test_job_env_is_what_the_trainer_reads(profile, name):
    _, c = _container(profile, name)
    names = {e["name"] for e in c["env"]}
    assert names <= set(CONFIG.ENV_VARS), f"set but never read: {sorted(names - set(CONFIG.ENV_VARS))}"
    assert set(CONFIG.REQUIRED_ENV_VARS) <= names, f"required but not set: {sorted(set(CONFIG.REQUIRED_ENV_VARS) - names)}"
    test_hooks = {n for n in CONFIG.ENV_VARS if n.startswith("TEST_")}
    assert not names & test_hooks


@pytest.mark.parametrize("profile,name", JOBS)
def test_job_runs_the_image_entrypoint_with_files_it_ships(profile, name):
    job, c = _container(profile, name)
    dockerfile = (IMAGE / "Dockerfile").read_text()
    assert "command" not in c, "the Job must keep the image's entrypoint (launch.py relays SIGTERM)"
    assert re.search(r'^ENTRYPOINT \["python", "launch.py"\]', dockerfile, re.M)
    args = c["args"]
    assert args[:2] == ["accelerate", "launch"]
    shipped = re.search(r"^COPY (?!--from)(.+) \./$", dockerfile, re.M).group(1).split()
    for needed in (args[args.index("--config_file") + 1], args[-1]):
        assert (IMAGE / needed).is_file() and needed in shipped, f"{needed} is not in the image"
    nodes = job["spec"]["completions"]
    gpus = int(c["resources"]["limits"]["nvidia.com/gpu"])
    assert args[args.index("--num_machines") + 1] == str(nodes)
    assert args[args.index("--num_processes") + 1] == str(nodes * gpus)
    assert "$(JOB_COMPLETION_INDEX)" in args
    grace = job["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert grace >= 30, "the trainer needs time to checkpoint on SIGTERM"
