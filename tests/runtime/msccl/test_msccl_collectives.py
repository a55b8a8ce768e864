"""MSCCL XML of reduce-scatter and allgather: coll="reducescatter" / "allgather" with the runtimes' buffers,
executed by synth's interpreter in and out of place; mutations and in-place-only bugs refused."""

import re
import xml.etree.ElementTree as ET
from dataclasses import replace

import numpy as np
import pytest

from synth.baselines import build_baseline
from synth.baselines.halves import baseline_half
from synth.errors import ScheduleError
from synth.runtime.msccl.check import check_xml, interpret, parse_xml
from synth.runtime.msccl.export import export_msccl
from synth.schedule import tree_schedule
from synth.schedule.collective import collective_half
from synth.schedule.lift import lift, lifted_chunk_elements
from synth.schedule.sp import sp_allreduce
from synth.schedule.spineleaf import spine_leaf_star
from synth.symmetry.spec import default_group
from synth.symmetry.torus import torus_gamma
from synth.topology.spineleaf import parse_spine_leaf
from synth.topology.torus import parse_torus

HALVES = ("reduce-scatter", "allgather")
XML_COLL = {"reduce-scatter": "reducescatter", "allgather": "allgather"}


def sp_half(shape, collective):
    t = parse_torus(shape)
    return lift(collective_half(sp_allreduce(t), collective), torus_gamma(t))


def checked(ex, coll):
    rep = check_xml(ex.xml, coll=coll)
    assert rep.ok, rep.errors[:5]
    assert rep.race_checked, rep.notes
    return rep


def gpu_sizes(xml):
    return {tuple(map(int, m)) for m in re.findall(r'i_chunks="(\d+)" o_chunks="(\d+)"', xml)}


@pytest.mark.parametrize("collective", HALVES)
@pytest.mark.parametrize("shape", ["3x3", "4x4", "3x3x3"])
def test_sp_halves_on_tori_run_in_and_out_of_place(shape, collective):
    ex = export_msccl(sp_half(shape, collective))
    coll = XML_COLL[collective]
    rep = checked(ex, coll)
    assert rep.executed[:2] == ["out-of-place", "in-place"]
    p = ex.ngpus
    block = ex.nchunksperloop // p
    assert ex.coll == coll and f'coll="{coll}" inplace="1" outofplace="1"' in ex.xml
    assert block * p == ex.nchunksperloop and block == 2 * len(shape.split("x"))  # |Γ| = 2d chunks per node
    assert gpu_sizes(ex.xml) == {(ex.nchunksperloop, block) if coll == "reducescatter" else (block, ex.nchunksperloop)}
    # the runtimes' layout: rank r's chunks fill units [r*B, (r+1)*B) of the vector
    owner = sp_half(shape, collective).owner
    assert np.array_equal(ex.unit_offset // block, owner)


@pytest.mark.parametrize("collective", HALVES)
def test_spine_leaf_k_hop_and_baseline_halves(collective):
    s = parse_spine_leaf("2,4,2")
    t = parse_torus("4x4")
    parent = np.full(t.n_vertices, -1, dtype=np.int64)  # a depth-2 tree: hubs at even coordinates
    for v in range(1, t.n_vertices):
        c = np.unravel_index(v, t.shape)
        hub = int(np.ravel_multi_index(tuple((x // 2) * 2 for x in c), t.shape))
        parent[v] = 0 if hub == v else hub
    sources = [lift(collective_half(spine_leaf_star(s), collective), default_group(s)),
               lift(collective_half(tree_schedule(t, parent, 0), collective), torus_gamma(t)),
               baseline_half(build_baseline("ring", t), collective),
               baseline_half(build_baseline("bucket", t), collective)]
    for src in sources:
        checked(export_msccl(src), XML_COLL[collective])


@pytest.mark.parametrize("collective", HALVES)
def test_in_place_only_and_out_of_place_only(collective):
    src = sp_half("3x3", collective)
    coll = XML_COLL[collective]
    only_in = export_msccl(src, outofplace=False)
    assert checked(only_in, coll).executed[:1] == ["in-place"]
    only_out = export_msccl(src, inplace=False)
    assert checked(only_out, coll).executed[:1] == ["out-of-place"]
    if collective == "allgather":  # in place the own block is already in the output: no local copy
        assert 'type="cpy"' not in only_in.xml and 'type="cpy"' in export_msccl(src, initial_copy=False).xml
    for ic in (False, True):
        checked(export_msccl(src, initial_copy=ic), coll)


def test_uneven_blocks_keep_their_chunk_sizes():
    t = parse_torus("4x4")
    base = collective_half(sp_allreduce(t), "reduce-scatter")
    g = torus_gamma(t)
    sizes = lifted_chunk_elements(base, g, 16 * 10)  # blocks of 10 over 4 chunks: 2, 2, 3, 3
    ex = export_msccl((lift(base, g), sizes))
    assert ex.nchunksperloop == 160 and gpu_sizes(ex.xml) == {(160, 10)}
    checked(ex, "reducescatter")


@pytest.mark.parametrize("collective", HALVES)
def test_blocks_of_different_weight_share_one_block_size(collective):
    s = sp_half("3x3", collective)
    w = np.ones(s.n_chunks, dtype=np.int64)
    w[s.owner == 0] = [1, 2, 1, 2]  # block 0 weighs 6, the others 4: B = lcm(3, 4) = 12 MSCCL chunks
    ex = export_msccl((s, w))
    assert ex.nchunksperloop == 9 * 12
    units = np.diff(np.r_[ex.unit_offset[ex.order], ex.nchunksperloop])[np.argsort(ex.order)]
    assert units[s.owner == 0].tolist() == [2, 4, 2, 4] and set(units[s.owner == 1].tolist()) == {3}
    checked(ex, XML_COLL[collective])
    w[s.owner == 4] = 0
    with pytest.raises(ScheduleError, match="GPU 4 owns no chunk"):
        export_msccl((s, w))


def _drop_reduction(xml):
    """Turn the first reduce-receive into a plain receive: one contribution is lost."""
    return xml.replace('type="rrc"', 'type="r"', 1)


def _shift_output(xml):
    """Receive into the wrong output chunk: the first reception into o at offset 0 goes to offset 1."""
    return re.sub(r'(type="rrc" srcbuf="[io]" srcoff="\d+" dstbuf="o" dstoff=)"0"', r'\1"1"', xml, count=1)


def _drop_message(xml):
    """Remove one send and its receive (the last steps of a connection, with the nops before them)."""
    root = ET.fromstring(xml)
    gpus = {g.get("id"): g for g in root.iter("gpu")}

    def last(tb):
        steps = list(tb)
        k = len(steps) - 1
        while k > 0 and steps[k - 1].get("type") == "nop":
            k -= 1
        return steps[k:] if steps and steps[-1].get("hasdep") == "0" else None

    for g in root.iter("gpu"):
        for tb in g.iter("tb"):
            if tb.get("send") == "-1":
                continue
            peer = gpus[tb.get("send")]
            rtb = next(t for t in peer.iter("tb") if t.get("recv") == g.get("id") and t.get("chan") == tb.get("chan"))
            a, b = last(tb), last(rtb)
            if a and b and len(a) < len(list(tb)) and len(b) < len(list(rtb)):
                for t, drop in ((tb, a), (rtb, b)):
                    for st in drop:
                        t.remove(st)
                return ET.tostring(root, encoding="unicode")
    raise AssertionError("no message to drop")


@pytest.mark.parametrize("collective", HALVES)
def test_mutations_are_refused(collective):
    x = export_msccl(sp_half("3x3", collective)).xml
    coll = XML_COLL[collective]
    other = "allgather" if coll == "reducescatter" else "reducescatter"
    wrong = "not the sum over all GPUs of its block" if coll == "reducescatter" else "not the input of the block's GPU"
    cases = {"drop a message": (_drop_message(x), wrong),
             "drop a step": (re.sub(r'\n *<step s="0" type="(?:r|rrc)"[^\n]*\n', "\n", x, count=1), "step numbers"),
             "wrong coll": (x.replace(f'coll="{coll}"', f'coll="{other}"'), f"for {other}"),
             "allreduce coll": (x.replace(f'coll="{coll}"', 'coll="allreduce"'), "for allreduce"),
             "wrong block size": (re.sub(r'o_chunks="(\d+)"', lambda m: f'o_chunks="{int(m[1]) + 1}"', x),
                                  "must be")}
    if coll == "reducescatter":
        cases["lost contribution"] = (_drop_reduction(x), wrong)
        cases["wrong output offset"] = (_shift_output(x), "output chunk")
    else:
        send = r'(type="s" srcbuf="o" srcoff=")(\d+)(" dstbuf="o" dstoff="\d+" cnt="2")'
        cases["wrong source offset"] = (re.sub(send, lambda m: f"{m[1]}{int(m[2]) + 1}{m[3]}", x, count=1), wrong)
    for label, (text, message) in cases.items():
        assert text != x, label
        rep = check_xml(text)
        assert not rep.ok, label
        assert any(message in e for e in rep.errors), (label, rep.errors[:3])
    assert any("expected" in e for e in check_xml(x, coll=other).errors)


HEAD = ('<algo name="t" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="{coll}" inplace="1" '
        'outofplace="1" minBytes="0" maxBytes="0">\n')


def _step(s, typ, sb, so, db, do, depid=-1, deps=-1, hasdep=0):
    return (f'      <step s="{s}" type="{typ}" srcbuf="{sb}" srcoff="{so}" dstbuf="{db}" dstoff="{do}" cnt="1" '
            f'depid="{depid}" deps="{deps}" hasdep="{hasdep}"/>\n')


def _two_gpus(coll, gpu):
    """A 2-GPU algorithm; ``gpu(r)`` gives GPU r's (i_chunks, o_chunks, [(send, recv, [steps])])."""
    out = [HEAD.format(coll=coll)]
    for r in range(2):
        ic, oc, tbs = gpu(r)
        out.append(f'  <gpu id="{r}" i_chunks="{ic}" o_chunks="{oc}" s_chunks="0">\n')
        for t, (send, recv, steps) in enumerate(tbs):
            out.append(f'    <tb id="{t}" send="{send}" recv="{recv}" chan="0">\n' + "".join(steps) + "    </tb>\n")
        out.append("  </gpu>\n")
    return "".join(out) + "</algo>\n"


def test_reduce_scatter_in_place_aliasing_is_executed():
    """Receive the peer's part into o, then add the own input: right out of place, wrong in place,
    where o[0] is i[r] and the receive overwrote it."""
    def gpu(r, add_first):
        send = (1 - r, -1, [_step(0, "s", "i", 1 - r, "o", 0)])
        if add_first:  # correct both ways: reduce the received value into the own input
            return 2, 1, [send, (-1, 1 - r, [_step(0, "rrc", "i", r, "o", 0)])]
        recv = (-1, 1 - r, [_step(0, "r", "i", 1 - r, "o", 0, hasdep=1)])
        local = (-1, -1, [_step(0, "re", "i", r, "o", 0, depid=1, deps=0)])
        return 2, 1, [send, recv, local]
    good = check_xml(_two_gpus("reducescatter", lambda r: gpu(r, True)))
    assert good.ok, good.errors
    bad = check_xml(_two_gpus("reducescatter", lambda r: gpu(r, False)))
    assert not bad.ok and all(e.startswith("in-place") for e in bad.errors), bad.errors
    out = check_xml(_two_gpus("reducescatter", lambda r: gpu(r, False)).replace('inplace="1"', 'inplace="0"'))
    assert out.ok, out.errors


def test_allgather_in_place_aliasing_in_the_race_check():
    """A local copy of the own block i -> o[r] that no dependency orders after the send reading i:
    harmless out of place, a race in place, where it writes the memory the send reads."""
    def gpu(r, dep):
        send = (1 - r, -1, [_step(0, "s", "i", 0, "o", r, hasdep=int(dep))])
        recv = (-1, 1 - r, [_step(0, "r", "i", 0, "o", 1 - r)])
        local = (-1, -1, [_step(0, "cpy", "i", 0, "o", r, *((0, 0) if dep else (-1, -1)))])
        return 1, 2, [send, recv, local]
    assert check_xml(_two_gpus("allgather", lambda r: gpu(r, True))).ok
    bad = check_xml(_two_gpus("allgather", lambda r: gpu(r, False)))
    assert any(e.startswith("race on gpu") for e in bad.errors), bad.errors
    assert check_xml(_two_gpus("allgather", lambda r: gpu(r, False)).replace('inplace="1"', 'inplace="0"')).ok


def test_interpreter_buffers_alias_the_block():
    x = _two_gpus("allgather", lambda r: (1, 2, [(1 - r, -1, [_step(0, "s", "i", 0, "o", r)]),
                                                 (-1, 1 - r, [_step(0, "r", "i", 0, "o", 1 - r)])]))
    inputs = np.array([[5], [7]], dtype=np.uint64)
    outs, errs = interpret(parse_xml(x), inputs, in_place=True)
    assert not errs and outs.tolist() == [[5, 7], [5, 7]]  # in place, the input already sits in o[r]
    outs, _ = interpret(parse_xml(x), inputs, in_place=False)
    assert outs.tolist() == [[0, 7], [5, 0]]  # out of place nothing copied the own block


def test_allgather_that_sends_before_receiving_is_refused():
    s = sp_half("3x3", "allgather")
    n = s.n_rounds
    backwards = replace(s, blocks=tuple(sorted((replace(b, round=n + 1 - b.round) for b in s.blocks),
                                               key=lambda b: b.round)))
    with pytest.raises(ScheduleError, match="not an allgather"):
        export_msccl(backwards)


def test_cli_exports_and_checks_a_reduce_scatter(tmp_path, capsys):
    from synth.cli import main

    cert = tmp_path / "rs.json"
    assert main(["solve", "--torus", "3x3", "--collective", "reduce-scatter", "--out", str(cert)]) == 0
    out = tmp_path / "rs.xml"
    assert main(["export", str(cert), "--format", "msccl-xml", "--out", str(out), "--check"]) == 0
    text = capsys.readouterr().out
    assert "coll reducescatter" in text and "check: OK" in text and "per-rank count" in text
    assert 'coll="reducescatter"' in out.read_text()


def test_reduce_scatter_partial_sum_sent_while_received_is_refused():
    """Outside its block a GPU keeps one scratch place per chunk: sending the old partial sum while receiving
    the next one in the same round (after a first reception) would need two, and is refused by name."""
    from synth.schedule import REDUCE, Block, Schedule

    t = parse_torus("4")

    def hop(r, u, v):
        link = int(np.flatnonzero((t.link_src == u) & (t.link_dst == v))[0])
        return Block(r, REDUCE, np.array([0]), np.array([[link]]))

    s = Schedule(t, 4, 3, (hop(1, 2, 1), hop(2, 1, 0), hop(2, 2, 1), hop(3, 1, 0)), "reduce-scatter",
                 np.arange(4))
    with pytest.raises(ScheduleError, match="GPU 1 sends and receives a partial sum of chunk 0 in one round"):
        export_msccl(s)


def _reuse_edges(root):
    """``(gpu, chain, i)`` for every dependency that orders a chunk's first partial sum in scratch (an ``rrc``
    adding the input) after a step of another threadblock reading the same scratch units, which then held
    another chunk: ``chain`` the nops before the receive and the receive (one dependency each), ``chain[i]``
    the one with that dependency.  With one place per chunk there are none: the place is fresh."""
    found = []
    for g in root.iter("gpu"):
        steps = {(int(t.get("id")), int(st.get("s"))): st for t in g.iter("tb") for st in t.iter("step")}
        for t in g.iter("tb"):
            lst = list(t.iter("step"))
            for k, st in enumerate(lst):
                if st.get("type") != "rrc" or st.get("srcbuf") != "i" or st.get("dstbuf") != "s":
                    continue
                j = k
                while j > 0 and lst[j - 1].get("type") == "nop":
                    j -= 1
                chain = lst[j:k + 1]  # the nops before the step, then the step: one dependency each
                lo, hi = int(st.get("dstoff")), int(st.get("dstoff")) + int(st.get("cnt"))
                for i, el in enumerate(chain):
                    rd = steps.get((int(el.get("depid")), int(el.get("deps"))))
                    if rd is None or rd.get("srcbuf") != "s" or rd.get("type") not in ("s", "rrc"):
                        continue
                    a = int(rd.get("srcoff"))
                    if a < hi and lo < a + int(rd.get("cnt")):
                        found.append((int(g.get("id")), chain, i))
    return found


def test_reduce_scatter_reuses_dead_scratch_places():
    """Partial sums outside the GPU's block share scratch places in turn: fewer scratch chunks, a larger default
    maxBytes, the same exact result, no race; allgather and allreduce keep one place per chunk."""
    src = sp_half("4x4", "reduce-scatter")
    reused, once = export_msccl(src), export_msccl(src, scratch_reuse=False)
    assert reused.scratch_chunks < once.scratch_chunks and reused.max_bytes > once.max_bytes
    assert f's_chunks="{reused.scratch_chunks}"' in reused.xml
    checked(reused, "reducescatter")
    checked(once, "reducescatter")
    # a write into a place that a step reading another chunk's value in it must wait for: only with reuse
    assert _reuse_edges(ET.fromstring(reused.xml)) and not _reuse_edges(ET.fromstring(once.xml))
    ag = sp_half("4x4", "allgather")
    assert export_msccl(ag).xml == export_msccl(ag, scratch_reuse=False).xml


def test_unordered_scratch_reuse_is_a_race():
    """Drop one dependency that orders a reused scratch place after the last read of its old value: the race
    check names the scratch chunk (the interpretation may still happen to compute the right sum)."""
    root = ET.fromstring(export_msccl(sp_half("4x4", "reduce-scatter")).xml)
    edges = _reuse_edges(root)
    assert edges
    gpu, chain, i = edges[0]
    waiting = chain[i]
    if len(chain) == 1:  # the step's only dependency: none left
        waiting.set("depid", "-1")
        waiting.set("deps", "-1")
    else:  # one of several: repeat another in its slot, so that the nop/step structure stays valid
        other = chain[i - 1] if i else chain[1]
        waiting.set("depid", other.get("depid"))
        waiting.set("deps", other.get("deps"))
    rep = check_xml(ET.tostring(root, encoding="unicode"))
    assert rep.structural and rep.race_checked, rep.errors[:3]
    assert any(e.startswith(f"race on gpu {gpu}, buffer s chunk ") for e in rep.errors), rep.errors[:3]


def test_scratch_reuse_that_costs_a_channel_is_dropped():
    """Blocks of 10 elements over 4 chunks (weights 2, 2, 3, 3): reuse needs 16 steps in a threadblock where one
    place per chunk needs 15, so under a 15-step limit it would take a second channel; the export keeps one
    place per chunk and says why."""
    from synth.runtime.msccl.export import MscclLimits

    t = parse_torus("4x4")
    base = collective_half(sp_allreduce(t), "reduce-scatter")
    g = torus_gamma(t)
    src = (lift(base, g), lifted_chunk_elements(base, g, 16 * 10))
    free, once = export_msccl(src, initial_copy=False), export_msccl(src, initial_copy=False, scratch_reuse=False)
    assert free.scratch_chunks < once.scratch_chunks and free.max_steps_per_tb > once.max_steps_per_tb
    assert free.nchannels == once.nchannels == 1 and not free.notes
    lim = MscclLimits(max_steps=once.max_steps_per_tb)
    tight = export_msccl(src, initial_copy=False, limits=lim)
    assert tight.xml == export_msccl(src, initial_copy=False, limits=lim, scratch_reuse=False).xml
    assert tight.nchannels == 1 and tight.scratch_chunks == once.scratch_chunks
    assert any(n.startswith("scratch reuse needed 2 channel(s)") for n in tight.notes), tight.notes
