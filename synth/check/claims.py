"""Make claims with the checker, and check files against their claims.

:func:`certify` runs the checker on a freshly built schedule and records what it
measured as the certificate's claims; :func:`check_file` reads a certificate
or an explicit file, re-derives everything and compares.

Examples
--------
>>> from synth import parse_torus, sp_allreduce, torus_gamma  # the public names
>>> t = parse_torus("4x4")
>>> cert = certify(sp_allreduce(t), torus_gamma(t))
>>> cert.claims["rounds"], cert.claims["round_lower_bound"], cert.claims["omega"]
(8, 7, '1')
>>> report = check_certificate(cert)
>>> report.valid, report.mode
(True, 'explicit')
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction

from synth.check.bounds import khop_dual_bound
from synth.check.bounds.bandwidth import BOUND_KEY, CUT_KEY, FRACTION_KEY, bandwidth_claims, best_cut
from synth.check.bounds.layered_class import (CLASS_KEY, base_transmissions, check_class_claim,
                                              explicit_transmissions)
from synth.check.certificate import Certificate, read_certificate
from synth.check.execution import execute
from synth.check.explicit import FORMAT as EXPLICIT_FORMAT, read_explicit
from synth.check.eccentricity import round_lower_bound
from synth.check.metrics import Metrics, measure_explicit, measure_symmetric
from synth.errors import (FileFormatError, InvalidScheduleError, OptionError, ScheduleError, SynthError,
                          check_instance, check_int, check_path)
from synth.fileio import MAX_INT, open_regular, printable, read_line
from synth.schedule.lift import default_elements, lift, lifted_chunk_elements
from synth.symmetry.spec import default_group
from synth.schedule import ALLREDUCE
from synth.schedule.data import BaseSchedule, phases
from synth.schedule.chunking import require_elements
from synth.symmetry.group import Group
from synth.topology.failures import without_nodes

__all__ = ["Report", "certify", "check_certificate", "check_explicit", "check_file", "require_valid", "claims_of",
           "file_kind", "MODES", "EXPLICIT_LIMIT", "EXPLICIT_HARD_LIMIT", "FRACTION_DIGITS"]

MODES = ("auto", "explicit", "symmetric")
EXPLICIT_LIMIT = 30_000_000  # lifted transmissions up to which 'auto' executes explicitly
EXPLICIT_HARD_LIMIT = 60_000_000  # lifted route links beyond which even mode 'explicit' refuses (memory)
_KIND_BYTES = 1 << 20  # how much of a file file_kind looks at
_EXPLICIT_HEAD = re.compile(rb'\s*\{\s*"format"\s*:\s*"' + re.escape(EXPLICIT_FORMAT.encode()) + rb'"')
FRACTION_DIGITS = 300   # digits of a claim's numerator or denominator (bandwidths' units can make long ones)
_FRACTION = re.compile(rf"^-?\d{{1,{FRACTION_DIGITS}}}(/\d{{1,{FRACTION_DIGITS}}})?$")  # bounded: no huge parse


@dataclass
class Report:
    """What ``synth check`` found.

    ``claims`` maps each claim to ``(claimed, measured, ok)``; ``solver`` holds
    the solver's own (unchecked) claims.
    """

    kind: str
    mode: str
    errors: list = field(default_factory=list)
    metrics: Metrics | None = None
    round_lower_bound: int | None = None
    bound_witness: str = ""
    claims: dict = field(default_factory=dict)
    solver: dict = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return not self.errors and all(ok for _, _, ok in self.claims.values())

    def to_json(self) -> dict:
        m = self.metrics
        out = {"valid": self.valid, "kind": self.kind, "mode": self.mode, "errors": self.errors}
        if m is not None and m.collective != ALLREDUCE:  # allreduce reports stay as they were
            out["collective"] = m.collective
        if m is not None:
            out.update({
                "rounds": m.rounds, "round_lower_bound": self.round_lower_bound, "bound_witness": self.bound_witness,
                "psi": float(m.psi), "theta": float(m.theta), "omega": float(m.omega), "weight": float(m.weight),
                "exact": {k: str(getattr(m, k)) for k in ("psi", "theta", "omega", "weight")},
                "metrics": m.to_json(),
            })
        out["claims"] = {k: {"claimed": c, "measured": v, "ok": ok} for k, (c, v, ok) in self.claims.items()}
        if self.solver:
            out["solver_claims"] = {k: ("stored; re-derived as the claim weight_lower_bound" if k == "dual_bound"
                                        else v) for k, v in self.solver.items()}
        return out


def _is_round_optimal(m: Metrics, bound: int) -> bool:
    """Allreduce: one-hop, ``2p - 2`` transmissions per chunk, Ψ = Θ = Ω = 1 and the docs/spec.md §3 bound met.

    Reduce-scatter and allgather: one-hop and ``max_v ecc(v)`` rounds, a bound that holds for
    every one-hop schedule (:mod:`synth.check.metrics`), whatever its volume.
    """
    if m.collective != ALLREDUCE:
        return bool(m.max_route == 1 and bound is not None and m.rounds == bound)
    one_hop_minimal = m.max_route == 1 and m.transmissions == m.chunks * 2 * (m.compute_nodes - 1)
    return bool(one_hop_minimal and m.psi == 1 and m.theta == 1 and m.omega == 1 and m.rounds == bound)


def claims_of(m: Metrics, bound: int) -> dict:
    """The claims a certificate makes, as JSON values (exact fractions as strings)."""
    out = m.to_json()
    out["round_lower_bound"] = bound
    out["round_optimal"] = _is_round_optimal(m, bound)
    return out


def _measure(base, group, elements, mode, dropped=()):
    if isinstance(elements, bool) or not isinstance(elements, int) or elements < 1:
        raise ScheduleError(f"the number of elements must be a positive integer, got {str(elements)[:40]}")
    n_chunks = base.n_components * group.order
    require_elements(elements, n_chunks)  # before the sizes are made: some chunk would get no element
    n_lifted = base.n_transmissions * group.order
    if mode == "auto":
        mode = "explicit" if n_lifted <= EXPLICIT_LIMIT else "symmetric"
    if mode == "explicit" and base.route_links.size * group.order > EXPLICIT_HARD_LIMIT:
        raise OptionError(f"mode explicit: the lifted schedule has {base.route_links.size * group.order} route links, "
                          f"more than {EXPLICIT_HARD_LIMIT} that an explicit check may hold in memory; use `mode` "
                          "symmetric")
    sizes = lifted_chunk_elements(base, group, elements)
    if mode == "explicit":
        schedule = lift(base, group, dropped)
        errors = execute(schedule)
        metrics = measure_explicit(schedule, sizes)
    elif mode == "symmetric":
        errors = execute(base.as_schedule())  # each component is a one-chunk collective
        metrics = measure_symmetric(base, group, sizes, dropped)   # dropped chips: leaves of every component
    else:
        raise ScheduleError(f"unknown check mode {mode!r}; valid: {', '.join(MODES)}")
    return mode, errors, metrics


def certify(base, group, elements=None, *, mode="auto", solver=None, provenance=None, dropped=()) -> Certificate:
    """Check a fresh schedule and wrap it, with what was measured as claims, into a certificate.

    ``dropped``: chips the schedule drops (leaves of every tree, :mod:`synth.check.dropped`); the claims are
    then those of the network without them.

    ``elements`` defaults to one element per unit of chunk weight (``|G| * sum(weights)``; for a
    reduce-scatter or allgather, :func:`synth.schedule.lift.default_elements`).
    Empty rounds at the end are dropped (:meth:`synth.schedule.BaseSchedule.trimmed`): a certificate's
    ``rounds`` is its last round with a transmission.

    Raises
    ------
    ScheduleError
        If the schedule is not a correct allreduce, a chunk would get no element, or a claim
        would be too large for a file to hold (``|x| >= 2**53``, :data:`synth.fileio.MAX_INT`, or a
        fraction of more than :data:`FRACTION_DIGITS` digits):
        nothing false, and nothing that cannot be read back, is ever certified.
    """
    check_instance(base, "base", BaseSchedule)
    check_instance(group, "group", Group)
    elements = check_int(elements, "elements", 1, optional=True)
    base = base.trimmed()
    if elements is None:
        elements = default_elements(base, group)
    dropped = tuple(sorted(int(v) for v in dropped))
    mode, errors, metrics = _measure(base, group, elements, mode, dropped)
    if errors:
        raise ScheduleError("refusing to certify an incorrect schedule: " + errors[0])
    net = without_nodes(base.topology, dropped)
    bound, _ = round_lower_bound(net, None if dropped else group, base.collective)
    claims = claims_of(metrics, bound)
    if base.collective == ALLREDUCE:   # the bandwidth bound and the cut that proves it (docs/bounds.md)
        claims.update(bandwidth_claims(net, metrics, best_cut(net)))
    too_big = [k for k, v in claims.items() if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= MAX_INT]
    if too_big:
        raise ScheduleError(f"{elements} elements per node make the claim {too_big[0]} = {claims[too_big[0]]}, "
                            "too large for a certificate to hold (integers in files stay below 2**53); "
                            "use fewer elements")
    too_long = [k for k, v in claims.items() if isinstance(v, str) and not _FRACTION.match(v)]
    if too_long:
        raise ScheduleError(f"the claim {too_long[0]} is a fraction of more than {FRACTION_DIGITS} digits (the links' "
                            "bandwidths share no short unit); give bandwidths in whole GB/s or halves, quarters, ... "
                            "(12.5, not 12.3)")
    return Certificate(base.topology, group, base, elements, claims, dict(solver or {}), dict(provenance or {}),
                       dropped=dropped)


def _same(claimed, measured) -> bool:
    """Is ``claimed`` exactly the re-derived ``measured`` (a bool, an int or a fraction string)?

    No rounding and no coercion: a bool matches only a bool, an int only an equal int (or a
    fraction equal to it), a fraction only a string ``a`` or ``a/b`` of at most FRACTION_DIGITS digits each
    (or an int) with exactly that value.  Floats never match: claims are exact.
    """
    if isinstance(measured, list):   # a list of integers (a bound's cut): exactly the same list
        return isinstance(claimed, list) and all(_is_int(x) for x in claimed) and claimed == measured
    if isinstance(measured, bool) or isinstance(claimed, bool):
        return isinstance(measured, bool) and isinstance(claimed, bool) and claimed == measured
    if isinstance(measured, int):
        return isinstance(claimed, int) and claimed == measured
    if isinstance(measured, str) and _FRACTION.match(measured):
        if isinstance(claimed, int):
            return Fraction(measured) == claimed
        if isinstance(claimed, str) and _FRACTION.match(claimed):
            try:
                return Fraction(claimed) == Fraction(measured)
            except ZeroDivisionError:
                return False
        return False
    return False


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _bandwidth_measured(topology, metrics, claimed: dict, errors: list) -> dict:
    """The bandwidth bound re-derived from the topology and the claimed cut (none claimed: nothing to compare).

    The stored cut is only evaluated, never searched for: an edited bound, cut or failure list
    (the topology is rebuilt from its spec) gives another value, and the claim fails.
    """
    if not isinstance(claimed, dict) or not any(k in claimed for k in (BOUND_KEY, CUT_KEY, FRACTION_KEY)):
        return {}
    if metrics.collective != ALLREDUCE:
        errors.append("a bandwidth bound is certified for allreduce schedules only")
        return {}
    cut = claimed.get(CUT_KEY)
    if cut is not None and not (isinstance(cut, list) and all(_is_int(v) for v in cut)):
        errors.append(f"claim {CUT_KEY} must be a list of integer vertex ids")
        return {}
    try:
        return bandwidth_claims(topology, metrics, cut)
    except SynthError as exc:
        errors.append(f"bandwidth bound: {exc}")
        return {}


def _class_claim(topology, claimed: dict, metrics, tx, n_chunks: int, errors: list) -> dict:
    """The layered class bound (:mod:`synth.check.bounds.layered_class`), when claimed: re-derived from its dual."""
    if not isinstance(claimed, dict) or CLASS_KEY not in claimed:
        return {}
    if metrics.collective != ALLREDUCE:
        errors.append("a class bound is certified for allreduce schedules only")
        return {CLASS_KEY: (None, None, False)}
    shown, measured, ok, error = check_class_claim(topology, claimed[CLASS_KEY], metrics, tx, n_chunks)
    if error:
        errors.append(error)
    return {CLASS_KEY: (shown, measured, ok)}


def _compare(claimed: dict, measured: dict) -> dict:
    out = {}
    for key, value in claimed.items():
        if key == CLASS_KEY:   # compared by _class_claim
            continue
        if key not in measured:
            out[key] = (value, None, False)
            continue
        mine = measured[key]
        out[key] = (value, mine, _same(value, mine))
    return out


def _dual_claims(cert: Certificate, metrics: Metrics, errors: list) -> dict:
    """Re-derive a k-hop lower bound from the dual stored in the solver section (:mod:`synth.check.bounds`).

    Adds the claims ``weight_lower_bound`` (the dual's ``bound``, which the re-derived value
    must reach) and ``depth_bound`` (the schedule's tree must be within it: ``rounds <= 2k``).
    The solver's own ``lower_bound`` may be stronger (e.g. a MIP proof); it stays a solver claim.
    """
    solver = cert.solver
    k = solver.get("depth_bound")
    claimed = solver["dual_bound"].get("bound")
    if not isinstance(k, int) or isinstance(k, bool) or isinstance(claimed, bool) \
            or not isinstance(claimed, (int, float)) or not math.isfinite(claimed):
        errors.append("solver section: a dual bound needs an integer 'depth_bound' and a finite numeric 'bound'")
        return {}
    try:
        derived = khop_dual_bound(cert.topology, k, solver["dual_bound"])
    except SynthError as exc:
        errors.append(str(exc))
        return {}
    need = math.ceil(claimed - 1e-9)
    per = phases(metrics.collective)  # a tree of depth h: 2h rounds of allreduce, h of either half
    return {"weight_lower_bound": (claimed, derived.bound, derived.bound >= need),  # a bound on W* at depth <= k
            "depth_bound": (k, metrics.rounds // per, metrics.rounds <= per * k)}


def check_certificate(cert: Certificate, mode: str = "auto") -> Report:
    """Re-derive everything a certificate claims (and a k-hop bound whose dual it stores)."""
    check_instance(cert, "cert", Certificate, " (e.g. synth.read_certificate(path))")
    mode, errors, metrics = _measure(cert.base, cert.group, cert.elements, mode, cert.dropped)
    net = cert.network
    bound, witness = round_lower_bound(net, None if cert.dropped else cert.group, cert.base.collective)
    measured = {**claims_of(metrics, bound), **_bandwidth_measured(net, metrics, cert.claims, errors)}
    claims = _compare(cert.claims, measured)
    if cert.dropped and CLASS_KEY in cert.claims:
        errors.append("a class bound is not certified for a schedule that drops chips")
    else:
        claims.update(_class_claim(cert.topology, cert.claims, metrics, base_transmissions(cert.base),
                                   cert.base.n_components, errors))
    if isinstance(cert.solver.get("dual_bound"), dict):
        claims.update(_dual_claims(cert, metrics, errors))
    return Report("certificate", mode, errors, metrics, bound, witness, claims, dict(cert.solver))


def check_explicit(path) -> Report:
    """Execute an explicit file transmission by transmission."""
    schedule, sizes, header = read_explicit(path)
    errors = execute(schedule)
    metrics = measure_explicit(schedule, sizes)
    t = schedule.topology
    group = default_group(t)
    if group is None and t.n_compute > 4096:
        bound, witness = None, "not computed (no symmetry known and more than 4096 nodes)"
    else:
        bound, witness = round_lower_bound(t, group, schedule.collective)
    claimed = header.get("claims")
    measured = {**claims_of(metrics, bound), **_bandwidth_measured(t, metrics, claimed, errors)}
    claims = _compare(claimed, measured) if isinstance(claimed, dict) else {}
    claims.update(_class_claim(t, claimed, metrics, explicit_transmissions(schedule), schedule.n_chunks, errors))
    return Report("explicit", "explicit", errors, metrics, bound, witness, claims)


def file_kind(path) -> str:
    """``'explicit'`` when the first line is a synth-explicit header, else ``'certificate'``.

    Looks at the first line's first MiB only, from a regular file only: an explicit header
    names its format first (:func:`synth.check.explicit.explicit_lines`); the readers then check
    everything, so a file taken for the wrong kind is refused with the other kind's error.
    """
    with open_regular(path) as f:
        try:
            first = read_line(f, _KIND_BYTES)
        except OSError as exc:
            raise FileFormatError(f"{path}: cannot read ({exc.strerror or exc.__class__.__name__})") from None
    return "explicit" if _EXPLICIT_HEAD.match(first) else "certificate"


def check_file(path, mode: str = "auto") -> Report:
    """Check a certificate or an explicit file, whichever ``path`` holds."""
    check_path(path)
    if mode not in MODES:
        raise SynthError(f"unknown check mode {mode!r}; valid: {', '.join(MODES)}")
    kind = file_kind(path)
    if kind == "explicit" and mode == "symmetric":
        raise SynthError("an explicit file can only be checked in explicit mode")
    try:
        return check_explicit(path) if kind == "explicit" else check_certificate(read_certificate(path), mode)
    except InvalidScheduleError as exc:   # a transmission over a failure: a false schedule, read no further
        return Report(kind, "explicit" if kind == "explicit" else mode, [str(exc)])


def require_valid(path, what: str = "used") -> Report:
    """The checker's report on the file at ``path``, or :class:`~synth.errors.InvalidScheduleError` (the CLI
    exits 1) naming its first problem when it is INVALID: a command never uses a schedule ``synth check``
    rejects.  ``what`` ends the message (``'not simulated'``)."""
    report = check_file(path)
    if report.valid:
        return report
    failed = [f"{key}: claimed {c}, measured {m}" for key, (c, m, ok) in report.claims.items() if not ok]
    first = " ".join(str((report.errors + failed + ["INVALID"])[0]).split())[:300]
    more = len(report.errors) + len(failed) - 1
    raise InvalidScheduleError(f"{printable(path)} does not check ({printable(first)}"
                               f"{f'; {more} more problem(s)' if more > 0 else ''}): {what}; "
                               "synth check lists every problem")
