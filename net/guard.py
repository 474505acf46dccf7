"""Limits of the local server against peers that take resources without playing (issue 9).

* :class:`ConnectionLimits`: at most ``max_connections`` clients at once, at most ``max_per_address``
  from one address, ``idle_timeout`` seconds to join (or authenticate) after connecting, and at most
  ``max_unsent`` bytes (beyond a ``send_buffer`` in the kernel) waiting for a client that does not read
  (then it is disconnected: its memory is bounded, and nobody waits for it, since the server never
  waits for a write).
* :class:`ConnectionCounter`: admits or refuses a new connection by those numbers.
* :class:`WorkBudget`: the parsing work one peer may cause per second (bytes and elements, issue 39),
  far tighter before it has joined: a peer over its budget is simply not read for a while, so that the
  event loop's time is shared fairly and a flood of in-bounds messages cannot starve a running game.

The bounds of a single message are :class:`model.framing.Limits`; the server's are ``CLIENT_LIMITS``
(``LOBBY_LIMITS`` before a peer has joined or authenticated).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
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
    # the kernel's receive buffer per client (SO_RCVBUF; Linux lets it grow to megabytes): what a flooding
    # peer can push before TCP holds it back; a client message is at most 64 KiB
    recv_buffer: int = 32 * 1024
    # a dropped connection whose output the peer does not read is aborted after this grace (seconds)
    close_grace: float = 2.0
    # parsing work per second a peer may cause, before joining (a lobby message is a few hundred bytes)
    # and after; the bursts let a whole message through at once
    lobby_rate: Rate = field(default_factory=lambda: Rate(bytes=4096, elements=64))
    player_rate: Rate = field(default_factory=lambda: Rate(bytes=128 * 1024, elements=2048))


@dataclass(frozen=True)
class Rate:
    """Bytes and elements per second; each budget holds at most one second's worth."""

    bytes: float
    elements: float


class WorkBudget:
    """Token buckets of one peer's parsing work (bytes and elements). ``charge`` what was parsed; ``delay``
    says how long to stop reading the peer until the budget is positive again."""

    def __init__(self, rate: Rate, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.rate = rate
        self._bytes = rate.bytes
        self._elements = rate.elements
        self._at = clock()

    def set_rate(self, rate: Rate) -> None:
        self._refill()
        self.rate = rate

    def charge(self, nbytes: int, elements: int) -> None:
        self._refill()
        self._bytes -= nbytes
        self._elements -= elements

    def delay(self) -> float:
        """Seconds until both budgets are positive again (0: read on)."""
        self._refill()
        return max(0.0, -self._bytes / self.rate.bytes, -self._elements / self.rate.elements)

    def _refill(self) -> None:
        now = self.clock()
        elapsed, self._at = max(0.0, now - self._at), now
        self._bytes = min(self.rate.bytes, self._bytes + elapsed * self.rate.bytes)
        self._elements = min(self.rate.elements, self._elements + elapsed * self.rate.elements)


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
