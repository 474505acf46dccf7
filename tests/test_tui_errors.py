"""An unexpected error in the app: one readable line on stderr, the traceback in the log, exit code 1."""

from __future__ import annotations

import logging

import pytest
from textual.screen import Screen

from blokus.tui.app import BlokusApp


class Failing(Screen):
    def on_mount(self) -> None:
        raise RuntimeError("boom [/not markup]")


@pytest.mark.parametrize("columns", [None, "50"])  # a user's narrow terminal gets one line too
async def test_unexpected_error_is_one_line_and_logged(capsys, caplog, monkeypatch, columns):
    if columns is not None:
        monkeypatch.setenv("COLUMNS", columns)
    app = BlokusApp(Failing)
    with caplog.at_level(logging.ERROR, logger="blokus.tui.app"), pytest.raises(RuntimeError, match="boom"):
        async with app.run_test():
            pass  # run_test raises the app's error again after the shutdown
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "blokus: unexpected error: RuntimeError: boom [/not markup] (the details are in " in lines[0]  # as it is
    assert "Traceback" not in err
    assert app.return_code == 1
    logged = [r for r in caplog.records if r.getMessage() == "unexpected error"]
    assert logged and logged[0].exc_info is not None and logged[0].exc_info[0] is RuntimeError
