"""Options declared once per command (issue 62 item 6): a command's options object takes each field from the
option of its name; nothing is copied by hand, and a field without an option is a mistake found at once."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from blokus.cli.bot import parse_options
from blokus.cli.options import options_from
from blokus.cli.play import play_options
from blokus.cli.watch import watch_options
from blokus.net.bot import BotOptions
from blokus.net.watch import WatchOptions
from blokus.tui.launch import PlayOptions


@dataclasses.dataclass(frozen=True)
class Two:
    move_time: int
    label: str = "x"


def test_fields_come_from_the_options_of_their_names_or_are_given():
    args = argparse.Namespace(move_time=300, label="y", other=1)
    assert options_from(Two, args) == Two(300, "y")
    assert options_from(Two, args, label="z") == Two(300, "z")
    with pytest.raises(TypeError, match=r"Two.label: no option --label"):
        options_from(Two, argparse.Namespace(move_time=1))
    with pytest.raises(TypeError, match="Two has no field colour"):
        options_from(Two, args, colour=1)


def test_each_command_fills_every_field_of_its_options_from_its_command_line():
    bot = parse_options(["-h", "example.org", "-p", "13051", "-r", "abc", "--move-time", "900", "--strict"])
    assert isinstance(bot, BotOptions)
    assert (bot.host, bot.port, bot.reservation, bot.move_time, bot.strict) == ("example.org", 13051, "abc", 900, True)
    play = play_options(["--seed", "7", "--light", "--move-time", "250"])
    assert isinstance(play, PlayOptions) and (play.seed, play.light, play.move_time) == (7, True, 250)
    watch = watch_options(["-h", "example.org", "--password", "pw", "--prepare", "a", "b", "--time", "400"])
    assert isinstance(watch, WatchOptions)
    assert (watch.password, watch.prepare, watch.time_ms) == ("pw", ("a", "b"), 400)
