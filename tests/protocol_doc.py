"""The text pictures of docs/protocol.md, drawn from ``model.pieces`` (the doc's test compares them)."""

from __future__ import annotations

from blokus.model.pieces import SHAPES, Cell, Rotation, Shape, transform


def _rows(cells: set[Cell]) -> list[str]:
    width = max(x for x, _ in cells) + 1
    height = max(y for _, y in cells) + 1
    return ["".join("#" if (x, y) in cells else " " for x in range(width)) for y in range(height)]


def row_of_pictures(items: list[tuple[str, set[Cell]]], gap: int = 2) -> list[str]:
    """Labels on one line, each shape's picture below its label, columns wide enough for both."""
    widths = [max(len(label), len(_rows(cells)[0])) + gap for label, cells in items]
    pictures = [_rows(cells) for _, cells in items]
    height = max(len(p) for p in pictures)
    lines = ["".join(label.ljust(w) for (label, _), w in zip(items, widths, strict=True)).rstrip()]
    for y in range(height):
        line = "".join((p[y] if y < len(p) else "").ljust(w) for p, w in zip(pictures, widths, strict=True))
        lines.append(line.rstrip())
    return lines


def shapes_picture() -> str:
    """All 21 shapes in two rows (the small ones, then the pentominoes)."""
    small = [(s.name, set(s.base_cells)) for s in SHAPES if s.size < 5]
    pentos = [(s.name, set(s.base_cells)) for s in SHAPES if s.size == 5]
    return "\n".join(row_of_pictures(small) + row_of_pictures(pentos))


def orientations_picture(shape: Shape = Shape.PENTO_L) -> str:
    """``shape`` under every (rotation, flip) pair."""
    items = [
        (f"{r.name}{'+flip' if flipped else ''}", set(transform(shape, r, flipped)))
        for flipped in (False, True)
        for r in Rotation
    ]
    return "\n".join(row_of_pictures(items))


if __name__ == "__main__":
    print(shapes_picture())
    print()
    print(orientations_picture())
