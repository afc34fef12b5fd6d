"""The ranks' line to the verifier: one JSON object per line over a loopback TCP socket.

Shared by both ends. The rank side is blocking (a rank waits for its answer before a collective);
the verifier side reads without blocking, so it can watch every rank and process at once.
"""

from __future__ import annotations

import json
import socket
from typing import Any, Iterator


def encode(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")


class LineBuffer:
    """Accumulates bytes read from a non-blocking socket and yields whole messages."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, data: bytes) -> Iterator[dict[str, Any]]:
        self._pending += data
        while b"\n" in self._pending:
            line, self._pending = self._pending.split(b"\n", 1)
            if line.strip():
                yield json.loads(line.decode("utf-8"))


class Channel:
    """The rank's end: send a message, or send one and block for the verifier's answer."""

    def __init__(self, port: int) -> None:
        self._sock = socket.create_connection(("127.0.0.1", port))
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._reader = self._sock.makefile("rb")

    def send(self, message: dict[str, Any]) -> None:
        self._sock.sendall(encode(message))

    def request(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The answer, or None when the verifier has gone (the rank must then stop at once)."""
        try:
            self.send(message)
            line = self._reader.readline()
        except OSError:
            return None
        if not line:
            return None
        return json.loads(line.decode("utf-8"))
