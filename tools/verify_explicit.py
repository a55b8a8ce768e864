#!/usr/bin/env python3
"""An independent verifier of synth-explicit files, in plain Python (no numpy, no synth).

It shares no code with ``synth.check``: it reads the JSON Lines file of the
format documented in docs/formats.md, simulates the allreduce with exact integer
*contribution sets* (each node's value of each chunk is the set of inputs it
sums; a reduce adds a disjoint set, a copy replaces it), and recomputes S,
Vol_abs, Vol_phys, Psi, Theta and Omega with ``fractions.Fraction``, and the bandwidth term: the sum
over rounds of the largest load over bandwidth of a link (elements per GB/s; the header's
``bandwidth`` list, parallel to ``links``, or 1 for every link); Omega is that term times the summed
bandwidth of the links over the summed load of the rounds.  Meant for
small and medium files (it is O(transmissions x p) in the worst case).

Reduce-scatter and allgather files (header ``"collective"`` with ``"chunk_owner"``, one
owner vertex per chunk): in a reduce-scatter the owner of every chunk must end with the set of
all compute nodes (the others may hold anything); in an allgather every non-owner starts with an
*undefined* token of its own, and every compute node must end with exactly ``{owner}``, so a
reduce into an undefined value or a second delivery is caught.  The blocks must be equal (every
compute node owns chunks of ``N / p`` elements in all), and Psi and the weight are normalized to
the collective's minimum volume ``N(p - 1)`` (``2N(p - 1)`` for allreduce).  For reduce-scatter
and allgather the verifier also derives the one-hop round bound ``max_v ecc(v)`` by breadth-first
search from every compute node (up to 2*10^7 steps; beyond, the bound claims are not checked) and
checks the claims ``round_lower_bound`` and ``round_optimal`` (one-hop and rounds equal to it).

Usage: ``python tools/verify_explicit.py FILE [--json]``; exit 0 when the
schedule is a correct collective (and any claims in the header match), 1 when
not, 2 when the file cannot be read.
"""

import json
import os
import re
import stat
import sys
from fractions import Fraction

MAX_BYTES = 1 << 30   # refuse larger files (and anything that is not a regular file)
MAX_LINE = 64 << 20   # bytes per line (the header lists every link)
FRACTION = re.compile(r"^-?[0-9]{1,60}(/[0-9]{1,60})?$")


def _refuse(name):
    raise ValueError(f"{name} is not a number this format holds")


def _int(text):
    if len(text.lstrip("-")) > 16 or abs(int(text)) >= 2**53:
        raise ValueError("an integer is out of range (|x| must be below 2**53)")
    return int(text)


def _loads(line):
    return json.loads(line, parse_constant=_refuse, parse_int=_int)


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _read(path):
    """Header and rows, read line by line with bounded lines from a regular file of bounded size."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            raise ValueError(f"not a regular file of at most {MAX_BYTES >> 20} MiB")
        lines = iter(lambda: f.readline(MAX_LINE + 1), b"")
        header = None
        rows = []
        for line in lines:
            if len(line) > MAX_LINE:
                raise ValueError(f"a line is longer than {MAX_LINE >> 20} MiB")
            if header is None:
                header = _loads(line.decode("utf-8"))
            elif line.strip():
                rows.append(_loads(line.decode("utf-8")))
    if not isinstance(header, dict) or not all(isinstance(r, dict) for r in rows):
        raise ValueError("the header and every transmission must be JSON objects")
    return header, rows


def _exact(claimed):
    """A claim as an exact number: an int or a string 'a' or 'a/b'; None when it is neither."""
    if _is_int(claimed):
        return Fraction(claimed)
    if isinstance(claimed, str) and FRACTION.match(claimed) and not claimed.endswith("/0"):
        return Fraction(claimed)
    return None


def verify(path):
    """Return (ok, messages, metrics)."""
    header, rows = _read(path)
    if header.get("format") != "synth-explicit" or header.get("version") != 1:
        raise ValueError("not a synth-explicit version 1 file")
    compute = list(header["compute"])
    links = {(u, v): i for i, (u, v) in enumerate(header["links"])}
    sizes = header["chunk_elements"]
    n_rounds = header["rounds"]
    if not all(_is_int(v) for v in compute) or len(set(compute)) < 2:
        raise ValueError("compute must list at least two integer vertex ids")
    if not isinstance(sizes, list) or not sizes or not all(_is_int(x) and x >= 1 for x in sizes):
        raise ValueError("chunk_elements must be a non-empty list of positive integers")
    if not _is_int(n_rounds) or not 1 <= n_rounds <= len(rows):
        raise ValueError(f"rounds must be an integer in 1..{len(rows)} (the number of transmissions)")
    if len(sizes) * (len(set(compute)) - 1) > len(rows):
        raise ValueError("fewer transmissions than the chunks need (each needs p - 1 at least)")
    for i, r in enumerate(rows):
        if not all(_is_int(r.get(k)) for k in ("round", "chunk", "src", "dst")) \
                or not isinstance(r.get("route"), list) or not all(_is_int(v) for v in r["route"]):
            raise ValueError(f"transmission {i}: round, chunk, src, dst must be integers and route a list of them")
        if not 0 <= r["chunk"] < len(sizes):
            raise ValueError(f"transmission {i}: chunk {r['chunk']} outside 0..{len(sizes) - 1}")
    bandwidth = _bandwidths(header)
    collective, owner = _collective(header, compute, sizes)
    errors = []
    # state[(node, chunk)] = frozenset of compute nodes whose input the value sums
    if collective == "allgather":  # only the owner's input is defined; ("undefined", v) marks anything else
        state = {(v, c): frozenset([v if v == owner[c] else ("undefined", v)])
                 for v in compute for c in range(len(sizes))}
    else:
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
    load_total, term = [], Fraction(0)
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
        term += max((Fraction(x) / bandwidth[e] for e, x in load.items()), default=Fraction(0))
        load_total.append(sum(load.values()))
    everyone = frozenset(compute)
    for (v, c), value in state.items():
        if collective == "reduce-scatter":
            if v == owner[c] and value != everyone:
                errors.append(f"chunk {c}: its owner {v} ends with {len(value)} of {len(compute)} inputs")
        elif collective == "allgather":
            if value != frozenset([owner[c]]):
                errors.append(f"node {v} chunk {c} does not end with exactly its owner {owner[c]}'s input")
        elif value != everyone:
            errors.append(f"node {v} chunk {c} ends with {len(value)} of {len(compute)} inputs")
        if len(errors) > 20:
            break
    p, N = len(compute), sum(sizes)
    # Omega: the bandwidth term over the time of the same load spread over the links in proportion to their
    # bandwidths (with every link 1: links * sum of round maxima / sum of round totals)
    capacity = sum((bandwidth[i] for i in links.values()), Fraction(0))
    per = 2 if collective == "allreduce" else 1  # the minimum volume is per * N * (p - 1)
    metrics = {"rounds": n_rounds, "vol_abs": vol_abs, "vol_phys": vol_phys,
               "psi": Fraction(vol_abs, per * N * (p - 1)), "theta": Fraction(vol_phys, vol_abs),
               "omega": term * capacity / sum(load_total), "weight": Fraction(vol_phys, per * N),
               "bandwidth_term": term}
    claims = header.get("claims") or {}
    claims = claims if isinstance(claims, dict) else {}
    for key, claimed in claims.items():
        if key in metrics and _exact(claimed) != metrics[key]:
            errors.append(f"claim {str(key)[:40]} = {str(claimed)[:40]} but measured {metrics[key]}")
    if collective != "allreduce":
        bound = _farthest(compute, header["links"])
        if bound is not None:
            one_hop = all(len(r["route"]) == 2 for r in rows)
            derived = {"round_lower_bound": bound, "round_optimal": one_hop and n_rounds == bound}
            metrics.update(derived)
            for key, value in derived.items():
                if key in claims and (type(claims[key]) is not type(value) or claims[key] != value):
                    errors.append(f"claim {key} = {str(claims[key])[:40]} but derived {value}")
    return not errors, errors, metrics


def _bandwidths(header):
    """The header's per-link bandwidths (GB/s) as exact fractions; 1 for every link when it lists none."""
    values = header.get("bandwidth")
    if values is None:
        return [Fraction(1)] * len(header["links"])
    if not isinstance(values, list) or len(values) != len(header["links"]) or not all(
            isinstance(b, (int, float)) and not isinstance(b, bool) and b > 0 and b != float("inf") for b in values):
        raise ValueError("bandwidth must list one positive finite number per link")
    return [Fraction(b) for b in values]


def _collective(header, compute, sizes):
    """The header's collective and owners: absent is an allreduce; reduce-scatter and allgather need equal blocks."""
    collective = header.get("collective", "allreduce")
    if collective not in ("allreduce", "reduce-scatter", "allgather"):
        raise ValueError(f"unknown collective {str(collective)[:40]!r}")
    owner = header.get("chunk_owner")
    if collective == "allreduce":
        if owner is not None:
            raise ValueError("chunk_owner in an allreduce")
        return collective, None
    if not isinstance(owner, list) or len(owner) != len(sizes) or not all(_is_int(v) for v in owner):
        raise ValueError("a reduce-scatter or allgather needs chunk_owner, one vertex id per chunk")
    nodes = set(compute)
    if not set(owner) <= nodes:
        raise ValueError("a chunk owner is not a compute vertex")
    block = {v: 0 for v in nodes}
    for v, x in zip(owner, sizes):
        block[v] += x
    if len(set(block.values())) != 1:
        raise ValueError("the blocks are not equal: every compute node must own N/p elements")
    return collective, owner


def _farthest(compute, link_list, budget=2 * 10**7):
    """``max_v ecc(v)`` over the compute nodes by BFS from each (None when over ``budget`` steps)."""
    if len(compute) * (len(link_list) + len(compute)) > budget:
        return None
    out = {}
    for u, v in link_list:
        out.setdefault(u, []).append(v)
    targets, best = set(compute), 0
    for s in compute:
        dist, frontier, seen = 0, [s], {s}
        found = 1
        while frontier and found < len(targets):
            dist += 1
            nxt = []
            for a in frontier:
                for b in out.get(a, ()):
                    if b not in seen:
                        seen.add(b)
                        nxt.append(b)
                        found += b in targets
            frontier = nxt
        if found < len(targets):
            raise ValueError(f"compute node {s} cannot reach every compute node")
        best = max(best, dist)
    return best


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    try:
        ok, errors, metrics = verify(argv[0])
    except (OSError, ValueError, KeyError, TypeError, IndexError, ZeroDivisionError, RecursionError) as exc:
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
