"""Exit codes of every ``blokus`` subcommand (pure constants: the commands in ``cli/`` decide and write)."""

from __future__ import annotations

# done; no connection (or no file); a bad command line; the peer broke the protocol
EXIT_OK, EXIT_CONNECTION, EXIT_USAGE, EXIT_PROTOCOL = 0, 1, 2, 3
EXIT_PLAYER = 4  # a team's py: player cannot be loaded, or failed under blokus bot --strict
EXIT_FALLBACK = 5  # blokus bot --socket-fd (a host's own side): the game was played, but not every move was its own


def plural(count: int, noun: str) -> str:
    """``1 game``, ``2 games``, ``1 mistake``, ``0 blunders`` (regular English nouns only)."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
