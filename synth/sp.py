"""Moved to synth.schedule.sp; kept so old imports work."""

from synth.schedule.sp import bfs_parents, sp_allreduce

__all__ = ["bfs_parents", "sp_allreduce"]
