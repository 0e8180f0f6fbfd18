"""Check that a TPU slice is whole: every pod of the JobSet runs this.

Each process joins JAX's distributed runtime, prints its device counts in the
words of the TPU dynamic-slicing codelab, compares them with the counts the
manifest generator expects for the slice shape, and runs one psum over every
device of the slice. Exit codes (see slice_check_config): 0 ok, 2 bad
environment, 3 device count differs, 4 collective failed or wrong,
5 distributed runtime did not start; 1 is an unexpected Python error.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import slice_check_config as cfg

AXIS = "slice"


def expected_collective_result(device_count: int) -> tuple[int, int]:
    """What run_global_psum must return on every device: (n, 0 + 1 + ... + n-1)."""
    return device_count, device_count * (device_count - 1) // 2


def run_global_psum() -> list[tuple[str, tuple[int, ...]]]:
    """psum over all devices of all processes; returns what each local device got.

    Device i contributes the row [1, i]. Summing the ones counts the devices
    that took part; summing the indices also catches a device that answered
    twice or in another's place, which a count alone would miss.
    """
    devices = jax.devices()  # global: every process's devices, same order everywhere
    n = len(devices)
    mesh = Mesh(np.array(devices), (AXIS,))
    rows = np.stack([np.ones(n, np.int32), np.arange(n, dtype=np.int32)], axis=1)
    # The callback is asked only for shards on this process's devices, so each
    # process builds its part of the same global array with no data exchange;
    # that is what makes this safe to run as one of many processes.
    x = jax.make_array_from_callback(rows.shape, NamedSharding(mesh, P(AXIS)), lambda idx: rows[idx])
    psum = jax.jit(
        jax.shard_map(
            lambda block: jax.lax.psum(block, AXIS),
            mesh=mesh,
            in_specs=P(AXIS),
            # Keep one copy per device so each device's own result is checked.
            out_specs=P(AXIS),
        )
    )
    summed = psum(x)
    return [
        (str(shard.device), tuple(int(v) for v in np.asarray(shard.data).reshape(-1)))
        for shard in summed.addressable_shards
    ]


def check_collective(
    results: list[tuple[str, tuple[int, ...]]], expected: tuple[int, int]
) -> list[str]:
    """Problems with run_global_psum's results; empty when all is well."""
    if not results:
        return ["no local device returned a result"]
    return [
        f"device {device} got (sum of ones, sum of indices) = {got}, expected {expected}"
        for device, got in results
        if tuple(got) != tuple(expected)
    ]


def _fail(code: int, message: str) -> int:
    print(f"FAIL: {message}", file=sys.stderr, flush=True)
    return code


def main(environ: Mapping[str, str] | None = None) -> int:
    try:
        config = cfg.parse_env(os.environ if environ is None else environ)
    except cfg.ConfigError as err:
        return _fail(cfg.EXIT_BAD_ENV, f"bad environment: {err}")
    slice_name = f"slice {config.topology or '(topology not given)'}"

    if config.should_initialize_distributed():
        # No arguments: on GKE TPU pods JAX finds the coordinator and this
        # process's id itself (TPU_WORKER_HOSTNAMES / TPU_WORKER_ID).
        try:
            jax.distributed.initialize()
        except Exception as err:  # anything here means the slice cannot form
            return _fail(
                cfg.EXIT_DISTRIBUTED_INIT,
                f"{slice_name}: jax.distributed.initialize() failed: {err!r} "
                f"(set {cfg.DISTRIBUTED}=0 for a single-process run)",
            )

    global_count = jax.device_count()
    local_count = jax.local_device_count()
    print(f"Slice topology: {config.topology or '(not given)'}")
    print(f"Platform: {jax.default_backend()}")
    print(f"Process index: {jax.process_index()} of {jax.process_count()}")
    print(f"Total TPU devices (cores): {global_count}")
    print(f"Global device count: {global_count}")
    print(f"Local device count: {local_count}", flush=True)

    # Counts before the collective: with a device missing the psum would hang
    # or fail obscurely; this says what is wrong. The global count is the same
    # in every process, so all of them stop here together.
    mismatches = []
    if global_count != config.expected_global_devices:
        mismatches.append(
            f"expected {config.expected_global_devices} global devices "
            f"({cfg.EXPECTED_GLOBAL_DEVICES}), found {global_count}"
        )
    if config.expected_local_devices is not None and local_count != config.expected_local_devices:
        mismatches.append(
            f"expected {config.expected_local_devices} local devices "
            f"({cfg.EXPECTED_LOCAL_DEVICES}), found {local_count}"
        )
    if mismatches:
        return _fail(cfg.EXIT_DEVICE_COUNT, f"{slice_name}: " + "; ".join(mismatches))

    expected = expected_collective_result(global_count)
    try:
        results = run_global_psum()
    except Exception as err:
        return _fail(cfg.EXIT_COLLECTIVE, f"{slice_name}: psum over {global_count} devices raised {err!r}")
    problems = check_collective(results, expected)
    if problems:
        return _fail(
            cfg.EXIT_COLLECTIVE,
            f"{slice_name}: psum over {global_count} devices is wrong: " + "; ".join(problems),
        )

    print(
        f"psum over all {global_count} devices: OK "
        f"(sum of ones {expected[0]}, sum of indices {expected[1]}, "
        f"checked on {len(results)} local devices)"
    )
    print(f"Slice check passed for {slice_name}", flush=True)
    return cfg.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
