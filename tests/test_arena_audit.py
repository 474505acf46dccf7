"""Results judged from what happened (issue 61.3): a game counts only if its moves replay from its start and its
points, score, turns and forfeit follow from them (``ai.arena.audit``), for the games of game processes, sites
(a cluster's workers) and programs alike; a game that does not replay is void with the reason."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from blokus.ai.arena.audit import GameReport, judged, replay_fault, report_of
from blokus.ai.arena.game import SKIP, ArenaGame, ForfeitKind, GameSpec
from blokus.ai.arena.match import GameJob, MatchStopped, make_specs, play_game, run_jobs
from blokus.ai.interface import Engine, RandomPlayer
from blokus.ai.search.greedy import GreedyPlayer
from blokus.cli.players import parse_player
from blokus.model.moves import SkipMove
from blokus.model.pieces import Shape
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState, move_of_placement
from blokus.net.external_arena import ExternalGames

CLIENT = Path(__file__).with_name("ext_client.py")


class Illegal(Engine):
    """Plays greedy, then at turn ``at`` a pass on its first move or the same piece twice: an illegal move."""

    name = "illegal"

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at = at
        self.greedy = GreedyPlayer(1)

    def think(self, state: GameState, deadline: float, stop) -> object:
        if state.turn >= self.at:
            return SkipMove(state.color) if state.is_first_move() else state.last_move
        return self.greedy.think(state, deadline, stop)


def game_of(spec: GameSpec, a: Callable[[int], Engine] = RandomPlayer, b: Callable[[int], Engine] = GreedyPlayer):
    return play_game(spec, a, b)


def turn_after(game: ArenaGame, moves: list[int]) -> int:
    """The turn after ``moves`` from the start of ``game`` (2021)."""
    state = GameState.new(SEASON_2021, Shape[game.start_piece])
    for code in moves:
        state.push(SkipMove(state.color) if code == SKIP else move_of_placement(state.color, code))
    return state.turn


@pytest.fixture(scope="module")
def games() -> list[tuple[GameSpec, ArenaGame]]:
    # played out (no adjudication): the rules of a game's end are under test here
    specs = make_specs(2, seed=4, move_time=0.05, season="2021", adjudicate=False)
    specs += make_specs(2, seed=5, move_time=0.05, season="2027", adjudicate=False)
    return [(spec, game_of(spec)) for spec in specs]


def test_an_adjudicated_game_replays_only_with_the_rule_its_moves_make():
    # greedy against random: decided long before the end
    (spec,) = make_specs(1, seed=4, move_time=0.05, season="2021")
    game = game_of(spec)
    assert game.adjudicated.startswith("adjudicated at turn") and replay_fault(spec, game) == ""
    claimed = replace(game, adjudicated=game.adjudicated.replace("points", "points!"))
    assert "its moves make 'adjudicated at turn" in replay_fault(spec, claimed)
    early = replace(game, moves=game.moves[:8], turns=turn_after(game, game.moves[:8]))
    assert "its moves make 'no decided game'" in replay_fault(spec, early)  # 8 moves decide nothing


def test_every_game_of_the_arena_replays(games):
    for spec, game in games:
        assert game.moves and len(game.moves) <= game.turns and replay_fault(spec, game) == ""
        assert judged(spec, game) is game
        GameReport.model_validate(report_of(game))  # its report has the journal's form


def test_the_arenas_opening_turns_replay_and_other_openings_do_not():
    (spec,) = make_specs(1, seed=2, move_time=0.05, opening_turns=4)
    game = game_of(spec)
    assert replay_fault(spec, game) == ""
    other = game_of(replace(spec, seed=spec.seed + 1, opening_turns=4))
    fault = replay_fault(spec, replace(other, index=spec.index))
    assert fault.startswith("move 1 (") and "is not the arena's opening move at turn 0" in fault


@pytest.mark.parametrize(
    ("tamper", "why"),
    [
        (lambda g: replace(g, score=1.0 - g.score), "it says a score of"),
        (lambda g: replace(g, a_points=g.a_points + 1), "points, its moves make"),
        (lambda g: replace(g, turns=g.turns - 1), "turns, its moves make"),
        (lambda g: replace(g, moves=g.moves[:-3], turns=turn_after(g, g.moves[:-3])),
         "without a forfeit, but the game was not over"),
        (lambda g: replace(g, moves=[*g.moves, SKIP]), "comes after the end of the game"),
        (lambda g: replace(g, moves=[g.moves[0], *g.moves]), "move 2 at turn 1 is illegal: "),
        (lambda g: replace(g, moves=[SKIP, *g.moves[1:]]), "move 1 at turn 0 is illegal: "),
        (lambda g: replace(g, start_piece="MONO" if g.start_piece != "MONO" else "DOMINO"), "not the game asked for"),
        (lambda g: replace(g, forfeit="B timeout: 2500 ms at turn 9", forfeit_side="B", forfeit_class="timeout"),
         "a forfeit (timeout) after the end of the game"),
    ],
)  # fmt: skip
def test_a_game_that_does_not_follow_from_its_moves_is_void_with_the_reason(games, tamper, why):
    for spec, game in games[:2]:  # 2021's
        forged = tamper(game)
        verdict = judged(spec, forged)
        assert verdict.void.startswith("it does not replay: ") and why in verdict.void, (spec.season, verdict.void)


def test_a_forfeit_counts_only_for_the_side_to_move_and_its_side_loses():
    for season in ("2021", "2027"):
        spec = make_specs(1, seed=3, move_time=0.05, season=season)[0]
        game = game_of(spec, lambda seed: Illegal(10), GreedyPlayer)  # A plays an illegal move at its turn >= 10
        assert game.forfeit_side == "A" and game.forfeit_class is ForfeitKind.ILLEGAL_MOVE and game.score == 0.0
        assert judged(spec, game) is game
        # the same game credited to B's forfeit, or given to A, does not replay
        theirs = replace(game, forfeit_side="B", score=1.0, forfeit="B" + game.forfeit[1:])
        assert "when the other side was to move" in judged(spec, theirs).void
        assert "A forfeited, yet it says a score of 1 for A" in judged(spec, replace(game, score=1.0)).void
        assert "does not say whose" in judged(spec, replace(game, forfeit_side="")).void
        if season == "2027":  # its result gives the violator 0 points: accepted as well
            assert (
                judged(spec, replace(game, a_points=0)) is not None and not judged(spec, replace(game, a_points=0)).void
            )


def test_a_forfeit_kind_is_one_enum_whose_text_the_reports_keep(games):
    spec, game = games[0]
    assert [kind.value for kind in ForfeitKind] == [
        "illegal move",
        "timeout",
        "crashed",
        "did not join",
        "left",
        "protocol",
    ]
    for kind in ForfeitKind:
        line = json.dumps(report_of(replace(game, forfeit_class=kind)))
        assert f'"forfeit_class": "{kind.value}"' in line  # a journal's, --json's text as before
        assert GameReport.model_validate_json(line).game().forfeit_class is kind  # read back: the member
    with pytest.raises(ValueError):
        GameReport.model_validate_json(json.dumps(report_of(game) | {"forfeit_class": "bored"}))


def test_a_malformed_report_is_void_and_void_games_stay_void(games):
    spec, game = games[0]
    assert judged(spec, replace(game, score=7)).void == "its report is malformed: score: a score is 0, 0.5 or 1, not 7"
    assert judged(spec, replace(game, moves=[10**6])).void.startswith("its report is malformed: moves.0: ")
    assert judged(spec, "a game").void == "the report is no game (str)"
    void = ArenaGame(spec.index, spec.start_piece, spec.a_team, 0, 0, 0.5, 0, void="B did not join")
    assert judged(spec, void) is void


class ForgingSite:
    """A ``GameSite`` (a cluster) whose worker hands back what ``forge`` makes of each game."""

    def __init__(self, forge: Callable[[ArenaGame], object]) -> None:
        self.forge = forge

    def run(self, jobs: list[GameJob], finished: Callable[[ArenaGame], bool]) -> None:
        for job in jobs:
            if finished(self.forge(job())):  # type: ignore[arg-type]
                return

    def close(self) -> None:
        pass


def test_run_jobs_voids_a_forged_result_of_a_site_and_stops_at_a_game_it_did_not_ask_for():
    specs = make_specs(2, seed=6, move_time=0.05)
    work = [GameJob(spec, RandomPlayer, GreedyPlayer) for spec in specs]
    honest = run_jobs(work, site=ForgingSite(lambda g: g))
    assert [g.void for g in honest] == ["", ""]
    credited = run_jobs(
        work, site=ForgingSite(lambda g: replace(g, score=1.0, a_points=g.b_points, b_points=g.a_points))
    )
    assert all(g.void.startswith("it does not replay: it says ") for g in credited)
    with pytest.raises(MatchStopped) as stopped:
        run_jobs(work, site=ForgingSite(lambda g: replace(g, index=g.index + 100)))
    assert stopped.value.results == [] and "none of the games asked for" in stopped.value.reason


def test_a_programs_game_on_the_embedded_server_replays(tmp_path):
    (spec,) = make_specs(1, seed=7, move_time=0.2)
    runner = ExternalGames(parse_player(f"cmd:{sys.executable} {CLIENT}"), parse_player("random"), str(tmp_path))
    (game,) = run_jobs([GameJob(spec, runner=runner)])
    assert not game.void and game.moves and replay_fault(spec, game) == "", game.void
