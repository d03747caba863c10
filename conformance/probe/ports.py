"""Free TCP ports on 127.0.0.1 (the probe never listens or connects anywhere else)."""

from __future__ import annotations

import socket
import time

LOOPBACK = "127.0.0.1"


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports the kernel just handed out on 127.0.0.1 and released.

    All sockets are held open until every port is chosen, so the ports are distinct; another
    process may still take one before we bind it (the caller's readiness check catches that).
    """
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((LOOPBACK, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def wait_tcp(host: str, port: int, timeout_s: float) -> bool:
    """True once ``host:port`` accepts a TCP connection, False after ``timeout_s`` (bounded)."""
    if host not in (LOOPBACK, "localhost"):
        raise ValueError(f"probe connects to loopback only, not {host}")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((LOOPBACK, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False
