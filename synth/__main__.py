"""``python -m synth``: the same as the ``synth`` command.

An interrupt that passed through a C library's ``PyRun_*`` call on its way to the CLI (which handles it and
returns 130 or 143) leaves CPython's "unhandled KeyboardInterrupt" flag set, and ``python -m`` then ends the
process by SIGINT instead of with that code (a serial campaign stopped by Ctrl-C, now and then, exited -2).
After an interrupt the process ends here with the CLI's code, once the exit handlers have run.
"""

import atexit
import os
import sys

from synth.cli import main
from synth.cli._common import EXIT_INTERRUPTED, EXIT_TERMINATED

if __name__ == "__main__":
    code = main()
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
