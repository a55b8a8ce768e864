"""Moved to :mod:`synth.runtime.mpi._worker` (``mpiexec`` runs that file); kept so old imports work."""

from synth.runtime.mpi._worker import PLAN_KEYS, RankEngine, drive_mpi, expected_sum, input_vector, load_plan, main

__all__ = ["PLAN_KEYS", "RankEngine", "drive_mpi", "expected_sum", "input_vector", "load_plan", "main"]
