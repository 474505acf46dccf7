"""Command-palette entries (ctrl+p) for the main actions, and "select PIECE" for every piece."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

GAME_COMMANDS = [
    ("Place piece", "place", "place the selected piece (enter)"),
    ("Rotate clockwise", "rotate(1)", "d"),
    ("Rotate counter-clockwise", "rotate(-1)", "a"),
    ("Rotate 180°", "rotate(2)", "w / s"),
    ("Flip piece", "flip", "f"),
    ("Next piece", "cycle(1)", "tab / n"),
    ("Pass", "pass_turn", "P — not on a colour's first move"),
    ("Undo", "undo", "u — back to your previous turn"),
    ("Hint", "hint", "i — the AI's suggestion as the ghost"),
    ("AI, play this move", "ai_move", "m"),
    ("Toggle autopilot", "autopilot", "o — the AI plays your colours"),
    ("Toggle legal-field overlay", "overlay", "v"),
    ("Back to the live game", "live", "g"),
    ("Save game as replay", "save", "ctrl+s — under replays/"),
    ("Open replay…", "open_replay", "ctrl+r — from replays/"),
    ("Toggle XML pane", "xml", "x — network games"),
    ("Help", "help", "? / F1"),
]

REPLAY_COMMANDS = [
    ("Step forward", "step(1)", "→"),
    ("Step back", "step(-1)", "←"),
    ("Jump to start", "jump(0)", "home"),
    ("Jump to end", "jump(-1)", "end"),
    ("Go to turn…", "goto", "t"),
    ("Open replay…", "open_replay", "ctrl+r — from replays/"),
    ("Toggle autoplay", "autoplay", "space"),
    ("Autoplay faster", "speed(1)", "+"),
    ("Autoplay slower", "speed(-1)", "-"),
    ("Help", "help", "? / F1"),
]


class BlokusCommands(Provider):
    def _entries(self) -> list[tuple[str, str, str]]:
        from tui.game_screen import GameScreen
        from tui.replay_screen import ReplayScreen

        screen = self.screen
        if isinstance(screen, GameScreen):
            entries = list(GAME_COMMANDS)
            s = screen.session
            if s.is_human_turn():
                for shape in sorted(s.placeable_shapes()):
                    entries.append((f"Select {shape.name}", f"select:{shape.name}", "pick this piece"))
            entries.append(("Toggle light/dark theme", "app:toggle_theme", "ctrl+t"))
            return entries
        if isinstance(screen, ReplayScreen):
            return [*REPLAY_COMMANDS, ("Toggle light/dark theme", "app:toggle_theme", "ctrl+t")]
        return []

    async def _run(self, action: str) -> None:
        screen = self.screen
        if action.startswith("select:"):
            from model.pieces import Shape

            screen.select_shape(Shape[action.split(":", 1)[1]])  # type: ignore[attr-defined]
        elif action.startswith("app:"):
            await self.app.run_action(action[4:])
        else:
            await screen.run_action(action)

    async def discover(self) -> Hits:
        for name, action, help_text in self._entries():
            yield DiscoveryHit(name, partial(self._run, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, action, help_text in self._entries():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), partial(self._run, action), help=help_text)
