"""Incremental framing of the protocol stream (protocol.md §1): one message = one child of ``<protocol>``.

:class:`StreamFramer` takes raw bytes as they arrive (any split, also inside multi-byte UTF-8
characters) and returns every complete depth-1 element as soon as its last byte is there. It rejects a
DOCTYPE or entity declaration, caps the size of one message and turns parser errors into
:class:`ProtocolError`. :func:`parse_stream` and :func:`parse_document` read whole byte strings the
same way (replay files, fixtures). No sockets here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from lxml import etree

DEFAULT_MAX_MESSAGE_SIZE: Final = 1 << 20  # 1 MiB; the largest real message is about 20 kB
ROOT_TAG: Final = "protocol"
_SLICE: Final = 16 * 1024  # granularity of the size accounting
_FORBIDDEN: Final = (b"<!DOCTYPE", b"<!ENTITY")
_TAIL: Final = max(len(m) for m in _FORBIDDEN) - 1
# Entity references. Without a DTD only the five predefined ones exist; libxml2 with
# resolve_entities=False does not report an undefined one but silently stops parsing, so they are
# refused here (character references ``&#…;`` are checked by the parser itself).
_ENTITY_REF: Final = re.compile(rb"&([^\s;&<>\"'#][^\s;&<>\"']*);")
_OPEN_REF: Final = re.compile(rb"&[^\s;&<>\"'#]?[^\s;&<>\"']*\Z")
_PREDEFINED: Final = frozenset((b"lt", b"gt", b"amp", b"quot", b"apos"))


class ProtocolError(Exception):
    """The peer's stream cannot be read any further; the connection should be closed.

    ``frames``: messages completed by the failing ``feed`` call before the error (hand them on first).
    """

    frames: Sequence[Frame] = ()


class MalformedXml(ProtocolError):
    """Not well-formed XML, or not a ``<protocol>`` stream."""


class ForbiddenDoctype(ProtocolError):
    """A DOCTYPE or entity declaration (never sent by the server; protocol.md §1.2)."""


class MessageTooLarge(ProtocolError):
    """More bytes than the cap without completing a message."""


class TruncatedStream(ProtocolError):
    """The input ended before ``</protocol>``."""

    def __init__(self, message: str, *, partial_message: bool) -> None:
        super().__init__(message)
        self.partial_message = partial_message


class EndOfStream:
    """Sentinel returned by :meth:`StreamFramer.feed` when ``</protocol>`` has been read."""

    _instance: EndOfStream | None = None

    def __new__(cls) -> EndOfStream:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "END_OF_STREAM"


END_OF_STREAM: Final = EndOfStream()

Frame = etree._Element | EndOfStream


def _make_parser(events: tuple[str, ...] | None = None, pull: bool = True) -> etree.XMLParser:
    options = dict(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        collect_ids=False,
        encoding="utf-8",
    )
    if pull:
        return etree.XMLPullParser(events=events, **options)
    return etree.XMLParser(**options)


class StreamFramer:
    """Cuts one direction of a connection into messages.

    ``feed(data)`` returns the messages completed by ``data`` (lxml elements, detached from the root so
    that memory stays flat) and, once, :data:`END_OF_STREAM` when ``</protocol>`` arrives. Call
    :meth:`close` at the end of input: it raises :class:`TruncatedStream` if ``</protocol>`` is missing.
    Any :class:`ProtocolError` is final: the framer refuses further input.

    The size of one message (bytes since the last complete message) is checked with a granularity of
    16 KiB: a message larger than ``max_message_size + 16 KiB`` is always refused.
    """

    def __init__(self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        if max_message_size <= 0:
            raise ValueError("max_message_size must be positive")
        self.max_message_size = max_message_size
        self._parser = _make_parser(("start", "end"))
        self._depth = 0
        self._tail = b""
        self._pending = 0  # bytes fed since the last complete message (approximately, see above)
        self._root: etree._Element | None = None
        self._error: ProtocolError | None = None
        self.ended = False
        self.messages_read = 0
        self.bytes_read = 0

    @property
    def held_elements(self) -> int:
        """Elements still attached to the root (0 between messages: memory stays flat)."""
        return 0 if self._root is None else len(self._root)

    @property
    def in_message(self) -> bool:
        """True while a message has started but not finished."""
        return self._depth > 1

    def feed(self, data: bytes) -> list[Frame]:
        if self._error is not None:
            raise self._error
        out: list[Frame] = []
        try:
            self._feed(data, out)
        except ProtocolError as exc:
            exc.frames = out
            raise
        return out

    def _feed(self, data: bytes, out: list[Frame]) -> None:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError("feed() takes bytes (never decoded text)")
        data = bytes(data)
        if not data:
            return
        self.bytes_read += len(data)
        if self.ended:
            if data.strip():
                self._fail(MalformedXml("data after </protocol>"))
            return
        self._check(data)
        for start in range(0, len(data), _SLICE):
            chunk = data[start : start + _SLICE]
            self._pending += len(chunk)
            try:
                self._parser.feed(chunk)
                self._collect(out)
            except etree.XMLSyntaxError as exc:
                try:  # messages completed before the error in this slice
                    self._collect(out)
                except (etree.XMLSyntaxError, ProtocolError):
                    pass
                self._fail(MalformedXml(f"not well-formed XML: {exc}"))
            if self.ended:
                rest = data[start + len(chunk) :]
                if rest.strip():
                    self._fail(MalformedXml("data after </protocol>"))
                break
            if self._pending > self.max_message_size:
                self._fail(MessageTooLarge(
                    f"message larger than {self.max_message_size} bytes "
                    f"({self._pending} bytes without a complete message)"
                ))

    def _check(self, data: bytes) -> None:
        """Refuse DOCTYPE / ENTITY declarations and undefined entity references before parsing, also
        when they are split between chunks (the unfinished end of the previous chunk is kept)."""
        scan = self._tail + data
        for marker in _FORBIDDEN:
            if marker in scan:
                self._fail(ForbiddenDoctype(f"{marker.decode()} is not allowed in the protocol stream"))
        for match in _ENTITY_REF.finditer(scan):
            if match.group(1) not in _PREDEFINED:
                name = match.group(1)[:40].decode("utf-8", "replace")
                self._fail(MalformedXml(f"undefined entity reference &{name};"))
        tail = scan[-_TAIL:]
        open_ref = _OPEN_REF.search(scan)
        if open_ref is not None and len(open_ref.group()) > len(tail):
            tail = open_ref.group()
        self._tail = tail

    def _collect(self, out: list[Frame]) -> None:
        for event, elem in self._parser.read_events():
            if event == "start":
                self._depth += 1
                if self._depth == 1:
                    if elem.tag != ROOT_TAG:
                        self._fail(MalformedXml(f"expected <{ROOT_TAG}>, got <{elem.tag}>"))
                    self._root = elem
                    docinfo = elem.getroottree().docinfo
                    if docinfo.doctype or docinfo.internalDTD is not None:
                        self._fail(ForbiddenDoctype("a DOCTYPE is not allowed in the protocol stream"))
            else:
                self._depth -= 1
                if self._depth == 1:
                    parent = elem.getparent()
                    if parent is not None:
                        parent.remove(elem)
                    elem.tail = None
                    out.append(elem)
                    self.messages_read += 1
                    self._pending = 0
                elif self._depth == 0:
                    self.ended = True
                    out.append(END_OF_STREAM)

    def close(self) -> None:
        """End of input. Raises :class:`TruncatedStream` unless ``</protocol>`` was read."""
        if self._error is not None:
            raise self._error
        if self.ended:
            return
        partial = self._depth > 1
        if self._depth == 0 and self.bytes_read == 0:
            raise TruncatedStream("empty stream", partial_message=False)
        what = "inside a message" if partial else "between messages"
        raise TruncatedStream(
            f"stream ended {what} without </{ROOT_TAG}> after {self.messages_read} complete messages",
            partial_message=partial,
        )

    def _fail(self, error: ProtocolError) -> None:
        self._error = error
        raise error


@dataclass
class ParsedStream:
    """The messages of a whole stream; ``truncated`` if it lacked ``</protocol>`` (``strict=False``)."""

    messages: list[etree._Element] = field(default_factory=list)
    ended: bool = False
    truncated: bool = False
    partial_message: bool = False
    warning: str | None = None


def parse_stream(
    data: bytes,
    *,
    prepend_protocol: bool = False,
    strict: bool = True,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> ParsedStream:
    """Read a complete stream (a replay file, a recorded connection) with :class:`StreamFramer`.

    ``prepend_protocol``: the data is a stream fragment without the opening ``<protocol>`` (several
    top-level elements). ``strict=False``: a missing ``</protocol>`` is reported in the result
    (``truncated``, ``warning``) instead of raising :class:`TruncatedStream`; all complete messages
    are returned. Every other :class:`ProtocolError` is raised.
    """
    framer = StreamFramer(max_message_size)
    result = ParsedStream()
    if prepend_protocol:
        data = _insert_protocol(data)
    for frame in framer.feed(data):
        if isinstance(frame, EndOfStream):
            result.ended = True
        else:
            result.messages.append(frame)
    try:
        framer.close()
    except TruncatedStream as exc:
        if strict:
            raise
        result.truncated = True
        result.partial_message = exc.partial_message
        result.warning = str(exc)
    return result


def _insert_protocol(data: bytes) -> bytes:
    """Put ``<protocol>`` after a leading BOM / XML declaration (a declaration must come first)."""
    head = b""
    if data.startswith(b"\xef\xbb\xbf"):
        head, data = data[:3], data[3:]
    stripped = data.lstrip()
    if stripped.startswith(b"<?xml"):
        end = stripped.find(b"?>")
        if end >= 0:
            head += stripped[: end + 2]
            data = stripped[end + 2 :]
    return head + b"<" + ROOT_TAG.encode() + b">" + data


def parse_document(data: bytes, *, max_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> etree._Element:
    """Parse one standalone XML element (a fixture file, a state file) with the same safety rules:
    no DOCTYPE or entities, no network, size cap; comments and processing instructions are dropped."""
    if len(data) > max_size:
        raise MessageTooLarge(f"document larger than {max_size} bytes")
    for marker in _FORBIDDEN:
        if marker in data:
            raise ForbiddenDoctype(f"{marker.decode()} is not allowed")
    try:
        root = etree.fromstring(data, _make_parser(pull=False))
    except etree.XMLSyntaxError as exc:
        raise MalformedXml(f"not well-formed XML: {exc}") from exc
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None:
        raise ForbiddenDoctype("a DOCTYPE is not allowed")
    return root
