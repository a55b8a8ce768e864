"""A separately started ``dask scheduler`` with two ``dask worker`` processes (temporary folders, their own
solve caches): the serial table; a worker killed with ``kill -9`` mid-campaign loses nothing; a client
killed with ``kill -9`` restarts and runs only the missing tasks.  The two kill tests are slow: their tasks
must last long enough to kill something in the middle."""

import json
import os
import signal
import subprocess
import sys

import pytest

from clusters import external, wait_until  # noqa: F401  (external: a fixture)
from synth.campaign import Store, comparable, parse_campaign, run_campaign
from synth.cli import main, task_main

SYNTH = [sys.executable, "-m", "synth"]
#: solves of a few seconds altogether: distinct seeds, so no worker answers one from its cache
SOLVES = {"grids": [{"command": "solve", "vary": {"--torus": ["4x4"], "--depth": [2, 3], "--seed": list(range(6))},
                     "args": ["--time-limit", "20"]}]}
SMALL = {"tasks": [["info", "--torus", "4x4"], ["info", "--torus", "6x6"], ["solve", "--torus", "4x4", "--exchange"],
                   ["solve", "--torus", "4x4", "--depth", "99999999999"]]}


def _serial(campaign, path):
    run_campaign(parse_campaign(campaign), path, "serial", entry=task_main)
    with Store(path) as store:
        return store.rows()


def _done(path) -> int:
    try:
        with Store(path) as store:
            return store.counts()["done"]
    except Exception:  # not created yet
        return 0


def test_the_external_cluster_gives_the_serial_table(external, tmp_path):
    serial = _serial(SMALL, tmp_path / "serial.sqlite")
    run_campaign(parse_campaign(SMALL), tmp_path / "ext.sqlite", external.address, entry=task_main)
    with Store(tmp_path / "ext.sqlite") as store:
        rows = store.rows()
    assert comparable(rows) == comparable(serial)
    assert [r["status"] for r in rows] == ["done", "done", "done", "failed"]
    assert {r["worker"] for r in rows if r["status"] == "done"} != {"serial"}


@pytest.mark.slow
def test_a_worker_killed_mid_campaign_loses_nothing(external, tmp_path):
    path = tmp_path / "c.sqlite"
    (tmp_path / "c.json").write_text(json.dumps(SOLVES))
    client = subprocess.Popen([*SYNTH, "campaign", "run", str(tmp_path / "c.json"), "--cluster", external.address,
                               "--store", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_until(lambda: _done(path) >= 2, timeout=120)
        victim = external.workers[0]
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        out, err = client.communicate(timeout=240)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
        external.workers[0] = external.start_worker("worker0b")  # the next test has two workers again
    assert client.returncode == 0, err
    assert "12 tasks, 0 finished before, 12 run now, 0 of them failed" in out
    with Store(path) as store:
        rows = store.rows()
    assert all(r["status"] == "done" and r["result"]["valid"] for r in rows)
    assert [r["result"]["weight"] for r in rows] == ["18"] * 6 + ["16"] * 6  # depth 2, then 3 (seed fastest)


@pytest.mark.slow
def test_a_client_killed_mid_campaign_restarts_with_the_missing_tasks(external, tmp_path):
    path = tmp_path / "c.sqlite"
    (tmp_path / "c.json").write_text(json.dumps(SOLVES))
    external.wait_for_workers(2)
    argv = [*SYNTH, "campaign", "run", str(tmp_path / "c.json"), "--cluster", external.address, "--store", str(path)]
    client = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_until(lambda: _done(path) >= 2, timeout=120)
        os.kill(client.pid, signal.SIGKILL)
        client.wait()
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    with Store(path) as store:
        before = store.counts()
    assert before["done"] < 12 and before["done"] + before["pending"] == 12
    again = subprocess.run(argv, capture_output=True, text=True, timeout=240)
    assert again.returncode == 0, again.stderr
    assert (f"12 tasks, {before['done']} finished before, {12 - before['done']} run now, 0 of them failed"
            in again.stdout)
    serial = _serial(SOLVES, tmp_path / "serial.sqlite")
    with Store(path) as store:
        assert comparable(store.rows()) == comparable(serial)
