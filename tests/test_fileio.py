"""synth.fileio: the one reader (never blocks, regular files only, capped), atomic writes that clean up after
dead writers, and printable names."""

import os
import subprocess
import sys
import time

import pytest

from synth.errors import FileFormatError
from synth.fileio import STALE_SECONDS, open_regular, printable, read_capped, read_json, write_atomic


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "f.json"
    os.mkfifo(path)
    return path


def test_a_fifo_is_refused_without_blocking(fifo):
    t0 = time.monotonic()
    for read in (open_regular, read_capped, read_json):
        with pytest.raises(FileFormatError, match="not a regular file .a FIFO."):
            read(fifo)
    assert time.monotonic() - t0 < 1.0


def test_a_symlink_is_judged_by_its_target(tmp_path):
    good = tmp_path / "good.json"
    good.write_text('{"a": 1}')
    (tmp_path / "to-good.json").symlink_to(good)
    assert read_json(tmp_path / "to-good.json") == {"a": 1}
    (tmp_path / "to-zero.json").symlink_to("/dev/zero")
    with pytest.raises(FileFormatError, match="character device"):
        read_capped(tmp_path / "to-zero.json")
    with pytest.raises(FileFormatError, match="is a folder"):
        read_capped(tmp_path)


def test_the_cap_is_what_is_read_not_what_stat_says(tmp_path):
    """/proc files say size 0: the cap still holds, counted on the bytes read."""
    with pytest.raises(FileFormatError, match="larger than 100 bytes"):
        read_capped("/proc/self/maps", 100)
    assert len(read_capped("/proc/self/maps", 1 << 20)) > 100


def test_after_the_check_the_file_reads_normally(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("é\n")
    with open_regular(path, "r") as f:
        assert f.read() == "é\n"
    with pytest.raises(TypeError, match="file path"):
        open_regular(0)             # never fd 0 (stdin), which open() would take and close


def _synth(*args, cwd):
    return subprocess.run([sys.executable, "-m", "synth", *map(str, args)], capture_output=True, text=True,
                          timeout=60, cwd=cwd, env=dict(os.environ, SYNTH_CACHE_DIR=str(cwd / "cache")))


@pytest.mark.parametrize("argv", [
    ["check", "{fifo}"],
    ["run", "{fifo}", "--size", "4KiB"],
    ["simulate", "{fifo}"],
    ["export", "{fifo}", "--format", "explicit", "--out", "e.jsonl"],
    ["info", "--topology", "{fifo}"],
    ["solve", "--topology", "{fifo}"],
    ["solve", "--torus", "6x6", "--depth", "2", "--start", "{fifo}"],
])
def test_every_reader_refuses_a_fifo_at_once_with_one_line(argv, fifo, tmp_path):
    """mkfifo f.json; synth check f.json used to block in open() forever."""
    t0 = time.monotonic()
    done = _synth(*[a.format(fifo=fifo) for a in argv], cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("synth: error:"), done.stderr
    assert "FIFO" in lines[0]
    assert time.monotonic() - t0 < 30


def test_a_stale_temp_folder_of_a_dead_writer_is_removed(tmp_path):
    """A write killed by SIGKILL leaves .NAME.tmp-PID-XXXX/NAME: the next write of NAME removes it once it is old
    and its process is gone; a live writer's folder, a young one and another target's stay."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    old = time.time() - 2 * STALE_SECONDS
    folders = {"dead": f".c.json.tmp-{dead}-abc", "alive": f".c.json.tmp-{os.getpid()}-abc",
               "young": f".c.json.tmp-{dead}-xyz", "other": f".d.json.tmp-{dead}-abc"}
    for key, name in folders.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / ("d.json" if key == "other" else "c.json")).write_text("half")
        if key != "young":
            os.utime(tmp_path / name, (old, old))
    write_atomic(tmp_path / "c.json", "new")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(["c.json", folders["alive"], folders["young"], folders["other"]])
    assert (tmp_path / "c.json").read_text() == "new"


def test_a_temp_folder_carries_the_writers_pid(tmp_path, monkeypatch):
    seen = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (seen.append(os.path.basename(os.path.dirname(a))), real(a, b)))
    write_atomic(tmp_path / "c.json", "x")
    assert seen and seen[0].startswith(f".c.json.tmp-{os.getpid()}-")


def test_printable_escapes_control_characters_only():
    assert printable("torus 16x16") == "torus 16x16"
    assert printable("a\nb\x1b[31m\t") == "a\\nb\\x1b[31m\\t"
    assert printable(printable("a\nb")) == printable("a\nb")       # idempotent: escaped names stay escaped
    assert printable("größe") == "größe"


def test_small_integers_skip_the_range_hook_and_long_ones_still_meet_it(monkeypatch):
    """Without a run of 16 digits no integer can reach 2**53: json's own parser reads them all."""
    import synth.fileio as fileio

    def hook(text):
        raise AssertionError("the range hook ran on a document of small integers")

    monkeypatch.setattr(fileio, "_int", hook)
    assert fileio.loads_strict('{"a": [1, -22, 999999999999999], "b": 0.1234567890123456789}') == \
        {"a": [1, -22, 999999999999999], "b": 0.12345678901234568}
    monkeypatch.undo()
    for text in ('[9007199254740992]', '[-12345678901234567]', '{"x": [1, 10000000000000000]}'):
        with pytest.raises(FileFormatError, match="out of range"):
            fileio.loads_strict(text)
    assert fileio.loads_strict('[9007199254740991, 1.5]') == [9007199254740991, 1.5]
