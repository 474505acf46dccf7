"""Adjudication (issue 65 item 2): a game ends once its winner can no longer change, and only then."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from blokus.ai.arena.adjudication import decided, most_to_gain
from blokus.cli.arena import main as arena_main
from blokus.model.moves import SkipMove
from blokus.model.pieces import Color, Team
from blokus.model.season import SEASON_2021, SEASON_2027
from blokus.model.state import GameState, move_of_placement

CLIENT = Path(__file__).with_name("ext_client.py")


def _random_game(seed: int, season=SEASON_2021) -> list[GameState]:
    """Every position of a game where team ONE prefers big pieces and team TWO plays at random (lopsided)."""
    rng = random.Random(seed)
    state = GameState.new(season=season, rng=rng)
    states = [state.copy()]
    while not state.is_over:
        ids = state.legal_placements()
        if len(ids) == 0:
            state.play(SkipMove(Color(state.color)))
        else:
            pick = max(ids, key=lambda p: (move_of_placement(Color(state.color), int(p)).shape.size, rng.random()))
            if state.team is Team.TWO:
                pick = ids[rng.randrange(len(ids))]
            state.play(move_of_placement(Color(state.color), int(pick)))
        states.append(state.copy())
    return states


def _winner(state: GameState) -> Team | None:
    one, two = state.team_points(Team.ONE), state.team_points(Team.TWO)
    return Team.ONE if one > two else Team.TWO if two > one else None


def test_once_decided_the_winner_never_changes_and_the_bound_holds() -> None:
    adjudicated = 0
    for seed, season in [(s, SEASON_2021 if s % 2 else SEASON_2027) for s in range(12)]:
        states = _random_game(seed, season)
        final = states[-1]
        assert decided(final) == ""  # a finished game is not adjudicated: it is over
        for state in states[:-1]:
            for color in range(4):  # the bound: no colour gains more than it says
                assert final.points(color) - state.points(color) <= most_to_gain(state, color)
            why = decided(state)
            if why:
                assert _winner(state) == _winner(final) is not None, why
                assert why.startswith(f"adjudicated at turn {state.turn}: {_winner(state).name} has ")
        first = next((s for s in states if decided(s)), None)
        if first is not None:
            adjudicated += 1
            assert first.turn < final.turn
    assert adjudicated >= 6  # lopsided games are decided before their end


def test_a_colour_out_of_the_game_or_with_an_empty_hand_gains_nothing() -> None:
    state = GameState.new(season=SEASON_2021, rng=random.Random(1))
    assert most_to_gain(state, 0) == 89 + 15 + 5  # every piece in hand, the monomino among them
    state.valid &= ~1  # BLUE out
    assert most_to_gain(state, 0) == 0
    assert decided(state) == ""  # nobody has a point yet: nothing is decided


def test_the_arena_adjudicates_by_default_in_process_and_on_the_server(tmp_path: Path, capsys) -> None:
    runs = {}
    for name, argv in [
        ("on", []),
        ("off", ["--no-adjudication"]),
        ("cmd", []),
    ]:
        out = tmp_path / f"{name}.json"
        a = f"cmd:{sys.executable} {CLIENT}" if name == "cmd" else "greedy"
        base = [a, "random", "--games", "2", "--season", "2021", "--move-time", "100", "--quiet", "--seed", "3"]
        assert arena_main([*base, *argv, "--json", str(out)]) == 0
        runs[name] = json.loads(out.read_text())["games"]
    text = capsys.readouterr().out
    assert "2 of 2 games adjudicated" in text
    on, off = runs["on"], runs["off"]
    assert all(g["adjudicated"].startswith("adjudicated at turn") for g in on)
    assert not any(g["adjudicated"] for g in off)
    assert [g["score"] for g in on] == [g["score"] for g in off]  # the same winners ...
    assert all(a["turns"] < b["turns"] for a, b in zip(on, off, strict=True))  # ... sooner
    assert all(g["adjudicated"] and not g["forfeit"] and not g["void"] for g in runs["cmd"])  # a program's game too
