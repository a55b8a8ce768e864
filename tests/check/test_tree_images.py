"""Certificate version 3: components as images of a base tree plus changes (synth.check.tree_images).

Repair writes them (the healthy SP trees with what changed near the failures); every reader takes them, a
corrupted image is refused (one line, exit 2) or INVALID (exit 1), and the expansion is bounded."""

import json

import numpy as np
import pytest

import synth.check.base_json as base_json
from synth.check.certificate import IMAGES_VERSION, certificate_to_json, dumps, read_certificate, write_certificate
from synth.check.claims import check_certificate, check_file
from synth.check.tree_form import tree_parts
from synth.check.tree_images import TreeImages, expand_image, image_maps, image_trees
from synth.cli import main
from synth.errors import FileFormatError
from synth.schedule.data import BaseSchedule
from synth.schedule.forest import trees_base
from synth.solving import solve
from synth.solving.repair import repair
from synth.topology.failures import parse_failures
from synth.topology.torus import parse_torus


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A healthy 4x4x4 certificate and its repair around link 0-1, written by the CLI (version 3)."""
    d = tmp_path_factory.mktemp("images")
    healthy, out = d / "h.json", d / "r.json"
    assert main(["solve", "--torus", "4x4x4", "--out", str(healthy)]) == 0
    assert main(["repair", str(healthy), "--fail-link", "0-1", "--time-limit", "2", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["version"] == 3   # what every test here reads: tree images
    return healthy, out


def test_repair_writes_tree_images_that_are_much_smaller_and_check(files):
    _, out = files
    data = json.loads(out.read_text())
    assert data["version"] == IMAGES_VERSION == 3
    comps = data["base_schedule"]["components"]
    # SP-allreduce's 2d trees P(T0), each component one of them translated by its owner
    assert len(data["base_schedule"]["trees"]) == 6 and all("image" in c["tree"] for c in comps)
    cert = read_certificate(out)
    assert all(len(c["tree"]["changes"]) < cert.topology.n_vertices for c in comps)
    report = check_file(out)
    assert report.valid and report.metrics.transmissions == cert.base.n_transmissions * cert.group.order
    long = out.parent / "long.json"
    write_certificate(cert, long, compact=False)
    assert out.stat().st_size * 3 < long.stat().st_size
    # read back and written again: the same bytes (the file carries the images it was written with)
    again = out.parent / "again.json"
    write_certificate(cert, again)
    assert again.read_bytes() == out.read_bytes()
    assert dumps(certificate_to_json(cert)) == out.read_text()


@pytest.mark.parametrize("argv", [["check"], ["export", "--out", "{d}/e.jsonl"],
                                  ["simulate", "--size", "64KiB"], ["draw", "--out", "{d}/p.png"],
                                  ["run", "--engine", "jax", "--size", "4KiB", "--iters", "1", "--warmup", "0"]])
def test_every_reader_takes_the_images(files, argv, capsys):
    _, out = files
    args = [a.format(d=out.parent) for a in argv]
    assert main([args[0], str(out), *args[1:]]) == 0
    capsys.readouterr()


def test_repair_reads_a_version_3_file_and_refuses_it_with_one_line(files, capsys):
    _, out = files
    assert main(["repair", str(out), "--fail-link", "1-2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("synth: error:") and "already has failures" in err[0]


def _mutated(out, tmp_path, change):
    data = json.loads(out.read_text())
    change(data)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    return path


def _comp(data, c=0):
    return data["base_schedule"]["components"][c]["tree"]


def _shifted(data):
    """Component 0's image moved by one vertex: a forged map (another automorphism of the healthy torus)."""
    _comp(data)["image"]["shift"] = (_comp(data)["image"]["shift"] + 1) % 64


FORMAT_ERRORS = {
    "image of a base tree that does not exist": (
        lambda d: _comp(d)["image"].update(tree=len(d["base_schedule"]["trees"])), "not a base tree"),
    "shift outside the vertices": (lambda d: _comp(d)["image"].update(shift=64), "not a vertex"),
    "axes not a signed permutation": (lambda d: _comp(d)["image"].update(axes=[1, 1, 2]), "signed axes"),
    "axes as floats": (lambda d: _comp(d)["image"].update(axes=[1.0, 2, 3]), "signed axes"),
    "unknown key in the image": (lambda d: _comp(d)["image"].update(rotate=1), "exactly tree, shift, axes"),
    "changes out of order": (lambda d: _comp(d).update(changes=_comp(d)["changes"][::-1]), "increasing order"),
    "a change that is no quadruple": (lambda d: _comp(d)["changes"].append([63, 0]), "changes"),
    "an image beside parent arrays": (lambda d: _comp(d).update(parent=[-1] * 64), "only 'image' and 'changes'"),
    "changes without an image": (lambda d: d["base_schedule"]["components"][0].update(
        tree={"parent": d["base_schedule"]["trees"][0]["parent"], "up": d["base_schedule"]["trees"][0]["up"],
              "down": d["base_schedule"]["trees"][0]["down"], "changes": []}), "belong to a tree given as"),
    "a cycle made by a change": (lambda d: _comp(d)["changes"].append([63, 63, 1, 1]), "not another vertex"),
    "base trees in a version 2 file": (lambda d: d.update(version=2), "unknown key 'trees'"),
    "a base tree of the wrong length": (lambda d: d["base_schedule"]["trees"][0]["parent"].pop(), "list of 64"),
    "a send that is no link": (lambda d: _comp(d).update(changes=sorted(
        [c for c in _comp(d)["changes"] if c[0] != 5] + [[5, 0, 3, 9]])), "not a link"),
}


@pytest.mark.parametrize("name", list(FORMAT_ERRORS))
def test_malformed_images_are_one_line_and_exit_2(files, tmp_path, capsys, name):
    change, message = FORMAT_ERRORS[name]
    _, out = files
    path = _mutated(out, tmp_path, change)
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("synth: error:") and message in err[0], err


def test_a_forged_map_is_refused(files, tmp_path, capsys):
    """Another automorphism of the healthy torus: the trees change, so the file is no longer the certified schedule
    (its sends cross the failure, its claims no longer hold, or its changes no longer make trees)."""
    _, out = files
    code = main(["check", str(_mutated(out, tmp_path, _shifted))])
    text = capsys.readouterr()
    assert code in (1, 2)
    assert "INVALID" in text.out if code == 1 else text.err.startswith("synth: error:") and text.err.count("\n") == 1


FALSE_SCHEDULES = {
    # vertex 1 cut off: the image is no longer spanning, so vertex 1 never receives the chunk
    "an image that is not spanning": lambda d: _comp(d).update(changes=sorted(
        [c for c in _comp(d)["changes"] if c[0] != 1] + [[1, -1, 0, 0]])),
    # the failed link 0-1 used again by a change
    "a send over the failed link": lambda d: _comp(d).update(changes=sorted(
        [c for c in _comp(d)["changes"] if c[0] != 1] + [[1, 0, 1, 48]])),
}


@pytest.mark.parametrize("name", list(FALSE_SCHEDULES))
def test_false_images_are_invalid_exit_1(files, tmp_path, capsys, name):
    _, out = files
    path = _mutated(out, tmp_path, FALSE_SCHEDULES[name])
    assert main(["check", str(path)]) == 1
    assert "INVALID" in capsys.readouterr().out


def test_expansion_is_bounded(files, monkeypatch):
    _, out = files
    monkeypatch.setattr(base_json, "MAX_IMAGE_ENTRIES", 64 * 10)
    with pytest.raises(FileFormatError, match="more than the 640 entries"):
        read_certificate(out)


def test_the_writer_images_no_more_than_the_reader_expands(files, tmp_path, monkeypatch):
    # past the limit the components after it stay plain trees: the file reads back, checks, and keeps the images
    # it can (a repaired 16x16x16 with four links once wrote 26,485 images that its own read-back refused)
    import synth.check.tree_images as tree_images

    cert = read_certificate(files[1])
    n = len(json.loads(files[1].read_text())["base_schedule"]["components"])
    monkeypatch.setattr(base_json, "MAX_IMAGE_ENTRIES", 64 * 10)
    monkeypatch.setattr(tree_images, "MAX_IMAGE_ENTRIES", 64 * 10)
    write_certificate(cert, tmp_path / "few.json")
    comps = json.loads((tmp_path / "few.json").read_text())["base_schedule"]["components"]
    assert n > 10 and sum("image" in c["tree"] for c in comps) == 10 and len(comps) == n
    again = read_certificate(tmp_path / "few.json")
    assert check_certificate(again).valid and again.base.n_transmissions == cert.base.n_transmissions


def test_expand_image_is_the_image_under_the_map():
    t = parse_torus("4x4")
    parent = np.array([[-1, 0, 1, 2] + list(range(0, 12))])           # any array: the map carries it over
    up, down = np.arange(16)[None, :], np.arange(16, 32)[None, :]
    image = {"tree": 0, "shift": 5, "axes": [-2, 1]}
    p, u, d = expand_image(t, (parent, up, down), image, [[0, 3, 7, 8]])
    phi = image_maps(t, np.array([5]), np.array([[-2, 1]]))[0]
    assert sorted(phi.tolist()) == list(range(16))
    for x in range(16):
        if phi[x] == 0:
            assert (p[0], u[0], d[0]) == (3, 7, 8)
            continue
        assert p[phi[x]] == (phi[parent[0, x]] if parent[0, x] >= 0 else -1)
        assert (u[phi[x]], d[phi[x]]) == (up[0, x], down[0, x])
    with pytest.raises(ValueError, match="different lengths"):
        expand_image(parse_torus("4x6"), (np.full((1, 24), -1), np.zeros((1, 24), int), np.zeros((1, 24), int)),
                     {"tree": 0, "shift": 0, "axes": [2, 1]}, [])


def test_a_wrong_hint_costs_bytes_never_truth(tmp_path):
    """The writer stores the differences from whatever image the hint names: a hint naming other maps still
    writes the certified schedule."""
    t = parse_torus("6x6")
    r = repair(solve(t).certificate, parse_failures(t, links=["0-1"]), time_limit=0.5)
    cert = r.certificate
    hint = cert.tree_images
    rng = np.random.default_rng(0)
    wrong = TreeImages(hint.parent, hint.up, hint.down, hint.of, rng.integers(0, 36, hint.of.size), hint.axes[::-1])
    from dataclasses import replace
    write_certificate(cert, tmp_path / "good.json")
    write_certificate(replace(cert, tree_images=wrong), tmp_path / "wrong.json")
    good, bad = read_certificate(tmp_path / "good.json"), read_certificate(tmp_path / "wrong.json")
    assert (tmp_path / "good.json").stat().st_size < (tmp_path / "wrong.json").stat().st_size
    for back in (good, bad):
        assert np.array_equal(_sorted_rows(back.base), _sorted_rows(cert.base))
        assert check_certificate(back).valid


def _sorted_rows(b: BaseSchedule) -> np.ndarray:
    rows = np.stack([b.component, b.round, b.src, b.dst, b.op, b.route_links]).astype(np.int64)
    return rows[:, np.lexsort(rows[::-1])]


def test_trees_base_and_the_writer_agree_with_any_row_order():
    """trees_base builds rows tree by tree (the writer's and the executor's fast paths take them as they are);
    the same rows shuffled give the same tree parts, schedule blocks and checked claims."""
    t = parse_torus("6x6")
    r = repair(solve(t).certificate, parse_failures(t, links=["0-1"]), time_limit=0.5)
    parts = tree_parts(r.certificate.base)
    base = trees_base(r.certificate.topology, r.certificate.base.n_rounds, parts.parent, parts.up, parts.down,
                      r.certificate.base.weights)
    perm = np.random.default_rng(1).permutation(base.n_transmissions)
    shuffled = BaseSchedule(base.topology, base.n_rounds, base.component[perm], base.round[perm], base.src[perm],
                            base.dst[perm], base.op[perm], np.arange(perm.size + 1), base.route_links[perm],
                            base.weights)
    a, b = tree_parts(base), tree_parts(shuffled)
    assert all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("components", "parent", "up", "down"))
    sa, sb = base.as_schedule(), shuffled.as_schedule()
    assert [(x.round, x.op, sorted(zip(x.chunk.tolist(), x.links.ravel().tolist()))) for x in sa.blocks] == \
        [(x.round, x.op, sorted(zip(x.chunk.tolist(), x.links.ravel().tolist()))) for x in sb.blocks]
    assert all(np.all(np.diff(x.chunk) >= 0) for x in sa.blocks)   # chunks in increasing order, as execute wants
    images = image_trees(base.topology, a, r.certificate.tree_images)
    assert set(images) == set(range(base.n_components))


def test_repair_notes_say_when_each_better_schedule_was_written(tmp_path, capsys):
    healthy, out = tmp_path / "h.json", tmp_path / "r.json"
    assert main(["solve", "--torus", "6x6", "--out", str(healthy)]) == 0
    assert main(["repair", str(healthy), "--fail-link", "0-1", "--time-limit", "30", "--out", str(out)]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
    steps = [n for n in notes if "% of the certified bound" in n and "kept" not in n]
    assert steps[0].startswith("note: first valid schedule in") and "written at" in steps[0]
    assert all("written at" in n for n in steps if n.split(":")[1].strip().split(" ")[0] != "full")
    assert check_file(out).valid


def test_the_first_schedule_is_on_disk_before_the_later_steps(tmp_path):
    t = parse_torus("6x6")
    seen = []

    def written(c):
        path = tmp_path / f"{len(seen)}.json"
        write_certificate(c, path)
        seen.append(check_file(path).valid)

    r = repair(solve(t).certificate, parse_failures(t, links=["0-1"]), time_limit=30, on_better=written)
    assert seen and all(seen)
    assert sum("written at" in n for n in r.notes) == len(seen)
    fractions = [float(n.split(" % ")[0].split()[-1]) for n in r.notes if "written at" in n and " % " in n]
    assert fractions == sorted(fractions) and len(set(fractions)) == len(fractions)   # each one better
