"""Every notebook runs headless (small instances), shows each figure inline and saves it; the committed
notebooks carry the outputs of the full run (``python notebooks/run_all.py --inplace --fresh-cache``)."""

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if not p.name.startswith("."))
FIGURE = {"a_depth_traffic": "a_depth_traffic.png", "b_goodput": "b_goodput.png",
          "c_best_k_vs_paper": "c_best_k.png", "d_rectangular": "d_rectangular.png",
          "e_collectives": "e_collectives.png", "f_simulated": "f_simulated.png", "g_machines": "g_machines.png",
          "h_failures": ("h_failures.png", "h_failures_pods.png"), "i_fabrics": ("i_fabrics.png", "i_fabrics_sim.png")}
IDS = [p.stem for p in NOTEBOOKS]


def _figures(stem):
    """The figures a notebook saves (its FIGURE entry: a name, or a tuple of them)."""
    names = FIGURE[stem]
    return (names,) if isinstance(names, str) else names


def _code(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def _figure_cells(nb):
    """The code cells that save a figure."""
    return [c for c in _code(nb) if ".savefig(" in c.source]


def _shows_png(cell):
    return any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))


def _errors(nb):
    return [o for c in _code(nb) for o in c.get("outputs", []) if o.get("output_type") == "error"]


def test_every_notebook_has_its_figure():
    assert {p.stem for p in NOTEBOOKS} == set(FIGURE)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_runs_and_shows_its_figures(path, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("SYNTH_FIGURES_DIR", str(tmp_path))
    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    monkeypatch.delenv("MPLBACKEND", raising=False)
    committed = path.read_bytes()
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    assert not _errors(nb)
    for name in _figures(path.stem):
        figure = tmp_path / name
        assert figure.exists() and figure.stat().st_size > 10_000
    cells = _figure_cells(nb)
    assert len(cells) == len(list(tmp_path.glob("*.png"))) >= 1
    assert all(_shows_png(c) for c in cells), "a figure is saved but not shown inline"
    assert path.read_bytes() == committed  # running the notebook never rewrites the committed file


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_committed_notebook_carries_the_full_run(path):
    text = path.read_text(encoding="utf-8")
    nb = nbformat.reads(text, as_version=4)
    assert nb.metadata.get("synth", {}).get("small") is False, "outputs missing or from a --small run"
    code = _code(nb)
    # executed once, top to bottom, by run_all.py --inplace (a stripped notebook has no counts)
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1))
    assert not _errors(nb)
    assert _figure_cells(nb) and all(_shows_png(c) for c in _figure_cells(nb))
    assert any(o.get("output_type") == "stream" for c in code for o in c.get("outputs", []))
    # deterministic and portable: no timestamps, no paths of the machine that ran it, small
    assert all("execution" not in c.metadata for c in nb.cells)
    assert str(ROOT) not in text and str(Path.home()) + os.sep not in text
    assert path.stat().st_size < 600_000
    assert all((ROOT / "notebooks" / "figures" / name).exists() for name in _figures(path.stem))
