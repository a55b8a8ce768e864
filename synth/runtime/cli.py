"""Moved: the ``synth run`` command lives in :mod:`synth.cli.run`, the msccl-xml export options in
:mod:`synth.cli.export`.  This module re-exports them under the old path."""

from synth.cli.export import add_msccl_export_arguments, export_msccl_from_args
from synth.cli.run import add_parser as add_run_command
from synth.cli.run import cmd_run

__all__ = ["add_run_command", "cmd_run", "add_msccl_export_arguments", "export_msccl_from_args"]
