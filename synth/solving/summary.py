"""The summary of a solve: what ``synth solve`` prints (as a table, or with ``--json`` as one object).

Examples
--------
>>> from synth.solving import check_written, solve
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("4x4")
>>> result = solve(t)
>>> s = solve_summary(t, result, check_written(result.certificate))
>>> s["algorithm"], s["rounds"], s["round_lower_bound"], s["valid"], s["certificate"]
('sp-allreduce', 8, 7, True, None)
"""

from __future__ import annotations

__all__ = ["ROUND_BOUND_SCOPE", "solve_summary"]

#: what the round lower bound binds: it holds for one-hop schedules with 2p-2 transmissions per chunk
ROUND_BOUND_SCOPE = "one-hop schedules with 2p-2 transmissions per chunk"

#: what the round lower bound of a reduce-scatter or allgather binds (synth.check.metrics)
COLLECTIVE_BOUND_SCOPE = "every one-hop schedule"

#: the solver fields of a certificate that the summary repeats (claims the checker does not re-derive)
#: the bandwidth term against the certified bound on it (docs/bounds.md), when the certificate claims them
BANDWIDTH_FIELDS = ("bandwidth_term", "bandwidth_lower_bound", "bandwidth_fraction")

SOLVER_FIELDS = ("status", "lower_bound", "gap", "solver_lower_bound", "balance_status", "lp_status")


def solve_summary(topology, result, report, path=None, extra=None) -> dict:
    """The summary of ``result`` (a :class:`synth.solving.SolveResult`) on ``topology``.

    ``report`` is the checker's report on the certificate (``valid`` is its verdict), ``path``
    where the certificate was written (None: not written, ``'-'``: stdout), and ``extra`` more
    fields to append (e.g. :func:`synth.solving.by_size.size_summary`).
    """
    collective = result.certificate.base.collective
    if collective != "allreduce":  # a new first field; an allreduce's summary stays as it was
        return {"collective": collective, **_fields(topology, result, report, path, extra, COLLECTIVE_BOUND_SCOPE)}
    return _fields(topology, result, report, path, extra, ROUND_BOUND_SCOPE)


def _fields(topology, result, report, path, extra, scope) -> dict:
    cert = result.certificate
    c = cert.claims
    return {
        "topology": topology.name, "algorithm": cert.provenance.get("algorithm"),
        "compute_nodes": c["compute_nodes"], "links": c["links"], "diameter": getattr(topology, "diameter", None),
        "chunks": c["chunks"], "rounds": c["rounds"], "round_lower_bound": c["round_lower_bound"],
        "round_lower_bound_scope": scope,
        "round_optimal": c["round_optimal"], "psi": c["psi"], "theta": c["theta"], "omega": c["omega"],
        "weight": c["weight"], "depth": result.depth, "valid": report.valid, "certificate": path,
        **{k: c[k] for k in BANDWIDTH_FIELDS if k in c},
        **_class_fields(c),
        **{k: v for k, v in cert.solver.items() if k in SOLVER_FIELDS},
        **(extra or {}),
    }


def _class_fields(claims) -> dict:
    """The layered class's bound and this schedule's share of it, when the certificate claims them."""
    claim = claims.get("class_bound")
    if not isinstance(claim, dict):
        return {}
    return {"class_bound": claim.get("value"), "class_fraction": claim.get("fraction"),
            "class_bound_scope": claim.get("class")}
