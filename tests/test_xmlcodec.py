"""model/xmlcodec.py: the reader and writer derived from the message models give what pydantic-xml gives.

The reference is pydantic-xml itself (``from_xml_tree``, ``to_xml_tree`` + lxml + XStream's escapes, a 2027
state reordered as the 2027 server writes it). Checked on every fixture of both seasons, on every state the
code writes for the official replays, on generated instances of every message model, and on mutated forms of
those (the fast reader either reads an element alike or declines it)."""

from __future__ import annotations

import functools
import typing
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree
from pydantic import BaseModel, ValidationError
from pydantic_xml import BaseXmlModel, attr
from pydantic_xml import element as xml_element
from pydantic_xml.fields import XmlEntityInfo
from pydantic_xml.typedefs import EntityLocation

from blokus.model import messages as M
from blokus.model import xmlcodec
from blokus.model.convert import parse_message, read_state, state_to_message, state_to_model, to_xml
from blokus.model.framing import parse_document
from blokus.model.moves import SetMove, SkipMove
from blokus.model.pieces import Color, Rotation, Shape, Team
from blokus.model.season import SEASON_2021
from blokus.model.state import GameState
from tests.helpers import elements_of, fixture_files, fixture_path

ALL_FIXTURES = fixture_files("sc2021") + fixture_files("replays") + fixture_files("sc2027")
MODELS = sorted(
    (m for m in vars(M).values() if isinstance(m, type) and issubclass(m, M.XmlModel) and m is not M.XmlModel),
    key=lambda m: m.__name__,
)
# bare elements of the fixtures that are not messages (SDK test literals), by tag
BARE = {"state": M.State, "board": M.Board, "piece": M.Piece, "score": M.Score, "winner": M.Winner}


# --- the reference: pydantic-xml ------------------------------------------------------------------------


def model_difference(a: object, b: object, where: str = "") -> str | None:
    """Where two values differ: type, value or ``model_fields_set`` of every nested model; None if equal."""
    if isinstance(a, BaseModel):
        if type(a) is not type(b):
            return f"{where}: {type(a).__name__} != {type(b).__name__}"
        if a.model_fields_set != b.model_fields_set:  # type: ignore[union-attr]
            return f"{where}: fields set {sorted(a.model_fields_set)} != {sorted(b.model_fields_set)}"  # type: ignore[union-attr]
        for name in type(a).model_fields:
            difference = model_difference(getattr(a, name), getattr(b, name), f"{where}.{name}")
            if difference:
                return difference
        return None
    if isinstance(a, list):
        if type(b) is not list or len(a) != len(b):
            return f"{where}: {a!r} != {b!r}"
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            difference = model_difference(x, y, f"{where}[{index}]")
            if difference:
                return difference
        return None
    return None if type(a) is type(b) and a == b else f"{where}: {a!r} != {b!r}"


def xml_names(model: type[BaseXmlModel], location: EntityLocation) -> dict[str, str]:
    """Field -> its attribute name or element tag, for the fields of one location in declaration order."""
    names = {}
    for name, info in model.model_fields.items():
        entity = next((m for m in info.metadata if isinstance(m, XmlEntityInfo)), None)
        if entity is not None and entity.location is location:
            names[name] = entity.path or name
    return names


def in_2027_order(state: etree._Element) -> None:
    """Reorder a <state> with the startTeam attribute as the 2027 server writes it (docs/spec/season-2027.md §3.3): the
    fields of the layout first, in its order, then the others in declaration order."""
    layout = M.State.xml_layouts["start_team_attr"]

    def rank(location: EntityLocation) -> dict[str, int]:
        names = xml_names(M.State, location)
        ordered = [f for f in layout if f in names] + [f for f in names if f not in layout]
        return {names[f]: i for i, f in enumerate(ordered)}

    attribute_rank, element_rank = rank(EntityLocation.ATTRIBUTE), rank(EntityLocation.ELEMENT)
    attributes = sorted(state.attrib.items(), key=lambda item: attribute_rank[item[0]])
    state.attrib.clear()
    for key, value in attributes:
        state.set(key, value)
    for child in sorted(state, key=lambda child: element_rank[child.tag]):
        state.append(child)


def pydantic_xml(message: BaseXmlModel, *, pretty: bool = False) -> str:
    """What ``to_xml`` must give, through pydantic-xml and lxml only."""
    tree = message.to_xml_tree(exclude_none=True)
    for state in tree.iter("state"):
        if state.get("startTeam") is not None:
            in_2027_order(state)
    text = etree.tostring(tree, encoding="unicode", pretty_print=pretty)
    text = text.rstrip("\n") if pretty else text
    for plain, xstream in (("'", "&apos;"), ("&#10;", "&#xa;"), ("&#13;", "&#xd;"), ("&#9;", "&#x9;")):
        text = text.replace(plain, xstream)
    return text


def check_read(model: type[BaseXmlModel], element: etree._Element) -> bool:
    """The fast reader gives what pydantic-xml gives, or declines; True if it read the element."""
    fast = xmlcodec.read(model, element)
    try:
        general = model.from_xml_tree(element)
    except Exception:  # noqa: BLE001 - unreadable: the fast reader must decline it too
        assert fast is None
        return False
    if fast is not None:
        assert model_difference(fast, general) is None, model_difference(fast, general)
    return fast is not None


def check_write(message: BaseXmlModel) -> None:
    """``to_xml`` gives what pydantic-xml gives (or both refuse the text), and it reads back alike on both
    readers."""
    for pretty in (False, True):
        try:
            expected = pydantic_xml(message, pretty=pretty)
        except ValueError:  # not XML (control characters): refused alike
            with pytest.raises(ValueError):
                xmlcodec.write(message, pretty=pretty)
            return
        written = xmlcodec.write(message, pretty=pretty)
        assert written == expected
    check_read(type(message), etree.fromstring(written.encode()))


def models_in(value: object) -> set[type]:
    if isinstance(value, BaseModel):
        return {type(value)}.union(*(models_in(getattr(value, n)) for n in type(value).model_fields))
    if isinstance(value, list):
        return set().union(*(models_in(v) for v in value))
    return set()


def model_of(element: etree._Element) -> type[BaseXmlModel] | None:
    return M.TOP_LEVEL.get(element.tag) or BARE.get(element.tag)  # type: ignore[arg-type]


# --- every fixture of both seasons ----------------------------------------------------------------------


def test_every_fixture_reads_and_writes_alike() -> None:
    read_fast: set[type] = set()
    read_general: set[type] = set()
    plain_forms = 0
    for path in ALL_FIXTURES:
        for element in elements_of(path):
            model = model_of(element)
            if model is None:
                continue
            fast = check_read(model, element)
            if path.name.startswith(("gen-21.3.3-", "test-27.0.4-state", "player_rust-s2c")):
                assert fast, f"{path.name}: the server's own form is read fast"  # the plain forms
                plain_forms += 1
            try:
                general = model.from_xml_tree(element)
            except Exception:  # noqa: BLE001, S112 - unreadable (checked above: declined)
                continue
            read_general |= models_in(general)
            if fast:
                read_fast |= models_in(xmlcodec.read(model, element))
            check_write(general)
    assert plain_forms > 300
    # every model that occurs in a fixture is read fast in some fixture (legacy-only parts aside)
    assert read_general - read_fast <= {M.FieldsWrapper}, read_general - read_fast


def test_parse_message_reads_the_plain_form_fast_and_the_rest_through_pydantic_xml() -> None:
    elements = elements_of(fixture_path("sc2021/gen-21.3.3-game1-wire-stream-to-player-one.xml"))
    for element in elements:
        message = parse_message(element)
        assert model_difference(message, xmlcodec.read(type(message), element)) is None
    spelling = etree.fromstring(b'<room roomId="r"><data class="welcomeMessage" color=" one"/></room>')
    expected = M.Room(room_id="r", data=M.WelcomeMessage(color=Team.ONE))
    assert xmlcodec.read(M.Room, spelling) == expected  # values through the fields' own validators
    lenient = etree.fromstring(b'<room roomId="r"><data class="welcomeMessage" color="ONE" x="1"/></room>')
    assert xmlcodec.read(M.Room, lenient) is None  # unknown content: pydantic-xml reads it
    assert parse_message(lenient) == expected
    assert parse_message(etree.fromstring(b"<join/>")) == M.Join(game_type=None)  # "no type" stays visible


# --- what the code writes ----------------------------------------------------------------------------------


def validated_move(move: SetMove | SkipMove) -> M.MoveElement:
    if isinstance(move, SkipMove):
        return M.MoveElement(cls=M.SKIP_MOVE_CLASS, color=move.color)
    return M.MoveElement(
        cls=M.SET_MOVE_CLASS,
        piece=M.Piece(
            color=move.color,
            kind=move.shape,
            rotation=move.rotation,
            is_flipped=move.flipped,
            position=M.Position(x=move.x, y=move.y),
        ),
    )


def validated_state_model(state: GameState, names: tuple[str, str] = ("", ""), with_class: bool = True) -> M.State:
    """:func:`state_to_model` with every model validated."""
    return M.State(
        cls=M.STATE_CLASS if with_class else None,
        turn=state.turn,
        round=state.round,
        start_piece=state.start_piece,
        start_team=M.TeamRef.of(Team.ONE),
        blue_shapes=M.ShapeList(shapes=list(state.pieces_left(Color.BLUE))),
        yellow_shapes=M.ShapeList(shapes=list(state.pieces_left(Color.YELLOW))),
        red_shapes=M.ShapeList(shapes=list(state.pieces_left(Color.RED))),
        green_shapes=M.ShapeList(shapes=list(state.pieces_left(Color.GREEN))),
        valid_colors=M.ColorList(colors=list(state.valid_colors)),
        first=M.PlayerInfo(display_name=names[0], color=M.TeamRef.of(Team.ONE)),
        second=M.PlayerInfo(display_name=names[1], color=M.TeamRef.of(Team.TWO)),
        board=M.Board(fields=[M.BoardField(x=x, y=y, content=c) for x, y, c in state.cells()]),
        last_move=None if state.last_move is None else validated_move(state.last_move),
        last_move_mono=M.LastMoveMono(
            entries=[M.MonoEntry(color=c, boolean=b) for c, b in sorted(state.last_mono.items())]
        ),
    )


@pytest.mark.parametrize(
    "replay", ["gen-21.3.3-game1-replay-regular-end.xml", "gen-21.3.3-game2-replay-round-limit-end.xml"]
)
def test_every_state_of_the_replays_is_written_as_the_server_wrote_it(replay: str) -> None:
    elements = [e for e in elements_of(fixture_path(f"sc2021/{replay}")) if e.find("data/state") is not None]
    assert len(elements) > 60
    for index, element in enumerate(elements):
        read = read_state(parse_message(element))
        message = state_to_message(read.state, read.room_id, read.names)
        expected = M.Room(room_id=read.room_id, data=M.Memento(state=validated_state_model(read.state, read.names)))
        assert model_difference(message, expected) is None, model_difference(message, expected)
        check_write(message)
        assert to_xml(message, pretty=True) == etree.tostring(element, encoding="unicode", with_tail=False)
        bare = state_to_model(read.state, with_class=False)
        assert model_difference(bare, validated_state_model(read.state, with_class=False)) is None
        if index % 8 == 0:  # (the same writer as above: a few suffice)
            check_write(bare)


def test_2027_states_are_written_in_the_2027_order() -> None:
    for name in ("test-27.0.4-state-turn0-PENTO_I.xml", "test-27.0.4-state-turn70-PENTO_L-complete.xml"):
        raw = fixture_path(f"sc2027/{name}").read_bytes()
        read = read_state(M.State.from_xml_tree(parse_document(raw)))
        model = state_to_model(read.state, with_class=False)
        check_write(model)
        expected = etree.tostring(parse_document(raw), encoding="unicode", pretty_print=True).rstrip("\n")
        assert to_xml(model, pretty=True) == expected.replace("'", "&apos;")


def test_names_are_validated_and_text_lxml_refuses_is_refused() -> None:
    with pytest.raises(ValidationError):  # names are validated as before
        state_to_model(GameState.new(SEASON_2021, Shape.PENTO_V), (None, "b"))  # type: ignore[arg-type]
    refused = state_to_model(GameState.new(SEASON_2021, Shape.PENTO_V), ("\x01", "b"))
    with pytest.raises(ValueError, match="XML compatible"):
        to_xml(M.Room(room_id="r", data=M.Memento(state=refused)))


LENIENT_VARIANTS = [
    ('content="BLUE"', 'content="blue"'),
    ('content="RED"', 'content="Red"'),
    ("<board>", "<board><fields>"),  # with </board> below
    ('<field x="', '<field extra="1" x="'),
    ("<board>", "<board><unknown/>"),
    ("<board>", "<board><!-- comment -->"),
    ("<board>", '<board class="x">'),
    ('<startTeam class="team">ONE</startTeam>', "<startTeam>one</startTeam>"),
    ('<startTeam class="team">ONE</startTeam>', '<startTeam class="team"> ONE </startTeam>'),
    ('<startTeam class="team">ONE</startTeam>', '<startTeam class="team">ONE<x/></startTeam>'),
    ("<shape>MONO</shape>", "<shape> MONO </shape>"),
    ("<shape>MONO</shape>", "<shape>mono</shape>"),
    ("<shape>MONO</shape>", "<shape a='1'>MONO</shape>"),
    ("<blueShapes>", '<blueShapes class="linked-hash-set">'),
    ("<blueShapes>", "<blueShapes><unknown/>"),
    ('class="state" turn="', 'turn="'),
    ('turn="', 'foo="bar" turn="'),
    ('turn="', 'currentColorIndex="0" turn="'),
    ('round="', 'round="0'),
    ('round="', 'round=" '),
    ('startPiece="', 'startTeam="ONE" startPiece="'),
    ('startPiece="PENTO_L"', 'startPiece="pento_l"'),
    ("<validColors>", '<validColors class="linked-hash-set">'),
    ("<validColors>", "<validColors a='b'>"),
    ("<color>BLUE</color>", "<color>blue</color>"),
    ('<first displayName="', '<first foo="1" displayName="'),
    ('<first displayName="', '<first><color class="team">TWO</color></first><first displayName="'),
    ('<color class="team">ONE</color>', '<color class="team">ONE</color><unknown/>'),
    ('<color class="team">ONE</color>', "<color>ONE</color>"),
    ('<color class="team">TWO</color>', '<color class="team">Two</color>'),
    ('isFlipped="false"', 'isFlipped="False"'),
    ('isFlipped="true"', 'isFlipped="true" extra="1"'),
    ('rotation="NONE"', 'rotation="none"'),
    ('<position x="', '<position z="0" x="'),
    ('<lastMove class="sc.plugin2021.SetMove">', "<lastMove>"),
    ('<lastMove class="sc.plugin2021.SetMove">', '<lastMove class="sc.plugin2021.SetMove"><color>RED</color>'),
    ('<lastMove class="sc.plugin2021.SetMove">', '<lastMove class="sc.plugin2021.SkipMove"><color>RED</color>'),
    ("<lastMoveMono/>", "<lastMoveMono><entry><color>BLUE</color><boolean>true</boolean></entry></lastMoveMono>"),
    ("<lastMoveMono/>", "<lastMoveMono><entry><boolean>false</boolean><color>RED</color></entry></lastMoveMono>"),
    ("<lastMoveMono/>", "<lastMoveMono><entry><color>RED</color><boolean>TRUE</boolean></entry></lastMoveMono>"),
    ("<lastMoveMono/>", "<lastMoveMono><entry><color>RED</color></entry></lastMoveMono>"),
    ("<lastMoveMono/>", "<lastMoveMono/><orderedColors><color>RED</color></orderedColors>"),
    ("<lastMoveMono/>", "<lastMoveMono/><startColor>BLUE</startColor>"),
    ("<lastMoveMono/>", "<lastMoveMono/><board/>"),
    ("<lastMoveMono/>", "<lastMoveMono/>text"),
    ('<data class="memento">', '<data class="memento" extra="1">'),
    ('<room roomId="', '<room extra="1" roomId="'),
    ("</data>", "</data><unknown/>"),
]


@pytest.mark.parametrize(("old", "new"), LENIENT_VARIANTS, ids=[n for _, n in LENIENT_VARIANTS])
def test_lenient_variants_are_read_alike_or_declined(old: str, new: str) -> None:
    elements = [
        e
        for e in elements_of(fixture_path("sc2021/gen-21.3.3-game1-replay-regular-end.xml"))
        if e.find("data/state") is not None
    ]
    applied = 0
    for element in (elements[1], elements[40], elements[-1]):
        text = etree.tostring(element, encoding="unicode")
        if old not in text:
            continue
        applied += 1
        text = text.replace(old, new, 1)
        if new.startswith("<board><fields>"):
            text = text.replace("</board>", "</fields></board>", 1)
        variant = etree.fromstring(text)
        check_read(M.Room, variant)
        check_read(M.State, variant.find("data/state"))
    assert applied


def test_unusual_state_models_are_written_alike() -> None:
    base = state_to_model(GameState.new(SEASON_2021, Shape.PENTO_V), ("a", "b"))
    names = "&<>\"' \n\t\r ä €"
    variants = [
        base,
        base.model_copy(update={"cls": None, "round": None, "start_piece": None}),
        base.model_copy(
            update={
                "first": M.PlayerInfo(display_name=names, color=M.TeamRef(text="")),
                "second": M.PlayerInfo(color=M.TeamRef(cls=None, text="TestGame&<>")),
            }
        ),
        base.model_copy(update={"last_move": M.MoveElement(cls=M.SKIP_MOVE_CLASS, color=Color.RED)}),
        base.model_copy(update={"last_move": M.MoveElement()}),
        base.model_copy(
            update={
                "last_move_mono": M.LastMoveMono(
                    entries=[M.MonoEntry(color=Color.RED, boolean=True), M.MonoEntry(color=Color.BLUE, boolean=False)]
                )
            }
        ),
        base.model_copy(update={"blue_shapes": M.ShapeList(), "valid_colors": M.ColorList(), "board": M.Board()}),
        base.model_copy(
            update={
                "current_color_index": 1,
                "ordered_colors": M.ColorList(colors=[Color.RED]),
                "start_color": Color.BLUE,
            }
        ),
        base.model_copy(update={"start_team_attr": Team.TWO, "start_team": None}),
        base.model_copy(
            update={
                "board": M.Board(wrapped_fields=M.FieldsWrapper(fields=[M.BoardField(x=1, y=2, content=Color.GREEN)]))
            }
        ),
        base.model_copy(update={"last_move": M.OriginalRequest(cls="joinPrepared", reservation_code="x")}),
        M.State(turn=0),
        M.State(turn=0, first=M.PlayerInfo(), board=M.Board(fields=[M.BoardField(x=0, y=19, content=Color.RED)])),
    ]
    for state in variants:
        check_write(state)
        check_write(M.Room(room_id=names, data=M.Memento(state=state)))
        check_write(M.Room(room_id="r", data=M.Memento(state=state.model_copy(update={"cls": "s"}))))


# --- generated instances of every model ------------------------------------------------------------------

XML_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6) | st.sampled_from(
    ["", " ", "&<>\"'\n\t\r ä €", "ONE", "TestGame", "\x01", "\ufffe"]
)


def values_of(annotation: Any) -> st.SearchStrategy[Any]:
    """Valid values of a field type (without its XML metadata)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return values_of(typing.get_args(annotation)[0])
    if origin in (typing.Union, type(int | None)):
        return st.one_of([values_of(a) for a in typing.get_args(annotation)])
    if origin is typing.Literal:
        return st.sampled_from(typing.get_args(annotation))
    if origin is list:
        return st.lists(values_of(typing.get_args(annotation)[0]), max_size=3)
    if annotation is type(None):
        return st.none()
    if isinstance(annotation, type) and issubclass(annotation, BaseXmlModel):
        return st.deferred(lambda: instances(annotation))
    if annotation in (Color, Shape, Team, Rotation):
        return st.sampled_from(list(annotation))
    return {str: XML_TEXT, int: st.integers(-(2**31), 2**31 - 1), bool: st.booleans()}[annotation]


def instances(model: type[BaseXmlModel]) -> st.SearchStrategy[BaseXmlModel]:
    """Validated instances of a model, with any of its optional fields given or left out."""
    required, optional = {}, {}
    for name, info in model.model_fields.items():
        (required if info.is_required() else optional)[name] = values_of(info.annotation)
    return st.fixed_dictionaries(required, optional=optional).flatmap(
        lambda values: st.just(model(**values)) if valid(model, values) else st.nothing()
    )


def valid(model: type[BaseXmlModel], values: dict[str, Any]) -> bool:
    try:
        model(**values)
    except ValidationError:  # e.g. a lastMoveMono entry without a colour
        return False
    return True


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_every_model_writes_and_reads_alike(model: type[BaseXmlModel], data: st.DataObject) -> None:
    message = data.draw(instances(model))
    check_write(message)


def mutations(text: str) -> st.SearchStrategy[bytes]:
    """The XML of a message with one change somewhere: what a lenient reader must still read alike."""
    element = etree.fromstring(text.encode())
    nodes = list(element.iter())

    def mutate(choice: tuple[int, int, str, str]) -> bytes:
        index, kind, name, word = choice
        tree = etree.fromstring(text.encode())
        node = list(tree.iter())[index % len(nodes)]
        keys = node.keys()
        if kind == 0:
            node.set(name, "1")
        elif kind == 1 and keys:
            del node.attrib[keys[0]]
        elif kind == 2 and keys:
            node.set(keys[-1], word)
        elif kind == 3 and keys:
            node.set(keys[0], node.get(keys[0]).lower())  # type: ignore[union-attr]
        elif kind == 4 and len(node):
            node.append(etree.fromstring(etree.tostring(node[0])))  # a repeated child
        elif kind == 5:
            node.insert(0, etree.Comment("c"))
        elif kind == 6:
            node.append(etree.Element(name))
        elif kind == 7:
            node.text = f" {node.text or ''} "
        elif kind == 8:
            node.text = word
        elif kind == 9 and len(node):
            node.remove(node[-1])
        return etree.tostring(tree)

    names = st.sampled_from(["x", "class", "color", "field", "position", "extra"])
    words = st.sampled_from(["", " ", "x", "ONE", "one", " RED", "true", "True", "0", "+1", "007", "99999999999"])
    return st.tuples(st.integers(0, 10_000), st.integers(0, 9), names, words).map(mutate)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_mutated_forms_are_read_alike_or_declined(model: type[BaseXmlModel], data: st.DataObject) -> None:
    message = data.draw(instances(model))
    try:
        text = xmlcodec.write(message)
    except ValueError:
        return
    variant = data.draw(mutations(text))
    check_read(model, etree.fromstring(variant))


@functools.cache
def memento_texts() -> tuple[str, ...]:
    """An early, a mid-game and the last memento of a replay."""
    path = fixture_path("sc2021/gen-21.3.3-game1-replay-regular-end.xml")
    elements = [e for e in elements_of(path) if e.find("data/state") is not None]
    return tuple(etree.tostring(e, encoding="unicode") for e in (elements[1], elements[40], elements[-1]))


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_mutated_mementos_are_read_alike_or_declined(data: st.DataObject) -> None:
    variant = data.draw(st.sampled_from(memento_texts()).flatmap(mutations))
    check_read(M.Room, etree.fromstring(variant))


# --- what the codec refuses to derive, and its bounds ------------------------------------------------------


def test_a_model_it_cannot_reproduce_is_refused_when_first_used() -> None:
    from pydantic import field_validator

    class Checked(M.XmlModel, tag="checked"):
        value: str = attr()

        @field_validator("value")
        @classmethod
        def _strip(cls, value: str) -> str:
            return value.strip()

    class Wrapped(M.XmlModel, tag="wrapped"):
        value: str = xml_element(tag="a", ns="urn:x")

    for model in (Checked, Wrapped):
        with pytest.raises(xmlcodec.UnsupportedModel):
            xmlcodec.read(model, etree.Element(model.__xml_tag__))


def test_the_value_memo_is_bounded() -> None:
    board = etree.fromstring(
        b"<board>" + b"".join(b'<field x="%d" y="0" content="RED"/>' % i for i in range(3000)) + b"</board>"
    )
    read = xmlcodec.read(M.Board, board)
    assert read is not None and [f.x for f in read.fields] == list(range(3000))
    reads = xmlcodec._schema(M.BoardField).attributes["x"].reads
    assert reads is not None and 0 < len(reads) <= xmlcodec._MEMO_LIMIT
    reads.clear()
    long = etree.fromstring(f'<field x="{"0" * 4000}7" y="0" content="RED"/>'.encode())  # 7 as Java reads it
    assert xmlcodec.read(M.BoardField, long) == M.BoardField(x=7, y=0, content=Color.RED)
    assert len(reads) == 0  # long strings are never kept


def test_entity_locations_of_the_models_are_all_supported() -> None:
    """Every model is derived: attributes, elements and texts only (a new kind of field fails here first)."""
    for model in MODELS:
        for info in model.model_fields.values():
            entity = next((m for m in info.metadata if isinstance(m, XmlEntityInfo)), None)
            assert entity is None or entity.location in (EntityLocation.ATTRIBUTE, EntityLocation.ELEMENT)
        xmlcodec.read(model, etree.Element("x"))  # builds (or raises UnsupportedModel)


class _RaceLeaf(BaseXmlModel, tag="leaf"):
    value: int = attr()


class _RaceRoot(BaseXmlModel, tag="root"):
    leaves: list[_RaceLeaf] = xml_element(tag="leaf", default_factory=list)


def test_a_schema_is_published_only_once_complete(monkeypatch) -> None:
    # the hosted servers of an arena write their first messages from several threads at once: another thread
    # reads the published schemas without a lock, so none may be published half made
    seen_while_building = []
    real = xmlcodec._writer

    def writer(schema):  # the last step of a model's build
        seen_while_building.append({m.__name__ for m in (_RaceRoot, _RaceLeaf) if m in xmlcodec._SCHEMAS})
        return real(schema)

    monkeypatch.setattr(xmlcodec, "_writer", writer)
    root = _RaceRoot(leaves=[_RaceLeaf(value=i) for i in range(3)])
    assert xmlcodec.write(root) == etree.tostring(root.to_xml_tree(), encoding="unicode")
    assert seen_while_building == [set(), set()]  # the leaf's and the root's builds: nothing published yet
    assert _RaceRoot in xmlcodec._SCHEMAS and _RaceLeaf in xmlcodec._SCHEMAS  # both, once complete
