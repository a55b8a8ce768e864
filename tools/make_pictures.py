"""Draw the pictures of the README and docs (``docs/images/``) with ``synth draw``, from the certificates
in ``instances/``.

Each picture is ``synth draw INSTANCE --out docs/images/NAME.png`` at the defaults (1 MiB per node,
400 Gb/s links, 400 ns per hop, alpha 1 us), run through the CLI so the files are exactly what a
user gets; the command is deterministic, so running this again rewrites the same bytes.

Run: ``python tools/make_pictures.py [--check]``; ``--check`` draws into a temporary folder and
exits 1 if any picture in ``docs/images/`` differs (or is 250 KB or more).
"""

from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
from pathlib import Path

from synth.cli import main as synth

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
MAX_BYTES = 250_000
#: picture name -> (instance, extra ``synth draw`` flags)
PICTURES = {
    "sp-8x8.png": ("instances/torus/sp-8x8.json", []),
    "khop-8x8-k3.png": ("instances/torus/khop-8x8-k3.json", []),
    "windmill-hyperx-8x8.png": ("instances/hyperx/windmill-8x8.json", []),
}


def draw_all(folder: Path) -> list:
    out = []
    for name, (instance, flags) in PICTURES.items():
        target = folder / name
        code = synth(["draw", str(ROOT / instance), "--out", str(target), *flags])
        if code != 0:
            raise SystemExit(f"synth draw {instance} failed (exit {code})")
        out.append(target)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    ap.add_argument("--check", action="store_true", help="compare with docs/images/ instead of writing there")
    args = ap.parse_args(argv)
    if not args.check:
        IMAGES.mkdir(parents=True, exist_ok=True)
        written = draw_all(IMAGES)
        too_big = [p.name for p in written if p.stat().st_size >= MAX_BYTES]
        if too_big:
            print(f"over {MAX_BYTES} bytes: {', '.join(too_big)}", file=sys.stderr)
        return 1 if too_big else 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = draw_all(Path(tmp))
        stale = [p.name for p in fresh if not (IMAGES / p.name).exists()
                 or not filecmp.cmp(p, IMAGES / p.name, shallow=False) or p.stat().st_size >= MAX_BYTES]
    for name in stale:
        print(f"docs/images/{name} is stale or too large: run python tools/make_pictures.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
