"""Atomic file writes and guarded JSON reads."""

from __future__ import annotations

import json
import os
import tempfile

from synth.errors import FileFormatError

__all__ = ["write_atomic", "read_json"]


def write_atomic(path, lines) -> None:
    """Write ``lines`` (a string or an iterable of strings) to ``path`` via a temp file and rename.

    A reader never sees a half-written file, and a failure leaves any old file in place.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileFormatError(f"cannot write {path}: folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.basename(path), dir=folder)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual permissions
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            if isinstance(lines, str):
                f.write(lines)
            else:
                for line in lines:
                    f.write(line)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


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
