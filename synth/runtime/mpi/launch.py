"""Run a schedule on a real engine: MPI point-to-point through mpi4py, launched with ``mpiexec``.

:func:`run_schedule` packs the schedule into messages (:mod:`synth.runtime.plan`),
precomputes every rank's part in the parent (numpy, vectorized), writes one ``.npz`` per
rank into a temporary directory and launches ``mpiexec -n p python _worker.py DIR`` (the file
:data:`WORKER`, run as a script: it imports no synth).
Rank ``r`` is compute vertex ``r``.  Each rank posts non-blocking receives and sends
(unique tags per sender/receiver pair, never a blocking send) and runs the schedule either
round by round (``mode="rounds"``) or driven by dependencies (``mode="deps"``); see
:mod:`synth.runtime.mpi._worker`.  Every iteration is checked against the exact sum (the
inputs are small integers, so the sums are exact in every dtype) and against
``MPI_Allreduce`` on the same data, and both are timed (per iteration, the slowest rank).

:func:`~synth.runtime.mpi.simulate.simulate_run` executes the same per-rank plans
(:mod:`~synth.runtime.mpi.ranks`) in one process over a fake communicator: the plans can be
tested without MPI.

Examples
--------
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
from dataclasses import dataclass, field, replace

import numpy as np

from synth.units import parse_size  # the one size parser of every command
from synth.errors import OptionError, SynthError
from synth.fileio import read_capped, read_json
from synth.runtime.memory import check_host_memory, mpi_bytes
from synth.runtime.mpi import _worker as worker
from synth.runtime.mpi.ranks import check_dtype, rank_plans
from synth.runtime.plan import build_plan, load_schedule, run_chunk_sizes
from synth.runtime.report import RunReportBase, median_ms, median_s

__all__ = ["RunReport", "Prepared", "MpiRunOptions", "run_schedule", "prepare_run", "find_mpiexec", "parse_size",
           "MODES", "INSTALL_HINT", "WORKER"]

MODES = ("rounds", "deps")
INSTALL_HINT = "pip install -e '.[mpi]'  (mpi4py and the MPICH wheel)"
WORKER = os.path.abspath(worker.__file__)  # run as a file by mpiexec, not as a module: it imports no synth


def find_mpiexec(mpiexec=None) -> list:
    """The launcher command as an argument list (``mpiexec`` may carry flags, e.g. ``"mpirun --oversubscribe"``).

    Raises
    ------
    SynthError
        With the install hint, when mpi4py or the launcher is missing (an
        :class:`~synth.errors.OptionError` naming ``mpiexec`` when none was given and none is found).
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
    raise OptionError(f"mpiexec not given, and none found next to python or on PATH; install the MPI extra: "
                      f"{INSTALL_HINT}, or name the launcher with `mpiexec`")


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
    >>> from synth.topology.torus import parse_torus
    >>> from synth.baselines import build_baseline
    >>> with tempfile.TemporaryDirectory() as d:
    ...     info = prepare_run(build_baseline("ring", parse_torus("3")), 60, "float64", d)
    ...     sorted(os.listdir(d))[:2], info.ranks, info.messages
    (['meta.json', 'rank-0.npz'], 3, 24)
    """
    t0 = time.perf_counter()
    schedule, weights, _ = load_schedule(source)
    check_dtype(dtype)
    if mode not in MODES:
        raise SynthError(f"unknown mode {mode!r}; valid: {', '.join(MODES)}")
    plan = build_plan(schedule, layout)
    sizes = run_chunk_sizes(schedule, weights, int(elements))
    plans = rank_plans(plan, sizes)
    for r, arrays in enumerate(plans):
        np.savez(os.path.join(directory, f"rank-{r}.npz"), **arrays)
    meta = {"ranks": plan.n_ranks, "elements": int(elements), "dtype": str(dtype), "mode": mode,
            "iters": int(iters), "warmup": int(warmup)}
    if schedule.collective != "allreduce":  # an allreduce's plan files stay as they were
        meta["collective"] = schedule.collective
    with open(os.path.join(directory, "meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f)
    return Prepared(plan.n_ranks, int(elements), str(dtype), plan.n_rounds, plan.n_chunks, plan.n_messages,
                    plan.total_runs(), sizes, plan.offsets(sizes), plan.order, time.perf_counter() - t0)


@dataclass(kw_only=True)
class RunReport(RunReportBase):
    """What ``synth run`` measured (the shared fields: :class:`~synth.runtime.report.RunReportBase`).

    Times are seconds per iteration, each the slowest rank's (``schedule_s`` for the
    schedule, ``allreduce_s`` for ``MPI_Allreduce`` on the same data, same iterations).
    ``errors`` is empty when every rank ended every iteration with the exact sum and with
    ``MPI_Allreduce``'s result.
    """

    ranks: int
    mode: str
    runs: int
    allreduce_s: list = field(default_factory=list)
    prepare_s: float = 0.0
    launch_s: float = 0.0
    setup_s: float = 0.0
    mpi_library: str = ""
    command: list = field(default_factory=list)

    @property
    def allreduce_median_s(self) -> float:
        return median_s(self.allreduce_s)

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
        call = worker.MPI_CALLS.get(self.collective, "MPI_Allreduce")
        what = {"allreduce": "sum", "reduce-scatter": "sum of each rank's block"}.get(self.collective, "blocks")
        lines = [f"{self.label}: {'OK' if self.ok else 'WRONG RESULT'} on {self.ranks} ranks, "
                 f"{self.bytes:,} bytes ({self.elements:,} x {self.dtype}), mode {self.mode}, "
                 f"{self.iters} iterations (+{self.warmup} warm-up)",
                 f"  {self.rounds} rounds, {self.chunks} chunks, {self.messages} messages "
                 f"({self.runs} contiguous runs)"]
        if self.schedule_s:
            ratio = self.median_s / self.allreduce_median_s if self.allreduce_median_s > 0 else float("nan")
            lines.append(f"  schedule       {median_ms(self.schedule_s)} per iteration")
            lines.append(f"  {call:<13}  {median_ms(self.allreduce_s)} per iteration  (schedule / MPI = {ratio:.2f})")
        lines.append(f"  checked every iteration against the exact {what} and {call}: "
                     f"{'all equal' if self.ok else str(len(self.errors)) + ' problem(s)'}")
        for e in self.errors[:10]:
            lines.append(f"  error: {e}")
        lines.append(f"  prepare {self.prepare_s:.2f} s, mpiexec {self.launch_s:.2f} s; {self.mpi_library}")
        return "\n".join(lines)



@dataclass(frozen=True)
class MpiRunOptions:
    """How :func:`run_schedule` runs a schedule under MPI.

    Attributes
    ----------
    iters : int
        Timed iterations (after ``warmup`` untimed ones); every one is checked.
    dtype : {"float32", "float64", "int64", "int32"}
    mode : {"rounds", "deps"}
        Round-synchronous or dependency-driven execution.
    mpiexec : str, optional
        Launcher (path, or a command with flags such as ``"mpirun --oversubscribe"``);
        default: the ``mpiexec`` next to this Python (the MPICH wheel's), else on ``PATH``.
    warmup : int
    layout : str
        Chunk layout of the vector (:func:`~synth.runtime.plan.build_plan`).
    timeout : float
        Seconds before the whole MPI job is killed.
    env : dict, optional
        Extra environment variables for the ranks.
    keep_dir : str, optional
        Write the per-rank plans there (and keep them) instead of a temporary directory.

    Examples
    --------
    >>> MpiRunOptions(mode="deps").iters
    5
    """

    iters: int = 5
    dtype: str = "float32"
    mode: str = "rounds"
    mpiexec: str | None = None
    warmup: int = 1
    layout: str = "greedy"
    timeout: float = 1800.0
    env: dict | None = None
    keep_dir: str | None = None


def run_schedule(source, size="1MiB", options: MpiRunOptions | None = None, **fields) -> RunReport:
    """Execute a schedule under MPI, check it and time it next to ``MPI_Allreduce``.

    Parameters
    ----------
    source
        A certificate or explicit file path, or any object :func:`~synth.runtime.plan.load_schedule` takes.
    size : str or int
        Bytes per rank (``"1MiB"``); the vector has ``size // itemsize`` elements.
    options : MpiRunOptions, optional
        Iterations, dtype, mode, launcher, timeout, ... (default ``MpiRunOptions()``).
    **fields
        Fields of :class:`MpiRunOptions` that replace those of ``options``
        (``run_schedule(s, iters=2)`` is ``run_schedule(s, options=MpiRunOptions(iters=2))``).

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
    opts = replace(options or MpiRunOptions(), **fields)
    schedule, weights, label = load_schedule(source)
    check_dtype(opts.dtype)
    if opts.mode not in MODES:
        raise SynthError(f"unknown mode {opts.mode!r}; valid: {', '.join(MODES)}")
    if opts.iters < 1 or opts.warmup < 0:
        raise SynthError("iters must be at least 1 and warmup non-negative")
    launcher = find_mpiexec(opts.mpiexec)
    elements = parse_size(size) // np.dtype(opts.dtype).itemsize
    p = schedule.topology.n_compute
    if schedule.owner is not None:  # a reduce-scatter or allgather: p equal blocks
        elements -= elements % p
        if elements < 1:
            raise SynthError(f"size {size} holds fewer elements than the {p} ranks' blocks need")
    check_host_memory(p, elements, np.dtype(opts.dtype).itemsize, mpi_bytes, "ranks")  # before any rank starts
    info, res, launch, cmd = _run_job((schedule, weights), elements, launcher, opts)
    return RunReport(label=label, ranks=p, elements=elements, dtype=str(opts.dtype), mode=opts.mode,
                     iters=opts.iters, warmup=opts.warmup, rounds=info.rounds, chunks=info.chunks,
                     messages=info.messages, runs=info.runs, schedule_s=res["schedule_s"],
                     allreduce_s=res["allreduce_s"], errors=_result_errors(res, info, p), prepare_s=info.seconds,
                     launch_s=launch, setup_s=float(res.get("setup_s", 0.0)),
                     mpi_library=res.get("mpi_library", ""), command=cmd[:-1] + ["DIR"],
                     collective=schedule.collective)


def _run_job(source, elements, launcher, opts):
    """Write the plans into a (temporary or kept) directory and run the MPI job:
    ``(Prepared, result dict, launch seconds, command)``."""
    tmp = None
    if opts.keep_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="synth-run-")
        directory = tmp.name
    else:
        directory = str(opts.keep_dir)
        os.makedirs(directory, exist_ok=True)
        for name in os.listdir(directory):
            if name == "result.json" or name.startswith("error-"):
                os.remove(os.path.join(directory, name))
    try:
        info = prepare_run(source, elements, opts.dtype, directory, mode=opts.mode, iters=opts.iters,
                           warmup=opts.warmup, layout=opts.layout)
        cmd = [*launcher, "-n", str(info.ranks), sys.executable, WORKER, directory]
        run_env = dict(os.environ)
        run_env.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
        run_env.update(opts.env or {})
        t0 = time.perf_counter()
        rc, out, err = _launch(cmd, run_env, opts.timeout)
        launch = time.perf_counter() - t0
        problems = sorted(f for f in os.listdir(directory) if f.startswith("error-"))
        if problems:
            raise SynthError(f"MPI run failed: {_first_line(os.path.join(directory, problems[0]))}"
                             + ("" if opts.keep_dir is not None else " (`keep_dir` keeps the ranks' tracebacks)"))
        path = os.path.join(directory, "result.json")
        if not os.path.exists(path):
            tail = _last_line(err or out)
            raise SynthError(f"MPI run failed (mpiexec exit code {rc}): {tail or 'no output'}")
        res = read_json(path)
    finally:
        if tmp is not None:
            tmp.cleanup()
    return info, res, launch, cmd


def _result_errors(res, info, p):
    """What the ranks found wrong: the world size, and elements that differ from the exact result or MPI's."""
    errors = []
    call = res.get("mpi_call", "MPI_Allreduce")
    if res["ranks"] != p:
        errors.append(f"ran on {res['ranks']} ranks, expected {p}")
    for rank, bad_exact, first_bad, bad_mpi, mpi_bad in res["bad"]:
        if bad_exact:
            chunk = _chunk_at(info, first_bad)
            errors.append(f"rank {rank}: {bad_exact} element(s) differ from the exact sum over all iterations "
                          f"(first at element {first_bad}, chunk {chunk})")
        if bad_mpi:
            errors.append(f"rank {rank}: {bad_mpi} element(s) differ from {call}'s result")
        if mpi_bad:
            errors.append(f"rank {rank}: {call} itself differs from the exact result in {mpi_bad} element(s)")
    return errors


def _first_line(path) -> str:
    """The first line of a rank's error file (its message; the traceback follows it there)."""
    try:
        text = read_capped(path, 1 << 16).decode("utf-8", "replace")
    except SynthError as exc:
        return str(exc)
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "no message")


def _last_line(text) -> str:
    """The last lines of mpiexec's output that are no traceback frames or rules, joined into one."""
    frames = ("Traceback ", "=", "During handling", "The above exception")
    # a traceback's frames and source lines are indented; its last line (the exception) is not
    kept = [ln.strip() for ln in (text or "").splitlines()
            if ln.strip() and not ln[:1].isspace() and not ln.startswith(frames)]
    return " | ".join(kept[-3:])[:300]


def _chunk_at(info: Prepared, element: int) -> int:
    """The chunk holding vector position ``element``."""
    starts = info.offsets[info.order]
    k = int(np.searchsorted(starts, element, side="right") - 1)
    while k > 0 and info.sizes[info.order[k]] == 0:
        k -= 1
    return int(info.order[max(k, 0)])


def _launch(cmd, env, timeout):
    """Run the MPI job in its own process group; kill that group (only) on timeout, Ctrl-C or SIGTERM."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except (subprocess.TimeoutExpired, KeyboardInterrupt) as exc:
        # the job has its own session, so Ctrl-C at the terminal never reached it: stop it with us
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise SynthError(f"the MPI job did not finish within {timeout:g} s and was killed") from None
    return proc.returncode, out, err
