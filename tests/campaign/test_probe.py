"""``--cluster tcp://HOST:PORT`` where no Dask scheduler answers: one line and exit 2 within the connect
timeout, whatever the peer does (says nothing, speaks HTTP, sends garbage or a length that asks for
gigabytes), and no store is written.  Servers listen on 127.0.0.1 only, in threads with bounded loops.
"""

import contextlib
import json
import socket
import struct
import threading
import time

import pytest

import synth.campaign.client as client
from synth.campaign.client import probe
from synth.cli import main
from synth.errors import CampaignError

SILENT, HTTP, SHORT, CUT, HUGE, CLOSE, NOT_MSGPACK = "silent", "http", "short", "cut", "huge", "close", "not-msgpack"
REPLIES = {
    HTTP: b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    SHORT: b"\x05\x00\x00\x00\x00\x00\x00\x00abcde",
    CUT: struct.pack("<Q", 40) + b"abc",
    HUGE: struct.pack("<Q", 2_500_000_000),
    CLOSE: b"",
    NOT_MSGPACK: struct.pack("<QQQ", 24, 1, 8) + b"\xc1" * 8,
}


class Peer:
    """A TCP server on 127.0.0.1 that answers every connection with ``mode``, until stopped (at most 60 s)."""

    def __init__(self, mode):
        self.mode, self.stop = mode, threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.address = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        held, end = [], time.monotonic() + 60
        while not self.stop.is_set() and time.monotonic() < end:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            if self.mode == SILENT:
                held.append(conn)  # accepted, never answered
                continue
            with conn:
                conn.settimeout(1.0)  # hear the client out first (a web server answers only then)
                with contextlib.suppress(OSError):
                    conn.recv(1 << 16)
                conn.sendall(REPLIES[self.mode])
                if self.mode != CLOSE:
                    time.sleep(0.2)
        for conn in held:
            conn.close()
        self.sock.close()

    def close(self):
        self.stop.set()
        self.thread.join(timeout=5)


@pytest.fixture
def peer(request):
    server = Peer(request.param)
    yield server
    server.close()


@pytest.mark.parametrize("peer, words", [
    (SILENT, "accepted the connection but sent nothing within 1 s"),
    (HTTP, "is not a Dask scheduler: it speaks HTTP"),
    (SHORT, "is not a Dask scheduler: its first message claims 5 bytes"),
    (CUT, "is not a Dask scheduler: it closed the connection after 3 byte"),
    (HUGE, "is not a Dask scheduler: its first message claims 2,500,000,000 bytes"),
    (CLOSE, "is not a Dask scheduler: it closed the connection without a word"),
    (NOT_MSGPACK, "is not a Dask scheduler: its first message is not a Dask handshake"),
], indirect=["peer"])
def test_a_peer_that_is_not_a_scheduler_is_named_so_within_the_timeout(peer, words):
    start = time.monotonic()
    with pytest.raises(CampaignError, match=words):
        probe(peer.address, timeout=1.0)
    assert time.monotonic() - start < 3


def test_nothing_listening_is_cannot_reach():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(CampaignError, match="cannot reach the Dask scheduler"):
        probe(f"tcp://127.0.0.1:{port}", timeout=1.0)


@pytest.mark.parametrize("peer", [SILENT, HTTP, SHORT], indirect=True)
def test_campaign_run_against_it_is_one_line_and_exit_2_and_writes_no_store(peer, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(client, "CONNECT_TIMEOUT", 1.0)
    monkeypatch.setattr(probe, "__defaults__", (1.0,))
    (tmp_path / "c.json").write_text(json.dumps({"tasks": [["info", "--torus", "4x4"]]}))
    start = time.monotonic()
    assert main(["campaign", "run", "c.json", "--cluster", peer.address]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"synth: error: {peer.address}") and err.count("\n") == 1, err
    assert time.monotonic() - start < 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json"]


@pytest.mark.parametrize("peer", [SILENT], indirect=True)
def test_tls_without_certificates_is_one_line(peer, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.json").write_text(json.dumps({"tasks": [["info", "--torus", "4x4"]]}))
    address = peer.address.replace("tcp://", "tls://")
    assert main(["campaign", "run", "c.json", "--cluster", address]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"synth: error: cannot connect to the Dask scheduler at {address}") and err.count("\n") == 1
