"""The store's guards: a store the user may not write, two runs on one store, symbolic links.

Each case is one line ``synth: error: ...`` and exit 2 (never an internal error), and leaves every
file as it was.
"""

import contextlib
import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import time

import pytest

import synth.campaign.store as store_module
from synth.campaign import Store, run_campaign, task_from_json
from synth.cli import main
from synth.errors import CampaignError

TASKS = [task_from_json({"call": "synth.units:parse_size", "kwargs": {"text": t}}) for t in ("1KiB", "2MiB")]


@pytest.fixture
def campaign(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.json").write_text(json.dumps({"tasks": [t.to_json() for t in TASKS]}))
    return tmp_path


def _one_line_exit_2(argv, capsys, words):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("synth: error: ") and err.count("\n") == 1 and words in err, err
    assert "internal error" not in err


@pytest.fixture
def read_only(monkeypatch):
    """Make a store read-only: its mode bits, and (for root, whom those do not stop) SQLite's own switch."""
    def make(path):
        os.chmod(path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        if os.geteuid() == 0:
            connect = sqlite3.connect

            def read_only_connect(*args, **kwargs):
                db = connect(*args, **kwargs)
                db.execute("pragma query_only = 1")
                return db

            monkeypatch.setattr(store_module.sqlite3, "connect", read_only_connect)
    return make


def test_a_read_only_store_is_one_line_for_run_and_readable_for_status(campaign, capsys, read_only):
    run_campaign(TASKS[:1], "c.sqlite", "serial")
    read_only("c.sqlite")
    before = (campaign / "c.sqlite").read_bytes()
    _one_line_exit_2(["campaign", "run", "c.json", "--cluster", "serial"], capsys, "c.sqlite: ")
    assert (campaign / "c.sqlite").read_bytes() == before
    assert main(["campaign", "status", "c.sqlite", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["done"] == 1
    assert main(["campaign", "show", "c.sqlite", "--json"]) == 0
    assert [r["result"] for r in json.loads(capsys.readouterr().out)] == [1024]


def test_a_second_run_on_a_store_in_use_is_refused(campaign, capsys):
    with Store("c.sqlite", exclusive=True):  # the first run, holding its store
        _one_line_exit_2(["campaign", "run", "c.json", "--cluster", "serial"], capsys,
                         "another synth campaign run is using this store")
        with pytest.raises(CampaignError, match="another synth campaign run"):
            run_campaign(TASKS, "c.sqlite", "serial")
        assert main(["campaign", "status", "c.sqlite"]) == 0  # reading goes on meanwhile
        capsys.readouterr()
    with Store("c.sqlite", readonly=True) as store:
        assert store.counts()["total"] == 0  # the refused runs added nothing
    assert main(["campaign", "run", "c.json", "--cluster", "serial"]) == 0  # once the first is done
    assert "2 tasks, 0 finished before, 2 run now" in capsys.readouterr().out


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal"])
def test_a_store_or_companion_that_is_a_symbolic_link_is_refused(campaign, capsys, suffix):
    target = campaign / "elsewhere" / "precious"
    target.parent.mkdir()
    target.write_text("keep me")
    os.symlink(target, campaign / f"c.sqlite{suffix}")
    _one_line_exit_2(["campaign", "run", "c.json", "--cluster", "serial"], capsys, "a symbolic link")
    assert target.read_text() == "keep me"
    assert sorted(p.name for p in target.parent.iterdir()) == ["precious"]


def test_a_dangling_symbolic_link_is_not_followed_to_create_a_store(campaign, capsys):
    os.symlink(campaign / "elsewhere" / "new.sqlite", campaign / "c.sqlite")
    (campaign / "elsewhere").mkdir()
    _one_line_exit_2(["campaign", "run", "c.json", "--cluster", "serial"], capsys, "a symbolic link")
    assert list((campaign / "elsewhere").iterdir()) == []


def test_status_of_a_missing_store_creates_nothing(campaign, capsys):
    _one_line_exit_2(["campaign", "status", "none.sqlite"], capsys, "no such campaign store")
    assert not (campaign / "none.sqlite").exists()


def _statuses(path):
    """The store's statuses in campaign order, read by SQLite alone ([] while there is no store yet)."""
    with contextlib.suppress(sqlite3.Error), \
            contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return [s for (s,) in db.execute("select status from results order by position")]
    return []


def test_two_real_runs_on_one_store_the_second_is_refused_while_the_first_runs(campaign, capsys):
    """Two processes: the first holds its store until it ends; the second runs nothing and says why."""
    slow = ["solve", "--depth", "3", "--torus", "12x12", "--seed", "5", "--time-limit", "60"]
    (campaign / "slow.json").write_text(json.dumps({"tasks": [["info", "--torus", "4x4"], slow]}))
    env = dict(os.environ, SYNTH_CACHE_DIR=str(campaign / "cache"))
    first = subprocess.Popen([sys.executable, "-m", "synth", "campaign", "run", "slow.json", "--cluster", "serial"],
                             cwd=campaign, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and first.poll() is None and _statuses("slow.sqlite") != ["done", "pending"]:
            time.sleep(0.05)
        assert first.poll() is None, first.stderr.read()
        _one_line_exit_2(["campaign", "run", "slow.json", "--cluster", "serial"], capsys,
                         "another synth campaign run is using this store")
        assert _statuses("slow.sqlite") == ["done", "pending"]  # the second ran nothing
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=60)


@pytest.mark.parametrize("plant", [
    "create trigger t after update on results begin insert into meta values ('x', 'y'); end",
    "create view v as select * from results",
    "create table extra (a)",
    "alter table results add column more text",
])
def test_a_store_with_anything_else_in_its_schema_is_refused_and_left_alone(campaign, capsys, plant):
    Store("c.sqlite").close()
    with contextlib.closing(sqlite3.connect("c.sqlite")) as db:
        db.execute(plant)
        db.commit()
    before = (campaign / "c.sqlite").read_bytes()
    _one_line_exit_2(["campaign", "run", "c.json", "--cluster", "serial"], capsys, "not a synth campaign store")
    assert (campaign / "c.sqlite").read_bytes() == before


def test_a_store_that_could_not_be_made_is_removed_unless_another_run_took_it(tmp_path, monkeypatch):
    path = tmp_path / "c.sqlite"

    def broken(self):
        raise CampaignError("disk full, say")

    monkeypatch.setattr(Store, "_create", broken)
    with pytest.raises(CampaignError, match="disk full"):
        Store(path, exclusive=True)
    assert sorted(tmp_path.iterdir()) == []  # ours, half made: removed

    def taken(self):  # another run created nothing, but locked the file between our O_EXCL and our flock
        raise CampaignError("another synth campaign run is using this store")

    monkeypatch.setattr(Store, "_lock", taken)
    with pytest.raises(CampaignError, match="another synth campaign run"):
        Store(path, exclusive=True)
    assert path.exists()  # theirs now: left alone
