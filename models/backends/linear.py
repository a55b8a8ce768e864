"""One solver-neutral linear model: columns and row blocks as arrays, compiled to HiGHS, CP-SAT or SCIP.

Columns come one at a time (:meth:`LinearModel.add_var`, with a name) or as a block
(:meth:`LinearModel.add_vars`); rows likewise (:meth:`LinearModel.add_row` or
:meth:`LinearModel.add_rows` from coordinate triples).  :attr:`LinearModel.rows` lists the
row blocks in the order they were added, so the last one can be popped again.  The
back-ends read one CSR matrix (:meth:`LinearModel.matrix`) with each row's entries in the
order they were given.

* :meth:`LinearModel.solve_highs` -- HiGHS (MIP, or its LP relaxation with ``relax``);
* :meth:`LinearModel.solve_cpsat` -- CP-SAT (integer coefficients only), or every
  feasible point of a tiny model with ``enumerate_all``;
* :meth:`LinearModel.solve_scip` -- SCIP branch-and-cut, with a separator hook that adds
  cuts at every node.

The back-ends themselves live in :mod:`synth.models.backends.solvers`.

Every solve returns a :class:`~synth.models.backends.result.MipSolution`.

Examples
--------
>>> import numpy as np
>>> m = LinearModel(name="toy")
>>> x = m.add_vars(3, 0, 1, True, cost=[3.0, 2.0, 4.0])
>>> m.add_rows([0, 0, 0], x, [1, 1, 1], 1, 2.0, np.inf, "pick_two")
range(0, 1)
>>> sol = m.solve_highs(time_limit=10)
>>> sol.status, sol.objective, [round(v) for v in sol.values]
('optimal', 5.0, [1, 1, 0])
>>> m.solve_cpsat(time_limit=10).objective
5.0
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from synth.models.backends import solvers
from synth.models.backends.result import MipSolution

__all__ = ["LinearModel"]


@dataclass
class LinearModel:
    """Columns (bounds, integrality, cost, names) and row blocks; compiles to HiGHS, CP-SAT or SCIP.

    A row block is either one row ``(cols, coefs, lo, hi, name)`` from :meth:`add_row` or
    ``(A, lo, hi, family)`` with a CSR matrix ``A`` from :meth:`add_rows`.
    """

    name: str = "model"
    rows: list = field(default_factory=list)
    _names: list = field(default_factory=list, repr=False)      # None for unnamed columns
    _lo: list = field(default_factory=list, repr=False)         # per column, or arrays of a block
    _hi: list = field(default_factory=list, repr=False)
    _int: list = field(default_factory=list, repr=False)
    _cost: dict = field(default_factory=dict, repr=False)       # column -> cost (0 elsewhere)
    _row_ends: list = field(default_factory=list, repr=False)   # rows after each block
    n_cols: int = 0

    # ----------------------------------------------------------- columns
    def add_var(self, name, lo=0.0, hi=1.0, integer=True) -> int:
        """One named column; returns its index."""
        self._names.append(name)
        self._lo.append(float(lo))
        self._hi.append(float(hi))
        self._int.append(bool(integer))
        self.n_cols += 1
        return self.n_cols - 1

    def add_vars(self, n, lo=0.0, hi=1.0, integer=True, cost=0.0) -> np.ndarray:
        """``n`` unnamed columns (bounds and cost broadcast); returns their indices."""
        n = int(n)
        cols = np.arange(self.n_cols, self.n_cols + n, dtype=np.int64)
        self._names.extend([None] * n)
        self._lo.extend(np.broadcast_to(np.asarray(lo, dtype=np.float64), (n,)).tolist())
        self._hi.extend(np.broadcast_to(np.asarray(hi, dtype=np.float64), (n,)).tolist())
        self._int.extend([bool(integer)] * n)
        self.n_cols += n
        cost = np.broadcast_to(np.asarray(cost, dtype=np.float64), (n,))
        if np.any(cost):
            self.set_cost(cols, cost)
        return cols

    def set_cost(self, cols, values):
        """Objective coefficients of one column or of an array of columns."""
        if np.ndim(cols) == 0:
            self._cost[int(cols)] = float(values)
            return
        values = np.broadcast_to(np.asarray(values, dtype=np.float64), np.shape(cols))
        self._cost.update(zip(np.asarray(cols, dtype=np.int64).tolist(), values.tolist()))

    def objective_terms(self):
        """``(cols, coefs)`` of the columns with a nonzero cost, in column order: a cutoff row's terms."""
        cols = np.asarray(sorted(j for j, v in self._cost.items() if v), dtype=np.int64)
        return cols, np.asarray([self._cost[j] for j in cols.tolist()], dtype=np.float64)

    @property
    def col_names(self) -> list:
        return [f"c{j}" if nm is None else nm for j, nm in enumerate(self._names)]

    @property
    def cost(self) -> np.ndarray:
        c = np.zeros(self.n_cols)
        if self._cost:
            c[np.fromiter(self._cost.keys(), np.int64, len(self._cost))] = list(self._cost.values())
        return c

    @property
    def lo(self) -> np.ndarray:
        return np.asarray(self._lo, dtype=np.float64)

    @property
    def hi(self) -> np.ndarray:
        return np.asarray(self._hi, dtype=np.float64)

    @property
    def integer(self) -> np.ndarray:
        return np.asarray(self._int, dtype=bool)

    # -------------------------------------------------------------- rows
    def add_row(self, cols, coefs, lo=-np.inf, hi=np.inf, name="") -> int:
        """One row ``lo <= coefs . x[cols] <= hi``; returns its index."""
        self.rows.append((np.asarray(cols, dtype=np.int64), np.asarray(coefs, dtype=np.float64), float(lo),
                          float(hi), name))
        return self._grew(1) - 1

    def add_rows(self, row, col, val, n_rows, lo, hi, family) -> range:
        """Add ``n_rows`` rows from coordinate triples (duplicates summed); returns their indices."""
        n_rows = int(n_rows)
        A = sp.csr_matrix((np.asarray(val, dtype=np.float64), (np.asarray(row, dtype=np.int64),
                                                              np.asarray(col, dtype=np.int64))),
                          shape=(n_rows, self.n_cols))
        A.sum_duplicates()
        self.rows.append((A, np.broadcast_to(np.asarray(lo, dtype=np.float64), (n_rows,)).copy(),
                          np.broadcast_to(np.asarray(hi, dtype=np.float64), (n_rows,)).copy(), family))
        end = self._grew(n_rows)
        return range(end - n_rows, end)

    def _grew(self, n) -> int:
        del self._row_ends[len(self.rows) - 1:]             # blocks popped from ``rows`` since
        self._row_ends.append((self._row_ends[-1] if self._row_ends else 0) + n)
        return self._row_ends[-1]

    @property
    def n_rows(self) -> int:
        k = len(self.rows)
        return self._row_ends[k - 1] if k and len(self._row_ends) >= k else self._count_rows()

    def _count_rows(self) -> int:
        return sum(1 if len(b) == 5 else b[0].shape[0] for b in self.rows)

    def family_rows(self, family) -> int:
        """How many rows the blocks of ``family`` hold."""
        return sum(b[0].shape[0] for b in self.rows if len(b) == 4 and b[3] == family)

    def last_block(self):
        """The CSR matrix of the newest :meth:`add_rows` block."""
        return self.rows[-1][0]

    def matrix(self):
        """``(A, row_lo, row_hi)`` of all rows (CSR, with the current number of columns).

        Each row keeps its entries in the order given; runs of single rows are one block.
        """
        mats, los, his = [], [], []
        singles = []

        def flush():
            if singles:
                ptr = np.zeros(len(singles) + 1, dtype=np.int64)
                np.cumsum([r[0].size for r in singles], out=ptr[1:])
                idx = np.concatenate([r[0] for r in singles])
                val = np.concatenate([r[1] for r in singles])
                mats.append(sp.csr_matrix((val, idx, ptr), shape=(len(singles), self.n_cols)))
                los.append(np.array([r[2] for r in singles]))
                his.append(np.array([r[3] for r in singles]))
                singles.clear()

        for b in self.rows:
            if len(b) == 5:
                singles.append(b)
                continue
            flush()
            A = b[0]
            mats.append(sp.csr_matrix((A.data, A.indices, A.indptr), shape=(A.shape[0], self.n_cols)))
            los.append(b[1])
            his.append(b[2])
        flush()
        if not mats:
            return sp.csr_matrix((0, self.n_cols)), np.zeros(0), np.zeros(0)
        A = mats[0] if len(mats) == 1 else sp.vstack(mats, format="csr")
        return A, np.concatenate(los), np.concatenate(his)

    def row_names(self) -> list:
        """A name per row: the one given to :meth:`add_row`, else ``family_n`` (``rN`` if empty)."""
        out = []
        for b in self.rows:
            if len(b) == 5:
                out.append(b[4] or f"r{len(out)}")
            else:
                out.extend(f"{b[3]}_{n}" for n in range(b[0].shape[0]))
        return out

    def is_feasible(self, values, tol=1e-9) -> bool:
        """Whether ``values`` satisfies every row, the bounds and integrality."""
        x = np.asarray(values, dtype=np.float64)
        A, lo, hi = self.matrix()
        ax = A @ x
        ints = self.integer
        return bool(np.all(ax >= lo - tol) and np.all(ax <= hi + tol) and np.all(x >= self.lo - tol)
                    and np.all(x <= self.hi + tol) and np.all(np.abs(x[ints] - np.round(x[ints])) <= tol))

    # ----------------------------------------------------------- solvers
    def to_highs(self, time_limit=None, threads=1, seed=0, relax=False):
        """A ``highspy.Highs`` holding the model (its LP relaxation with ``relax``): :func:`synth.models.backends.solvers.to_highs`."""
        return solvers.to_highs(self, time_limit, threads, seed, relax)

    def solve_highs(self, time_limit=None, threads=1, seed=0, start=None, progress=None, stop_below=None,
                    relax=False, guard_presolve=True) -> MipSolution:
        """Solve with HiGHS (:func:`synth.models.backends.solvers.solve_highs`)."""
        return solvers.solve_highs(self, time_limit, threads, seed, start, progress, stop_below, relax,
                                    guard_presolve)

    def to_cpsat(self, deadline=None):
        """The CP-SAT model and its variables (:func:`synth.models.backends.solvers.to_cpsat`)."""
        return solvers.to_cpsat(self, deadline)

    def solve_cpsat(self, time_limit=None, threads=1, seed=0, start=None, progress=None,
                    linearization_level=2, stop_below=None, enumerate_all=False):
        """Solve with CP-SAT, or list every feasible point (:func:`synth.models.backends.solvers.solve_cpsat`)."""
        return solvers.solve_cpsat(self, time_limit, threads, seed, start, progress, linearization_level,
                                    stop_below, enumerate_all)

    def solve_scip(self, time_limit=None, threads=1, seed=0, start=None, progress=None, stop_below=None,
                   separate=None) -> MipSolution:
        """Solve with SCIP, cuts from ``separate`` at every node (:func:`synth.models.backends.solvers.solve_scip`)."""
        return solvers.solve_scip(self, time_limit, threads, seed, start, progress, stop_below, separate)

