"""Container entry point (PID 1): runs `accelerate launch ...` and relays SIGTERM.

Kubernetes sends SIGTERM only to PID 1. If that were `accelerate launch`,
its torch elastic agent would pass the signal on, wait at most 30 s by
default, and then exit non-zero however cleanly the workers stopped. Here the
launcher never sees the signal: it goes straight to the training processes
(the launcher's children), which agree on a step, save a checkpoint and exit
0, so the launcher and the container exit 0 as well.

It also checks the configuration first, so a bad environment variable ends
the container at once with exit code 2 instead of failing in every process.

Usage: python launch.py accelerate launch [options] fine_tune.py
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from finetune_config import load_config_or_exit

POLL_SECONDS = 0.2


def children_of(pid: int) -> set[int]:
    """Process ids whose parent is `pid`, read from /proc."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                stat = f.read()
        except OSError:  # the process has exited meanwhile
            continue
        # Fields after the command name, which is in parentheses and may hold spaces.
        fields = stat.rpartition(")")[2].split()
        if int(fields[1]) == pid:
            found.add(int(entry))
    return found


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    # Fail fast with exit code 2 here: through the launcher a worker's exit 2
    # would surface as a generic failure, once per process.
    load_config_or_exit("launch.py")
    terminating = False

    def on_sigterm(signum, frame):
        nonlocal terminating
        terminating = True

    signal.signal(signal.SIGTERM, on_sigterm)
    launcher = subprocess.Popen(argv)
    signalled: set[int] = set()
    while launcher.poll() is None:
        if terminating:
            # Workers that start after the SIGTERM (still loading) get it too.
            for pid in children_of(launcher.pid) - signalled:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                signalled.add(pid)
        time.sleep(POLL_SECONDS)
    code = launcher.returncode
    return code if code >= 0 else 128 - code  # killed by a signal: shell convention


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
