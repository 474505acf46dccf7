"""``ai.search.mcts``: the Monte-Carlo tree search over the compiled engine."""

from __future__ import annotations

import dataclasses
import itertools
import random
import threading

import numpy as np
import pytest

import blokus.ai.search.mcts as mcts
import blokus.ai.search.mcts.player
from blokus.ai.search.mcts import MctsPlayer, R
from blokus.ai.search.mcts.buffers import Playout, Root, Sim
from blokus.ai.search.mcts.kernels import _end_playout_turn, _min_size, _playout_move, seed_rng
from blokus.ai.search.tables import TABLES
from blokus.model import fast as F
from blokus.model.fast import M_VALID, NCELLS, P_CELLS, P_SHAPE, SIZES
from blokus.model.pieces import Shape
from blokus.model.season import SEASON_2021, SEASONS
from blokus.model.state import GameState, placement_of

P_SIZE = SIZES[P_SHAPE]  # squares per placement
ONE_THREAD = mcts.MctsParams(threads=1)  # the tests that read ``player.tree``: the whole search is in it
ROOT_PARALLEL = mcts.MctsParams(threads=2, shared_tree=False)  # a tree a thread


@pytest.fixture(scope="module", autouse=True)
def compiled():
    mcts.warm_up()  # compiles on the first run (numba caches it), blocking: the tests need the real search
    mcts.KERNELS.ready.set()


def _position(turns: int, seed: int = 1, season=None) -> GameState:
    rng = random.Random(seed)
    state = GameState.new(season or SEASON_2021, Shape.PENTO_W)
    while state.turn < turns and not state.is_over:
        ids = state.legal_placements()
        state.push_placement(int(ids[rng.randrange(len(ids))]))
    return state


@pytest.mark.parametrize("season", SEASONS.values(), ids=SEASONS.keys())
def test_a_whole_game_of_legal_moves(season):
    players = [MctsPlayer(seed=1, max_simulations=30), MctsPlayer(seed=2, max_simulations=30)]
    state = GameState.new(season, Shape.PENTO_X if season.year == 2027 else Shape.PENTO_T)
    while not state.is_over:
        move = players[state.color % 2].choose_move_sync(state, move_time=5.0)
        state.play(move)  # raises on an illegal move (the season's first-move rule included)
    assert state.turn > 40


def test_fixed_budget_is_reproducible():
    state = _position(20)
    a = MctsPlayer(seed=5, max_simulations=60).choose_move_sync(state, move_time=30.0)
    b = MctsPlayer(seed=5, max_simulations=60).choose_move_sync(state, move_time=30.0)
    assert a == b


def test_the_search_roots_at_the_positions_own_engine(monkeypatch):
    """One position: a search from a position that has its compiled engine takes it (a snapshot of it), building no
    FastState from the model for the move (the position pushes and pops that engine along the game)."""
    mcts.prepare(None)
    state = _position(12)
    assert state.compiled() is state.compiled()  # the position's own, in step
    built = []
    real = F.FastState.from_state
    monkeypatch.setattr(F.FastState, "from_state", classmethod(lambda cls, s: built.append(s) or real(s)))
    player = MctsPlayer(seed=5, max_simulations=60)
    for _ in range(3):
        move = player.choose_move_sync(state, move_time=30.0)
        state.play(move)
    assert built == [] and player.workers[0].searched is not state.compiled()


def _within(seconds: float, call):
    """``call()`` in a thread, waited for at most ``seconds`` (a search that does not stop fails, not hangs)."""
    result = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the search did not stop"
    return result[0]


def test_stops_at_the_deadline_and_on_cancel():
    state = _position(12)
    ticks = itertools.count()

    def clock() -> float:  # a fake clock: 10 ms a look, whatever the machine's load
        return next(ticks) * 0.01

    player = MctsPlayer(seed=3, clock=clock)
    player.cpu_clock = clock  # the thinking thread's share of the CPU, on the same clock: all of it
    move = _within(120, lambda: player.choose_move_sync(state, move_time=2.0))
    assert state.is_legal(move) and player.last_info["simulations"] > 0
    assert player.last_info["time"] <= 2.0
    # a clock that never moves: only the stop flag ends the search
    player = MctsPlayer(seed=3, clock=lambda: 0.0)
    stop = threading.Event()
    stop.set()
    move = _within(120, lambda: player.think(state.copy(), 60.0, stop))
    assert state.is_legal(move)


def test_answers_with_the_lookahead_while_compiling(monkeypatch):
    from blokus.ai.search.compiled import Kernels

    monkeypatch.setattr(blokus.ai.search.mcts.player, "KERNELS", Kernels("blokus.ai.search.mcts"))  # not ready
    monkeypatch.setattr(blokus.ai.search.mcts.player, "prepare", lambda wait=0.0: False)
    state = _position(8)
    player = MctsPlayer(seed=4)
    move = player.choose_move_sync(state, move_time=0.2)
    assert state.is_legal(move)
    assert player.last_info["fallback"] == "lookahead (compiling)"


def test_the_default_players_do_not_import_numba():
    """numba costs about a second at start-up: only the players that use it import it."""
    import subprocess
    import sys

    code = (
        "import sys, blokus.ai as ai; ai.make_player('lookahead'); ai.make_player('level2'); "
        "print('numba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_the_tui_with_the_mcts_opponent_loads_numba_only_when_a_move_is_asked_for():
    """`blokus --opponent mcts`: the first frame does not wait for the engine; the first move request builds it."""
    import subprocess
    import sys

    code = """
import asyncio, sys, threading
from blokus.model.pieces import Team
from blokus.cli.play import play_options
from blokus.tui.launch import build_local_app

async def main():
    app = build_local_app(play_options(["--season", "2021", "--opponent", "mcts", "--seed", "1"]))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.main_screen
        player = screen.ai.players[Team.TWO]
        # the first frame is up without the opponent's engine (the first ghost's hint may be loading numba meanwhile)
        print(player._player is None, type(player).__name__)
        state = screen.session.state
        move = player.think(state.copy(), player.clock() + 0.3, threading.Event())  # the first move asked for
        if player._loader is not threading.current_thread():  # not built here (the first ghost's hint may have)
            player._loader.join()
        print(state.validate(move) is None, "numba" in sys.modules, type(player._player).__name__)

asyncio.run(main())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "LazyCompiledPlayer", "True", "True", "MctsPlayer"], out


def test_the_lazy_mcts_player_plays_as_the_mcts_player():
    from blokus.ai import LazyCompiledPlayer, make_player

    state = GameState.new(SEASON_2021, Shape.PENTO_L)
    for _ in range(6):
        state.push_placement(int(state.legal_placements()[0]))
    lazy = make_player("mcts", 5)
    assert isinstance(lazy, LazyCompiledPlayer)
    lazy.think(state.copy(), lazy.clock() + 0.2, threading.Event())  # ai.search.mcts is imported: builds it at once
    assert isinstance(lazy._player, MctsPlayer)
    lazy._player.max_simulations = 60  # a fixed budget: reproducible ...
    lazy._player.params = mcts.MctsParams(reuse=False)  # ... from a fresh tree (the timed search's is not)
    fresh = MctsPlayer(seed=5, max_simulations=60, params=mcts.MctsParams(reuse=False))
    fresh.think(state.copy(), fresh.clock() + 0.2, threading.Event())  # the same history of random draws
    assert lazy.choose_move_sync(state, move_time=30.0) == fresh.choose_move_sync(state, move_time=30.0)
    assert "simulations" in lazy.last_info


def test_the_move_model_guides_a_whole_game_of_legal_moves():
    params = mcts.MctsParams(move_prior=0.4, score_z=0.3)
    players = [MctsPlayer(seed=1, max_simulations=40, params=params), MctsPlayer(seed=2, max_simulations=40)]
    state = GameState.new(SEASON_2021, Shape.PENTO_T)
    while not state.is_over:
        state.play(players[state.color % 2].choose_move_sync(state, move_time=5.0))
    assert state.turn > 40
    # the root's moves carry the model's probabilities
    tree = players[0].tree
    first, count = int(tree.node_first[0]), int(tree.node_count[0])
    assert count == 0 or abs(float(tree.edge_p[first : first + count].sum()) - 1.0) < 1e-4


def test_pruning_keeps_the_root_whole_and_cuts_below_it():
    params = mcts.MctsParams(prune=0.05)
    state = _position(36)  # after the pentomino-first rounds: the root keeps every legal placement
    player = MctsPlayer(seed=4, max_simulations=400, params=params)
    move = player.choose_move_sync(state, move_time=30.0)
    assert state.is_legal(move)
    tree = player.tree
    assert int(tree.node_count[0]) == len(state.legal_placements())
    cut = 0
    for node in range(1, int(tree.counters[0])):
        first, count = int(tree.node_first[node]), int(tree.node_count[node])
        if first < 0 or count == 0:
            continue
        p = tree.edge_p[first : first + count]
        assert float(p.min()) >= 0.05 * float(p.max()) - 1e-6
        cut += 1
    assert cut > 10


def _nearest_centre(pid: int) -> float:
    from blokus.ai.search.tables import CENTRE_DIST

    return min(float(CENTRE_DIST[q]) for q in P_CELLS[pid] if q < NCELLS)


def _expected_moves(state: GameState, cut: float, pieces: int) -> set[int]:
    """The moves a node of ``state`` should list without the model's pruning: the legal placements, big pieces
    early (``_min_size``, tested apart), and with ``cut`` > 0, while the board holds at most ``pieces`` pieces and
    the colour placed its first, those within ``cut`` as near the centre as the nearest (the rule written out)."""
    from blokus.model.fast import FastState

    color = int(state.color)
    legal = state.legal_placements().tolist()
    min_size = _min_size(TABLES, FastState.from_state(state).m, color, mcts.MctsParams().vector())
    moves = [p for p in legal if P_SIZE[p] >= min_size] or legal
    if cut > 0 and _on_board(state) <= pieces and not state.is_first_move(state.color) and moves:
        best = min(_nearest_centre(p) for p in moves)
        moves = [p for p in moves if _nearest_centre(p) <= best + cut]
    return set(moves)


def _on_board(state: GameState) -> int:
    """The pieces on the board, of every colour."""
    from blokus.model.pieces import COLORS

    return sum(21 - len(state.pieces_left(c)) for c in COLORS)


def _expanded_nodes(tree, state: GameState):
    """Each expanded node of ``tree`` searched from ``state``: (node, its position, the placements its edges list)."""
    stack = [(0, state.copy())]
    while stack:
        node, position = stack.pop()
        first, count = int(tree.node_first[node]), int(tree.node_count[node])
        if first < 0 or position.is_over:
            continue
        edges = {int(tree.edge_pid[e]): int(tree.edge_child[e]) for e in range(first, first + count)}
        yield node, position, set(edges)
        for pid, child in edges.items():
            if child >= 0:
                below = position.copy()
                below.push_placement(pid)
                stack.append((child, below))


@pytest.mark.parametrize("season", SEASONS.values(), ids=SEASONS.keys())
def test_the_opening_keeps_only_the_moves_nearest_the_centre(season):
    # ``centre_cut`` (Pentobi's opening rule): every node of the tree, the root included, lists exactly the
    # moves the rule leaves (legal ones only), cut while the board holds at most ``centre_pieces`` pieces and
    # whole after that; with the cut off, the same position lists every big piece
    cut, pieces = 0.3, 12
    state = _position(8, seed=3, season=season)
    params = mcts.MctsParams(threads=1, prune=0.0, centre_cut=cut, centre_pieces=pieces, partner_pieces=0)
    player = MctsPlayer(seed=4, max_simulations=1500, params=params)
    assert state.is_legal(player.choose_move_sync(state, move_time=30.0))
    cut_nodes = whole_nodes = 0
    for node, position, moves in _expanded_nodes(player.tree, state):
        assert int(player.tree.node_turn[node, 0]) & 3 == int(position.color) or node == 0
        assert moves == _expected_moves(position, cut, pieces)
        if len(moves) < len(_expected_moves(position, 0.0, pieces)):
            cut_nodes += 1
        elif _on_board(position) > pieces:
            whole_nodes += 1
    assert cut_nodes > 10 and whole_nodes > 3
    off = mcts.MctsParams(threads=1, centre_cut=0.0, partner_pieces=0)
    unpruned = MctsPlayer(seed=4, max_simulations=50, params=off)
    unpruned.choose_move_sync(state, move_time=30.0)
    assert int(unpruned.tree.node_count[0]) == len(_expected_moves(state, 0.0, pieces)) > int(player.tree.node_count[0])


@pytest.mark.parametrize("season", SEASONS.values(), ids=SEASONS.keys())
def test_a_whole_game_with_the_opening_cut_is_legal(season):
    params = mcts.MctsParams(centre_cut=0.3)
    players = [MctsPlayer(seed=1, max_simulations=30, params=params), MctsPlayer(seed=2, max_simulations=30)]
    state = GameState.new(season, Shape.PENTO_X if season.year == 2027 else Shape.PENTO_T)
    while not state.is_over:
        state.play(players[state.color % 2].choose_move_sync(state, move_time=5.0))
    assert state.turn > 40


def test_the_opening_rules_are_the_seasons_unless_a_player_sets_them():
    # 2021 (corner starts) searches with both rules on, 2027 (border starts) with both off (RESULTS §41-42); a
    # setting of its own (mcts:centre_cut=...) wins in either season
    from blokus.ai.search.mcts.params import SEASON_DEFAULTS

    assert set(SEASON_DEFAULTS) == {int(season) for season in SEASONS.values()}
    default, mine = mcts.MctsParams(), mcts.MctsParams(centre_cut=0.2)
    assert (default.for_season(2021).centre_cut, default.for_season(2021).partner_pieces) == (0.3, 14)
    assert (default.for_season(2027).centre_cut, default.for_season(2027).partner_pieces) == (0.0, 0)
    assert (mine.for_season(2021).centre_cut, mine.for_season(2021).partner_pieces) == (0.2, 14)
    assert mine.for_season(2027).centre_cut == 0.2
    off = mcts.MctsParams(centre_cut=0, partner_pieces=0)
    # the default's tree is the named settings' tree, node for node and edge for edge; in 2021 the rules cut the
    # opening's root, in 2027 the default is both off
    early_2021, early_2027 = _position(8, seed=3, season=SEASON_2021), _position(8, seed=3, season=SEASONS["2027"])
    default_2021 = _searched_tree(default, early_2021)
    assert _same_tree(default_2021, _searched_tree(mcts.MctsParams(centre_cut=0.3, partner_pieces=14), early_2021))
    assert int(default_2021.node_count[0]) < int(_searched_tree(off, early_2021).node_count[0])
    assert _same_tree(_searched_tree(default, early_2027), _searched_tree(off, early_2027))


def _searched_tree(params: mcts.MctsParams, state: GameState):
    """The tree of one thread's 400 simulations from ``state`` with ``params``."""
    player = MctsPlayer(seed=4, max_simulations=400, params=dataclasses.replace(params, threads=1))
    player.choose_move_sync(state, move_time=30.0)
    return player.tree


def _same_tree(a, b) -> bool:
    nodes, edges = int(a.counters[0]), int(a.counters[1])
    return (nodes, edges) == (int(b.counters[0]), int(b.counters[1])) and all(
        np.array_equal(x[:n], y[:n])
        for x, y, n in (
            (a.node_count, b.node_count, nodes),
            (a.node_first, b.node_first, nodes),
            (a.edge_pid, b.edge_pid, edges),
        )
    )


def _touches_partner(state: GameState, pid: int) -> bool:
    """Whether placement ``pid`` of the colour to move shares an edge with a cell of its partner colour (by the
    model's bitboards, not the kernels' tables)."""
    from blokus.model import placements as PL

    return bool(PL.edge_neighbours(PL.MASKS[pid]) & state.boards[(int(state.color) + 2) % 4])


def _expected_partner_moves(state: GameState, pieces: int, cut: float) -> set[int]:
    """The moves a node of ``state`` should list with ``partner_pieces=pieces`` and ``centre_cut=cut`` (no model
    pruning): the big pieces early, those the centre cut leaves; then, while the board holds fewer than ``pieces``
    pieces and the colour placed its first, only those that touch the partner colour along an edge, if there are
    any (the rule written out)."""
    moves = _expected_moves(state, cut, 12)
    if _on_board(state) < pieces and not state.is_first_move(state.color):
        touching = {p for p in moves if _touches_partner(state, p)}
        return touching or moves
    return moves


@pytest.mark.parametrize("cut", [0.0, 0.3])
@pytest.mark.parametrize("season", SEASONS.values(), ids=SEASONS.keys())
def test_the_opening_keeps_only_the_moves_touching_the_partner(season, cut):
    # ``partner_pieces`` (Pentobi's classic_2 rule): every node of the tree, the root included, lists exactly the
    # moves the rule leaves; nodes with a touching move are cut while the board holds fewer than ``partner_pieces``
    # pieces, nodes with none or with that many pieces keep every move (with the centre cut: of those it leaves)
    # positions with moves that touch the partner (among those the centre cut leaves: later, and rare, in random
    # games; there the rule is tried with 15 pieces)
    pieces = 15 if cut else 14
    turns, seed = {(2021, 0): (10, 24), (2027, 0): (10, 8), (2021, 1): (12, 39), (2027, 1): (12, 37)}[
        (season.year, int(cut > 0))
    ]
    state = _position(turns, seed=seed, season=season)
    params = mcts.MctsParams(threads=1, prune=0.0, partner_pieces=pieces, centre_cut=cut)
    player = MctsPlayer(seed=4, max_simulations=1500, params=params)
    assert state.is_legal(player.choose_move_sync(state, move_time=30.0))
    cut_nodes = whole_nodes = 0
    for _node, position, moves in _expanded_nodes(player.tree, state):
        assert moves == _expected_partner_moves(position, pieces, cut)
        if len(moves) < len(_expected_moves(position, cut, 12)):
            cut_nodes += 1
        elif _on_board(position) >= pieces:
            whole_nodes += 1
    assert cut_nodes > 10 and whole_nodes > 3


@pytest.mark.parametrize("season", SEASONS.values(), ids=SEASONS.keys())
def test_a_whole_game_with_the_partner_rule_is_legal(season):
    params = mcts.MctsParams(partner_pieces=14, centre_cut=0.3)
    players = [MctsPlayer(seed=1, max_simulations=30, params=params), MctsPlayer(seed=2, max_simulations=30)]
    state = GameState.new(season, Shape.PENTO_X if season.year == 2027 else Shape.PENTO_T)
    while not state.is_over:
        state.play(players[state.color % 2].choose_move_sync(state, move_time=5.0))
    assert state.turn > 40


def _edges_by_depth(tree):
    """(depth of the edge's child, edge) for every edge of the tree, from the root down."""
    stack, out = [(0, 1)], []
    while stack:
        node, depth = stack.pop()
        first, count = int(tree.node_first[node]), int(tree.node_count[node])
        for e in range(first, first + count) if first >= 0 else ():
            out.append((depth, e))
            if int(tree.edge_child[e]) >= 0:
                stack.append((int(tree.edge_child[e]), depth + 1))
    return out


@pytest.mark.parametrize("expand_inc", [0.0, 0.5, 1.0])
def test_a_node_is_added_after_more_visits_the_deeper_it_is(expand_inc):
    """``expand_inc`` (Pentobi's expansion threshold increment): the node a move leads to is added at the visit
    after 1 + expand_inc x (depth - 1) earlier ones, and then at once."""
    state = _position(20)
    players = {}
    for inc in (0.0, expand_inc):
        players[inc] = MctsPlayer(seed=4, max_simulations=1500, params=mcts.MctsParams(threads=1, expand_inc=inc))
        assert state.is_legal(players[inc].choose_move_sync(state, move_time=30.0))
    tree = players[expand_inc].tree
    checked = 0
    for depth, e in _edges_by_depth(tree):
        visits, has_child = float(tree.edge_n[e]), int(tree.edge_child[e]) >= 0
        threshold = 1 + expand_inc * (depth - 1)
        assert has_child == (visits >= threshold + 1), (depth, visits, has_child)
        checked += has_child and depth > 2
    assert checked > 10  # nodes deep enough for the increment to matter
    if expand_inc:
        assert int(tree.counters[0]) < int(players[0.0].tree.counters[0])  # fewer nodes for the same simulations


def _edge_of(tree, node: int, pid: int) -> int | None:
    first, count = int(tree.node_first[node]), int(tree.node_count[node])
    edges = [e for e in range(first, first + count) if int(tree.edge_pid[e]) == pid]
    return edges[0] if edges else None


def _statistics(tree, node: int, depth: int) -> dict:
    """Visits and values of ``node`` and, ``depth`` levels down, of its moves and their subtrees."""
    stats: dict = {"node": tuple(tree.node_n[node].tolist())}
    first, count = int(tree.node_first[node]), int(tree.node_count[node])
    for e in range(first, first + count) if depth and first >= 0 else ():
        child = int(tree.edge_child[e])
        below = _statistics(tree, child, depth - 1) if child >= 0 else None
        stats[int(tree.edge_pid[e])] = (
            float(tree.edge_n[e]),
            float(tree.edge_w[e]),
            float(tree.edge_rn[e]),
            float(tree.edge_rw[e]),
            below,
        )
    return stats


def _searched_reply(player: MctsPlayer, move) -> tuple[int, int]:
    """The opponent's most searched reply to ``move`` in the player's tree, and its node."""
    tree = player.tree
    mid = int(tree.edge_child[_edge_of(tree, 0, placement_of(move))])
    first, count = int(tree.node_first[mid]), int(tree.node_count[mid])
    reply = max(range(first, first + count), key=lambda e: float(tree.edge_n[e]))
    return int(tree.edge_pid[reply]), int(tree.edge_child[reply])


def test_the_next_search_keeps_the_subtree_of_the_moves_played():
    state = _position(40)
    player = MctsPlayer(seed=6, max_simulations=3000, params=ONE_THREAD)
    move = player.choose_move_sync(state, move_time=60.0)
    reply, node = _searched_reply(player, move)
    kept = _statistics(player.tree, node, 2)
    state.play(move)
    state.push_placement(reply)
    player.max_simulations = 0  # look at the kept tree as the next search starts
    player.choose_move_sync(state, move_time=60.0)
    assert player.last_info["kept"] == kept["node"][0] > 100
    now = _statistics(player.tree, 0, 2)
    assert now["node"] == kept["node"]
    # the root lists every legal move now (an inner node's prior pruned some); the searched ones keep their
    # visits, values and subtrees
    assert sorted(k for k in now if k != "node") == sorted(state.legal_placements().tolist())
    assert all(now[pid] == kept[pid] for pid in kept if pid != "node")
    assert all(now[pid][0] == 0 for pid in now if pid not in kept)
    player.max_simulations = 500
    assert state.is_legal(player.choose_move_sync(state, move_time=60.0))
    assert player.tree.node_n[0, 0] == kept["node"][0] + 500


def test_a_position_the_last_search_did_not_reach_starts_afresh():
    state = _position(40)
    player = MctsPlayer(seed=6, max_simulations=400, params=ONE_THREAD)
    move = player.choose_move_sync(state, move_time=60.0)
    tree = player.tree
    mid = int(tree.edge_child[_edge_of(tree, 0, placement_of(move))])
    state.play(move)
    unsearched = [
        pid
        for pid in state.legal_placements().tolist()
        if _edge_of(tree, mid, pid) is None or tree.edge_child[_edge_of(tree, mid, pid)] < 0
    ]
    state.push_placement(unsearched[0])
    assert state.is_legal(player.choose_move_sync(state, move_time=60.0))
    assert player.last_info["kept"] == 0 and player.tree.node_n[0, 0] == 400
    player.choose_move_sync(_position(20, seed=2), move_time=60.0)  # another game
    assert player.last_info["kept"] == 0


def test_the_same_position_again_keeps_the_whole_tree():
    """A hint, then the AI's move in the same position: the second search goes on with the first's tree."""
    state = _position(30)
    player = MctsPlayer(seed=6, max_simulations=300, params=ONE_THREAD)
    player.choose_move_sync(state, move_time=60.0)
    player.choose_move_sync(state, move_time=60.0)
    assert player.last_info["kept"] == 300 and player.tree.node_n[0, 0] == 600


@pytest.mark.parametrize("season", SEASONS.values(), ids=SEASONS.keys())
@pytest.mark.parametrize(("root_turn", "way_down"), [(1, 9), (8, 0), (8, 11), (30, 6)])
def test_the_playout_policy_keeps_its_lists_exact_and_blocks_first(season, root_turn, way_down):
    # a whole playout by the policy, mirrored on the plain game state, starting ``way_down`` random moves below
    # the searched position (the root) as after a way down the tree: every colour's list, built from the root's
    # list and kept up to date, is exactly its legal placements (also where a colour placed its first piece or
    # several pieces on the way down), and the move drawn covers the most opponents' newest attach points among
    # the placements big enough for the phase (``mark_local`` marks them; test_movefeatures checks its marks)
    from blokus.ai.search import movefeatures as MF
    from blokus.model.fast import M_TURN, FastState

    state = _position(root_turn, seed=7, season=season)
    root = Root.of(FastState.from_state(state))  # arrays of its own: the simulation plays on ``fast``
    fast = FastState.from_state(state)
    last = np.full(4, -1, dtype=np.int32)
    rng = random.Random(root_turn)
    for _ in range(way_down):
        legal = state.legal_placements().tolist()
        if not legal:
            state.play(state.legal_moves()[0])
            F.play(TABLES, fast.b, fast.m, -1, fast.first_cells)
            continue
        last[state.color] = pid = legal[rng.randrange(len(legal))]
        state.push_placement(pid)
        F.play(TABLES, fast.b, fast.m, pid, fast.first_cells)
    sim, playout = Sim(fast.b, fast.m, last), Playout.allocate()
    params = mcts.MctsParams().vector()
    size_w = params[R.size_base] ** np.arange(6)
    marks = np.zeros(NCELLS + 1, dtype=np.int32)
    moves = step = 0
    while not state.is_over:
        step += 1  # a fresh mark for every call
        color = int(state.color)  # an int, as the search passes it (a Color: another compiled variant)
        assert int(fast.m[M_TURN]) & 3 == color
        legal = state.legal_placements().tolist()
        MF.mark_local(TABLES, fast.b, last, color, marks, np.int32(step))
        pid = int(_playout_move(TABLES, sim, playout, color, root, params, size_w))
        kept = playout.lists[color][: playout.lcount[color]].tolist()
        assert sorted(kept) == sorted(legal)
        if not legal:
            assert pid == -1
            state.play(state.legal_moves()[0])
            F.play(TABLES, fast.b, fast.m, -1, fast.first_cells)
            continue
        min_size = _min_size(TABLES, fast.m, color, params)
        big = [p for p in legal if P_SIZE[p] >= min_size] or legal
        blocked = {p: sum(marks[q] == step for q in P_CELLS[p] if q < NCELLS) for p in big}
        assert pid in blocked and blocked[pid] == max(blocked.values())
        state.push_placement(pid)
        F.play(TABLES, fast.b, fast.m, pid, fast.first_cells)
        last[color] = pid
        moves += 1
    assert moves > 10


@pytest.mark.parametrize("kept", [False, True], ids=["built", "kept"])
@pytest.mark.parametrize(("turn", "sizes"), [(10, 1), (34, 4)])
def test_the_playout_policy_draws_by_size_among_the_best_blockers(turn, sizes, kept):
    # the drawn placements follow the policy's distribution: among the placements big enough for the phase
    # that cover the most opponents' newest attach points, each with weight size_base ** size; checked on a
    # list built afresh and on a kept list, at turn 10 (pentominoes only, six of them block most) and at turn 34
    # (none blocks; four sizes). Seeded: the same draws every run
    from blokus.ai.search import movefeatures as MF
    from blokus.model.fast import FastState

    rng = random.Random(5)
    state = GameState.new(SEASON_2021, Shape.PENTO_W)
    last = np.full(4, -1, dtype=np.int32)
    while state.turn < turn:
        ids = state.legal_placements()
        last[state.color] = pid = int(ids[rng.randrange(len(ids))])
        state.push_placement(pid)
    fast = FastState.from_state(state)
    root = Root.of(FastState.from_state(state))
    color = int(state.color)
    sim, playout = Sim(fast.b, fast.m, last), Playout.allocate()  # the policy plays on ``fast``
    params = mcts.MctsParams().vector()
    size_w = params[R.size_base] ** np.arange(6)
    marks = np.zeros(NCELLS + 1, dtype=np.int32)
    MF.mark_local(TABLES, fast.b, last, color, marks, np.int32(1))
    min_size = _min_size(TABLES, fast.m, color, params)
    legal = state.legal_placements().tolist()
    big = [p for p in legal if P_SIZE[p] >= min_size] or legal
    covered = {p: sum(marks[q] == 1 for q in P_CELLS[p] if q < NCELLS) for p in big}
    best = [p for p in big if covered[p] == max(covered.values())]
    assert len(best) >= 5 and len({P_SIZE[p] for p in best}) == sizes
    weight = {p: size_w[P_SIZE[p]] for p in best}
    expected = {p: w / sum(weight.values()) for p, w in weight.items()}

    seed_rng(9)
    draws = 20_000
    counts: dict[int, int] = {}
    for i in range(draws):
        if not kept or i == 0:
            playout.lcount[:] = -1
        pid = int(_playout_move(TABLES, sim, playout, color, root, params, size_w))
        counts[pid] = counts.get(pid, 0) + 1
    assert set(counts) <= set(best)
    distance = 0.5 * sum(abs(counts.get(p, 0) / draws - q) for p, q in expected.items())
    assert distance < 0.05
    assert all(counts.get(p, 0) > 0 for p, q in expected.items() if q > 0.01)


@pytest.mark.parametrize("season", SEASONS.values(), ids=SEASONS.keys())
@pytest.mark.parametrize("seed", [3, 11])
def test_playouts_pass_the_turn_as_the_server_does(season, seed):
    # the playouts pass the turn on without checking that the next colour can place (``F.next_turn``); a
    # colour without a placement leaves the game at its turn. Mirrored on the plain game state (which drops
    # such colours at once, as the server does), every placement comes at the same turn from the same colour,
    # and the game ends at the same turn with the same points
    from blokus.model.fast import M_TURN, FastState

    state = GameState.new(season, Shape.PENTO_X if season.year == 2027 else Shape.PENTO_V)
    rng = random.Random(seed)
    while state.turn < 4:
        ids = state.legal_placements()
        state.push_placement(int(ids[rng.randrange(len(ids))]))
    fast, root = FastState.from_state(state), Root.of(FastState.from_state(state))
    sim, playout = Sim(fast.b, fast.m, np.full(4, -1, dtype=np.int32)), Playout.allocate()  # plays on ``fast``
    params = mcts.MctsParams().vector()
    size_w = params[R.size_base] ** np.arange(6)
    playout.lcount[:] = -1  # the lists are built at a playout's first turn
    seed_rng(seed)
    left_the_game = 0
    while not F.is_over(fast.m):
        turn, color = int(fast.m[M_TURN]), int(fast.m[M_TURN]) & 3
        pid = int(_playout_move(TABLES, sim, playout, color, root, params, size_w))  # a turn as ``run`` plays it
        _end_playout_turn(TABLES, fast.b, fast.m, sim.last, color, pid)
        if pid < 0:
            assert state.is_over or state.turn > turn  # the state had dropped the colour already
            left_the_game += 1
            continue
        assert (state.turn, state.color) == (turn, color)
        assert pid in state.legal_placements().tolist()
        state.push_placement(pid)
    assert state.is_over and left_the_game == 4 - bin(int(fast.m[M_VALID])).count("1")
    assert [fast.points(c) for c in range(4)] == [state.points(c) for c in range(4)]
    assert state.turn == int(fast.m[M_TURN]) or int(fast.m[M_VALID]) == 0


def test_a_variant_by_name_has_the_settings_and_the_rest_of_the_default():
    from blokus.ai import compile_ahead, make_player, parse_player

    name = "mcts:root_eval=0, prune=0.05,early_rounds=6,graded=1,centre_cut=0.3,partner_pieces=14"
    player = make_player(name, seed=3)
    assert player.name == name
    compile_ahead(parse_player("mcts:root_eval=0"))  # the same kernels as the default: already compiled here
    state = GameState.new(SEASON_2021, Shape.PENTO_V)
    move = player.choose_move_sync(state, move_time=0.3)
    assert state.is_legal(move)
    params = player._ready_player().params
    assert (params.root_eval, params.prune, params.early_rounds, params.graded) == (0.0, 0.05, 6, True)
    assert (params.centre_cut, params.centre_pieces, params.partner_pieces) == (0.3, 12, 14)
    assert params.explore == mcts.MctsParams().explore and params.move_prior == mcts.MctsParams().move_prior


@pytest.mark.parametrize(
    "name,message",
    [
        ("mcts:nonsense=1", "'nonsense=1' is not KEY=VALUE"),
        ("mcts:prune", "'prune' is not KEY=VALUE"),
        ("mcts:prune=lots", "prune needs a number, not 'lots'"),
        ("mcts:early_rounds=2.5", "early_rounds needs a whole number"),
        ("mcts:graded=yes", "graded needs 0 or 1"),
        ("mcts:threads=-1", "threads needs 0 \\(all cores\\) to 64, not -1"),
        ("mcts:threads=65", "threads needs 0 \\(all cores\\) to 64, not 65"),
    ],
)
def test_a_variant_with_bad_settings_is_refused_in_one_line(name, message):
    from blokus.ai import make_player

    with pytest.raises(ValueError, match=message) as info:
        make_player(name)
    assert "\n" not in str(info.value)


def test_threads_default_to_the_cores_this_process_may_use(monkeypatch, tmp_path):
    from blokus.ai.search import cores

    monkeypatch.setattr(cores.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    monkeypatch.setattr(cores, "ROOT", tmp_path)  # no cgroup quota (this machine's is not the test's)
    assert MctsPlayer(seed=1).threads == 3 and len(MctsPlayer(seed=1).workers) == 3
    assert MctsPlayer(seed=1, params=mcts.MctsParams(threads=2)).threads == 2
    assert MctsPlayer(seed=1, params=ONE_THREAD).threads == 1


def test_two_threads_search_a_tree_each_and_merge_their_root_statistics():
    state = _position(16)
    player = MctsPlayer(seed=3, max_simulations=401, params=ROOT_PARALLEL)
    move = player.choose_move_sync(state, move_time=60.0)
    assert state.is_legal(move)
    assert player.last_info["simulations"] == 401 and player.last_info["threads"] == 2
    assert [int(w.tree.counters[2]) for w in player.workers] == [201, 200]  # the budget split, a tree each
    assert not np.array_equal(_root_visits(player.workers[0].tree), _root_visits(player.workers[1].tree))
    pids, visits, _ = player.root_statistics()
    assert visits.sum() == 401 and set(pids.tolist()) <= set(state.legal_placements().tolist())
    assert visits[pids == placement_of(move)][0] == visits.max()  # the most visits over both trees
    again = MctsPlayer(seed=3, max_simulations=401, params=ROOT_PARALLEL)
    assert again.choose_move_sync(state, move_time=60.0) == move  # a fixed budget: reproducible with threads
    # the next search keeps each tree's subtree
    state.play(move)
    state.push_placement(int(state.legal_placements()[0]))
    assert state.is_legal(player.choose_move_sync(state, move_time=60.0))


def _whole_tree(tree) -> int:
    """Check the structure of ``tree`` from its root: every node expanded or not (none left claimed), its edges a
    block among those taken, each child reached by one edge only, no visit left counted as a virtual loss, and a
    node's visits the sum of its edges' (threads sharing a tree add them atomically). Returns the nodes reached."""
    nodes, edges = min(int(tree.counters[0]), len(tree.node_first)), min(int(tree.counters[1]), len(tree.edge_pid))
    reached, todo = {0}, [0]
    while todo:
        node = todo.pop()
        first, count = int(tree.node_first[node]), int(tree.node_count[node])
        assert first >= -1, f"node {node} left claimed"
        if first < 0:
            continue
        assert 0 <= first and first + count <= edges
        visits = tree.edge_n[first : first + count]
        assert np.array_equal(visits, np.round(visits)), "a virtual loss left in the counts"
        assert visits.sum() == tree.node_n[node, 0], f"node {node}: {tree.node_n[node, 0]} visits, edges {visits.sum()}"
        for child in tree.edge_child[first : first + count].tolist():
            if child >= 0:
                assert child < nodes and child not in reached
                reached.add(child)
                todo.append(child)
    return len(reached)


@pytest.mark.parametrize("threads", [2, 4])
def test_threads_sharing_one_tree_grow_it_whole(threads):
    state = _position(16)
    params = mcts.MctsParams(threads=threads)  # by default the threads share one tree (a search against the clock)
    player = MctsPlayer(seed=3, params=params)
    assert player.shared and not MctsPlayer(seed=3, params=params, max_simulations=100).shared  # a fixed budget
    move = player.choose_move_sync(state, move_time=1.0)
    assert state.is_legal(move) and player.last_info["threads"] == threads
    player.settle()  # a helper thread descheduled on a loaded machine may still be in its last slice
    tree = player.tree
    # one tree: the simulations are the threads' together, the other trees unused. The move reports those done
    # when it returned: a helper thread descheduled in its last slice may add its simulations after that
    assert 0 < player.last_info["simulations"] <= tree.counters[2]
    assert all(not w.tree.counters.any() for w in player.workers[1:])
    assert _whole_tree(tree) > 10  # the counts added atomically: none lost, even with a thread stopped mid-way
    _check_turns(tree, state)  # each node's turn written before another thread could reach it
    pids, visits, _ = player.root_statistics()
    assert visits.sum() == tree.counters[2]  # every simulation passed the root: counted once, none lost
    assert visits[pids == placement_of(move)][0] == visits.max()
    # the next search keeps the subtree of the reply searched most, in the shared tree
    reply, _ = _searched_reply(player, move)
    state.play(move)
    state.push_placement(reply)
    assert state.is_legal(player.choose_move_sync(state, move_time=1.0))
    player.settle()
    assert player.last_info["kept"] > 0 and _whole_tree(player.tree) > 10
    _check_turns(player.tree, state)  # the kept subtree copied with its nodes' turns


def _check_turns(tree, state: GameState) -> int:
    """Every node's turn and colours still in (``node_turn``, read instead of ``F.play``'s check in the tree) are
    those of the position its moves lead to from ``state``; returns the nodes where a colour left the game."""
    root = F.FastState.from_state(state)
    todo, left = [(0, root.b.copy(), root.m.copy())], 0
    while todo:
        node, b, m = todo.pop()
        first, count = int(tree.node_first[node]), int(tree.node_count[node])
        for e in range(first, first + count) if first >= 0 else ():
            child = int(tree.edge_child[e])
            if child < 0:
                continue
            b2, m2 = b.copy(), m.copy()
            F.play(TABLES, b2, m2, int(tree.edge_pid[e]), root.first_cells)
            assert (int(tree.node_turn[child, 0]), int(tree.node_turn[child, 1])) == (m2[F.M_TURN], m2[M_VALID])
            left += m2[M_VALID] != m[M_VALID]
            todo.append((child, b2, m2))
    return left


@pytest.mark.parametrize("season", SEASONS.values(), ids=SEASONS.keys())
def test_a_node_holds_the_turn_after_its_move_as_the_check_would_find_it(season):
    """The way down the tree reads a node's turn and the colours still in from the node (found once, when it was
    added) instead of searching whether the next colour can place at every move; late in a game, where colours
    leave the game inside the tree, that must be what ``F.play`` finds, node by node. The trees are those of
    ``F.play`` at every move (tuning/tree_digest.py printed the same digest before and after)."""
    state = _position(44, seed=2, season=season)
    every_node = mcts.MctsParams(threads=1, expand_inc=0.0)  # each node added at its second visit: a deep tree
    player = MctsPlayer(seed=7, max_simulations=3000, params=every_node)
    assert state.is_legal(player.choose_move_sync(state, move_time=60.0))
    assert _check_turns(player.tree, state) > 2  # nodes where a colour left the game


def test_one_thread_grows_a_whole_tree_with_exact_counts():
    player = MctsPlayer(seed=5, max_simulations=800, params=ONE_THREAD)
    player.choose_move_sync(_position(12), move_time=60.0)
    assert _whole_tree(player.tree) > 20  # no lost visit: ``_whole_tree`` checks itself here


def test_atomic_operations_count_every_thread_and_check_their_index():
    from numba import njit

    from blokus.ai.search.mcts import atomics

    @njit(nogil=True)
    def add_many(counts, visits, times):
        for _ in range(times):
            atomics.fetch_add(counts, 1, 1)
            atomics.add(visits, 1, np.float32(1.0))

    counts, visits = np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.float32)
    add_many(counts, visits, 1)
    counts[:], visits[:] = 0, 0.0
    threads = [threading.Thread(target=add_many, args=(counts, visits, 200_000)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counts.tolist() == [0, 800_000, 0] and visits.tolist() == [0.0, 800_000.0, 0.0]
    flags = np.full(2, -1, dtype=np.int32)
    assert atomics.compare_swap(flags, 1, -1, 7) == -1 and atomics.compare_swap(flags, 1, -1, 8) == 7
    assert flags.tolist() == [-1, 7] and atomics.load(flags, 1) == 7
    atomics.store(flags, 0, 3)
    assert flags.tolist() == [3, 7]
    for bad in (-1, 2):
        with pytest.raises(IndexError):
            atomics.fetch_add(flags, bad, 1)
        with pytest.raises(IndexError):
            atomics.compare_swap(flags, bad, -1, 1)
    for bad in (-1, 3):
        with pytest.raises(IndexError):
            atomics.add(visits, bad, np.float32(1.0))


def _root_visits(tree) -> np.ndarray:
    first, count = int(tree.node_first[0]), int(tree.node_count[0])
    order = np.argsort(tree.edge_pid[first : first + count])
    return tree.edge_n[first : first + count][order]


def test_a_failing_thread_leaves_the_search_to_one_thread_and_says_so(monkeypatch, caplog):
    player = MctsPlayer(seed=4, max_simulations=300, params=mcts.MctsParams(threads=2))
    run = player._run

    def failing(tree, scratch, *args):
        if scratch is not player.workers[0].scratch:
            raise MemoryError("no room")
        return run(tree, scratch, *args)

    monkeypatch.setattr(player, "_run", failing)
    state = _position(12)
    with caplog.at_level("WARNING", logger="blokus.ai.search.mcts.player"):
        move = player.choose_move_sync(state, move_time=60.0)
    assert state.is_legal(move)
    assert player.threads == 1 and len(player.workers) == 1
    assert player.last_info["fallback"] == "mcts 1 thread (thread 2 failed: MemoryError: no room)"
    assert player.last_info["simulations"] == int(player.tree.counters[2]) > 0  # the failed tree is not counted
    assert [r.getMessage() for r in caplog.records] == [
        "mcts: searching in one thread instead of 2: thread 2 failed: MemoryError: no room"
    ]
    state.play(move)
    player.choose_move_sync(state, move_time=60.0)
    assert "fallback" in player.last_info and len(caplog.records) == 1  # said with every move, logged once


class _StopAfter:
    """A stop flag that is set after ``checks`` looks at it (a ponder of a fixed number of slices)."""

    def __init__(self, checks: int) -> None:
        self.checks = checks

    def is_set(self) -> bool:
        self.checks -= 1
        return self.checks < 0


def _most_searched(tree) -> int:
    first, count = int(tree.node_first[0]), int(tree.node_count[0])
    return int(tree.edge_pid[max(range(first, first + count), key=lambda e: float(tree.edge_n[e]))])


@pytest.mark.parametrize("season", SEASONS.values(), ids=SEASONS.keys())
def test_pondering_grows_the_tree_that_the_next_move_keeps(season):
    """Thinking on the opponent's time: the position after our move is searched on, and the next search
    starts from the subtree of the reply that was played, more of it than without pondering."""
    kept = {}
    reply = -1
    for ponder in (True, False):  # the same reply without pondering
        state = _position(24, season=season)
        player = MctsPlayer(seed=7, max_simulations=300, params=ONE_THREAD)
        move = player.choose_move_sync(state, move_time=60.0)
        state.play(move)
        if ponder:
            player.max_simulations = None
            player.ponder(state, _StopAfter(40))
            assert player.tree.node_n[0, 0] > 300  # the root is now the position after our move
            reply = _most_searched(player.tree)  # the opponent plays what the ponder looked at most
        state.push_placement(reply)
        player.max_simulations = 0  # look at the kept tree as the next search starts
        assert state.is_legal(player.choose_move_sync(state, move_time=60.0))
        kept[ponder] = player.last_info["kept"]
        assert (player.last_info.get("pondered", 0) > 0) == ponder
    assert kept[True] > kept[False]


def test_the_next_move_stops_pondering_and_so_does_cancel(monkeypatch):
    monkeypatch.setattr(blokus.ai.search.mcts.player, "PONDER_LIMIT_S", 600.0)  # only the stop ends it
    state = _position(20)
    player = MctsPlayer(seed=8)
    move = player.choose_move_sync(state, move_time=0.2)
    state.play(move)
    player.start_pondering(state)
    thread = player._ponder_thread
    assert thread is not None and thread.is_alive()
    reply = int(state.legal_placements()[0])
    state.push_placement(reply)
    assert state.is_legal(player.choose_move_sync(state, move_time=0.2))
    assert not thread.is_alive() and player._ponder_thread is None
    player.start_pondering(state)
    thread = player._ponder_thread
    player.cancel()  # the game ended, or the answer is no longer wanted
    thread.join(timeout=60)
    assert not thread.is_alive()


def test_a_player_of_fixed_budget_does_not_ponder():
    """The weaker levels and reproducible tests play by a fixed number of simulations: no thinking ahead."""
    state = _position(20)
    player = MctsPlayer(seed=9, max_simulations=100, params=ONE_THREAD)
    state.play(player.choose_move_sync(state, move_time=60.0))
    before = player.tree.counters.copy()
    player.ponder(state, threading.Event())  # never set: only the fixed budget can end it
    assert np.array_equal(player.tree.counters, before)


def test_a_count_budget_grows_with_the_pieces_placed_as_pentobis_levels_do():
    """``mcts:count=N`` searches a number of simulations, not a time (to compare searches per simulation):
    N x 0.7 e^(0.1 k) for a colour that placed k pieces, less for its first three."""
    assert [mcts.counted_simulations(1000, k) for k in (0, 1, 2, 3, 10)] == [140, 155, 257, 945, 1903]
    from blokus.ai import make_player

    player = make_player("mcts:count=200", seed=4)
    for turns in (20, 36):
        state = _position(turns)
        placed = 21 - len(state.pieces_left(state.color))
        move = player.choose_move_sync(state, move_time=600.0)
        assert state.is_legal(move)
        assert player.last_info["simulations"] == mcts.counted_simulations(200, placed)
    player.ponder(state, threading.Event())  # a count budget does not think ahead
    assert player._ready_player().tree.node_n[0, 0] <= mcts.counted_simulations(200, placed)


def test_no_environment_variable_changes_the_search(monkeypatch):
    # a variant is a name (``mcts:KEY=VALUE``) or explicit parameters (tuning/), never the environment
    monkeypatch.setenv("BLOKUS_MCTS_PARAMS", '{"playout_moves": 8}')
    assert MctsPlayer(seed=1).params == mcts.MctsParams()


def test_the_parameter_vector_follows_the_fields():
    # one list: the search inputs are the fields in order (the player's own settings left out), the
    # evaluation's weights follow at ``R.weights``
    params = mcts.MctsParams(explore=0.25, graded=True, prune=0.5, count=7)
    vector = params.vector()
    assert vector[R.explore] == 0.25 and vector[R.graded] == 1.0 and vector[R.prune] == 0.5
    assert R.weights == len(R) - 1 and "count" not in R._fields and "reuse" not in R._fields
    assert vector[R.weights :].tolist() == mcts.MctsParams().vector()[R.weights :].tolist()
    # a virtual loss only where threads share the tree: one thread's searches stay as they were
    assert vector[R.virtual_loss] == 0.0 and params.vector(shared_tree=True)[R.virtual_loss] == 1.0
    assert vector[R.shared] == 0.0 and params.vector(shared_tree=True)[R.shared] == 1.0  # atomic additions


def test_no_kernel_or_search_function_takes_more_than_twelve_parameters():
    # the arrays travel in named groups (``Tree``, ``Scratch``, ``Root``; ``ai.search.fastsearch``'s ``Ctx``, ...)
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "ai" / "search"
    counted = 0
    for path in [*sorted((root / "mcts").glob("*.py")), root / "fastsearch.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                a = node.args
                count = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)
                assert count <= 12, f"{path.name}: {node.name} takes {count} parameters"
                counted += 1
    assert counted > 30


def _one_colour_on(state: GameState) -> GameState:
    """The same position with every colour one on (BLUE's pieces YELLOW's, YELLOW's RED's, …, GREEN's BLUE's)
    and the turn one on: the side to move is now the other team, with the same moves."""
    from blokus.model.moves import SetMove
    from blokus.model.state import move_of_placement

    def on(bits: int) -> int:
        return sum(((bits >> c) & 1) << ((c + 1) % 4) for c in range(4))

    other = state.copy()
    other.boards = [state.boards[(c - 1) % 4] for c in range(4)]
    other.shapes = [state.shapes[(c - 1) % 4] for c in range(4)]
    other.valid, other.mono_done, other.mono_flag = on(state.valid), on(state.mono_done), on(state.mono_flag)
    other.turn = state.turn + 1
    if isinstance(state.last_move, SetMove):
        other.last_move = move_of_placement((int(state.last_move.color) + 1) % 4, placement_of(state.last_move))
    return other


@pytest.mark.parametrize(("season", "turn"), [(SEASON_2021, 9), (SEASONS["2027"], 13)], ids=["2021", "2027"])
def test_the_search_plays_team_two_as_it_plays_team_one(monkeypatch, season, turn):
    """No rule of the search favours a team (tuning/RESULTS.md §46: the seat gap against Pentobi is the game's
    first-mover edge): one position searched with the colours one on, so that the other team moves, gives the
    same tree. The parts that depend on the turn number itself are held still: one row of the move prior's
    weights (it has one a phase), no evaluated root prior, the opening's pentomino rule everywhere."""
    monkeypatch.setattr(blokus.ai.search.mcts.player, "PRIOR_WEIGHTS", np.ascontiguousarray(
        blokus.ai.search.mcts.player.PRIOR_WEIGHTS[-1:]))  # fmt: skip
    state = _position(turn, seed=3, season=season)
    assert state.valid == 15 and state.color % 2 == 1  # YELLOW or GREEN moves; the copy has BLUE or RED
    other = _one_colour_on(state)
    assert other.color == (state.color + 1) % 4
    assert np.array_equal(state.legal_placements(), other.legal_placements())
    params = mcts.MctsParams(threads=1, book=False, root_eval=0.0, early_rounds=100)
    found = []
    for position in (state, other):
        player = MctsPlayer(seed=7, params=params, max_simulations=400)
        move = player.choose_move_sync(position, move_time=30.0)
        ids, visits, _ = player.root_statistics()
        found.append(
            (placement_of(move), dict(zip(ids.tolist(), visits.tolist(), strict=True)), player.last_info.get("value"))
        )
    assert found[0] == found[1]
