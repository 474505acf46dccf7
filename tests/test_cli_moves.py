"""``blokus moves`` and the ``blokus`` dispatcher."""

from __future__ import annotations

import gzip
import subprocess
import sys
from functools import partial

import blokus
from blokus.cli.moves import main as moves_main
from blokus.model.moves import parse_move
from blokus.model.pieces import Shape
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState
from tests.helpers import fixture_path

MEMENTO = "sc2021/gen-21.3.3-s2c-memento-initial-PENTO_V.xml"
TURN70 = "sc2021/test-21.4.0-state-complete-turn70.xml"


def test_lists_every_legal_move_of_the_colour_to_move(capsys):
    assert moves_main([str(fixture_path(MEMENTO))]) == 0
    lines = capsys.readouterr().out.splitlines()
    moves = {parse_move(line) for line in lines}
    assert len(lines) == len(moves) == 12  # PENTO_V opening count (docs/spec/rules.md §16)
    assert moves == set(GameState.new(SEASON_2021, Shape.PENTO_V).legal_moves())
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


def test_an_invalid_field_is_named_as_the_xml_names_it_with_its_line(capsys, tmp_path):
    state = fixture_path("sc2021/test-21.3.0-state-initial-with-board.xml").read_text()
    memento = fixture_path(MEMENTO).read_text()
    cases = {
        "turn.xml": (state.replace('turn="0"', 'turn="x"'), "<state> line 1, @turn: not an integer: 'x'"),
        "cell.xml": (state.replace('x="8"', 'x="zz"', 1), "board/field/@x: not an integer: 'zz'"),
        "shape.xml": (
            state.replace("<shape>TETRO_Z<", "<shape>BOGUS<"),
            "blueShapes/shape: unknown Shape value 'BOGUS' (and 3 more)",
        ),
        "memento.xml": (memento.replace('startPiece="PENTO_V"', 'startPiece="NOPE"'), "data/state/@startPiece: "),
    }
    for name, (text, expected) in cases.items():
        assert text != (memento if name == "memento.xml" else state)  # the fixture holds what is replaced
        (tmp_path / name).write_text(text)
        assert moves_main([str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and expected in err and "validation error" not in err, err


def test_dispatcher_help_lists_subcommands(capsys):
    assert blokus.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("play", "replay", "bot", "serve", "arena", "moves"):
        assert f"  {name} " in out
    assert blokus.main(["nonsense"]) == 2


def test_the_program_freezes_its_start_objects_and_a_caller_of_main_keeps_its_own():
    # the blokus program (run()) freezes what importing its command made, so that no garbage collection
    # scans it again; a program that calls main() (a test, a team's script) keeps its collector as it was
    code = (
        "import gc, sys, blokus\n"
        "how, sys.argv[1:] = sys.argv[1], ['moves', '--help']\n"
        "try:\n"
        "    blokus.run() if how == 'program' else blokus.main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(gc.get_freeze_count(), gc.isenabled(), file=sys.stderr)\n"
    )
    for how, frozen in (("program", True), ("caller", False)):
        done = subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, check=False)
        count, enabled = done.stderr.split()[-2:]
        assert (int(count) > 0) is frozen and enabled == "True", (how, done.stderr)


def test_commands_without_ui_do_not_import_textual(tmp_path):
    code = (
        "import sys\n"
        "for name in ('moves', 'bot', 'serve', 'arena', 'bundle', 'analyse'):\n"
        "    __import__('blokus.cli.' + name)\n"
        "print('textual' in sys.modules)\n"
    )
    # from another folder: the installed package, not the checkout's top-level folders
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    out = run.stdout
    assert out.strip() == "False"


GAME1 = "sc2021/gen-21.3.3-game1-replay-regular-end.xml"


def _blokus(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "blokus", *args], capture_output=True, text=True, timeout=300)


def _blokus_here(capsys, *args: str) -> subprocess.CompletedProcess:
    """``blokus ARGS`` in this process, as its process would end (exit code, stdout, stderr): an interpreter's
    start costs ~1.5 s of CPU, so each test below runs one real process (``_blokus``) and the rest here."""
    capsys.readouterr()
    try:
        code = blokus.main(list(args))
    except SystemExit as exc:  # argparse's errors, as `python -m blokus` ends with them
        code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["blokus", *args], code, out, err)


def test_a_replay_is_named_as_one_and_turn_picks_its_state(tmp_path, capsys):
    replay = fixture_path(GAME1)
    gz = tmp_path / "game1.xml.gz"
    gz.write_bytes(gzip.compress(replay.read_bytes()))
    for path, blokus_run in ((replay, _blokus), (gz, partial(_blokus_here, capsys))):
        run = blokus_run("moves", str(path))
        assert run.returncode == 2 and run.stdout == ""
        assert run.stderr.count("\n") == 1 and "a replay" in run.stderr
        assert f"blokus moves {path} --turn N" in run.stderr and "elements" not in run.stderr
    from blokus.model.replay import load_replay

    state = next(s for s in load_replay(replay).states if s.turn == 20)
    run = _blokus_here(capsys, "moves", str(gz), "--turn", "20")
    assert run.returncode == 0, run.stderr
    assert {parse_move(line) for line in run.stdout.splitlines()} == set(state.legal_moves())
    missing = _blokus_here(capsys, "moves", str(replay), "--turn", "500")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "no state at turn 500" in missing.stderr
    state_file = _blokus_here(capsys, "moves", str(fixture_path(MEMENTO)), "--turn", "3")
    assert state_file.returncode == 2 and "not a replay" in state_file.stderr


def test_binary_data_is_not_echoed(tmp_path, capsys):
    junk = tmp_path / "junk.xml"
    junk.write_bytes(b"<protocol>&?.%jc#\xffhu/*\xfe{\xfd;" + bytes(range(256)))
    here = partial(_blokus_here, capsys)
    for command, blokus_run in ((["moves"], here), (["analyse", "-q", "--no-cache"], here), (["replay"], _blokus)):
        run = blokus_run(*command, str(junk))
        assert run.returncode == 2
        assert run.stderr.count("\n") == 1 and "binary data, not XML" in run.stderr
        assert "\ufffd" not in run.stderr and all(ch.isprintable() for ch in run.stderr.strip())


def test_dash_h_without_a_host_points_to_help(capsys):
    # as processes: test_cli_play (play -h HOST), test_net_bot (bot -h HOST)
    for command in ([], ["bot"], ["play"]):
        run = _blokus_here(capsys, *command, "-h")
        assert run.returncode == 2 and run.stderr.count("\n") == 1
        assert "--help shows the help" in run.stderr and "expected one argument" not in run.stderr


def test_the_first_start_spinner_turns_on_a_terminal_only():
    import io
    import threading

    from blokus.tui.spinner import Spinner

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
