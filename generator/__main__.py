import signal
import sys

from .cli import main

code = main()
# The command is over: a late Ctrl-C must not turn a finished run into a
# traceback while jsii stops its Node process at exit.
signal.signal(signal.SIGINT, signal.SIG_IGN)
sys.exit(code)
