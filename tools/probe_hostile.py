#!/usr/bin/env python3
"""Run ``synth`` the way an attacker or a careless user would, and judge every outcome.

Each probe is one ``python -m synth ...`` process, run with a 60 s wall-clock limit.
A probe passes when the process

* exits with the code it should (2 for bad input, 1 for a cleanly INVALID check,
  never 0 for a forged certificate),
* prints no traceback, and, on exit 2, exactly one line on stderr, ``synth: error: ...``,
* stays within the time and memory budget (60 s, 3 GiB of resident memory).

Usage::

    python tools/probe_hostile.py [--only SUBSTRING] [--json]

Prints one line per probe (exit code, seconds, peak MiB, verdict) and exits 1 if any fails.
``tests/test_probe_hostile.py`` runs it (marked ``slow``).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
from pathlib import Path

from _probe_run import MEMORY_LIMIT_MIB, WALL_LIMIT, run, synth_argv, write
from probe_campaign import campaign_probes
from probe_signals import special_probes

def _fixtures(folder: Path) -> dict:
    """A valid 4x4 SP certificate and a 4x4 ring explicit file to mutate."""
    cert, ring = folder / "sp44.json", folder / "ring44.jsonl"
    for cmd in (synth_argv("solve", "--torus", "4x4", "--out", str(cert)),
                synth_argv("baseline", "ring", "--torus", "4x4", "--out", str(ring))):
        code, _, err, _, _ = run(cmd, folder)
        if code != 0:
            raise SystemExit(f"probe_hostile: cannot build fixtures: {' '.join(cmd)}: {err.strip()}")
    return {"cert": json.loads(cert.read_text()), "ring": ring.read_text().splitlines(keepends=True)}


def _cert_variant(fx, edit):
    data = copy.deepcopy(fx["cert"])
    edit(data)
    return data


def _forged_overflow(c):
    """A weight of 2^57 + 1 (the claims are then edited to what the checker measures)."""
    c["base_schedule"]["components"][0]["weight"] = 2**57 + 1


def _adopt_measured(folder: Path, path: str) -> str:
    """Edit the claims of the certificate at ``path`` to whatever ``synth check`` measures, if it measures."""
    code, out, _, _, _ = run(synth_argv("check", path, "--json"), folder)
    try:
        measured = {k: v["measured"] for k, v in json.loads(out)["claims"].items()}
    except (ValueError, KeyError, TypeError):
        return path
    data = json.loads(Path(path).read_text())
    data["claims"].update({k: v for k, v in measured.items() if v is not None})
    Path(path).write_text(json.dumps(data))
    return path


def _set_tree(field, value):
    """Set vertex 1's entry of ``field`` (``parent``, ``up`` or ``down``) in the first component's tree."""
    def edit(c):
        c["base_schedule"]["components"][0]["tree"][field][1] = value
    return edit


def _gzip_bomb(folder: Path) -> str:
    """A gzip file of a few hundred KiB that inflates past the certificate limit (300 MiB of spaces)."""
    import zlib

    gz = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b" " * (1 << 20)
    data = gz.compress(b"{") + b"".join(gz.compress(block) for _ in range(300)) + gz.compress(b"}") + gz.flush()
    path = folder / "bomb.json.gz"
    path.write_bytes(data)
    return str(path)


def _ring_variant(fx, edit):
    lines = list(fx["ring"])
    edit(lines)
    return lines


def _ring_edit(line, key, value):
    """Set ``key`` of the explicit file's line ``line`` (0: the header, 1: the first transmission)."""
    def edit(lines):
        obj = json.loads(lines[line])
        obj[key] = value
        lines[line] = json.dumps(obj) + "\n"
    return edit


def probes(folder: Path, fx: dict) -> list:
    """(name, argv, allowed exit codes) for every probe."""
    w = lambda name, data: write(folder, name, data)  # noqa: E731
    cv = lambda edit: _cert_variant(fx, edit)  # noqa: E731
    rv = lambda edit: _ring_variant(fx, edit)  # noqa: E731
    sparse = folder / "big.json"
    with open(sparse, "wb") as f:
        f.truncate(1 << 30)  # 1 GiB of NUL bytes, sparse on disk
    ro_dir = Path("/proc/self")  # not writable even by root (a chmod'ed folder is, to root)
    bad, check = (2,), (1, 2)
    out = []

    def add(name, argv, codes):
        out.append((name, list(argv), codes))

    # item 1 and 7: forged or mistyped numbers in certificates
    forged = _adopt_measured(folder, w("forged.json", cv(_forged_overflow)))
    add("cert: weight 2^57+1, wrapped claims", ["check", forged], check)
    add("cert: forged, symmetric mode", ["check", str(folder / "forged.json"), "--mode", "symmetric"], check)
    add("cert: weight true", ["check", w("wtrue.json", cv(lambda c: c["base_schedule"]["components"][0].update(
        weight=True)))], check)
    add("cert: weight 10^30", ["check", w("wbig.json", cv(lambda c: c["base_schedule"]["components"][0].update(
        weight=10**30)))], check)
    for label, value in (("1.5", 1.5), ('"1"', "1"), ("true", True), ("10^30", 10**30), ("-1", -1)):
        add(f"cert: tree round {label}", ["check", w(f"round-{len(out)}.json", cv(_set_tree("up", value)))], check)
    add("cert: tree parent 10^30", ["check", w("src.json", cv(_set_tree("parent", 10**30)))], check)
    add("cert: tree parent itself", ["check", w("self.json", cv(_set_tree("parent", 1)))], check)
    add("cert: gzip bomb", ["check", _gzip_bomb(folder)], check)
    # item 2: declared sizes far beyond the content
    add("cert: rounds 10^9", ["check", w("rounds.json", cv(lambda c: c["base_schedule"].update(rounds=10**9)))],
        check)
    add("cert: rounds 10^9, claims edited", ["check", w("rounds2.json", cv(lambda c: (
        c["base_schedule"].update(rounds=10**9), c["claims"].update(rounds=10**9))))], check)
    add("cert: 3000x3000 torus, 4x4 schedule", ["check", w("huge-topo.json", cv(lambda c: c["topology"].update(
        shape=[3000, 3000])))], check)
    add("cert: elements 10^30", ["check", w("elements.json", cv(lambda c: c["chunking"].update(
        elements=10**30)))], check)
    add("cert: elements 2^62", ["check", w("elements62.json", cv(lambda c: (c["chunking"].update(
        elements=2**62), c["claims"].update(elements=2**62))))], check)
    add("cert: 1 GiB file", ["check", str(sparse)], check)
    add("cert: /dev/zero", ["check", "/dev/zero"], check)
    add("cert: a directory", ["check", str(folder)], check)
    # item 5: NaN, Infinity, huge integers in claims and bounds
    add("cert: claim NaN", ["check", w("nan.json", json.dumps(fx["cert"]).replace('"omega": "1"',
                                                                                 '"omega": NaN'))], check)
    add("cert: claim Infinity", ["check", w("inf.json", json.dumps(fx["cert"]).replace(
        '"rounds": 8', '"rounds": Infinity', 1))], check)
    add("cert: claim 10^30", ["check", w("claim-big.json", cv(lambda c: c["claims"].update(vol_abs=10**30)))], check)
    add("cert: claim '1e400'", ["check", w("claim-str.json", cv(lambda c: c["claims"].update(psi="1e400")))], check)
    add("cert: dual bound NaN", ["check", w("dual.json", json.dumps(cv(lambda c: c["solver"].update(
        depth_bound=4, dual_bound={"bound": 0.5}))).replace('"bound": 0.5', '"bound": NaN'))], check)
    # explicit files
    add("explicit: chunk size 0", ["check", w("ring-zero.jsonl", rv(_ring_edit(0,
        "chunk_elements", [0] * len(json.loads(fx["ring"][0])["chunk_elements"]))))], check)
    add("explicit: chunk size -1", ["check", w("ring-neg.jsonl", rv(_ring_edit(0,
        "chunk_elements", [-1] * len(json.loads(fx["ring"][0])["chunk_elements"]))))], check)
    add("explicit: chunk size 2^62", ["check", w("ring-big.jsonl", rv(_ring_edit(0,
        "chunk_elements", [2**62] * len(json.loads(fx["ring"][0])["chunk_elements"]))))], check)
    add("explicit: rounds 10^9", ["check", w("ring-rounds.jsonl", rv(_ring_edit(0, "rounds", 10**9)))], check)
    add("explicit: vertices 10^9", ["check", w("ring-vert.jsonl", rv(_ring_edit(0, "vertices", 10**9)))], check)
    add("explicit: round 1.5", ["check", w("ring-r15.jsonl", rv(_ring_edit(1, "round", 1.5)))], check)
    add("explicit: chunk true", ["check", w("ring-ct.jsonl", rv(_ring_edit(1, "chunk", True)))], check)
    add("explicit: chunk 10^30", ["check", w("ring-cbig.jsonl", rv(_ring_edit(1, "chunk", 10**30)))], check)
    add("explicit: export to msccl-xml", ["export", w("ring-ok.jsonl", fx["ring"]), "--format", "msccl-xml",
                                          "--out", str(folder / "ring.xml")], (0, 2))
    # flags
    cert = w("ok.json", fx["cert"])
    add("info --hyperx 1000x1000", ["info", "--hyperx", "1000x1000"], bad)
    add("solve --hyperx 1000x1000", ["solve", "--hyperx", "1000x1000"], bad)
    add("info --torus 100000x100000", ["info", "--torus", "100000x100000"], bad)
    for flag, value in (("--lattice", "0,0;0,0"), ("--lattice", "1000,0,0;0,1000,0;0,0,1000"),   # lattice kinds
                        ("--lattice", "999999999,0;0,999999999"), ("--mesh", "0x4"), ("--twisted", "4x4x4"),
                        ("--mesh", "100000x100000"), ("--machine", "tpu-v4:3x3x3"), ("--machine", "x" * 5000)):
        add(f"info {flag} {value[:30]}", ["info", flag, value], bad)
    for extra in (["--mesh", "4x4", "--depth", "2"], ["--twisted", "4x8", "--depth", "2", "--exchange"],   # lattice
                  ["--twisted", "4x8", "--depth", "0"], ["--machine", "tpu-v5p:16x20x28"],      # k-hop on lattice
                  ["--machine", "tpu7x:8x4x4"], ["--lattice", "4,1;0,4", "--depth", "2"]):        # kinds, presets
        add(f"solve {' '.join(extra)[:40]}", ["solve", *extra, "--time-limit", "5"], bad)
    # a range past the diameter is clipped to it before it is expanded: a quick sweep of 1..4, or an error
    add("sweep --depths 1..100000000", ["sweep", "--torus", "4x4", "--depths", "1..100000000", "--time-limit", "5"],
        (0, 2))
    for flag, value in (("--seed", "-1"), ("--seed", "99999999999999999999"), ("--time-limit", "-5"),
                        ("--time-limit", "0"), ("--time-limit", "nan"), ("--time-limit", "inf"),
                        ("--elements", str(10**30)), ("--elements", "0")):
        add(f"solve {flag} {value}", ["solve", "--torus", "4x4", "--depth", "2", flag, value], bad)
    for value in ("1e400", "0", "-1MiB", "nan", "1.5B"):
        add(f"solve --size {value}", ["solve", "--torus", "4x4", "--size", value], bad)
    add("run --size 0", ["run", cert, "--size", "0"], bad)
    add("compare --element-bytes 0", ["compare", "--torus", "4x4", "--element-bytes", "0"], bad)
    add("compare --sizes 1e400", ["compare", "--torus", "4x4", "--sizes", "1e400"], bad)
    add("solve --out an existing folder", ["solve", "--torus", "4x4", "--out", str(folder)], bad)
    add("solve --out read-only", ["solve", "--torus", "4x4", "--out", str(ro_dir / "c.json")], bad)
    add("solve --out below a file", ["solve", "--torus", "4x4", "--out", str(folder / "sp44.json" / "c.json")], bad)
    add("export --out a folder", ["export", cert, "--format", "explicit", "--out", str(folder)], bad)
    add("export --out read-only", ["export", cert, "--format", "explicit", "--out", str(ro_dir / "e.jsonl")], bad)
    add("baseline --out a folder", ["baseline", "ring", "--torus", "4x4", "--out", str(folder)], bad)
    add("sweep --out read-only", ["sweep", "--torus", "4x4", "--depths", "2..3", "--time-limit", "5",
                                  "--out", str(ro_dir / "t.json")], bad)
    add("check a missing file", ["check", str(folder / "missing.json")], bad)
    add("--topology /dev/zero", ["info", "--topology", "/dev/zero"], bad)
    # exports that would write what the checker or a runtime refuses
    for name in ('a"b', "a<b&c", "a'b", "tab\there", "x" * 300):
        add(f"export msccl-xml --name {name[:12]!r} --check", ["export", cert, "--format", "msccl-xml", "--check",
                                                               "--name", name, "--out", str(folder / "n.xml")],
            (0, 2))
    for value in ("1", "2", "-1", "0"):
        add(f"export explicit --elements {value} (below the chunk count)",
            ["export", cert, "--format", "explicit", "--elements", value, "--out", str(folder / "el.jsonl")], bad)
    out.extend(reader_probes(folder, fx))
    out += _group_search_probes(folder)
    out += campaign_probes(folder)
    return out


# ------------------------------------------------------------------ user graphs
def _graph_file(folder: Path, name: str, n: int, edges, **extra) -> str:
    return write(folder, f"g-{name}.json", {"format": "synth-topology", "version": 1, "vertices": n,
                                             "links": [list(e) for e in edges], **extra})


def _group_search_probes(folder: Path) -> list:
    """User graphs: the automorphism search keeps its 30 s limit and says 'found within the limits' when it
    gives up; symmetric graphs solve balanced without generators; bad topology content is one clean line."""
    import itertools
    import random

    g = lambda name, n, edges, **extra: _graph_file(folder, name, n, edges, **extra)  # noqa: E731
    path = lambda n: [(i, i + 1) for i in range(n - 1)]  # noqa: E731
    complete = lambda n: list(itertools.combinations(range(n), 2))  # noqa: E731
    cube = [(v, v ^ (1 << i)) for v in range(64) for i in range(6) if v < v ^ (1 << i)]
    rng = random.Random(1)
    rigid = [(i, (i + 1) % 300) for i in range(300)] + [(i, rng.randrange(300)) for i in range(0, 300, 7)]
    rigid = sorted({(min(a, b), max(a, b)) for a, b in rigid if a != b})
    out = []
    add = lambda name, argv, allowed: out.append((name, argv, allowed))  # noqa: E731
    balanced = (0,)
    for name, f in [("K12", g("k12", 12, complete(12))), ("K60", g("k60", 60, complete(60))),
                    ("6-cube", g("q6", 64, cube)),
                    ("star of 8 hosts", g("star8", 9, [(h, 8) for h in range(8)], compute=list(range(8)))),
                    ("star of 12 hosts", g("star12", 13, [(h, 12) for h in range(12)], compute=list(range(12)))),
                    ("C9", g("c9", 9, [(i, (i + 1) % 9) for i in range(9)]))]:
        add(f"solve --topology {name} (balanced, no generators)", ["solve", "--topology", f], balanced)
        add(f"info --topology {name}", ["info", "--topology", f], balanced)
    limited = (2,)   # refused in one line within the limit: the search gives up honestly or proves Aut trivial
    # a rigid graph small enough for the packing model gets its schedule; the rest are refused
    add("solve --topology rigid 300", ["solve", "--topology", g("rigid300", 300, rigid)], (0, 2))
    for name, f in [("path 2000", g("p2000", 2000, path(2000))), ("path 100000", g("p100k", 100_000, path(100_000))),
                    ("path 12000", g("p12k", 12_000, path(12_000)))]:
        add(f"solve --topology {name}", ["solve", "--topology", f], limited)
        add(f"info --topology {name}", ["info", "--topology", f], (0, 2))  # facts with a group, or refused
    add("solve --topology K6,6", ["solve", "--topology", g("k66", 12, [(a, 6 + b) for a in range(6)
                                                                      for b in range(6)])], (0, 2))
    add("solve --topology K40,40", ["solve", "--topology", g("k4040", 80, [(a, 40 + b) for a in range(40)
                                                                          for b in range(40)])], (0, 2))
    square = [(0, 1), (1, 2), (2, 3), (3, 0)]
    for name, extra in [("compute []", {"compute": []}), ("compute repeated", {"compute": [0, 0, 1]}),
                        ("compute out of range", {"compute": [9]}),
                        ("generators short", {"generators": [[1, 2, 3]]}),
                        ("generators ragged", {"generators": [[1, 2, 3, 0], [0, 1]]}),
                        ("generators []", {"generators": []}), ("generators [[]]", {"generators": [[]]}),
                        ("generators not a permutation", {"generators": [[1, 1, 2, 3]]}),
                        ("generators not automorphisms", {"generators": [[1, 0, 2, 3]]}),
                        ("generators of floats", {"generators": [[1.0, 2, 3, 0]]})]:
        f = g(name.replace(" ", "_").replace("[", "").replace("]", ""), 4, square, **extra)
        add(f"solve --topology {name}", ["solve", "--topology", f], bad := (2,))
        add(f"info --topology {name}", ["info", "--topology", f], bad)
    for n in (0, 1):
        add(f"info --topology {n}-vertex graph", ["info", "--topology", g(f"v{n}", n, [])], (0, 2))
        add(f"solve --topology {n}-vertex graph", ["solve", "--topology", g(f"v{n}", n, [])], (2,))
    return out


# ------------------------------------------------------------------ readers, memory, simulate and sizes
# Readers that must never block (FIFOs, devices, cache entries), MPI sizes beyond memory, simulate on
# schedules that are not allreduces, 1 PiB, names with control characters (interrupts and the cases that
# need their own environment: probe_signals.py).

def _solved_entry(folder: Path, seed: int) -> Path:
    """Solve 4x4, k = 2 once into the probes' cache; the path of its entry (to replace with something hostile)."""
    cache = folder / "cache"
    before = set(cache.glob("*.json")) if cache.exists() else set()
    code, _, err, _, _ = run(synth_argv("solve", "--torus", "4x4", "--depth", "2", "--seed", str(seed),
                                     "--time-limit", "20"), folder)
    new = sorted(set(cache.glob("*.json")) - before)
    if code != 0 or len(new) != 1:
        raise SystemExit(f"probe_hostile: cannot build a cache entry: {err.strip()}")
    return new[0]


def reader_probes(folder: Path, fx: dict) -> list:
    """(name, argv, allowed exit codes) of the reader, memory, simulate and size cases."""
    bad, invalid = (2,), (1,)
    fifo = folder / "fifo.json"
    os.mkfifo(fifo)
    zero = folder / "zero.json"
    zero.symlink_to("/dev/zero")
    cert = write(folder, "ok39.json", fx["cert"])
    out = []
    for label, path in (("FIFO", fifo), ("symlink to /dev/zero", zero)):
        for reader, argv in (("check", ["check", path]), ("run", ["run", path, "--size", "4KiB"]),
                             ("simulate", ["simulate", path]),
                             ("export", ["export", path, "--format", "explicit", "--out", str(folder / "e39.jsonl")]),
                             ("info --topology", ["info", "--topology", path]),
                             ("solve --topology", ["solve", "--topology", path]),
                             ("solve --start", ["solve", "--torus", "4x4", "--depth", "2", "--start", path])):
            out.append((f"{reader} a {label}", [str(a) for a in argv], bad))
    for seed, label, make in ((11, "FIFO", os.mkfifo),
                              (12, "symlink to /dev/zero", lambda p: p.symlink_to("/dev/zero"))):
        entry = _solved_entry(folder, seed)
        entry.unlink()
        make(entry)             # the next solve must skip it at once and solve again (exit 0)
        out.append((f"cache entry: a {label}", ["solve", "--torus", "4x4", "--depth", "2", "--seed", str(seed),
                                               "--time-limit", "20"], (0,)))
    for size in ("64GiB", "1PiB"):
        out.append((f"run --size {size} (beyond memory)", ["run", cert, "--size", size], bad))
    out.append(("run --size 64GiB --engine jax", ["run", cert, "--size", "64GiB", "--engine", "jax"], bad))
    ring = fx["ring"]
    first = json.loads(ring[1])
    forged = dict(first, chunk=(first["chunk"] + 1) % len(json.loads(ring[0])["chunk_elements"]))
    for label, lines in (("a dropped transmission", ring[:1] + ring[2:]), ("a duplicated transmission",
                                                                             ring + ring[1:2]),
                         ("a forged transmission", ring[:1] + [json.dumps(forged) + "\n"] + ring[2:])):
        path = write(folder, f"sim39-{len(out)}.jsonl", lines)
        out.append((f"simulate {label}", ["simulate", path, "--size", "64KiB"], invalid))
    forged_cert = _cert_variant(fx, _set_tree("down", 0))   # vertex 1 never gets the total back
    out.append(("simulate a certificate missing a transmission", ["simulate", write(folder, "sim39.json", forged_cert),
                                                                  "--size", "64KiB"], (1, 2)))
    out.append(("compare --sizes 1PiB (the documented maximum)", ["compare", "--torus", "4x4", "--sizes", "1PiB"],
                (0,)))
    out.append(("solve --size 1PiB", ["solve", "--torus", "4x4", "--size", "1PiB", "--time-limit", "5"], (0,)))
    out.append(("compare --sizes 2PiB", ["compare", "--torus", "4x4", "--sizes", "2PiB"], bad))
    for cmd in ("info", "solve", "bound"):
        path = write(folder, f"name39-{cmd}.json", {"format": "synth-topology", "version": 1,
                                                    "name": "ring\n\x1b[31mred\r\x07", "vertices": 4,
                                                    "links": [[0, 1], [1, 2], [2, 3], [3, 0]]})
        out.append((f"{cmd}: a topology name with control characters", [cmd, "--topology", path], (0,)))
    path = write(folder, "name39-bad.json", {"format": "synth-topology", "version": 1, "name": "x\x1b[2J\n",
                                               "vertices": 4, "links": [[0, 1]]})
    out.append(("info: a bad topology named with control characters", ["info", "--topology", path], bad))
    return out


def name_verdict(name: str, out: str, err: str) -> str:
    """No control character of a user-supplied name reaches the terminal."""
    if "control characters" in name and any(c in out + err for c in "\x1b\r\x07"):
        return "a control character printed raw"
    return ""




def judge(code, err, seconds, mib, allowed) -> str:
    """'' when the outcome is acceptable, else what is wrong."""
    if code is None:
        return f"killed after {WALL_LIMIT:.0f} s"
    if mib > MEMORY_LIMIT_MIB:
        return f"peak memory {mib:.0f} MiB"
    if "Traceback" in err:
        return "traceback: " + err.strip().splitlines()[-1][:120]
    if code not in allowed:
        return f"exit {code}, expected {'/'.join(map(str, allowed))}"
    if code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("synth: error:")]
        if len(errors) != 1:
            return f"exit 2 with {len(errors)} 'synth: error:' lines: {err.strip()[:120]!r}"
    return ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--only", help="run only probes whose name contains this")
    parser.add_argument("--json", action="store_true", help="one JSON object per probe")
    args = parser.parse_args(argv)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        fx = _fixtures(folder)
        for name, cmd, allowed in probes(folder, fx):
            if args.only and args.only not in name:
                continue
            code, out, err, seconds, mib = run(synth_argv(*cmd), folder)
            verdict = judge(code, err, seconds, mib, allowed) or name_verdict(name, out, err)
            failed += bool(verdict)
            if args.json:
                print(json.dumps({"probe": name, "exit": code, "seconds": round(seconds, 2),
                                  "peak_mib": round(mib), "ok": not verdict, "problem": verdict,
                                  "stderr": err.strip()[-300:]}))
            else:
                first = err.strip().splitlines()[0][:90] if err.strip() else ""
                print(f"{'ok  ' if not verdict else 'FAIL'} {name:<42} exit {code}  {seconds:5.1f} s "
                      f"{mib:6.0f} MiB  {verdict or first}", flush=True)
        for name, verdict, seconds, err in special_probes(folder, args.only):
            failed += bool(verdict)
            if args.json:
                print(json.dumps({"probe": name, "seconds": round(seconds, 2), "ok": not verdict, "problem": verdict,
                                  "stderr": err.strip()[-300:]}))
            else:
                print(f"{'ok  ' if not verdict else 'FAIL'} {name:<42} {seconds:5.1f} s  "
                      f"{verdict or (err.strip().splitlines() or [''])[-1][:90]}", flush=True)
    print(f"{failed} failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
