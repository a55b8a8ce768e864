"""synth solve on damaged networks and unbalanceable graphs: the packing path, certified, said on stderr."""

import json
from fractions import Fraction

import pytest

import synth.solving.rounds as rounds
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


def test_depth_sets_the_rounds_of_the_timed_trees_and_size_weighs_them(capsys):
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
    # --size weighs the rounds itself (tests/solving/test_candidates.py): the candidates include both of these
    assert main(["solve", "--torus", "4x4", "--fail-link", "0.0-0.1", "--size", "1MiB", "--time-limit", "6",
                 "--json"]) == 0
    chosen = json.loads(capsys.readouterr().out)
    assert chosen["valid"] and chosen["chosen"] in ("ring", "layered", "depth K=2") + tuple(
        f"timed R={r}" for r in range(4, 9))


def test_a_depth_bounded_lp_out_of_time_says_so_and_what_to_do(capsys):
    """HiGHS stopped by the time limit without a solution: the line says the time ran out, that the LPs tried
    shared it, and which flags help; not the solver's bare status."""
    assert main(["solve", "--mesh", "8x8", "--depth", "2", "--time-limit", "0.05"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "depth-bounded LP on mesh 8x8 found no solution within the time limit (0.05 s" in err[0]
    assert "give a larger --time-limit" in err[0] and "or a larger --depth" in err[0] and "(unknown)" not in err[0]


def test_a_depth_beyond_what_the_timed_trees_take_is_clipped_with_a_note(capsys, monkeypatch):
    """--depth K above what the timed trees' master LP takes: R clipped to the most that fits (the timed trees
    kept, and said), not the timed trees silently dropped for the layered ones."""
    from synth.symmetry.spec import default_group
    from synth.topology.failures import damage, parse_failures
    from synth.topology.torus import parse_torus

    t = parse_torus("4x4")
    orbits = default_group(damage(t, parse_failures(t, ["0.0-0.1"], []))).n_link_orbits
    monkeypatch.setattr(rounds, "TIMED_MAX_ROWS", 6 * orbits)      # room for 6 reduce rounds (mirrored), H = 4
    argv = ["solve", "--torus", "4x4", "--fail-link", "0.0-0.1", "--time-limit", "10", "--json"]
    assert main([*argv, "--depth", "100"]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert summary["algorithm"] == "timed-packing" and summary["rounds"] <= 12 and summary["valid"]
    assert "depth 100: the timed trees' master LP takes at most" in err and "clipped to 6 (12 rounds in all" in err
    assert main([*argv, "--depth", "6"]) == 0       # what fits is taken as asked, without a note
    out, err = capsys.readouterr()
    assert json.loads(out)["algorithm"] == "timed-packing" and "clipped" not in err


def test_the_notes_say_what_the_shares_allow_and_the_windows_pass_it(capsys):
    # eight ends of degree 3 on 4x4: the trees that reduce then copy cannot reach the volume bound, and the
    # notes say how far; the timed trees in windows (phases overlapping) pass that bound
    from synth.models.packing.phase_bound import phase_share_bound
    from synth.topology.failures import damage, parse_failures
    from synth.topology.torus import parse_torus

    links = ["0-1", "5-6", "10-11", "15-12"]
    argv = ["solve", "--torus", "4x4", *sum((["--fail-link", x] for x in links), []), "--time-limit", "5", "--json"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    t = parse_torus("4x4")
    b = phase_share_bound(damage(t, parse_failures(t, links=links)))
    assert b < 1 and f"passes {100 * b:.2f} % of the volume bound" in err
    cert = json.loads(out)
    assert cert["algorithm"] == "timed-packing" and Fraction(cert["bandwidth_fraction"]) > b + 0.05
    # one failed link leaves room: no such note
    assert main(["solve", "--torus", "4x4", "--fail-link", "0-1", "--time-limit", "5"]) == 0
    assert "reduces in one phase" not in capsys.readouterr().err


@pytest.mark.parametrize("shape, n_trees, kept", [("6x6", 4, "SP-allreduce lifted by Γ"),
                                                   ("4x6x8", 6, "the balanced family of the healthy solve, 3 tree(s)")])
def test_the_local_lp_of_a_solve_writes_tree_images(monkeypatch, tmp_path, capsys, shape, n_trees, kept):
    # a network past FULL_LP_ARCS takes the local layered LP, rounded onto the healthy trees: its certificate is
    # the healthy trees' images with their differences (version 3), and synth check re-derives it; on a torus
    # whose sides differ those trees are the balanced family of the healthy solve (3 trees and their negations)
    import synth.solving.packing as packing

    monkeypatch.setattr(packing, "FULL_LP_ARCS", 10)
    monkeypatch.setattr(packing, "damaged_everywhere", lambda *_: False)   # as on a pod: few vertices near it
    monkeypatch.setattr(rounds, "TIMED_MAX_ROWS", 0)      # as on the pods: no timed master after it
    monkeypatch.setattr("synth.solving.periodic.PLANE_ROWS", 0)
    monkeypatch.setattr("synth.solving.periodic.MAX_ROWS", 0)
    out = tmp_path / "c.json"
    assert main(["solve", "--torus", shape, "--fail-link", "0-1", "--out", str(out), "--time-limit", "10"]) == 0
    assert f"the LP changes the healthy trees ({kept}" in capsys.readouterr().err
    data = json.loads(out.read_text())
    assert data["version"] == 3 and data["provenance"]["algorithm"] == "layered-packing"
    base = data["base_schedule"]
    assert len(base["trees"]) == n_trees and all("image" in c["tree"] for c in base["components"])
    assert main(["check", str(out)]) == 0 and "VALID" in capsys.readouterr().out


@pytest.mark.parametrize("failure, healthy", [("--fail-node", True), ("--fail-link", False)])
def test_a_damaged_fabric_starts_from_the_healthy_trees_when_the_bound_barely_moves(capsys, failure, healthy):
    # two DGX A100 servers: GPU 1's NIC failed moves the certified bound by 1.067 times, and the timed master
    # starts from the healthy network's trees; its NVSwitch link failed moves it 7.5 times, and it does not
    from synth.topology.machines import machine_spec
    from synth.topology.spec import build_topology

    t = build_topology(machine_spec("dgx-a100:2"))
    what = str(int(t.nic_of(1))) if healthy else f"1-{int(t.link_dst[t.link_src == 1].min())}"
    assert main(["solve", "--machine", "dgx-a100:2", failure, what, "--time-limit", "8", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["valid"] is True
    started = [line for line in err.splitlines() if "started from the healthy network's timed LP" in line]
    assert bool(started) == healthy
    if healthy:
        assert "lifted trees kept" in started[0]


def test_a_fabric_whose_links_differ_gets_its_timed_rounds_under_the_fabric_row_limit(monkeypatch):
    # two MI250 nodes with a failed NIC: no symmetry left (no other server to rotate), 472 load rows per reduce
    # round; under the tori's row limit the timed trees got 13 reduce rounds, under the fabrics' the 16 such a
    # master takes
    from synth.solving import plan
    from synth.solving.request import SolveRequest
    from synth.topology.failures import damage, parse_failures
    from synth.topology.machines import machine_spec
    from synth.topology.spec import build_topology

    t = build_topology(machine_spec("mi250:2"))
    d = damage(t, parse_failures(t, nodes=[str(int(t.nic_of(1)))]))
    chosen = plan(SolveRequest(d, time_limit=5))
    assert chosen.construction == "timed-packing" and chosen.prepared.R == rounds.TIMED_UNEQUAL_ROUNDS == 16
    monkeypatch.setattr(rounds, "TIMED_FABRIC_ROWS", rounds.TIMED_MAX_ROWS)
    assert plan(SolveRequest(d, time_limit=5)).prepared.R == 13


def test_a_large_damaged_fabric_takes_32_rounds_only_where_they_fit_the_fabric_row_limit(monkeypatch):
    # four MI250 nodes with a failed NIC: the other three nodes rotate (order 3), 472 load rows per reduce round,
    # so 32 rounds are 15,104 rows: within the fabrics' 20,000, not within 15,000
    from synth.solving import plan
    from synth.solving.request import SolveRequest
    from synth.topology.failures import damage, parse_failures
    from synth.topology.machines import machine_spec
    from synth.topology.spec import build_topology

    t = build_topology(machine_spec("mi250:4"))
    d = damage(t, parse_failures(t, nodes=[str(int(t.nic_of(1)))]))
    assert plan(SolveRequest(d, time_limit=5)).prepared.R == 32
    monkeypatch.setattr(rounds, "TIMED_FABRIC_ROWS", 15_000)
    assert plan(SolveRequest(d, time_limit=5)).prepared.R == 16


@pytest.mark.parametrize("name, rounds", [("mi250:2", 16), ("mi250:4", 32), ("dgx-a100:4", 16), ("dgx-a100:8", 32)])
def test_a_fabric_of_more_than_32_compute_vertices_takes_more_timed_rounds(name, rounds):
    from synth.solving import plan
    from synth.solving.request import SolveRequest
    from synth.topology.machines import machine_spec
    from synth.topology.spec import build_topology

    chosen = plan(SolveRequest(build_topology(machine_spec(name)), time_limit=5))
    packing, _why = chosen.prepared                   # a healthy fabric is a user graph that no symmetry balances
    assert chosen.construction == "timed-packing" and packing.prepared.R == rounds
    assert f"{rounds} reduce rounds" in chosen.reason


@pytest.mark.parametrize("name, fabric", [("mi250:1", True), ("4x4", False)])
def test_fabrics_keep_idle_columns_longer_and_round_to_more_units(monkeypatch, name, fabric):
    # where links differ the timed master drops a column after TIMED_FABRIC_PURGE idle solves (the tori: after
    # the default 4) and its thousands of interior weights are rounded to UNEQUAL_UNITS units per owner (the
    # tori's: TIMED_UNITS)
    import synth.models.packing.timed as timed
    import synth.models.packing.timed_schedule as timed_schedule
    import synth.solving.packing as packing
    from synth.solving import solve
    from synth.topology.failures import damage, parse_failures
    from synth.topology.machines import machine_spec
    from synth.topology.spec import build_topology
    from synth.topology.torus import parse_torus

    seen = {}
    real_solve, real_pack = timed.solve_timed, timed_schedule.pack_timed

    def solve_timed(*a, **k):
        seen["purge"] = k["options"].purge
        return real_solve(*a, **k)

    def pack_timed(sol, units=1024):
        seen["units"] = units
        return real_pack(sol, units)

    monkeypatch.setattr(timed, "solve_timed", solve_timed)
    monkeypatch.setattr(timed_schedule, "pack_timed", pack_timed)
    t = build_topology(machine_spec(name)) if fabric else parse_torus(name)
    if not fabric:
        t = damage(t, parse_failures(t, links=["0-1"]))
    res = solve(t, time_limit=3)
    assert seen == ({"purge": packing.TIMED_FABRIC_PURGE, "units": packing.UNEQUAL_UNITS} if fabric else
                    {"purge": timed.TimedOptions().purge, "units": packing.TIMED_UNITS})
    assert packing.TIMED_FABRIC_PURGE > timed.TimedOptions().purge
    assert packing.UNEQUAL_UNITS > packing.TIMED_UNITS > packing.DEFAULT_UNITS
    if res.certificate.provenance["algorithm"] == "timed-packing":
        assert res.certificate.solver["units_per_owner"] == seen["units"]


def test_the_timed_rounding_to_many_units_keeps_the_lp_value():
    # a master that ends interior (no crossover, as a damaged fabric's) weighs every column: rounded to 64 units
    # per owner the schedule loses a visible share of the LP's value, at UNEQUAL_UNITS all but 0.1 % of it
    from synth.models.packing.timed import TimedOptions, solve_timed
    from synth.models.packing.timed_schedule import pack_timed
    from synth.solving.packing import UNEQUAL_UNITS, certified_fraction, certify_packed
    from synth.symmetry.spec import default_group
    from synth.topology.failures import damage, parse_failures
    from synth.topology.torus import parse_torus

    t = parse_torus("6x6")
    d = damage(t, parse_failures(t, links=["0-1"]))
    sol = solve_timed(d, default_group(d), R=8, time_limit=20, options=TimedOptions(crossover=False))
    fine = float(certified_fraction(certify_packed(pack_timed(sol, UNEQUAL_UNITS))))
    coarse = float(certified_fraction(certify_packed(pack_timed(sol, 64))))
    assert fine >= sol.fraction * (1 - 1e-3) > coarse


def test_a_tori_timed_lp_rounded_to_timed_units_keeps_its_value():
    # after the crossover a torus's master weighs few columns, but 1,024 units per owner still lose a few tenths
    # of a point (6x6: 0.4); TIMED_UNITS keep all but 0.1 % of the LP's value
    from synth.models.packing.timed import solve_timed
    from synth.models.packing.timed_schedule import pack_timed
    from synth.solving.packing import DEFAULT_UNITS, TIMED_UNITS, certified_fraction, certify_packed
    from synth.symmetry.spec import default_group
    from synth.topology.failures import damage, parse_failures
    from synth.topology.torus import parse_torus

    t = parse_torus("6x6")
    d = damage(t, parse_failures(t, links=["0-1"]))
    sol = solve_timed(d, default_group(d), R=8, time_limit=8)
    fine = float(certified_fraction(certify_packed(pack_timed(sol, TIMED_UNITS))))
    coarse = float(certified_fraction(certify_packed(pack_timed(sol, DEFAULT_UNITS))))
    assert fine >= sol.fraction * (1 - 1e-3) and fine > coarse


def _damaged_4x4():
    from synth.topology.failures import damage, parse_failures
    from synth.topology.torus import parse_torus

    t = parse_torus("4x4")
    return damage(t, parse_failures(t, links=["0-1"]))


def test_the_layered_class_bound_waits_for_the_layered_schedule_to_be_kept(monkeypatch):
    # where the timed trees follow the layered LP, the layered class's bound (which bounds layered schedules only)
    # is derived only if the layered schedule is kept: the timed trees win on 4x4 with a failed link, so none is
    from synth.solving import solve

    r = solve(_damaged_4x4(), time_limit=5)
    assert r.certificate.provenance["algorithm"] == "timed-packing" and "class_bound" not in r.certificate.claims
    assert not any("bound of the layered class" in n for n in r.notes)
    # the timed trees fail: the layered schedule is kept, and with it the bound of its class, checked
    import synth.models.packing.timed as timed
    from synth.check.claims import check_certificate
    from synth.errors import SynthError

    def fails(*_a, **_k):
        raise SynthError("no timed trees today")

    monkeypatch.setattr(timed, "solve_timed", fails)
    r = solve(_damaged_4x4(), time_limit=5)
    assert r.certificate.provenance["algorithm"] == "layered-packing" and "class_bound" in r.certificate.claims
    kept = [i for i, n in enumerate(r.notes) if "no timed trees today; the layered schedule is kept" in n]
    bound = [i for i, n in enumerate(r.notes) if n.startswith("bound of the layered class")]
    assert kept and bound and bound[0] > kept[0] and check_certificate(r.certificate).valid


def test_a_layered_lp_past_the_pairs_it_can_hold_is_refused_before_it_is_built(monkeypatch, capsys):
    # 4x4 with a failed link: its represented owners times its 16 vertices; one pair fewer allowed: one line, exit 2
    import synth.solving.limits as limits
    from synth.models.packing.layered import root_reps
    from synth.symmetry.spec import default_group

    d = _damaged_4x4()
    pairs = root_reps(d, default_group(d)).size * 16
    monkeypatch.setattr(limits, "MAX_PAIRS", pairs - 1)
    monkeypatch.setattr("synth.models.packing.layered_arcs", None)     # never reached: refused before
    assert main(["solve", "--torus", "4x4", "--fail-link", "0-1", "--time-limit", "5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"choose parents for {pairs:,} (owner, vertex) pairs, past the {pairs - 1:,}" in err[0]
    monkeypatch.undo()
    monkeypatch.setattr(limits, "MAX_PAIRS", pairs)
    assert main(["solve", "--torus", "4x4", "--fail-link", "0-1", "--time-limit", "5"]) == 0
