"""One concept, one place: the season is told by its profile (``model/season.py``) alone."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("blokus", "model", "ai", "net", "tui", "cli")
SEASON_WORDS = {2021, 2027, "2021", "2027", "swc_2021_blokus", "swc_2027_blokus", "sc.plugin2021", "sc.plugin2027"}


def _sources() -> list[Path]:
    files = [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))]
    return [p for p in files if p != ROOT / "model" / "season.py"]


def _season_tests(tree: ast.AST) -> list[int]:
    """Lines that compare with a season's year or name, or read ``.year``."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "year":
            lines.append(node.lineno)
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(isinstance(o, ast.Constant) and o.value in SEASON_WORDS for o in operands):
                lines.append(node.lineno)
    return lines


def test_no_code_outside_the_season_profile_compares_seasons():
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in _sources()
        for line in _season_tests(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == []


def test_the_check_finds_a_comparison():
    assert _season_tests(ast.parse("if state.season.year == 2021: pass")) == [1, 1]
    assert _season_tests(ast.parse("reserved = None if game_type == 'swc_2021_blokus' else True")) == [1]


def _bonus_literals(tree: ast.AST) -> list[int]:
    """Lines that add a number to ``TOTAL_SQUARES`` (a score bonus written as a literal, not by its name)."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add)
        and isinstance(node.left, ast.Name)
        and node.left.id == "TOTAL_SQUARES"
        and isinstance(node.right, ast.Constant)
    ]


def test_the_score_bonuses_are_named_where_points_are_counted():
    # the rule is one place: ALL_PLACED_BONUS and MONO_LAST_BONUS of model/pieces.py (docs/spec/rules.md §11)
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in _sources()
        for line in _bonus_literals(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == []
    assert _bonus_literals(ast.parse("x = TOTAL_SQUARES + 15 + 5")) == [1]


def test_the_user_cache_folder_is_named_in_one_place(tmp_path, monkeypatch):
    """``~/.cache/blokus`` with a subfolder per use (``model/user_cache.py``); no other source names a cache home."""
    from blokus.ai.analysis import cache_dir
    from blokus.model.numba_cache import user_roots
    from blokus.tui.app import default_log_path
    from blokus.tui.external import program_log_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("BLOKUS_LOG", raising=False)
    folders = [cache_dir(), program_log_dir(), user_roots()[0], default_log_path()]
    assert folders == [tmp_path / "blokus" / name for name in ("analysis", "programs", "numba", "blokus.log")]
    words = {"XDG_CACHE_HOME", ".cache", "blokus-numba"}
    named = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in _sources()
        if path.name != "user_cache.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value in words
    ]
    assert named == []
