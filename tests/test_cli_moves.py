"""``blokus moves`` and the ``blokus`` dispatcher."""

from __future__ import annotations

import gzip
import subprocess
import sys

import blokus
from cli.moves import moves_main
from model.moves import parse_move
from model.pieces import Shape
from model.state import GameState
from tests.conftest import fixture_path

MEMENTO = "sc2021/gen-21.3.3-s2c-memento-initial-PENTO_V.xml"
TURN70 = "sc2021/test-21.4.0-state-complete-turn70.xml"


def test_lists_every_legal_move_of_the_colour_to_move(capsys):
    assert moves_main([str(fixture_path(MEMENTO))]) == 0
    lines = capsys.readouterr().out.splitlines()
    moves = {parse_move(line) for line in lines}
    assert len(lines) == len(moves) == 12  # PENTO_V opening count (rules.md §16)
    assert moves == set(GameState.new(Shape.PENTO_V).legal_moves())
    assert "BLUE PENTO_V NONE false 0 0" in lines


def test_count_timing_and_several_files(capsys, tmp_path):
    gz = tmp_path / "turn70.xml.gz"
    gz.write_bytes(gzip.compress(fixture_path(TURN70).read_bytes()))
    assert moves_main(["--count", "--timing", str(fixture_path(MEMENTO)), str(gz)]) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert [(name, count) for name, count, _ in lines] == [(str(fixture_path(MEMENTO)), "12"), (str(gz), "3")]
    assert all(micros.isdigit() for *_, micros in lines)
    assert moves_main(["--count", str(gz)]) == 0
    assert capsys.readouterr().out == "3\n"


def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<state turn='x'")
    for path in (bad, tmp_path / "missing.xml"):
        assert moves_main([str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(path) in err and "Traceback" not in err


def test_dispatcher_help_lists_subcommands(capsys):
    assert blokus.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("play", "replay", "bot", "serve", "arena", "moves"):
        assert f"  {name} " in out
    assert blokus.main(["nonsense"]) == 2


def test_commands_without_ui_do_not_import_textual():
    code = (
        "import sys, blokus\n"
        "for name in ('cli.moves', 'net.bot', 'net.server', 'ai.arena'):\n"
        "    __import__(name)\n"
        "print('textual' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_the_first_start_spinner_turns_on_a_terminal_only():
    import io
    import threading

    from cli.args import Spinner

    class Terminal(io.StringIO):
        def __init__(self) -> None:
            super().__init__()
            self.turned = threading.Event()

        def isatty(self) -> bool:
            return True

        def write(self, text: str) -> int:
            if self.getvalue().count("preparing") >= 2:
                self.turned.set()
            return super().write(text)

    terminal, pipe = Terminal(), io.StringIO()
    with Spinner("preparing the engine (first start only)", terminal):
        assert terminal.turned.wait(60)  # at least two frames while the slow thing runs
    with Spinner("preparing the engine (first start only)", pipe):
        pass
    assert terminal.getvalue().endswith("\r\x1b[K") and "| preparing the engine" in terminal.getvalue()
    assert pipe.getvalue() == ""
