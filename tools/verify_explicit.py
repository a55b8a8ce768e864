#!/usr/bin/env python3
"""An independent verifier of synth-explicit files, in plain Python (no numpy, no synth).

It shares no code with ``synth.check``: it reads the JSON Lines file of the
format documented in README.md, simulates the allreduce with exact integer
*contribution sets* (each node's value of each chunk is the set of inputs it
sums; a reduce adds a disjoint set, a copy replaces it), and recomputes S,
Vol_abs, Vol_phys, Psi, Theta and Omega with ``fractions.Fraction``.  Meant for
small and medium files (it is O(transmissions x p) in the worst case).

Usage: ``python tools/verify_explicit.py FILE [--json]``; exit 0 when the
schedule is a correct allreduce (and any claims in the header match), 1 when
not, 2 when the file cannot be read.
"""

import json
import sys
from fractions import Fraction


def verify(path):
    """Return (ok, messages, metrics)."""
    with open(path, encoding="utf-8") as f:
        header = json.loads(f.readline())
        rows = [json.loads(line) for line in f if line.strip()]
    if header.get("format") != "synth-explicit" or header.get("version") != 1:
        raise ValueError("not a synth-explicit version 1 file")
    compute = list(header["compute"])
    links = {(u, v): i for i, (u, v) in enumerate(header["links"])}
    sizes = header["chunk_elements"]
    n_rounds = header["rounds"]
    errors = []
    # state[(node, chunk)] = frozenset of compute nodes whose input the value sums
    state = {(v, c): frozenset([v]) for v in compute for c in range(len(sizes))}
    by_round = {}
    for i, r in enumerate(rows):
        if not 1 <= r["round"] <= n_rounds:
            errors.append(f"transmission {i}: round {r['round']} outside 1..{n_rounds}")
            continue
        route = r["route"]
        if route[0] != r["src"] or route[-1] != r["dst"] or len(route) < 2:
            errors.append(f"transmission {i}: route does not go from src to dst")
            continue
        if any((a, b) not in links for a, b in zip(route, route[1:])):
            errors.append(f"transmission {i}: route uses a pair that is not a link")
            continue
        by_round.setdefault(r["round"], []).append(r)
    load_max, load_total = [], []
    vol_abs = vol_phys = 0
    for s in range(1, n_rounds + 1):
        batch = by_round.get(s, [])
        payloads = [state.get((r["src"], r["chunk"]), frozenset()) for r in batch]  # start-of-round values
        copied, touched = set(), {}
        load = {}
        for r, pay in zip(batch, payloads):
            key = (r["dst"], r["chunk"])
            size = sizes[r["chunk"]]
            vol_abs += size
            vol_phys += size * (len(r["route"]) - 1)
            for a, b in zip(r["route"], r["route"][1:]):
                load[links[(a, b)]] = load.get(links[(a, b)], 0) + size
            if r["op"] == "copy":
                if key in copied or key in touched:
                    errors.append(f"round {s}: a copy meets another transmission at node {key[0]}, chunk {key[1]}")
                copied.add(key)
                touched[key] = pay
            elif r["op"] == "reduce":
                if key in copied:
                    errors.append(f"round {s}: a copy meets another transmission at node {key[0]}, chunk {key[1]}")
                mine = touched.get(key, state.get(key, frozenset()))
                if mine & pay:
                    errors.append(f"round {s}: node {key[0]} chunk {key[1]} would count an input twice")
                touched[key] = mine | pay
            else:
                errors.append(f"round {s}: unknown op {r['op']!r}")
        state.update(touched)
        load_max.append(max(load.values(), default=0))
        load_total.append(sum(load.values()))
    everyone = frozenset(compute)
    for (v, c), value in state.items():
        if value != everyone:
            errors.append(f"node {v} chunk {c} ends with {len(value)} of {len(compute)} inputs")
            if len(errors) > 20:
                break
    p, N, E = len(compute), sum(sizes), len(links)
    metrics = {"rounds": n_rounds, "vol_abs": vol_abs, "vol_phys": vol_phys,
               "psi": Fraction(vol_abs, 2 * N * (p - 1)), "theta": Fraction(vol_phys, vol_abs),
               "omega": Fraction(E * sum(load_max), sum(load_total)), "weight": Fraction(vol_phys, 2 * N)}
    for key, claimed in (header.get("claims") or {}).items():
        if key in metrics and Fraction(str(claimed)) != metrics[key]:
            errors.append(f"claim {key} = {claimed} but measured {metrics[key]}")
    return not errors, errors, metrics


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    try:
        ok, errors, metrics = verify(argv[0])
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        print(f"verify_explicit: cannot read {argv[0]}: {exc}", file=sys.stderr)
        return 2
    if "--json" in argv:
        print(json.dumps({"valid": ok, "errors": errors[:20], **{k: str(v) for k, v in metrics.items()}}))
    else:
        print(f"{argv[0]}: {'VALID' if ok else 'INVALID'}; " + ", ".join(f"{k} {v}" for k, v in metrics.items()))
        for e in errors[:20]:
            print(f"  {e}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
