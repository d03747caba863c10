"""A TCP proxy on 127.0.0.1 between the probe's clients and one broker, with network faults.

One :class:`Proxy` listens on a loopback port that the broker advertises, and forwards every accepted
connection to the broker's real listener. Faults, all bounded by the nemesis that sets them:

- ``delay(ms)``: every forwarded chunk waits ``ms`` before it is sent on (both directions);
- ``reset()``: every open connection is closed with an RST (SO_LINGER 0), like a crashed peer;
- ``partition(pids)``: connections whose client end belongs to one of ``pids`` stop moving bytes (new
  ones are accepted and held), like packets dropped on the wire while TCP keeps retrying;
  ``heal()`` resumes them. Which OS process owns a connection is read from the kernel (psutil) when
  the partition starts, so one client can be cut from one broker while the others still reach it.

Every thread is a daemon, every blocking call has a timeout, and :meth:`Proxy.close` stops them all.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time

import psutil

LOOPBACK = "127.0.0.1"
_CHUNK = 65536
_TICK_S = 0.1


def owner_pid(peer_port: int, candidates: list[int]) -> int | None:
    """The pid among ``candidates`` that owns the loopback TCP socket bound to ``peer_port``."""
    for pid in candidates:
        try:
            conns = psutil.Process(pid).net_connections(kind="tcp4")
        except (psutil.Error, OSError):
            continue
        if any(c.laddr and c.laddr.port == peer_port for c in conns):
            return pid
    return None


def ports_of(pids: list[int]) -> set[int]:
    """The local TCP ports of every socket the processes ``pids`` hold."""
    ports: set[int] = set()
    for pid in pids:
        try:
            ports.update(c.laddr.port for c in psutil.Process(pid).net_connections(kind="tcp4") if c.laddr)
        except (psutil.Error, OSError):
            continue
    return ports


class _Conn:
    def __init__(self, client: socket.socket, server: socket.socket, peer_port: int) -> None:
        self.client, self.server, self.peer_port = client, server, peer_port
        self.blocked = False
        self.closed = threading.Event()

    def close(self, reset: bool = False) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        for s in (self.client, self.server):
            if reset:
                with contextlib.suppress(OSError):
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            with contextlib.suppress(OSError):
                s.close()


class Proxy:
    """Forwards ``127.0.0.1:listen_port`` to ``127.0.0.1:upstream_port``; see the module docstring."""

    def __init__(self, listen_port: int, upstream_port: int) -> None:
        self.listen_port, self.upstream_port = listen_port, upstream_port
        self._lock = threading.Lock()
        self._conns: list[_Conn] = []
        self._delay_s = 0.0
        self._blocked: set[int] = set()
        self._block_all = False
        self._stop = threading.Event()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((LOOPBACK, listen_port))
        self._listener.listen(64)
        self._listener.settimeout(_TICK_S)
        self._thread = threading.Thread(target=self._accept_loop, name=f"proxy-{listen_port}", daemon=True)
        self._thread.start()

    # -- faults ------------------------------------------------------------------------------------
    def delay(self, ms: float) -> None:
        """Delay every chunk by ``ms`` milliseconds from now on (0 removes the delay)."""
        self._delay_s = max(0.0, ms) / 1000.0

    def reset(self) -> int:
        """RST every open connection; returns how many were cut."""
        with self._lock:
            conns, self._conns = self._conns, []
        for c in conns:
            c.close(reset=True)
        return len(conns)

    def partition(self, pids: list[int] | None = None) -> None:
        """Stop moving bytes for connections of ``pids`` (None: of every client).

        The owners are read from the kernel now for open connections, and on accept for new ones
        while the partition lasts (only then: the lookup costs a scan of the processes' sockets)."""
        with self._lock:
            if pids is None:
                self._block_all = True
                return
            self._blocked.update(pids)
            conns = list(self._conns)
        ports = ports_of(list(pids))
        for c in conns:
            if c.peer_port in ports:
                c.blocked = True

    def heal(self) -> None:
        """Undo every partition."""
        with self._lock:
            self._blocked.clear()
            self._block_all = False
            for c in self._conns:
                c.blocked = False

    def _is_blocked(self, conn: _Conn) -> bool:
        return self._block_all or conn.blocked

    # -- forwarding --------------------------------------------------------------------------------
    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                client, addr = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                server = socket.create_connection((LOOPBACK, self.upstream_port), timeout=2.0)
            except OSError:
                with contextlib.suppress(OSError):
                    client.close()
                continue
            conn = _Conn(client, server, addr[1])
            with self._lock:
                blocked = list(self._blocked)
            if blocked and owner_pid(addr[1], blocked) is not None:
                conn.blocked = True
            for s in (client, server):
                s.settimeout(_TICK_S)
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._conns.append(conn)
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(conn, src, dst), daemon=True).start()

    def _pump(self, conn: _Conn, src: socket.socket, dst: socket.socket) -> None:
        while not conn.closed.is_set() and not self._stop.is_set():
            if self._is_blocked(conn):
                time.sleep(_TICK_S)
                continue
            try:
                data = src.recv(_CHUNK)
            except TimeoutError:
                continue
            except OSError:
                break
            if not data:
                break
            delay = self._delay_s
            if delay:
                time.sleep(delay)
            while self._is_blocked(conn) and not conn.closed.is_set() and not self._stop.is_set():
                time.sleep(_TICK_S)
            if not self._send_all(conn, dst, data):
                break
        conn.close()
        with self._lock, contextlib.suppress(ValueError):
            self._conns.remove(conn)

    def _send_all(self, conn: _Conn, dst: socket.socket, data: bytes) -> bool:
        """Send all of ``data`` (a send timeout is retried, never a partial write); False if cut."""
        view = memoryview(data)
        while view:
            if conn.closed.is_set() or self._stop.is_set():
                return False
            try:
                sent = dst.send(view)
            except TimeoutError:
                continue
            except OSError:
                return False
            view = view[sent:]
        return True

    def close(self) -> None:
        """Stop accepting, cut every connection, join the accept thread (bounded)."""
        self._stop.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        self.reset()
        self._thread.join(timeout=2.0)
