"""Atomic file writes and guarded JSON reads.

Reading is bounded: :func:`read_json` refuses anything that is not a regular
file (``/dev/zero``, a FIFO, a folder), reads at most ``MAX_JSON_BYTES + 1``
bytes, and parses strictly (:func:`loads_strict`): ``NaN``, ``Infinity``, floats
that overflow to infinity and integers of magnitude ``>= MAX_INT`` are errors
naming the file.  ``MAX_INT = 2**53``: every count, id, weight and size in our
formats is far below it, it is the range JSON shares with every float64-based
reader, and products of two such numbers stay far from what we check against
int64 explicitly (:mod:`synth.check`).

A certificate may be stored gzip-compressed (:func:`write_atomic` with ``compress``, by the
``.gz`` suffix of its name); its readers pass ``gunzip`` and the file's limit then holds for the
bytes it decompresses to, read through a bounded decompressor, so a small file that would inflate
past the limit (a zip bomb) is refused with one line before more than the limit is held.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
import tempfile
import time
import zlib

from synth.errors import FileFormatError

__all__ = ["write_atomic", "check_writable", "read_json", "loads_strict", "open_regular", "read_capped", "read_line",
           "read_text", "printable", "gunzip_capped", "GZIP_MAGIC", "LIMITS", "MAX_JSON_BYTES", "MAX_INT"]

#: The size limit of each kind of file, in bytes: every reader of a kind takes a file up to its limit, and
#: every writer refuses (one line, nothing written) a file above it, so synth never writes what it cannot read.
LIMITS = {
    "json": 64 << 20,          # topology, campaign, cache and result files: 200x the largest certificate in instances/
    "certificate": 256 << 20,  # decompressed; a damaged 16x16x16 (20.6 M transmissions) is 109 MB in the tree form
    "explicit": 1 << 30,       # about 10 M transmissions (the 8x8 export of docs/usage.md is 0.5 MB)
    "explicit-line": 1 << 20,  # one transmission of an explicit file: a route of 100,000 vertices still fits
    "msccl-xml": 1 << 30,      # an MSCCL algorithm: exports of big schedules are large
}
MAX_JSON_BYTES = LIMITS["json"]
MAX_INT = 1 << 53          # |integers| in files must stay below this (see the module docstring)
GZIP_MAGIC = b"\x1f\x8b"    # the first bytes of a gzip stream (RFC 1952)


def write_atomic(path, lines, kind: str | None = None, compress: bool = False) -> None:
    """Write ``lines`` (a string, an iterable of strings, or ``bytes`` written as they are) to ``path``
    via a temp file and rename.

    ``kind`` (a key of :data:`LIMITS`): a file that would be larger than its limit is refused, and
    nothing is written (the temp file goes; on standard output, nothing is printed).
    ``compress``: the file is the gzip stream of the text (no name, time 0: the same text gives the
    same bytes); the limit holds for the text, which is what a reader decompresses it back to.

    A reader never sees a half-written file, and a failure leaves any old file in place.
    ``path`` ``"-"`` writes to standard output instead (the CLI's ``--out -``).

    The temp file sits in a fresh hidden folder beside the target (``.NAME.tmp-PID-XXXXXXXX/NAME``),
    removed after the rename.  A write killed by SIGKILL cannot remove its folder: the next write
    of the same target removes such folders whose process is gone and which are older than
    :data:`STALE_SECONDS` (:func:`_remove_stale`).  A folder, not a hidden file: the MSCCL runtimes
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
    cap = None if kind is None else LIMITS[kind]
    if compress:
        lines = _gzip_bytes(lines, cap, path, kind)
        cap = None   # counted before compression, by _gzip_bytes
    if path == "-":
        out = sys.stdout.buffer if isinstance(lines, bytes) else sys.stdout
        if cap is not None:   # held until it is known to fit: a refusal prints nothing
            held = []
            _write_lines(_Counter(held.append, cap, path, kind), lines)
            lines = b"".join(held) if isinstance(lines, bytes) else "".join(held)
        _write_lines(out, lines)
        out.flush()
        return
    check_writable(path)
    folder = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    prefix = f".{name[:100]}.tmp-"
    _remove_stale(folder, prefix, name)
    try:
        tmp_dir = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=folder)
    except OSError as exc:
        raise FileFormatError(f"cannot write {printable(path)}: {_reason(exc)}") from None
    tmp = os.path.join(tmp_dir, name)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask gives the usual permissions
        with (os.fdopen(fd, "wb") if isinstance(lines, bytes) else
              os.fdopen(fd, "w", encoding="utf-8", newline="\n")) as f:
            _write_lines(f if cap is None else _Counter(f.write, cap, path, kind), lines)
        os.replace(tmp, path)
    except OSError as exc:
        raise FileFormatError(f"cannot write {printable(path)}: {_reason(exc)}") from None
    finally:  # also on KeyboardInterrupt (and SIGTERM, which the CLI turns into one)
        for remove, item in ((os.unlink, tmp), (os.rmdir, tmp_dir)):
            try:
                remove(item)
            except OSError:
                pass


#: a temp folder of a dead writer is removed once it is this old (a live write takes far less)
STALE_SECONDS = 60.0
_LEGACY_STALE_SECONDS = 3600.0   # folders named before the pid was in the name: no owner to ask


def _remove_stale(folder: str, prefix: str, name: str) -> None:
    """Remove the temp folders ``prefix*`` in ``folder`` left by writers that died (SIGKILL, power loss).

    A folder is stale when the pid in its name is no running process and it is older than
    :data:`STALE_SECONDS`; only the one file a write puts there (``name``) is removed, then the
    folder (a folder holding anything else stays).  Best effort: every failure is ignored.
    """
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix)]
    except OSError:
        return
    now = time.time()
    for n in names:
        pid_text = n[len(prefix):].partition("-")
        alive = pid_text[0].isdigit() and pid_text[1] and _alive(int(pid_text[0]))
        limit = STALE_SECONDS if pid_text[0].isdigit() and pid_text[1] else _LEGACY_STALE_SECONDS
        tmp_dir = os.path.join(folder, n)
        try:
            st = os.lstat(tmp_dir)
            if alive or not stat.S_ISDIR(st.st_mode) or now - st.st_mtime < limit:
                continue
            try:
                os.unlink(os.path.join(tmp_dir, name))
            except FileNotFoundError:
                pass
            os.rmdir(tmp_dir)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True     # someone else's process (EPERM), or a number we cannot ask about: leave it
    return True


def check_writable(path) -> None:
    """Raise :class:`FileFormatError` now if :func:`write_atomic` could not write ``path`` (``"-"`` always can).

    Lets a command refuse a bad ``--out`` before it spends minutes computing what it would write.
    """
    path = os.fspath(path)
    if path == "-":
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileFormatError(f"cannot write {printable(path)}: folder {printable(folder)} does not exist")
    if os.path.isdir(path):
        raise FileFormatError(f"cannot write {printable(path)}: it is a folder")
    try:  # create what write_atomic will: the real test (os.access says yes to root on a read-only mount)
        os.rmdir(tempfile.mkdtemp(prefix=".synth-probe-", dir=folder))
    except OSError as exc:
        raise FileFormatError(f"cannot write {printable(path)}: {_reason(exc)}") from None


class _Counter:
    """A ``write`` that counts the bytes it passes on and refuses (:class:`FileFormatError`) past ``cap``."""

    def __init__(self, write, cap, path, kind):
        self._write, self.cap, self.path, self.kind, self.size = write, cap, path, kind, 0

    def write(self, text) -> None:
        self.size += len(text) if isinstance(text, bytes) or text.isascii() else len(text.encode("utf-8"))
        if self.size > self.cap:
            raise FileFormatError(f"cannot write {printable(self.path)}: it would be larger than "
                                  f"{_cap_text(self.cap)}, the limit for a {self.kind} file (synth could not read it "
                                  "back); nothing written")
        self._write(text)


def _gzip_bytes(lines, cap, path, kind) -> bytes:
    """The gzip stream (header time 0, no name) of ``lines``, refusing text over ``cap`` as :class:`_Counter` does."""
    gz = zlib.compressobj(6, zlib.DEFLATED, 31)   # wbits 31: a gzip header and trailer around the deflate stream
    pieces = []

    def put(text) -> None:
        pieces.append(gz.compress(text if isinstance(text, bytes) else text.encode("utf-8")))

    _write_lines(_Counter(put, math.inf if cap is None else cap, path, kind), lines)
    pieces.append(gz.flush())
    return b"".join(pieces)


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


def _no_long_digits(text: str) -> bool:
    """Whether ``text`` holds no run of 16 or more digits that is not the fraction of a number (after ``.``).

    Every digit mapped to ``0`` in bulk, then one substring search: a regex would try every position (seconds
    on a 100 MB certificate); only a text that has such a run somewhere is searched exactly.
    """
    flat = text.encode("utf-8", "surrogatepass").translate(_DIGITS_TO_ZERO)
    return b"0" * 16 not in flat or _LONG_DIGITS.search(text) is None


_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGITS = re.compile(r"(?<![.\d])\d{16}")


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
    # no run of 16 digits anywhere (outside a fraction): every integer is below 10**15 < MAX_INT, so json's own
    # integer parser may read them, several times faster than a Python hook per integer (27 M in a pod's
    # certificate); otherwise each integer is range-checked by the hook
    parse_int = int if _no_long_digits(text) else _int
    try:
        return json.loads(text, parse_constant=_constant, parse_int=parse_int, parse_float=_float)
    except _Refused as exc:
        raise FileFormatError(f"{where}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise FileFormatError(f"{where}: not valid JSON (line {exc.lineno}: {exc.msg}); "
                              "truncated or corrupt?") from None
    except RecursionError:
        raise FileFormatError(f"{where}: JSON nested too deeply") from None


def open_regular(path, mode: str = "rb"):
    """Open ``path`` for reading if it is a regular file; one-line :class:`FileFormatError` otherwise.

    The one way synth opens a file to read.  The open never blocks (``O_NONBLOCK``: a FIFO
    with no writer would hang a plain ``open()`` before anything could refuse it), the type
    is checked on the open descriptor (``fstat``, so a file swapped in between cannot slip
    by, and a symlink is judged by its target: one to a regular file is fine, one to
    ``/dev/zero`` is refused), and only then is ``O_NONBLOCK`` cleared.

    Examples
    --------
    >>> import os, tempfile
    >>> fifo = os.path.join(tempfile.mkdtemp(), "f.json")
    >>> os.mkfifo(fifo)
    >>> open_regular(fifo)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    synth.errors.FileFormatError: .../f.json: not a regular file (a FIFO)
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"expected a file path (str or os.PathLike), got {type(path).__name__}")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise FileFormatError(f"{printable(path)}: no such file") from None
    except IsADirectoryError:
        raise FileFormatError(f"{printable(path)}: is a folder, not a file") from None
    except OSError as exc:
        raise FileFormatError(f"{printable(path)}: cannot open ({_reason(exc)})") from None
    try:
        kind = os.fstat(fd).st_mode
        if not stat.S_ISREG(kind):
            raise FileFormatError(f"{printable(path)}: " + ("is a folder, not a file" if stat.S_ISDIR(kind) else
                                                            f"not a regular file ({_kind(kind)})"))
        if hasattr(os, "O_NONBLOCK"):
            import fcntl  # POSIX only, like O_NONBLOCK

            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"}))
    except OSError as exc:
        os.close(fd)
        raise FileFormatError(f"{printable(path)}: cannot open ({_reason(exc)})") from None
    except BaseException:
        os.close(fd)
        raise


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a plain file"


def printable(text) -> str:
    r"""``text`` (a user-supplied name or path) safe to print on one line: control characters escaped.

    Every message that quotes a name the user gave (a topology name, a path) goes through it,
    so a name with a newline or an escape sequence cannot forge a line or drive the terminal.

    >>> print(printable("ring" + chr(10) + chr(27) + "[31mred"), printable("fine name"))
    ring\n\x1b[31mred fine name
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", "backslashreplace")
    text = os.fspath(text) if isinstance(text, os.PathLike) else str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


_PIECE = 1 << 20  # read in pieces: f.read(n) and f.readline(n) allocate n bytes up front


def read_capped(path, cap: int = MAX_JSON_BYTES, gunzip: bool = False) -> bytes:
    """The bytes of the regular file ``path``, refusing files over ``cap`` bytes after reading at most ``cap + 1``.

    ``gunzip``: a file that starts with :data:`GZIP_MAGIC` is decompressed (:func:`gunzip_capped`), and
    ``cap`` then bounds the decompressed bytes too.
    """
    with open_regular(path) as f:
        if os.fstat(f.fileno()).st_size > cap:
            raise FileFormatError(f"{printable(path)}: larger than {_cap_text(cap)}, the limit for this kind of file")
        try:
            data = _read_pieces(f.read, cap)
        except OSError as exc:
            raise FileFormatError(f"{printable(path)}: cannot read ({_reason(exc)})") from None
    if len(data) > cap:
        raise FileFormatError(f"{printable(path)}: larger than {_cap_text(cap)}, the limit for this kind of file")
    return gunzip_capped(data, cap, path) if gunzip and data.startswith(GZIP_MAGIC) else data


def gunzip_capped(data: bytes, cap: int, where="input") -> bytes:
    """The bytes the gzip stream ``data`` decompresses to, refusing more than ``cap`` before holding more.

    One gzip member, nothing after it; a stream that is corrupt, cut short or that inflates past
    ``cap`` (a zip bomb) is one :class:`FileFormatError` naming ``where``.

    Examples
    --------
    >>> import gzip
    >>> gunzip_capped(gzip.compress(b"{}"), 10)
    b'{}'
    >>> gunzip_capped(gzip.compress(bytes(10_000)), 1000, "bomb.json.gz")
    Traceback (most recent call last):
    ...
    synth.errors.FileFormatError: bomb.json.gz: decompresses to more than 1,000 bytes, the limit for this kind of file
    """
    where = printable(where)
    d = zlib.decompressobj(31)
    try:
        out = d.decompress(data, cap + 1)
    except zlib.error as exc:
        raise FileFormatError(f"{where}: not a valid gzip stream ({exc}); truncated or corrupt?") from None
    if len(out) > cap or d.unconsumed_tail:
        raise FileFormatError(f"{where}: decompresses to more than {_cap_text(cap)}, the limit for this kind of file")
    if not d.eof:
        raise FileFormatError(f"{where}: the gzip stream is cut short; truncated or corrupt?")
    if d.unused_data:
        raise FileFormatError(f"{where}: data after the end of the gzip stream; corrupt?")
    return out


def _cap_text(cap: int) -> str:
    return f"{cap >> 20} MiB" if cap >= 1 << 20 else f"{cap:,} bytes"


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


def read_text(path, cap: int = MAX_JSON_BYTES, gunzip: bool = False) -> str:
    """The UTF-8 text of the regular file ``path``, read as :func:`read_capped` reads (one-line errors)."""
    try:
        return read_capped(path, cap, gunzip).decode("utf-8")
    except UnicodeDecodeError:
        raise FileFormatError(f"{printable(path)}: not UTF-8 text; truncated or corrupt?") from None


def read_json(path, cap: int = MAX_JSON_BYTES, gunzip: bool = False) -> dict:
    """Read a JSON object from ``path``, turning every failure into a one-line :class:`FileFormatError`.

    At most ``cap + 1`` bytes are read, only from a regular file; parsing is strict (:func:`loads_strict`);
    ``gunzip`` as in :func:`read_capped`.
    """
    data = loads_strict(read_text(path, cap, gunzip), printable(path))
    if not isinstance(data, dict):
        raise FileFormatError(f"{printable(path)}: expected a JSON object at the top level")
    return data
