"""pydantic-xml models of every protocol message of ``swc_2021_blokus`` (protocol.md §2–§7, §12) and
``swc_2027_blokus`` (season-2027.md §3).

One model per XML element. Input is read leniently (``search_mode="unordered"``: children are found by
name in any order; unknown attributes, children and ``class`` attributes are ignored; enumeration
values in any case). Output is season-exact: :func:`to_xml` writes exactly what the official serializer
writes (see the ``gen-21.3.3-*`` and ``sc2027`` fixtures), with unset optional parts left out; a state
with the ``startTeam`` attribute is written in the 2027 layout.

Top-level messages (children of ``<protocol>``) are the ``*`` classes of ``TOP_LEVEL``; room messages
are :class:`Room` with one of the ``data`` models (dispatched on ``data@class``). Reading a raw element
into these models, with dispatch and error reporting, is :func:`model.convert.parse_message`.

Mementos and states in the 21.3.3 form, the bulk of the traffic, are read (``fast_*_from_tree``) and
written (:func:`to_xml`) by hand-written lxml code that gives exactly the pydantic-xml result; anything
else takes the general pydantic-xml path.

Season-specific names (game type, move classes) come from :mod:`model.season` only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from lxml import etree
from pydantic import BaseModel as PydanticModel
from pydantic import BeforeValidator, Field, PlainSerializer, model_validator
from pydantic_xml import BaseXmlModel, attr, element, xml_field_validator

from model.pieces import Color, Rotation, Shape, Team
from model.season import (
    CLOSE_CONNECTION_21_3,
    CLOSE_CONNECTION_21_4,
    GAME_TYPE,
    MOVE_REQUEST_CLASS,
    MOVE_REQUEST_CLASS_NEW,
    SEASON_2021,
    SEASON_2027,
)

PROTOCOL_OPEN = "<protocol>"
PROTOCOL_CLOSE = "</protocol>"

# ``class`` values of ``<data>`` (protocol.md §6). Move classes come from the seasons; the default
# (2021) ones are written unless a season says otherwise.
SET_MOVE_CLASS = SEASON_2021.set_move_class
SKIP_MOVE_CLASS = SEASON_2021.skip_move_class
SET_MOVE_CLASS_2027 = SEASON_2027.set_move_class
SKIP_MOVE_CLASS_2027 = SEASON_2027.skip_move_class
WELCOME_CLASS = "welcomeMessage"
MEMENTO_CLASS = "memento"
RESULT_CLASS = "result"
ERROR_CLASS = "error"
PAUSED_CLASS = "paused"
STATE_CLASS = "state"
TEAM_CLASS = "team"


# --- enumeration values: any case on input, the server's spelling on output -------------------------


def _enum_parser(enum: Any) -> Any:
    def parse(value: Any) -> Any:
        if isinstance(value, enum):
            return value
        if isinstance(value, str):
            try:
                return enum.parse(value)
            except KeyError:
                raise ValueError(f"unknown {enum.__name__} value {value!r}") from None
        raise ValueError(f"not a {enum.__name__}: {value!r}")

    return parse


def _name(value: Any) -> str:
    return value.name


def _parse_bool(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "false"):
            return text == "true"
        raise ValueError(f"not a boolean: {value!r}")
    return value


_JAVA_INT = re.compile(r"[+-]?[0-9]+")  # Integer.parseInt's form (ASCII digits): no spaces, "_", "." or "١"
_INT_RANGE = range(-(2**31), 2**31)  # a Java int


def _parse_int(value: Any) -> Any:
    """An integer exactly as the official server's Java reads it: an optional sign and ASCII digits,
    within a Java int; anything else (``"0_0"``, ``"0.0"``, ``" 0 "``) is a malformed message."""
    if isinstance(value, str):
        if _JAVA_INT.fullmatch(value) is None or int(value) not in _INT_RANGE:
            raise ValueError(f"not an integer: {value[:20]!r}")
        return int(value)
    return value


ColorName = Annotated[Color, BeforeValidator(_enum_parser(Color)), PlainSerializer(_name, return_type=str)]
TeamName = Annotated[Team, BeforeValidator(_enum_parser(Team)), PlainSerializer(_name, return_type=str)]
ShapeName = Annotated[Shape, BeforeValidator(_enum_parser(Shape)), PlainSerializer(_name, return_type=str)]
RotationName = Annotated[Rotation, BeforeValidator(_enum_parser(Rotation)), PlainSerializer(_name, return_type=str)]
XmlBool = Annotated[
    bool, BeforeValidator(_parse_bool), PlainSerializer(lambda b: "true" if b else "false", return_type=str)
]
XmlInt = Annotated[int, BeforeValidator(_parse_int)]


class XmlModel(BaseXmlModel, search_mode="unordered"):
    """Base of all message models: children in any order, unknown content ignored."""


# --- building blocks ---------------------------------------------------------------------------------


class Position(XmlModel, tag="position"):
    x: XmlInt = attr()
    y: XmlInt = attr()


class Piece(XmlModel, tag="piece"):
    """``<piece color kind rotation isFlipped><position x y/></piece>``: exactly one ``<position>`` (a
    placement has one; the server would take the first of several); other children are ignored."""

    color: ColorName = attr()
    kind: ShapeName = attr()
    rotation: RotationName = attr()
    is_flipped: XmlBool = attr(name="isFlipped")
    position: Position = element(tag="position")

    @xml_field_validator("position")
    @classmethod
    def _one_position(cls, element: Any, field_name: str) -> Position:
        positions = [child for child in element.to_native() if child.tag == "position"]
        if len(positions) != 1:
            raise ValueError(f"a piece has exactly one <position>, not {len(positions)}")
        return Position.from_xml_tree(positions[0])


class TeamRef(XmlModel):
    """``<color class="team">ONE</color>`` (also ``startTeam``). The text is kept as read: other games
    (the server's TestGame) put other names here; :attr:`team` is None for those."""

    cls: str | None = attr(name="class", default=TEAM_CLASS)
    text: str = ""

    @property
    def team(self) -> Team | None:
        try:
            return Team.parse(self.text)
        except KeyError:
            return None

    @classmethod
    def of(cls, team: Team) -> TeamRef:
        return cls(text=team.name)


class PlayerInfo(XmlModel):
    """``first``/``second`` of a state, ``nextPlayer`` of a pause event, ``winner`` of a 2021 result."""

    display_name: str = attr(name="displayName", default="")
    color: TeamRef | None = element(tag="color", default=None)

    @property
    def team(self) -> Team | None:
        return None if self.color is None else self.color.team


class ColorList(XmlModel):
    """``validColors`` / ``orderedColors``; a ``class="linked-hash-set"`` attribute is ignored."""

    colors: list[ColorName] = element(tag="color", default_factory=list)


class ShapeList(XmlModel):
    """``blueShapes`` etc.: undeployed shapes."""

    shapes: list[ShapeName] = element(tag="shape", default_factory=list)


class BoardField(XmlModel, tag="field"):
    x: XmlInt = attr()
    y: XmlInt = attr()
    content: ColorName = attr()


class FieldsWrapper(XmlModel, tag="fields"):
    fields: list[BoardField] = element(tag="field", default_factory=list)


class Board(XmlModel, tag="board"):
    """Occupied fields. The server writes ``<field>`` directly; the documentation wraps them in
    ``<fields>`` (protocol.md §8). Both are read; :attr:`all_fields` merges them."""

    fields: list[BoardField] = element(tag="field", default_factory=list)
    wrapped_fields: FieldsWrapper | None = element(tag="fields", default=None)

    @property
    def all_fields(self) -> list[BoardField]:
        extra = self.wrapped_fields.fields if self.wrapped_fields is not None else []
        return [*self.fields, *extra]


class MoveElement(XmlModel):
    """A move inside another element: ``lastMove``, ``originalRequest``, ``originalMessage``.

    ``class`` says which move (``sc.plugin2021.SetMove`` with ``<piece>``, ``sc.plugin2021.SkipMove``
    with ``<color>``); for lobby errors it names a request (``joinPrepared``) and both are absent.
    """

    cls: str | None = attr(name="class", default=None)
    piece: Piece | None = element(tag="piece", default=None)
    color: ColorName | None = element(tag="color", default=None)


class OriginalRequest(MoveElement):
    """The offending request echoed in an error: a move, or a lobby request such as
    ``<originalRequest class="joinPrepared" reservationCode="wrong"/>``."""

    reservation_code: str | None = attr(name="reservationCode", default=None)
    game_type: str | None = attr(name="gameType", default=None)
    room_id: str | None = attr(name="roomId", default=None)


class MonoEntry(XmlModel, tag="entry"):
    """``<entry><color>BLUE</color><boolean>true</boolean></entry>``; the key element may also be
    ``<sc.plugin2027.Color>`` (what socha 5.1.0 expects; season-2027.md §8), read into ``color``."""

    color: ColorName | None = element(tag="color", default=None)
    qualified_color: ColorName | None = element(tag="sc.plugin2027.Color", default=None, exclude=True)
    boolean: XmlBool = element(tag="boolean")

    @model_validator(mode="after")
    def _one_colour(self) -> MonoEntry:
        if self.color is None:
            if self.qualified_color is None:
                raise ValueError("lastMoveMono entry without a colour")
            self.color = self.qualified_color
        return self


class LastMoveMono(XmlModel):
    entries: list[MonoEntry] = element(tag="entry", default_factory=list)


class State(XmlModel, tag="state"):
    """A game state in every 2021 dialect (protocol.md §4.3, §7) and the newer one of §12.

    Declaration order = the 21.3.3 child order, used on output. Legacy parts (``currentColorIndex``,
    ``orderedColors``, ``startColor``) and the newer ``startTeam`` attribute are read, and written only
    when set. Interpreting the dialects is :func:`model.convert.state_from_message`.
    """

    cls: str | None = attr(name="class", default=None)
    current_color_index: XmlInt | None = attr(name="currentColorIndex", default=None)  # 21.0/21.1
    turn: XmlInt = attr()
    round: XmlInt | None = attr(default=None)
    start_piece: ShapeName | None = attr(name="startPiece", default=None)
    start_team_attr: TeamName | None = attr(name="startTeam", default=None)  # later seasons

    start_team: TeamRef | None = element(tag="startTeam", default=None)
    blue_shapes: ShapeList | None = element(tag="blueShapes", default=None)
    yellow_shapes: ShapeList | None = element(tag="yellowShapes", default=None)
    red_shapes: ShapeList | None = element(tag="redShapes", default=None)
    green_shapes: ShapeList | None = element(tag="greenShapes", default=None)
    valid_colors: ColorList | None = element(tag="validColors", default=None)
    first: PlayerInfo | None = element(tag="first", default=None)
    second: PlayerInfo | None = element(tag="second", default=None)
    board: Board | None = element(tag="board", default=None)
    last_move: MoveElement | None = element(tag="lastMove", default=None)
    last_move_mono: LastMoveMono | None = element(tag="lastMoveMono", default=None)
    ordered_colors: ColorList | None = element(tag="orderedColors", default=None)  # 21.0/21.1
    start_color: ColorName | None = element(tag="startColor", default=None)  # 21.0–21.2

    def shape_list(self, color: Color) -> ShapeList | None:
        return (self.blue_shapes, self.yellow_shapes, self.red_shapes, self.green_shapes)[color]


# --- result (protocol.md §4.5, §12) ------------------------------------------------------------------


class Fragment(XmlModel, tag="fragment"):
    name: str = attr(default="")
    aggregation: str | None = element(tag="aggregation", default=None)
    relevant_for_ranking: XmlBool | None = element(tag="relevantForRanking", default=None)


class Definition(XmlModel, tag="definition"):
    fragments: list[Fragment] = element(tag="fragment", default_factory=list)


class Score(XmlModel, tag="score"):
    """``<score cause reason><part>…</part>…</score>``; cause and reason are absent in the newest form."""

    cause: str | None = attr(default=None)
    reason: str | None = attr(default=None)
    parts: list[XmlInt] = element(tag="part", default_factory=list)


class ScorePlayer(XmlModel, tag="player"):
    name: str | None = attr(default=None)  # 2027 omits it for a blank display name
    team: str | None = attr(default=None)


class ScoreEntry(XmlModel, tag="entry"):
    player: ScorePlayer | None = element(tag="player", default=None)
    score: Score | None = element(tag="score", default=None)


class Scores(XmlModel, tag="scores"):
    entries: list[ScoreEntry] = element(tag="entry", default_factory=list)


class Winner(XmlModel, tag="winner"):
    """2021: ``<winner displayName><color class="team">ONE</color></winner>`` (two on a draw).
    Later: ``<winner team regular reason/>`` (no ``team`` on a draw)."""

    display_name: str | None = attr(name="displayName", default=None)
    team_attr: str | None = attr(name="team", default=None)
    regular: XmlBool | None = attr(default=None)
    reason: str | None = attr(default=None)
    color: TeamRef | None = element(tag="color", default=None)

    @property
    def team(self) -> Team | None:
        if self.color is not None:
            return self.color.team
        if self.team_attr is not None:
            try:
                return Team.parse(self.team_attr)
            except KeyError:
                return None
        return None


# --- data of room messages ---------------------------------------------------------------------------


class WelcomeMessage(XmlModel, tag="data"):
    cls: Literal["welcomeMessage"] = attr(name="class", default=WELCOME_CLASS)
    color: TeamName = attr()  # the player's team; ``one``/``two`` before 21.2.1


class Memento(XmlModel, tag="data"):
    cls: Literal["memento"] = attr(name="class", default=MEMENTO_CLASS)
    state: State = element(tag="state")


class MoveRequest(XmlModel, tag="data"):
    cls: Literal[MOVE_REQUEST_CLASS, MOVE_REQUEST_CLASS_NEW] = attr(  # type: ignore[valid-type]
        name="class", default=MOVE_REQUEST_CLASS
    )


class SetMoveData(XmlModel, tag="data"):
    cls: Literal[SET_MOVE_CLASS, SET_MOVE_CLASS_2027] = attr(  # type: ignore[valid-type]
        name="class", default=SET_MOVE_CLASS
    )
    piece: Piece = element(tag="piece")


class SkipMoveData(XmlModel, tag="data"):
    """The colour is a child element; without it the server judges WRONG_COLOR (protocol.md §3.2)."""

    cls: Literal[SKIP_MOVE_CLASS, SKIP_MOVE_CLASS_2027] = attr(  # type: ignore[valid-type]
        name="class", default=SKIP_MOVE_CLASS
    )
    color: ColorName | None = element(tag="color", default=None)


class ResultData(XmlModel, tag="data"):
    cls: Literal["result"] = attr(name="class", default=RESULT_CLASS)
    definition: Definition | None = element(tag="definition", default=None)
    scores: list[Score] = element(tag="score", default_factory=list)  # 2021 form
    score_entries: Scores | None = element(tag="scores", default=None)  # later seasons
    winners: list[Winner] = element(tag="winner", default_factory=list)


class ErrorData(XmlModel, tag="data"):
    """In-room error: ``originalRequest`` up to 21.3.3, ``originalMessage`` in 21.4.0."""

    cls: Literal["error"] = attr(name="class", default=ERROR_CLASS)
    message: str = attr(default="")
    original_request: OriginalRequest | None = element(tag="originalRequest", default=None)
    original_message: OriginalRequest | None = element(tag="originalMessage", default=None)

    @property
    def original(self) -> OriginalRequest | None:
        return self.original_request if self.original_request is not None else self.original_message


class PausedData(XmlModel, tag="data"):
    """21.3.3: ``<nextPlayer>`` child (never sent); 21.4.0 and later: ``paused="false"``."""

    cls: Literal["paused"] = attr(name="class", default=PAUSED_CLASS)
    paused: XmlBool | None = attr(default=None)
    next_player: PlayerInfo | None = element(tag="nextPlayer", default=None)


RoomData = Annotated[
    WelcomeMessage | Memento | MoveRequest | SetMoveData | SkipMoveData | ResultData | ErrorData | PausedData,
    Field(discriminator="cls"),
]

DATA_CLASSES: dict[str, type[XmlModel]] = {
    WELCOME_CLASS: WelcomeMessage,
    MEMENTO_CLASS: Memento,
    MOVE_REQUEST_CLASS: MoveRequest,
    MOVE_REQUEST_CLASS_NEW: MoveRequest,
    SET_MOVE_CLASS: SetMoveData,
    SKIP_MOVE_CLASS: SkipMoveData,
    SET_MOVE_CLASS_2027: SetMoveData,
    SKIP_MOVE_CLASS_2027: SkipMoveData,
    RESULT_CLASS: ResultData,
    ERROR_CLASS: ErrorData,
    PAUSED_CLASS: PausedData,
}


class Room(XmlModel, tag="room"):
    """``<room roomId="…"><data class="…">…</data></room>``."""

    room_id: str = attr(name="roomId")
    data: RoomData = element(tag="data")


# --- top-level messages: player ----------------------------------------------------------------------


class Join(XmlModel, tag="join"):
    """Join any open game of the type; ``<join/>`` without a type is a later-season form."""

    game_type: str | None = attr(name="gameType", default=GAME_TYPE)


class JoinPrepared(XmlModel, tag="joinPrepared"):
    reservation_code: str = attr(name="reservationCode")


class JoinRoom(XmlModel, tag="joinRoom"):
    """21.4.0 only: a 21.3.3 server drops the connection."""

    room_id: str = attr(name="roomId")


class Joined(XmlModel, tag="joined"):
    room_id: str = attr(name="roomId")


class Left(XmlModel, tag="left"):
    room_id: str = attr(name="roomId")


class LobbyError(XmlModel, tag="error"):
    """Top-level error (21.3.3: unknown reservation code, the connection stays open)."""

    message: str = attr(default="")
    original_request: OriginalRequest | None = element(tag="originalRequest", default=None)


class ErrorPacket(XmlModel, tag="errorpacket"):
    """Top-level error of 21.4.0, followed by disconnection."""

    message: str = attr(default="")
    original_request: OriginalRequest | None = element(tag="originalRequest", default=None)


class CloseConnection(XmlModel, tag=CLOSE_CONNECTION_21_3):
    """``<sc.protocol.responses.CloseConnection/>`` (21.3.3), the form to send."""


class CloseConnection214(CloseConnection, tag=CLOSE_CONNECTION_21_4):
    """``<sc.protocol.CloseConnection/>`` (21.4.0); read only."""


class CloseShort(CloseConnection, tag="close"):
    """``<close/>`` as read (a 2021 server drops the connection on it: never sent as this class)."""


class Close(CloseConnection, tag="close"):
    """``<close/>`` as a 2027 client or server writes it."""


# --- top-level messages: administrator and observer (protocol.md §5) ---------------------------------


class Authenticate(XmlModel, tag="authenticate"):
    password: str = attr()


class Slot(XmlModel, tag="slot"):
    display_name: str = attr(name="displayName", default="")
    can_timeout: XmlBool = attr(name="canTimeout", default=True)
    reserved: XmlBool | None = attr(default=None)  # 21.4.0


class Prepare(XmlModel, tag="prepare"):
    game_type: str = attr(name="gameType", default=GAME_TYPE)
    pause: XmlBool | None = attr(default=None)
    slots: list[Slot] = element(tag="slot", default_factory=list)


class Prepared(XmlModel, tag="prepared"):
    room_id: str = attr(name="roomId")
    reservations: list[str] = element(tag="reservation", default_factory=list)


class Observe(XmlModel, tag="observe"):
    room_id: str = attr(name="roomId")


class Observed(XmlModel, tag="observed"):
    room_id: str = attr(name="roomId")


class Pause(XmlModel, tag="pause"):
    room_id: str = attr(name="roomId")
    pause: XmlBool = attr()


class Step(XmlModel, tag="step"):
    room_id: str = attr(name="roomId")
    forced: XmlBool = attr(default=False)


class Cancel(XmlModel, tag="cancel"):
    room_id: str = attr(name="roomId")


class FreeReservation(XmlModel, tag="freeReservation"):
    reservation: str = attr()


class Timeout(XmlModel, tag="timeout"):
    room_id: str = attr(name="roomId")
    activate: XmlBool = attr()
    slot: XmlInt = attr()


class TestMode(XmlModel, tag="testMode"):
    __test__ = False  # not a pytest test class
    test_mode: XmlBool = attr(name="testMode")


class Testing(XmlModel, tag="testing"):
    test_mode: XmlBool = attr(name="testMode")


class ScoreForPlayer(XmlModel, tag="scoreForPlayer"):
    display_name: str = attr(name="displayName")


class PlayerScore(XmlModel, tag="playerScore"):
    """Answer to ``scoreForPlayer`` in test mode; its content is read leniently."""

    score: Score | None = element(tag="score", default=None)


class JoinedGameRoom(XmlModel, tag="joinedGameRoom"):
    room_id: str = attr(name="roomId")
    existing: XmlBool | None = attr(default=None)  # ≤ 21.3.3
    player_count: XmlInt | None = attr(name="playerCount", default=None)  # 21.4.0


TOP_LEVEL: dict[str, type[XmlModel]] = {
    cls.__xml_tag__: cls  # type: ignore[misc]
    for cls in (
        Room,
        Join,
        JoinPrepared,
        JoinRoom,
        Joined,
        Left,
        LobbyError,
        ErrorPacket,
        CloseConnection,
        CloseConnection214,
        CloseShort,
        Authenticate,
        Prepare,
        Prepared,
        Observe,
        Observed,
        Pause,
        Step,
        Cancel,
        FreeReservation,
        Timeout,
        TestMode,
        Testing,
        ScoreForPlayer,
        PlayerScore,
        JoinedGameRoom,
    )
}


@dataclass(frozen=True)
class UnknownMessage:
    """A message that could not be read: unknown element or ``data@class``, or invalid content.

    Never raised: returned in place of the message so that the caller can log it and go on.
    """

    raw_xml: str
    tag: str
    data_class: str | None = None
    reason: str = "unknown message"

    def __str__(self) -> str:
        what = self.tag if self.data_class is None else f"{self.tag}/data class={self.data_class!r}"
        return f"{self.reason} ({what}): {_shorten(self.raw_xml)}"


def _shorten(text: str, limit: int = 300) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


Message = (
    Room
    | Join
    | JoinPrepared
    | JoinRoom
    | Joined
    | Left
    | LobbyError
    | ErrorPacket
    | CloseConnection
    | Authenticate
    | Prepare
    | Prepared
    | Observe
    | Observed
    | Pause
    | Step
    | Cancel
    | FreeReservation
    | Timeout
    | TestMode
    | Testing
    | ScoreForPlayer
    | PlayerScore
    | JoinedGameRoom
    | UnknownMessage
)


# --- fast paths for mementos (the hot messages) ------------------------------------------------------
#
# pydantic-xml needs 3–11 ms to read or write a memento with a full board (one model per <field>).
# The functions below do the same for the 21.3.3 form of a state directly with lxml and build the
# same models without validation; anything else (older dialects, unknown or repeated content, other
# spellings) makes them return None and the caller takes the general pydantic-xml path, which stays the
# reference: tests/test_messages.py checks that both give identical models and identical XML.

_COLOR_BY_NAME = {c.name: c for c in Color}
_SHAPE_BY_NAME = {s.name: s for s in Shape}
_ROTATION_BY_NAME = {r.name: r for r in Rotation}
_TEAM_NAMES = frozenset(t.name for t in Team)
_TEAM_BY_NAME = {t.name: t for t in Team}
_BOOL_BY_NAME = {"true": True, "false": False}
_COLOR_NAME = {c: c.name for c in Color}
_SHAPE_NAME = {s: s.name for s in Shape}
_ROTATION_NAME = {r: r.name for r in Rotation}
_STATE_ATTRS = frozenset(("class", "turn", "round", "startPiece", "startTeam"))
_PIECE_ATTRS = frozenset(("color", "kind", "rotation", "isFlipped"))
_CLASS_ONLY: tuple[list[str], list[str]] = ([], ["class"])
_NAME_ONLY: tuple[list[str], list[str]] = ([], ["displayName"])
_Model = TypeVar("_Model", bound=BaseXmlModel)
_new = object.__new__
# the slots a pydantic model's instance needs (what model_construct sets)
_set_dict = PydanticModel.__dict__["__dict__"].__set__
_set_fields_set = PydanticModel.__pydantic_fields_set__.__set__  # type: ignore[attr-defined]
_set_extra = PydanticModel.__pydantic_extra__.__set__  # type: ignore[union-attr]
_set_private = PydanticModel.__pydantic_private__.__set__  # type: ignore[union-attr]


def _construct(model: type[_Model], /, **values: Any) -> _Model:
    """``model.model_construct(**values)``, which cannot take a field named ``cls``: no validation,
    defaults for the missing fields, ``model_fields_set`` = the given ones."""
    full: dict[str, Any] = {}
    for name, info in model.__pydantic_fields__.items():
        if name in values:
            full[name] = values[name]
        elif info.default_factory is not None:
            full[name] = info.default_factory()  # type: ignore[call-arg]  # list: no arguments
        else:
            full[name] = info.default  # None, "", True or a constant string: immutable
    instance = _new(model)
    _set_dict(instance, full)
    _set_fields_set(instance, set(values))
    _set_extra(instance, None)
    _set_private(instance, None)
    return instance


def _field(x: int, y: int, content: Color) -> BoardField:
    """``BoardField(x=x, y=y, content=content)`` without validation: :func:`_construct` for the up to 400
    fields of a board."""
    model = _new(BoardField)
    _set_dict(model, {"x": x, "y": y, "content": content})
    _set_fields_set(model, {"x", "y", "content"})
    _set_extra(model, None)
    _set_private(model, None)
    return model


def _int_text(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() and text.isascii() else None


def _leaf_text(element: etree._Element) -> str | None:
    """The text of an element without attributes and children, else None."""
    if len(element) or element.keys():
        return None
    return element.text


def _team_ref(element: etree._Element) -> TeamRef | None:
    keys = element.keys()
    if keys not in _CLASS_ONLY or len(element) or element.text not in _TEAM_NAMES:
        return None
    if keys:
        return _construct(TeamRef, cls=element.get("class"), text=element.text)
    return _construct(TeamRef, text=element.text)


def _player(element: etree._Element) -> PlayerInfo | None:
    keys = element.keys()
    if keys not in _NAME_ONLY:
        return None
    values: dict[str, Any] = {"display_name": element.get("displayName")} if keys else {}
    for child in element:
        if child.tag != "color" or "color" in values:
            return None
        values["color"] = _team_ref(child)
        if values["color"] is None:
            return None
    return _construct(PlayerInfo, **values)


def _names(element: etree._Element, tag: str, by_name: dict[str, Any], keys: tuple[list[str], ...]) -> list | None:
    """The values of the ``<tag>`` children of a shape or colour list, or None."""
    if element.keys() not in keys:
        return None
    values = []
    for child in element:
        if child.tag != tag:
            return None
        value = by_name.get(_leaf_text(child))  # type: ignore[arg-type]
        if value is None:
            return None
        values.append(value)
    return values


_COORDINATE = {str(i): i for i in range(100)}  # as the server writes them; other spellings: general path


def _board(element: etree._Element) -> Board | None:
    if element.keys():
        return None
    fields = []
    coordinate, color_by_name = _COORDINATE.get, _COLOR_BY_NAME.get
    for child in element:
        items = child.items()
        if len(items) != 3 or child.tag != "field" or len(child):
            return None  # also <fields> (documentation form): the general path merges both
        (kx, x), (ky, y), (kc, content) = items
        if kx != "x" or ky != "y" or kc != "content":
            return None
        x, y, color = coordinate(x), coordinate(y), color_by_name(content)
        if x is None or y is None or color is None:
            return None
        fields.append(_field(x, y, color))
    return _construct(Board, fields=fields) if fields else _construct(Board)


def _piece(element: etree._Element) -> Piece | None:
    attrib = dict(element.items())
    if attrib.keys() != _PIECE_ATTRS or len(element) != 1:
        return None
    position = element[0]
    if position.tag != "position" or len(position) or sorted(position.keys()) != ["x", "y"]:
        return None
    x, y = _int_text(position.get("x")), _int_text(position.get("y"))
    color = _COLOR_BY_NAME.get(attrib["color"])
    kind = _SHAPE_BY_NAME.get(attrib["kind"])
    rotation = _ROTATION_BY_NAME.get(attrib["rotation"])
    flipped = _BOOL_BY_NAME.get(attrib["isFlipped"])
    if x is None or y is None or color is None or kind is None or rotation is None or flipped is None:
        return None
    return _construct(
        Piece, color=color, kind=kind, rotation=rotation, is_flipped=flipped, position=_construct(Position, x=x, y=y)
    )


def _move(element: etree._Element) -> MoveElement | None:
    keys = element.keys()
    if keys not in _CLASS_ONLY:
        return None
    values: dict[str, Any] = {"cls": element.get("class")} if keys else {}
    for child in element:
        tag = child.tag
        if tag in values:
            return None
        if tag == "piece":
            values["piece"] = _piece(child)
        elif tag == "color":
            values["color"] = _COLOR_BY_NAME.get(_leaf_text(child))  # type: ignore[arg-type]
        else:
            return None
        if values[tag] is None:
            return None
    return _construct(MoveElement, **values)


def _mono(element: etree._Element) -> LastMoveMono | None:
    if element.keys():
        return None
    entries = []
    for entry in element:
        if entry.tag != "entry" or entry.keys() or len(entry) != 2:
            return None
        values = {child.tag: _leaf_text(child) for child in entry}
        color = _COLOR_BY_NAME.get(values.get("color"))  # type: ignore[arg-type]
        boolean = _BOOL_BY_NAME.get(values.get("boolean"))  # type: ignore[arg-type]
        if color is None or boolean is None:
            return None
        entries.append(_construct(MonoEntry, color=color, boolean=boolean))
    return _construct(LastMoveMono, entries=entries) if entries else _construct(LastMoveMono)


_SHAPE_LISTS = {
    "blueShapes": "blue_shapes",
    "yellowShapes": "yellow_shapes",
    "redShapes": "red_shapes",
    "greenShapes": "green_shapes",
}


def fast_state_from_tree(element: etree._Element) -> State | None:
    """``State.from_xml_tree(element)`` for the 21.3.3 form of a state, or None for anything else."""
    if element.tag != "state" or not _STATE_ATTRS.issuperset(element.keys()):
        return None
    turn = _int_text(element.get("turn"))
    if turn is None:
        return None
    values: dict[str, Any] = {"turn": turn}
    if (cls := element.get("class")) is not None:
        values["cls"] = cls
    if (text := element.get("round")) is not None:
        values["round"] = _int_text(text)
        if values["round"] is None:
            return None
    if (text := element.get("startPiece")) is not None:
        values["start_piece"] = _SHAPE_BY_NAME.get(text)
        if values["start_piece"] is None:
            return None
    if (text := element.get("startTeam")) is not None:  # 2027
        values["start_team_attr"] = _TEAM_BY_NAME.get(text)
        if values["start_team_attr"] is None:
            return None
    for child in element:
        tag = child.tag
        value: Any
        if tag == "board":
            name, value = "board", _board(child)
        elif tag in _SHAPE_LISTS:
            name = _SHAPE_LISTS[tag]
            value = _names(child, "shape", _SHAPE_BY_NAME, _CLASS_ONLY)  # class="linked-hash-set": 21.3.0
            if value is not None:
                value = _construct(ShapeList, shapes=value) if value else _construct(ShapeList)
        elif tag == "validColors":
            name, value = "valid_colors", _names(child, "color", _COLOR_BY_NAME, _CLASS_ONLY)
            if value is not None:
                value = _construct(ColorList, colors=value) if value else _construct(ColorList)
        elif tag == "startTeam":
            name, value = "start_team", _team_ref(child)
        elif tag == "first" or tag == "second":
            name, value = tag, _player(child)
        elif tag == "lastMove":
            name, value = "last_move", _move(child)
        elif tag == "lastMoveMono":
            name, value = "last_move_mono", _mono(child)
        else:
            return None  # legacy parts, unknown elements, comments: the general path
        if value is None or name in values:
            return None
        values[name] = value
    return _construct(State, **values)


def fast_room_from_tree(element: etree._Element) -> Room | None:
    """``Room.from_xml_tree(element)`` for a memento with a 21.3.3 state, or None for anything else."""
    if element.tag != "room" or element.keys() != ["roomId"] or len(element) != 1:
        return None
    data = element[0]
    if data.tag != "data" or data.items() != [("class", MEMENTO_CLASS)] or len(data) != 1:
        return None
    state = fast_state_from_tree(data[0])
    if state is None:
        return None
    return _construct(Room, room_id=element.get("roomId"), data=_construct(Memento, cls=MEMENTO_CLASS, state=state))


def fast_state_model(
    *,
    cls: str | None,
    turn: int,
    round: int,
    start_piece: Shape,
    shapes: tuple[Iterable[Shape], Iterable[Shape], Iterable[Shape], Iterable[Shape]],
    valid_colors: Iterable[Color],
    names: tuple[str, str],
    cells: Iterable[tuple[int, int, Color]],
    last_move: MoveElement | None,
    last_mono: Iterable[tuple[Color, bool]],
    layout_2027: bool = False,
) -> State:
    """The 21.3.3 (or, with ``layout_2027``, the 2027) state model of already valid values
    (``State(...)`` without validation; display names that are not ``str`` are validated as before)."""
    one, two = Team.ONE.name, Team.TWO.name
    mono = _construct(LastMoveMono, entries=[_construct(MonoEntry, color=c, boolean=b) for c, b in last_mono])
    if layout_2027:
        return _construct(
            State,
            cls=cls,
            turn=turn,
            round=round,
            start_piece=start_piece,
            start_team_attr=Team.ONE,
            blue_shapes=_construct(ShapeList, shapes=list(shapes[0])),
            yellow_shapes=_construct(ShapeList, shapes=list(shapes[1])),
            red_shapes=_construct(ShapeList, shapes=list(shapes[2])),
            green_shapes=_construct(ShapeList, shapes=list(shapes[3])),
            valid_colors=_construct(ColorList, colors=list(valid_colors)),
            board=_construct(Board, fields=[_field(x, y, c) for x, y, c in cells]),
            last_move=last_move,
            last_move_mono=mono,
        )

    def player(name: Any, team: str) -> PlayerInfo:
        if type(name) is str:
            return _construct(PlayerInfo, display_name=name, color=_construct(TeamRef, text=team))
        return PlayerInfo(display_name=name, color=TeamRef(text=team))

    blue, yellow, red, green = (_construct(ShapeList, shapes=list(s)) for s in shapes)
    return _construct(
        State,
        cls=cls,
        turn=turn,
        round=round,
        start_piece=start_piece,
        start_team=_construct(TeamRef, text=one),
        blue_shapes=blue,
        yellow_shapes=yellow,
        red_shapes=red,
        green_shapes=green,
        valid_colors=_construct(ColorList, colors=list(valid_colors)),
        first=player(names[0], one),
        second=player(names[1], two),
        board=_construct(Board, fields=[_field(x, y, c) for x, y, c in cells]),
        last_move=last_move,
        last_move_mono=mono,
    )


class _Decline(Exception):
    """Raised inside the fast writer: leave this message to the general path."""


# characters that lxml writes unchanged or escapes (others, e.g. control characters, make it raise)
_ATTR_CHARS = re.compile(r"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]*\Z")
_TEXT_CHARS = re.compile(r"[^\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]*\Z")
_INDENT = tuple("  " * depth for depth in range(8))
_NO_INDENT = ("",) * 8
_SHAPE_LINE = {s: f"<shape>{s.name}</shape>" for s in Shape}
_COLOR_LINE = {c: f"<color>{c.name}</color>" for c in Color}
_BOOLEAN_LINE = {True: "<boolean>true</boolean>", False: "<boolean>false</boolean>"}


def _attr(value: Any) -> str:
    """An attribute value as lxml writes it."""
    if type(value) is not str or not _ATTR_CHARS.match(value):
        raise _Decline
    if any(c in value for c in '&<>"\n\r\t'):
        value = (
            value.replace("&", "&amp;")
            .replace("<", "&lt;")
            .replace(">", "&gt;")
            .replace('"', "&quot;")
            .replace("\n", "&#10;")
            .replace("\r", "&#13;")
            .replace("\t", "&#9;")
        )
    return value


def _text(value: Any) -> str:
    """Element text as lxml writes it."""
    if type(value) is not str or not _TEXT_CHARS.match(value):
        raise _Decline
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _int(value: Any) -> str:
    if type(value) is not int:
        raise _Decline
    return str(value)


def _check(value: Any, kind: type) -> Any:
    if type(value) is not kind:
        raise _Decline
    return value


class _Lines:
    """The lines of lxml's output (``pretty``) or its pieces (compact): elements without mixed content."""

    __slots__ = ("out", "indent")

    def __init__(self, pretty: bool) -> None:
        self.out: list[str] = []
        self.indent = _INDENT if pretty else _NO_INDENT

    def open(self, depth: int, tag: str, attrs: str = "") -> int:
        self.out.append(f"{self.indent[depth]}<{tag}{attrs}>")
        return len(self.out)

    def close(self, depth: int, tag: str, mark: int) -> None:
        if len(self.out) == mark:  # no children: <tag/>
            self.out[-1] = self.out[-1][:-1] + "/>"
        else:
            self.out.append(f"{self.indent[depth]}</{tag}>")

    def leaf(self, depth: int, text: str) -> None:
        self.out.append(self.indent[depth] + text)

    def team_ref(self, depth: int, tag: str, ref: Any) -> None:
        _check(ref, TeamRef)
        attrs = "" if ref.cls is None else f' class="{_attr(ref.cls)}"'
        self.leaf(depth, f"<{tag}{attrs}>{_text(ref.text)}</{tag}>")

    def names(self, depth: int, tag: str, values: list, lines: dict) -> None:
        mark = self.open(depth, tag)
        indent = self.indent[depth + 1]
        self.out.extend([indent + lines[value] for value in values])
        self.close(depth, tag, mark)

    def move(self, depth: int, move: Any) -> None:
        _check(move, MoveElement)
        mark = self.open(depth, "lastMove", "" if move.cls is None else f' class="{_attr(move.cls)}"')
        piece = move.piece
        if piece is not None:
            _check(piece, Piece)
            position = _check(piece.position, Position)
            flipped = _check(piece.is_flipped, bool)
            piece_mark = self.open(
                depth + 1,
                "piece",
                f' color="{_COLOR_NAME[piece.color]}" kind="'
                f'{_SHAPE_NAME[piece.kind]}" rotation="{_ROTATION_NAME[piece.rotation]}" '
                f'isFlipped="{"true" if flipped else "false"}"',
            )
            self.leaf(depth + 2, f'<position x="{_int(position.x)}" y="{_int(position.y)}"/>')
            self.close(depth + 1, "piece", piece_mark)
        if move.color is not None:
            self.leaf(depth + 1, _COLOR_LINE[move.color])
        self.close(depth, "lastMove", mark)

    def state(self, depth: int, state: State) -> None:
        if state.current_color_index is not None or state.ordered_colors is not None or state.start_color is not None:
            raise _Decline  # legacy parts: the general path
        if state.start_team_attr is not None:
            self.state_2027(depth, state)
            return
        attrs = "" if state.cls is None else f' class="{_attr(state.cls)}"'
        attrs += f' turn="{_int(state.turn)}"'
        if state.round is not None:
            attrs += f' round="{_int(state.round)}"'
        if state.start_piece is not None:
            attrs += f' startPiece="{_SHAPE_NAME[state.start_piece]}"'
        mark = self.open(depth, "state", attrs)
        child = depth + 1
        if state.start_team is not None:
            self.team_ref(child, "startTeam", state.start_team)
        for tag, shapes in (
            ("blueShapes", state.blue_shapes),
            ("yellowShapes", state.yellow_shapes),
            ("redShapes", state.red_shapes),
            ("greenShapes", state.green_shapes),
        ):
            if shapes is not None:
                self.names(child, tag, _check(shapes, ShapeList).shapes, _SHAPE_LINE)
        if state.valid_colors is not None:
            self.names(child, "validColors", _check(state.valid_colors, ColorList).colors, _COLOR_LINE)
        for tag, player in (("first", state.first), ("second", state.second)):
            if player is not None:
                _check(player, PlayerInfo)
                attrs = "" if player.display_name is None else f' displayName="{_attr(player.display_name)}"'
                player_mark = self.open(child, tag, attrs)
                if player.color is not None:
                    self.team_ref(child + 1, "color", player.color)
                self.close(child, tag, player_mark)
        if state.board is not None:
            self.board(child, state.board)
        if state.last_move is not None:
            self.move(child, state.last_move)
        if state.last_move_mono is not None:
            self.mono(child, state.last_move_mono)
        self.close(depth, "state", mark)

    def state_2027(self, depth: int, state: State) -> None:
        """The 2027 layout (season-2027.md §3.3): attributes class, startTeam, turn, startPiece, round;
        children lastMove, board, lastMoveMono, the shape lists, validColors; no players."""
        if state.start_team is not None or state.first is not None or state.second is not None:
            raise _Decline
        attrs = "" if state.cls is None else f' class="{_attr(state.cls)}"'
        attrs += f' startTeam="{_check(state.start_team_attr, Team).name}" turn="{_int(state.turn)}"'
        if state.start_piece is not None:
            attrs += f' startPiece="{_SHAPE_NAME[state.start_piece]}"'
        if state.round is not None:
            attrs += f' round="{_int(state.round)}"'
        mark = self.open(depth, "state", attrs)
        child = depth + 1
        if state.last_move is not None:
            self.move(child, state.last_move)
        if state.board is not None:
            self.board(child, state.board)
        if state.last_move_mono is not None:
            self.mono(child, state.last_move_mono)
        for tag, shapes in (
            ("blueShapes", state.blue_shapes),
            ("yellowShapes", state.yellow_shapes),
            ("redShapes", state.red_shapes),
            ("greenShapes", state.green_shapes),
        ):
            if shapes is not None:
                self.names(child, tag, _check(shapes, ShapeList).shapes, _SHAPE_LINE)
        if state.valid_colors is not None:
            self.names(child, "validColors", _check(state.valid_colors, ColorList).colors, _COLOR_LINE)
        self.close(depth, "state", mark)

    def board(self, depth: int, board: Any) -> None:
        board = _check(board, Board)
        if board.wrapped_fields is not None:
            raise _Decline
        board_mark = self.open(depth, "board")
        indent, names = self.indent[depth + 1], _COLOR_NAME
        for field in board.fields:
            x, y = field.x, field.y
            if type(field) is not BoardField or type(x) is not int or type(y) is not int:
                raise _Decline
            self.out.append(f'{indent}<field x="{x}" y="{y}" content="{names[field.content]}"/>')
        self.close(depth, "board", board_mark)

    def mono(self, depth: int, mono: Any) -> None:
        mono_mark = self.open(depth, "lastMoveMono")
        for entry in _check(mono, LastMoveMono).entries:
            _check(entry, MonoEntry)
            entry_mark = self.open(depth + 1, "entry")
            self.leaf(depth + 2, _COLOR_LINE[entry.color])
            self.leaf(depth + 2, _BOOLEAN_LINE[_check(entry.boolean, bool)])
            self.close(depth + 1, "entry", entry_mark)
        self.close(depth, "lastMoveMono", mono_mark)


def _fast_xml(message: BaseXmlModel, pretty: bool) -> str | None:
    """What ``etree.tostring(message.to_xml_tree(exclude_none=True), encoding="unicode",
    pretty_print=pretty)`` gives (without the final newline) for a memento or state in the 21.3.3
    form, written directly; None for every other message or content."""
    lines = _Lines(pretty)
    try:
        if type(message) is State:
            lines.state(0, message)
        elif type(message) is Room and type(message.data) is Memento:
            data = message.data
            room_mark = lines.open(0, "room", f' roomId="{_attr(message.room_id)}"')
            data_mark = lines.open(1, "data", "" if data.cls is None else f' class="{_attr(data.cls)}"')
            lines.state(2, _check(data.state, State))
            lines.close(1, "data", data_mark)
            lines.close(0, "room", room_mark)
        else:
            return None
    except (_Decline, KeyError):
        return None
    return ("\n" if pretty else "").join(lines.out)


# --- output ------------------------------------------------------------------------------------------


def to_element(message: BaseXmlModel) -> etree._Element:
    """The lxml element of a message; unset optional parts are left out."""
    return message.to_xml_tree(exclude_none=True)


def to_xml(message: BaseXmlModel, *, pretty: bool = False) -> str:
    """Serialize a message in the server's form: no XML declaration; attribute values escaped like
    XStream (``&`` ``<`` ``>`` ``"`` and ``'`` → ``&apos;``, newline → ``&#10;``).

    ``pretty``: 2-space indentation, no trailing newline (replay files, protocol.md §10).
    """
    if isinstance(message, CloseShort):
        raise ValueError("<close/> is not understood by 2021 servers; send CloseConnection()")
    text = _fast_xml(message, pretty)  # mementos and states: written directly
    if text is None:
        text = etree.tostring(to_element(message), encoding="unicode", pretty_print=pretty)
        if pretty:
            text = text.rstrip("\n")
    # lxml leaves ' unescaped; in its output a ' can only be part of an attribute value or text, and
    # "&#10;" etc. only an escaped character of an attribute value: write them as XStream does.
    for plain, xstream in _XSTREAM_ESCAPES:
        text = text.replace(plain, xstream)
    return text


_XSTREAM_ESCAPES = (("'", "&apos;"), ("&#10;", "&#xa;"), ("&#13;", "&#xd;"), ("&#9;", "&#x9;"))


def to_bytes(message: BaseXmlModel, *, pretty: bool = False) -> bytes:
    """:func:`to_xml` encoded as UTF-8, ready for the socket."""
    return to_xml(message, pretty=pretty).encode("utf-8")
