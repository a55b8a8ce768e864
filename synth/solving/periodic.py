"""Failures repeated on a lattice: a damaged torus too large for its timed trees, solved with its symmetry back.

A failed link on a pod leaves almost no symmetry (on 32x32 four elements), so the timed trees' master LP has
one load row per link orbit and round: about a thousand per round there, far past what column generation
can take.  The links of a torus map onto each other by translation; leave idle, besides the failed links,
every link a translation by the lattice ``Λ = s_1 Z x ... x s_d Z`` maps a failed one onto (``s_i`` dividing
side ``i``), and the network the schedule runs on has the failures of every cell of ``Λ`` (a cell of
``s_1 x ... x s_d`` chips), so its group holds ``Λ`` and the residual point group: on 32x32 cells of 8x8 give
a group of order 64 and 3,124 load rows at 44 reduce rounds.  A schedule for it is a schedule for the damaged
torus (it only uses fewer links), and its certificate counts the idle links in its bounds
(:func:`synth.topology.failures.whole_network`): every cell of that network is damaged like the one real
failure's, so what the periodic schedule gives up is the idle links' share of the capacity (0.73 % on
32x32 with cells of 8x8) and what its class loses on the cells.

:func:`periodic_network` picks the largest cells whose timed master fits; :func:`synth.solving.packing.plan_packing`
takes it where the damaged torus's own master does not.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> t = parse_torus("16x16"); d = damage(t, parse_failures(t, links=["0.0-0.1"]))
>>> p = periodic_network(d, R=22, max_rows=2_000)
>>> p.cell, p.topology.name, p.group.order, p.rows
((8, 8), 'torus 16x16 with 1 failed link (3 links left idle)', 16, 1562)
>>> periodic_network(d, R=22, max_rows=500) is None     # cells of 4x4 leave too many idle
True
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from synth.errors import SynthError
from synth.solving.limits import check_local_size, check_pairs
from synth.solving.reference import family_sends, healthy_reference
from synth.symmetry.spec import default_group, fixing_group
from synth.topology.failures import Damaged, Failures, damage
from synth.topology.torus import Torus

__all__ = ["Periodic", "periodic_network", "local_network", "damaged_everywhere", "long_rounds", "MAX_ROWS",
           "PLANE_ROWS", "LONG_ROWS", "LONG_ROWS_WIDE", "MAX_ARCS", "ARCS_PER_SECOND", "MIN_CELL", "MAX_IDLE_SHARE",
           "MAX_TRIES", "LONG_SOLVE", "FEWEST_ARCS_SCALE", "fewest_rounds_network", "LOCAL_CELL_RADIUS",
           "MAX_LOCAL_TRIES", "LOCAL_CELL_SENDS", "folds"]

#: load rows of the periodic network's timed master at most: 32x32 with a failed link, cells of 8x8 (3,124 rows)
#: and of 8x16 (6,292) both at 76.1 % of the bound at 60 CPU s, the smaller master's iterations twice as fast;
#: 16x20x28's cells of 4x5x4 have 3,916
MAX_ROWS = 4_000
#: the same on a 2-D torus, whose periodic networks' layered LPs stay small: 16x16 with four scattered failed links
#: takes cells of 8x8 (5,456 rows, a group of order 4), 32x32 with one keeps 8x8 (its cells of 8x16 have 6,292)
PLANE_ROWS = 5_500
#: load rows the long-solve rounds (:func:`long_rounds`) may take on a 3-D torus's cells of failed links once
#: chosen under :data:`MAX_ROWS`: 16x20x28's cells of 4x5x4 have 89 rows per reduce round, so 52 rounds need 4,628
#: (60 rounds, 5,340 rows, reached 93.52 % of the bound at 1,500 CPU s, against 94.96 % with 52 at 1,550)
LONG_ROWS = 4_700
#: the same on a 2-D torus and on cells with a failed chip's copies (leaves), whose timed trees need the slack
#: rounds more, past the timed master's own limit: the v5p pod with a failed chip (cells of 4x4x4, 108 rows per
#: reduce round) takes 60 rounds, 6,480 rows, where 4,700 held it to 44 (89.69 against 84.33 % at 1,600 CPU s);
#: 16x16 with four scattered failed links (cells of 8x8, 248 per round) 30, 7,440 rows, where 5,500 held it to
#: 22 (86.85 % at 780 CPU s against 85.34 at 840) (bench/RESULTS.md, stop 70)
LONG_ROWS_WIDE = 7_500
#: the least side of a cell: on smaller ones the idle links take too much of every chip's links
MIN_CELL = 4
#: the largest share of the network's links left idle (cells of 8x8 on a 2-D torus leave 1/128 per failure: four
#: scattered failed links on 16x16 leave 12 idle, 2.34 %)
MAX_IDLE_SHARE = 0.025
#: parent choices of the periodic network's whole layered LP (the timed trees' start) at most, or
#: :data:`ARCS_PER_SECOND` times the time limit where that is more: its time grows faster than its size (16x16x16
#: with a failed link, cells of 4x4x4: 146,688 in 11 CPU s and 0.27 GB; of 4x4x8 294,144, not solved in 60 s;
#: 12x16x20, 4x4x4: 206,280 in 18 s; 16x20x28, 4x4x4: 481,320 in 88 s and 0.94 GB)
MAX_ARCS = 250_000
ARCS_PER_SECOND = 320
#: cells whose group is found at most (the largest first that may fit; each one's group is found on the whole pod:
#: 16x16x16 with a failed link tries six, 12x16x20 seven, 0.2-0.5 CPU s each)
MAX_TRIES = 8
#: in a long solve where no cells fit at the default reduce rounds, the second try at the fewest
#: (:func:`fewest_rounds_network`) lets the whole layered LP take this many times the parent choices: the local
#: LP is the alternative (16x16x16 with two links of one chip: 66.68 % of the bound; its cells of 4x4x4 have 134
#: rows per reduce round, 4,422 at R = 33, and 364,800 parent choices, whose whole layered LP took 56.6 CPU s)
FEWEST_ARCS_SCALE = 2.0
#: the local layered LP's free region (hops around each failure) on the cells of :func:`local_network`: its shares
#: are equal, so a failed link's ends hold it to ``(δ - 1)/δ`` of the bound whatever the radius (16x16x16 with four
#: scattered failed links, cells of 16x8x8: 83.28 % with radius 1, 2 and 3, in 27, 67 and 125 CPU s, peaks of 3.7,
#: 4.6 and 7.6 GB)
LOCAL_CELL_RADIUS = 1
#: cells whose group :func:`local_network` finds at most (16x20x28 with two scattered failed links tries ten)
MAX_LOCAL_TRIES = 16
#: sends of the local layered LP's schedule before it is lifted (:func:`~synth.solving.reference.family_sends`) up to
#: which :func:`local_network` takes cells: larger cells leave fewer links idle but, the shares being equal, gain
#: almost nothing for their time and memory (16x16x16 with four scattered failed links: cells of 8x16x16, 63 M
#: sends, 83.32 % of the bound in 70.5 CPU s and 6.76 GB; of 16x8x8, 28 M, 83.28 % in 40.6 CPU s and 3.72 GB)
LOCAL_CELL_SENDS = 30_000_000


@dataclass(frozen=True)
class Periodic:
    """The network a damaged torus's schedule runs on: its failures repeated on the lattice of ``cell`` (chips
    per side), the other copies idle; its ``group`` and the timed master's load ``rows`` at ``R`` reduce
    rounds.  A failed chip's copies, itself included, are ``leaves``: they keep their links and hold data but
    forward nothing, and the failed chips are ``dropped`` from every tree: the certificate states the schedule
    of ``topology`` and the chips it drops (:mod:`synth.check.dropped`)."""

    topology: object
    group: object
    cell: tuple
    R: int
    rows: int
    leaves: tuple = ()
    dropped: tuple = ()
    radius: int | None = None   # the local layered LP's free region where it, not timed trees, runs on the cells

    def note(self) -> str:
        n = len(self.topology.failures.idle) if isinstance(self.topology, Damaged) else 0
        e = getattr(self.topology, "healthy", self.topology).n_links // 2     # the torus's links
        idle = (f"{n} working link{'s' * (n > 1)} left idle, {100 * n / e:.2f} % of the links; the bounds count "
                f"{'them' if n > 1 else 'it'}") if n else ""
        k = len(self.leaves) - len(self.dropped)
        leaves = (f"{k} working chip{'s' * (k > 1)} that forward{'' if k > 1 else 's'} nothing (copies of a failed "
                  "one, which is then dropped from every tree)") if k else ""
        what = "the timed trees" if self.radius is None else "the local layered LP"
        return (f"{what} on its failures repeated on cells of {'x'.join(map(str, self.cell))} chips ("
                + "; ".join(x for x in (idle, leaves) if x) + ")")


#: CPU seconds of the time limit from which the timed trees on a periodic network take up to :func:`long_rounds`
#: reduce rounds (as many as keep the master within its rows): more slack rounds converge higher but start slower
#: (16x16x16 with a failed link at 60 CPU s: the LP at 83.48 % of the volume bound with R = 38 against 85.40 % with
#: R = 33; at about 590 s 98.95 % with R = 38, where R = 33 had 95.27 % at 840 s; 32x32 at 586 s 95.31 % with
#: R = 52, where R = 44 levelled off at 88.17 %)
LONG_SOLVE = 300


def long_rounds(H: int) -> int:
    """The reduce rounds the timed trees on a periodic network of layered depth ``H`` take at most in a long solve
    (:data:`LONG_SOLVE`): ``H + 7H/8``, rounded up.  At 840 CPU s on 32x32 (H = 32), R = 60 against 52: 97.85
    against 95.56 % of the certified bound with a failed link, 97.42 against 94.30 % with a failed chip.

    >>> long_rounds(24), long_rounds(32)
    (45, 60)
    """
    return H - (-7 * H // 8)


def periodic_network(d, R: int, max_rows: int | None = None, time_limit: float | None = None,
                     most: int | None = None, arcs_scale: float = 1.0) -> Periodic | None:
    """The largest cells whose periodic network's timed master has at most ``max_rows`` (None: :data:`MAX_ROWS`,
    :data:`PLANE_ROWS` on a 2-D torus) load rows at ``R`` reduce rounds, or None (not a torus of two or more
    dimensions with failed links only, or no cells of at least :data:`MIN_CELL` per side that leave at most
    :data:`MAX_IDLE_SHARE` of the links idle).

    The cells must also leave the whole layered LP at most :data:`MAX_ARCS` parent choices, or
    :data:`ARCS_PER_SECOND` times ``time_limit`` (CPU seconds; None: 600) where that is more (below a minute, that
    share of :data:`MAX_ARCS`): the timed trees start from it.  With a time limit of at least :data:`LONG_SOLVE`
    (or None) the timed trees then take up to ``most`` reduce rounds (None: ``R``), as many as keep the rows within
    ``max_rows`` (None: :data:`LONG_ROWS` on a 3-D torus's failed links, :data:`LONG_ROWS_WIDE` on a 2-D torus or
    with leaves) (``Periodic.R``).  16x16x16 with a failed link takes
    cells of 4x4x4 from about 35 s to 919 s (1,551 rows, a group of order 1,024, 146,688 parent choices), and
    16x20x28 cells of 4x5x4 from 1,506 s.  A failed chip's copies are the ``leaves``: they keep their links and
    hold data, no tree takes them as a parent, and each counts as ``ndim`` idle links in that share.
    ``arcs_scale`` multiplies the parent choices allowed (:func:`fewest_rounds_network`)."""
    # the models: loaded with the solvers, on demand
    from synth.models.packing.layered import layered_arcs
    from synth.models.packing.master import rows_per_round

    if not isinstance(d, Damaged) or not isinstance(d.healthy, Torus) or d.failures.idle or d.healthy.ndim < 2:
        return None
    cell_rows = (PLANE_ROWS if d.healthy.ndim == 2 else MAX_ROWS) if max_rows is None else max_rows
    limit = 600.0 if time_limit is None else float(time_limit)
    max_arcs = arcs_scale * (MAX_ARCS * limit / 60 if limit < 60 else max(MAX_ARCS, ARCS_PER_SECOND * limit))
    t = d.healthy
    axes = [int(np.flatnonzero(np.asarray(t.coords(u)) != np.asarray(t.coords(v)))[0]) for u, v in d.failures.links]
    tries = 0
    for cell in _cells(t.shape):
        # the linear parts that can fix the failures and the lattice: signs, and permutations of axes with equal
        # sides, cells' sides and as many failed links along them
        kinds = [(n, c, axes.count(i)) for i, (n, c) in enumerate(zip(t.shape, cell))]
        perms = math.prod(math.factorial(kinds.count(k)) for k in set(kinds))
        links = _repeated(t, d.failures.links, cell)
        idle = tuple(e for e in links if e not in set(d.failures.links))
        leaves = _copies(t, d.failures.nodes, cell)
        # with leaves on a 3-D torus the group keeps the even permutations of the axes only (fixing_group)
        point = 2 ** t.ndim * (perms // 2 if leaves and t.ndim >= 3 and perms > 1 else perms)
        spare = _spare(t, idle, leaves, d.failures.nodes)
        if not spare or spare > MAX_IDLE_SHARE * (t.n_links // 2):
            continue
        # a link orbit has at most as many links as the group elements: fewer rows than this are out of reach
        if R * (t.n_links - 2 * len(links)) > cell_rows * point * (t.n_vertices // int(np.prod(cell))):
            continue
        if tries == MAX_TRIES:       # each try finds a group on the whole pod
            return None
        tries += 1
        p, group = _periodic(t, links, idle, leaves)
        rows = R * rows_per_round(p, group)
        if rows <= cell_rows and layered_arcs(p, group, leaves or None).n_arcs <= max_arcs:
            per = rows // R
            long_rows = max_rows if max_rows is not None else LONG_ROWS_WIDE if t.ndim == 2 or leaves else LONG_ROWS
            rounds = max(R, min(most, long_rows // per)) if most is not None and limit >= LONG_SOLVE else R
            return Periodic(p, group, cell, rounds, rounds * per, leaves, d.failures.nodes)
    return None


def fewest_rounds_network(d, H: int, R: int, fewest: int, time_limit: float | None = None) -> Periodic | None:
    """The periodic network of ``d`` (layered depth ``H``) at ``R`` reduce rounds, or else, where ``fewest`` rounds
    are fewer, at ``fewest``, in a long solve (``time_limit`` None or at least :data:`LONG_SOLVE`) with
    :data:`FEWEST_ARCS_SCALE` times the parent choices; either way its timed trees then take as many rounds, up to
    :func:`long_rounds` in a long solve, as the rows allow.  16x16 with two failed links (cells of 8x8: 5,588 rows
    at R = 22, 5,080 at 20) certifies 81.88 % at the default minute this way, 75.83 % with the layered LP."""
    most = long_rounds(H)
    p = periodic_network(d, R, time_limit=time_limit, most=most)
    if p is not None or fewest >= R:
        return p
    long = time_limit is None or time_limit >= LONG_SOLVE
    return periodic_network(d, fewest, time_limit=time_limit, most=most, arcs_scale=FEWEST_ARCS_SCALE if long else 1.0)


def local_network(d, radius: int = LOCAL_CELL_RADIUS, max_sends: int | None = None,
                  smallest: bool = False) -> Periodic | None:
    """The largest cells (the ``smallest`` with ``smallest``) on which the local layered LP (its free region
    ``radius`` hops around each failure) fits where the damaged torus ``d`` leaves too little symmetry for it, or
    None (not a torus of two or more dimensions, or no cells fit).  A failed chip's copies are leaves, as on
    :func:`periodic_network`'s cells: the LP gives them no share and takes none as a parent.

    Cells fit when they leave at most :data:`MAX_IDLE_SHARE` of the links idle, no chip more damaged than the
    failures leave one (:func:`folds`: the shares are equal, so the most damaged chip sets the schedule's
    fraction), the LP's (owner, vertex) pairs within :func:`~synth.solving.limits.check_pairs`, its schedule's
    sends within ``max_sends`` (None: :data:`LOCAL_CELL_SENDS`) with healthy trees that balance the links, and
    the failures' copies far from half the vertices (:func:`damaged_everywhere`).  16x16x16 with four scattered
    failed links (a group of order 1, 201 M sends) takes cells of 16x8x8: 16 failed links, 12 of them idle, a
    group of order 8, 28 M sends; the smallest, for ``synth repair``'s first schedule, are 4x8x4 (124 links idle,
    a group of order 64, 96 owners where 16x8x8 have 576).

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> from synth.topology.failures import parse_failures
    >>> t = parse_torus("16x16x16")
    >>> p = local_network(damage(t, parse_failures(t, links=["0-1", "37-53", "100-101", "200-216"])))
    >>> p.cell, p.group.order, len(p.topology.failures.idle), p.radius
    ((16, 8, 8), 8, 12, 1)
    >>> local_network(damage(t, parse_failures(t, links=["0-1", "37-53", "100-101", "200-216"])), smallest=True).cell
    (4, 8, 4)
    """
    from synth.models.packing.layered import root_reps   # solvers, on demand

    if not isinstance(d, Damaged) or not isinstance(d.healthy, Torus) or d.failures.idle or d.healthy.ndim < 2:
        return None
    t, failed, tries = d.healthy, set(d.failures.links), 0
    max_sends = LOCAL_CELL_SENDS if max_sends is None else max_sends
    for cell in _cells(t.shape, smallest):
        links = _repeated(t, d.failures.links, cell)
        idle = tuple(e for e in links if e not in failed)
        leaves = _copies(t, d.failures.nodes, cell)
        if _spare(t, idle, leaves, d.failures.nodes) > MAX_IDLE_SHARE * (t.n_links // 2):
            continue
        if folds(t, d.failures, links, leaves):
            continue
        if tries == MAX_LOCAL_TRIES:     # each try finds a group on the whole pod
            return None
        tries += 1
        p, group = _periodic(t, links, idle, leaves)
        owners = root_reps(p, group, leaves or None).size
        # the healthy trees kept must balance the links (on 16x20x28 SP-allreduce would give 35.55 % of the bound)
        if (reference := healthy_reference(d, owners, balanced=True)) is None:
            continue
        if family_sends(t, len(reference.weight), owners) > max_sends:
            continue
        try:
            check_pairs(p, group, leaves or None)
            check_local_size(p, group, owners, reference)
        except SynthError:
            continue
        if not damaged_everywhere(p, radius, leaves):
            return Periodic(p, group, cell, 0, 0, leaves, d.failures.nodes, radius)
    return None


def _spare(t, idle, leaves, nodes) -> int:
    """The working links a periodic network of torus ``t`` leaves unused: its ``idle`` links, and ``ndim`` for each
    of its ``leaves`` that is not one of the failed ``nodes`` (a chip that forwards nothing idles about half of its
    links)."""
    return len(idle) + t.ndim * (len(leaves) - len(nodes))


def _periodic(t, links, idle, leaves) -> tuple:
    """The periodic network (``t`` without ``links``, of which ``idle`` work; ``t`` itself when there are none) and
    its group: the automorphisms that fix the links and the set of ``leaves`` (:func:`fixing_group`)."""
    p = damage(t, Failures(links, (), idle))
    return p, (fixing_group(t, Failures(links, leaves, idle), p) if leaves else default_group(p))


def damaged_everywhere(t, radius: int, leaves=()) -> bool:
    """True when at least half of ``t``'s vertices are within ``radius`` hops of an end of a failed or idle link
    or of a neighbour of a failed chip or of one of ``leaves``: a local LP around the failures would free most of
    the network (the
    periodic network of a 16x16x16 pod, cells of 4x4x4, has a failure in each of its 64 cells).

    >>> from synth.topology.failures import parse_failures
    >>> from synth.topology.torus import parse_torus
    >>> t = parse_torus("16x16"); d = damage(t, parse_failures(t, links=["0-1"]))
    >>> damaged_everywhere(d, 3), damaged_everywhere(periodic_network(d, R=22, max_rows=2_000).topology, 3)
    (False, True)
    """
    from synth.models.packing.local import near_failures   # solvers, on demand

    return 2 * int(near_failures(t, radius, leaves).sum()) >= t.n_vertices


def _cells(shape, smallest: bool = False) -> list:
    """Cell shapes, each side a divisor of the torus's at least :data:`MIN_CELL` (and not the whole side on
    every axis), the largest first (the smallest with ``smallest``), of those the squarest (the failures' copies
    spread evenly).

    >>> _cells((16, 16))[:4], _cells((16, 16), smallest=True)[:3]
    ([(8, 16), (16, 8), (8, 8), (4, 16)], [(4, 4), (4, 8), (8, 4)])
    """
    sides = [[s for s in range(MIN_CELL, n + 1) if n % s == 0] for n in shape]
    cells = [c for c in itertools.product(*sides) if c != tuple(shape)]
    return sorted(cells, key=lambda c: ((1 if smallest else -1) * int(np.prod(c)), max(c) / min(c), c))


def folds(t, failures, links, leaves) -> bool:
    """Whether the failures repeated on cells (``links``, failed or idle, and the chips that forward nothing,
    ``leaves``) damage some chip of torus ``t`` more than ``failures`` damage any: their copies fold onto each
    other.  A chip's damage is its links among the failed ones and its neighbours among the chips that forward
    nothing.  16x16x16 with ``0-1`` and ``64-80`` (a chip 4 hops from the first, along the second axis) folds on
    cells 4 wide along it: chip 0 loses two links.

    >>> from synth.topology.failures import parse_failures
    >>> from synth.topology.torus import parse_torus
    >>> t = parse_torus("16x16x16"); f = parse_failures(t, links=["0-1", "64-80"])
    >>> folds(t, f, _repeated(t, f.links, (16, 4, 16)), ()), folds(t, f, _repeated(t, f.links, (16, 8, 16)), ())
    (True, False)
    """
    return int(_damage(t, links, leaves).max()) > int(_damage(t, failures.links, failures.nodes).max())


def _damage(t, links, chips) -> np.ndarray:
    """Per vertex of torus ``t``: its links among ``links`` and its neighbours among ``chips`` (0 on the chips)."""
    lost = np.bincount(np.asarray(links, dtype=np.int64).ravel(), minlength=t.n_vertices)
    if chips:
        chips = np.asarray(chips, dtype=np.int64)
        lost += np.bincount(t.link_dst[np.isin(t.link_src, chips)], minlength=t.n_vertices)
        lost[chips] = 0
    return lost


def _translates(t, vertices, cell) -> np.ndarray:
    """``(cells, len(vertices))``: every vertex of torus ``t`` moved by each translation of the lattice of ``cell``."""
    shifts = np.array(list(itertools.product(*[range(0, n, c) for n, c in zip(t.shape, cell)])), dtype=np.int64)
    coords = t.coords(np.asarray(vertices, dtype=np.int64)).reshape(-1, len(cell))
    return t.vertex(coords[None, :, :] + shifts[:, None, :])


def _copies(t, nodes, cell) -> tuple:
    """``nodes`` (vertices of torus ``t``) and every translate by the lattice of ``cell``, sorted."""
    return tuple(np.unique(_translates(t, nodes, cell)).tolist()) if nodes else ()


def _repeated(t, links, cell) -> tuple:
    """``links`` (vertex pairs of torus ``t``) and every translate by the lattice of ``cell``, as sorted pairs."""
    if not links:
        return ()
    ends = _translates(t, np.asarray(links, dtype=np.int64).ravel(), cell).reshape(-1, 2)
    return tuple(sorted({(int(min(a, b)), int(max(a, b))) for a, b in ends.tolist()}))
