"""The SimGrid replay: packing, hand-computed max-min answers, the model on balanced rounds,
an independent fluid replay, the --engine plumbing and the missing-SimGrid path.

Every test that runs SimGrid skips, with the install hint as its reason, where
``python3-simgrid`` is not installed.
"""

import dataclasses
import json
import sys

import numpy as np
import pytest

from synth.analysis.cost import Network
from synth.analysis.simulate import INSTALL_HINT, Flows, SimOptions, pack, simgrid_available, simulate_schedule
from synth.analysis.simulate import _delays, _with_tails
from synth.analysis.simulate.run import Delays, _probe, run_driver, wait_list_for, write_inputs
from synth.baselines import build_baseline
from synth.cli import main
from synth.errors import SynthError
from synth.schedule.chunking import chunk_elements
from synth.schedule.exchange import exchange_allreduce
from synth.schedule.lift import lift, lifted_weights
from synth.schedule.sp import sp_allreduce
from synth.solving.khop import khop_tree, tree_base
from synth.symmetry.torus import torus_gamma
from synth.topology.torus import parse_torus

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from _fluid import max_min_rates, replay  # noqa: E402  (the test helper beside this file)

needs_simgrid = pytest.mark.skipif(not simgrid_available(), reason=INSTALL_HINT)
NET = Network()


@pytest.fixture(scope="module")
def t88():
    return parse_torus("8x8")


def _lifted(t, base):
    g = torus_gamma(t)
    return lift(base, g), lifted_weights(base, g)


@pytest.fixture(scope="module")
def k2_44():
    t = parse_torus("4x4")
    return _lifted(t, tree_base(t, khop_tree(t, 2, time_limit=10, cache=False)))


# ---------------------------------------------------------------- packing (no SimGrid needed)
def test_packing_gives_alias_hosts_to_a_second_route(k2_44):
    schedule, _ = k2_44
    f = pack(schedule, "deps")
    routes = {(int(f.r_src[r]), int(f.r_dst[r])) for r in range(f.r_src.size)}
    assert len(routes) == f.r_src.size  # SimGrid routes by host pair: each pair has one route
    # a depth-2 tree on 4x4 sends chunks from one node to another along two routes: aliases exist,
    # each standing for one vertex (its messages' sender)
    assert f.n_hosts > 16
    host_vertex = {}
    for m in range(f.n_messages):
        host_vertex.setdefault(int(f.r_src[f.m_route[m]]), set()).add(int(f.m_src[m]))
    assert all(len(v) == 1 for v in host_vertex.values())
    assert all(h == next(iter(v)) for h, v in host_vertex.items() if h < 16)


def test_messages_and_routes_against_brute_force(k2_44):
    """Pack groups transmissions by (round, sender, receiver, route) and gives each message its route's
    links: checked against dictionaries built one transmission at a time (routes of two lengths)."""
    schedule, _ = k2_44
    t = schedule.topology
    f = pack(schedule, "rounds")
    keys = [(b.round, int(t.link_src[row[0]]), int(t.link_dst[row[-1]]), tuple(int(x) for x in row))
            for b in schedule.blocks for row in b.links]
    assert len({len(k[3]) for k in keys}) == 2
    msg_of = {}
    for i, k in enumerate(keys):
        msg_of.setdefault(k, int(f.t_msg[i]))
        assert msg_of[k] == f.t_msg[i]  # one message per key ...
    assert len(set(msg_of.values())) == len(msg_of) == f.n_messages  # ... and one key per message
    for (rnd, u, v, route), m in msg_of.items():
        r = f.m_route[m]
        assert (f.m_round[m], f.m_src[m], f.m_dst[m], f.m_hops[m]) == (rnd, u, v, len(route))
        assert tuple(f.r_links[f.r_ptr[r]:f.r_ptr[r + 1]].tolist()) == route and f.r_dst[r] == v
    chunks = np.concatenate([b.chunk for b in schedule.blocks])
    assert np.array_equal(f.t_chunk, chunks)


def test_round_gates_count_a_nodes_messages_and_its_previous_round():
    b = build_baseline("ring", parse_torus("3"))
    f = pack(b.schedule, "rounds")
    assert f.n_messages == 24 and f.n_gates == 12
    gates = f.e_count[f.n_messages:]
    # a node sends 2 and receives 2 messages per round; after its first round it also waits for the last gate
    assert sorted(set(gates.tolist())) == [4, 5] and (gates == 4).sum() == 3
    assert (f.e_count[:f.n_messages] == (f.m_round > 1)).all()


def test_data_dependencies_follow_the_chunks_a_message_reads():
    t = parse_torus("4x4")
    schedule, _ = _lifted(t, sp_allreduce(t))
    f = pack(schedule, "deps")
    M = f.n_messages
    pre = np.repeat(np.arange(M), np.diff(f.e_ptr))
    dep = f.e_succ
    assert f.n_gates == 0 and (f.m_round[pre] < f.m_round[dep]).all()
    assert (f.m_dst[pre] == f.m_src[dep]).all()  # written at the sender of the dependent message
    assert (f.e_count[f.m_round == 1] == 0).all() and (f.e_count[f.m_round > 1] > 0).all()


# ---------------------------------------------------------------- hand-computed max-min answers
def _line_flows(bytes_, hops_equal):
    """Three vertices 0 -> 1 -> 2 (links 0 and 1): A = 0->1 [0], B = 0->2 [0, 1], C = 1->2 [1]."""
    if hops_equal:  # two one-hop flows on link 0
        routes = [[0], [0]]
        r_src, r_dst, m_route, hops = [0, 3], [1, 1], [0, 1], [1, 1]
    else:
        routes = [[0], [0, 1], [1]]
        r_src, r_dst, m_route, hops = [0, 0, 1], [1, 2, 2], [0, 1, 2], [1, 2, 1]
    n = len(m_route)
    i64 = lambda x: np.asarray(x, dtype=np.int64)  # noqa: E731
    return Flows(n, 0, 4, 2, i64(m_route), i64(hops), i64(r_src), i64(r_dst), i64([1] * n),
                 i64(range(n)), i64(range(n)), i64(r_src), i64(r_dst),
                 i64(np.cumsum([0] + [len(r) for r in routes])), i64(sum(routes, [])),
                 i64([0] * n), i64([0] * (n + 1)), i64([]), "deps"), i64(bytes_)


def _hop_delays(flows, net):
    """The delays of links without latencies of their own: ``hops * hop_latency`` per message."""
    return _delays(flows, flows.m_hops * net.hop_latency, True, net)


def _drive(tmp_path, flows, message_bytes, net, latency_at="start"):
    if latency_at == "end":
        driven, delays = _with_tails(flows, flows.m_hops * net.hop_latency, net)
        message_bytes = np.concatenate([message_bytes, np.zeros_like(message_bytes)])
    else:
        driven, delays = flows, _hop_delays(flows, net)
    write_inputs(tmp_path, driven, net.bandwidth, delays)
    result, finish = run_driver(tmp_path, "0", message_bytes)
    return finish[flows.n_messages:].tolist() if latency_at == "end" else finish.tolist()


@needs_simgrid
def test_three_flows_over_two_links_get_the_max_min_answer(tmp_path):
    # bandwidth 1e9 B/s, 1 us per hop, no alpha: A, C start at 1 us, B (two hops) at 2 us.
    # [1, 2] us: A and C alone, 1000 B each.  [2, 4]: A, B share link 0 and B, C link 1 at 0.5e9:
    # A (1000 B left) ends at 4 us.  [4, 6]: B and C share link 1 (link 0 has room, but B is held
    # at link 1): B ends at 6 us.  Then C alone: 1000 B in 1 us, ends at 7 us.  (Shares weighted by
    # route latency, CM02's default, would end B later and A sooner.)
    net = Network(bandwidth=1e9, hop_latency=1e-6, alpha=0.0)
    flows, nbytes = _line_flows([2000, 2000, 4000], hops_equal=False)
    finish = _drive(tmp_path, flows, nbytes, net)
    assert finish == pytest.approx([4e-6, 6e-6, 7e-6], rel=1e-9)
    assert replay(flows, nbytes.tolist(), 1e9, 0.0, 1e-6) == pytest.approx(finish, rel=1e-9)


@needs_simgrid
def test_hop_latency_paid_after_the_flow(tmp_path):
    # the same three flows, each paying its hop latency after its last byte: all start at 0 and share
    # 0.5e9 on both links; A and B end streaming at 4 us (A delivered at 5 us, B two hops later at
    # 6 us); C sends its last 2000 B alone in 2 us and is delivered at 6 + 1 = 7 us
    net = Network(bandwidth=1e9, hop_latency=1e-6, alpha=0.0)
    flows, nbytes = _line_flows([2000, 2000, 4000], hops_equal=False)
    finish = _drive(tmp_path, flows, nbytes, net, "end")
    assert finish == pytest.approx([5e-6, 6e-6, 7e-6], rel=1e-9)
    assert replay(flows, nbytes.tolist(), 1e9, 0.0, 1e-6, "end") == pytest.approx(finish, rel=1e-9)


@needs_simgrid
def test_two_flows_on_one_link_with_latency_on_the_links(tmp_path):
    # equal hops: the latency sits on the links.  Both start at 1 us + 0.5 us alpha, share 0.5e9:
    # the small one (1000 B) ends 2 us later; the big one then sends 2000 B alone in 2 us.
    net = Network(bandwidth=1e9, hop_latency=1e-6, alpha=0.5e-6)
    flows, nbytes = _line_flows([1000, 3000], hops_equal=True)
    assert _hop_delays(flows, net).link_latency == pytest.approx(1.5e-6)
    assert _drive(tmp_path, flows, nbytes, net) == pytest.approx([3.5e-6, 5.5e-6], rel=1e-9)


def test_wait_lists_grow_so_that_the_workers_hold_twice_the_busiest_round(tmp_path):
    flows = pack(build_baseline("bucket", parse_torus("8x8")).schedule, "rounds")  # 4 messages per node and round
    assert np.bincount(flows.m_round).max() == 256
    assert wait_list_for(flows) == 8  # the shortest list: 2048 workers of 8 hold 16,384 flows
    assert wait_list_for(flows, max_workers=3) == 171  # 3 lists of 171 hold the 512
    assert wait_list_for(flows, max_workers=1) == 512
    write_inputs(tmp_path, flows, 1e9, Delays(0.0, [], np.full(flows.n_messages, -1)), max_workers=3)
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert (meta["driver"], meta["wait_list"], meta["max_workers"]) == ("mailboxes", 171, 3)


@needs_simgrid
def test_progress_lines_count_the_flows_ended_and_the_simulated_clock(monkeypatch, t88):
    import synth.analysis.simulate.run as run

    monkeypatch.setattr(run, "PROGRESS_SECONDS", 1e-9)  # a line every 1024 flows
    b = build_baseline("bucket", t88)  # 7168 messages
    lines = []
    r = simulate_schedule(b.schedule, b.weights, [1 << 20], NET, label="bucket", progress=lines.append)[0]
    assert len(lines) == 7168 // 1024
    done = [int(x.split()[3].replace(",", "")) for x in lines]
    assert done == [1024 * (i + 1) for i in range(len(lines))]
    assert all(x.startswith("bucket at 1MiB: ") and " of 7,168 flows ended, simulated " in x for x in lines)
    clock = [float(x.split()[-2]) for x in lines]
    assert clock == sorted(clock) and 0 < clock[-1] <= r.seconds * 1e6


@needs_simgrid
@pytest.mark.parametrize("wait_list, max_workers", [(1, None), (3, None), (1, 3)])
def test_short_wait_lists_give_the_first_drivers_finish_times(tmp_path, k2_44, wait_list, max_workers):
    """Workers with lists of 1 or 3 comms (so flows overflow to idle and new workers, and timers batch
    messages of one delay), or only 3 workers whose lists then grow, end every message of a depth-2 tree
    at the same instant as the first driver, whether they start flows with ``sendto_async`` or as puts
    to the destinations' mailboxes."""
    schedule, weights = k2_44
    f = pack(schedule, "deps")
    nbytes = f.message_elements(chunk_elements(weights, 1 << 16)) * NET.element_bytes
    delays = _hop_delays(f, NET)
    assert len(delays.delays) > 1  # routes of 1 and 2 hops: messages wait for timers
    finish = {}
    for driver in ("lists", "short-lists", "mailboxes"):
        d = tmp_path / driver
        d.mkdir()
        write_inputs(d, f, NET.bandwidth, delays, driver, wait_list=wait_list,
                     max_workers=max_workers)
        finish[driver] = run_driver(d, "0", nbytes)[1]
    assert np.array_equal(finish["lists"], finish["short-lists"])
    assert np.array_equal(finish["lists"], finish["mailboxes"])
    assert len(set(finish["lists"].tolist())) > 4


@needs_simgrid
def test_dependencies_that_never_resolve_are_reported(tmp_path):
    flows, nbytes = _line_flows([1000, 1000, 1000], hops_equal=False)
    i64 = lambda x: np.asarray(x, dtype=np.int64)  # noqa: E731
    # message 2 waits for message 1 and message 1 for message 2: only message 0 can run
    stuck = dataclasses.replace(flows, e_count=i64([0, 1, 1]), e_ptr=i64([0, 0, 1, 2]), e_succ=i64([2, 1]))
    write_inputs(tmp_path, stuck, NET.bandwidth, _hop_delays(stuck, NET))
    with pytest.raises(SynthError, match="2 events never started"):
        run_driver(tmp_path, "0", nbytes)


def test_progressive_filling_of_the_reference():
    links = {0: [0], 1: [0, 1], 2: [1], 3: [1]}
    assert max_min_rates([0, 1, 2, 3], links, 3.0) == pytest.approx({0: 2.0, 1: 1.0, 2: 1.0, 3: 1.0})


# ---------------------------------------------------------------- the model on balanced rounds
@needs_simgrid
@pytest.mark.parametrize("name", ["sp", "exchange", "bucket"])
def test_balanced_one_hop_schedules_match_the_model(t88, name):
    if name == "bucket":
        b = build_baseline("bucket", t88)
        schedule, weights = b.schedule, b.weights
    else:
        schedule, weights = _lifted(t88, sp_allreduce(t88) if name == "sp" else exchange_allreduce(t88))
    for mode in ("rounds", "deps") if name != "bucket" else ("rounds",):
        for r in simulate_schedule(schedule, weights, [1 << 16, 1 << 26], NET, mode):
            assert r.seconds == pytest.approx(r.model_seconds, rel=1e-9), (name, mode, r.size)
    if name == "sp":  # the hop latency after the flow: the same round times
        r = simulate_schedule(schedule, weights, [1 << 20], NET, options=SimOptions(hop_latency_at="end"))[0]
        assert r.seconds == pytest.approx(r.model_seconds, rel=1e-9)
    with pytest.raises(SynthError, match="hop_latency_at"):
        simulate_schedule(schedule, weights, [1 << 20], NET, options=SimOptions(hop_latency_at="middle"))


@needs_simgrid
@pytest.mark.parametrize("mode, latency_at", [("rounds", "start"), ("deps", "start"), ("rounds", "end")])
def test_simgrid_agrees_with_an_independent_fluid_replay(k2_44, mode, latency_at):
    """A depth-2 tree (routes of 1 and 2 hops in a round) and Swing-B: SimGrid against _fluid."""
    t = parse_torus("4x4")
    b = build_baseline("swing-b", t)
    for schedule, weights in (k2_44, (b.schedule, b.weights)):
        n = (1 << 20) // NET.element_bytes
        r = simulate_schedule(schedule, weights, [n * NET.element_bytes], NET, mode,
                              options=SimOptions(hop_latency_at=latency_at))[0]
        assert r.hop_latency_at == latency_at
        f = pack(schedule, mode)
        nbytes = (f.message_elements(chunk_elements(weights, n)) * NET.element_bytes).tolist()
        ref = max(replay(f, nbytes, NET.bandwidth, NET.alpha, NET.hop_latency, latency_at))
        assert r.seconds == pytest.approx(ref, rel=1e-9)
        assert r.seconds <= r.model_seconds * (1 + 1e-12)  # routes in a round need not wait for the longest


@needs_simgrid
def test_replay_is_deterministic(k2_44):
    schedule, weights = k2_44
    a = simulate_schedule(schedule, weights, [1 << 16], NET, "deps")[0]
    b = simulate_schedule(schedule, weights, [1 << 16], NET, "deps")[0]
    assert a.seconds == b.seconds and a.messages == b.messages


# ---------------------------------------------------------------- the command line and --engine
@needs_simgrid
def test_cli_simulate_json_and_text(tmp_path, capsys):
    cert = tmp_path / "sp.json"
    assert main(["solve", "--torus", "4x4", "--out", str(cert)]) == 0
    capsys.readouterr()
    assert main(["simulate", str(cert), "--size", "64KiB,1MiB", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["size"] for r in out["rows"]] == [65536, 1 << 20] and out["mode"] == "rounds"
    for r in out["rows"]:
        assert r["simulated_over_model"] == pytest.approx(1, rel=1e-9) and 0 < r["fraction_of_bound"] < 1
    assert main(["simulate", str(cert), "--mode", "deps", "--hop-latency-at", "end"]) == 0
    text = capsys.readouterr().out
    assert "SimGrid replay, deps mode, 512 messages" in text and "1MiB" in text and "flow's end" in text


@needs_simgrid
def test_engine_simgrid_in_compare_and_solve_by_size(capsys):
    assert main(["compare", "--torus", "4x4", "--sizes", "64KiB", "--algorithms", "sp,exchange", "--engine",
                 "simgrid", "--json"]) == 0
    sim = json.loads(capsys.readouterr().out)
    assert main(["compare", "--torus", "4x4", "--sizes", "64KiB", "--algorithms", "sp,exchange", "--json"]) == 0
    model = json.loads(capsys.readouterr().out)
    assert sim["engine"] == "simgrid" and "engine" not in model
    for a, b in zip(sim["rows"], model["rows"]):  # balanced one-hop schedules: the same times
        assert a["algorithm"] == b["algorithm"] and a["seconds"] == pytest.approx(b["seconds"], rel=1e-9)
    assert main(["solve", "--torus", "4x4", "--size", "1MiB", "--engine", "simgrid", "--time-limit", "10",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["simulated_us"] > 0 and out["chosen"]


def test_engine_without_size_is_refused(capsys):
    assert main(["solve", "--torus", "4x4", "--engine", "simgrid"]) == 2
    assert "--engine times the candidates of --size" in capsys.readouterr().err


def test_without_simgrid_the_command_says_how_to_install(tmp_path, capsys, monkeypatch):
    cert = tmp_path / "sp.json"
    assert main(["solve", "--torus", "4x4", "--out", str(cert)]) == 0
    capsys.readouterr()
    monkeypatch.setenv("SYNTH_SIMGRID_PYTHON", sys.executable)  # synth's own interpreter: no simgrid there
    _probe.cache_clear()
    try:
        assert main(["simulate", str(cert)]) == 2
    finally:
        _probe.cache_clear()
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "apt-get install -y python3-simgrid" in err


# ---------------------------------------------------------------- simulate's readers and limits
def _ring_lines(tmp_path, capsys):
    path = tmp_path / "ring.jsonl"
    assert main(["baseline", "ring", "--torus", "4x4", "--out", str(path)]) == 0
    capsys.readouterr()
    return path.read_text().splitlines(keepends=True)


@pytest.mark.parametrize("edit", ["drop", "duplicate", "forge"])
def test_a_schedule_that_is_not_an_allreduce_is_never_timed(edit, tmp_path, capsys, monkeypatch):
    """Dropped, duplicated or forged transmissions: exit 1 (INVALID, as synth check and run) with one line, and
    SimGrid is never started.  Before, simulate timed them with exit 0 and no word."""
    import synth.analysis.simulate as sim

    lines = _ring_lines(tmp_path, capsys)
    if edit == "drop":
        lines = lines[:1] + lines[2:]
    elif edit == "duplicate":
        lines = lines + lines[1:2]
    else:   # the first transmission's chunk moved to another chunk: two copies of one, none of the other
        first = json.loads(lines[1])
        first["chunk"] = (first["chunk"] + 1) % 16
        lines[1] = json.dumps(first) + "\n"
    path = tmp_path / f"{edit}.jsonl"
    path.write_text("".join(lines))
    monkeypatch.setattr(sim, "simulate_schedule", lambda *a, **kw: pytest.fail("an invalid schedule was timed"))
    code = main(["simulate", str(path), "--size", "64KiB"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and "does not check" in err[0] and "not simulated" in err[0], err


def test_a_valid_file_is_checked_then_timed(tmp_path, capsys, monkeypatch):
    import synth.analysis.simulate as sim

    path = tmp_path / "ring.jsonl"
    path.write_text("".join(_ring_lines(tmp_path, capsys)))
    called = []
    monkeypatch.setattr(sim, "simulate_schedule", lambda *a, **kw: called.append(a) or [])
    sim.simulate(str(path), [1 << 16])
    assert called
