"""Moved to synth.schedule.exchange; kept so old imports work."""

from synth.schedule.exchange import bfs_forest_parents, exchange_allreduce, exchange_roots

__all__ = ["bfs_forest_parents", "exchange_allreduce", "exchange_roots"]
