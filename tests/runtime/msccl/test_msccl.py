"""MSCCL XML export: schedule -> XML -> validator + interpreter -> exact sums; and the checker's own rules."""

import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from synth.baselines import build_baseline
from synth.errors import ScheduleError
from synth.schedule.exchange import exchange_allreduce
from synth.schedule.forest import hub_parents
from synth.symmetry.torus import torus_gamma
from synth.schedule.lift import lift
from synth.runtime.msccl.check import CheckLimits, check_xml, interpret, parse_xml, validate
from synth.runtime.msccl.export import NO_SCRATCH_MAX_BYTES, export_msccl, scratch_bytes, xml_name
from synth.runtime.msccl.limits import SCRATCH_CAP, MscclLimits
from synth.schedule import tree_schedule
from synth.schedule.sp import sp_allreduce
from synth.topology.torus import parse_torus

ALGO_ATTRS = {"name", "proto", "nchannels", "nchunksperloop", "ngpus", "coll", "inplace", "outofplace", "minBytes",
              "maxBytes"}
GPU_ATTRS = {"id", "i_chunks", "o_chunks", "s_chunks"}
TB_ATTRS = {"id", "send", "recv", "chan"}
STEP_ATTRS = {"s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep"}


def schedules(shape):
    t = parse_torus(shape)
    g = torus_gamma(t)
    return {
        "sp": lambda: lift(sp_allreduce(t), g),
        "exchange": lambda: lift(exchange_allreduce(t), g),
        "bucket": lambda: build_baseline("bucket", t),
        "swing-b": lambda: build_baseline("swing-b", t),
        "k-hop": lambda: lift(tree_schedule(t, hub_parents(t, 2), 0), g),
    }


@pytest.fixture(scope="module")
def sp44():
    return export_msccl(schedules("4x4")["sp"]())


def roundtrip(source, **kw):
    ex = export_msccl(source, **kw)
    rep = check_xml(ex.xml, kw.get("limits"))
    assert rep.ok, rep.errors[:5]
    assert rep.race_checked, rep.notes
    return ex, rep


@pytest.mark.parametrize("name", ["sp", "exchange", "bucket", "swing-b", "k-hop"])
def test_roundtrip_4x4(name):
    ex, rep = roundtrip(schedules("4x4")[name]())
    assert ex.ngpus == 16
    assert rep.executed[:2] == ["out-of-place", "in-place"]


@pytest.mark.parametrize("name", ["ring", "swing-l", "trivance-l", "trivance-b", "recursive-doubling",
                                  "halving-doubling"])
def test_roundtrip_other_baselines_4x4(name):
    roundtrip(build_baseline(name, parse_torus("4x4")))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["sp", "exchange", "bucket"])
def test_roundtrip_8x8(name):
    ex, _ = roundtrip(schedules("8x8")[name]())
    assert ex.ngpus == 64 and ex.max_steps_per_tb <= 64 and ex.max_tbs_per_gpu <= 64


def test_every_required_attribute_is_present(sp44):
    root = ET.fromstring(sp44.xml)
    assert root.tag == "algo" and ALGO_ATTRS <= set(root.attrib)
    assert root.attrib["coll"] == "allreduce" and root.attrib["proto"] == "Simple"
    assert root.attrib["inplace"] == "1" and root.attrib["outofplace"] == "1"
    assert int(root.attrib["maxBytes"]) > 0
    gpus = root.findall("gpu")
    assert len(gpus) == int(root.attrib["ngpus"]) == 16
    n_steps = 0
    for g in gpus:
        assert GPU_ATTRS <= set(g.attrib)
        assert g.attrib["i_chunks"] == g.attrib["o_chunks"] == root.attrib["nchunksperloop"]
        tbs = g.findall("tb")
        assert [int(t.attrib["id"]) for t in tbs] == list(range(len(tbs)))
        for t in tbs:
            assert TB_ATTRS <= set(t.attrib)
            assert int(t.attrib["send"]) != int(g.attrib["id"]) != int(t.attrib["recv"])
            steps = t.findall("step")
            assert [int(s.attrib["s"]) for s in steps] == list(range(len(steps)))
            assert len(steps) <= 64
            for s in steps:
                assert set(s.attrib) == STEP_ATTRS
                assert s.attrib["type"] in ("s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop")
                assert s.attrib["type"] == "nop" or 1 <= int(s.attrib["cnt"]) < 72
                n_steps += 1
    assert n_steps == sp44.n_steps


def test_runtime_parser_friendly_text(sp44):
    text = sp44.xml
    assert text.startswith("<algo ") and "\t" not in text and "<?" not in text and "'" not in text
    assert all(len(m) <= 255 for m in re.findall(r'="([^"]*)"', text))
    assert len(re.findall(r"\w+=", text.split("\n", 1)[0])) <= 16


def test_packed_messages_become_few_steps(sp44):
    # 4x4 SP: per GPU and round, 4 messages out and 4 in; the layout keeps them to a few runs each
    algo = parse_xml(sp44.xml)
    per_tb = [sum(st.type != "nop" for st in t.steps) for g in algo.gpus for t in g.tbs]
    assert max(per_tb) <= 3 * 8  # at most ~3 runs per message, 8 rounds
    assert sp44.nchunksperloop == 64 and sp44.nchannels == 1


def test_write_to_path_and_check_file(tmp_path):
    path = tmp_path / "algo.xml"
    ex = export_msccl(build_baseline("halving-doubling", parse_torus("4x4")), path, proto="LL", name="hd",
                      inplace=False, min_bytes=1024, max_bytes=1 << 20)
    text = path.read_text()
    assert text == ex.xml
    root = ET.fromstring(text)
    assert (root.attrib["name"], root.attrib["proto"], root.attrib["inplace"], root.attrib["outofplace"],
            root.attrib["minBytes"], root.attrib["maxBytes"]) == ("hd", "LL", "0", "1", "1024", str(1 << 20))
    rep = check_xml(str(path))
    assert rep.ok and rep.executed == ["out-of-place", "out-of-place, shuffled #1"]


def test_weighted_chunks():
    s = schedules("4x4")["sp"]()
    w = (np.arange(s.n_chunks) % 3) + 1
    ex, _ = roundtrip(s, weights=w)
    assert ex.nchunksperloop == int(w.sum())
    assert sorted(ex.unit_offset.tolist())[-1] < ex.nchunksperloop
    # equal weights are reduced by their gcd
    assert export_msccl(s, weights=np.full(s.n_chunks, 4)).nchunksperloop == s.n_chunks


def test_step_limit_splits_connections_over_channels():
    s = schedules("4x4")["sp"]()
    lim = MscclLimits(max_steps=10)
    ex, _ = roundtrip(s, limits=lim)
    assert ex.nchannels > 1 and ex.max_steps_per_tb <= 10


def test_initial_copy_choices_are_both_correct():
    s = schedules("4x4")["exchange"]()
    for ic in (False, True):
        ex, _ = roundtrip(s, initial_copy=ic)
        assert ex.initial_copy is ic


def test_refuses_what_cannot_fit():
    t = parse_torus("8x8")
    star_ish = lift(tree_schedule(t, hub_parents(t, 4), 0), torus_gamma(t))  # hubs with many peers each
    with pytest.raises(ScheduleError, match="threadblocks on one GPU, over the limit 64"):
        export_msccl(star_ish)
    with pytest.raises(ScheduleError, match="MSCCL_MAX_COUNT"):
        export_msccl(schedules("4x4")["sp"](), weights=np.r_[100, np.ones(63, dtype=np.int64)])
    with pytest.raises(ScheduleError, match="nchunksperloop"):
        export_msccl(schedules("4x4")["sp"](), weights=np.r_[40000, np.ones(63, dtype=np.int64)],
                     limits=MscclLimits(max_count=100000))
    with pytest.raises(ScheduleError, match="unknown protocol"):
        export_msccl(schedules("4x4")["sp"](), proto="Fast")


@pytest.mark.slow
def test_larger_limits_accept_it_and_the_checker_uses_them():
    t = parse_torus("8x8")
    star_ish = lift(tree_schedule(t, hub_parents(t, 4), 0), torus_gamma(t))
    lim = MscclLimits(max_tbs=128)
    ex = export_msccl(star_ish, limits=lim)
    assert ex.max_tbs_per_gpu > 64
    assert not check_xml(ex.xml, race_check_bytes=0).ok  # default limits: too many threadblocks
    assert check_xml(ex.xml, lim, race_check_bytes=0).ok


# ------------------------------------------------------------------ the checker catches mistakes
def _mutate(xml, pattern, repl, count=1):
    new, n = re.subn(pattern, repl, xml, count=count)
    assert n == count
    return new


def test_validator_rules(sp44):
    x = sp44.xml
    cases = {
        "missing attribute": (_mutate(x, r' minBytes="0"', ""), "missing attribute 'minBytes'"),
        "tb gap": (_mutate(x, r'<tb id="1" ', '<tb id="9" '), "threadblock ids must be 0.."),
        "self peer": (_mutate(x, r'<tb id="0" send="1"', '<tb id="0" send="0"'), "is the GPU itself"),
        "cnt too big": (_mutate(x, r'cnt="1" ', 'cnt="72" '), "cnt 72 outside 1..71"),
        "bad type": (_mutate(x, r'type="rrc"', 'type="rrx"'), "unknown type"),
        "declaration": ('<?xml version="1.0"?>\n' + x, "no XML declaration"),
        "step numbering": (_mutate(x, r'<step s="1" ', '<step s="7" '), "step numbers must be 0, 1, 2"),
        "dep on unsignalled": (_mutate(x, r'hasdep="1"', 'hasdep="0"'), "which has hasdep=0"),
        "wrong coll": (_mutate(x, r'coll="allreduce"', 'coll="allgather"'), "must be 4 and 64 for allgather"),
        "unknown coll": (_mutate(x, r'coll="allreduce"', 'coll="alltoall"'), "is not allreduce, reducescatter"),
        "offset out of range": (_mutate(x, r'srcoff="3" ', 'srcoff="64" '), "outside the buffer"),
    }
    for label, (text, message) in cases.items():
        rep = check_xml(text)
        assert not rep.ok, label
        assert any(message in e for e in rep.errors), (label, rep.errors[:3])
    wrong_coll = check_xml(cases["wrong coll"][0], coll="allreduce").errors
    assert "algo: coll is 'allgather', expected 'allreduce'" in wrong_coll


def test_validator_connection_and_nop_rules():
    ex = export_msccl(schedules("4x4")["exchange"]())
    x = ex.xml
    # a receive whose count differs from its send
    algo = parse_xml(x)
    st = next(st for t in algo.gpus[0].tbs if t.recv >= 0 for st in t.steps if st.type == "rrc")
    st.cnt += 1
    errs = validate(algo)
    assert any("its receive cnt" in e or "outside the buffer" in e for e in errs)
    # a nop must be followed by a step with a dependency
    m = re.search(r'(<step s="(\d+)" type="nop"[^\n]*\n\s*<step s="\d+" type="\w+"[^\n]*?)depid="\d+" deps="\d+"', x)
    assert m
    text = x[:m.start()] + m.group(1) + 'depid="-1" deps="-1"' + x[m.end():]
    assert any("follows nop steps" in e for e in check_xml(text).errors)
    # two threadblocks on one connection
    text = _mutate(x, r'<tb id="1" send="(\d+)" recv="-1"', r'<tb id="1" send="1" recv="-1"')
    assert not check_xml(text).ok


def test_interpreter_catches_dropped_dependencies(sp44):
    lines = sp44.xml.split("\n")
    idx = [i for i, ln in enumerate(lines) if "<step" in ln and 'type="nop"' not in ln and 'depid="-1"' not in ln
           and 'type="nop"' not in lines[i - 1]]
    rng = np.random.default_rng(0)
    for i in rng.choice(idx, size=12, replace=False):
        bad = lines[:i] + [re.sub(r'depid="\d+" deps="\d+"', 'depid="-1" deps="-1"', lines[i])] + lines[i + 1:]
        rep = check_xml("\n".join(bad))
        assert not rep.ok
        assert any("race" in e or "not the sum" in e or "changed while" in e for e in rep.errors), rep.errors[:2]


def test_interpreter_catches_wrong_data(sp44):
    # a receive into the wrong place: structure still valid, sums wrong
    text = _mutate(sp44.xml, r'(type="r" srcbuf="\w" srcoff="\d+" dstbuf="o" dstoff=")(\d+)"',
                   lambda m: m.group(1) + str((int(m.group(2)) + 1) % 64) + '"')
    rep = check_xml(text)
    assert not rep.ok


def test_interpreter_semantics_directly():
    algo = parse_xml(export_msccl(build_baseline("recursive-doubling", parse_torus("4x4"))).xml)
    x = np.arange(16, dtype=np.int64).reshape(16, 1) + 1
    out, errs = interpret(algo, x)
    assert errs == [] and np.all(out == x.sum())
    out, errs = interpret(algo, x, in_place=True, capacity=None, seed=3)
    assert errs == [] and np.all(out == x.sum())


def test_check_limits_accept_exporter_limits():
    lim = MscclLimits(max_steps=10)
    ex = export_msccl(schedules("4x4")["sp"](), limits=lim)
    assert check_xml(ex.xml, lim).ok
    assert isinstance(CheckLimits(), CheckLimits)


def test_the_validator_reads_the_exporters_limits_field_by_field():
    """One definition of the runtime limits: the validator's defaults are the exporter's, field by field."""
    import dataclasses

    shared = [f.name for f in dataclasses.fields(MscclLimits)]
    assert shared and all(getattr(CheckLimits(), k) == getattr(MscclLimits(), k) for k in shared)
    assert CheckLimits().scratch_cap == SCRATCH_CAP


def test_cli_glue_writes_and_checks(tmp_path, capsys):
    import argparse
    import json

    from synth.check.certificate import write_certificate
    from synth.check.claims import certify
    from synth.cli.export import add_msccl_export_arguments, export_msccl_from_args

    t = parse_torus("4x4")
    cert = tmp_path / "sp.json"
    write_certificate(certify(sp_allreduce(t), torus_gamma(t)), cert)
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("--out")
    p.add_argument("--json", action="store_true")
    add_msccl_export_arguments(p)
    out = tmp_path / "sp.xml"
    args = p.parse_args([str(cert), "--out", str(out), "--check", "--proto", "LL128", "--json"])
    assert export_msccl_from_args(args) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["check"]["ok"] and info["ngpus"] == 16 and info["nchunksperloop"] == 64
    assert 'proto="LL128"' in out.read_text().split("\n", 1)[0]
    args = p.parse_args([str(cert), "--out", str(out)])
    assert export_msccl_from_args(args) == 0
    assert "MSCCL_ALGO_DIR" in capsys.readouterr().out


# ------------------------------------------------------------------ the runtimes' parser limits
def _nodes_per_rank(xml):
    algo = parse_xml(xml)
    return max(1 + len(algo.gpus) + len(g.tbs) + sum(len(t.steps) for t in g.tbs) for g in algo.gpus)


def _algo_with_nodes(total):
    """Two GPUs, GPU 0 holding 64 threadblocks of plain sends: ``total`` XML nodes for rank 0."""
    from synth.runtime.msccl.check import Algo, Gpu, Step, ThreadBlock

    algo = Algo({"name": "n", "proto": "Simple", "nchannels": "32", "nchunksperloop": "64", "ngpus": "2",
                 "coll": "allreduce", "inplace": "0", "outofplace": "1", "minBytes": "0", "maxBytes": "0"})
    g0, g1 = Gpu(0, 64, 64, 0), Gpu(1, 64, 64, 0)
    n_steps = total - 1 - 2 - 64
    for t in range(64):
        tb = ThreadBlock(t, 1 if t < 32 else -1, -1 if t < 32 else 1, t % 32)
        k = n_steps // 64 + (t < n_steps % 64)
        tb.steps = [Step(s, "s" if t < 32 else "r", "i", 0, "o", 0, 1, -1, -1, 0) for s in range(k)]
        g0.tbs.append(tb)
    algo.gpus = [g0, g1]
    return algo


def test_node_limit_is_4095_per_rank_in_exporter_and_validator():
    assert MscclLimits().max_nodes == CheckLimits().max_nodes == 4095
    for total, refused in ((4095, False), (4096, True)):
        errs = validate(_algo_with_nodes(total))
        node_errs = [e for e in errs if "XML nodes" in e]
        assert bool(node_errs) is refused, (total, node_errs)
        if refused:
            assert "4096 XML nodes" in node_errs[0] and "limit of 4095" in node_errs[0]
    # the exporter refuses at its own count, naming the limit
    s = schedules("4x4")["sp"]()
    xml = export_msccl(s, initial_copy=False).xml
    n = _nodes_per_rank(xml)
    assert _nodes_per_rank(export_msccl(s, initial_copy=False, limits=MscclLimits(max_nodes=n)).xml) == n
    with pytest.raises(ScheduleError, match=f"{n} XML nodes for one rank, over the parser's limit of {n - 1}"):
        export_msccl(s, initial_copy=False, limits=MscclLimits(max_nodes=n - 1))
    assert check_xml(xml, CheckLimits(max_nodes=n)).ok
    assert any("XML nodes" in e for e in check_xml(xml, CheckLimits(max_nodes=n - 1)).errors)


def test_names_are_cut_by_utf8_bytes_and_validated_in_bytes(sp44):
    s = schedules("4x4")["sp"]()
    long_name = "schedule \u00e9t\u00e9 \u2211 " + "\u00e9" * 200  # 2-byte and 3-byte characters, > 255 bytes
    ex = export_msccl(s, name=long_name)
    b = ex.name.encode("utf-8")
    assert 253 <= len(b) <= 255 and long_name.startswith(ex.name)
    assert f'<algo name="{ex.name}"' in ex.xml and check_xml(ex.xml).ok
    assert xml_name("a\tb\n\"c\"") == "a b 'c'"  # no tab (the tokenizer does not skip it), no quote
    head = sp44.xml.split('"', 2)
    ok_name, bad_name = "\u00e9" * 127 + "a", "\u00e9" * 128  # 255 and 256 bytes, both under 255 characters
    assert check_xml(head[0] + '"' + ok_name + '"' + head[2]).ok
    errs = check_xml(head[0] + '"' + bad_name + '"' + head[2]).errors
    assert any("256 bytes" in e for e in errs) and any("255-byte" in e for e in errs), errs


def test_default_max_bytes_keeps_msccl_scratch_under_the_cap(capsys):
    s = schedules("4x4")["exchange"]()
    ex = export_msccl(s)
    assert ex.scratch_chunks > 0 and not ex.notes
    u, k = ex.nchunksperloop, ex.scratch_chunks
    assert scratch_bytes(ex.max_bytes, k, u) <= SCRATCH_CAP < scratch_bytes(ex.max_bytes + -(-u // k), k, u)
    assert f'maxBytes="{ex.max_bytes}"' in ex.xml.split("\n", 1)[0]
    assert not [n for n in check_xml(ex.xml).notes if "scratch" in n]
    # a larger explicit maxBytes is kept, with a note from the exporter and from the checker
    big = export_msccl(s, max_bytes=1 << 40)
    assert big.max_bytes == 1 << 40 and len(big.notes) == 1 and "scratch per GPU" in big.notes[0]
    assert f"{scratch_bytes(1 << 40, k, u):,} bytes" in big.notes[0]
    assert any("scratch per GPU" in n for n in check_xml(big.xml).notes)
    small = export_msccl(s, scratch_cap=1 << 20)
    assert scratch_bytes(small.max_bytes, k, u) <= 1 << 20 < scratch_bytes(small.max_bytes + -(-u // k), k, u)
    with pytest.raises(ScheduleError, match="min_bytes"):
        export_msccl(s, min_bytes=small.max_bytes, scratch_cap=1 << 20)
    # no scratch: the runtime may select it up to 1 TiB
    sp = export_msccl(schedules("4x4")["sp"]())
    assert sp.scratch_chunks == 0 and sp.max_bytes == NO_SCRATCH_MAX_BYTES and not sp.notes


def test_cli_exports_a_baseline_explicit_file(tmp_path, capsys):
    from synth.cli import main

    t = parse_torus("4x4")
    src = tmp_path / "ring.jsonl"
    build_baseline("ring", t).write(src, 1 << 12)
    xml = tmp_path / "ring.xml"
    assert main(["export", str(src), "--format", "msccl-xml", "--out", str(xml), "--check", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["check"]["ok"] and info["check"]["race_checked"] and info["ngpus"] == 16
    assert check_xml(xml.read_text()).ok
    # --format explicit (the default) re-writes it after reading it, or re-cuts it
    copy = tmp_path / "copy.jsonl"
    assert main(["export", str(src), "--out", str(copy)]) == 0
    assert "already explicit" in capsys.readouterr().out and copy.read_text() == src.read_text()
    assert main(["export", str(src), "--out", str(copy), "--elements", "640"]) == 0
    assert "re-cut for 640 elements" in capsys.readouterr().out
    from synth.check.explicit import read_explicit

    assert int(read_explicit(copy)[1].sum()) == 640 and main(["check", str(copy)]) == 0
    capsys.readouterr()
    # chunk sizes that cannot be MSCCL chunks: one line naming the reason, exit 2
    odd = tmp_path / "odd.jsonl"
    build_baseline("ring", t).write(odd, 64 * 1000 + 1)
    assert main(["export", str(odd), "--format", "msccl-xml", "--out", str(tmp_path / "odd.xml")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "nchunksperloop" in err and "odd.jsonl" in err and "Traceback" not in err
    assert not (tmp_path / "odd.xml").exists()


def test_cli_notes_scratch_over_the_cap_on_stderr(tmp_path, capsys):
    from synth.cli import main
    from synth.check.explicit import write_explicit
    from synth.schedule import chunk_elements

    s = schedules("4x4")["exchange"]()
    src = tmp_path / "ex.jsonl"
    write_explicit(s, chunk_elements(np.ones(s.n_chunks, dtype=np.int64), 64), src)
    out = tmp_path / "ex.xml"
    assert main(["export", str(src), "--format", "msccl-xml", "--out", str(out), "--max-bytes", str(1 << 40)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("note: maxBytes 1099511627776 makes the original MSCCL") and err.count("\n") == 1
    assert "a smaller --max-bytes avoids that" in err        # the library's note names the parameter
    assert main(["export", str(src), "--format", "msccl-xml", "--out", str(out)]) == 0
    assert capsys.readouterr().err == ""
