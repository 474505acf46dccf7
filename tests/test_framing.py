"""The incremental framer (docs/spec/protocol.md §1): real wire stream split anywhere, negative cases."""

from __future__ import annotations

import random

import pytest
from lxml import etree

from blokus.model.framing import (
    END_OF_STREAM,
    ForbiddenDoctype,
    MalformedXml,
    MessageTooLarge,
    ProtocolError,
    StreamFramer,
    TruncatedStream,
    parse_document,
    parse_stream,
)
from tests.helpers import fixture_path

WIRE = "sc2021/gen-21.3.3-game1-wire-stream-to-player-one.xml"


@pytest.fixture(scope="module")
def wire() -> bytes:
    return fixture_path(WIRE).read_bytes()


@pytest.fixture(scope="module")
def reference(wire: bytes) -> list[str]:
    return [etree.tostring(e, encoding="unicode") for e in parse_stream(wire).messages]


def run(chunks, framer: StreamFramer | None = None) -> tuple[list[str], int]:
    framer = framer or StreamFramer()
    messages, ends = [], 0
    for chunk in chunks:
        for frame in framer.feed(chunk):
            if frame is END_OF_STREAM:
                ends += 1
            else:
                assert frame.getparent() is None
                messages.append(etree.tostring(frame, encoding="unicode"))
        assert framer.held_elements <= framer.in_message  # only a message in progress is held
    if ends:
        framer.close()
    return messages, ends


def message_ends(data: bytes) -> list[int]:
    """Byte offsets just after each message of a stream, found by feeding byte by byte."""
    framer, ends = StreamFramer(), []
    for i in range(len(data)):
        frames = framer.feed(data[i : i + 1])
        ends.extend([i + 1] * sum(f is not END_OF_STREAM for f in frames))
    return ends


def test_whole_wire_stream(wire: bytes, reference: list[str]) -> None:
    framer = StreamFramer()
    frames = framer.feed(wire)
    assert len(frames) == 98 and frames[-1] is END_OF_STREAM and framer.ended
    messages = frames[:-1]
    assert len(messages) == 97
    tags = [m.tag for m in messages]
    assert tags[0] == "joined" and tags[-1] == "left" and tags.count("room") == 95
    classes = [m.find("data").get("class") for m in messages if m.tag == "room"]
    assert classes[0] == "welcomeMessage" and classes[-1] == "result"
    assert classes.count("memento") == 62
    assert classes.count("sc.framework.plugins.protocol.MoveRequest") == 31
    framer.close()
    assert framer.messages_read == 97


def test_every_split_of_the_first_messages(wire: bytes, reference: list[str]) -> None:
    ends = message_ends(wire[:12000])
    assert len(ends) >= 5
    prefix = wire[: ends[3]]  # joined, welcome, memento, move request
    for split in range(len(prefix) + 1):
        messages, _ = run([prefix[:split], prefix[split:]])
        assert messages == reference[:4], split
    prefix = wire[: ends[4]]  # and the next memento, split in three
    for split in range(ends[3], len(prefix), 7):
        messages, _ = run([prefix[: split - 5], prefix[split - 5 : split], prefix[split:]])
        assert messages == reference[:5], split


def test_each_message_is_delivered_with_its_last_byte(wire: bytes) -> None:
    ends = message_ends(wire[:12000])
    for end in ends:
        assert wire[end - 1 : end] == b">"
    # nothing but whitespace between a message's end and the next message
    for a, b in zip(ends, ends[1:], strict=False):
        assert wire[a:b].lstrip().startswith(b"<")


@pytest.mark.parametrize("seed", range(6))
def test_random_chunk_sizes(wire: bytes, reference: list[str], seed: int) -> None:
    rng = random.Random(seed)
    chunks, i = [], 0
    while i < len(wire):
        n = rng.choice((rng.randint(1, 16), rng.randint(1, 600), rng.randint(1, 9000)))
        chunks.append(wire[i : i + n])
        i += n
    messages, ends = run(chunks)
    assert messages == reference and ends == 1


def test_split_inside_multibyte_characters(wire: bytes, reference: list[str]) -> None:
    pos = wire.index("∅".encode())
    for split in range(pos - 2, pos + 4):
        messages, ends = run([wire[:split], wire[split:]])
        assert messages == reference and ends == 1
    error = fixture_path("sc2021/gen-21.3.3-s2c-error-invalid-move-OBSTRUCTED.xml").read_bytes()
    stream = b"<protocol>" + error + b"</protocol>"
    expected, _ = run([stream])
    assert "ü" in expected[0]
    for split in range(len(stream) + 1):
        assert run([stream[:split], stream[split:]])[0] == expected


def test_comments_and_fragments() -> None:
    data = fixture_path("replays/docs-2021-spielverlauf-stream.xml").read_bytes()
    parsed = parse_stream(data, prepend_protocol=True)
    assert parsed.ended and [m.tag for m in parsed.messages] == ["room"] * 4
    data = fixture_path("replays/issue-backend-316-skipmove-error-exchange.xml").read_bytes()
    with pytest.raises(TruncatedStream):
        parse_stream(data, prepend_protocol=True)
    parsed = parse_stream(data, prepend_protocol=True, strict=False)
    assert parsed.truncated and not parsed.partial_message and len(parsed.messages) == 2
    assert "Unknown'.\nCan't Skip" in parsed.messages[1].find("data").get("message")
    framer = StreamFramer()
    frames = framer.feed(b"<!-- hi --><protocol><!-- a --><left roomId='r'/><!-- b -->")
    assert [f.tag for f in frames] == ["left"] and framer.held_elements == 0


def test_xml_declaration_documents() -> None:
    data = fixture_path("sc2021/test-21.4.0-sdk-prepare-request-deserialize-input.xml").read_bytes()
    assert parse_document(data).tag == "prepare"
    assert [m.tag for m in parse_stream(data, prepend_protocol=True, strict=False).messages] == ["prepare"]


def test_end_of_stream_and_data_after_it() -> None:
    framer = StreamFramer()
    assert framer.feed(b"<protocol>") == []
    assert framer.feed(b"</protocol>\n") == [END_OF_STREAM]
    assert framer.ended and framer.feed(b"  \n") == []
    with pytest.raises(MalformedXml):
        framer.feed(b"<joined roomId='x'/>")
    framer = StreamFramer()
    with pytest.raises(MalformedXml):
        framer.feed(b"<protocol></protocol><protocol>")


@pytest.mark.parametrize(
    "chunks",
    [
        [b'<!DOCTYPE protocol [<!ENTITY a "b">]><protocol>'],
        [b"<!DOC", b"TYPE protocol><protocol>"],
        [b"<protocol>", b'<room roomId="x"><!ENTITY a "b"></room>'],
        [
            b'<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]>'
            b"<protocol><joined roomId='&lol2;'/>"
        ],
        [b'<!DOCTYPE protocol SYSTEM "http://example.com/x.dtd"><protocol>'],
    ],
)
def test_doctype_and_entities_are_refused(chunks: list[bytes]) -> None:
    framer = StreamFramer()
    with pytest.raises(ForbiddenDoctype):
        for chunk in chunks:
            framer.feed(chunk)
    with pytest.raises(ProtocolError):  # the error is final
        framer.feed(b"<joined roomId='x'/>")
    with pytest.raises(ForbiddenDoctype):
        parse_document(b"".join(chunks) + b"</protocol>")


@pytest.mark.parametrize(
    "chunks",
    [
        [b"<protocol><joined roomId='&xxe;'/>"],
        [b"<protocol><joined roomId='&x", b"xe;'/>"],
        [b"<protocol><joined roomId='&", b"xxe;'/>"],
        [b"<protocol><joined roomId='x'>&xx", b"e", b";</joined>"],
    ],
)
def test_undefined_entity_is_malformed(chunks: list[bytes]) -> None:
    framer = StreamFramer()
    with pytest.raises(MalformedXml):
        for chunk in chunks:
            framer.feed(chunk)
    # predefined entities and character references are fine, also split
    framer = StreamFramer()
    frames = framer.feed(b"<protocol><joined roomId='&a") + framer.feed(b"pos;&#x41;&#66;&amp;'/>")
    assert frames[0].get("roomId") == "'AB&"


def test_oversized_message() -> None:
    framer = StreamFramer()
    framer.feed(b'<protocol><room roomId="x"><data class="error" message="')
    with pytest.raises(MessageTooLarge):
        for _ in range(40):
            framer.feed(b"a" * 65536)
    with pytest.raises(MessageTooLarge):  # one huge chunk
        StreamFramer().feed(b"<protocol><left roomId='" + b"x" * (3 << 20) + b"'/>")
    small = StreamFramer(max_message_size=1000)
    with pytest.raises(MessageTooLarge):
        small.feed(b"<protocol><room roomId='x'>" + b"<a/>" * 10000)
    with pytest.raises(ValueError):
        StreamFramer(max_message_size=0)


def test_the_cap_is_per_message(wire: bytes, reference: list[str]) -> None:
    # 530 kB of messages of at most ~20 kB each pass a 64 KiB cap, fed at once or in pieces
    assert run([wire], StreamFramer(max_message_size=64 * 1024))[0] == reference
    chunks = [wire[i : i + 5000] for i in range(0, len(wire), 5000)]
    assert run(chunks, StreamFramer(max_message_size=64 * 1024))[0] == reference


@pytest.mark.parametrize(
    ("data", "partial"),
    [
        (b"<protocol><joined roomId='x'/>", False),
        (b"<protocol><joined roomId='x'/><room roomId='x'><data class='memento'>", True),
        (b"<protocol><joined roomId='x'/><roo", False),
        (b"", False),
    ],
)
def test_truncated_stream(data: bytes, partial: bool) -> None:
    framer = StreamFramer()
    framer.feed(data)
    with pytest.raises(TruncatedStream) as info:
        framer.close()
    assert info.value.partial_message is partial


@pytest.mark.parametrize(
    "data",
    [
        b"<protocol><room></foo>",
        b"garbage",
        b"<protocol><room roomId='a' roomId='b'/>",
        b"<protocol><left roomId='x'/>\x00<left roomId='y'/>",
        b"<protocol><left roomId='\xff\xfe'/>",
        b"<room roomId='x'/>",  # not a protocol stream
    ],
)
def test_garbage(data: bytes) -> None:
    framer = StreamFramer()
    with pytest.raises(MalformedXml):
        framer.feed(data)
        framer.close()


def test_messages_before_an_error_are_handed_on() -> None:
    framer = StreamFramer()
    with pytest.raises(MalformedXml) as info:
        framer.feed(b"<protocol><joined roomId='a'/><left roomId='a'/><x></y>")
    assert [f.tag for f in info.value.frames] == ["joined", "left"]


def test_text_is_refused() -> None:
    with pytest.raises(TypeError):
        StreamFramer().feed("<protocol>")  # type: ignore[arg-type]
