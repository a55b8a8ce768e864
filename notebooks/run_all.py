"""Execute the notebooks headless; each shows its figure inline and saves it into notebooks/figures/.

Usage: ``python notebooks/run_all.py [NAME ...] [--small] [--inplace] [--fresh-cache]``.

``--small``
    the quick variant the test suite uses (``SYNTH_NOTEBOOK_SMALL=1``); its figures go to a
    temporary folder, not notebooks/figures/.
``--inplace``
    also store the outputs (tables and inline figures) in the notebook files, without the volatile
    metadata (timestamps, kernel versions), so that a repository browser shows the study; the
    committed notebooks are made with ``python notebooks/run_all.py --inplace --fresh-cache``.
``--fresh-cache``
    solve every k-hop tree anew, in a temporary cache shared by this run's notebooks, instead of
    reusing trees cached by earlier solves (``$SYNTH_CACHE_DIR``, see :mod:`synth.solving.khop`).

The kernel imports ``synth`` from the checkout this script is in.  Full runs solve k-hop trees up
to 32x32 with 30 s per depth bound (the first notebook solves them, the others reuse its cache);
time-limited solves that stop before optimality depend on the machine's speed, so a rerun may
differ where a figure shows a gap.
"""

import os
import sys
import tempfile
import time
from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def notebooks(names=()):
    """The notebooks in this folder (all, or those whose stem is in ``names``), sorted by name."""
    paths = sorted(p for p in HERE.glob("*.ipynb") if not p.name.startswith("."))
    unknown = set(names) - {p.stem for p in paths}
    if unknown:
        raise SystemExit(f"run_all.py: error: no notebook named {', '.join(sorted(unknown))}")
    return [p for p in paths if not names or p.stem in names]


def execute(nb, timeout=7200):
    """Run ``nb`` in place in a fresh python3 kernel started in this folder."""
    nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(HERE)}}).execute()
    return nb


def clean(nb, small=False):
    """Drop what changes from run to run (timestamps, versions) and this machine's paths from ``nb``."""
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        outputs = []
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                out["text"] = out["text"].replace(str(ROOT) + os.sep, "").replace(str(ROOT), ".")
                # how printed text is split into messages depends on timing: keep one output per stream
                if outputs and outputs[-1].get("output_type") == "stream" and outputs[-1]["name"] == out["name"]:
                    outputs[-1]["text"] += out["text"]
                    continue
            outputs.append(out)
        if cell.cell_type == "code":
            cell.outputs = outputs
    nb.metadata.pop("widgets", None)
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["synth"] = {"small": small, "command": "python notebooks/run_all.py --inplace --fresh-cache"}
    return nb


def main(argv):
    names = [a for a in argv if not a.startswith("--")]
    unknown = {a for a in argv if a.startswith("--")} - {"--small", "--inplace", "--fresh-cache"}
    if unknown:
        raise SystemExit(f"run_all.py: error: unknown option {', '.join(sorted(unknown))}")
    from synth.fileio import write_atomic

    small = "--small" in argv or os.environ.get("SYNTH_NOTEBOOK_SMALL") == "1"
    if small and "--inplace" in argv:
        raise SystemExit("run_all.py: error: the committed notebooks hold the full run: "
                         "--inplace without --small or SYNTH_NOTEBOOK_SMALL=1")
    if small:
        os.environ["SYNTH_NOTEBOOK_SMALL"] = "1"
    # a --small run never replaces the committed figures (unless SYNTH_FIGURES_DIR says so)
    small_figures = Path(tempfile.gettempdir()) / "synth-notebook-figures-small"
    os.environ.setdefault("SYNTH_FIGURES_DIR", str(small_figures if small else HERE / "figures"))
    print(f"figures go to {os.environ['SYNTH_FIGURES_DIR']}", flush=True)
    # the kernel inherits this environment: it imports synth from this checkout
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    with tempfile.TemporaryDirectory(prefix="synth-cache-") as tmp:
        if "--fresh-cache" in argv:
            os.environ["SYNTH_CACHE_DIR"] = tmp
        for path in notebooks(names):
            print(f"running {path.name}", flush=True)
            start = time.perf_counter()
            nb = execute(nbformat.read(path, as_version=4))
            print(f"  {path.name}: {time.perf_counter() - start:.0f} s", flush=True)
            if "--inplace" in argv:
                write_atomic(path, nbformat.writes(clean(nb, small)) + "\n")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
