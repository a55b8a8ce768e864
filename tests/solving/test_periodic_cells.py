"""Failed links repeated on a lattice of cells (synth.solving.periodic): the periodic network, its cells and
rounds, its schedule on the damaged torus and the idle links its certificate names."""

import json
from fractions import Fraction

import synth.solving.rounds as rounds
from synth.cli import main


def test_a_torus_too_large_for_its_timed_master_solves_its_periodic_network(monkeypatch, tmp_path, capsys):
    # 8x8 with a failed link, as a pod past the timed master's rows: the timed trees run on the network with the
    # failure repeated on cells of 4x8 (one working link idle, the group doubled); the schedule is executed here on
    # the damaged torus itself, link by link, and held against that torus's bound
    from synth.check import execute, measure_explicit
    from synth.check.bounds.bandwidth import bandwidth_bound, best_cut
    from synth.check.claims import read_certificate
    from synth.schedule.chunking import chunk_elements
    from synth.schedule.data import Block, Schedule
    from synth.schedule.lift import lift, lifted_weights
    from synth.topology.failures import damage, parse_failures
    from synth.topology.torus import parse_torus

    monkeypatch.setattr(rounds, "TIMED_MAX_ROWS", 500)       # the damaged torus's own master: 12 x 132 rows
    monkeypatch.setattr("synth.solving.periodic.PLANE_ROWS", 1_000)
    out = tmp_path / "c.json"
    assert main(["solve", "--torus", "8x8", "--fail-link", "0.0-0.1", "--out", str(out), "--time-limit", "8"]) == 0
    assert "failures repeated on cells of" in capsys.readouterr().err
    cert = read_certificate(str(out))
    p = cert.topology
    assert p.spec["failed"] == [[0, 1]] and p.spec["idle"] and p.failures.idle
    assert main(["check", str(out)]) == 0 and "VALID" in capsys.readouterr().out
    t = parse_torus("8x8")
    d = damage(t, parse_failures(t, links=["0.0-0.1"]))
    schedule = lift(cert.base, cert.group)
    blocks = []
    for b in schedule.blocks:    # the same transmissions on the damaged torus's own links
        src, dst = p.link_src[b.links], p.link_dst[b.links]
        links = d.link_ids(src.ravel(), dst.ravel()).reshape(b.links.shape)
        assert (links >= 0).all()
        blocks.append(Block(b.round, b.op, b.chunk, links))
    on_d = Schedule(d, schedule.n_chunks, schedule.n_rounds, tuple(blocks), schedule.collective, schedule.owner)
    assert execute(on_d) == []
    m = measure_explicit(on_d, chunk_elements(lifted_weights(cert.base, cert.group), cert.elements))
    bound = bandwidth_bound(d, cert.elements, best_cut(d)).value
    assert Fraction(cert.claims["bandwidth_term"]) == m.bandwidth_term
    assert Fraction(cert.claims["bandwidth_lower_bound"]) == bound
    assert Fraction(cert.claims["bandwidth_fraction"]) == bound / m.bandwidth_term > Fraction(9, 10)
    assert cert.claims["round_lower_bound"] == _round_bound(d)[0]


def test_a_3d_torus_takes_the_largest_cells_whose_master_and_layered_lp_fit(monkeypatch):
    # 8x8x8 with a failed link: cells of 8x8x4 fit the master's rows but their whole layered LP has 46,020 parent
    # choices; under a cap of 40,000 (at the default minute) the next cells, 4x4x8 (36,768), are taken; the network
    # is damaged everywhere (the local LP would free most of it), the damaged torus is not
    from synth.models.packing import layered_arcs
    from synth.solving.packing import LOCAL_RADIUS
    from synth.solving.periodic import damaged_everywhere, periodic_network
    from synth.topology.failures import damage, parse_failures
    from synth.topology.torus import parse_torus

    t = parse_torus("8x8x8")
    d = damage(t, parse_failures(t, links=["0-1"]))
    assert periodic_network(d, R=17).cell == (8, 8, 4)
    monkeypatch.setattr("synth.solving.periodic.MAX_ARCS", 40_000)
    assert periodic_network(d, R=17, time_limit=200).cell == (8, 8, 4)     # 320 choices a second: 64,000
    assert periodic_network(d, R=17, time_limit=1) is None                   # below a minute, a share: 667
    p = periodic_network(d, R=17, time_limit=60)
    assert p.cell == (4, 4, 8) and p.rows <= 3_500 and layered_arcs(p.topology, p.group).n_arcs <= 40_000
    assert p.group.order == 64 and len(p.topology.failures.idle) == 3       # four cells
    assert damaged_everywhere(p.topology, LOCAL_RADIUS) and not damaged_everywhere(d, LOCAL_RADIUS)


def test_the_fewest_rounds_are_tried_where_no_cells_fit_the_default(monkeypatch):
    # 8x8x8 with a failed link, its smallest cells (4x4x4) over the rows at R = 17 but not at the fewest, H + 4 = 16,
    # and over the parent choices allowed but not twice them: a long solve takes them there, a minute does not
    import synth.solving.periodic as periodic
    from synth.models.packing import layered_arcs
    from synth.topology.failures import damage, parse_failures
    from synth.topology.torus import parse_torus

    t = parse_torus("8x8x8")
    d = damage(t, parse_failures(t, links=["0-1"]))
    monkeypatch.setattr(periodic, "MAX_ROWS", 760)
    small = periodic.periodic_network(d, R=16)
    per, arcs = small.rows // 16, layered_arcs(small.topology, small.group).n_arcs
    assert small.cell == (4, 4, 4) and 16 * per <= 760 < 17 * per
    monkeypatch.setattr(periodic, "ARCS_PER_SECOND", 0)
    monkeypatch.setattr(periodic, "MAX_ARCS", int(0.75 * arcs))
    assert periodic.periodic_network(d, R=17) is None and periodic.periodic_network(d, R=16) is None
    p = periodic.fewest_rounds_network(d, 12, 17, 16, None)
    assert p.cell == (4, 4, 4) and p.R >= 16 and p.rows == p.R * per
    assert periodic.fewest_rounds_network(d, 12, 17, 16, 60) is None          # not in a short solve
    monkeypatch.setattr(periodic, "FEWEST_ARCS_SCALE", 1.0)
    assert periodic.fewest_rounds_network(d, 12, 17, 16, None) is None         # nor without the larger allowance
    # where the choices fit as they are, a short solve tries the fewest rounds too (its timed trees at them)
    monkeypatch.setattr(periodic, "MAX_ARCS", arcs)
    assert periodic.periodic_network(d, R=17, time_limit=60) is None
    p = periodic.fewest_rounds_network(d, 12, 17, 16, 60)
    assert p.cell == (4, 4, 4) and p.R == 16 and p.rows == 16 * per


def test_several_scattered_failed_links_repeat_on_cells_of_a_2d_torus(monkeypatch):
    # 16x16 with four scattered failed links: their copies by the translations of 8x8 cells leave 12 links idle
    # (2.34 % of the links, under MAX_IDLE_SHARE) and a master of 5,456 rows (under PLANE_ROWS, over MAX_ROWS)
    from synth.solving.periodic import periodic_network
    from synth.topology.failures import damage, parse_failures
    from synth.topology.torus import parse_torus

    t = parse_torus("16x16")
    links = ["0-1", "37-53", "100-101", "200-216"]
    d = damage(t, parse_failures(t, links=links))
    p = periodic_network(d, R=22)
    assert p.cell == (8, 8) and p.group.order == 4 and p.rows == 5_456
    moved = {tuple(sorted(((u // 16 + a) % 16 * 16 + (u % 16 + b) % 16, (v // 16 + a) % 16 * 16 + (v % 16 + b) % 16)))
             for u, v in d.failures.links for a in (0, 8) for b in (0, 8)}
    assert set(p.topology.failures.idle) == moved - set(d.failures.links) and len(moved) == 16
    monkeypatch.setattr("synth.solving.periodic.PLANE_ROWS", 5_000)
    assert periodic_network(d, R=22) is None
    monkeypatch.setattr("synth.solving.periodic.PLANE_ROWS", 5_500)
    monkeypatch.setattr("synth.solving.periodic.MAX_IDLE_SHARE", 0.02)
    assert periodic_network(d, R=22) is None


def test_a_long_solve_gives_the_periodic_timed_trees_more_rounds_within_the_rows():
    # 16x16 with a failed link, cells of 8x8: 71 rows per reduce round; from LONG_SOLVE seconds on, R rises to
    # `most`, or to the most rounds whose rows stay within max_rows (2,000 // 71 = 28); the cells stay the same
    from synth.solving.periodic import LONG_SOLVE, periodic_network
    from synth.topology.failures import damage, parse_failures
    from synth.topology.torus import parse_torus

    t = parse_torus("16x16")
    d = damage(t, parse_failures(t, links=["0-1"]))
    short = periodic_network(d, R=22, max_rows=2_000, time_limit=LONG_SOLVE - 1, most=30)
    assert short.R == 22 and short.rows == 22 * 71 and short.cell == (8, 8)
    for most, R in ((24, 24), (30, 28)):
        p = periodic_network(d, R=22, max_rows=2_000, time_limit=LONG_SOLVE, most=most)
        assert p.cell == short.cell and p.R == R and p.rows == R * 71 <= 2_000
    assert periodic_network(d, R=22, max_rows=2_000, time_limit=None, most=24).R == 24      # None: 600 s


def test_a_long_solve_gives_a_failed_chips_cells_the_wider_rows(monkeypatch):
    # 8x8x8: a failed link's cells of 4x8x8 (295 rows per reduce round) take LONG_ROWS // 295 = 15 rounds in a long
    # solve; a failed chip's cells of 4x4x8 (192 per round, the chip's copies leaves) LONG_ROWS_WIDE's, up to `most`
    from synth.solving.periodic import LONG_ROWS, periodic_network
    from synth.topology.failures import damage, parse_failures
    from synth.topology.torus import parse_torus

    t = parse_torus("8x8x8")
    link, chip = (damage(t, parse_failures(t, **kw)) for kw in ({"links": ["0-1"]}, {"nodes": ["0"]}))
    p = periodic_network(link, R=12, time_limit=600, most=30)
    assert p.cell == (4, 8, 8) and p.R == LONG_ROWS // 295 == 15 and p.rows == 15 * 295
    p = periodic_network(chip, R=12, time_limit=600, most=30)
    assert p.cell == (4, 4, 8) and p.leaves and p.R == 30 and p.rows == 30 * 192
    monkeypatch.setattr("synth.solving.periodic.LONG_ROWS_WIDE", LONG_ROWS)
    assert periodic_network(chip, R=12, time_limit=600, most=30).R == LONG_ROWS // 192 == 24


def test_a_long_solve_plans_the_periodic_rounds_past_the_timed_masters_own_limit(monkeypatch):
    # 16x16 with four scattered failed links, cells of 8x8 (248 rows per reduce round): at the default minute 22
    # reduce rounds (5,456 rows); in a long solve long_rounds(16) = 30, 7,440 rows, within LONG_ROWS_WIDE, which the
    # timed master's own limit for a damaged torus (TIMED_MAX_ROWS, 6,500: 26 rounds) no longer clips
    from synth.solving import SolveRequest, plan
    from synth.solving.periodic import LONG_ROWS_WIDE
    from synth.topology.failures import damage, parse_failures
    from synth.topology.torus import parse_torus

    t = parse_torus("16x16")
    d = damage(t, parse_failures(t, links=["0-1", "37-53", "100-101", "200-216"]))
    assert plan(SolveRequest(d, time_limit=60)).prepared.R == 22
    long = plan(SolveRequest(d, time_limit=840))
    assert long.construction == "timed-packing" and long.prepared.R == 30 and "7,440 load rows" in long.reason
    monkeypatch.setattr("synth.solving.periodic.LONG_ROWS_WIDE", 6_000)
    assert plan(SolveRequest(d, time_limit=840)).prepared.R == 24                  # 6,000 // 248
    monkeypatch.setattr("synth.solving.periodic.LONG_ROWS_WIDE", LONG_ROWS_WIDE)
    unraised = rounds.timed_rounds
    monkeypatch.setattr("synth.solving.packing.timed_rounds", lambda *a, planned_rows=0, **k: unraised(*a, **k))
    assert plan(SolveRequest(d, time_limit=840)).prepared.R == 26                  # knocked out: 6,500 // 248


def _round_bound(d):
    from synth.check.eccentricity import round_lower_bound
    from synth.symmetry.spec import default_group

    return round_lower_bound(d, default_group(d))


def test_a_schedule_over_a_link_it_says_it_leaves_idle_is_refused(tmp_path, capsys):
    out = tmp_path / "c.json"
    assert main(["solve", "--torus", "4x4", "--fail-link", "0-1", "--out", str(out), "--time-limit", "4"]) == 0
    data = json.loads(out.read_text())
    data["topology"]["idle"] = [[2, 3]]      # a link every schedule on 4x4 uses
    (tmp_path / "edited.json").write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["check", str(tmp_path / "edited.json")]) != 0
    cap = capsys.readouterr()
    assert "the idle link 2-3" in cap.out + cap.err
