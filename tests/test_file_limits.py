"""One size limit per kind of file (synth.fileio.LIMITS): every writer refuses what its readers would refuse."""

import os

import pytest

import synth
from synth.analysis.draw.contents import scene
from synth.check import check_file, read_certificate, read_explicit, write_certificate, write_explicit
from synth.errors import FileFormatError
from synth.fileio import LIMITS, write_atomic
from synth.runtime.msccl import export_msccl
from synth.runtime.msccl.check.parse import parse_xml
from synth.runtime.plan import load_schedule
from synth.schedule import chunk_elements
from synth.schedule.lift import lift, lifted_weights


@pytest.fixture(scope="module")
def cert():
    t = synth.parse_torus("4x4")
    return synth.certify(synth.sp_allreduce(t), synth.torus_gamma(t))


def _pair(kind, tmp_path, monkeypatch, write, readers):
    """The writer takes a file exactly at the limit and every reader reads it; one byte less and the writer
    refuses, leaves nothing, and every reader refuses the file it wrote before."""
    path = tmp_path / f"f.{kind}"
    write(path)
    size = path.stat().st_size
    monkeypatch.setitem(LIMITS, kind, size)
    os.unlink(path)
    write(path)
    for read in readers:
        read(path)
    monkeypatch.setitem(LIMITS, kind, size - 1)
    other = tmp_path / "g"
    with pytest.raises(FileFormatError, match="nothing written"):
        write(other)
    assert not other.exists() and os.listdir(tmp_path) == [path.name]
    for read in readers:
        with pytest.raises(FileFormatError, match="larger than"):
            read(path)


def test_certificates(cert, tmp_path, monkeypatch):
    _pair("certificate", tmp_path, monkeypatch, lambda p: write_certificate(cert, p),
          [read_certificate, check_file, scene, load_schedule])


def test_explicit_files(cert, tmp_path, monkeypatch):
    b, g = cert.base, cert.group
    sizes = chunk_elements(lifted_weights(b, g), 64)
    _pair("explicit", tmp_path, monkeypatch, lambda p: write_explicit(lift(b, g), sizes, p),
          [read_explicit, check_file, scene, load_schedule])


def test_msccl_xml(cert, tmp_path, monkeypatch):
    _pair("msccl-xml", tmp_path, monkeypatch, lambda p: export_msccl(cert, p), [parse_xml])


def test_a_refused_write_to_standard_output_prints_nothing(monkeypatch, capsys):
    monkeypatch.setitem(LIMITS, "json", 10)
    with pytest.raises(FileFormatError, match="nothing written"):
        write_atomic("-", ["12345", "678901"], kind="json")
    assert capsys.readouterr().out == ""
    write_atomic("-", ["12345", "67890"], kind="json")
    assert capsys.readouterr().out == "1234567890"
