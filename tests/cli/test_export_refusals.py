"""``synth export`` refuses before it writes: a failed ``--check`` leaves no XML (and an older file intact),
names with markup give XML that parses and passes the export's own check, and ``--elements`` below the
chunk count is refused as ``solve`` refuses it."""

import xml.etree.ElementTree as ET

import pytest

import synth.runtime.formats as formats
from synth.baselines import build_baseline
from synth.cli import main
from synth.check.certificate import write_certificate
from synth.check.claims import certify
from synth.runtime.msccl.check import check_xml
from synth.schedule.sp import sp_allreduce
from synth.symmetry.torus import torus_gamma
from synth.topology.torus import parse_torus


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("export")
    t = parse_torus("4x4")
    cert = d / "sp44.json"
    write_certificate(certify(sp_allreduce(t), torus_gamma(t)), cert)
    ring = d / "ring.jsonl"
    build_baseline("ring", t).write(ring, 1 << 10)
    return {"cert": str(cert), "ring": str(ring), "dir": d}


def _one_error_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("synth: error: ") and "Traceback" not in err[0], err
    return err[0]


def test_a_failed_check_writes_no_xml_and_keeps_the_older_file(files, monkeypatch, capsys):
    def failing(xml, coll=None):
        rep = check_xml(xml, coll=coll)
        rep.errors.insert(0, "injected failure")  # ok is: no errors
        return rep

    monkeypatch.setattr(formats, "check_xml", failing)
    old = files["dir"] / "old.xml"
    old.write_text("OLD\n")
    assert main(["export", files["cert"], "--format", "msccl-xml", "--out", str(old), "--check"]) == 1
    assert old.read_text() == "OLD\n"
    fresh = files["dir"] / "fresh.xml"
    assert main(["export", files["cert"], "--format", "msccl-xml", "--out", str(fresh), "--check"]) == 1
    assert not fresh.exists()
    assert "check: FAILED" in capsys.readouterr().out
    monkeypatch.undo()  # the real check passes: the file is written
    assert main(["export", files["cert"], "--format", "msccl-xml", "--out", str(fresh), "--check"]) == 0
    assert fresh.read_text().startswith("<algo ")


@pytest.mark.parametrize("name", ['a "quoted" name', "it's", "a<b>&c", "tab\tnew\nline\x01", '"', "&amp;"])
def test_names_with_markup_give_xml_that_parses_and_passes_the_check(files, name):
    out = files["dir"] / "named.xml"
    assert main(["export", files["cert"], "--format", "msccl-xml", "--out", str(out), "--check",
                 "--name", name]) == 0
    text = out.read_text()
    root = ET.fromstring(text)
    written = root.get("name")
    assert '"' not in written and "<" not in written and "&" not in written
    assert all(c >= " " for c in written)
    assert check_xml(text).ok


def test_a_single_quoted_attribute_is_still_refused(files):
    out = files["dir"] / "plain.xml"
    assert main(["export", files["cert"], "--format", "msccl-xml", "--out", str(out)]) == 0
    text = out.read_text().replace('proto="Simple"', "proto='Simple'", 1)
    assert any("single-quoted" in e for e in check_xml(text).errors)


@pytest.mark.parametrize("source", ["cert", "ring"])
def test_explicit_elements_below_the_chunk_count_are_refused(files, source, capsys):
    out = files["dir"] / f"few-{source}.jsonl"
    out.write_text("OLD\n")
    assert main(["export", files[source], "--format", "explicit", "--elements", "10", "--out", str(out)]) == 2
    assert "10 elements cannot fill 64 chunks" in _one_error_line(capsys)
    assert out.read_text() == "OLD\n"
    assert main(["solve", "--torus", "4x4", "--elements", "10", "--out", str(files["dir"] / "s.json")]) == 2
    assert "10 elements cannot fill 64 chunks" in _one_error_line(capsys)
    # enough elements: written, and `synth check` accepts the file
    assert main(["export", files[source], "--format", "explicit", "--elements", "64", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["check", str(out)]) == 0


@pytest.mark.parametrize("source", ["cert", "ring"])
def test_an_msccl_export_past_its_transmissions_is_refused_before_the_lift(files, source, monkeypatch, capsys):
    # SP on 4x4: 64 chunks x 30 sends = 1,920 transmissions (the Ring's explicit file too); a 16x16 schedule
    # with 3.2 M took 14 GB and minutes before this limit, now one line
    import synth.runtime.plan as plan

    out = files["dir"] / f"big-{source}.xml"
    out.write_text("OLD\n")
    real_lift = plan.lift
    monkeypatch.setattr(plan, "lift", lambda *a: pytest.fail("lifted past the limit"))
    assert main(["export", files[source], "--format", "msccl-xml", "--out", str(out),
                 "--max-transmissions", "1919"]) == 2
    assert "the schedule has 1,920 transmissions, over --max-transmissions 1,919" in _one_error_line(capsys)
    assert out.read_text() == "OLD\n"
    monkeypatch.setattr(plan, "lift", real_lift)
    assert main(["export", files[source], "--format", "msccl-xml", "--out", str(out),
                 "--max-transmissions", "1920"]) == 0
    assert out.read_text().startswith("<algo ")
