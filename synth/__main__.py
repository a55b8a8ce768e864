"""``python -m synth``: the same as the ``synth`` command."""

import sys

from synth.cli import main

if __name__ == "__main__":
    sys.exit(main())
