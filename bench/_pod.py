"""The pod set of ``bench/failures.py``: damaged pods solved (or repaired) by the CLI, one subprocess per step.

A case is ``(network, failures, how)``: ``network`` a torus shape, ``failures`` as in ``failures.py``
(``l0-1`` a failed link, ``n1.1`` a failed chip, joined by ``+``), ``how`` ``solve`` (``synth solve``)
or ``repair`` (``synth solve`` of the healthy torus, not measured, then ``synth repair`` of its
certificate with ``--time-limit``).  Each command runs in a subprocess of its own, so its CPU seconds
(``os.wait4``: user + system time) and peak memory (the high-water mark of its own address space, ``VmHWM``,
which it writes as it exits: ``ru_maxrss`` of a child the parent started counts the parent's peak, the
goodput of the cases before, and gave 5.16 GB to checks of 1.7 GB) are its alone; ``synth check`` of the
certificate is measured the same way.  The parent then reads the certificate back and reports

* the certificate's size (tree form, and gzip level 6 as ``--out FILE.gz`` writes it), the rounds, the
  certified fraction of the bound (``bandwidth_fraction``, re-derived by ``synth check``), the note
  lines of the command that say what each step reached;
* goodput by the cost model (:mod:`synth.analysis.cost`: 400 Gb/s links, 400 ns per hop, alpha 1 us) at
  each size, measured in symmetric mode (:func:`synth.check.measure_symmetric`), beside three figures
  for the same size: the healthy pod (SP-allreduce on the torus without failures), the layered class
  (at most: ``2H`` one-hop rounds of the damaged network and the class bound, the layered LP's dual,
  when the certificate claims it; blank otherwise) and the optimum of any reduce-scatter-then-allgather
  schedule (at most: its bandwidth term ``2(p-1)N/(p delta)``, ``delta`` the smallest degree, with no
  latency at all).

Examples
--------
>>> pod_argv("4x4", "l0-1+n1.1")
['--torus', '4x4', '--fail-link', '0-1', '--fail-node', '1.1']
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

from synth.analysis.cost import Network, goodput, lifted_metrics, sized_metrics
from synth.check.certificate import read_certificate
from synth.errors import SynthError
from synth.schedule.sp import sp_allreduce
from synth.symmetry.torus import torus_gamma
from synth.topology.torus import parse_torus
from synth.units import format_size

__all__ = ["POD", "pod_argv", "run_measured", "pod_case", "GBPS", "MEASURED"]

GBPS = 8 / 1e9  # bytes per second -> Gb/s
NET = Network()

#: the cases of issue 50's evaluation, the heavy ones (16x16x16) one at a time as listed
POD = [("16x16", "l0-1", "solve"), ("16x16", "l0-1+l37-53+l100-101+l200-216", "solve"),
       ("16x16", "n1.1", "solve"), ("32x32", "l0-1", "solve"), ("32x32", "n0", "solve"), ("16x16x16", "l0-1", "solve"),
       ("16x16x16", "n0", "solve"), ("16x16x16", "l2000-2016", "repair"), ("12x16x20", "l0-1", "solve"),
       ("16x20x28", "l0-1", "solve"), ("16x16x16", "l0-1+l37-53+l100-101+l200-216", "solve"),
       ("16x20x28", "l0-1+l5000-5001", "solve"), ("16x20x28", "n0", "solve"),
       ("16x16x16", "n5+n1000+n2222+n3333", "solve"), ("16x16x16", "l0-1+l37-53+l100-101+l200-216", "repair")]


def pod_argv(shape, failures):
    """The ``synth`` topology arguments of ``shape`` with ``failures`` (module docstring)."""
    argv = ["--torus", shape]
    for f in failures.split("+"):
        if f != "none":
            argv += ["--fail-link" if f[0] == "l" else "--fail-node", f[1:]]
    return argv


#: ``python -c`` this, then ARGV: ``python -m synth ARGV`` that writes, as it exits, its address space's peak
#: resident memory (kB) to the file named by ``SYNTH_BENCH_PEAK``
MEASURED = """import atexit, os, runpy
def peak():
    with open('/proc/self/status') as f:
        kb = next(line.split()[1] for line in f if line.startswith('VmHWM:'))
    with open(os.environ['SYNTH_BENCH_PEAK'], 'w') as out:
        out.write(kb)
atexit.register(peak)
runpy.run_module('synth', run_name='__main__', alter_sys=True)
"""


def run_measured(argv, cwd):
    """Run ``python -m synth ARGV`` in ``cwd``: ``(exit code, wall s, CPU s, peak bytes, stdout, stderr)``; the peak
    is the command's own (module docstring), or ``ru_maxrss`` if it ended before writing it (killed)."""
    t0 = time.perf_counter()
    mark = Path(cwd) / "peak"
    mark.unlink(missing_ok=True)
    with open(Path(cwd) / "stdout", "w+b") as out, open(Path(cwd) / "stderr", "w+b") as err:
        proc = subprocess.Popen([sys.executable, "-c", MEASURED, *argv], cwd=cwd, stdout=out, stderr=err,
                                env={**os.environ, "SYNTH_BENCH_PEAK": str(mark)})
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        text = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    peak = int(mark.read_text()) * 1024 if mark.exists() else usage.ru_maxrss * 1024
    return proc.returncode, time.perf_counter() - t0, usage.ru_utime + usage.ru_stime, peak, *text


def _sizes(path):
    """Bytes of the file and of its gzip stream (level 6, as ``synth`` writes ``.gz``)."""
    data = Path(path).read_bytes()
    return len(data), len(gzip.compress(data, compresslevel=6, mtime=0))


def _goodputs(base, group, sizes):
    """Modeled goodput (Gb/s) of ``base`` lifted by ``group`` at each size in bytes."""
    out = []
    p = base.topology.n_compute
    for size in sizes:
        n = size // NET.element_bytes
        # a chunk without an element at this size moves nothing, as in synth solve --size (lifted_metrics)
        m, net = sized_metrics(lambda k: lifted_metrics(base, group, k), size, n, NET, p, "allreduce")
        out.append(None if m is None else goodput(m, net) * GBPS)
    return out


def _ideal(n_rounds, hops, q_per_n, p, size):
    """Goodput (Gb/s) of a schedule of ``n_rounds`` rounds of ``hops`` hops each and bandwidth term ``q_per_n N``."""
    n = size // NET.element_bytes
    seconds = n_rounds * (NET.alpha + NET.hop_latency * hops) + q_per_n * n * NET.element_bytes / NET.bandwidth
    return n * NET.element_bytes * (p - 1) / (p * seconds) * GBPS


def pod_case(shape, failures, how, workdir, sizes, time_limit=5.0):
    """One row of the pod table (module docstring); the files stay in ``workdir``."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    cert_path = workdir / "c.json"
    net = pod_argv(shape, failures)
    row = {"table": "pod", "network": shape, "failures": failures, "how": how}
    if how == "repair":
        code, *_, err = run_measured(["solve", "--torus", shape, "--out", "healthy.json"], workdir)
        if code != 0:
            return {**row, "note": f"healthy solve failed: {err.strip()[-200:]}"}
        argv = ["repair", "healthy.json", *net[2:], "--time-limit", f"{time_limit:g}", "--out", "c.json"]
    else:
        argv = ["solve", *net, "--out", "c.json"]
    code, wall, cpu, peak, _, err = run_measured(argv, workdir)
    row.update(exit=code, wall_s=wall, cpu_s=cpu, peak_gb=peak / 1e9,
               notes=[line[6:] for line in err.splitlines() if line.startswith("note: ")])
    if code != 0 or not cert_path.exists():
        return {**row, "note": f"exit {code}: {err.strip()[-300:]}"}
    row["bytes"], row["gz_bytes"] = _sizes(cert_path)
    code, wall, cpu, peak, out, err = run_measured(["check", "c.json"], workdir)
    row.update(check_exit=code, check_wall_s=wall, check_cpu_s=cpu, check_peak_gb=peak / 1e9)
    cert = read_certificate(cert_path)
    topo, claims = cert.topology, cert.claims
    p = topo.n_compute
    row.update(algorithm=cert.provenance.get("algorithm"), rounds=claims.get("rounds"), p=p,
               fraction=100 * float(Fraction(claims["bandwidth_fraction"])), chunks=claims.get("chunks"))
    healthy = parse_torus(shape)
    degree = np.bincount(topo.link_src, minlength=topo.n_vertices)[topo.is_compute]
    delta = int(degree.min())
    klass = claims.get("class_bound")
    ecc = topo.diameter   # the layered class runs in 2H rounds, H the largest eccentricity
    try:
        mine = _goodputs(cert.base, cert.group, sizes)
    except SynthError as exc:
        return {**row, "note": f"not measured: {exc}"}
    if healthy.is_equal_sided:
        ref = _goodputs(sp_allreduce(healthy), torus_gamma(healthy), sizes)
    else:   # SP-allreduce is balanced by Γ on equal-sided tori only
        ref = [None] * len(sizes)
        row["note"] = "no healthy reference: SP-allreduce is balanced on equal-sided tori only"
    for size, g, h in zip(sizes, mine, ref):
        label = format_size(size)
        row[f"gbps {label}"], row[f"healthy {label}"] = g, h
        row[f"rsag {label}"] = _ideal(0, 0, 2 * (p - 1) / (p * delta), p, size)
        if klass is not None:
            row[f"layered {label}"] = _ideal(2 * ecc, 1, klass["value"] / claims["elements"], p, size)
    row["delta"] = delta
    return row
