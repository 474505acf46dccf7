"""The games of ``blokus arena`` (``cli.arena``) with ``cmd:`` players: every game on an embedded server,
judged as the contest judges.

A ``py:PATH[:CLASS]`` player (a team's ``blokus.player.Player``) plays as the contest runs it: a
``blokus bot --player PATH --strict`` process per game, so its mistakes are named forfeits.

``blokus arena cmd:./my-player/start.sh level3 --games 8`` plays each game of the match (``ai.arena``'s
pairs of openings with the seats swapped) through :class:`net.external.HostedGame`: the program is started
with its reservation, and a built-in player takes the other seat as a ``blokus bot`` process with that
reservation (the same client a contest upload of this project runs), so both sides are timed by the
server alike. The games' results are the server's; a forfeit is one line (``net.external``); the program's
stdout and stderr are kept per game (``--logs DIR``, else the ``--save-replay`` directory, else a new
temporary directory).
"""

from __future__ import annotations

import sys

from ai.arena import ArenaGame, GameSpec
from ai.pyplayer import is_python_player
from model.pieces import Shape, Team
from model.replay import new_replay_path
from model.season import season_named
from net.external import HostedGame, ProgramError, Seat, is_program, program_argv, program_label
from net.rooms import Timeouts

BOT_IDLE_TIMEOUT = "120s"  # our bot gives up if the server says nothing for this long (it never hangs)


class ExternalGames:
    """Plays one arena game (``GameSpec`` → ``ArenaGame``) with the seats as processes; picklable for --jobs."""

    def __init__(
        self, a: str, b: str, log_dir: str, *, join_timeout: float = 30.0, timeouts: Timeouts | None = None
    ) -> None:
        self.a, self.b = a, b
        self.log_dir = log_dir
        self.join_timeout = join_timeout
        self.timeouts = timeouts  # None: the season's (tests pass shorter ones)
        label_a, label_b = program_label(a), program_label(b)
        self.labels = (label_a, label_b) if label_a != label_b else (f"{label_a}-A", f"{label_b}-B")

    def command(self, name: str, spec: GameSpec, seed: int, pondering: bool) -> list[str]:
        if is_program(name):
            return program_argv(name)
        if is_python_player(name):  # the team's player as the contest runs it: our bot, strict, timed by the server
            return [*program_argv(name), "--seed", str(seed), "--idle-timeout", BOT_IDLE_TIMEOUT]
        bot = [
            sys.executable,
            "-m",
            "blokus",
            "bot",
            "--ai",
            name,
            "--seed",
            str(seed),
            "--move-time",
            str(round(spec.move_time * 1000)),
            "--idle-timeout",
            BOT_IDLE_TIMEOUT,
        ]
        return bot + (["--ponder"] if pondering else [])

    def __call__(self, spec: GameSpec) -> ArenaGame:
        season = season_named(spec.season)
        sides = [
            (self.a, self.labels[0], spec.seed * 2 + 1, spec.ponder[0]),
            (self.b, self.labels[1], spec.seed * 2 + 2, spec.ponder[1]),
        ]
        if spec.a_team == 1:
            sides.reverse()  # team ONE first
        one, two = (Seat(label, self.command(name, spec, seed, ponder)) for name, label, seed, ponder in sides)
        timeouts = self.timeouts or (Timeouts.of(season) if spec.timed else Timeouts(None, None))
        game = HostedGame(
            (one, two),
            season=season,
            timeouts=timeouts,
            start_piece=Shape[spec.start_piece],
            log_dir=self.log_dir,
            log_prefix=f"game-{spec.index:03d}",
            join_timeout=self.join_timeout,
        )
        try:
            game.start()
            outcome = game.wait()
        except ProgramError as exc:
            outcome = None
            failure = str(exc)
        finally:
            game.close()
        if outcome is None:
            outcome = game.wait(0)
            failure = game.failure or "the game could not be played"
        else:
            failure = game.failure or ""
        a_team = Team(spec.a_team)
        result = outcome.result if outcome is not None else None
        arena = ArenaGame(spec.index, spec.start_piece, spec.a_team, 0, 0, 0.5, 0, result=result)
        if outcome is None or result is None:
            arena.forfeit = f"no result: {failure or 'the game was cancelled'}"
            return arena
        arena.a_points = result.points(a_team) or 0
        arena.b_points = result.points(a_team.opponent) or 0
        arena.score = 0.5 if result.winner is None else 1.0 if result.winner == a_team else 0.0
        arena.turns = outcome.turn
        arena.a_times, arena.b_times = outcome.times.get(a_team, []), outcome.times.get(a_team.opponent, [])
        if outcome.forfeit and outcome.offender is not None:
            arena.forfeit_side = "A" if outcome.offender == a_team else "B"
            arena.forfeit = f"{arena.forfeit_side} {outcome.forfeit}"
            arena.forfeit_class = outcome.forfeit_class
        arena.logs = [str(path) for paths in outcome.logs.values() for path in paths]
        if spec.replay_dir is not None and outcome.replay is not None:
            names = (one.name, two.name)
            path = new_replay_path(spec.replay_dir, names, season, number=spec.index)
            path.write_bytes(outcome.replay)
            arena.replay = str(path)
        return arena
