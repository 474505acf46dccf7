"""The TUI's controller (no Textual): ghost, rotation on screen, placing, passing, undo, log entries."""

from __future__ import annotations

from blokus.model.moves import MoveMistake, SetMove, SkipMove
from blokus.model.pieces import Color, Rotation, Shape, Team
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState
from blokus.tui.session import GameSession, Ghost, GhostStatus, SeatKind, Timeline, classify, move_between
from tests.tui_helpers import play_openings


def _norm(cells):
    mx = min(x for x, _ in cells)
    my = min(y for _, y in cells)
    return sorted((x - mx, y - my) for x, y in cells)


def _cw(cells):
    """Clockwise quarter turn on screen (y down): (x, y) -> (-y, x)."""
    return _norm([(-y, x) for x, y in cells])


def test_rotation_is_clockwise_on_screen_also_when_flipped():
    for shape in Shape:
        for flipped in (False, True):
            g = Ghost(shape, Rotation.NONE, flipped, 5, 5)
            before = g.rel_cells
            g.rotate(1)
            assert _norm(g.rel_cells) == _cw(before), (shape, flipped)
            g.rotate(-1)
            assert _norm(g.rel_cells) == _norm(before)
            g.rotate(2)
            assert _norm(g.rel_cells) == _cw(_cw(before))


def test_flip_mirrors_and_ghost_stays_on_board():
    g = Ghost(Shape.PENTO_I, Rotation.RIGHT, False, 18, 0)
    g.clamp()
    assert g.x == 15  # 5 wide
    g.rotate(1)
    assert g.size == (1, 5)
    g.x, g.y = 19, 19
    g.clamp()
    assert (g.x, g.y) == (19, 15)
    g = Ghost(Shape.TRIO_L)
    g.flip()
    assert g.flipped and _norm(g.rel_cells) == [(0, 1), (1, 0), (1, 1)]


def test_classify_three_states():
    st = GameState.new(SEASON_2021, Shape.PENTO_L)
    assert classify(st, SetMove(Color.BLUE, Shape.PENTO_L, x=0, y=0))[0] is GhostStatus.LEGAL
    status, mistake = classify(st, SetMove(Color.BLUE, Shape.PENTO_L, x=8, y=8))
    assert status is GhostStatus.NO_CONTACT and mistake is MoveMistake.NOT_IN_CORNER
    st.play(SetMove(Color.BLUE, Shape.PENTO_L, x=0, y=0))
    status, mistake = classify(st, SetMove(Color.YELLOW, Shape.PENTO_L, x=0, y=0))
    assert status is GhostStatus.BLOCKED and mistake is MoveMistake.OBSTRUCTED


def test_new_game_preselects_only_the_start_piece():
    s = GameSession.new_local(Shape.PENTO_V, season=SEASON_2021)
    assert s.seats == {Team.ONE: SeatKind.HUMAN, Team.TWO: SeatKind.AI}
    assert s.is_human_turn() and s.ghost is not None and s.ghost.shape is Shape.PENTO_V
    assert not s.placing.select(Shape.MONO)  # not the start piece
    assert "start piece" in s.feedback.text
    play_openings(s, 4)
    s.begin_turn()
    assert s.ghost is None  # no forced selection after the first move
    assert s.placing.cycle(1) and s.ghost.shape is Shape.MONO
    assert s.placing.cycle(1) and s.ghost.shape is Shape.DOMINO
    assert s.placing.cycle(-1) and s.ghost.shape is Shape.MONO
    assert s.placing.cycle(-1) and s.ghost.shape is Shape.PENTO_Y  # wraps around


def test_place_illegal_gives_reason_and_legal_plays():
    s = GameSession.new_local(Shape.PENTO_L, season=SEASON_2021)
    s.ghost.x, s.ghost.y = 8, 8
    assert s.placing.place() is None
    assert s.feedback.error and MoveMistake.NOT_IN_CORNER.english in s.feedback.text
    assert len(s.timeline) == 1
    s.ghost.x, s.ghost.y = 0, 0
    move = s.placing.place()
    assert move == SetMove(Color.BLUE, Shape.PENTO_L, x=0, y=0)
    assert s.state.turn == 1 and not s.is_human_turn() and s.wants_ai()


def test_pass_only_when_allowed_and_undo_back_to_human_turn():
    s = GameSession.new_local(Shape.PENTO_L, season=SEASON_2021)
    assert not s.can_pass()
    assert s.pass_turn() is None and MoveMistake.SKIP_FIRST_TURN.english in s.feedback.text
    play_openings(s, 4)
    assert s.can_pass()
    assert s.pass_turn() == SkipMove(Color.BLUE)
    assert s.timeline.entries[-1].text == "BLUE passed"
    s.apply(SkipMove(Color.YELLOW))  # the AI's answer
    assert s.state.color is Color.RED and s.is_human_turn()
    assert s.undo()
    # YELLOW's answer is the AI's: undo goes back to BLUE's turn (the human's previous turn)
    assert s.state.turn == 4 and s.state.color is Color.BLUE


def test_undo_skips_ai_moves():
    s = GameSession.new_local(Shape.PENTO_L, season=SEASON_2021)
    play_openings(s, 6)  # BLUE, YELLOW, RED, GREEN, BLUE, YELLOW -> RED (human) to move
    assert s.state.color is Color.RED
    assert s.undo()
    assert s.state.color is Color.BLUE and s.state.turn == 4
    assert s.undo() and s.state.turn == 2
    assert s.undo() and s.state.turn == 0
    assert not s.undo()


def test_autopilot_hands_the_turn_to_the_ai():
    s = GameSession.new_local(Shape.PENTO_L, season=SEASON_2021)
    assert s.is_human_turn()
    s.toggle_autopilot()
    assert not s.is_human_turn() and s.wants_ai() and s.ghost is None
    s.toggle_autopilot()
    assert s.is_human_turn() and s.ghost is not None


def test_log_entries_moves_skips_and_removals():
    a = GameState.new(SEASON_2021, Shape.PENTO_L)
    b = a.copy()
    b.play(SetMove(Color.BLUE, Shape.PENTO_L, x=0, y=0))
    tl = Timeline.from_states([a, b])
    assert [e.text for e in tl.entries] == ["BLUE PENTO_L @ (0,0)"]
    # a colour removal shows up as a turn gap
    c = b.copy()
    c.valid &= ~(1 << Color.YELLOW)
    c.turn = 2
    assert move_between(b, c) == SkipMove(Color.YELLOW)
    tl.append(c)
    assert tl.entries[-1].kind == "removed" and tl.entries[-1].color is Color.YELLOW


def test_hotseat_and_watch_seats():
    assert GameSession.new_local(Shape.PENTO_L, hotseat=True, season=SEASON_2021).seats == {
        Team.ONE: SeatKind.HUMAN,
        Team.TWO: SeatKind.HUMAN,
    }
    w = GameSession.new_local(Shape.PENTO_L, human=None, season=SEASON_2021)
    assert w.seats == {Team.ONE: SeatKind.AI, Team.TWO: SeatKind.AI} and w.wants_ai() and not w.is_human_turn()


def test_xml_pane_pretty_prints_and_flags_problems():
    from blokus.tui.widgets import pretty_xml

    pretty = '<room roomId="r">\n  <data class="x"/>\n</room>'
    assert pretty_xml('<room roomId="r"><data class="x"/></room>') == (pretty, None)
    assert pretty_xml("<protocol>") == ("<protocol>", None)
    text, problem = pretty_xml("<room><oops></room>")
    assert text == "<room><oops></room>" and problem.startswith("not well-formed")
