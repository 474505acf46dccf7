"""model/text.py: text from outside made printable (control characters escaped, length bounded) in the
errors of the commands and the texts the TUI shows."""

from __future__ import annotations

from blokus.model.pieces import Shape, Team
from blokus.model.result import Cause, irregular_result
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState
from blokus.model.text import printable


def test_printable_escapes_every_control_character_and_bounds_the_length():
    assert printable("plain text, äöü — 漢字") == "plain text, äöü — 漢字"
    assert printable("\x1b]0;owned\x07\x1b[31m") == "\\x1b]0;owned\\x07\\x1b[31m"
    assert printable("a\x9bb\x85c\x7f") == "a\\x9bb\\x85c\\x7f"  # C1 controls (CSI, NEL) and DEL
    assert printable("line\nnext\r\tx") == "line\\nnext\\r\\tx"
    assert printable("\u202eevil\u200b\u2028") == "\\u202eevil\\u200b\\u2028"  # bidi override, zero width, LS
    long = printable("x" * 1000, 50)
    assert len(long) == 50 and long.endswith("…")
    cut = printable("ab" + "\x1b" * 10, 7)  # an escape is never cut in half
    assert cut == "ab\\x1b…" and len(cut) <= 7
    assert printable(ValueError("bad \x07")) == "bad \\x07"


def test_no_terminal_escapes_in_the_errors_of_moves_analyse_and_replay(tmp_path, capsys):
    from blokus.cli import analyse as analyse_cli
    from blokus.cli import moves as cli
    from blokus.cli import replay as replay_cli

    bad = tmp_path / "evil\x1b[2J.xml"
    bad.write_bytes(b"<state>&\x1b]0;owned\x07\x1b[31m;</state>")
    for run in (
        lambda: cli.main([str(bad)]),
        lambda: analyse_cli.main([str(bad), "-q", "--no-cache"]),
        lambda: replay_cli.main([str(bad)]),
    ):
        assert run() == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "\\x1b" in err, err
        assert "\x1b" not in err and "\x07" not in err


def test_result_texts_shown_in_the_tui_are_printable():
    from blokus.tui.replays import result_texts

    state = GameState.new(SEASON_2021, Shape.PENTO_L)
    result = irregular_result(
        Team.ONE, Cause.LEFT, "gone \x1b[5m\x07", (0, 0), ("\x1b[31mevil", "b"), season=SEASON_2021
    )
    title, lines = result_texts(result, state, {Team.ONE: "\x1b[31mevil", Team.TWO: "b"})
    assert not any("\x1b" in t or "\x07" in t for t in (title, *lines))
    assert any("\\x1b[5m\\x07" in line for line in lines)
