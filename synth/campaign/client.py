"""Where a campaign runs: ``serial`` (in this process), ``local[:N]`` (a Dask ``LocalCluster``) or a
running Dask scheduler (``tcp://HOST:PORT``).

``local`` starts one worker process per core (processes, not threads: the solvers and SimGrid hold
the GIL), one thread each; ``local:N`` starts ``N``.  A scheduler address is tried for
:data:`CONNECT_TIMEOUT` seconds, then the campaign stops with one line.  Before Dask connects,
:func:`probe` reads the greeting a Dask scheduler sends on every connection, with its own deadline and
size caps: a peer that accepts and never answers, an HTTP server or any other service is refused with
one line instead of hanging Dask's handshake (which has no deadline) or making it allocate what a
garbage length asks for.

Examples
--------
>>> parse_cluster("local:3"), parse_cluster("serial").kind, parse_cluster("tcp://127.0.0.1:8786").address
(Cluster(kind='local', workers=3, address=''), 'serial', 'tcp://127.0.0.1:8786')
>>> parse_cluster("local:0")
Traceback (most recent call last):
...
synth.errors.CampaignError: `cluster` local:0: the worker count must be 1 to 1024
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import re
import socket
import struct
import time
from dataclasses import dataclass

from synth.errors import CampaignError

__all__ = ["Cluster", "parse_cluster", "connect", "probe", "has_dashboard", "CONNECT_TIMEOUT", "CLUSTER_HELP"]

#: seconds to reach a scheduler before giving up
CONNECT_TIMEOUT = 5.0
MAX_LOCAL_WORKERS = 1024
CLUSTER_HELP = ("where tasks run: local (a Dask LocalCluster, one worker process per core), local:N (N workers), "
                "tcp://HOST:PORT (a running Dask scheduler) or serial (this process, no Dask)")
_ADDRESS = re.compile(r"(tcp|tls)://[^\s/:]+:\d{1,5}")
#: the largest greeting a scheduler sends (about 60 bytes: compression, Python version, pickle protocol)
MAX_GREETING = 1 << 16


@dataclass(frozen=True)
class Cluster:
    """A parsed ``--cluster``: ``kind`` is ``serial``, ``local`` or ``address``."""

    kind: str
    workers: int = 0
    address: str = ""


def parse_cluster(text: str) -> Cluster:
    """Read a ``--cluster`` value (module docstring)."""
    text = str(text).strip()
    if text == "serial":
        return Cluster("serial")
    if text == "local":
        return Cluster("local", max(1, os.cpu_count() or 1))
    if text.startswith("local:"):
        try:
            n = int(text[6:])
        except ValueError:
            n = 0
        if not 1 <= n <= MAX_LOCAL_WORKERS:
            raise CampaignError(f"`cluster` {text}: the worker count must be 1 to {MAX_LOCAL_WORKERS}")
        return Cluster("local", n)
    if _ADDRESS.fullmatch(text):
        return Cluster("address", address=text)
    raise CampaignError(f"`cluster` {text[:80]!r}: write local, local:N, tcp://HOST:PORT or serial")


def has_dashboard() -> bool:
    """Whether a LocalCluster here serves a dashboard (Dask's needs bokeh)."""
    return importlib.util.find_spec("bokeh") is not None


class _NotDask(Exception):
    """What the peer sent is not a Dask greeting; the message says how."""


def _receive(sock, n: int, deadline: float) -> bytes:
    data = b""
    while len(data) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)
        piece = sock.recv(n - len(data))
        if not piece:
            raise _NotDask(f"it closed the connection after {len(data)} byte(s)" if data else
                           "it closed the connection without a word")
        data += piece
    return data


def _greeting(sock, deadline: float) -> dict:
    """Read and decode the handshake a Dask scheduler sends first: a length, a frame count, frame lengths, and
    a msgpack map with the peer's Python version and pickle protocol."""
    import msgpack  # a dependency of distributed, loaded only for an address

    head = _receive(sock, 8, deadline)
    if head.startswith(b"HTTP/"):
        raise _NotDask("it speaks HTTP (a web server; the dashboard's port?)")
    (size,) = struct.unpack("<Q", head)
    if not 16 <= size <= MAX_GREETING:
        raise _NotDask(f"its first message claims {size:,} bytes")
    body = _receive(sock, size, deadline)
    (frames,) = struct.unpack_from("<Q", body)
    if not 1 <= frames <= (size - 8) // 8:
        raise _NotDask(f"its first message claims {frames:,} frames")
    lengths = struct.unpack_from(f"<{frames}Q", body, 8)
    start = 8 * (1 + frames)
    if start + sum(lengths) != size:
        raise _NotDask("its first message's frames do not add up")
    try:
        info = msgpack.unpackb(body[start:start + lengths[0]], raw=False, strict_map_key=False)
    except Exception:  # msgpack's errors have no common base: anything it refuses is not a greeting
        raise _NotDask("its first message is not a Dask handshake") from None
    if not isinstance(info, dict) or not {"python", "pickle-protocol"} <= set(info):
        raise _NotDask("its first message is not a Dask handshake")
    return info


def _hello() -> bytes:
    """The greeting a Dask client sends first (as Dask's own ``connect`` does): one msgpack frame."""
    import sys

    import msgpack  # a dependency of distributed, loaded only for an address

    frame = msgpack.packb({"compression": None, "python": list(sys.version_info[:3]), "pickle-protocol": 5})
    body = struct.pack("<QQ", 1, len(frame)) + frame
    return struct.pack("<Q", len(body)) + body


def probe(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Check that a Dask scheduler answers at ``tcp://HOST:PORT`` within ``timeout`` seconds, reading only its
    greeting (``tls://`` is left to Dask); :class:`~synth.errors.CampaignError`, one line, otherwise."""
    scheme, _, rest = address.partition("://")
    if scheme != "tcp":
        return
    host, _, port = rest.rpartition(":")
    deadline = time.monotonic() + timeout
    where = f"the Dask scheduler at {address}"
    try:
        sock = socket.create_connection((host, int(port)), timeout=timeout)
    except (OSError, ValueError) as exc:
        reason = " ".join((exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)).split())
        raise CampaignError(f"cannot reach {where} within {timeout:g} s ({reason[:160] or 'timed out'})") from None
    try:
        with sock:
            sock.sendall(_hello())  # a web server, say, answers only once it has heard something
            _greeting(sock, deadline)
    except TimeoutError:
        raise CampaignError(f"{address} accepted the connection but sent nothing within {timeout:g} s: not a Dask "
                            f"scheduler, or one that does not answer") from None
    except _NotDask as exc:
        raise CampaignError(f"{address} is not a Dask scheduler: {exc}") from None
    except OSError as exc:
        raise CampaignError(f"{address}: the connection failed ({exc.strerror or exc.__class__.__name__}); is "
                            f"it a Dask scheduler?") from None


@contextlib.contextmanager
def connect(cluster: Cluster):
    """A Dask ``Client`` for ``cluster`` (not ``serial``), closed (and a local cluster stopped) on exit."""
    # Dask loads here, only for a campaign that uses it
    import dask
    from distributed import Client, LocalCluster

    if cluster.kind == "local":
        with LocalCluster(n_workers=cluster.workers, threads_per_worker=1, processes=True,
                          dashboard_address=":0" if has_dashboard() else None, silence_logs=logging.ERROR) as local, \
                Client(local) as client:
            yield client
        return
    probe(cluster.address)
    with dask.config.set({"distributed.comm.timeouts.connect": f"{CONNECT_TIMEOUT:g}s"}):
        try:
            client = Client(cluster.address, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise CampaignError(f"cannot reach the Dask scheduler at {cluster.address} within "
                                f"{CONNECT_TIMEOUT:g} s ({' '.join(str(exc).split())[:160]})") from None
        except (TypeError, ValueError) as exc:  # e.g. tls:// without certificates in Dask's configuration
            raise CampaignError(f"cannot connect to the Dask scheduler at {cluster.address}: "
                                f"{' '.join(str(exc).split())[:200]}") from None
    with client:
        yield client
