"""synth solve on damaged networks and unbalanceable graphs: the packing path, certified, said on stderr."""

import json

import pytest

from synth.cli import main


def mesh(n):
    links = [[i * n + j, i * n + j + 1] for i in range(n) for j in range(n - 1)]
    links += [[i * n + j, (i + 1) * n + j] for i in range(n - 1) for j in range(n)]
    return {"format": "synth-topology", "version": 1, "name": f"mesh {n}x{n}", "vertices": n * n, "links": links}


def test_a_damaged_torus_is_packed_certified_and_checked(tmp_path, capsys):
    out = tmp_path / "c.json"
    assert main(["solve", "--torus", "4x4", "--fail-link", "0.0-0.1", "--fail-node", "2.2", "--out", str(out),
                 "--json"]) == 0
    cap = capsys.readouterr()
    summary = json.loads(cap.out)
    # small networks: the timed trees follow the layered LP, and the better schedule is kept (docs/timed.md)
    assert summary["algorithm"] in ("layered-packing", "timed-packing") and summary["valid"]
    assert "no symmetry balances" in cap.err and "of the certified bound" in cap.err and "timed trees" in cap.err
    num, den = map(int, summary["bandwidth_fraction"].split("/"))
    assert 0.6 < num / den <= 1
    data = json.loads(out.read_text())
    assert data["topology"]["failed"] == [[0, 1], 10]
    assert main(["check", str(out)]) == 0
    explicit = tmp_path / "c.jsonl"
    assert main(["export", str(out), "--format", "explicit", "--out", str(explicit)]) == 0
    assert main(["check", str(explicit)]) == 0
    capsys.readouterr()
    # the checker rebuilds the damaged torus from the spec: a changed failure list is refused
    data["topology"]["failed"] = [[0, 4], 10]
    (tmp_path / "edited.json").write_text(json.dumps(data))
    assert main(["check", str(tmp_path / "edited.json")]) != 0


def test_a_mesh_file_takes_the_packing_path(tmp_path, capsys):
    path = tmp_path / "mesh.json"
    path.write_text(json.dumps(mesh(4)))
    assert main(["solve", "--topology", str(path), "--json"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["algorithm"] in ("layered-packing", "timed-packing")
    assert "the packing model" in cap.err


def test_a_disconnecting_failure_is_one_line(capsys):
    assert main(["solve", "--torus", "4x4", "--fail-node", "1", "--fail-node", "4", "--fail-node", "3",
                 "--fail-node", "12"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "the cut" in err


@pytest.mark.parametrize("collective", ["reduce-scatter", "allgather"])
def test_the_packed_trees_have_both_halves(tmp_path, capsys, collective):
    out = tmp_path / "h.json"
    assert main(["solve", "--torus", "4x4", "--fail-link", "0-1", "--collective", collective, "--out", str(out),
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["collective"] == collective and summary["rounds"] == 4
    assert main(["check", str(out)]) == 0


def test_depth_sets_the_rounds_of_the_timed_trees_and_size_says_to_use_it(capsys):
    # --depth K >= H on the packing path: R = K reduce rounds, 2K in all (the default H + 4 buys bandwidth
    # with rounds); the layered class at the same 2H rounds is contained, so the schedule is never worse
    assert main(["solve", "--torus", "4x4", "--fail-link", "0.0-0.1", "--depth", "4", "--time-limit", "20",
                 "--json"]) == 0
    short = json.loads(capsys.readouterr().out)
    assert short["rounds"] <= 8 and short["valid"]
    assert main(["solve", "--torus", "4x4", "--fail-link", "0.0-0.1", "--time-limit", "20", "--json"]) == 0
    default = json.loads(capsys.readouterr().out)
    frac = lambda s: int(s.split("/")[0]) / int(s.split("/")[1])          # noqa: E731
    assert default["rounds"] > short["rounds"]
    assert frac(default["bandwidth_fraction"]) > frac(short["bandwidth_fraction"])
    assert main(["solve", "--torus", "4x4", "--fail-link", "0.0-0.1", "--size", "1MiB"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "give --depth K instead" in err[0]


def test_a_depth_bounded_lp_out_of_time_says_so_and_what_to_do(capsys):
    """HiGHS stopped by the time limit without a solution: the line says the time ran out, that the LPs tried
    shared it, and which flags help; not the solver's bare status."""
    assert main(["solve", "--mesh", "8x8", "--depth", "2", "--time-limit", "0.05"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "depth-bounded LP on mesh 8x8 found no solution within the time limit (0.05 s" in err[0]
    assert "give a larger --time-limit" in err[0] and "or a larger --depth" in err[0] and "(unknown)" not in err[0]
