"""Entry point of the fine-tuning Job: `accelerate launch ... fine_tune.py`.

Exit codes: 0 when training finished or stopped for preemption with a
checkpoint saved, 2 for bad configuration, anything else for a crash.
"""

from __future__ import annotations

import signal
import sys

from finetune_config import load_config_or_exit


class StopFlag:
    """Set by SIGTERM; the training loop polls it between steps.

    The handler only records the request: saving from inside a signal handler
    could interrupt a collective operation half way.
    """

    def __init__(self) -> None:
        self.requested = False

    def __call__(self) -> bool:
        return self.requested

    def set(self, signum, frame) -> None:
        self.requested = True


def main() -> int:
    cfg = load_config_or_exit("fine_tune.py")
    stop = StopFlag()
    # Installed before the slow imports below, so an early SIGTERM is not lost.
    signal.signal(signal.SIGTERM, stop.set)

    import trainer

    try:
        trainer.train(cfg, stop)
    except trainer.SettingsError as err:
        print(f"fine_tune.py: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
