"""Limits of the local server against peers that take resources without playing (issue 9).

* :class:`ConnectionLimits`: at most ``max_connections`` clients at once, at most ``max_per_address``
  from one address, ``idle_timeout`` seconds to join (or authenticate) after connecting, and at most
  ``max_unsent`` bytes (beyond a ``send_buffer`` in the kernel) waiting for a client that does not read
  (then it is disconnected: its memory is bounded, and nobody waits for it, since the server never
  waits for a write).
* :class:`ConnectionCounter`: admits or refuses a new connection by those numbers.

The bounds of a single message are :class:`model.framing.Limits`; the server's are ``CLIENT_LIMITS``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ConnectionLimits:
    max_connections: int = 256
    max_per_address: int = 64  # generous: a local tournament runs every bot from one machine
    idle_timeout: float | None = 60.0  # seconds to join or authenticate; None: no limit
    max_refusals: int = 10  # lobby errors (unknown reservations) before the connection is dropped
    # bytes the server may hold for a client that does not read (beyond what the kernel buffers): a whole
    # 2027 game is about 0.5 MB, so only a peer that has stopped reading for many games reaches it
    max_unsent: int = 4 * 1024 * 1024
    # the kernel's send buffer per client (SO_SNDBUF; without it Linux lets it grow to megabytes); a
    # state is a few kilobytes
    send_buffer: int = 64 * 1024


@dataclass
class ConnectionCounter:
    limits: ConnectionLimits
    total: int = 0
    by_address: Counter[str] = field(default_factory=Counter)

    def admit(self, address: str) -> str | None:
        """Count a new connection from ``address``; the reason if it must be refused (then not counted)."""
        if self.total >= self.limits.max_connections:
            return f"too many connections (at most {self.limits.max_connections})"
        if self.by_address[address] >= self.limits.max_per_address:
            return f"too many connections from {address} (at most {self.limits.max_per_address})"
        self.total += 1
        self.by_address[address] += 1
        return None

    def release(self, address: str) -> None:
        self.total -= 1
        self.by_address[address] -= 1
        if self.by_address[address] <= 0:
            del self.by_address[address]
