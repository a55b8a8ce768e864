"""Atomic file writes and guarded JSON reads."""

from __future__ import annotations

import json
import os
import sys
import tempfile

from synth.errors import FileFormatError

__all__ = ["write_atomic", "check_writable", "read_json"]


def write_atomic(path, lines) -> None:
    """Write ``lines`` (a string or an iterable of strings) to ``path`` via a temp file and rename.

    A reader never sees a half-written file, and a failure leaves any old file in place.
    ``path`` ``"-"`` writes to standard output instead (the CLI's ``--out -``).

    The temp file sits in a fresh hidden folder beside the target (``.NAME.tmp-XXXXXXXX/NAME``),
    removed after the rename.  A folder, not a hidden file: the MSCCL runtimes
    (msccl-executor-nccl, RCCL, the msccl scheduler) load every regular file and symlink of
    ``MSCCL_ALGO_DIR``, hidden or not and whatever its suffix, and skip only folders, so even a
    write killed by SIGKILL leaves nothing there that a runtime would try to parse.

    Raises
    ------
    FileFormatError
        One line naming ``path`` and the reason, when the folder is missing or not writable,
        ``path`` is a folder, or the disk fails (e.g. full).
    """
    path = os.fspath(path)
    if path == "-":
        _write_lines(sys.stdout, lines)
        sys.stdout.flush()
        return
    check_writable(path)
    folder = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    try:
        tmp_dir = tempfile.mkdtemp(prefix=f".{name[:100]}.tmp-", dir=folder)
    except OSError as exc:
        raise FileFormatError(f"cannot write {path}: {_reason(exc)}") from None
    tmp = os.path.join(tmp_dir, name)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask gives the usual permissions
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            _write_lines(f, lines)
        os.replace(tmp, path)
    except OSError as exc:
        raise FileFormatError(f"cannot write {path}: {_reason(exc)}") from None
    finally:  # also on KeyboardInterrupt (and SIGTERM, which the CLI turns into one)
        for remove, item in ((os.unlink, tmp), (os.rmdir, tmp_dir)):
            try:
                remove(item)
            except OSError:
                pass


def check_writable(path) -> None:
    """Raise :class:`FileFormatError` now if :func:`write_atomic` could not write ``path`` (``"-"`` always can).

    Lets a command refuse a bad ``--out`` before it spends minutes computing what it would write.
    """
    path = os.fspath(path)
    if path == "-":
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileFormatError(f"cannot write {path}: folder {folder} does not exist")
    if os.path.isdir(path):
        raise FileFormatError(f"cannot write {path}: it is a folder")
    try:  # create what write_atomic will: the real test (os.access says yes to root on a read-only mount)
        os.rmdir(tempfile.mkdtemp(prefix=".synth-probe-", dir=folder))
    except OSError as exc:
        raise FileFormatError(f"cannot write {path}: {_reason(exc)}") from None


def _write_lines(f, lines) -> None:
    if isinstance(lines, str):
        f.write(lines)
    else:
        for line in lines:
            f.write(line)


def _reason(exc: OSError) -> str:
    return exc.strerror or exc.__class__.__name__


def read_json(path) -> dict:
    """Read a JSON object from ``path``, turning every failure into a one-line :class:`FileFormatError`."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise FileFormatError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FileFormatError(f"{path}: cannot read ({exc.__class__.__name__})") from None
    except json.JSONDecodeError as exc:
        raise FileFormatError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg}); truncated or corrupt?") from None
    if not isinstance(data, dict):
        raise FileFormatError(f"{path}: expected a JSON object at the top level")
    return data
