"""model/framing.py, its bounds: every attack input is refused or discarded by construction, before any
pydantic-xml model is built; element counts, limits changed between messages, a failed framer freed. The
inputs are generated here; no test measures time."""

from __future__ import annotations

import gc
import weakref

import pytest

from blokus.model.convert import parse_message, state_from_xml
from blokus.model.framing import (
    END_OF_STREAM,
    Limits,
    MessageTooLarge,
    ProtocolError,
    StreamFramer,
    parse_document,
    parse_stream,
)


def attribute_bomb(count: int, tag: str = "pause") -> bytes:
    """One element with ``count`` attributes: 90 000 of them are 880 KiB, under the 1 MiB cap."""
    return f"<{tag} ".encode() + b" ".join(b'a%d="x"' % i for i in range(count)) + b"/>"


def feed_all(framer: StreamFramer, data: bytes, chunk: int = 65536) -> list:
    frames = []
    for start in range(0, len(data), chunk):
        frames += framer.feed(data[start : start + chunk])
    return frames


def test_attribute_bomb_under_the_byte_cap_is_refused() -> None:
    bomb = attribute_bomb(90_000)
    assert len(bomb) < 1 << 20
    framer = StreamFramer()
    with pytest.raises(MessageTooLarge, match="90000 attributes"):
        feed_all(framer, b"<protocol>" + bomb)
    with pytest.raises(ProtocolError):  # final
        framer.feed(b"<left roomId='x'/>")


def test_attribute_bomb_inside_a_message_and_in_a_state_file() -> None:
    framer = StreamFramer()
    with pytest.raises(MessageTooLarge, match="attributes"):
        feed_all(framer, b"<protocol><room roomId='r'><data class='memento'>" + attribute_bomb(50_000, "state"))
    with pytest.raises(MessageTooLarge, match="attributes"):
        state_from_xml(attribute_bomb(50_000, "state"))


def test_namespace_declarations_count_like_attributes() -> None:
    decls = b" ".join(b'xmlns:n%d="u%d"' % (i, i) for i in range(1000))
    with pytest.raises(MessageTooLarge, match="namespaces"):
        StreamFramer().feed(b"<protocol><pause " + decls + b"/>")


def test_limits_just_inside_pass() -> None:
    limits = Limits()
    attrs = b" ".join(b'a%d="x"' % i for i in range(limits.max_attributes))
    frames = StreamFramer().feed(b"<protocol><pause " + attrs + b"/>")
    assert len(frames) == 1 and len(frames[0].attrib) == limits.max_attributes
    deep = b"<a>" * limits.max_depth + b"</a>" * limits.max_depth
    assert len(StreamFramer().feed(b"<protocol>" + deep)) == 1


def test_too_many_elements_too_deep_too_long() -> None:
    with pytest.raises(MessageTooLarge, match="elements"):
        StreamFramer().feed(b"<protocol><room roomId='r'>" + b"<a/>" * 100_000)
    with pytest.raises(MessageTooLarge, match="deeper"):
        StreamFramer().feed(b"<protocol>" + b"<a>" * 200)
    with pytest.raises(MessageTooLarge, match="text"):
        StreamFramer().feed(b"<protocol><room roomId='r'>" + b"x" * 100_000 + b"</room>")
    with pytest.raises(MessageTooLarge, match="text"):  # a tail inside a message
        StreamFramer().feed(b"<protocol><room roomId='r'><a/>" + b"x" * 100_000 + b"<b/></room>")
    with pytest.raises(MessageTooLarge, match="attribute"):
        StreamFramer().feed(b"<protocol><left roomId='" + b"x" * 100_000 + b"'/>")


def test_limits_are_configurable() -> None:
    small = Limits(max_bytes=4096, max_elements=8, max_attributes=2, max_value_length=10, max_depth=3)
    with pytest.raises(MessageTooLarge, match="elements"):
        StreamFramer(limits=small).feed(b"<protocol><room>" + b"<a/>" * 8 + b"</room>")
    assert len(StreamFramer(limits=small).feed(b"<protocol><room>" + b"<a/>" * 7 + b"</room>")) == 1
    with pytest.raises(MessageTooLarge):
        parse_document(b"<state a='1' b='2' c='3'/>", limits=small)


def test_text_between_messages_is_discarded_not_accumulated() -> None:
    framer = StreamFramer()
    frames = feed_all(framer, b"<protocol>" + (b"x" * 1000 + b"<left roomId='r'/>") * 5000)
    assert len(frames) == 5000  # 5 MB of text passed between messages ...
    assert framer.held_text == 0 and framer.held_elements == 0  # ... and none of it is kept
    framer.feed(b"y" * 1000)
    assert framer.held_text <= 1000


def test_text_between_messages_counts_against_the_cap() -> None:
    framer = StreamFramer()
    with pytest.raises(MessageTooLarge):
        feed_all(framer, b"<protocol><left roomId='r'/>" + b" " * (2 << 20))


def test_everything_else_still_reads() -> None:
    # the 21.3.3 messages are far inside the limits (checked on a whole recorded game in test_framing)
    stream = b"<protocol>\n  <joined roomId='r'/>\n<left roomId='r'/>\n</protocol>"
    frames = StreamFramer().feed(stream)
    assert [getattr(f, "tag", f) for f in frames] == ["joined", "left", END_OF_STREAM]
    assert parse_message(parse_document(b"<joined roomId='r'/>")).room_id == "r"
    assert len(parse_stream(stream).messages) == 2


def test_parse_document_takes_exactly_one_element() -> None:
    with pytest.raises(ProtocolError):
        parse_document(b"<a/><b/>")
    with pytest.raises(ProtocolError):
        parse_document(b"   ")
    assert parse_document(b"<?xml version='1.0'?>\n<!-- c --><state turn='3'/>").get("turn") == "3"


def test_the_framer_counts_elements_and_takes_new_limits_between_messages():
    framer = StreamFramer(limits=Limits(max_elements=2))
    assert len(framer.feed(b"<protocol><a><b/></a>")) == 1 and framer.elements_read == 2
    framer.set_limits(Limits(max_elements=4))
    assert len(framer.feed(b"<a><b/><b/><b/></a>")) == 1 and framer.elements_read == 6
    framer.set_limits(Limits(max_elements=1))
    try:
        framer.feed(b"<a><b/></a>")
        raise AssertionError("the tighter limit was not applied")
    except MessageTooLarge:
        pass


def test_a_failed_framer_is_freed_without_the_cycle_collector():
    gc.disable()
    try:
        framer = StreamFramer(limits=Limits(max_elements=4))
        ref = weakref.ref(framer)
        for _ in range(2):  # the first failure, and the same error again for later input
            try:
                framer.feed(b"<protocol><a>" + b"<b/>" * 10)
                raise AssertionError("no error")
            except MessageTooLarge:
                pass
        del framer
        assert ref() is None
    finally:
        gc.enable()
