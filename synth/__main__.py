import sys

from synth.cli import main

sys.exit(main())
