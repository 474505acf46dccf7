"""Limits of the local server against peers that take resources without playing (issue 9).

* :class:`ConnectionLimits`: at most ``max_connections`` clients at once, at most ``max_per_address``
  from one address, and ``idle_timeout`` seconds to join (or authenticate) after connecting.
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
