"""The Textual app and the ``blokus play`` / ``blokus replay`` entry points."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from model.pieces import Shape, Team
from model.season import DEFAULT_SEASON

log = logging.getLogger(__name__)

LOG_FILE_ENV = "BLOKUS_LOG"


class BlokusApp(App[int]):
    """Hosts one main screen (a game or a replay), plus help and dialogs."""

    TITLE = "Blokus"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        Binding("ctrl+t", "toggle_theme", "Theme", show=False),
    ]

    def __init__(self, make_screen: Callable[[], Screen], *, theme: str = "textual-dark") -> None:
        super().__init__()
        self._make_screen = make_screen
        self._initial_theme = theme
        self.main_screen: Screen | None = None

    @property
    def COMMANDS(self):  # type: ignore[override]  # noqa: N802
        from tui.commands import BlokusCommands

        return App.COMMANDS | {BlokusCommands}

    def on_mount(self) -> None:
        self.theme = self._initial_theme
        self.main_screen = self._make_screen()
        self.push_screen(self.main_screen)

    def _fatal_error(self) -> None:
        """An unexpected error: the traceback goes to the log file, the user gets one readable line."""
        exc = self._exception
        log.error("unexpected error", exc_info=exc if exc is not None else True)
        self.bell()
        where = log_file_path()
        self._exit_renderables.append(
            f"blokus: unexpected error: {type(exc).__name__ if exc else 'error'}: {exc} "
            f"(the details are in {where})"
        )
        self._close_messages_no_wait()

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    def action_quit(self) -> None:  # type: ignore[override]
        screen = self.main_screen
        if screen is not None and hasattr(screen, "cancel_ai"):
            screen.cancel_ai()
        self.exit(0)


# --- logging ---------------------------------------------------------------------------------------


_LOG_PATH: Path | None = None


def log_file_path() -> str:
    return str(_LOG_PATH) if _LOG_PATH is not None else "the log file"


def setup_logging(path: str | None = None) -> None:
    """Logs go to a file (never onto the screen): $BLOKUS_LOG or ~/.cache/blokus/blokus.log."""
    global _LOG_PATH
    target = Path(path or os.environ.get(LOG_FILE_ENV) or Path.home() / ".cache" / "blokus" / "blokus.log")
    _LOG_PATH = target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(target, encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)


# --- blokus play -----------------------------------------------------------------------------------


class _ArgError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit code 2, no usage dump
        raise _ArgError(message)


def play_parser() -> argparse.ArgumentParser:
    from ai import DEFAULT_AI, player_names

    p = _Parser(prog="blokus play", add_help=False,
                description="Play Blokus in the terminal: a local game against the AI, or on a server with -h/-p.")
    p.add_argument("--help", action="help", help="show this help and exit")
    p.add_argument("--team", choices=["ONE", "TWO", "one", "two"], default="ONE",
                   help="your team in a local game: ONE = BLUE+RED (moves first), TWO = YELLOW+GREEN")
    p.add_argument("--opponent", default=None, metavar="NAME|human",
                   help=f"AI opponent ({', '.join(player_names())}; default {DEFAULT_AI}) or 'human' (hotseat)")
    p.add_argument("--ai", default=None, metavar="NAME", help="AI used for hints, autopilot and --watch")
    p.add_argument("--ai-time", type=float, default=1.0, metavar="SECONDS", help="thinking time per AI move")
    p.add_argument("--start-piece", default=None, metavar="SHAPE", help="start piece, e.g. PENTO_L (default: random)")
    p.add_argument("--seed", type=int, default=None, help="seed for the start piece and the AI")
    p.add_argument("--watch", action="store_true", help="AI against AI; you watch")
    p.add_argument("--name", default=None, help="your player name")
    p.add_argument("--light", action="store_true", help="light theme")
    p.add_argument("--log", default=None, metavar="FILE", help=f"log file (default ${LOG_FILE_ENV} or ~/.cache/blokus)")
    p.add_argument("-h", "--host", default=None, help="server host (network play)")
    p.add_argument("-p", "--port", type=int, default=None, help="server port (default 13050)")
    p.add_argument("-r", "--reservation", default=None, help="reservation code of a prepared game")
    p.add_argument("--room", default=None, help="room id to join")
    p.add_argument("--season", default=None, metavar="2021|2027",
                   help="season of a local game (default 2021: first piece in a corner; 2027: on the border, "
                        "24 rounds); on a server: the game type a plain join asks for (the server's states decide)")
    return p


def build_local_app(args: argparse.Namespace) -> BlokusApp:
    from ai import DEFAULT_AI, make_player
    from tui.game_screen import GameScreen
    from tui.session import GameSession

    start = Shape.parse(args.start_piece) if args.start_piece else None
    team = Team.parse(args.team)
    opponent = args.opponent or DEFAULT_AI
    hotseat = opponent.lower() == "human"
    ai_name = args.ai or (DEFAULT_AI if hotseat else opponent)
    human = None if args.watch else team
    session = GameSession.new_local(start, human=human, hotseat=hotseat and not args.watch, seed=args.seed,
                                    season=season_of_args(args) or DEFAULT_SEASON)
    if args.name and human is not None:
        session.names[human] = args.name
    if not hotseat or args.watch:
        for t in Team:
            if session.seats[t].value == "ai":
                session.names[t] = f"AI ({opponent if t != team or args.watch else ai_name})"
    seed = args.seed
    players = {}
    for t in Team:
        name = opponent if (t != team and not hotseat) else ai_name
        players[t] = make_player(name, None if seed is None else seed + 1 + int(t))
    hint = make_player(ai_name, None if seed is None else seed + 7)

    def make() -> GameScreen:
        return GameScreen(session, players, hint, ai_time=args.ai_time, min_delay=0.4 if args.watch else 0.0,
                          save_replay=save_game_replay)

    return BlokusApp(make, theme="textual-light" if args.light else "textual-dark")


def save_game_replay(screen) -> str:
    """Save the session of a game screen as an official replay under replays/."""
    from tui.replays import save_session

    return str(save_session(screen.session))


def season_of_args(args: argparse.Namespace):
    """The season chosen with ``--season`` (None if not given: the default, or what a server/file shows)."""
    from model.season import season_named

    text = getattr(args, "season", None)
    if text is None:
        return None
    try:
        return season_named(text)
    except KeyError:
        raise _ArgError(f"unknown season {text!r}; choose 2021 or 2027") from None


def start_piece_name(text: str, season=None) -> str:
    """The shape name of a valid start piece (case-insensitive), else ``_ArgError`` in plain words."""
    from model.season import DEFAULT_SEASON

    season = season or DEFAULT_SEASON
    choices = ", ".join(season.start_pieces)
    try:
        shape = Shape.parse(text)
    except KeyError:
        raise _ArgError(f"unknown start piece {text!r}; choose one of {choices}") from None
    if shape.name not in season.start_pieces:
        raise _ArgError(f"{shape.name} is never a start piece in {season.name}; choose one of {choices}")
    return shape.name


def play_main(argv: list[str]) -> int:
    try:
        args = play_parser().parse_args(argv)
        season = season_of_args(args)
        if args.start_piece:
            args.start_piece = start_piece_name(args.start_piece, season)
        from ai import player_names

        names = ", ".join(player_names())
        if args.opponent and args.opponent.lower() != "human" and args.opponent not in player_names():
            raise _ArgError(f"unknown opponent {args.opponent!r}; choose human or one of {names}")
        if args.ai is not None and args.ai not in player_names():
            raise _ArgError(f"unknown AI {args.ai!r}; choose one of {names}")
        if not args.ai_time > 0:
            raise _ArgError(f"--ai-time must be a positive number of seconds, not {args.ai_time:g}")
        if args.port is not None and not 0 < args.port < 65536:
            raise _ArgError(f"invalid port {args.port} (1-65535)")
    except _ArgError as exc:
        print(f"blokus play: {exc}", file=sys.stderr)
        return 2
    setup_logging(args.log)
    if args.host is not None or args.port is not None or args.reservation or args.room:
        from tui.network import build_network_app

        try:
            app = build_network_app(args)
        except ValueError as exc:
            print(f"blokus play: {exc}", file=sys.stderr)
            return 2
    else:
        app = build_local_app(args)
    return run_app(app)


def run_app(app: App) -> int:
    try:
        result = app.run()
    except Exception as exc:  # Textual restores the terminal before we get here
        log.exception("unexpected error")
        print(f"blokus: unexpected error: {exc} (details in the log file)", file=sys.stderr)
        return 1
    if app.return_code not in (0, None):
        return int(app.return_code or 1)
    return int(result or 0)


# --- blokus replay ---------------------------------------------------------------------------------


def replay_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="blokus replay", add_help=False,
                description="Step through a replay (official .xml / .xml.gz, or a game saved by this program).")
    p.add_argument("--help", action="help", help="show this help and exit")
    p.add_argument("file", help="replay file (.xml or .xml.gz)")
    p.add_argument("--turn", type=int, default=None, help="start at this turn")
    p.add_argument("--season", default=None, metavar="2021|2027",
                   help="judge the game by this season's rules (default: the season the file's form shows)")
    p.add_argument("--light", action="store_true", help="light theme")
    p.add_argument("--log", default=None, metavar="FILE", help="log file")
    return p


def replay_main(argv: list[str]) -> int:
    from tui.replay_screen import ReplayScreen
    from tui.replays import ReplayError, load_replay

    try:
        args = replay_parser().parse_args(argv)
        season = season_of_args(args)
    except _ArgError as exc:
        print(f"blokus replay: {exc}", file=sys.stderr)
        return 2
    setup_logging(args.log)
    try:
        replay = load_replay(Path(args.file), season)
    except ReplayError as exc:
        print(f"blokus replay: {exc}", file=sys.stderr)
        return 2
    app = BlokusApp(lambda: ReplayScreen(replay, start_turn=args.turn),
                    theme="textual-light" if args.light else "textual-dark")
    return run_app(app)
