"""Atomic file writes and guarded JSON reads.

Reading is bounded: :func:`read_json` refuses anything that is not a regular
file (``/dev/zero``, a FIFO, a folder), reads at most ``MAX_JSON_BYTES + 1``
bytes, and parses strictly (:func:`loads_strict`): ``NaN``, ``Infinity``, floats
that overflow to infinity and integers of magnitude ``>= MAX_INT`` are errors
naming the file.  ``MAX_INT = 2**53``: every count, id, weight and size in our
formats is far below it, it is the range JSON shares with every float64-based
reader, and products of two such numbers stay far from what we check against
int64 explicitly (:mod:`synth.check`).
"""

from __future__ import annotations

import json
import math
import os
import stat
import sys
import tempfile

from synth.errors import FileFormatError

__all__ = ["write_atomic", "check_writable", "read_json", "loads_strict", "open_regular", "read_capped", "read_line",
           "MAX_JSON_BYTES", "MAX_INT"]

MAX_JSON_BYTES = 64 << 20  # 64 MiB: 200x the largest certificate in instances/ (64x64 is 0.34 MB)
MAX_INT = 1 << 53          # |integers| in files must stay below this (see the module docstring)


def write_atomic(path, lines) -> None:
    """Write ``lines`` (a string, an iterable of strings, or ``bytes`` written as they are) to ``path``
    via a temp file and rename.

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
        out = sys.stdout.buffer if isinstance(lines, bytes) else sys.stdout
        _write_lines(out, lines)
        out.flush()
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
        with (os.fdopen(fd, "wb") if isinstance(lines, bytes) else
              os.fdopen(fd, "w", encoding="utf-8", newline="\n")) as f:
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
    if isinstance(lines, (str, bytes)):
        f.write(lines)
    else:
        for line in lines:
            f.write(line)


def _reason(exc: OSError) -> str:
    return exc.strerror or exc.__class__.__name__


class _Refused(ValueError):
    """A value json parsed but our formats never hold (NaN, Infinity, a huge integer)."""


def _constant(name):
    raise _Refused(f"{name} is not a number synth accepts")


def _int(text):
    if len(text.lstrip("-")) > 16 or abs(int(text)) >= MAX_INT:   # 2**53 has 16 digits: no huge int() parse
        raise _Refused(f"integer {text[:20]}{'...' if len(text) > 20 else ''} is out of range "
                       f"(|x| must be below 2**53)")
    return int(text)


def _float(text):
    x = float(text)
    if not math.isfinite(x):
        raise _Refused(f"number {text[:20]} overflows to infinity")
    return x


def loads_strict(text: str, where: str = "input"):
    """``json.loads`` that refuses NaN, Infinity and integers of magnitude ``>= MAX_INT``.

    Raises
    ------
    FileFormatError
        Naming ``where`` and what is wrong.

    Examples
    --------
    >>> loads_strict('{"a": [1, 2.5]}')
    {'a': [1, 2.5]}
    >>> loads_strict('{"a": NaN}', "c.json")
    Traceback (most recent call last):
    ...
    synth.errors.FileFormatError: c.json: NaN is not a number synth accepts
    """
    try:
        return json.loads(text, parse_constant=_constant, parse_int=_int, parse_float=_float)
    except _Refused as exc:
        raise FileFormatError(f"{where}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise FileFormatError(f"{where}: not valid JSON (line {exc.lineno}: {exc.msg}); "
                              "truncated or corrupt?") from None
    except RecursionError:
        raise FileFormatError(f"{where}: JSON nested too deeply") from None


def open_regular(path, mode: str = "rb"):
    """Open ``path`` for reading if it is a regular file; one-line :class:`FileFormatError` otherwise.

    The check is made on the open descriptor (``fstat``), so a file swapped in between cannot slip by.
    """
    try:
        f = open(path, mode, **({} if "b" in mode else {"encoding": "utf-8"}))
    except FileNotFoundError:
        raise FileFormatError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise FileFormatError(f"{path}: is a folder, not a file") from None
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot open ({exc.strerror or exc.__class__.__name__})") from None
    try:
        regular = stat.S_ISREG(os.fstat(f.fileno()).st_mode)
    except OSError:
        regular = False
    if not regular:
        f.close()
        raise FileFormatError(f"{path}: not a regular file")
    return f


_PIECE = 1 << 20  # read in pieces: f.read(n) and f.readline(n) allocate n bytes up front


def read_capped(path, cap: int = MAX_JSON_BYTES) -> bytes:
    """The bytes of the regular file ``path``, refusing files over ``cap`` bytes after reading at most ``cap + 1``."""
    with open_regular(path) as f:
        if os.fstat(f.fileno()).st_size > cap:
            raise FileFormatError(f"{path}: larger than {cap >> 20} MiB, the limit for this kind of file")
        try:
            data = _read_pieces(f.read, cap)
        except OSError as exc:
            raise FileFormatError(f"{path}: cannot read ({exc.strerror or exc.__class__.__name__})") from None
    if len(data) > cap:
        raise FileFormatError(f"{path}: larger than {cap >> 20} MiB, the limit for this kind of file")
    return data


def read_line(f, cap: int) -> bytes:
    """The next line of the binary file ``f``, at most ``cap + 1`` bytes (longer lines come back cut)."""
    return _read_pieces(f.readline, cap, line=True)


def _read_pieces(read, cap: int, line: bool = False) -> bytes:
    """At most ``cap + 1`` bytes from ``read`` (``f.read`` or ``f.readline``), a piece at a time.

    With ``line`` the read stops after a piece that ends a line.
    """
    pieces, size = [], 0
    while size <= cap:
        piece = read(min(_PIECE, cap + 1 - size))
        if not piece:
            break
        pieces.append(piece)
        size += len(piece)
        if line and piece.endswith(b"\n"):
            break
    return b"".join(pieces)


def read_json(path, cap: int = MAX_JSON_BYTES) -> dict:
    """Read a JSON object from ``path``, turning every failure into a one-line :class:`FileFormatError`.

    At most ``cap + 1`` bytes are read, only from a regular file; parsing is strict (:func:`loads_strict`).
    """
    data = read_capped(path, cap)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise FileFormatError(f"{path}: not UTF-8 text; truncated or corrupt?") from None
    data = loads_strict(text, str(path))
    if not isinstance(data, dict):
        raise FileFormatError(f"{path}: expected a JSON object at the top level")
    return data
