"""The keys and mouse actions that place a piece (a part of ``GameScreen``): select, move, turn, flip,
place, pass. Each changes the session and repaints; refusals are explained by the session."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Protocol

from model.pieces import Shape
from tui.dialogs import ConfirmScreen
from tui.messages import BoardClicked, BoardHover, BoardWheel, ShapePicked
from tui.session import GameSession


class PlacingHost(Protocol):
    """What ``PlacingActions`` needs from its screen (``GameScreen``), besides
    being a ``BoardLayout`` screen."""

    session: GameSession

    def refresh_board(self) -> None: ...  # the board and the status line only (the ghost moved)

    def refresh_view(self) -> None: ...  # everything

    def show_feedback(self) -> None: ...  # the feedback line only

    def after_change(self) -> None: ...  # after a move: repaint, start the AI, check the end

    def say(self, text: str, error: bool = False) -> None: ...


# For mypy the actions are part of a BoardLayout screen that is a PlacingHost; at run time a plain mixin.
if TYPE_CHECKING:
    from tui.layout import BoardLayout

    class _PlacingActionsBase(BoardLayout, PlacingHost):
        pass
else:
    _PlacingActionsBase = object


class PlacingActions(_PlacingActionsBase):
    """Messages are handled by name (``on_board_clicked`` …): a plain mixin gets no ``@on`` handlers."""

    def _ghost_changed(self, ok: bool) -> None:
        if ok:
            if self.session.placing.forget_stale_refusal():
                self.show_feedback()
            self.refresh_board()

    def action_move(self, dx: int, dy: int) -> None:
        self._ghost_changed(self.session.placing.move_ghost(dx, dy))

    def action_rotate(self, quarter_turns: int) -> None:
        self._ghost_changed(self.session.placing.rotate(quarter_turns))

    def action_flip(self) -> None:
        self._ghost_changed(self.session.placing.flip())

    def action_cycle(self, step: int) -> None:
        self.session.placing.cycle(step)
        self.refresh_view()

    def select_shape(self, shape: Shape) -> None:
        self.session.placing.select(shape)
        self.refresh_view()

    def palette_extras(self) -> list[tuple[str, Callable[[], object], str]]:
        """Command palette: "Select PENTO_X" for every piece that can be placed now."""
        if not self.session.is_human_turn():
            return []
        return [
            (f"Select {shape.name}", partial(self.select_shape, shape), "pick this piece")
            for shape in sorted(self.session.placing.placeable_shapes())
        ]

    def action_deselect(self) -> None:
        self.session.placing.deselect()  # on a first move: says that the start piece is the only choice
        self.refresh_view()

    def action_place(self) -> None:
        self.session.placing.place()
        self.after_change()

    def action_pass_turn(self) -> None:
        s = self.session
        if not s.can_pass():
            s.pass_turn()  # explains why not
            self.refresh_view()
            return

        def answer(yes: bool | None) -> None:
            if yes:
                s.pass_turn()
                self.after_change()
            else:
                self.say("not passed")

        self.app.push_screen(
            ConfirmScreen(
                f"Pass with {s.state.current_color.name}? (You keep your pieces; the colour stays in the game.)"
            ),
            answer,
        )

    def on_board_hover(self, msg: BoardHover) -> None:
        g = self.session.ghost
        if g is not None and self.session.is_human_turn():
            g.x, g.y = msg.x, msg.y
            g.clamp()
            self.refresh_board()

    def on_board_clicked(self, msg: BoardClicked) -> None:
        if msg.button == 3:
            self.action_flip()
        elif msg.button == 1:
            self.on_board_hover(BoardHover(msg.x, msg.y))
            self.action_place()

    def on_board_wheel(self, msg: BoardWheel) -> None:
        self.action_rotate(msg.direction)

    def on_shape_picked(self, msg: ShapePicked) -> None:
        self.select_shape(msg.shape)
