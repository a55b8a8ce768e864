"""Pictures (synth.analysis.draw): every topology kind renders, the image is the size it says and not
blank, the colour scale is the loads (counted here independently, transmission by transmission), one
round can be chosen, failed parts are marked, and the bytes are the same twice."""

import json

import numpy as np
import pytest

from synth.analysis.cost import Network
from synth.analysis.draw import draw, render, scene
import synth.analysis.draw.contents as scene_module
from synth.analysis.draw.panels import failed_parts
from synth.analysis.draw.layout import layout
from synth.check.certificate import read_certificate
from synth.check.explicit import read_explicit
from synth.cli import main
from synth.errors import OptionError, SynthError
from synth.fileio import read_json
from synth.schedule import chunk_elements
from synth.schedule.lift import lift, lifted_chunk_elements

from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.image import imread  # noqa: E402

PETERSEN = {"format": "synth-topology", "version": 1, "name": "petersen", "vertices": 10,
            "links": [[0, 1], [1, 2], [2, 3], [3, 4], [4, 0], [0, 5], [1, 6], [2, 7], [3, 8], [4, 9],
                      [5, 7], [7, 9], [9, 6], [6, 8], [8, 5]]}

#: name -> the command that makes the file, and the layout it gets
CASES = {
    "torus-4x4": (["solve", "--torus", "4x4"], "grid"),
    "torus-3x3x3": (["solve", "--torus", "3x3x3"], "grid"),
    "hyperx-4x4": (["solve", "--hyperx", "4x4"], "grid"),
    "spine-leaf": (["solve", "--spine-leaf", "2,3,2"], "spine-leaf"),
    "petersen": (["solve", "--topology", "{petersen}"], "graph"),
    "ring-4x4": (["baseline", "ring", "--torus", "4x4"], "grid"),
    "dgx-a100-2": (["solve", "--machine", "dgx-a100:2"], "gpu-servers"),
    "tpu-slices": (["solve", "--machine", "tpu-v5e:2x2", "--slices", "2"], "multislice"),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("draw")
    topo = folder / "petersen.json"
    topo.write_text(json.dumps(PETERSEN))
    out = {}
    for name, (argv, _) in CASES.items():
        path = folder / (name + (".jsonl" if argv[0] == "baseline" else ".json"))
        argv = [a.format(petersen=topo) for a in argv]
        assert main(argv + ["--out", str(path)]) == 0
        out[name] = path
    return out


def independent_loads(path, size, element_bytes=4):
    """Bytes on every link in every round, counted over the explicit (lifted) schedule here."""
    n = size // element_bytes
    if str(path).endswith(".jsonl"):
        schedule, own, _ = read_explicit(path)
        sizes = chunk_elements(own, n)
    else:
        cert = read_certificate(read_json(path))
        schedule, sizes = lift(cert.base, cert.group), lifted_chunk_elements(cert.base, cert.group, n)
    loads = np.zeros((schedule.n_rounds, schedule.topology.n_links), dtype=np.int64)
    for b in schedule.blocks:
        per_chunk = sizes[b.chunk].astype(np.int64) * element_bytes
        np.add.at(loads[b.round - 1], b.links.ravel(), np.repeat(per_chunk, b.links.shape[1]))
    return loads


def heat_collections(fig):
    return [c for ax in fig.axes for c in ax.collections if isinstance(c, LineCollection) and c.get_array() is not None]


@pytest.mark.parametrize("name", list(CASES))
def test_every_kind_renders_with_the_loads_as_its_colour_scale(files, name, tmp_path):
    path = files[name]
    out = tmp_path / "p.png"
    d = draw(path, out, size=1 << 16)
    image = imread(out)
    assert image.shape[:2] == (d.height, d.width) and d.width == 1400
    assert float(image[..., :3].var()) > 0.01  # not blank
    assert d.layout == CASES[name][1]
    loads = independent_loads(path, 1 << 16)
    shown = loads[np.asarray(d.rounds) - 1]
    assert d.rounds == (tuple(range(1, loads.shape[0] + 1)) if loads.shape[0] <= 16 else d.rounds)
    assert len(d.rounds) == min(loads.shape[0], 16) and d.rounds[0] == 1 and d.rounds[-1] == loads.shape[0]
    assert (d.load_min, d.load_max) == (int(shown.min()), int(shown.max()))
    fig, drawing = render(scene(path, 1 << 16))
    heat = heat_collections(fig)
    assert len(heat) == len(drawing.rounds)
    for s, lines in zip(drawing.rounds, heat):
        assert lines.get_clim() == scale_of(shown)
        assert np.array_equal(lines.get_array(), loads[s - 1])


def scale_of(loads):
    """The colour scale: the smallest to the largest load, or 0 to the load when all are equal."""
    lo, hi = int(loads.min()), int(loads.max())
    return (lo if lo < hi else 0, hi)


def test_round_selects_one_panel_and_its_scale(files, tmp_path):
    path = files["torus-4x4"]
    loads = independent_loads(path, 1 << 20)
    fig, d = render(scene(path, round_=3))
    heat = heat_collections(fig)
    assert d.rounds == (3,) and len(heat) == 1
    assert heat[0].get_clim() == scale_of(loads[2]) == (0, loads[2].max())  # Omega = 1: one load on every link
    for bad in (0, 9):
        with pytest.raises(OptionError, match="1 to 8"):
            draw(path, tmp_path / "x.png", round_=bad)
    assert not (tmp_path / "x.png").exists()


def test_the_timeline_is_the_cost_model_per_round(files):
    from synth.analysis.cost import model_time
    from synth.check.metrics import measure_symmetric

    cert = read_certificate(read_json(files["torus-3x3x3"]))
    net = Network(alpha=2e-6)
    sc = scene(files["torus-3x3x3"], 1 << 20, net)
    m = measure_symmetric(cert.base, cert.group, lifted_chunk_elements(cert.base, cert.group, (1 << 20) // 4))
    assert sc.times.shape == (3, m.rounds)
    assert np.allclose(sc.times[0], 2e-6) and np.isclose(sc.times.sum(), model_time(m, net))
    assert np.allclose(sc.times[2], np.asarray(m.max_load) * 4 / net.bandwidth)


def test_trees_point_to_their_root(files):
    sc = scene(files["torus-4x4"])
    t, tree = sc.topology, sc.trees[0]
    assert tree.roots.tolist() == [0] and tree.links.size == 15
    assert sorted(t.link_src[tree.links].tolist()) == list(range(1, 16))  # every other vertex sends to its parent
    allgather = tree_of_allgather(files, sc)
    assert allgather.roots.tolist() == [0] and np.array_equal(np.sort(allgather.links), np.sort(tree.links))


def test_an_exchange_has_two_roots(files):
    path = files["torus-4x4"].with_name("ex.json")
    assert main(["solve", "--torus", "4x4", "--exchange", "--out", str(path)]) == 0
    tree = scene(path).trees[0]
    t = scene(path).topology
    assert tree.roots.size == 2 and t.link_ids(tree.roots[:1], tree.roots[1:])[0] >= 0  # adjacent
    assert tree.links.size == 16  # two trees of 14 edges in all, and the exchange both ways


def tree_of_allgather(files, sp):
    """The allgather half has copies only: its tree, reversed, is the same tree."""
    path = files["torus-4x4"].with_name("ag.json")
    assert main(["solve", "--torus", "4x4", "--collective", "allgather", "--out", str(path)]) == 0
    return scene(path).trees[0]


def test_same_bytes_twice(files, tmp_path):
    for ext in ("png", "svg"):
        a, b = tmp_path / f"a.{ext}", tmp_path / f"b.{ext}"
        draw(files["hyperx-4x4"], a)
        draw(files["hyperx-4x4"], b)
        assert a.read_bytes() == b.read_bytes()
    text = (tmp_path / "a.svg").read_text()
    assert "<dc:date>" not in text and "Matplotlib v" not in text
    assert b"Software" not in (tmp_path / "a.png").read_bytes()


def test_failed_parts_are_marked(tmp_path):
    """A damaged network's certificate is drawn on the healthy layout, its failures marked."""
    cert = tmp_path / "damaged.json"
    assert main(["solve", "--torus", "4x4", "--fail-link", "0-1", "--fail-node", "5", "--out", str(cert)]) == 0
    sc = scene(cert)
    pairs, vertices = failed_parts(sc.topology)
    assert pairs.tolist() == [[0, 1]] and vertices.tolist() == [5]
    healthy = scene(files_healthy(tmp_path)).topology
    assert layout(sc.topology).pos.tolist() == layout(healthy).pos.tolist()  # the healthy picture's places
    fig, _ = render(sc)
    red = [c for ax in fig.axes for c in ax.collections if c.get_gid() == "failed"]
    panels = len(sc.trees) + len(sc.rounds)  # every tree panel and every round drawn
    assert len(red) == 2 * panels  # a dashed line and a cross in each


def files_healthy(tmp_path):
    path = tmp_path / "healthy.json"
    assert main(["solve", "--torus", "4x4", "--out", str(path)]) == 0
    return path


def test_refusals(files, tmp_path, monkeypatch):
    with pytest.raises(OptionError, match="name it .png or .svg"):
        draw(files["torus-4x4"], tmp_path / "x.jpg")
    with pytest.raises(SynthError):
        draw(tmp_path / "missing.json", tmp_path / "x.png")
    with pytest.raises(OptionError, match="at least one element"):
        draw(files["torus-4x4"], tmp_path / "x.png", size=2)
    monkeypatch.setattr(scene_module, "MAX_DRAWN_VERTICES", 15)
    with pytest.raises(OptionError, match="at most 15 vertices"):
        draw(files["torus-4x4"], tmp_path / "x.png")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name,legend", [("dgx-a100-2", ["300 GB/s nvswitch", "25 GB/s nic", "25 GB/s rail"]),
                                         ("tpu-slices", ["50 GB/s ici", "3.125 GB/s dcn"])])
def test_links_are_as_wide_as_their_bandwidth_with_a_legend_in_gb_per_s(files, name, legend):
    fig, _ = render(scene(files[name], 1 << 16))
    t = scene(files[name], 1 << 16).topology
    heat = heat_collections(fig)[0]
    widths = np.asarray(heat.get_linewidths())
    bw = t.link_bandwidth
    assert widths.size == t.n_links and len(set(bw.tolist())) == 2
    fast, slow = bw == bw.max(), bw == bw.min()
    assert widths[fast].min() > widths[slow].max()      # every fast link wider than every slow one
    assert bandwidth_legends(fig) == [legend]    # once, on the first tree panel


def bandwidth_legends(fig):
    return [[text.get_text() for text in ax.get_legend().get_texts()] for ax in fig.axes
            if ax.get_legend() and ax.get_legend().get_title().get_text() == "links (per direction)"]


def test_equal_links_draw_as_before(files):
    fig, _ = render(scene(files["torus-4x4"], 1 << 16))
    assert len(set(np.asarray(heat_collections(fig)[0].get_linewidths()).tolist())) == 1
    assert bandwidth_legends(fig) == []
