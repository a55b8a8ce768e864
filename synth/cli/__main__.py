"""``python -m synth.cli``: the same as ``python -m synth`` and the ``synth`` command."""

import sys

from synth.cli import main

if __name__ == "__main__":
    sys.exit(main())
