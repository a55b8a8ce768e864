"""The timed trees' reduce rounds: how many a network's timed trees get by default, with a depth bound, and
where links differ in bandwidth, so that their master LP keeps within its load rows.

A timed tree reduces within ``R`` rounds and copies back within ``R`` more; its master LP has one load row per
link orbit and round (:func:`synth.models.packing.master.rows_per_round`), so ``R`` is also what sets the master's
size.  :func:`timed_rounds` picks ``R`` for :func:`synth.solving.packing.plan_packing` and the candidates of
``synth solve --size`` (:mod:`synth.solving.candidates`).

Examples
--------
>>> timed_rounds(8, None, 132)      # H = 8 on 8x8 with a failed link: H + 4 rounds
(12, None)
"""

from __future__ import annotations

import numpy as np

from synth.schedule.data import ALLREDUCE

__all__ = ["timed_rounds", "timed_extra", "least_rounds", "depth_note", "unequal_links", "TIMED_MAX_ROWS",
           "TIMED_FABRIC_ROWS", "TIMED_EXTRA_ROUNDS", "TIMED_UNEQUAL_ROUNDS", "TIMED_LARGE_FABRIC_ROUNDS",
           "LARGE_FABRIC"]

#: load rows of the timed trees' master LP (per link orbit and round: ``master.rows_per_round``) up to which the
#: timed trees follow the layered LP: 8x8 with 8 failed links 3,072, the Tofu-D job 2x2x2 with a failed link
#: 1,030, 16x16 with one 5,962 at R = 22 (about 5 CPU s per master solve; docs/timed.md section 5)
TIMED_MAX_ROWS = 6_500
#: the same for a fabric whose links differ in bandwidth (its routes through switches): four MI250 nodes with a
#: failed NIC (no symmetry left, 64 owners) need 952 rows per reduce round, and under 6,500 their timed trees got
#: 6 rounds (52.2 % of the bound, against 67.0 % with 16 rounds and 15,232 rows, at 60 CPU s)
TIMED_FABRIC_ROWS = 20_000
#: reduce rounds of the timed trees beyond the layered depth H at least (``depth`` K >= H sets R = K instead: 2K
#: rounds); by default :func:`timed_extra` more where the master fits
TIMED_EXTRA_ROUNDS = 4
#: reduce rounds of the timed trees at least, by default, where links differ in bandwidth: the slow links
#: (NICs) must be busy in every round while the fast ones do the rest, which takes staggered trees; on two
#: MI250 nodes (one hop through the NIC switch) R = 6 reaches 1.17x ForestColl's optimum, R = 10 1.024x and
#: R = 16 1.017x by the LP in 60 CPU s; on two DGX A100 servers R = 6 already meets it
TIMED_UNEQUAL_ROUNDS = 16
#: the same on a fabric of more than :data:`LARGE_FABRIC` compute vertices, where an owner's tree gathers more
#: servers' partial sums over the slow links and staggers them over more rounds (four MI250 nodes at 60 CPU s:
#: 78.39 % of the volume bound against 75.21 % with 16 and 76.77 % with 40; eight H100 servers 81.76 against
#: 81.42 %; two MI250 nodes keep 16), only where all 32 fit within :data:`TIMED_FABRIC_ROWS` rows (eight H100
#: servers with a failed NIC: 75.0 % with 26 rounds against 77.6 % with 16); docs/timed.md section 8
TIMED_LARGE_FABRIC_ROUNDS = 32
LARGE_FABRIC = 32


def unequal_links(topology) -> bool:
    """Whether the links of ``topology`` differ in bandwidth (a balance that counts links alike then says
    nothing about time, and the timed trees need more rounds: :data:`TIMED_UNEQUAL_ROUNDS`).

    >>> from synth.topology.user import topology_from_json
    >>> pair = {"vertices": 2, "links": [[0, 1]]}
    >>> unequal_links(topology_from_json(pair)), unequal_links(topology_from_json({**pair, "bandwidth": [300]}))
    (False, False)
    >>> unequal_links(topology_from_json({**pair, "directed": True, "links": [[0, 1], [1, 0]], "bandwidth": [3, 1]}))
    True
    """
    bw = topology.link_bandwidth
    return bool(bw.size) and bool(np.any(bw != bw[0]))


def least_rounds(topology, per_round: int) -> int:
    """The timed trees' least default reduce rounds on ``topology``, whose master has ``per_round`` load rows per
    reduce round: :data:`TIMED_UNEQUAL_ROUNDS` where links differ in bandwidth, :data:`TIMED_LARGE_FABRIC_ROUNDS`
    on such a fabric of more than :data:`LARGE_FABRIC` compute vertices whose master then keeps within
    :data:`TIMED_FABRIC_ROWS` (a damaged fabric's master, with little symmetry left, is many times larger, and
    where even 32 rounds would not fit, more rounds cost more iterations than they give)."""
    if not unequal_links(topology):
        return 0
    large = topology.n_compute > LARGE_FABRIC and TIMED_LARGE_FABRIC_ROUNDS * per_round <= TIMED_FABRIC_ROWS
    return TIMED_LARGE_FABRIC_ROUNDS if large else TIMED_UNEQUAL_ROUNDS


def timed_extra(H: int) -> int:
    """The timed trees' default reduce rounds beyond the layered depth ``H``: :data:`TIMED_EXTRA_ROUNDS`, or
    ``3H/8`` (rounded up) where that is more.  Larger tori need more slack rounds for the owners beside a
    failure to take their larger shares where the other links have room: 16x16 with a failed link at 60 CPU s
    certified 86.2 and 87.2 % of the bound at R = H + 6 against 84.6 and 85.5 % at H + 4 (a failed chip: 89.7
    against 87.2 %), where on 8x8 H + 6 gave what H + 4 did (99.45 against 99.47 %) in 4 more rounds.

    >>> timed_extra(8), timed_extra(16), timed_extra(24)
    (4, 6, 9)
    """
    return max(TIMED_EXTRA_ROUNDS, -(-3 * H // 8))


def timed_rounds(H, depth, per_round, least=0, fabric=False, planned_rows=0):
    """``(R, clipped)``: the timed trees' reduce rounds for a depth bound ``depth`` (None or ``>= H``) on a network
    whose master LP has ``per_round`` load rows per reduce round
    (:func:`~synth.models.packing.master.rows_per_round`); ``clipped`` is None when they are as asked, True when
    ``depth`` was clipped to fit, False when no timed trees fit (the layered trees, depth ``H``, are the
    schedule).  Without ``depth`` R is ``H`` + :func:`timed_extra` (or the most that fits, at least ``H`` +
    :data:`TIMED_EXTRA_ROUNDS`), at least ``least`` where that fits.

    ``depth`` K sets ``R = K`` when the master LP keeps within :data:`TIMED_MAX_ROWS` rows
    (:data:`TIMED_FABRIC_ROWS` with ``fabric``: a fabric whose links differ), or ``planned_rows`` where they are more
    (a periodic network's rows, its long-solve rounds' up to :data:`~synth.solving.periodic.LONG_ROWS_WIDE`); a K
    beyond that is clipped to the default ``H`` + :data:`TIMED_EXTRA_ROUNDS` (or the most that fits, never below
    ``H``): a master near the row limit takes minutes per solve (8x8 with a failed link, R = 45: over 170 CPU s
    without finishing), so the largest R that fits is no useful default.

    >>> timed_rounds(8, None, 132), timed_rounds(8, 20, 132), timed_rounds(8, 100, 132), timed_rounds(16, 20, 600)
    ((12, None), (20, None), (12, True), (16, False))
    >>> timed_rounds(1, None, 40, least=16), timed_rounds(1, None, 600, least=16)
    ((16, None), (10, None))
    >>> timed_rounds(16, None, 271), timed_rounds(16, None, 310), timed_rounds(16, None, 400)
    ((22, None), (20, None), (16, False))
    >>> timed_rounds(2, None, 952, least=16), timed_rounds(2, None, 952, least=16, fabric=True)
    ((6, None), (16, None))
    >>> timed_rounds(16, None, 248, least=30), timed_rounds(16, None, 248, least=30, planned_rows=7_440)
    ((26, None), (30, None))
    """
    fit = max(TIMED_FABRIC_ROWS if fabric else TIMED_MAX_ROWS, planned_rows) // per_round
    R = H + TIMED_EXTRA_ROUNDS if depth is None else depth
    if depth is None and R <= fit:
        R = max(min(H + timed_extra(H), fit), min(least, fit))
    if R <= fit:
        return R, None
    if depth is not None and fit >= H:
        return min(H + TIMED_EXTRA_ROUNDS, fit), True
    return H, False


def depth_note(depth, H, R, clipped, collective, per_round):
    """What became of a depth bound ``depth > H`` on the packing path (None when it was taken as asked)."""
    if depth is None or depth <= H or (clipped is None and collective == ALLREDUCE):
        return None
    rows = f"at most {TIMED_MAX_ROWS:,} load rows ({per_round:,} per reduce round)"
    if collective != ALLREDUCE:
        return f"depth {depth} exceeds the layered trees' depth H = {H}, which a {collective} takes ({H} rounds)"
    if clipped:
        return (f"depth {depth}: the timed trees' master LP takes {rows}, so their reduce rounds are clipped to "
                f"{R} ({2 * R} rounds in all, the default where it fits)")
    return (f"depth {depth}: the timed trees' master LP takes {rows}, too few for {H} reduce rounds here: the "
            f"layered trees, depth H = {H}")
