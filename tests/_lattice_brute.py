"""Brute-force lattice membership for the lattice tests: exact rational solves, independent of the HNF code."""

from fractions import Fraction


def solve_rows(rows, x):
    """Coefficients y (Fractions) with y @ rows = x, by Gauss-Jordan elimination."""
    d = len(rows)
    a = [[Fraction(rows[j][i]) for j in range(d)] + [Fraction(x[i])] for i in range(d)]
    for c in range(d):
        p = next(r for r in range(c, d) if a[r][c] != 0)
        a[c], a[p] = a[p], a[c]
        a[c] = [v / a[c][c] for v in a[c]]
        for r in range(d):
            if r != c and a[r][c] != 0:
                a[r] = [u - a[r][c] * v for u, v in zip(a[r], a[c])]
    return [a[i][d] for i in range(d)]


def in_lattice(rows, x) -> bool:
    """Is the integer vector ``x`` in the lattice spanned by ``rows``?"""
    return all(y.denominator == 1 for y in solve_rows(rows, x))
