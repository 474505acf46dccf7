"""Asking any ``Player`` for a move under a clock, with one fallback (used by the bot and the TUI).

The official server discards a move that arrives more than 2000 ms after it issued the move request
(``docs/spec/rules.md`` §13). The clock here starts at the *arrival* of the move request (``received_at``, a
``time.monotonic()`` value taken when the bytes were read from the socket):

* the player thinks until ``received_at + think`` and is then asked to stop (``Player.cancel``) and to
  return the best move found so far;
* an asyncio watchdog waits no longer than ``received_at + hard``; if the player has not answered by
  then, its answer is abandoned and a fallback legal move is used;
* the answer is validated with the rule engine before it is sent; an illegal answer (or an engine
  exception) is replaced by the fallback.

With ``strict`` (a team's ``py:`` player in the arena, ``blokus bot --strict``) nothing is replaced: the
answer is judged as the contest would judge it — a late one is still sent when it comes, an illegal move is
sent as it is (``strict-illegal``), and an exception or an answer that is no move at all is reported as
``strict-error`` (a contest client would crash: the bot leaves the game).

The fallback (a placement of the largest available piece) is computed *before* the player starts,
so that it is ready even on a loaded machine. The player runs in a worker process
(``ai.players.engine_process``, the bot's default) or a worker thread (``Engine.choose_move``), so the event
loop — and with it the socket reader — is never blocked.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import dataclass

import numpy as np

from blokus.ai.interface import EngineError, Player, fallback_move
from blokus.model import placements as P
from blokus.model.moves import Move, NotAMove, SkipMove, as_move
from blokus.model.pieces import SHAPES
from blokus.model.state import GameState, move_of_placement

log = logging.getLogger(__name__)

DEFAULT_THINK_MS = 1600
# The watchdog's cut-off after the arrival of the move request. The guarantee is "never later than
# 1900 ms"; 100 ms of it are kept for a late wake-up of the event loop on a loaded machine.
HARD_CUTOFF_MS = 1800
STOP_MARGIN_MS = 150  # think time is capped at cut-off minus this


@dataclass(frozen=True)
class Decision:
    move: Move
    # "engine", "fallback-timeout", "fallback-illegal", "fallback-error", "forced"; strict: "strict-illegal"
    # (``move`` is the illegal move), "strict-error" (``move`` is the fallback, not to be sent)
    source: str
    elapsed: float  # seconds from the arrival of the request to the decision
    detail: str = ""


_SIZES = np.array([shape.size for shape in SHAPES], dtype=np.int8)


def _largest_piece(ids: np.ndarray, rng: random.Random | None) -> int:
    """A placement of the largest available shape (the fallback when the engine is too slow): better
    than a random one, and computed in well under a millisecond."""
    sizes = _SIZES[P.P_SHAPE[ids]]
    best = ids[sizes == sizes.max()]
    return int(best[(rng or random).randrange(len(best))])


def warm_up() -> None:
    """Run the first-call paths once (numpy move generation, message models), so that the first move
    request of a game does not pay for them."""
    from blokus.model import convert
    from blokus.model.messages import to_xml
    from blokus.model.pieces import Shape

    state = GameState.new(start_piece=Shape.PENTO_L)
    move = fallback_move(state, random.Random(0))
    check_move(state, move)
    convert.parse_xml(to_xml(convert.state_to_message(state, "warm-up")))
    convert.parse_xml(to_xml(convert.move_to_message(move, "warm-up")))


def check_move(state: GameState, move: object) -> str | None:
    """Why ``move`` must not be sent for ``state`` (None if it is legal). A move with numpy integers or ints
    for its enums is judged as its plain form (``model.moves.as_move``), which is what must be sent."""
    try:
        move = as_move(move)
    except NotAMove as exc:
        return str(exc)
    if state.is_over:
        return "the game is over"
    mistake = state.validate(move)
    if mistake is not None:
        return f"{mistake.name}: {state.refusal_text(move, mistake)}"
    if isinstance(move, SkipMove) and state.has_legal_move():
        # Legal, but never skip while a placement exists (it only loses points).
        return "skip although a placement exists"
    return None


async def decide(
    player: Player,
    state: GameState,
    received_at: float,
    *,
    think_ms: float = DEFAULT_THINK_MS,
    hard_ms: float = HARD_CUTOFF_MS,
    rng: random.Random | None = None,
    strict: bool = False,
) -> Decision:
    """The move to send for ``state`` (whose colour is to move), within the time limits above."""
    # leave the engine time to return its best move between the stop signal and the cut-off
    think_ms = max(1.0, min(think_ms, hard_ms - min(STOP_MARGIN_MS, hard_ms / 4)))
    ids = state.legal_placements()
    if len(ids) == 0:  # nothing to think about
        fallback: Move = SkipMove(state.color)
        return Decision(fallback, "forced", time.monotonic() - received_at, "no placement exists")
    fallback = move_of_placement(state.color, _largest_piece(ids, rng))
    if len(ids) == 1:
        return Decision(fallback, "forced", time.monotonic() - received_at, "only one placement")

    deadline = received_at + think_ms / 1000
    cutoff = received_at + hard_ms / 1000
    task = asyncio.ensure_future(player.choose_move(state.copy(), deadline))
    source, detail, move = "engine", "", None
    try:
        done, _ = await asyncio.wait({task}, timeout=max(0.0, deadline - time.monotonic()))
        if not done:
            player.cancel()  # time is up: the engine returns its best move so far
            # strict: no cut-off, a late answer is sent late (the server judges it)
            done, _ = await asyncio.wait({task}, timeout=None if strict else max(0.0, cutoff - time.monotonic()))
        if not done:
            source, detail = "fallback-timeout", f"no answer within {hard_ms:.0f} ms"
            task.add_done_callback(_discard_result)
        elif task.exception() is not None:
            exc = task.exception()
            source = "strict-error" if strict else "fallback-error"
            detail = str(exc) if isinstance(exc, EngineError) else f"{type(exc).__name__}: {exc}"
        else:
            try:  # numpy integers, ints for enums: the plain move, which is what is judged and sent
                move = as_move(task.result(), f"{player.name} answered")
            except NotAMove as exc:
                source, detail = "strict-error" if strict else "fallback-error", str(exc)
            else:
                problem = check_move(state, move)
                if problem is not None:
                    detail = f"{move}: {problem}"
                    if strict:
                        return Decision(move, "strict-illegal", time.monotonic() - received_at, detail)
                    source = "fallback-illegal"
                    move = None
    except asyncio.CancelledError:
        player.cancel()
        task.cancel()
        raise
    if move is None:
        if not strict:
            log.warning("using fallback move (%s)", detail)
        move = fallback
    return Decision(move, source, time.monotonic() - received_at, detail)


def _discard_result(task: asyncio.Future) -> None:
    if not task.cancelled():
        task.exception()  # retrieve it so asyncio does not log "exception was never retrieved"
