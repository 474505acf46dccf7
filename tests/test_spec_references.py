"""Every reference in the code to a document names a file of the repository and, with ``§N``, a section of it
that exists: ``docs/spec/rules.md §12``, ``docs/spec/protocol.md §4.5``, ``docs/spec/season-2027.md §3.6``
(the specifications the engine implements, carried in docs/spec/ so that a clone stands alone)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = ("blokus", "model", "ai", "net", "tui", "cli", "tests", "bench", "tuning")
# a document by its path, then its sections: "§8–§14, §2" (`` and * around the name allowed)
REFERENCE = re.compile(r"(docs/[\w/-]+\.md)[`*]*((?:\s*(?:,|–|-|and|or)?\s*§\s?\d+(?:\.\d+)*)*)")
SECTION = re.compile(r"§\s?(\d+(?:\.\d+)*)")
HEADING = re.compile(r"^#+\s+(?:Appendix\s+)?(\d+(?:\.\d+)*)\.?\s", re.MULTILINE)
BARE = re.compile(r"(?<![\w/.\"'-])(rules|season-2027|protocol)\.md")  # a spec cited without its folder


def references(text: str) -> list[tuple[str, list[str]]]:
    """(document, [section, ...]) for each reference in ``text``."""
    return [(m[1], SECTION.findall(m[2])) for m in REFERENCE.finditer(text)]


def sections(document: Path) -> set[str]:
    return set(HEADING.findall(document.read_text(encoding="utf-8")))


def code_files() -> list[Path]:
    return [p for folder in CODE for p in sorted((ROOT / folder).rglob("*.py")) if p.name != Path(__file__).name]


def test_every_reference_names_a_file_and_a_section_that_exist():
    broken = []
    cited = 0
    for path in code_files():
        for document, numbers in references(path.read_text(encoding="utf-8")):
            target = ROOT / document
            if not target.is_file():
                broken.append(f"{path.relative_to(ROOT)}: {document} (no such file)")
                continue
            known = sections(target)
            broken += [
                f"{path.relative_to(ROOT)}: {document} §{n} (no such section)" for n in numbers if n not in known
            ]
            cited += len(numbers)
    assert broken == []
    assert cited > 80  # the code cites the specifications some hundred times


def test_no_spec_is_cited_without_its_folder():
    bare = [
        f"{path.relative_to(ROOT)}:{text[: m.start()].count(chr(10)) + 1}"
        for path in code_files()
        for text in [path.read_text(encoding="utf-8")]
        for m in BARE.finditer(text)
    ]
    assert bare == []


def test_the_check_reads_ranges_lists_and_finds_a_missing_section(tmp_path):
    assert references("(``docs/spec/rules.md`` §8–§14, ``docs/spec/protocol.md`` §2, §5)") == [
        ("docs/spec/rules.md", ["8", "14"]),
        ("docs/spec/protocol.md", ["2", "5"]),
    ]
    assert references("docs/spec/season-2027.md §3.1–§3.2 and §5") == [
        ("docs/spec/season-2027.md", ["3.1", "3.2", "5"])
    ]
    doc = tmp_path / "d.md"
    doc.write_text("# Title\n## 1. One\n### 1.2 Two\n## Appendix A — x\n")
    assert sections(doc) == {"1", "1.2"}
    assert "1.3" not in sections(doc)
