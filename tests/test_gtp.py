"""``ai.players.gtp``: the arena player that drives an external GTP engine (here a small fake of Pentobi's)."""

from __future__ import annotations

import os
import stat
import sys
import threading
from pathlib import Path

import pytest

from blokus.ai import make_player
from blokus.ai.arena.match import GameSpec, format_table, play_game, summary
from blokus.ai.players.gtp import GtpPlayer, cell_name, mask_text, parse_cells
from blokus.model import placements as P
from blokus.model.moves import SkipMove
from blokus.model.pieces import Shape
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState, placement_of

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def fake_engine(tmp_path, monkeypatch) -> tuple[str, Path]:
    log = tmp_path / "gtp.log"
    script = tmp_path / "fake-gtp"
    script.write_text(f"#!/bin/sh\nexec '{sys.executable}' '{ROOT / 'tests' / 'fake_gtp.py'}' \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("FAKE_GTP_LOG", str(log))
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return str(script), log


def test_cell_names_follow_gtp():
    assert cell_name(0) == "a20"  # our (0, 0) is the top left
    assert cell_name(19) == "t20"
    assert cell_name(19 * 20) == "a1"
    mask = P.bit(0, 0) | P.bit(1, 0) | P.bit(1, 1)
    assert parse_cells(mask_text(mask)) == mask
    assert parse_cells("a20,b20,b19") == mask


def test_a_whole_game_against_the_external_engine(fake_engine):
    path, log = fake_engine
    spec = GameSpec(0, "PENTO_V", 0, 7, 0.2, opening_turns=4, season="2021")
    result = play_game(spec, lambda seed: make_player("greedy", seed), lambda seed: make_player(f"gtp:{path}:3", seed))
    assert result.forfeit == ""
    assert result.b_times, "the external engine moved"
    sent = log.read_text().splitlines()
    assert sent[0].startswith("loadsgf ")  # the round-1 placements, chosen by the arena
    assert any(line.startswith("genmove 2") for line in sent) and any(line.startswith("play 1 ") for line in sent)
    assert sent[-1] == "quit"  # the engine was closed after the game


def _engine_move_after_five_placements(path: str) -> tuple[GameState, object, GtpPlayer]:
    """The engine's answer (YELLOW to move) after five placements; the engine is closed again."""
    state = GameState.new(SEASON_2021, Shape.PENTO_L)
    for _ in range(5):
        state.push_placement(int(state.legal_placements()[0]))
    player = GtpPlayer(path, 5, seed=1)
    try:
        move = player.choose_move_sync(state)
    finally:
        player.close()
    return state, move, player


def test_the_engine_gets_the_opening_as_sgf(fake_engine):
    path, log = fake_engine
    state, move, _ = _engine_move_after_five_placements(path)
    assert state.is_legal(move)
    first = log.read_text().splitlines()[0]
    sgf = Path(first.split()[1])
    assert not sgf.exists()  # the temporary file is removed again


def test_positions_of_different_games_are_loaded_afresh(fake_engine):
    """Scripts ask one engine about positions of many games: each is handed over whole, nothing of the
    previous one stays on the engine's board."""
    path, log = fake_engine
    player = GtpPlayer(path, 5, seed=1)
    try:
        for start, steps in ((Shape.PENTO_L, 9), (Shape.PENTO_V, 6)):
            state = GameState.new(SEASON_2021, start)
            for _ in range(steps):
                ids = state.legal_placements()
                state.push_placement(int(ids[len(ids) // 2]))
            player.load_position(state)
            move = player.choose_move_sync(state)
            assert state.is_legal(move), f"{move} after {steps} placements from {start.name}"
    finally:
        player.close()
    sent = log.read_text().splitlines()
    assert sum(line.startswith("loadsgf ") for line in sent) == 2
    assert not any(line.startswith("play ") for line in sent)  # the second position was not told as moves


def test_a_pass_with_placements_left_is_replaced_by_a_move(fake_engine, monkeypatch):
    """Pentobi sometimes passes although its colour can move (a colour started in a corner its rules do
    not give it); the arena then plays the greedy move for it rather than a free turn for the opponent."""
    path, log = fake_engine
    monkeypatch.setenv("FAKE_GTP_PASS", "1")
    state, move, player = _engine_move_after_five_placements(path)
    assert not isinstance(move, SkipMove) and state.is_legal(move)
    assert player.substitutes == 1
    told = [line for line in log.read_text().splitlines() if line.startswith("play 2 ")]
    assert told == [f"play 2 {mask_text(P.MASKS[placement_of(move)])}"]  # the engine's board keeps up


def test_the_arena_counts_the_substituted_moves(fake_engine, monkeypatch):
    path, _ = fake_engine
    monkeypatch.setenv("FAKE_GTP_PASS", "1")
    spec = GameSpec(0, "PENTO_V", 0, 7, 0.2, opening_turns=4, season="2021")
    result = play_game(spec, lambda seed: make_player("greedy", seed), lambda seed: make_player(f"gtp:{path}:3", seed))
    assert result.forfeit == "" and 0 < result.substitutes <= len(result.b_times)
    table = format_table(summary([result], "greedy", "gtp"))
    assert f"{result.substitutes} moves the external engine did not find" in table


@pytest.mark.parametrize("season", ["2021", "2027"])
def test_with_the_opening_for_the_gtp_side_only_our_side_makes_its_own_first_moves(fake_engine, season):
    """``--opening-for gtp``: the arena draws the engine's first-round moves (it does not know the start piece),
    our side plays its own (its book); the game replays by that rule and not by the other."""
    from dataclasses import replace

    from blokus.ai.arena.audit import replay_fault
    from blokus.ai.search.greedy import GreedyPlayer
    from blokus.model.season import season_named
    from blokus.model.state import move_of_placement

    path, log = fake_engine
    spec = GameSpec(0, "PENTO_V", 1, 7, 0.2, season=season, opening_turns=4, opening_sides=(False, True))
    result = play_game(spec, lambda seed: make_player("greedy", seed), lambda seed: make_player(f"gtp:{path}:3", seed))
    assert result.forfeit == "" and replay_fault(spec, result) == ""
    # by the rule of both sides drawn, a first-round move differs from the draw (A's own, then the draws' order)
    fault = replay_fault(replace(spec, opening_sides=(True, True)), result)
    assert fault.split()[:2] in (["move", "2"], ["move", "3"], ["move", "4"]) and "the arena's opening move" in fault
    start = GameState.new(season_named(season), Shape.PENTO_V)
    start.push(move_of_placement(start.color, result.moves[0]))  # BLUE: the arena's draw for the engine
    ours = GreedyPlayer(1).think(start.copy(), float("inf"), threading.Event())
    assert result.moves[1] == placement_of(ours)  # YELLOW's first move is greedy's own
    asked = [line.split()[0] for line in log.read_text().splitlines() if line.startswith(("genmove", "loadsgf"))]
    assert asked[0] == "loadsgf" and asked.count("genmove") == len(result.b_times)  # no genmove in round 1


def test_bad_names_and_missing_engines():
    with pytest.raises(ValueError, match="gtp:PATH:LEVEL"):
        make_player("gtp:nolevel")
    player = make_player("gtp:/nonexistent/engine:5", 1)
    state = GameState.new(SEASON_2021, Shape.PENTO_L)
    for _ in range(4):
        state.push_placement(int(state.legal_placements()[0]))
    with pytest.raises(RuntimeError, match="cannot start"):
        player.choose_move_sync(state)


def test_the_arena_says_whose_opening_it_draws_and_needs_a_gtp_player_for_it(fake_engine, capsys):
    from blokus.cli.arena import main as arena_main

    path, _ = fake_engine
    args = ["--games", "2", "--season", "2021", "--move-time", "100", "--quiet", "--opening-for", "gtp"]
    assert arena_main(["greedy", f"gtp:{path}:3", *args]) == 0
    out = capsys.readouterr().out
    assert "opening turns 4 (the gtp: player's)" in out and "2 games" in out
    with pytest.raises(SystemExit) as exc:
        arena_main(["greedy", "random", *args])
    assert exc.value.code == 2 and "--opening-for gtp needs a gtp: player" in capsys.readouterr().err
