"""The SQLite results store: ours or refused, one row per task, readable by pandas, restartable."""

import sqlite3

import pytest

from synth.campaign import Store, comparable, run_campaign, task_from_json
from synth.errors import CampaignError

TASKS = [task_from_json({"call": "synth.units:parse_size", "kwargs": {"text": t}}) for t in ("1KiB", "2MiB", "bad")]


def test_rows_are_written_as_tasks_finish_and_pandas_reads_them(tmp_path):
    pd = pytest.importorskip("pandas")
    path = tmp_path / "c.sqlite"
    seen = []

    def on_row(task, outcome):  # every earlier row is already committed when the next task is handed over
        with sqlite3.connect(path) as other:
            seen.append(other.execute("select count(*) from results where status != 'pending'").fetchone()[0])

    summary = run_campaign(TASKS, path, "serial", on_row=on_row)
    assert (summary.ran, summary.failed) == (3, 1) and seen == [1, 2, 3]
    frame = pd.read_sql("select * from results", sqlite3.connect(path))
    assert list(frame.columns) == ["key", "position", "task", "status", "result", "error", "seconds", "worker",
                                   "finished_at"]
    assert frame["status"].tolist() == ["done", "done", "failed"]
    assert frame["result"].tolist()[:2] == ["1024", "2097152"]
    assert frame["error"].tolist()[2].startswith("SynthError: cannot read the size 'bad'")


def test_a_restart_runs_only_what_is_not_finished(tmp_path):
    path = tmp_path / "c.sqlite"
    run_campaign(TASKS[:1], path, "serial")
    ran = []
    summary = run_campaign(TASKS, path, "serial", on_row=lambda task, out: ran.append(task.key))
    assert (summary.skipped, summary.ran) == (1, 2) and ran == [t.key for t in TASKS[1:]]
    assert run_campaign(TASKS, path, "serial", retry_failed=True).ran == 1  # the failed one, again
    with Store(path) as store:
        assert store.counts() == {"pending": 0, "done": 2, "failed": 1, "total": 3}


def test_a_serial_table_is_the_same_twice_timing_aside(tmp_path):
    for name in ("a", "b"):
        run_campaign(TASKS, tmp_path / f"{name}.sqlite", "serial")
    with Store(tmp_path / "a.sqlite") as a, Store(tmp_path / "b.sqlite") as b:
        assert comparable(a.rows()) == comparable(b.rows())
        assert all(r["worker"] == "serial" and r["seconds"] >= 0 and r["finished_at"] for r in a.rows())


@pytest.mark.parametrize("make", ["text", "sqlite", "version"])
def test_a_store_that_is_not_ours_is_refused_and_left_alone(tmp_path, make):
    path = tmp_path / "x.sqlite"
    if make == "text":
        path.write_text("not a database at all, but long enough to be a file\n" * 20)
    elif make == "sqlite":
        with sqlite3.connect(path) as db:
            db.execute("create table results (a, b)")
    else:
        Store(path).close()
        with sqlite3.connect(path) as db:
            db.execute("update meta set value = '99' where name = 'version'")
    before = path.read_bytes()
    with pytest.raises(CampaignError, match="not a synth campaign store|format version 99"):
        run_campaign(TASKS, path, "serial")
    assert path.read_bytes() == before


def test_a_row_an_interrupt_recorded_as_failed_runs_again(tmp_path):
    """Earlier versions recorded a serial task stopped by SIGTERM as failed with exit 143: it was never run
    again. Such rows (exit 130, exit 143) are not final; a task's own failure still is."""
    path = tmp_path / "c.sqlite"
    run_campaign(TASKS, path, "serial")
    with sqlite3.connect(path) as db:
        db.execute("update results set status = 'failed', error = 'exit 143: synth: terminated' where key = ?",
                   (TASKS[0].key,))
    ran = []
    summary = run_campaign(TASKS, path, "serial", on_row=lambda task, out: ran.append(task.key))
    assert ran == [TASKS[0].key] and (summary.skipped, summary.failed) == (2, 0)
