"""Execute the notebooks headless and save their figures into notebooks/figures/.

Usage: ``python notebooks/run_all.py [NAME ...] [--small] [--inplace]``.  ``--small`` runs the quick
variant the test suite uses; ``--inplace`` also stores the outputs in the notebook files.
Full runs solve k-hop trees up to 64x64 (about half an hour on 2 cores the first time; solved
trees are cached, see synth.trees).
"""

import os
import sys
from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).resolve().parent


def main(argv):
    names = [a for a in argv if not a.startswith("--")]
    if "--small" in argv:
        os.environ["SYNTH_NOTEBOOK_SMALL"] = "1"
    os.environ.setdefault("SYNTH_FIGURES_DIR", str(HERE / "figures"))
    for path in sorted(HERE.glob("*.ipynb")):
        if names and path.stem not in names:
            continue
        print(f"running {path.name}", flush=True)
        nb = nbformat.read(path, as_version=4)
        nbclient.NotebookClient(nb, timeout=7200, kernel_name="python3",
                                resources={"metadata": {"path": str(HERE)}}).execute()
        if "--inplace" in argv:
            nbformat.write(nb, path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
