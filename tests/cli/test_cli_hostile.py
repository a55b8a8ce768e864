"""Every command under hostile arguments: one line ``synth: error: ...``, exit 2 (1 only for INVALID), no traceback.

All runs are in-process on tiny tori (flags are refused before anything is solved); one
subprocess test sends SIGTERM (and SIGKILL) in the middle of a write.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from synth.cli import main

TOPO = ["--torus", "3x3"]
BAD_SECONDS = ["-5", "0", "nan", "inf", "-inf", "1e400", "abc", ""]
BAD_SEEDS = ["-1", "99999999999999999999", "1.5", str(2**31), "x"]
BAD_SIZES = ["0", "-1", "1e400", "1.5B", "nan", "inf", "1e99999", "64KiBs", "999999999999PiB", "0.5", "1" * 80]
BAD_COUNTS = ["0", "-3", str(10**30), "1e3", "nan", "1.5"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A valid certificate and explicit file, and hostile files of every kind."""
    d = tmp_path_factory.mktemp("hostile")
    cert, explicit = d / "c.json", d / "e.jsonl"
    assert main(["solve", *TOPO, "--out", str(cert)]) == 0
    assert main(["export", str(cert), "--out", str(explicit)]) == 0
    data = json.loads(cert.read_text())
    bad = {
        "missing": d / "nope.json",
        "folder": d,
        "empty": d / "empty.json",
        "binary": d / "binary.json",
        "array": d / "array.json",
        "nested": d / "nested.json",
        "nan": d / "nan.json",
        "huge": d / "huge.json",
        "truncated": d / "truncated.json",
        "truncated_explicit": d / "truncated.jsonl",
        "devnull": "/dev/null",
    }
    bad["empty"].write_text("")
    bad["binary"].write_bytes(bytes(range(256)) * 4)
    bad["array"].write_text("[1, 2, 3]")
    bad["nested"].write_text("[" * 100_000 + "]" * 100_000)
    bad["nan"].write_text(json.dumps({**data, "chunking": {**data["chunking"], "elements": float("nan")}}))
    bad["huge"].write_text(json.dumps({**data, "chunking": {**data["chunking"], "elements": 10**30}}))
    text = cert.read_text()
    bad["truncated"].write_text(text[: len(text) // 2])
    lines = explicit.read_text().splitlines(keepends=True)
    bad["truncated_explicit"].write_text("".join(lines[: len(lines) // 2]) + lines[len(lines) // 2][:7])
    return {"cert": str(cert), "explicit": str(explicit), "dir": d, **{k: str(v) for k, v in bad.items()}}


def _cases(files):
    c, d = files["cert"], files["dir"]
    a_file = files["empty"]
    bad_outs = [str(d), str(d / "no-such-folder" / "x.json"), a_file + "/x.json", "/proc/synth-hostile.json"]
    cases = []
    for v in BAD_SECONDS:
        cases += [["solve", *TOPO, "--depth", "1", "--time-limit", v], ["sweep", *TOPO, "--time-limit", v],
                  ["run", c, "--timeout", v], ["simulate", c, "--timeout", v]]
    for v in BAD_SEEDS:
        cases += [["solve", *TOPO, "--depth", "1", "--seed", v], ["sweep", *TOPO, "--seed", v]]
    for v in BAD_SIZES:
        cases += [["solve", *TOPO, "--size", v], ["compare", *TOPO, "--sizes", v], ["sweep", *TOPO, "--sizes", v],
                  ["run", c, "--size", v], ["compare", *TOPO, "--sizes", f"64KiB,{v}"], ["simulate", c, "--size", v]]
    for v in BAD_COUNTS:
        cases += [["solve", *TOPO, "--elements", v], ["export", c, "--out", str(d / "x.jsonl"), "--elements", v],
                  ["baseline", "bucket", "--torus", "4x4", "--elements", v], ["compare", *TOPO, "--element-bytes", v],
                  ["solve", *TOPO, "--depth", v], ["sweep", *TOPO, "--jobs", v], ["run", c, "--iters", v],
                  ["export", c, "--out", str(d / "x.jsonl"), "--max-transmissions", v]]
    for v in ["0", "5..2", "1..x", "", "-1..3", "1..2..3", "0..4", "9" * 5000]:
        cases.append(["sweep", *TOPO, "--depths", v])
    for v in ["fast", "0Gbps", "1e9999Gbps", "-1Gbps"]:
        cases += [["compare", *TOPO, "--bandwidth", v], ["sweep", *TOPO, "--bandwidth", v],
                  ["simulate", c, "--bandwidth", v]]
    for v in ["-1us", "1e9999s", "soon"]:
        cases += [["compare", *TOPO, "--alpha", v], ["compare", *TOPO, "--hop-latency", v],
                  ["simulate", c, "--alpha", v], ["simulate", c, "--hop-latency", v]]
    for out in bad_outs:
        cases += [["solve", *TOPO, "--out", out], ["export", c, "--out", out], ["baseline", "bucket", "--torus", "4x4",
                  "--out", out], ["sweep", *TOPO, "--time-limit", "1", "--out", out],
                  ["export", c, "--format", "msccl-xml", "--out", out]]
    for shape in ["0x0", "2x9", "1e9x3", "3x", "x", "-3x3", "3.5x3", "9" * 50]:
        cases += [["info", "--torus", shape], ["bound", "--torus", shape], ["solve", "--torus", shape]]
    cases += [["info", "--hyperx", "2x"], ["info", "--spine-leaf", "a,b"], ["info", "--spine-leaf", "0,0,0"],
              ["info", "--topology", files["missing"]], ["info", "--topology", str(d)],
              ["info", "--topology", files["binary"]], ["info", "--topology", files["array"]],
              ["info", "--topology", files["nested"]], ["info"], ["bound"], ["compare"], ["sweep"],
              ["baseline", "nope", *TOPO], ["export", c, "--format", "pdf", "--out", str(d / "x")],
              ["export", files["explicit"], "--out", str(d / "x.jsonl"), "--elements", "0"],
              ["solve", *TOPO, "--mode", "bogus"], ["simulate", c, "--mode", "bogus"], ["simulate"],
              ["simulate", c, "--element-bytes", "0"], ["solve", *TOPO, "--size", "1MiB", "--engine", "bogus"]]
    for v in ["-1", str(10**30), "0", "1e9", "2"]:  # --min-bytes 2 exceeds --max-bytes 1
        cases += [["export", c, "--format", "msccl-xml", "--out", str(d / "a.xml"), "--max-bytes", v]] * (v != "2")
        cases += [["export", c, "--format", "msccl-xml", "--out", str(d / "a.xml"), "--min-bytes", v,
                   "--max-bytes", "1"]] * (v != "0")
    for v in ["", "local:0", "local:x", "local:99999", "http://x:1", "tcp://", "tcp://host", "serial:2", "x" * 5000]:
        cases += [["campaign", "run", files["missing"], "--cluster", v], ["sweep", *TOPO, "--cluster", v]]
    cases += [["campaign"], ["campaign", "run"], ["campaign", "show"], ["campaign", "bogus", c]]
    cases += [["draw"], ["draw", c], ["draw", c, "--out", str(d / "x.jpg")], ["draw", c, "--out", str(d)],
              ["draw", c, "--out", str(d / "missing" / "x.png")]]
    cases += [["draw", c, "--out", str(d / "x.png"), "--round", v] for v in ["0", "-1", "x", "99999", "1e9"]]
    cases += [["draw", c, "--out", str(d / "x.svg"), "--size", v] for v in ["0", "-1", "2PiB", "x"]]
    for kind in ["missing", "folder", "empty", "binary", "array", "nested", "nan", "huge", "truncated",
                 "truncated_explicit", "devnull"]:
        f = files[kind]
        cases += [["campaign", "run", f, "--cluster", "serial", "--store", str(d / f"{kind}.sqlite")],
                  ["campaign", "status", f], ["campaign", "show", f, "--json"],
                  ["campaign", "run", c, "--cluster", "serial", "--store", f]]
        cases += [["draw", f, "--out", str(d / f"{kind}.png")]]
        cases += [["check", f], ["check", f, "--json"], ["check", f, "--mode", "symmetric"],
                  ["export", f, "--out", str(d / "x.jsonl")], ["solve", *TOPO, "--depth", "1", "--start", f]]
        if kind != "huge":  # both ignore the element count (and run would start MPI on a readable file)
            cases += [["run", f], ["export", f, "--format", "msccl-xml", "--out", str(d / "x.xml")], ["simulate", f]]
    # failures on any topology, and repair
    for v in ["", "-", "0-", "x-y", "0-0", "0.0-0.0.1", "99-100", "0-9" * 3, "9" * 50 + "-1", "1.1-1.1.1.1"]:
        cases += [["info", *TOPO, "--fail-link", v], ["repair", c, "--fail-link", v]]
    for v in ["", "x", "-1", "99", "0.0.0", "9" * 50]:
        cases += [["solve", *TOPO, "--fail-node", v], ["repair", c, "--fail-node", v]]
    cases += [["repair", c], ["repair", c, "--fail-link", "0-1", "--fail-link", "0-3", "--fail-link", "0-2",
                                 "--fail-link", "0-6"]]
    for v in BAD_SECONDS:
        cases.append(["repair", c, "--fail-link", "0-1", "--time-limit", v])
    for out in bad_outs:
        cases.append(["repair", c, "--fail-link", "0-1", "--out", out])
    for kind in ["missing", "folder", "empty", "binary", "array", "nested", "nan", "truncated", "devnull"]:
        cases.append(["repair", files[kind], "--fail-link", "0-1"])
    return cases


def test_no_traceback_for_hostile_arguments(files, capsys):
    """Over 400 hostile invocations of every command, in process."""
    from synth.cli import _parser

    cases = _cases(files)
    sub = next(a for a in _parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    assert {argv[0] for argv in cases} == set(sub.choices), "every command gets hostile arguments"
    failures = []
    for argv in cases:
        code = main(argv)
        out, err = capsys.readouterr()
        lines = [line for line in err.splitlines() if line.strip()]
        allowed = (1, 2) if argv[0] == "check" else (2,)
        if (code not in allowed or len(lines) != 1 or not lines[0].startswith("synth: error:")
                or "Traceback" in err or (code == 1 and "INVALID" not in out)):
            failures.append((argv[:3] + (["..."] if len(argv) > 3 else []), code, err[-300:]))
    assert not failures, f"{len(failures)} of {len(cases)}: " + "\n".join(map(str, failures[:20]))


def test_bad_out_is_refused_before_solving(files, capsys, monkeypatch):
    """An unwritable --out costs nothing: the solve never starts."""
    import importlib

    def boom(*a, **k):
        raise AssertionError("solved before checking --out")

    monkeypatch.setattr(importlib.import_module("synth.cli.solve"), "plan", boom)
    code = main(["solve", *TOPO, "--depth", "1", "--out", str(files["dir"])])
    err = capsys.readouterr().err
    assert code == 2 and err.strip() == f"synth: error: cannot write {files['dir']}: it is a folder"


@pytest.mark.parametrize("command, hint", [(["check", "c.json"], True), (["run", "c.json"], False),
                                           (["export", "c.json", "--out", "x.jsonl"], False)])
def test_out_of_memory_is_one_line_that_names_a_mode_only_where_there_is_one(capsys, monkeypatch, tmp_path,
                                                                             command, hint):
    # `synth run` of a 24x24 certificate on 576 JAX devices said "try --mode symmetric": run has no such mode
    import importlib

    def spent(*a, **k):
        raise MemoryError()

    for module, name in (("synth.cli.check", "check_file"), ("synth.cli.run", "cmd_run"),
                         ("synth.cli.export", "require_valid")):
        monkeypatch.setattr(importlib.import_module(module), name, spent)
    monkeypatch.chdir(tmp_path)
    code = main(command)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("synth: error: out of memory")
    assert ("--mode symmetric" in err) == hint


def test_a_bug_is_one_line_and_exit_2(capsys, monkeypatch):
    """An unexpected exception is a bug: one line naming it (never exit 1, which means INVALID)."""
    import importlib

    def bug(*a, **k):
        raise KeyError("oops")

    monkeypatch.setattr(importlib.import_module("synth.cli.check"), "check_file", bug)
    monkeypatch.delenv("SYNTH_DEBUG", raising=False)
    code = main(["check", "whatever.json"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("synth: internal error: KeyError")
    monkeypatch.setenv("SYNTH_DEBUG", "1")
    assert main(["check", "whatever.json"]) == 2
    assert "Traceback" in capsys.readouterr().err


CHILD = textwrap.dedent("""
    import sys, time
    import synth.check.explicit as ex
    from synth.cli import main

    original = ex.explicit_lines

    def slow(*args, **kw):  # the write stalls after its first line, so the signal lands mid-write
        for i, line in enumerate(original(*args, **kw)):
            yield line
            if i == 0:
                print("writing", flush=True)
                time.sleep(30)

    ex.explicit_lines = slow
    sys.exit(main(["baseline", "bucket", "--torus", "4x4", "--out", sys.argv[1]]))
""")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_signal_during_a_write(tmp_path, sig):
    """SIGTERM: the temp file is removed, the old file kept, exit 143 with one line.  SIGKILL cannot be
    handled: what it leaves is a hidden folder, which MSCCL_ALGO_DIR loaders skip (they read every file)."""
    target = tmp_path / "algo.jsonl"
    target.write_text("old\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(target)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().strip() == "writing"
        child.send_signal(sig)
        _, err = child.communicate(timeout=20)
    finally:
        child.kill()
    assert target.read_text() == "old\n"
    others = [p for p in tmp_path.iterdir() if p != target]
    if sig == signal.SIGTERM:
        assert child.returncode == 143 and err.strip() == "synth: terminated", err
        assert others == []
    else:
        assert child.returncode == -signal.SIGKILL
        assert others and all(p.is_dir() and p.name.startswith(".") for p in others)
