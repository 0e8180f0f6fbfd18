import signal
import sys

try:
    from .cli import main

    code = main()
except KeyboardInterrupt:   # before main() took charge of Ctrl-C: Python still starting up
    command = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "generator"
    print(f"{command}: interrupted (Ctrl-C); nothing was written" if command == "synth"
          else f"{command}: interrupted (Ctrl-C); stopped", file=sys.stderr)
    code = 130
# The command is over: a late Ctrl-C must not turn a finished run into a
# traceback while jsii stops its Node process at exit.
signal.signal(signal.SIGINT, signal.SIG_IGN)
sys.exit(code)
