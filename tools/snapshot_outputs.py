#!/usr/bin/env python3
"""Record what a fixed set of ``synth`` commands write and print, and compare two such records.

A refactoring must not change behaviour: the same commands must give the same schedules, the
same certificates and the same reports.  This script runs a fixed set of commands (SP, exchange,
k-hop trees proven optimal on small tori, balanced trees, HyperX, spine-leaf, baselines, exports,
checks, info, bound, compare), each in its own process with a fresh cache, and stores every file
it writes and everything it prints, with the fields that legitimately vary between runs removed
(any JSON key ``seconds``).

Usage::

    python tools/snapshot_outputs.py record DIR        # DIR gets one file per output
    python tools/snapshot_outputs.py compare DIR_A DIR_B

``compare`` prints each file that differs (with the first differing line) and exits 1 if any does.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: (name, argv); ``{out}`` is replaced by a path in the output folder, ``{sp44}`` by the 4x4 SP certificate
COMMANDS = [
    ("sp-4x4", ["solve", "--torus", "4x4", "--out", "{out}.json", "--json"]),
    ("sp-6x6", ["solve", "--torus", "6x6", "--out", "{out}.json"]),
    ("sp-3x3x3", ["solve", "--torus", "3x3x3", "--out", "{out}.json", "--json"]),
    ("sp-5", ["solve", "--torus", "5", "--out", "{out}.json"]),
    ("exchange-8x8", ["solve", "--torus", "8x8", "--exchange", "--out", "{out}.json", "--json"]),
    ("exchange-4x4x4", ["solve", "--torus", "4x4x4", "--exchange", "--out", "{out}.json"]),
    ("khop-4x4-k2", ["solve", "--torus", "4x4", "--depth", "2", "--out", "{out}.json", "--json"]),
    ("khop-5x5-k3", ["solve", "--torus", "5x5", "--depth", "3", "--out", "{out}.json", "--json"]),
    ("khop-6x6-k2", ["solve", "--torus", "6x6", "--depth", "2", "--out", "{out}.json", "--json"]),
    ("xhop-6x6-k2", ["solve", "--torus", "6x6", "--exchange", "--depth", "2", "--out", "{out}.json", "--json"]),
    ("rect-6x4", ["solve", "--torus", "6x4", "--out", "{out}.json", "--json"]),
    ("translations-4x4", ["solve", "--torus", "4x4", "--group", "translations", "--out", "{out}.json", "--json"]),
    ("family-6x4-k3", ["solve", "--torus", "6x4", "--depth", "3", "--out", "{out}.json", "--json"]),
    ("hyperx-4x4", ["solve", "--hyperx", "4x4", "--out", "{out}.json", "--json"]),
    ("hyperx-3x3", ["solve", "--hyperx", "3x3", "--out", "{out}.json"]),
    ("spine-leaf-2-4-2", ["solve", "--spine-leaf", "2,4,2", "--out", "{out}.json", "--json"]),
    ("baseline-ring-4x4", ["baseline", "ring", "--torus", "4x4", "--out", "{out}.jsonl", "--json"]),
    ("baseline-bucket-4x4", ["baseline", "bucket", "--torus", "4x4", "--out", "{out}.jsonl"]),
    ("baseline-swing-l-4x4", ["baseline", "swing-l", "--torus", "4x4", "--out", "{out}.jsonl", "--json"]),
    ("baseline-swing-b-4x4", ["baseline", "swing-b", "--torus", "4x4", "--out", "{out}.jsonl"]),
    ("baseline-trivance-l-3x3", ["baseline", "trivance-l", "--torus", "3x3", "--out", "{out}.jsonl", "--json"]),
    ("baseline-rd-4x4", ["baseline", "recursive-doubling", "--torus", "4x4", "--out", "{out}.jsonl"]),
    ("baseline-hd-4x4", ["baseline", "halving-doubling", "--torus", "4x4", "--out", "{out}.jsonl", "--json"]),
    ("export-explicit-sp44", ["export", "{sp44}", "--format", "explicit", "--out", "{out}.jsonl", "--json"]),
    ("export-msccl-sp44", ["export", "{sp44}", "--format", "msccl-xml", "--out", "{out}.xml", "--check"]),
    ("check-sp44", ["check", "{sp44}", "--json"]),
    ("check-sp44-symmetric", ["check", "{sp44}", "--mode", "symmetric"]),
    ("check-instance-khop", ["check", str(ROOT / "instances" / "torus" / "khop-8x8-k3.json"), "--json"]),
    ("info-8x8", ["info", "--torus", "8x8", "--json"]),
    ("info-hyperx-4x4", ["info", "--hyperx", "4x4"]),
    ("bound-6x6", ["bound", "--torus", "6x6", "--json"]),
    ("compare-4x4", ["compare", "--torus", "4x4", "--json"]),
    ("compare-6x6", ["compare", "--torus", "6x6", "--sizes", "64KiB,16MiB"]),
    ("sweep-4x4", ["sweep", "--torus", "4x4", "--depths", "1..4", "--json"]),
]


def _strip(obj):
    """``obj`` without any key named ``seconds`` (wall-clock times), recursively."""
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k != "seconds"}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def normalize(text: str) -> str:
    """Each line that is JSON loses its ``seconds`` keys (and so does a whole text that is one JSON object)."""
    try:
        return json.dumps(_strip(json.loads(text)), sort_keys=True, indent=1) + "\n"
    except ValueError:
        pass
    out = []
    for line in text.splitlines():
        try:
            out.append(json.dumps(_strip(json.loads(line)), sort_keys=True))
        except ValueError:
            out.append(line)
    return "\n".join(out) + "\n"


def record(folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="synth-snapshot-"))
    env = {**os.environ, "SYNTH_CACHE_DIR": str(work / "cache")}
    sp44 = work / "sp-4x4.json"
    failed = 0
    for name, argv in COMMANDS:
        out = work / name
        args = [a.replace("{out}", str(out)).replace("{sp44}", str(sp44)) for a in argv]
        proc = subprocess.run([sys.executable, "-m", "synth", *args], capture_output=True, text=True, env=env,
                              cwd=work)
        failed += proc.returncode != 0
        text = f"exit {proc.returncode}\n--- stdout\n{normalize(proc.stdout)}--- stderr\n{proc.stderr}"
        (folder / f"{name}.out").write_text(normalize_paths(text, work))
        for written in sorted(work.glob(f"{name}.*")):
            (folder / written.name).write_text(normalize_paths(normalize(written.read_text()), work))
        print(f"{name}: exit {proc.returncode}", file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


_TIMING = re.compile(r"\(\d+(\.\d+)? s\)")


def normalize_paths(text: str, work: Path) -> str:
    """``text`` with the temporary folder and the checkout named, and progress timings such as ``(0.2 s)`` blanked."""
    text = text.replace(str(work), "<dir>").replace(str(ROOT), "<root>")
    return _TIMING.sub("(<t> s)", text)


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    differ = 0
    for name in names:
        pa, pb = a / name, b / name
        if not (pa.exists() and pb.exists()):
            print(f"{name}: only in {a if pa.exists() else b}")
            differ += 1
            continue
        la, lb = pa.read_text().splitlines(), pb.read_text().splitlines()
        if la != lb:
            differ += 1
            diff = [d for d in difflib.unified_diff(la, lb, lineterm="", n=0) if d[:1] in "+-" and d[:3] not in
                    ("---", "+++")]
            print(f"{name}: differs ({len(diff)} lines), first: {diff[:2]}")
    print(f"{len(names)} outputs compared, {differ} differ")
    return 1 if differ else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("record", allow_abbrev=False).add_argument("folder", type=Path)
    cmp = sub.add_parser("compare", allow_abbrev=False)
    cmp.add_argument("a", type=Path)
    cmp.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    return record(args.folder) if args.cmd == "record" else compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
