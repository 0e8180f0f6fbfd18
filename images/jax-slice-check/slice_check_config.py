"""Environment contract of the jax-slice-check image.

Plain Python, no JAX: the manifest generator's tests load this file by path to
check that the env they put on the container matches what the image reads.
"""

# No `from __future__ import annotations`: with it, @dataclass looks the
# module up in sys.modules, which fails when a test loads this file by path
# without registering it there.
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, overload

TOPOLOGY = "SLICE_TOPOLOGY"
EXPECTED_GLOBAL_DEVICES = "SLICE_EXPECTED_GLOBAL_DEVICES"
EXPECTED_LOCAL_DEVICES = "SLICE_EXPECTED_LOCAL_DEVICES"
DISTRIBUTED = "SLICE_CHECK_DISTRIBUTED"

# Every variable the image reads, and the ones without which it refuses to run.
ENV_VARS = (TOPOLOGY, EXPECTED_GLOBAL_DEVICES, EXPECTED_LOCAL_DEVICES, DISTRIBUTED)
REQUIRED_ENV_VARS = (EXPECTED_GLOBAL_DEVICES,)

EXIT_OK = 0
EXIT_BAD_ENV = 2
EXIT_DEVICE_COUNT = 3
EXIT_COLLECTIVE = 4
EXIT_DISTRIBUTED_INIT = 5

# SLICE_CHECK_DISTRIBUTED values. "auto" (the default) initialises the
# distributed runtime unless this one process is expected to hold the whole
# slice (SLICE_EXPECTED_LOCAL_DEVICES == SLICE_EXPECTED_GLOBAL_DEVICES).
DISTRIBUTED_AUTO = "auto"
DISTRIBUTED_ON = "on"
DISTRIBUTED_OFF = "off"
_DISTRIBUTED_VALUES = {
    "": DISTRIBUTED_AUTO,
    "auto": DISTRIBUTED_AUTO,
    "1": DISTRIBUTED_ON,
    "true": DISTRIBUTED_ON,
    "0": DISTRIBUTED_OFF,
    "false": DISTRIBUTED_OFF,
}

# Chip grid such as "2x2x2" or "4x4x8"; only used in messages, but a typo here
# usually means the other numbers the generator computed are wrong too.
_TOPOLOGY_RE = re.compile(r"[1-9][0-9]*(x[1-9][0-9]*)*")


class ConfigError(ValueError):
    """A variable is missing or malformed; the message names it."""


@dataclass(frozen=True)
class SliceConfig:
    topology: str | None
    expected_global_devices: int
    expected_local_devices: int | None
    distributed: str  # one of DISTRIBUTED_AUTO / _ON / _OFF

    def should_initialize_distributed(self) -> bool:
        if self.distributed == DISTRIBUTED_AUTO:
            return self.expected_local_devices != self.expected_global_devices
        return self.distributed == DISTRIBUTED_ON


@overload
def _positive_int(environ: Mapping[str, str], name: str, required: Literal[True]) -> int: ...
@overload
def _positive_int(environ: Mapping[str, str], name: str, required: bool) -> int | None: ...


def _positive_int(environ: Mapping[str, str], name: str, required: bool) -> int | None:
    raw = environ.get(name, "").strip()
    if not raw:
        if required:
            raise ConfigError(f"{name} is required (a positive integer) but is not set")
        return None
    # Plain decimal digits only: int() would also take "+8", "8_0" or "٨".
    if not re.fullmatch(r"[0-9]+", raw) or int(raw) == 0:
        raise ConfigError(f"{name} must be a positive integer, got {raw!r}")
    return int(raw)


def parse_env(environ: Mapping[str, str]) -> SliceConfig:
    """Read and validate the contract; raises ConfigError naming the variable."""
    topology = environ.get(TOPOLOGY, "").strip() or None
    if topology is not None and not _TOPOLOGY_RE.fullmatch(topology):
        raise ConfigError(f"{TOPOLOGY} must look like 2x2x2, got {topology!r}")

    expected_global = _positive_int(environ, EXPECTED_GLOBAL_DEVICES, required=True)
    expected_local = _positive_int(environ, EXPECTED_LOCAL_DEVICES, required=False)
    if expected_local is not None and expected_local > expected_global:
        raise ConfigError(
            f"{EXPECTED_LOCAL_DEVICES}={expected_local} exceeds "
            f"{EXPECTED_GLOBAL_DEVICES}={expected_global}"
        )

    raw_distributed = environ.get(DISTRIBUTED, "").strip().lower()
    if raw_distributed not in _DISTRIBUTED_VALUES:
        raise ConfigError(
            f"{DISTRIBUTED} must be one of auto, 1, true, 0, false, got {raw_distributed!r}"
        )

    return SliceConfig(
        topology=topology,
        expected_global_devices=expected_global,
        expected_local_devices=expected_local,
        distributed=_DISTRIBUTED_VALUES[raw_distributed],
    )
