"""The games of ``blokus arena`` (``cli.arena``) with ``cmd:`` players: every game on an embedded server,
judged as the contest judges.

A ``py:PATH[:CLASS]`` player (a team's ``blokus.player.Player``) plays as the contest runs it: a
``blokus bot --player PATH --strict`` process per game, so its mistakes are named forfeits.

``blokus arena cmd:./my-player/start.sh level3 --games 8`` plays each game of the match (``ai.arena.match``'s
pairs of openings with the seats swapped) through :class:`net.external.HostedGame`: the program is started
with its reservation, and a built-in player takes the other seat as a ``blokus bot`` process with that
reservation (the same client a contest upload of this project runs), so both sides are timed by the
server alike. Our side is started so that nothing around it can change it or hurt it into a loss: as
``python -P -m blokus bot`` with ``PYTHONPATH`` naming this project (no ``blokus/`` folder in the current
directory shadows it), on an inherited socket the server seats (no code of ours for another process to read;
the program's connections do not use up its budget); any failure of its side (a timeout, a stop, a crash,
leaving, its seat taken) makes the game void, never a win for the program.
The games' results are the server's; a forfeit is one line (``net.external``); the program's
stdout and stderr are kept per game (``--logs DIR``, else the ``--save-replay`` directory, else a new
temporary directory).
"""

from __future__ import annotations

import contextlib
import sys
import threading
from pathlib import Path

from blokus.ai.arena.game import ArenaGame, GameSpec, move_code
from blokus.ai.arena.match import SideCores
from blokus.ai.arena.verdict import arena_game
from blokus.ai.players.registry import PlayerKind, PlayerSpec
from blokus.model.moverecords import measured_records, write_records
from blokus.model.moves import parse_move
from blokus.model.pieces import Shape
from blokus.model.record import MoveEvent
from blokus.model.replay import new_replay_path
from blokus.model.season import season_named
from blokus.net.external import (
    LOG_LIMIT_BYTES,
    HostedGame,
    HostedSeat,
    ProgramError,
    program_command,
)
from blokus.net.rooms import Timeouts

BOT_IDLE_TIMEOUT = "120s"  # our bot gives up if the server says nothing for this long (it never hangs)
# the folder that holds this project's packages (``blokus``, ``net`` …): our side imports exactly this project
PROJECT_ROOT = str(Path(__file__).parents[2].resolve())  # the folder of the package (blokus/net/...)


def our_command(*args: str) -> list[str]:
    """``python -P -m blokus ARGS``: -P keeps the current folder off ``sys.path`` (with ``OUR_ENV``, which
    names this project's folder, the same code as this process runs, whatever folder the arena runs in)."""
    return [sys.executable, "-P", "-m", "blokus", *args]


OUR_ENV = {"PYTHONPATH": PROJECT_ROOT}
LOG_BUDGET_BYTES = 256 * 2**20  # all the log files of one arena together (the oldest go first)
LOG_FILES_PER_GAME = 4  # stdout and stderr of both sides


class LogBudget:
    """Bounds the log files of an arena in total: each file is capped (``log_limit``: the running games
    together use at most half the budget) and after each game the oldest finished logs are removed until
    they use at most the other half."""

    def __init__(self, folder: str, total: int = LOG_BUDGET_BYTES, jobs: int = 1) -> None:
        self.folder = Path(folder)
        self.total = total
        self.log_limit = max(64 * 1024, min(LOG_LIMIT_BYTES, total // (2 * LOG_FILES_PER_GAME * max(1, jobs))))
        self.removed = 0  # files removed so far
        self._lock = threading.Lock()

    def prune(self, keep: frozenset[str] | set[str] = frozenset()) -> None:
        """Remove the oldest finished log files (not those in ``keep``: running games') beyond half the budget."""
        with self._lock:
            files = []
            for path in self.folder.glob("game-*.log"):
                with contextlib.suppress(OSError):
                    stat = path.stat()
                    files.append((stat.st_mtime, stat.st_size, path))
            used = sum(size for _, size, _ in files)
            for _, size, path in sorted(files):
                if used <= self.total // 2:
                    break
                if str(path) in keep:
                    continue
                with contextlib.suppress(OSError):
                    path.unlink()
                    used -= size
                    self.removed += 1


def worth_a_look(game: ArenaGame, external: tuple[bool, bool]) -> bool:
    """A game whose logs a team wants to read: no result, a forfeit (a crash among them), or a loss of the
    program under test (``external``: A's and B's). When both sides are the team's programs one of them loses
    every game that is not a draw: then only no result and forfeits count (``kept_logs_text``)."""
    lost = external[0] != external[1] and ((external[0] and game.score == 0.0) or (external[1] and game.score == 1.0))
    return bool(game.void or game.forfeit or lost)


def kept_logs_text(external: tuple[bool, bool]) -> str:
    """Which games' logs :func:`settle_logs` keeps in a temporary folder, in words (``game(s) with …``)."""
    if all(external):
        return "a forfeit (a crash, a timeout, an illegal move) or no result (both sides are your programs)"
    return "a forfeit, a loss of the program under test or no result"


def settle_logs(results: list[ArenaGame], folder: str, external: tuple[bool, bool], temporary: bool) -> int:
    """After an arena: in a ``temporary`` log folder only the logs of the games :func:`worth_a_look` stay (the
    others and those of unfinished games are removed); every game played here lists only its log files that
    still exist (the log budget may have removed some). The number of games whose logs stay."""
    kept = [game for game in results if worth_a_look(game, external)] if temporary else results
    if temporary:
        wanted = {str(Path(path).resolve()) for game in kept for path in game.logs}
        for path in Path(folder).glob("game-*.log"):
            if str(path.resolve()) not in wanted:
                with contextlib.suppress(OSError):
                    path.unlink()
    for game in results:
        if not game.worker:  # a cluster worker's logs are on that machine
            game.logs = [path for path in game.logs if Path(path).is_file()]
    return sum(bool(game.logs) or bool(game.worker) for game in kept)


class ExternalGames:
    """Plays one arena game (``GameSpec`` → ``ArenaGame``) with the seats as processes; picklable for --jobs."""

    def __init__(
        self,
        a: PlayerSpec,
        b: PlayerSpec,
        log_dir: str,
        *,
        join_timeout: float = 30.0,
        timeouts: Timeouts | None = None,
        logs: LogBudget | None = None,
    ) -> None:
        self.a, self.b = a, b
        self.log_dir = log_dir
        self.logs = logs or LogBudget(log_dir)
        self._running: set[HostedGame] = set()
        self._lock = threading.Lock()
        self._stopped = False
        self.join_timeout = join_timeout
        self.timeouts = timeouts  # None: the season's (tests pass shorter ones)
        label_a, label_b = a.label, b.label
        self.labels = (label_a, label_b) if label_a != label_b else (f"{label_a}-A", f"{label_b}-B")

    def command(self, player: PlayerSpec, spec: GameSpec, seed: int, pondering: bool) -> list[str]:
        if player.kind is PlayerKind.CMD:
            return program_command(player)
        if (
            player.kind is PlayerKind.PY
        ):  # the team's player as the contest runs it: our bot, strict, timed by the server
            return [*program_command(player), "--seed", str(seed), "--idle-timeout", BOT_IDLE_TIMEOUT]
        bot = our_command(
            "bot",
            "--ai",
            player.name,
            "--seed",
            str(seed),
            "--move-time",
            str(round(spec.move_time * 1000)),
            "--idle-timeout",
            BOT_IDLE_TIMEOUT,
        )
        return bot + (["--ponder"] if pondering else [])

    def stop(self) -> None:
        """Ctrl-C: no game starts any more, the running ones stop now (their programs with them)."""
        with self._lock:
            self._stopped = True
            running = list(self._running)
        for game in running:
            game.cancel()

    def __call__(self, spec: GameSpec, cores: SideCores | None = None) -> ArenaGame:
        """One game; ``cores``: A's and B's own (each side's program runs there: our bot's search threads follow)."""
        season = season_named(spec.season)
        sides = [
            (self.a, self.labels[0], spec.seed * 2 + 1, spec.ponder[0], None if cores is None else cores[0]),
            (self.b, self.labels[1], spec.seed * 2 + 2, spec.ponder[1], None if cores is None else cores[1]),
        ]
        if spec.a_team == 1:
            sides.reverse()  # team ONE first
        one, two = (
            # a py: player is the team's code under test, run by our bot: its crash is its own, not a void game
            HostedSeat(
                label,
                self.command(player, spec, seed, ponder),
                ours=not player.external,
                env=None if player.kind is PlayerKind.CMD else OUR_ENV,
                cores=side_cores,
                walled=player.kind is PlayerKind.CMD,  # a py: player's team process is walled in by our bot
            )
            for player, label, seed, ponder, side_cores in sides
        )
        timeouts = self.timeouts or (Timeouts.of(season) if spec.timed else Timeouts(None, None))
        game = HostedGame(
            (one, two),
            season=season,
            timeouts=timeouts,
            start_piece=Shape[spec.start_piece],
            opening=tuple(parse_move(text) for text in spec.opening),
            adjudicate=spec.adjudicate,
            log_dir=self.log_dir,
            log_prefix=f"game-{spec.index:03d}",
            join_timeout=self.join_timeout,
            log_limit=self.logs.log_limit,
        )
        with self._lock:
            if self._stopped:
                return ArenaGame(spec.index, spec.start_piece, spec.a_team, 0, 0, 0.5, 0, void="stopped")
            self._running.add(game)
        try:
            game.start()
            outcome = game.wait()
        except ProgramError as exc:
            outcome = None
            failure = str(exc)
        finally:
            game.close()
            with self._lock:
                self._running.discard(game)
                running = {str(path) for other in self._running for p in other.programs.values() for path in p.paths}
            self.logs.prune(keep=running)
        if outcome is None:
            outcome = game.wait(0)
            failure = game.failure or "the game could not be played"
        else:
            failure = game.failure or ""
        # every move from the start piece: the opening's (made by the room before the first request), then the game's
        played = [move_code(move) for move in game.room.record.moves] if game.room is not None else []
        arena = arena_game(spec, outcome, [move_code(parse_move(text)) for text in spec.opening] + played, failure)
        if cores is not None:
            arena.a_cores, arena.b_cores = list(cores[0]), list(cores[1])
        if arena.void or outcome is None:
            return arena
        if spec.replay_dir is not None and outcome.replay is not None:
            names = (one.name, two.name)
            path = new_replay_path(spec.replay_dir, names, season, number=spec.index)
            path.write_bytes(outcome.replay)
            arena.replay = str(path)
            # each move's time as the server measured it (the moves the game holds: not a refused one); a program
            # reports nothing of its search
            made = (e.turn for e in game.room.record.events if isinstance(e, MoveEvent)) if game.room else ()
            timings = (
                (m.turn, m.latency, "engine" if game.seats[m.team].ours else "program")
                for m in list(game.moves)
                if m.latency is not None
            )
            records = measured_records(made, timings)
            if records:
                write_records(path, records)
        return arena
