"""Text from outside (files, server messages, peer names, reasons) made safe to show (issue 39).

:func:`printable` is the one place that does it: every such text passes through it before it reaches a
terminal, a log line or a TUI widget, so that no escape sequence, bell or other control character from
an untrusted source is ever written raw, and no single text floods a line.
"""

from __future__ import annotations

from typing import Final

DEFAULT_LIMIT: Final = 300  # characters; longer texts are cut with "…"
_NAMED: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Invisible characters that ``str.isprintable`` lets through (Unicode's default-ignorable letters and marks:
# Hangul fillers, the combining grapheme joiner, Khmer and Mongolian invisibles); every C0/C1 control, bidi
# override/isolate and zero-width character (categories Cc, Cf, Zl, Zp) is already not printable.
_INVISIBLE: Final = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u3164\uffa0")


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: object, limit: int | None = DEFAULT_LIMIT) -> str:
    """``text`` with every character that is not printable escaped like a Python string literal (ESC is
    ``\\x1b``, BEL ``\\x07``, a C1 control ``\\x9b``, a newline ``\\n``, bidi and zero-width controls
    ``\\u202e``), cut to at most ``limit`` characters (an escape is never cut in half; ``None``: no cut)."""
    out: list[str] = []
    length = 0
    for ch in str(text):
        piece = ch if ch.isprintable() and ch not in _INVISIBLE else _escape(ch)
        if limit is not None and length + len(piece) > limit:
            while out and length + 1 > limit:  # room for the ellipsis
                length -= len(out.pop())
            out.append("…")
            break
        out.append(piece)
        length += len(piece)
    return "".join(out)
