"""The one parser of player names (``cli.players``): every accepted form, and one line for the rest."""

from __future__ import annotations

import pytest

from blokus.cli.players import PlayerKind, PlayerNameError, PlayerUnavailable, check_player, parse_player


@pytest.mark.parametrize(
    "name,kind,external",
    [
        ("level3", PlayerKind.LEVEL, False),
        ("greedy", PlayerKind.BUILTIN, False),
        ("lookahead-py", PlayerKind.BUILTIN, False),
        ("mcts", PlayerKind.BUILTIN, False),
        ("mcts:prune=0.05,root_eval=0", PlayerKind.MCTS, False),
        ("gtp:/opt/pentobi/pentobi-gtp:5", PlayerKind.GTP, False),
        ("cmd:java -jar player.jar", PlayerKind.CMD, True),
        ("py:my/player.py:Logic", PlayerKind.PY, True),
    ],
)
def test_every_form_is_recognised(name, kind, external):
    spec = parse_player(name)
    assert (spec.kind, spec.name, spec.external) == (kind, name, external)


def test_the_parts_of_a_name():
    assert parse_player("level2").level == 2
    gtp = parse_player("gtp:/opt/pentobi/pentobi-gtp:5")
    assert (gtp.path, gtp.level) == ("/opt/pentobi/pentobi-gtp", 5)
    assert parse_player("cmd:./start.sh --fast").argv == ("./start.sh", "--fast")
    py = parse_player("py:my/player.py:Logic")
    assert (py.path, py.class_name) == ("my/player.py", "Logic")
    assert parse_player("py:player.py").class_name == ""
    assert parse_player("human").kind is PlayerKind.HUMAN


def test_an_unknown_name_lists_every_form_in_one_line():
    with pytest.raises(PlayerNameError) as info:
        parse_player("nobody", "AI")
    text = str(info.value)
    assert text.startswith("unknown AI 'nobody'") and "\n" not in text
    for form in ("level1..level5", "greedy", "lookahead-py", "mcts:KEY=VALUE", "gtp:PATH:LEVEL", "cmd:COMMAND"):
        assert form in text
    assert "py:PATH[:CLASS]" in text


@pytest.mark.parametrize(
    "name,words",
    [
        ("level9", "level must be one of 1, 2, 3, 4, 5"),
        ("gtp:nolevel", "gtp:PATH:LEVEL"),
        ("mcts:nonsense=1", "'nonsense=1' is not KEY=VALUE"),
        ("cmd:", "no command after cmd:"),
        ("py:", "py:PATH[:CLASS]"),
    ],
)
def test_a_malformed_name_is_one_line(name, words):
    with pytest.raises(PlayerNameError, match=words.replace("[", r"\[")) as info:
        parse_player(name)
    assert "\n" not in str(info.value)


def test_an_in_process_spec_builds_its_player_and_a_program_does_not():
    player = parse_player("level1").build(seed=1)
    assert player.name == "level1"
    with pytest.raises(PlayerUnavailable, match="a process of its own"):
        parse_player("py:no-such-player.py").build(0)
    with pytest.raises(PlayerUnavailable, match="a person at the terminal"):
        parse_player("human").build(0)
    with pytest.raises(ValueError, match="no-such-player.py: no such file"):
        check_player(parse_player("py:no-such-player.py"))
    with pytest.raises(PlayerUnavailable, match="is a program"):
        parse_player("cmd:./start.sh").build(0)
