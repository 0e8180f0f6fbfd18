import os
import signal
import sys

EXIT_INTERRUPTED = 130   # as generator.cli, which may not have been imported yet

try:
    from .cli import main

    code = main()
except KeyboardInterrupt:   # before main() took charge of Ctrl-C: Python still starting up
    command = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "generator"
    print(f"{command}: interrupted (Ctrl-C); nothing was written" if command == "synth"
          else f"{command}: interrupted (Ctrl-C); stopped", file=sys.stderr)
    code = EXIT_INTERRUPTED
# The command is over: a late Ctrl-C must not turn a finished run into a
# traceback while jsii stops its Node process at exit.
signal.signal(signal.SIGINT, signal.SIG_IGN)
if code == EXIT_INTERRUPTED:
    # Interrupted: leave now, as the shell expects, without waiting for jsii to
    # stop a Node process the same Ctrl-C already ended (its temporary folder
    # goes with the next run, see generator/kernel/scratch.py).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
sys.exit(code)
