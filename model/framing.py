"""Incremental framing of the protocol stream (docs/spec/protocol.md §1): one message = one child of ``<protocol>``.

:class:`StreamFramer` takes raw bytes as they arrive (any split, also inside multi-byte UTF-8
characters) and returns every complete depth-1 element as soon as its last byte is there. It rejects a
DOCTYPE or entity declaration, bounds every message while it streams in (see :class:`Limits`: bytes per
message and between messages, elements, attributes per element, attribute and text length, depth; all
checked on the parser's events, before any model is built, so reading costs time linear in the bytes)
and turns parser errors into :class:`ProtocolError`. :func:`parse_stream` and :func:`parse_document`
read whole byte strings the same way (replay files, fixtures). No sockets here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Final, TypeAlias

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


@dataclass(frozen=True)
class Limits:
    """Bounds of one message, far above anything a real server or replay sends (the largest real
    messages: 275 elements, 5 attributes per element, depth 6, 146 characters in a value).

    They keep the work per message small and linear: the pydantic-xml models are never built for an
    element with thousands of attributes (their cost grows with the square of that number)."""

    max_bytes: int = DEFAULT_MAX_MESSAGE_SIZE  # per message, and between two messages
    max_elements: int = 4096  # per message
    max_attributes: int = 32  # per element
    max_value_length: int = 16 * 1024  # characters in one attribute value or one text / tail
    max_depth: int = 32  # element nesting inside one message (the message element is depth 1)


DEFAULT_LIMITS: Final = Limits()


class ProtocolError(Exception):
    """The peer's stream cannot be read any further; the connection should be closed.

    ``frames``: messages completed by the failing ``feed`` call before the error (hand them on first).
    """

    frames: Sequence[Frame] = ()


class MalformedXml(ProtocolError):
    """Not well-formed XML, or not a ``<protocol>`` stream."""


class ForbiddenDoctype(ProtocolError):
    """A DOCTYPE or entity declaration (never sent by the server; docs/spec/protocol.md §1.2)."""


class MessageTooLarge(ProtocolError):
    """A message exceeds one of the :class:`Limits` (bytes, elements, attributes, length, depth), or
    more bytes than the cap arrived between two messages."""


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

# Explicit alias: lxml has no type information here, so mypy would otherwise take ``Frame`` for a variable
Frame: TypeAlias = etree._Element | EndOfStream


def _make_parser(events: tuple[str, ...]) -> etree.XMLPullParser:
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
    return etree.XMLPullParser(events=events, **options)


class StreamFramer:
    """Cuts one direction of a connection into messages.

    ``feed(data)`` returns the messages completed by ``data`` (lxml elements, detached from the root so
    that memory stays flat) and, once, :data:`END_OF_STREAM` when ``</protocol>`` arrives. Call
    :meth:`close` at the end of input: it raises :class:`TruncatedStream` if ``</protocol>`` is missing.
    Any :class:`ProtocolError` is final: the framer refuses further input.

    The :class:`Limits` are checked after every 16 KiB of input, so no message gets further than one
    16 KiB slice past a limit (``max_message_size`` overrides ``limits.max_bytes``). Text between
    messages is counted like a message and then discarded: it never accumulates in the root.
    """

    def __init__(self, max_message_size: int | None = None, *, limits: Limits = DEFAULT_LIMITS) -> None:
        if max_message_size is not None:
            limits = replace(limits, max_bytes=max_message_size)
        if limits.max_bytes <= 0:
            raise ValueError("max_message_size must be positive")
        self.limits = limits
        self.max_message_size = limits.max_bytes
        self._elements = 0  # elements of the message being read
        self._parser = _make_parser(("start", "end"))
        self._depth = 0
        self._tail = b""
        self._pending = 0  # bytes fed since the last complete message (approximately, see above)
        self._root: etree._Element | None = None
        self._error: ProtocolError | None = None
        self.ended = False
        self.messages_read = 0
        self.bytes_read = 0
        self.elements_read = 0  # all elements so far (the server's per-peer work budget counts them)

    def set_limits(self, limits: Limits) -> None:
        """Bounds from now on (the server's are tighter before a peer has joined)."""
        if limits.max_bytes <= 0:
            raise ValueError("max_message_size must be positive")
        self.limits = limits
        self.max_message_size = limits.max_bytes

    @property
    def held_elements(self) -> int:
        """Elements still attached to the root (0 between messages: memory stays flat)."""
        return 0 if self._root is None else len(self._root)

    @property
    def held_text(self) -> int:
        """Characters of text between messages still held by the root (stays 0: it is discarded)."""
        return 0 if self._root is None else len(self._root.text or "")

    @property
    def in_message(self) -> bool:
        """True while a message has started but not finished."""
        return self._depth > 1

    def feed(self, data: bytes) -> list[Frame]:
        if self._error is not None:
            raise _copy(self._error)
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
                self._fail(MalformedXml("not well-formed XML: " + " ".join(str(exc).split())))
            if self.ended:
                rest = data[start + len(chunk) :]
                if rest.strip():
                    self._fail(MalformedXml("data after </protocol>"))
                break
            if self._pending > self.max_message_size:
                self._fail(
                    MessageTooLarge(
                        f"message larger than {self.max_message_size} bytes "
                        f"({self._pending} bytes without a complete message)"
                    )
                )

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
                if not name.isprintable() or "\ufffd" in name:  # never echo raw bytes to the user
                    self._fail(MalformedXml("binary data, not XML"))
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
                    self._check_start(elem)
            else:
                self._depth -= 1
                if self._depth >= 1:
                    self._check_text(elem)
                if self._depth == 1:
                    parent = elem.getparent()
                    if parent is not None:
                        parent.remove(elem)
                        parent.text = None  # text between messages: counted in _pending, never kept
                    elem.tail = None
                    out.append(elem)
                    self.messages_read += 1
                    self._pending = 0
                    self._elements = 0
                elif self._depth == 0:
                    self.ended = True
                    out.append(END_OF_STREAM)

    def _check_start(self, elem: etree._Element) -> None:
        """Bounds of a new element inside a message: count, depth, attributes (all linear in its bytes)."""
        limits = self.limits
        self._elements += 1
        self.elements_read += 1
        if self._elements > limits.max_elements:
            self._fail(MessageTooLarge(f"message with more than {limits.max_elements} elements"))
        if self._depth - 1 > limits.max_depth:
            self._fail(MessageTooLarge(f"message nested deeper than {limits.max_depth} elements"))
        attrib = elem.attrib
        if len(attrib) > limits.max_attributes:
            self._fail(
                MessageTooLarge(
                    f"element <{_short(elem.tag)}> with {len(attrib)} attributes (at most {limits.max_attributes})"
                )
            )
        if len(elem.nsmap) > limits.max_attributes:  # namespace declarations are not in attrib
            self._fail(
                MessageTooLarge(f"element <{_short(elem.tag)}> with more than {limits.max_attributes} namespaces")
            )
        for name, value in attrib.items():
            if len(value) > limits.max_value_length:
                self._fail(
                    MessageTooLarge(f"attribute {_short(name)} longer than {limits.max_value_length} characters")
                )

    def _check_text(self, elem: etree._Element) -> None:
        """Bounds of a finished element's text and of its children's tails."""
        limit = self.limits.max_value_length
        text = elem.text
        too_long = text is not None and len(text) > limit
        if not too_long and len(elem):
            too_long = any(child.tail is not None and len(child.tail) > limit for child in elem)
        if too_long:
            self._fail(MessageTooLarge(f"text in <{_short(elem.tag)}> longer than {limit} characters"))

    def close(self) -> None:
        """End of input. Raises :class:`TruncatedStream` unless ``</protocol>`` was read."""
        if self._error is not None:
            raise _copy(self._error)
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
        # Final: the parser and the partial document are freed now, and only a copy of the error is kept
        # (the raised one's traceback leads back to this framer: keeping it would make a reference cycle).
        self._error = _copy(error)
        self._parser = None
        self._root = None
        self._tail = b""
        try:
            raise error
        finally:
            del error  # a local holding the raised error would be a cycle with this frame


def _copy(error: ProtocolError) -> ProtocolError:
    """The same error without traceback and frames (raised again for every later call)."""
    copy = ProtocolError.__new__(type(error))
    copy.args = error.args
    copy.__dict__.update({k: v for k, v in error.__dict__.items() if k != "frames"})
    return copy


def _short(name: object, limit: int = 40) -> str:
    text = str(name)
    return text if len(text) <= limit else text[:limit] + "…"


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


def parse_document(
    data: bytes, *, max_size: int = DEFAULT_MAX_MESSAGE_SIZE, limits: Limits = DEFAULT_LIMITS
) -> etree._Element:
    """Parse one standalone XML element (a fixture file, a state file) with the same safety rules and
    :class:`Limits` as the stream (it is read as the only message of a stream): no DOCTYPE or entities,
    no network, bounded size and shape; comments and processing instructions are dropped."""
    if len(data) > max_size:
        raise MessageTooLarge(f"document larger than {max_size} bytes")
    framer = StreamFramer(max_size, limits=limits)
    frames = framer.feed(_insert_protocol(data))
    frames += framer.feed(b"</" + ROOT_TAG.encode() + b">")
    elements = [f for f in frames if not isinstance(f, EndOfStream)]
    if len(elements) != 1:
        raise MalformedXml(
            "not well-formed XML: " + ("no element" if not elements else f"{len(elements)} elements at the top level")
        )
    return elements[0]
