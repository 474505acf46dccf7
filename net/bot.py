"""The headless autopilot for a game server (``blokus bot``, whose options ``cli.bot`` reads; the contest's
``start.sh`` runs it).

Connects, joins (reservation, room id, or any open game), answers every move request within the time
limit (``ai.players.controller``), says a one-line summary after the result (``BotEnd.PLAYED``). On a refused or
lost connection, a protocol error or a game that ends without a result it says one line with the reason
(``BotEnd.CONNECTION``, ``BotEnd.PROTOCOL``). No tracebacks. ``cli.bot`` gives the lines their form
(``BotLines``) and turns the end into the exit code (0, 1, 3).
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from blokus.ai.interface import Engine, fallback_move
from blokus.ai.players.controller import DEFAULT_THINK_MS, HARD_CUTOFF_MS, decide, warm_up
from blokus.ai.players.pyplayer import PlayerLoadError
from blokus.ai.players.registry import PlayerKind, PlayerSpec, compile_ahead, default_player
from blokus.ai.players.team_process import MEMORY_LIMIT_MIB, TeamPlayer
from blokus.ai.search.compiled import not_ready_line
from blokus.model import server_texts
from blokus.model.exits import plural
from blokus.model.moverecords import MAX_RECORDS, MoveRecord, engine_report, write_records
from blokus.model.record import GameRecord
from blokus.model.result import GameResult, end_texts
from blokus.model.season import DEFAULT_PORT, Season
from blokus.model.text import printable
from blokus.net.connection import (
    Closed,
    Connection,
    ConnectionFailed,
    GameOver,
    Ignored,
    Joined,
    Left,
    MoveRequested,
    ServerError,
    StateChanged,
    Welcome,
    open_and_join,
)

if TYPE_CHECKING:
    from blokus.ai.players.engine_process import ProcessPlayer

log = logging.getLogger("blokus.bot")

DEFAULT_IDLE_TIMEOUT_S = 300.0  # generous: a tournament may take minutes to start a prepared game
JOIN_WAIT_S = 4.0  # at most this long for the compiled AI before joining (loading it takes 1-3 s)
RESULT_GRACE_S = 5.0  # after the result, how long to wait for <left> before leaving anyway
GAME_OVER_WAIT_S = 2.0  # how long the team's on_game_over may take before the bot exits anyway
MISTAKES_SHOWN = 3  # the team player's mistakes named in the summary
# Bounded memory whatever the server sends: a game sends a handful of messages between two move requests
# (at most ~200 before the first) and ~100 states in all; far more is a flood, and the bot gives up.
MAX_MESSAGES_WITHOUT_REQUEST = 2_000
MAX_RECORDED_STATES = 1_000  # for --save-replay (nothing is recorded without it: a move needs the last state)


@dataclass(frozen=True)
class BotOptions:
    """What the bot is told (``cli.bot`` reads it from the command line)."""

    host: str = "localhost"
    port: int = DEFAULT_PORT
    reservation: str | None = None  # joinPrepared
    # an inherited socket, already connected to a host's server, instead of host and port (``--socket-fd``): the
    # host seats it, whatever join it sends (``net.external``: our own side in the arena needs no code); the bot
    # then ends with BotEnd.FALLBACK after a game in which a move was not its player's own
    socket_fd: int | None = None
    room: str | None = None  # joinRoom
    season: Season | None = None  # the season a plain join asks for (None: the default season's, then the other's)
    ai: PlayerSpec | None = None  # the player (``cli.players`` parses its name); None: the default AI
    seed: int | None = None
    move_time: int = DEFAULT_THINK_MS  # ms from the arrival of a move request
    ponder: bool = False
    engine: str = "process"  # "process" or "thread"
    hard_limit: int = HARD_CUTOFF_MS  # ms
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT_S  # s; None: wait for ever
    save_replay: Path | None = None
    strict: bool = False  # a team's py: player: judge its mistakes as the contest does (no fallback)
    memory_limit: int = MEMORY_LIMIT_MIB  # a team's py: player: its process's memory (MiB; 0: no limit)


class BotEnd(Enum):
    """How the bot's game ended (``cli.bot`` turns it into the exit code)."""

    PLAYED = "played"  # the game was played to its result
    CONNECTION = "connection"  # no connection, or it was lost, or no message in time, or no result
    PROTOCOL = "protocol"  # the server broke the protocol (or sent an error), or an internal error
    PLAYER = "player"  # a team's py: player could not be loaded, or failed under --strict
    FALLBACK = "fallback"  # --socket-fd: the game was played, but not every move was its player's own


@dataclass(frozen=True)
class BotLines:
    """Where the bot's lines go and how they read: ``cli.bot`` makes them (the command's name, its writers)."""

    say: Callable[[str], None]  # one line about the game for stderr, without the command's name
    summary: Callable[[str], None]  # the line after the result for stdout, without the command's name
    raw: Callable[[str], None]  # a line for stderr already formed (the team's player: ``ai.players.team_process``)


class Bot:
    def __init__(
        self,
        options: BotOptions,
        player: Engine | None = None,
        crash: Callable[[BotEnd], None] | None = None,
        *,
        lines: BotLines,
    ) -> None:
        """``player``: the one to play with, already built (tests); else the options' player is built here (a
        team's ``py:`` player in a supervised process of its own: ``ai.players.team_process``).
        ``crash``: under --strict, how the bot ends when the team's player failed, after its one line (the
        command's ``os._exit``: the process ends at once as a crashed client's does, so the judge sees its exit
        code; None: it leaves the game and ``run`` returns ``BotEnd.PLAYER``). ``lines``: where its lines go."""
        self.options = args = options
        self.lines = lines
        self.crash = crash
        spec = args.ai or default_player()
        self.player: ProcessPlayer | TeamPlayer | Engine
        self.team_code = spec.kind is PlayerKind.PY  # a team's own player: its mistakes are shown and counted
        if player is not None:
            self.player = player
        elif self.team_code:
            self.player = TeamPlayer(
                spec, memory_mib=args.memory_limit, say=lines.say, show=lines.raw, strict=args.strict
            )
        elif args.engine == "process":
            from blokus.ai.players.engine_process import ProcessPlayer

            self.player = ProcessPlayer(spec, seed=args.seed)
        else:
            self.player = spec.build(seed=args.seed)
        self.spec = spec
        self.ai_name = spec.name
        self.rng = random.Random(args.seed)
        self.season = args.season
        self.sock = None if args.socket_fd is None else socket.socket(fileno=args.socket_fd)
        self.conn = self._connect(self.season)
        self.record = GameRecord()  # the states received, for --save-replay only (bounded)
        self.move_records: list[MoveRecord] = []  # our moves' times and engine reports, saved beside the replay
        self.recording = args.save_replay is not None
        self.since_request = 0  # messages since the last move request (a flood is bounded)
        self.contradicted = False  # a move request for the other team's turn was reported
        self.result: GameResult | None = None
        self.failure: tuple[BotEnd, str] | None = None
        self._answer: asyncio.Task | None = None
        self.unanswered = ""  # why the last move request could not be answered ("": it was)
        self.moves = 0
        self.max_elapsed = 0.0
        self.fallbacks = 0
        self.engines: Counter[str] = Counter()  # moves by the engine that found them: "mcts", "lookahead (compiling)"
        self.mistakes: list[str] = []  # the team player's moves replaced or judged: "ValueError at turn 14"
        self._shown: set[str] = set()  # kinds of mistakes already explained on stderr
        self.internal_errors = 0  # exceptions of the bot's own tasks (each said in one line, counted)

    def _connect(self, season: Season | None) -> Connection:
        return Connection(self.options.host, self.options.port, on_traffic=self._traffic, season=season, sock=self.sock)

    def _traffic(self, direction: str, text: str) -> None:
        xml_log.debug("%s %s", "<<" if direction == "in" else ">>", text)

    async def run(self) -> BotEnd:
        """Play one game; how it ended. Whatever goes wrong inside is one line on stderr, never a traceback
        and never a task that dies unseen (``_unseen``)."""
        loop = asyncio.get_running_loop()
        previous = loop.get_exception_handler()
        loop.set_exception_handler(self._unseen)
        try:
            return await self._run()
        except (ConnectionError, OSError, ValueError, RuntimeError, LookupError, TypeError, AttributeError) as exc:
            self.internal_errors += 1
            return self._fail(BotEnd.PROTOCOL, f"internal error: {type(exc).__name__}: {exc}")
        finally:
            loop.set_exception_handler(previous)
            if isinstance(self.player, TeamPlayer):
                self.player.close()  # if _run could not

    def _unseen(self, loop: asyncio.AbstractEventLoop, context: dict) -> None:
        """The event loop's exception handler: an exception nobody waited for (a task, a reader callback) is
        one line on stderr (and counted in the summary), never silence."""
        exc = context.get("exception")
        self.internal_errors += 1
        what = f"{type(exc).__name__}: {exc}" if exc is not None else str(context.get("message", "?"))
        self.lines.say(f"internal error (played on): {printable(what)}")
        log.error("unhandled in the event loop: %s", context, exc_info=exc)

    async def _run(self) -> BotEnd:
        args = self.options
        warm_up()
        started = time.monotonic()
        player = self.player
        if isinstance(player, TeamPlayer):  # warm before joining: its process is started and loads the file
            try:
                player.start()
                await player.wait_ready()
            except PlayerLoadError as exc:
                player.close()
                return self._fail(BotEnd.PLAYER, str(exc))
            ready, status = True, "ready"
        # loading the compiled AI takes a second or two; a first start compiles it (a minute): the bot joins
        # after JOIN_WAIT_S at the latest and the engine answers with its Python search meanwhile
        elif not isinstance(player, Engine):  # the engine process: its worker loads the compiled search
            ready = await asyncio.to_thread(player.wait_ready, JOIN_WAIT_S)
            status = player.status
        else:
            try:
                ready = await asyncio.to_thread(compile_ahead, self.spec, JOIN_WAIT_S)
                status = _status_of(self.player, ready)
            except Exception as exc:  # numba cannot be imported: the engine's Python search plays
                ready, status = False, f"failed: {type(exc).__name__}: {exc}"
        if ready:
            log.info("AI %s ready after %.1f s", self.ai_name, time.monotonic() - started)
        else:
            self.lines.say(f"{self.ai_name}: {not_ready_line(status)}")
        try:
            self.conn, early = await open_and_join(
                self._connect,
                self.season,
                reservation=args.reservation,
                room=args.room,
                silence_limit=args.idle_timeout,
            )
        except (ConnectionFailed, ConnectionError) as exc:
            return self._fail(BotEnd.CONNECTION, str(exc))
        except TimeoutError:  # not a word after our join
            return self._fail(BotEnd.CONNECTION, self._silence_line("waiting for the game to start"))
        log.info("connected to %s:%s, ai %s", args.host, args.port, self.ai_name)
        try:
            while True:
                try:
                    if early:
                        event = early.pop(0)
                    else:
                        event = await self._next_event()
                except TimeoutError:
                    if self.result is not None:
                        log.info("no <left> after the result: leaving")
                        break
                    return self._fail(BotEnd.CONNECTION, self._silence_line(self._phase()))
                if isinstance(event, Closed):
                    if self.failure is not None:
                        break  # we left (--strict: the team's player failed)
                    if self.result is None:
                        end = BotEnd.PROTOCOL if event.reason.startswith("protocol error") else BotEnd.CONNECTION
                        return self._fail(end, event.reason)
                    break
                self.since_request = 0 if isinstance(event, MoveRequested) else self.since_request + 1
                if self.since_request > MAX_MESSAGES_WITHOUT_REQUEST:
                    return self._fail(
                        BotEnd.PROTOCOL,
                        f"the server sent more than {MAX_MESSAGES_WITHOUT_REQUEST} messages without a move "
                        f"request ({self._phase()}); giving up",
                    )
                try:
                    await self._on_event(event)
                except Exception as exc:  # our own mistake with one message: said, counted, the game goes on
                    self.internal_errors += 1
                    self.lines.say(f"internal error (played on): {printable(f'{type(exc).__name__}: {exc}')}")
                    log.exception("handling %s failed", type(event).__name__)
                if self.failure is not None:
                    break
        except ConnectionError as exc:
            if self.result is None:
                return self._fail(BotEnd.CONNECTION, str(exc))
        finally:
            if self._answer is not None and not self._answer.done():
                self.player.cancel()
                self._answer.cancel()
            await self.conn.close()
            self.player.stop_pondering()  # an engine in a thread; the engine process stops with close()
            if isinstance(self.player, TeamPlayer):
                await self.player.finish(GAME_OVER_WAIT_S)  # the team's on_game_over, a bounded time
            if hasattr(self.player, "close"):
                self.player.close()
        if self.failure is not None:
            return self._fail(*self.failure)
        if self.result is None:
            return self._fail(BotEnd.CONNECTION, "the game ended without a result")
        counts = ", ".join(f"{n} {engine}{self._which(engine)}" for engine, n in self.engines.most_common())
        summary = end_texts(self.result, None, self.conn.names, self.conn.team).summary
        for score in self.result.players:
            if score.reason:
                log.info("result reason (team %s), as the server wrote it: %s", score.team, score.reason)
        self.lines.summary(f"{summary}; moves: {counts or 'none'}{self._troubles()}")
        if self.moves:
            log.info(
                "%d moves, slowest answer %.0f ms, %d fallbacks", self.moves, self.max_elapsed * 1000, self.fallbacks
            )
        self._save_replay()
        if self.fallbacks and self.options.socket_fd is not None:  # a host's own side: it voids the game
            return BotEnd.FALLBACK
        return BotEnd.PLAYED

    async def _next_event(self):
        """The next event; raises TimeoutError after the idle timeout. While we think there is no limit (the
        server waits for us), but once the answer is done, sent or not, the idle timeout applies again."""
        pending = asyncio.ensure_future(self.conn.next_event())
        try:
            answer = self._answer
            if self._wait_limit() is None and answer is not None:
                await asyncio.wait({pending, answer}, return_when=asyncio.FIRST_COMPLETED)
            return await asyncio.wait_for(asyncio.shield(pending), self._wait_limit())
        finally:
            pending.cancel()  # a no-op once it has its event

    def _wait_limit(self) -> float | None:
        """Seconds to wait for the next event: the idle timeout, none while we think, a grace after the result."""
        idle = self.options.idle_timeout
        if self.result is not None:
            return RESULT_GRACE_S if idle is None else min(idle, RESULT_GRACE_S)
        if self._answer is not None and not self._answer.done():
            return None  # the server waits for us; our answer (a Sent event) comes first
        return idle

    def _silence_line(self, phase: str) -> str:
        limit = self.options.idle_timeout
        return f"no message from the server for {limit:g} s ({phase}); giving up (see --idle-timeout)"

    def _phase(self) -> str:
        if self.unanswered:
            return f"after a move request we could not answer: {self.unanswered}"
        if self.conn.state is None:
            return "waiting for the game to start"
        return f"game running, turn {self.conn.state.turn}"

    async def _on_event(self, event) -> None:
        if isinstance(event, Joined):
            log.info("joined room %s", event.room_id)
            self.player.joined(event.room_id)
        elif isinstance(event, Welcome):
            log.info("playing team %s", event.team.name)
        elif isinstance(event, StateChanged):
            if self.recording and len(self.record.states) < MAX_RECORDED_STATES:
                self.record.append(event.state)
            elif self.recording:
                self.recording = False  # said at the end, where the replay would be written
                self.record = GameRecord()
        elif isinstance(event, MoveRequested):
            if self._answer is not None and not self._answer.done():
                log.warning("a new move request while still thinking; answering the new one")
                self.player.cancel()
                self._answer.cancel()
            self._answer = asyncio.create_task(self._respond(event))
        elif isinstance(event, GameOver):
            self.result = event.result
            self.player.game_over(event.result)  # a team's process gets it (waited for before the summary)
        elif isinstance(event, ServerError):
            log.warning("server error: %s", event.message)
            self.player.server_error(event.message)
            if event.lobby:
                self.failure = (BotEnd.PROTOCOL, f"server error: {server_texts.shown(event.message)}")
        elif isinstance(event, Left):
            log.info("left room %s", event.room_id)  # the connection leaves by itself
        elif isinstance(event, Ignored):
            log.info("ignored message: %s", event.reason)

    async def _respond(self, request: MoveRequested) -> None:
        """Answer a move request; an exception of our own in it is one line and a fallback move, never a
        request left unanswered in silence."""
        try:
            await self._answer_request(request)
        except Exception as exc:
            self.internal_errors += 1
            state = request.state
            where = f"turn {state.turn}" if state is not None else "a move request"
            self.lines.say(f"{where}: internal error: {printable(f'{type(exc).__name__}: {exc}')}")
            log.exception("answering the move request failed")
            if state is None or state.is_over or not self.conn.move_pending:
                return
            move = fallback_move(state, self.rng)
            try:
                await self.conn.send_move(move)
            except (ValueError, ConnectionError) as send_exc:
                self.unanswered = str(send_exc)
                return
            self.moves += 1
            self.fallbacks += 1
            self.engines["fallback"] += 1
            self.mistakes.append(f"internal error at turn {state.turn}")

    async def _answer_request(self, request: MoveRequested) -> None:
        state = request.state
        self.unanswered = ""
        if state is None or state.is_over:
            self.unanswered = "no state before it" if state is None else "the game in the last state is over"
            log.error("move request: cannot answer (%s)", self.unanswered)
            return
        if request.for_team is not None and state.team != request.for_team and not self.contradicted:
            self.contradicted = True  # said once per game: a server that keeps doing it is not worth more lines
            self.lines.say(
                f"a move request for team {request.for_team.name}, but the state says "
                f"{state.color.name} (team {state.team.name}) is to move; answering as the state says"
            )
        decision = await decide(
            self.player,
            state,
            request.at,
            think_ms=self.options.move_time,
            hard_ms=self.options.hard_limit,
            rng=self.rng,
            strict=self.options.strict,
        )
        if decision.source.startswith(("fallback", "strict")) and self.team_code:
            await self._team_mistake(state, decision)
            if decision.source == "strict-error":
                return
        if not self.conn.move_pending:
            return  # the game ended meanwhile
        try:
            await self.conn.send_move(decision.move, check=decision.source != "strict-illegal")
        except (ValueError, ConnectionError) as exc:
            self.unanswered = str(exc)
            log.error("could not send the move: %s", exc)
            return
        self.moves += 1
        self.max_elapsed = max(self.max_elapsed, time.monotonic() - request.at)
        if self.options.ponder or self.player.thinks_while_waiting:
            after = state.copy()
            after.play(decision.move)  # legal: the controller checked it
            if not after.is_over:
                self.player.start_pondering(after)
        if decision.source.startswith("fallback"):
            self.fallbacks += 1
        info = getattr(self.player, "last_info", {}) if decision.source == "engine" else {}
        if self.recording and len(self.move_records) < MAX_RECORDS:
            seconds, report = round(decision.elapsed, 6), engine_report(info)
            self.move_records.append(MoveRecord(turn=state.turn, seconds=seconds, source=decision.source, info=report))
        if self.team_code:
            kind = {"engine": "yours", "forced": "forced"}.get(decision.source, decision.source.split("-")[0])
            self.engines[kind] += 1
        else:
            self.engines[info.get("fallback", self.ai_name) if decision.source == "engine" else decision.source] += 1
        details = "".join(
            f", {key} {info[key]}" for key in ("simulations", "kept", "pondered", "depth", "fallback") if key in info
        )
        log.info(
            "turn %d %s: %s (%s, %.0f ms%s)",
            state.turn,
            state.color.name,
            decision.move,
            decision.source,
            decision.elapsed * 1000,
            details,
        )

    def _troubles(self) -> str:
        """What went wrong besides the moves, for the summary: a run with trouble never looks normal."""
        parts = []
        if isinstance(self.player, TeamPlayer):
            if self.player.restarts:
                parts.append(f"your player's process restarted {plural(self.player.restarts, 'time')}")
            if self.player.output.dropped:
                parts.append(f"{self.player.output.dropped} bytes of its output not shown")
        if self.internal_errors:
            parts.append(f"{plural(self.internal_errors, 'internal error')}")
        return "".join(f"; {part}" for part in parts)

    def _which(self, kind: str) -> str:
        """`` (ValueError at turn 14, ...)``: the team player's mistakes, after the count of their kind."""
        if not self.team_code or kind not in ("fallback", "strict"):
            return ""
        shown = ", ".join(self.mistakes[:MISTAKES_SHOWN])
        return f" ({shown}{', ...' if len(self.mistakes) > MISTAKES_SHOWN else ''})"

    async def _team_mistake(self, state, decision) -> None:
        """The team's player got this move wrong: say so on stderr once per kind, count it, and under --strict
        leave the game where a contest client would have crashed."""
        source, detail, turn = decision.source, decision.detail, state.turn
        if source.endswith("timeout"):
            kind, label = "timeout", f"timeout at turn {turn}"
        elif source.endswith("illegal"):
            kind, label = "illegal", f"illegal move at turn {turn}"
        else:  # an exception ("ValueError at turn 14: ..."), an answer that is no move, or still busy
            error = isinstance(self.player, TeamPlayer) and " at turn " in detail.split(": ")[0]
            kind = detail.split(" at turn ")[0] if error else "error"
            label = detail.split(": ")[0] if error else f"no move at turn {turn}"  # "KeyError at turn 9, player.py:3 …"
        self.mistakes.append(label)
        if source == "strict-error":
            self.failure = (BotEnd.PLAYER, f"your player failed at turn {turn} ({detail}); --strict: left the game")
            if self.crash is not None:
                self._fail(*self.failure)
                if isinstance(self.player, TeamPlayer):
                    self.player.close()  # what the team's code started ends with the bot
                self.crash(BotEnd.PLAYER)  # the command's: its lines are written before the process ends
            await self.conn.close()
            return
        if kind in self._shown:
            return
        self._shown.add(kind)
        if source == "strict-illegal":
            what = "sent as it is (--strict: the server judges it)"
        else:
            what = f"sent {decision.move} instead; further {kind} mistakes are counted, not shown"
        self.lines.say(f"turn {turn}: your player: {detail}; {what}")

    def _fail(self, end: BotEnd, reason: str) -> BotEnd:
        reason = printable(" ".join(reason.split()))  # one line, also for multi-line parser messages
        self.lines.say(reason)
        return end

    def _save_replay(self) -> None:
        directory = self.options.save_replay
        if directory is not None and not self.recording:
            self.lines.say(f"replay not written: more than {MAX_RECORDED_STATES} states")
            return
        if directory is None or not self.record.states:
            return
        from blokus.model.replay import new_replay_path, write_replay

        try:
            directory.mkdir(parents=True, exist_ok=True)
            names = self.conn.names  # 27.x states carry no names: the result's, where the state's are empty
            if self.result is not None:
                names = tuple(
                    n if n not in ("", "Unknown") else r  # type: ignore[assignment]
                    for n, r in zip(names, self.result.names, strict=True)
                )
            path = write_replay(
                new_replay_path(directory, names, self.conn.season),
                self.record.states,
                self.result,
                room_id=self.conn.room_id or "",
                names=self.conn.names,
            )
            if self.move_records:
                write_records(path, self.move_records)
            log.info("replay written to %s", path)
        except OSError as exc:
            self.lines.say(f"cannot write replay: {exc}")


def _status_of(player, ready: bool) -> str:
    status = getattr(player, "status", None)
    return status() if callable(status) else "ready" if ready else "loading"


xml_log = logging.getLogger("blokus.xml")
