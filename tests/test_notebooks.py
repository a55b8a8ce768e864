"""Every notebook runs headless (small instances) and writes its figure."""

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("matplotlib")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
FIGURE = {"a_depth_traffic": "a_depth_traffic.png", "b_goodput": "b_goodput.png",
          "c_best_k_vs_paper": "c_best_k.png", "d_rectangular": "d_rectangular.png"}


def test_there_are_four_notebooks():
    assert {p.stem for p in NOTEBOOKS} == set(FIGURE)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("SYNTH_FIGURES_DIR", str(tmp_path))
    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path / "cache"))
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    figure = tmp_path / FIGURE[path.stem]
    assert figure.exists() and figure.stat().st_size > 10_000
    assert not any(o.get("output_type") == "error" for c in nb.cells for o in c.get("outputs", []))
