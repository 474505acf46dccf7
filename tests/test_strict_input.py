"""Strict input (issue 46.7): integers as the official server's Java reads them, one position per placement,
every invisible or control character escaped, a replay file holding one game."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from blokus.model import convert
from blokus.model.moves import SkipMove
from blokus.model.pieces import Shape
from blokus.model.replay import UnreadableReplay, read_game, write_replay
from blokus.model.season import season_named
from blokus.model.state import GameState
from blokus.model.text import printable

ROOT = Path(__file__).resolve().parent.parent
MOVE = (
    '<room roomId="r"><data class="sc.plugin2021.SetMove"><piece color="BLUE" kind="MONO" rotation="NONE" '
    'isFlipped="false">{positions}</piece></data></room>'
)


def _move(positions: str):
    return convert.parse_xml(MOVE.format(positions=positions))


@pytest.mark.parametrize("text,value", [("0", 0), ("19", 19), ("+7", 7), ("-0", 0), ("007", 7)])
def test_integers_java_reads_are_read(text, value):
    message = _move(f'<position x="{text}" y="1"/>')
    assert message.data.piece.position.x == value


@pytest.mark.parametrize("text", ["0_0", "0.0", " 0 ", "0 ", "\u0661", "\uff10", "", "+", "--1", "1e1", "2147483648"])
def test_any_other_integer_spelling_is_a_malformed_message(text):
    assert "not an integer" in str(_move(f'<position x="{text}" y="1"/>'))


@pytest.mark.parametrize("count", [0, 2, 200])
def test_a_placement_has_exactly_one_position(count):
    message = _move('<position x="0" y="0"/>' * count)
    assert f"a piece has exactly one <position>, not {count}" in str(message)


@pytest.mark.parametrize(
    "ch", ["\x00", "\x1b", "\x7f", "\x85", "\x9b", "\u00ad", "\u061c", "\u200b", "\u200d", "\u200e", "\u202e",
           "\u2066", "\u2069", "\u2060", "\u2028", "\ufeff", "\u3164", "\u115f", "\u034f", "\U000e0001"]
)  # fmt: skip
def test_printable_escapes_every_control_bidi_and_invisible_character(ch):
    shown = printable(f"a{ch}b")
    assert shown.startswith("a\\") and shown.endswith("b") and ch not in shown


def _game(season: str, piece: Shape, length: int = 30) -> list[GameState]:
    state = GameState.new(season_named(season), piece)
    states, rng = [state.copy()], random.Random(1)
    while not state.is_over and len(states) < length:
        moves = list(state.legal_moves())
        state.play(rng.choice(moves) if moves else SkipMove(state.color))
        states.append(state.copy())
    return states


def test_a_replay_of_two_games_is_refused_with_one_line(tmp_path: Path):
    one, other = _game("2021", Shape.PENTO_L), _game("2027", Shape.PENTO_X)
    path = write_replay(tmp_path / "two.xml", one + other, None)
    with pytest.raises(UnreadableReplay, match="holds more than one game: a 2021 game is followed by a 2027 game"):
        read_game(path)
    again = write_replay(tmp_path / "again.xml", one + one, None)
    with pytest.raises(UnreadableReplay, match="holds more than one game: turn 0 follows turn 29 at state 31"):
        read_game(again)
    assert len(read_game(write_replay(tmp_path / "one.xml", one, None)).states) == len(one)
    for command in ("analyse", "replay"):
        done = subprocess.run(
            [sys.executable, "-m", "blokus", command, str(path)], capture_output=True, text=True, cwd=ROOT, timeout=120
        )
        assert done.returncode != 0 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and "holds more than one game" in done.stderr
