"""The loopback TCP proxy: forwards, delays, resets, partitions one client process and heals."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from kconform.conformance.probe.ports import free_ports
from kconform.conformance.probe.proxy import Proxy, owner_pid


@pytest.fixture
def echo() -> Iterator[int]:
    """An echo server on 127.0.0.1; yields its port."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    srv.settimeout(0.1)
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        conn.settimeout(0.1)
        while not stop.is_set():
            try:
                data = conn.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            conn.sendall(data)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield srv.getsockname()[1]
    stop.set()
    srv.close()


def _roundtrip(port: int, payload: bytes = b"ping", timeout: float = 2.0) -> tuple[bytes, float]:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        t = time.monotonic()
        s.sendall(payload)
        return s.recv(4096), time.monotonic() - t


def test_forwards_and_delays(echo: int) -> None:
    (port,) = free_ports(1)
    proxy = Proxy(port, echo)
    try:
        data, _fast = _roundtrip(port)
        assert data == b"ping"
        proxy.delay(150)
        data, slow = _roundtrip(port)
        assert data == b"ping" and slow >= 0.25  # one delay each way
        proxy.delay(0)
        assert _roundtrip(port)[1] < slow
    finally:
        proxy.close()


def test_reset_cuts_open_connections(echo: int) -> None:
    (port,) = free_ports(1)
    proxy = Proxy(port, echo)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2.0) as s:
            s.sendall(b"a")
            assert s.recv(10) == b"a"
            assert proxy.reset() == 1
            with pytest.raises((ConnectionResetError, BrokenPipeError, TimeoutError)):
                s.sendall(b"b")
                if not s.recv(10):  # an orderly close would be a near miss: we want an RST
                    raise AssertionError("closed without a reset")
    finally:
        proxy.close()


def test_partition_of_one_process_and_heal(echo: int) -> None:
    """Partitioning another pid leaves us connected; partitioning ours holds our bytes until heal."""
    (port,) = free_ports(1)
    me = os.getpid()
    proxy = Proxy(port, echo)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2.0) as s:
            s.sendall(b"x")
            assert s.recv(10) == b"x"
            assert owner_pid(s.getsockname()[1], [me]) == me
            proxy.partition([me + 1_000_000])  # someone else: near miss, still flows
            s.sendall(b"y")
            assert s.recv(10) == b"y"
            proxy.partition([me])
            s.settimeout(0.6)
            s.sendall(b"z")
            with pytest.raises(TimeoutError):
                s.recv(10)
            proxy.heal()
            s.settimeout(2.0)
            assert s.recv(10) == b"z"  # held, not lost: like TCP retransmitting across a partition
    finally:
        proxy.close()
