"""Run a schedule on a real engine: MPI point-to-point through mpi4py.

:func:`run_schedule` packs the schedule into messages (:mod:`synth.runtime.plan`),
precomputes every rank's part in the parent (numpy, vectorized), writes one ``.npz`` per
rank into a temporary directory and launches ``mpiexec -n p python _mpi_worker.py DIR``.
Rank ``r`` is compute vertex ``r``.  Each rank posts non-blocking receives and sends
(unique tags per sender/receiver pair, never a blocking send) and runs the schedule either
round by round (``mode="rounds"``) or driven by dependencies (``mode="deps"``); see
:mod:`synth.runtime._mpi_worker`.  Every iteration is checked against the exact sum (the
inputs are small integers, so the sums are exact in every dtype) and against
``MPI_Allreduce`` on the same data, and both are timed (per iteration, the slowest rank).

:func:`simulate_run` executes the same per-rank plans in one process over a fake
communicator: the plans can be tested without MPI.

Examples
--------
>>> from synth.torus import parse_torus
>>> from synth.group import torus_gamma
>>> from synth.sp import sp_allreduce
>>> from synth.lift import lift
>>> t = parse_torus("4x4")
>>> s = lift(sp_allreduce(t), torus_gamma(t))
>>> simulate_run(s, elements=1000, dtype="float32", mode="deps")
True
>>> parse_size("1MiB"), parse_size("64k"), parse_size("4096")
(1048576, 65536, 4096)
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field

import numpy as np

from synth.cost import parse_size  # the one size parser of every command
from synth.errors import ScheduleError, SynthError
from synth.runtime import _mpi_worker as worker
from synth.runtime.plan import Plan, build_plan, load_schedule
from synth.schedule import COPY, chunk_elements

__all__ = ["RunReport", "Prepared", "run_schedule", "prepare_run", "rank_plans", "simulate_run", "parse_size",
           "find_mpiexec", "DTYPES", "MODES", "INSTALL_HINT"]

DTYPES = ("float32", "float64", "int64", "int32")
MODES = ("rounds", "deps")
INSTALL_HINT = "pip install -e '.[mpi]'  (mpi4py and the MPICH wheel)"
WORKER = os.path.abspath(worker.__file__)
TAG_MOD = 32767  # the MPI standard guarantees tags up to 32767


def find_mpiexec(mpiexec=None) -> list:
    """The launcher command as an argument list (``mpiexec`` may carry flags, e.g. ``"mpirun --oversubscribe"``).

    Raises
    ------
    SynthError
        With the install hint, when mpi4py or the launcher is missing.
    """
    if importlib.util.find_spec("mpi4py") is None:
        raise SynthError(f"mpi4py is not installed; install the MPI extra: {INSTALL_HINT}")
    if mpiexec:
        cmd = shlex.split(str(mpiexec))
        exe = shutil.which(cmd[0]) or (cmd[0] if os.access(cmd[0], os.X_OK) else None)
        if exe is None:
            raise SynthError(f"MPI launcher {cmd[0]!r} not found; install the MPI extra: {INSTALL_HINT}")
        return [exe, *cmd[1:]]
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")  # the MPICH wheel puts it next to python
    for cand in (here, shutil.which("mpiexec"), shutil.which("mpirun")):
        if cand and os.access(cand, os.X_OK):
            return [cand]
    raise SynthError(f"no mpiexec found; install the MPI extra: {INSTALL_HINT}, or pass --mpiexec PATH")


# ------------------------------------------------------------------ per-rank plans
def _cumcount(keys_sorted):
    """Position of each row inside its run of equal values (input sorted)."""
    n = keys_sorted.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    start = np.ones(n, dtype=bool)
    start[1:] = keys_sorted[1:] != keys_sorted[:-1]
    idx = np.arange(n)
    return idx - np.maximum.accumulate(np.where(start, idx, 0))


def _local_index(owner, n_messages):
    """Index of each message among the messages of its owner, in message order."""
    o = np.lexsort((np.arange(n_messages), owner))
    local = np.empty(n_messages, dtype=np.int64)
    local[o] = _cumcount(owner[o])
    return local


def _expand(dependent, lo, hi):
    """Pairs ``(dependent[i], k)`` for every ``k`` in ``lo[i]:hi[i]``."""
    n = np.maximum(hi - lo, 0)
    dep = np.repeat(dependent, n)
    start = np.repeat(lo - (np.cumsum(n) - n), n)
    return dep, start + np.arange(int(n.sum()), dtype=np.int64)


def _runs(off, length, first, split_extra=None):
    """Run starts: a run breaks at a message start, a gap, or where ``split_extra`` is set."""
    brk = first.copy()
    brk[1:] |= off[1:] != off[:-1] + length[:-1]
    if split_extra is not None:
        brk |= split_extra
    return np.flatnonzero(brk)


def rank_plans(plan: Plan, sizes) -> list:
    """Every rank's arrays for :class:`synth.runtime._mpi_worker.RankEngine` (vectorized).

    Parameters
    ----------
    plan : Plan
    sizes : array_like
        Elements of every chunk.

    Returns
    -------
    list of dict
        One dict of numpy arrays per rank (keys :data:`_mpi_worker.PLAN_KEYS`): sends and
        receives in round order with their element runs, tags, the ``direct`` flag of
        receives that may land in place, and the dependency graph of ``deps`` mode.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    p, C, M, T = plan.n_ranks, plan.n_chunks, plan.n_messages, plan.n_transmissions
    offsets = plan.offsets(sizes)
    t_off, t_len, msg = offsets[plan.t_chunk], sizes[plan.t_chunk], plan.t_msg
    first = np.zeros(T, dtype=bool)
    first[plan.m_ptr[:-1][np.diff(plan.m_ptr) > 0]] = True
    m_n = np.add.reduceat(t_len, plan.m_ptr[:-1]) if M else np.zeros(0, dtype=np.int64)
    # send runs (the payload does not care about the op) and receive runs (split where the op changes)
    s_at = _runs(t_off, t_len, first)
    op_change = np.zeros(T, dtype=bool)
    op_change[1:] = plan.t_op[1:] != plan.t_op[:-1]
    r_at = _runs(t_off, t_len, first, op_change)
    s_run_msg, s_run_off = msg[s_at], t_off[s_at]
    s_run_len = np.add.reduceat(t_len, s_at) if T else np.zeros(0, dtype=np.int64)
    r_run_msg, r_run_off, r_run_op = msg[r_at], t_off[r_at], plan.t_op[r_at]
    r_run_len = np.add.reduceat(t_len, r_at) if T else np.zeros(0, dtype=np.int64)
    s_nruns = np.bincount(s_run_msg, minlength=M)
    r_nruns = np.bincount(r_run_msg, minlength=M)
    # tags: sequence number of the message between its sender and receiver
    o = np.lexsort((np.arange(M), plan.m_dst, plan.m_src))
    pair = plan.m_src[o] * p + plan.m_dst[o]
    tag = np.empty(M, dtype=np.int64)
    tag[o] = _cumcount(pair) % TAG_MOD
    # direct receives: one copy run, nothing at the receiver reads those chunks in that round
    K = plan.n_rounds + 2
    read_key = (plan.t_src * C + plan.t_chunk) * K + plan.t_round
    write_key = (plan.t_dst * C + plan.t_chunk) * K + plan.t_round
    clash = np.isin(write_key, read_key)
    clash_msg = np.bincount(msg, weights=clash, minlength=M) > 0
    direct = (r_nruns == 1) & ~clash_msg & (np.bincount(r_run_msg, weights=r_run_op == COPY, minlength=M) == 1)
    # local op numbering: sends first, then receives
    s_local = _local_index(plan.m_src, M)
    r_local = _local_index(plan.m_dst, M)
    n_send = np.bincount(plan.m_src, minlength=p)
    n_recv = np.bincount(plan.m_dst, minlength=p)
    n_ops = n_send + n_recv
    base = np.concatenate([[0], np.cumsum(n_ops)])
    read_op = base[plan.t_src] + s_local[msg]
    write_op = base[plan.t_dst] + n_send[plan.t_dst] + r_local[msg]
    deps = _dependencies(plan, read_op, write_op, read_key, write_key, K)
    n_total = int(base[-1])
    d_count = np.bincount(deps[0], minlength=n_total)
    srt = np.lexsort((deps[0], deps[1]))
    succ, pre = deps[0][srt], deps[1][srt]
    succ_ptr = np.searchsorted(pre, np.arange(n_total + 1))
    # per-rank split (messages are sorted by round, so each rank's list is in round order)
    by_src = np.argsort(plan.m_src, kind="stable")
    by_dst = np.argsort(plan.m_dst, kind="stable")
    src_ptr = np.concatenate([[0], np.cumsum(n_send)])
    dst_ptr = np.concatenate([[0], np.cumsum(n_recv)])
    s_run_ptr = np.concatenate([[0], np.cumsum(s_nruns)])
    r_run_ptr = np.concatenate([[0], np.cumsum(r_nruns)])
    out = []
    for r in range(p):
        sm = by_src[src_ptr[r]:src_ptr[r + 1]]
        rm = by_dst[dst_ptr[r]:dst_ptr[r + 1]]
        s_idx = _gather_ranges(s_run_ptr[sm], s_run_ptr[sm + 1])
        r_idx = _gather_ranges(r_run_ptr[rm], r_run_ptr[rm + 1])
        ops = np.arange(base[r], base[r + 1])
        lo, hi = succ_ptr[ops], succ_ptr[ops + 1]
        out.append({
            "s_round": plan.m_round[sm].astype(np.int32), "s_peer": plan.m_dst[sm].astype(np.int32),
            "s_tag": tag[sm].astype(np.int32), "s_n": m_n[sm],
            "s_rptr": np.concatenate([[0], np.cumsum(s_nruns[sm])]).astype(np.int64),
            "s_off": s_run_off[s_idx], "s_len": s_run_len[s_idx],
            "r_round": plan.m_round[rm].astype(np.int32), "r_peer": plan.m_src[rm].astype(np.int32),
            "r_tag": tag[rm].astype(np.int32), "r_n": m_n[rm],
            "r_rptr": np.concatenate([[0], np.cumsum(r_nruns[rm])]).astype(np.int64),
            "r_off": r_run_off[r_idx], "r_len": r_run_len[r_idx], "r_op": r_run_op[r_idx].astype(np.int8),
            "r_direct": direct[rm],
            "d_count": d_count[ops].astype(np.int32),
            "d_ptr": np.concatenate([[0], np.cumsum(hi - lo)]).astype(np.int64),
            "d_succ": (succ[_gather_ranges(lo, hi)] - base[r]).astype(np.int32),
        })
    return out


def _gather_ranges(lo, hi):
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    n = np.maximum(hi - lo, 0)
    start = np.repeat(lo - (np.cumsum(n) - n), n)
    return start + np.arange(int(n.sum()), dtype=np.int64)


def _dependencies(plan, read_op, write_op, read_key, write_key, K):
    """Edges ``(dependent op, prerequisite op)`` of deps mode (global op ids), deduplicated.

    Per (rank, chunk), with ``prev`` the last round before ``s`` in which the chunk was written:
    a send of round ``s`` needs the writes of round ``prev`` (RAW); a write of round ``s``
    needs the writes of round ``prev`` (WAW) and the sends of rounds ``prev+1..s`` (WAR:
    they read the old value).  Everything earlier follows transitively.
    """
    wo = np.argsort(write_key, kind="stable")
    wk, wop = write_key[wo], write_op[wo]
    ro = np.argsort(read_key, kind="stable")
    rk, rop = read_key[ro], read_op[ro]

    def prev_writes(key):
        pos = np.searchsorted(wk, key, side="left")
        prev = pos - 1
        ok = prev >= 0
        ok[ok] = wk[prev[ok]] // K == key[ok] // K
        prev_round = np.where(ok, wk[np.maximum(prev, 0)] % K, 0)
        lo = np.where(ok, np.searchsorted(wk, key - key % K + prev_round, side="left"), 0)
        hi = np.where(ok, pos, 0)
        return lo, hi, prev_round

    dep, pre = [], []
    lo, hi, _ = prev_writes(read_key)  # RAW
    d, k = _expand(read_op, lo, hi)
    dep.append(d)
    pre.append(wop[k])
    lo, hi, prev_round = prev_writes(write_key)  # WAW
    d, k = _expand(write_op, lo, hi)
    dep.append(d)
    pre.append(wop[k])
    g0 = write_key - write_key % K  # WAR: reads in rounds prev+1 .. s
    lo = np.searchsorted(rk, g0 + prev_round + 1, side="left")
    hi = np.searchsorted(rk, write_key, side="right")
    d, k = _expand(write_op, lo, hi)
    dep.append(d)
    pre.append(rop[k])
    dep, pre = np.concatenate(dep), np.concatenate(pre)
    keep = dep != pre
    if not keep.all():
        raise ScheduleError("a message reads and writes the same chunk at one rank")
    n = int(max(dep.max(initial=0), pre.max(initial=0))) + 1
    key = np.unique(dep * n + pre)
    return key // n, key % n


@dataclass
class Prepared:
    """What :func:`prepare_run` wrote, for the report."""

    ranks: int
    elements: int
    dtype: str
    rounds: int
    chunks: int
    messages: int
    runs: int
    sizes: np.ndarray = field(repr=False)
    offsets: np.ndarray = field(repr=False)
    order: np.ndarray = field(repr=False)
    seconds: float = 0.0


def prepare_run(source, elements: int, dtype: str, directory, *, mode: str = "rounds", iters: int = 5,
                warmup: int = 1, layout: str = "greedy") -> Prepared:
    """Write ``meta.json`` and ``rank-<r>.npz`` for every rank into ``directory``.

    >>> import tempfile, os
    >>> from synth.torus import parse_torus
    >>> from synth.baselines import build_baseline
    >>> with tempfile.TemporaryDirectory() as d:
    ...     info = prepare_run(build_baseline("ring", parse_torus("3")), 60, "float64", d)
    ...     sorted(os.listdir(d))[:2], info.ranks, info.messages
    (['meta.json', 'rank-0.npz'], 3, 24)
    """
    t0 = time.perf_counter()
    schedule, weights, _ = load_schedule(source)
    _check_dtype(dtype)
    if mode not in MODES:
        raise SynthError(f"unknown mode {mode!r}; valid: {', '.join(MODES)}")
    plan = build_plan(schedule, layout)
    sizes = chunk_elements(weights, int(elements))
    plans = rank_plans(plan, sizes)
    for r, arrays in enumerate(plans):
        np.savez(os.path.join(directory, f"rank-{r}.npz"), **arrays)
    meta = {"ranks": plan.n_ranks, "elements": int(elements), "dtype": str(dtype), "mode": mode,
            "iters": int(iters), "warmup": int(warmup)}
    with open(os.path.join(directory, "meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f)
    return Prepared(plan.n_ranks, int(elements), str(dtype), plan.n_rounds, plan.n_chunks, plan.n_messages,
                    plan.total_runs(), sizes, plan.offsets(sizes), plan.order, time.perf_counter() - t0)


def _check_dtype(dtype):
    if str(dtype) not in DTYPES:
        raise SynthError(f"unknown dtype {dtype!r}; valid: {', '.join(DTYPES)}")


# ------------------------------------------------------------------ report
@dataclass
class RunReport:
    """What ``synth run`` measured.

    Times are seconds per iteration, each the slowest rank's (``schedule_s`` for the
    schedule, ``allreduce_s`` for ``MPI_Allreduce`` on the same data, same iterations).
    ``errors`` is empty when every rank ended every iteration with the exact sum and with
    ``MPI_Allreduce``'s result.
    """

    label: str
    ranks: int
    elements: int
    dtype: str
    mode: str
    iters: int
    warmup: int
    rounds: int
    chunks: int
    messages: int
    runs: int
    schedule_s: list = field(default_factory=list)
    allreduce_s: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    prepare_s: float = 0.0
    launch_s: float = 0.0
    setup_s: float = 0.0
    mpi_library: str = ""
    command: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def bytes(self) -> int:
        return self.elements * np.dtype(self.dtype).itemsize

    @property
    def median_s(self) -> float:
        return float(np.median(self.schedule_s)) if self.schedule_s else float("nan")

    @property
    def allreduce_median_s(self) -> float:
        return float(np.median(self.allreduce_s)) if self.allreduce_s else float("nan")

    def to_json(self) -> dict:
        return {
            "ok": self.ok, "schedule": self.label, "ranks": self.ranks, "elements": self.elements,
            "bytes": self.bytes, "dtype": self.dtype, "mode": self.mode, "iters": self.iters, "warmup": self.warmup,
            "rounds": self.rounds, "chunks": self.chunks, "messages": self.messages, "runs": self.runs,
            "schedule_s": self.schedule_s, "allreduce_s": self.allreduce_s,
            "schedule_median_s": self.median_s, "allreduce_median_s": self.allreduce_median_s,
            "errors": self.errors, "prepare_s": self.prepare_s, "launch_s": self.launch_s, "setup_s": self.setup_s,
            "mpi_library": self.mpi_library, "command": self.command,
        }

    def summary(self) -> str:
        """Human-readable lines (what ``synth run`` prints)."""
        def ms(xs):
            return f"{1e3 * float(np.median(xs)):.3f} ms (min {1e3 * min(xs):.3f}, max {1e3 * max(xs):.3f})"

        lines = [f"{self.label}: {'OK' if self.ok else 'WRONG RESULT'} on {self.ranks} ranks, "
                 f"{self.bytes:,} bytes ({self.elements:,} x {self.dtype}), mode {self.mode}, "
                 f"{self.iters} iterations (+{self.warmup} warm-up)",
                 f"  {self.rounds} rounds, {self.chunks} chunks, {self.messages} messages "
                 f"({self.runs} contiguous runs)"]
        if self.schedule_s:
            ratio = self.median_s / self.allreduce_median_s if self.allreduce_median_s > 0 else float("nan")
            lines.append(f"  schedule       {ms(self.schedule_s)} per iteration")
            lines.append(f"  MPI_Allreduce  {ms(self.allreduce_s)} per iteration  (schedule / MPI = {ratio:.2f})")
        lines.append(f"  checked every iteration against the exact sum and MPI_Allreduce: "
                     f"{'all equal' if self.ok else str(len(self.errors)) + ' problem(s)'}")
        for e in self.errors[:10]:
            lines.append(f"  error: {e}")
        lines.append(f"  prepare {self.prepare_s:.2f} s, mpiexec {self.launch_s:.2f} s; {self.mpi_library}")
        return "\n".join(lines)


# ------------------------------------------------------------------ running
def run_schedule(source, size="1MiB", iters: int = 5, dtype: str = "float32", mode: str = "rounds", mpiexec=None,
                 *, warmup: int = 1, layout: str = "greedy", timeout: float = 1800.0, env=None,
                 keep_dir=None) -> RunReport:
    """Execute a schedule under MPI, check it and time it next to ``MPI_Allreduce``.

    Parameters
    ----------
    source
        A certificate or explicit file path, or any object :func:`~synth.runtime.plan.load_schedule` takes.
    size : str or int
        Bytes per rank (``"1MiB"``); the vector has ``size // itemsize`` elements.
    iters : int
        Timed iterations (after ``warmup`` untimed ones); every one is checked.
    dtype : {"float32", "float64", "int64", "int32"}
    mode : {"rounds", "deps"}
        Round-synchronous or dependency-driven execution.
    mpiexec : str, optional
        Launcher (path, or a command with flags such as ``"mpirun --oversubscribe"``);
        default: the ``mpiexec`` next to this Python (the MPICH wheel's), else on ``PATH``.
    timeout : float
        Seconds before the whole MPI job is killed.
    env : dict, optional
        Extra environment variables for the ranks.
    keep_dir : str, optional
        Write the per-rank plans there (and keep them) instead of a temporary directory.

    Returns
    -------
    RunReport

    Raises
    ------
    SynthError
        When MPI is missing (the message says ``pip install -e '.[mpi]'``), the world size is
        wrong, or the job fails or times out.  A wrong *result* is not an exception: it is
        reported in ``RunReport.errors``.
    """
    schedule, weights, label = load_schedule(source)
    _check_dtype(dtype)
    if mode not in MODES:
        raise SynthError(f"unknown mode {mode!r}; valid: {', '.join(MODES)}")
    if iters < 1 or warmup < 0:
        raise SynthError("iters must be at least 1 and warmup non-negative")
    launcher = find_mpiexec(mpiexec)
    elements = parse_size(size) // np.dtype(dtype).itemsize
    p = schedule.topology.n_compute
    tmp = None
    if keep_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="synth-run-")
        directory = tmp.name
    else:
        directory = str(keep_dir)
        os.makedirs(directory, exist_ok=True)
        for name in os.listdir(directory):
            if name == "result.json" or name.startswith("error-"):
                os.remove(os.path.join(directory, name))
    try:
        info = prepare_run((schedule, weights), elements, dtype, directory, mode=mode, iters=iters, warmup=warmup,
                           layout=layout)
        cmd = [*launcher, "-n", str(p), sys.executable, WORKER, directory]
        run_env = dict(os.environ)
        run_env.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
        run_env.update(env or {})
        t0 = time.perf_counter()
        rc, out, err = _launch(cmd, run_env, timeout)
        launch = time.perf_counter() - t0
        problems = sorted(f for f in os.listdir(directory) if f.startswith("error-"))
        if problems:
            with open(os.path.join(directory, problems[0]), encoding="utf-8") as f:
                raise SynthError(f"MPI run failed: {f.read().strip()}")
        path = os.path.join(directory, "result.json")
        if not os.path.exists(path):
            tail = " | ".join((err or out or "").strip().splitlines()[-5:])
            raise SynthError(f"MPI run failed (mpiexec exit code {rc}): {tail or 'no output'}")
        with open(path, encoding="utf-8") as f:
            res = json.load(f)
    finally:
        if tmp is not None:
            tmp.cleanup()
    errors = []
    if res["ranks"] != p:
        errors.append(f"ran on {res['ranks']} ranks, expected {p}")
    for rank, bad_exact, first_bad, bad_mpi, mpi_bad in res["bad"]:
        if bad_exact:
            chunk = _chunk_at(info, first_bad)
            errors.append(f"rank {rank}: {bad_exact} element(s) differ from the exact sum over all iterations "
                          f"(first at element {first_bad}, chunk {chunk})")
        if bad_mpi:
            errors.append(f"rank {rank}: {bad_mpi} element(s) differ from MPI_Allreduce's result")
        if mpi_bad:
            errors.append(f"rank {rank}: MPI_Allreduce itself differs from the exact sum in {mpi_bad} element(s)")
    return RunReport(label, p, elements, str(dtype), mode, iters, warmup, info.rounds, info.chunks, info.messages,
                     info.runs, res["schedule_s"], res["allreduce_s"], errors, info.seconds, launch,
                     float(res.get("setup_s", 0.0)), res.get("mpi_library", ""), cmd[:-1] + ["DIR"])


def _chunk_at(info: Prepared, element: int) -> int:
    """The chunk holding vector position ``element``."""
    starts = info.offsets[info.order]
    k = int(np.searchsorted(starts, element, side="right") - 1)
    while k > 0 and info.sizes[info.order[k]] == 0:
        k -= 1
    return int(info.order[max(k, 0)])


def _launch(cmd, env, timeout):
    """Run the MPI job in its own process group; kill that group (only) on timeout."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        raise SynthError(f"the MPI job did not finish within {timeout:g} s and was killed") from None
    return proc.returncode, out, err


# ------------------------------------------------------------------ in-process simulation
class _FakeWorld:
    """Message matching of MPI (per source, tag, in posting order) inside one process."""

    def __init__(self, seed=None):
        self.mail = defaultdict(deque)
        self.posted = defaultdict(deque)
        self.rng = None if seed is None else np.random.default_rng(seed)
        self.force = False

    def pump(self, key):
        if self.rng is not None and not self.force and self.rng.random() < 0.5:
            return  # delivery delayed: exercises other interleavings
        mail, posted = self.mail[key], self.posted[key]
        while mail and posted:
            data, req = mail.popleft(), posted.popleft()
            if data.size != req.buf.size:
                raise ScheduleError(f"message {key}: {data.size} elements sent, {req.buf.size} expected")
            req.buf[...] = data
            req.done = True


class _FakeRequest:
    def __init__(self, world=None, key=None, buf=None):
        self.world, self.key, self.buf = world, key, buf
        self.done = world is None

    def test(self):
        if not self.done:
            self.world.pump(self.key)
        return self.done


class _FakeComm:
    def __init__(self, world, rank):
        self.world, self.rank = world, rank

    def Isend(self, buf, dest, tag):
        self.world.mail[(self.rank, dest, tag)].append(np.array(buf, copy=True))
        self.world.pump((self.rank, dest, tag))
        return _FakeRequest()

    def Irecv(self, buf, source, tag):
        req = _FakeRequest(self.world, (source, self.rank, tag), buf)
        self.world.posted[req.key].append(req)
        self.world.pump(req.key)
        return req


def simulate_run(source, elements: int = 1024, dtype: str = "float64", mode: str = "rounds", *,
                 layout: str = "greedy", seed=None, return_outputs: bool = False):
    """Run every rank's plan in this process over a fake communicator; ``True`` if all end with the exact sum.

    The ranks advance in turns; a rank blocked on its messages yields to the others, so a
    plan that would deadlock under MPI raises :class:`~synth.errors.ScheduleError` here.
    With ``seed``, deliveries are randomly delayed and the turn order shuffled, which
    exercises other interleavings (what ``deps`` mode must be robust to).  With
    ``return_outputs`` the per-rank result vectors are returned instead.
    """
    schedule, weights, _ = load_schedule(source)
    _check_dtype(dtype)
    plan = build_plan(schedule, layout)
    sizes = chunk_elements(weights, int(elements))
    plans = rank_plans(plan, sizes)
    p = plan.n_ranks
    world = _FakeWorld(seed)
    rng = np.random.default_rng(seed) if seed is not None else None
    engines = [worker.RankEngine(plans[r], elements, dtype) for r in range(p)]
    progs = []
    for r in range(p):
        x = worker.input_vector(r, elements, dtype)
        prog = (engines[r].rounds_program if mode == "rounds" else engines[r].deps_program)(_FakeComm(world, r), x)
        progs.append(prog)
    waits = [None] * p
    results = [None] * p
    for r in range(p):
        waits[r] = _advance(progs[r], None, results, r)
    while any(w is not None for w in waits):
        moved = False
        turn = rng.permutation(p) if rng is not None else range(p)
        for r in turn:
            if waits[r] is None:
                continue
            kind, reqs = waits[r]
            if kind == "all":
                if all(q.test() for q in reqs):
                    waits[r] = _advance(progs[r], None, results, r)
                    moved = True
            else:
                idx = [j for j, q in enumerate(reqs) if q.test()]
                if idx:
                    waits[r] = _advance(progs[r], idx, results, r)
                    moved = True
        if moved:
            world.force = False
        elif not world.force:
            world.force = True  # deliver everything deliverable before calling it a deadlock
        else:
            stuck = [r for r in range(p) if waits[r] is not None]
            raise ScheduleError(f"deadlock: ranks {stuck[:8]} wait for messages that never come")
    if return_outputs:
        return results
    want = worker.expected_sum(p, elements, dtype)
    return all(np.array_equal(out, want) for out in results)


def _advance(prog, value, results, r):
    try:
        return prog.send(value)  # send(None) also starts a fresh generator
    except StopIteration as stop:
        results[r] = np.array(stop.value, copy=True)
        return None
