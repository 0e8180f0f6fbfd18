"""The process entry point (the `gke-ml-platform` command and `python -m generator`): runs
one command and ends the process. Ctrl-C at any moment is one line and exit 130: before
generator.cli has taken charge of it (Python still importing the tool) this module catches
it, after, generator.cli does. Kept free of imports beyond the standard library's smallest,
so the moment before anything can catch Ctrl-C is as short as Python allows."""
import os
import signal
import sys

EXIT_INTERRUPTED = 130   # as generator.cli, which may not have been imported yet


def _early(command: str) -> int:
    print(f"{command}: interrupted (Ctrl-C); nothing was written" if command == "synth"
          else f"{command}: interrupted (Ctrl-C); stopped", file=sys.stderr)
    return EXIT_INTERRUPTED


def run() -> None:
    command = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "generator"
    try:
        try:
            from .cli import main

            code = main()
        except KeyboardInterrupt:   # before main() took charge of Ctrl-C: Python still starting up
            code = _early(command)
        # The command is over: a late Ctrl-C must not turn a finished run into a
        # traceback while jsii stops its Node process at exit.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except KeyboardInterrupt:       # between the command's end and the line above
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        code = EXIT_INTERRUPTED
    if code == EXIT_INTERRUPTED:
        # Interrupted: leave now, as the shell expects, without waiting for jsii to
        # stop a Node process the same Ctrl-C already ended (its temporary folder
        # goes with the next run, see generator/kernel/scratch.py).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
