"""pydantic-xml models of every protocol message of ``swc_2021_blokus`` (docs/spec/protocol.md §2–§7, §12) and
``swc_2027_blokus`` (docs/spec/season-2027.md §3).

One model per XML element. Input is read leniently (``search_mode="unordered"``: children are found by
name in any order; unknown attributes, children and ``class`` attributes are ignored; enumeration
values in any case). Output is season-exact: :func:`to_xml` writes exactly what the official serializer
writes (see the ``gen-21.3.3-*`` and ``sc2027`` fixtures), with unset optional parts left out; a state
with the ``startTeam`` attribute is written in the 2027 layout.

Top-level messages (children of ``<protocol>``) are the ``*`` classes of ``TOP_LEVEL``; room messages
are :class:`Room` with one of the ``data`` models (dispatched on ``data@class``). Reading a raw element
into these models, with dispatch and error reporting, is :func:`model.convert.parse_message`.

These models are the one description of each message: :mod:`model.xmlcodec` derives from them the fast
reader of the plain form of every message and the writer of every message (tests/test_xmlcodec.py proves
both equal to pydantic-xml); pydantic-xml itself reads what the fast reader leaves (other spellings,
unknown content) and reports the errors.

Season-specific names (game type, move classes) come from :mod:`model.season` only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, Field, PlainSerializer, model_validator
from pydantic_xml import BaseXmlModel, attr, element, xml_field_validator

from blokus.model import xmlcodec
from blokus.model.pieces import Color, Rotation, Shape, Team
from blokus.model.season import (
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

# ``class`` values of ``<data>`` (docs/spec/protocol.md §6). Move classes come from the seasons; the default
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

    xml_checked_by_reader: ClassVar = ("position",)  # model.xmlcodec reads a single <position> only

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
    ``<fields>`` (docs/spec/protocol.md §8). Both are read; :attr:`all_fields` merges them."""

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
    ``<sc.plugin2027.Color>`` (what socha 5.1.0 expects; docs/spec/season-2027.md §8), read into ``color``."""

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
    """A game state in every 2021 dialect (docs/spec/protocol.md §4.3, §7) and the newer one of §12.

    Declaration order = the 21.3.3 order, used on output; a state with the ``startTeam`` attribute is written
    in the 2027 order (docs/spec/season-2027.md §3.3: ``xml_layouts``). Legacy parts (``currentColorIndex``,
    ``orderedColors``, ``startColor``) and the newer ``startTeam`` attribute are read, and written only
    when set. Interpreting the dialects is :func:`model.convert.state_from_message`.
    """

    xml_layouts: ClassVar = {
        "start_team_attr": (
            *("cls", "start_team_attr", "turn", "start_piece", "round"),
            *("last_move", "board", "last_move_mono"),
            *("blue_shapes", "yellow_shapes", "red_shapes", "green_shapes", "valid_colors"),
        )
    }

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


# --- result (docs/spec/protocol.md §4.5, §12) ------------------------------------------------------------------


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
    """The colour is a child element; without it the server judges WRONG_COLOR (docs/spec/protocol.md §3.2)."""

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


# --- top-level messages: administrator and observer (docs/spec/protocol.md §5) ---------------------------------


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


# --- output ------------------------------------------------------------------------------------------


def to_xml(message: BaseXmlModel, *, pretty: bool = False) -> str:
    """Serialize a message in the server's form (:func:`model.xmlcodec.write`): no XML declaration; unset
    optional parts left out; attribute values escaped like XStream (``&`` ``<`` ``>`` ``"`` and ``'`` →
    ``&apos;``, newline → ``&#xa;``); a 2027 state in the 2027 layout.

    ``pretty``: 2-space indentation, no trailing newline (replay files, docs/spec/protocol.md §10).
    """
    if isinstance(message, CloseShort):
        raise ValueError("<close/> is not understood by 2021 servers; send CloseConnection()")
    return xmlcodec.write(message, pretty=pretty)


def to_bytes(message: BaseXmlModel, *, pretty: bool = False) -> bytes:
    """:func:`to_xml` encoded as UTF-8, ready for the socket."""
    return to_xml(message, pretty=pretty).encode("utf-8")
