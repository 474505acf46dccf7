"""Playing against a team's own program: ``blokus --opponent cmd:./start.sh`` (``--watch``: it plays our AI).

The program plays on an embedded server (``net.external.HostedGame``: started as the contest starts it,
with the official time limits for its seat; the human's seat has none); the game screen joins that server
with the other reservation, as in a network game. Beside the usual game it shows (``tui.program_pane``) the
program's name and its move times (the status while it thinks, the line below the board after its move), the
tail of its stderr in a pane (``e``), and at the end the one line of why it lost (illegal move with the rule,
timeout, crash with its exit code and last stderr line, …) with the path of its output.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from blokus.ai.interface import Player
from blokus.ai.players.registry import default_player
from blokus.model.pieces import Team
from blokus.model.season import DEFAULT_SEASON
from blokus.model.user_cache import cache_folder
from blokus.net.external import HOST, HostedGame, HostedSeat, program_command
from blokus.net.rooms import Timeouts
from blokus.tui.ai_runner import AISeats
from blokus.tui.app import BlokusApp
from blokus.tui.game_screen import GameScreen, SaveReplay
from blokus.tui.launch import PlayOptions, theme_name
from blokus.tui.network import network_session
from blokus.tui.program_pane import ProgramSeat
from blokus.tui.server_link import ServerLink


def program_log_dir() -> Path:
    """Where the TUI keeps the output of cmd: opponents: $XDG_CACHE_HOME/blokus/programs."""
    return cache_folder("programs")


def external_screen(
    hosted: HostedGame,
    program_team: Team,
    label: str,
    *,
    player: Player,
    hint_player: Player,
    move_time_ms: int = 1000,
    name: str | None = None,
    watch: bool = False,
    save_replay: SaveReplay | None = None,
) -> GameScreen:
    """The game screen joined to the embedded server with the other reservation (``watch``: our AI plays)."""
    own = program_team.opponent
    link = ServerLink(
        HOST, hosted.port, reservation=hosted.reservations[own], wanted=own, name=name, season=hosted.season
    )
    seats = AISeats(dict.fromkeys(Team, player), hint_player, move_time_ms)
    program = ProgramSeat(hosted, program_team, label, watch=watch)
    return GameScreen(network_session(link), seats, link=link, program=program, save_replay=save_replay)


def external_timeouts(options: PlayOptions) -> Timeouts:
    """The program's limits: the season's, a soft limit of ``--time-limit`` seconds, none (``--no-timeout``)."""
    season = options.season or DEFAULT_SEASON
    official = Timeouts.of(season)
    if options.time_limit is None:
        return Timeouts(None, None)
    if official.soft is not None and abs(options.time_limit - official.soft) < 1e-9:
        return official
    return Timeouts(options.time_limit, max(options.time_limit, official.hard or 0.0))


def start_external_game(options: PlayOptions) -> tuple[HostedGame, Team]:
    """The embedded server and the program for ``blokus --opponent cmd:…`` (ProgramError: one line)."""
    season = options.season or DEFAULT_SEASON
    own = options.team or Team.ONE
    assert options.opponent is not None  # a spec (``cli.play`` parses the names)
    label = options.opponent.label
    seats = {
        own: HostedSeat(options.name or ("AI" if options.watch else "you"), None, can_timeout=False),  # a human only
        own.opponent: HostedSeat(label, program_command(options.opponent)),
    }
    hosted = HostedGame(
        (seats[Team.ONE], seats[Team.TWO]),
        season=season,
        timeouts=external_timeouts(options),
        start_piece=options.start_piece,
        seed=options.seed,
        log_dir=program_log_dir(),
        log_prefix=f"tui-{datetime.now():%Y-%m-%d_%H-%M-%S}",
    )
    hosted.start()
    return hosted, own.opponent


def external_app(
    hosted: HostedGame,
    program_team: Team,
    *,
    player: Player,
    hint_player: Player,
    move_time_ms: int = 1000,
    name: str | None = None,
    watch: bool = False,
    theme: str = "textual-dark",
    save_replay: Callable | None = None,
) -> BlokusApp:
    label = hosted.seats[program_team].name
    return BlokusApp(
        lambda: external_screen(
            hosted,
            program_team,
            label,
            player=player,
            hint_player=hint_player,
            move_time_ms=move_time_ms,
            name=name,
            watch=watch,
            save_replay=save_replay,
        ),
        theme=theme,
    )


def build_external_app(options: PlayOptions, save_replay: Callable | None = None) -> tuple[BlokusApp, HostedGame]:
    """The app of a game against ``options.opponent``, a program (``cli.play`` checked it; ProgramError: one line)."""
    hosted, program_team = start_external_game(options)
    ai = options.ai or default_player()
    player = ai.build(options.seed)
    hint = ai.build(None if options.seed is None else options.seed + 7)
    app = external_app(
        hosted,
        program_team,
        player=player,
        hint_player=hint,
        move_time_ms=options.move_time or 1500,
        name=options.name or (f"AI {ai.name}" if options.watch else None),  # --watch: our AI plays, not "you"
        watch=options.watch,
        theme=theme_name(options.light),
        save_replay=save_replay,
    )
    return app, hosted
