"""CPU tests for images/jax-slice-check (the program the TPU7x JobSets run).

Every run of the check is a subprocess with 8 (or 2 x 4) forced host devices:
XLA reads XLA_FLAGS once per process, so it cannot be set for this one, and
keeping JAX out of the pytest process leaves other test files unaffected.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

IMAGE_DIR = Path(__file__).resolve().parents[2] / "images" / "jax-slice-check"
SCRIPT = IMAGE_DIR / "slice_check.py"
TIMEOUT_S = 60

# Variables that could make JAX take the environment for a cluster (TPU VM,
# Kubernetes, Slurm, MPI) or leak a caller's settings into the check.
_STRIPPED_PREFIXES = ("SLICE_", "TPU_", "JAX_", "XLA_", "KUBERNETES_", "SLURM_", "OMPI_", "PMI_")


def _load_config():
    # The way the generator's tests will load it: by file path.
    spec = importlib.util.spec_from_file_location(
        "jax_slice_check_config", IMAGE_DIR / "slice_check_config.py"
    )
    module = importlib.util.module_from_spec(spec)
    # No __pycache__ left in images/ (it is the image's build context).
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved
    return module


config = _load_config()


def _env(host_devices: int = 8, **slice_env: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_STRIPPED_PREFIXES)}
    env.update(
        JAX_PLATFORMS="cpu",
        XLA_FLAGS=f"--xla_force_host_platform_device_count={host_devices}",
        PYTHONPATH=str(IMAGE_DIR),  # lets `python -c` snippets import slice_check
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.update(slice_env)
    return env


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, *(args or [str(SCRIPT)])]
    return subprocess.run(
        argv, env=env, cwd=IMAGE_DIR, capture_output=True, text=True, timeout=TIMEOUT_S
    )


def _output(proc) -> str:
    return proc.stdout + proc.stderr


# --- the environment contract, without JAX ---------------------------------


def test_env_contract_names():
    assert config.ENV_VARS == (
        "SLICE_TOPOLOGY",
        "SLICE_EXPECTED_GLOBAL_DEVICES",
        "SLICE_EXPECTED_LOCAL_DEVICES",
        "SLICE_CHECK_DISTRIBUTED",
    )
    assert config.REQUIRED_ENV_VARS == ("SLICE_EXPECTED_GLOBAL_DEVICES",)
    assert set(config.REQUIRED_ENV_VARS) <= set(config.ENV_VARS)


def test_config_module_imports_without_jax():
    # Poisoning sys.modules makes any `import jax` in the module raise.
    code = (
        "import sys, importlib.util; sys.modules['jax'] = None; "
        f"spec = importlib.util.spec_from_file_location('c', {str(IMAGE_DIR / 'slice_check_config.py')!r}); "
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); print(m.ENV_VARS)"
    )
    proc = subprocess.run([sys.executable, "-I", "-B", "-c", code], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr
    assert "SLICE_EXPECTED_GLOBAL_DEVICES" in proc.stdout


def test_parse_env_reads_all_values():
    parsed = config.parse_env(
        {
            "SLICE_TOPOLOGY": "4x4x8",
            "SLICE_EXPECTED_GLOBAL_DEVICES": "256",
            "SLICE_EXPECTED_LOCAL_DEVICES": "8",
        }
    )
    assert parsed == config.SliceConfig(
        topology="4x4x8", expected_global_devices=256, expected_local_devices=8, distributed="auto"
    )
    # Multi-process slice: auto initialises the distributed runtime.
    assert parsed.should_initialize_distributed()


@pytest.mark.parametrize(
    "local, distributed, expected",
    [
        ("8", "", False),  # one process holds the whole slice
        ("", "", True),  # unknown: assume a multi-host slice
        ("8", "1", True),
        ("4", "0", False),
        ("4", "FALSE", False),
    ],
)
def test_should_initialize_distributed(local, distributed, expected):
    parsed = config.parse_env(
        {
            "SLICE_EXPECTED_GLOBAL_DEVICES": "8",
            "SLICE_EXPECTED_LOCAL_DEVICES": local,
            "SLICE_CHECK_DISTRIBUTED": distributed,
        }
    )
    assert parsed.should_initialize_distributed() is expected


BAD_ENVS = [
    pytest.param({}, "SLICE_EXPECTED_GLOBAL_DEVICES", id="global-missing"),
    pytest.param({"SLICE_EXPECTED_GLOBAL_DEVICES": "eight"}, "SLICE_EXPECTED_GLOBAL_DEVICES", id="global-not-int"),
    pytest.param({"SLICE_EXPECTED_GLOBAL_DEVICES": "0"}, "SLICE_EXPECTED_GLOBAL_DEVICES", id="global-zero"),
    pytest.param({"SLICE_EXPECTED_GLOBAL_DEVICES": "-8"}, "SLICE_EXPECTED_GLOBAL_DEVICES", id="global-negative"),
    pytest.param(
        {"SLICE_EXPECTED_GLOBAL_DEVICES": "8", "SLICE_EXPECTED_LOCAL_DEVICES": "4.0"},
        "SLICE_EXPECTED_LOCAL_DEVICES",
        id="local-not-int",
    ),
    pytest.param(
        {"SLICE_EXPECTED_GLOBAL_DEVICES": "8", "SLICE_EXPECTED_LOCAL_DEVICES": "16"},
        "SLICE_EXPECTED_LOCAL_DEVICES",
        id="local-above-global",
    ),
    pytest.param(
        {"SLICE_EXPECTED_GLOBAL_DEVICES": "8", "SLICE_TOPOLOGY": "2x2xtwo"}, "SLICE_TOPOLOGY", id="topology"
    ),
    pytest.param(
        {"SLICE_EXPECTED_GLOBAL_DEVICES": "8", "SLICE_CHECK_DISTRIBUTED": "maybe"},
        "SLICE_CHECK_DISTRIBUTED",
        id="distributed",
    ),
]


@pytest.mark.parametrize("environ, variable", BAD_ENVS)
def test_parse_env_rejects(environ, variable):
    with pytest.raises(config.ConfigError, match=variable):
        config.parse_env(environ)


# --- the program, single process, 8 host devices ---------------------------


def test_right_count_passes():
    proc = _run(
        _env(SLICE_TOPOLOGY="2x2x2", SLICE_EXPECTED_GLOBAL_DEVICES="8", SLICE_EXPECTED_LOCAL_DEVICES="8")
    )
    assert proc.returncode == 0, _output(proc)
    lines = proc.stdout.splitlines()
    for line in (
        "Total TPU devices (cores): 8",
        "Global device count: 8",
        "Local device count: 8",
        "Process index: 0 of 1",
    ):
        assert line in lines
    assert "psum over all 8 devices: OK (sum of ones 8, sum of indices 28, checked on 8 local devices)" in lines
    assert "Slice check passed for slice 2x2x2" in lines


def test_distributed_off_without_local_count_passes():
    proc = _run(_env(SLICE_EXPECTED_GLOBAL_DEVICES="8", SLICE_CHECK_DISTRIBUTED="0"))
    assert proc.returncode == 0, _output(proc)
    assert "Global device count: 8" in proc.stdout.splitlines()


def test_wrong_global_count_fails_with_3():
    proc = _run(_env(SLICE_TOPOLOGY="2x2x2", SLICE_EXPECTED_GLOBAL_DEVICES="16", SLICE_CHECK_DISTRIBUTED="0"))
    assert proc.returncode == config.EXIT_DEVICE_COUNT == 3, _output(proc)
    # The counts are still printed, so the log shows what was found.
    assert "Global device count: 8" in proc.stdout.splitlines()
    assert (
        "FAIL: slice 2x2x2: expected 16 global devices (SLICE_EXPECTED_GLOBAL_DEVICES), found 8"
        in proc.stderr.splitlines()
    )
    assert "psum" not in proc.stdout


def test_wrong_local_count_fails_with_3():
    proc = _run(
        _env(
            SLICE_EXPECTED_GLOBAL_DEVICES="8",
            SLICE_EXPECTED_LOCAL_DEVICES="4",
            SLICE_CHECK_DISTRIBUTED="0",
        )
    )
    assert proc.returncode == 3, _output(proc)
    assert "expected 4 local devices (SLICE_EXPECTED_LOCAL_DEVICES), found 8" in proc.stderr


@pytest.mark.parametrize("environ, variable", BAD_ENVS)
def test_bad_env_exits_2(environ, variable):
    proc = _run(_env(**environ))
    assert proc.returncode == config.EXIT_BAD_ENV == 2, _output(proc)
    assert proc.stderr.startswith("FAIL: bad environment: ")
    assert variable in proc.stderr
    assert "device count" not in proc.stdout  # stopped before touching JAX's devices


def test_distributed_init_failure_exits_5():
    # auto mode, no local count: the check assumes a multi-host slice, and off
    # a TPU cluster JAX cannot find a coordinator.
    proc = _run(_env(SLICE_EXPECTED_GLOBAL_DEVICES="8"))
    assert proc.returncode == config.EXIT_DISTRIBUTED_INIT == 5, _output(proc)
    assert "jax.distributed.initialize() failed" in proc.stderr
    assert "SLICE_CHECK_DISTRIBUTED=0" in proc.stderr


# --- the collective itself --------------------------------------------------

_COLLECTIVE_PROBE = """
import json, slice_check
results = slice_check.run_global_psum()
print(json.dumps({
    "results": results,
    "right": slice_check.check_collective(results, slice_check.expected_collective_result(8)),
    "wrong": slice_check.check_collective(results, (8, 27)),
    "empty": slice_check.check_collective([], (8, 28)),
}))
"""


def test_collective_sums_over_all_devices():
    proc = _run(_env(), "-c", _COLLECTIVE_PROBE)
    assert proc.returncode == 0, _output(proc)
    report = json.loads(proc.stdout.splitlines()[-1])

    devices = [device for device, _ in report["results"]]
    assert len(devices) == len(set(devices)) == 8
    # Every device holds the sum over all 8: 8 ones and 0+1+...+7 = 28.
    assert [tuple(got) for _, got in report["results"]] == [(8, 28)] * 8

    assert report["right"] == []
    # An injected wrong expectation is reported for each of the 8 devices.
    assert len(report["wrong"]) == 8
    assert "expected (8, 27)" in report["wrong"][0]
    assert report["empty"] == ["no local device returned a result"]


def test_wrong_collective_result_exits_4():
    # main() compares against expected_collective_result; make it expect a
    # different index sum and the real psum must be reported as wrong.
    code = (
        "import sys, slice_check\n"
        "slice_check.expected_collective_result = lambda n: (n, n * (n - 1) // 2 + 1)\n"
        "sys.exit(slice_check.main())\n"
    )
    proc = _run(_env(SLICE_TOPOLOGY="2x2x2", SLICE_EXPECTED_GLOBAL_DEVICES="8", SLICE_CHECK_DISTRIBUTED="0"), "-c", code)
    assert proc.returncode == config.EXIT_COLLECTIVE == 4, _output(proc)
    assert "FAIL: slice 2x2x2: psum over 8 devices is wrong" in proc.stderr
    assert "got (sum of ones, sum of indices) = (8, 28), expected (8, 29)" in proc.stderr
    assert "Slice check passed" not in proc.stdout


# --- two processes x 4 host devices: the collective crosses processes -------

# jax.distributed.initialize() on GKE finds its peers from TPU_WORKER_HOSTNAMES;
# here we pass the coordinator explicitly and tell main() not to initialise
# again, so everything after initialisation runs as it would on a slice.
_TWO_PROCESS_WRAPPER = """
import sys, jax
jax.distributed.initialize(coordinator_address=sys.argv[1], num_processes=2,
                           process_id=int(sys.argv[2]), initialization_timeout=30)
import slice_check
sys.exit(slice_check.main())
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run_two_processes(**slice_env: str) -> list[tuple[int, str, str]]:
    address = f"127.0.0.1:{_free_port()}"
    env = _env(host_devices=4, SLICE_CHECK_DISTRIBUTED="0", **slice_env)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _TWO_PROCESS_WRAPPER, address, str(i)],
            env=env, cwd=IMAGE_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for i in range(2)
    ]
    try:
        outs = [p.communicate(timeout=TIMEOUT_S) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, outs, strict=True)]


@pytest.mark.slow  # two JAX processes over a loopback coordinator
def test_two_processes_collective_spans_both():
    runs = _run_two_processes(
        SLICE_TOPOLOGY="2x2x2", SLICE_EXPECTED_GLOBAL_DEVICES="8", SLICE_EXPECTED_LOCAL_DEVICES="4"
    )
    for index, (code, out, err) in enumerate(runs):
        assert code == 0, out + err
        lines = out.splitlines()
        assert f"Process index: {index} of 2" in lines
        assert "Total TPU devices (cores): 8" in lines
        assert "Global device count: 8" in lines
        assert "Local device count: 4" in lines
        # Each process sees the sum over all 8 devices on its own 4: the
        # psum crossed the process boundary.
        assert "psum over all 8 devices: OK (sum of ones 8, sum of indices 28, checked on 4 local devices)" in lines


@pytest.mark.slow  # two JAX processes over a loopback coordinator
def test_two_processes_wrong_count_fail_together():
    runs = _run_two_processes(SLICE_EXPECTED_GLOBAL_DEVICES="16", SLICE_EXPECTED_LOCAL_DEVICES="4")
    for code, out, err in runs:
        assert code == 3, out + err
        assert "expected 16 global devices (SLICE_EXPECTED_GLOBAL_DEVICES), found 8" in err
