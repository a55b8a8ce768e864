"""synth: provably optimal allreduce schedules on symmetric networks."""
__version__ = "0.1.0"
