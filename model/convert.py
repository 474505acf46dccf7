"""The one place where protocol messages and the game model meet.

* :func:`parse_message`: a raw depth-1 element → a typed message of :mod:`model.messages`, or an
  :class:`~model.messages.UnknownMessage` (never an exception).
* :func:`state_from_message` / :func:`read_state` / :func:`state_to_message`: mementos ↔ ``GameState``
  in every state dialect (docs/spec/protocol.md §4.3, §7, §12).
* :func:`move_from_message` / :func:`move_to_message`: move messages ↔ ``SetMove``/``SkipMove``.
* :func:`result_from_message` / :func:`result_to_message`: every result form ↔ :class:`GameResult`
  (``model.result``).
* :func:`detect_season`: the season a state's form belongs to.
* :func:`to_xml`: season-exact output (the season comes from the state, or is given).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast, get_args

from lxml import etree
from pydantic import ValidationError
from pydantic_xml import BaseXmlModel, ParsingError
from pydantic_xml.fields import EntityLocation, XmlEntityInfo

from blokus.model import messages as M
from blokus.model import placements as P
from blokus.model import xmlcodec
from blokus.model.framing import DEFAULT_MAX_MESSAGE_SIZE, END_OF_STREAM, EndOfStream, StreamFramer, parse_document
from blokus.model.messages import UnknownMessage, to_bytes, to_xml
from blokus.model.moves import Move, SetMove, SkipMove
from blokus.model.pieces import COLORS, SHAPES, Color, Shape, Team, orientations
from blokus.model.result import GameResult, PlayerResult, result_from_data, result_to_message
from blokus.model.season import DEFAULT_SEASON, SEASONS, Season, season_of_class
from blokus.model.state import GameState

log = logging.getLogger(__name__)

__all__ = [
    "GameResult",
    "MessageReader",
    "PlayerResult",
    "StateRead",
    "UnknownMessage",
    "derive_set_move",
    "detect_season",
    "is_message_type",
    "move_from_message",
    "move_to_message",
    "parse_message",
    "parse_xml",
    "player_names",
    "read_state",
    "result_from_message",
    "result_to_message",
    "state_from_message",
    "state_from_xml",
    "state_to_message",
    "state_to_model",
    "to_bytes",
    "to_xml",
]

_READ_ERRORS = (ValidationError, ParsingError, ValueError, KeyError, TypeError)


# --- messages ----------------------------------------------------------------------------------------


def _raw(element: etree._Element) -> str:
    return etree.tostring(element, encoding="unicode", with_tail=False)


def parse_message(element: etree._Element) -> M.Message:
    """Read one message (a child of ``<protocol>``) into its model.

    Dispatch on the tag and, for ``<room>``, on ``data@class``. Unknown tags or classes, mementos with
    a state of another game, and invalid content give an :class:`UnknownMessage` with the raw XML and
    the reason, which the caller logs and drops (docs/spec/protocol.md §9).
    """
    tag = element.tag if isinstance(element.tag, str) else "?"
    model = M.TOP_LEVEL.get(tag)
    if model is None:
        return UnknownMessage(_raw(element), tag, reason="unknown message element")
    data_class = None
    if model is M.Room:
        data = element.find("data")
        if data is None:
            return UnknownMessage(_raw(element), tag, reason="room message without <data>")
        data_class = data.get("class")
        if data_class not in M.DATA_CLASSES:
            return UnknownMessage(_raw(element), tag, data_class, reason="unknown data class")
        if data_class == M.MEMENTO_CLASS:
            state = data.find("state")
            state_class = None if state is None else state.get("class")
            if state is None or state_class not in (None, M.STATE_CLASS):
                return UnknownMessage(
                    _raw(element), tag, data_class, reason=f"memento with unknown state class {state_class!r}"
                )
    message = cast(M.Message | None, xmlcodec.read(model, element))  # the plain form; None: pydantic-xml
    if message is None:
        try:
            message = cast(M.Message, model.from_xml_tree(element))
        except _READ_ERRORS as exc:
            return UnknownMessage(_raw(element), tag, data_class, reason=f"unreadable message: {_first_line(exc)}")
    if isinstance(message, M.Join) and "game_type" not in message.model_fields_set:
        message.game_type = None  # <join/> of later seasons: keep "no type" visible
    return message


def _first_line(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return invalid_content(exc)
    text = str(exc).strip().splitlines()
    return " ".join(line.strip() for line in text[:3]) if text else type(exc).__name__


def _xml_models(annotation: Any) -> list[type[BaseXmlModel]]:
    """The XML models a field's annotation holds (``Board``, ``list[BoardField]``, ``Memento | Result | None``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseXmlModel):
        return [annotation]
    return [model for arg in get_args(annotation) for model in _xml_models(arg)]


def _xml_path(model: type[BaseXmlModel] | None, loc: tuple[int | str, ...]) -> str:
    """A pydantic error location as the XML names it: ``board/field/@x`` for ``('board', 'fields', 2, 'x')``."""
    names: list[str] = []
    candidates = [model] if model is not None else []
    for part in loc:
        if isinstance(part, int):
            continue
        owner = next((m for m in candidates if part in m.model_fields), None)
        if owner is None:  # a name of pydantic's own (a union member's tag): not an XML name
            candidates = []
            continue
        info = owner.model_fields[part]
        entity = next((m for m in info.metadata if isinstance(m, XmlEntityInfo)), None)
        candidates = _xml_models(info.annotation)
        tag = getattr(candidates[0], "__xml_tag__", None) if len(candidates) == 1 else None
        name = (entity.path if entity is not None else None) or tag or part
        attribute = entity is not None and entity.location is EntityLocation.ATTRIBUTE
        names.append(f"@{name}" if attribute else name)
    return "/".join(names)


def invalid_content(exc: ValidationError) -> str:
    """One line naming the first invalid field of a message as the XML names it, its line and the problem:
    ``<state> line 1, @turn: not an integer: 'x'`` (pydantic says ``1 validation error for State``)."""
    errors = exc.errors(include_url=False)
    if not errors:
        return str(exc).strip().splitlines()[0]
    first = errors[0]
    ctx = first.get("ctx") or {}
    problem = str(ctx.get("orig", first["msg"])).removeprefix("Value error, ")
    model = next((m for m in vars(M).values() if _xml_models(m) == [m] and m.__name__ == exc.title), None)
    tag = f"<{model.__xml_tag__}>" if model is not None and model.__xml_tag__ else exc.title
    where = f" line {ctx['sourceline']}," if "sourceline" in ctx else ""
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{tag}{where} {_xml_path(model, tuple(first['loc'])) or 'content'}: {problem}{more}"


def parse_xml(source: bytes | str) -> M.Message:
    """Parse one message given as XML text (safe parser, see :func:`model.framing.parse_document`)."""
    data = source.encode("utf-8") if isinstance(source, str) else source
    return parse_message(parse_document(data))


class MessageReader:
    """:class:`~model.framing.StreamFramer` + :func:`parse_message`: bytes in, typed messages out.

    ``feed`` returns the messages completed by the data (:class:`UnknownMessage` values included) and
    :data:`~model.framing.END_OF_STREAM` after ``</protocol>``; it raises
    :class:`~model.framing.ProtocolError` like the framer (its ``frames`` are raw elements).
    """

    def __init__(self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self.framer = StreamFramer(max_message_size)

    @property
    def ended(self) -> bool:
        return self.framer.ended

    def feed(self, data: bytes) -> list[M.Message | EndOfStream]:
        return [f if f is END_OF_STREAM else parse_message(f) for f in self.framer.feed(data)]

    def close(self) -> None:
        self.framer.close()


# --- states ------------------------------------------------------------------------------------------


@dataclass
class StateRead:
    """A state read from a message, with what the message says besides the position."""

    state: GameState
    names: tuple[str, str] = ("", "")  # display names of team ONE and team TWO
    room_id: str | None = None
    warnings: list[str] = field(default_factory=list)
    detected: Season | None = None  # the season the state's form shows (None: cannot tell)


def _state_model(message: M.Room | M.Memento | M.State) -> tuple[M.State, str | None]:
    if isinstance(message, M.Room):
        if not isinstance(message.data, M.Memento):
            raise ValueError(f"not a memento: data class {message.data.cls!r}")
        return message.data.state, message.room_id
    if isinstance(message, M.Memento):
        return message.state, None
    if isinstance(message, M.State):
        return message, None
    raise TypeError(f"not a state message: {type(message).__name__}")


def detect_season(model: M.State) -> Season | None:
    """The season whose server writes a state like this one, or None if the form does not tell.

    2027 (docs/spec/season-2027.md §4.2): ``startTeam`` as an attribute, an ``sc.plugin2027.`` lastMove, start
    piece PENTO_X. 2021: a ``<startTeam>`` child, ``<first>``/``<second>``, legacy 21.0–21.2 parts, an
    ``sc.plugin2021.`` lastMove.
    """

    def writing(attribute_layout: bool) -> Season:
        return next(s for s in SEASONS.values() if s.state_attribute_layout is attribute_layout)

    if model.start_team_attr is not None:
        return writing(attribute_layout=True)
    if (
        model.start_team is not None
        or model.first is not None
        or model.second is not None
        or model.current_color_index is not None
        or model.ordered_colors is not None
    ):
        return writing(attribute_layout=False)
    if model.last_move is not None and (season := season_of_class(model.last_move.cls)) is not None:
        return season
    piece = model.start_piece.name if model.start_piece is not None else None
    starting = [s for s in SEASONS.values() if piece in s.start_pieces]
    return starting[0] if len(starting) == 1 else None  # a start piece only one season draws (PENTO_X)


def read_state(message: M.Room | M.Memento | M.State, season: Season | None = None) -> StateRead:
    """Interpret a state in any dialect of either season (docs/spec/protocol.md §7, §9; docs/spec/season-2027.md §3.3).

    The state's season is ``season`` if given (an explicit choice), else the one its form shows
    (:func:`detect_season`), else the default season (:data:`~model.season.DEFAULT_SEASON`).

    * ``round`` is always recomputed from ``turn`` (the attribute may lag behind in 21.2.0–21.3.1).
    * 21.0/21.1 (``currentColorIndex`` into ``orderedColors``): that list holds the colours still in
      the game, so it becomes ``validColors``; the current colour is ``orderedColors[currentColorIndex]``;
      ``turn`` counted only real moves then, so it is replaced by the smallest number ≥ the given turn
      whose ``turn % 4`` is that colour (``COLORS[turn % 4]`` is the current colour of the model).
    * Board fields are read both directly under ``<board>`` and inside ``<fields>``.
    * A missing shape list is read as "all 21 shapes" (with a warning); a missing ``validColors`` (and no
      ``orderedColors``) as all four colours.
    * Mismatches (current colour not in ``validColors``, two fields on one cell) are reported in
      ``warnings``, not raised. Raises ``ValueError`` only if no position can be built at all (no
      ``startPiece``, fields off the board).
    """
    model, room_id = _state_model(message)
    warnings: list[str] = []
    if model.start_piece is None:
        raise ValueError("state without startPiece")
    turn = model.turn
    if turn < 0:
        raise ValueError(f"negative turn {turn}")

    # whose turn, and which colours are in the game
    if model.valid_colors is not None:
        valid = list(model.valid_colors.colors)
    elif model.ordered_colors is not None:
        valid = list(model.ordered_colors.colors)
    else:
        valid = list(COLORS)
        warnings.append("state without validColors: assuming all four colours")
    if model.current_color_index is not None and model.valid_colors is None:
        ordered = model.ordered_colors.colors if model.ordered_colors is not None else []
        if 0 <= model.current_color_index < len(ordered):
            current = ordered[model.current_color_index]
            turn += (current - turn) % 4
        else:
            warnings.append(
                f"currentColorIndex {model.current_color_index} outside orderedColors {len(ordered)}: "
                f"using COLORS[turn % 4]"
            )
    if valid and COLORS[turn % 4] not in valid:
        warnings.append(f"current colour {COLORS[turn % 4].name} (turn {turn}) is not in validColors")

    # board
    cells: dict[tuple[int, int], Color] = {}
    if model.board is not None:
        for f in model.board.all_fields:
            if (f.x, f.y) in cells and cells[(f.x, f.y)] != f.content:
                warnings.append(f"field ({f.x},{f.y}) given twice with different colours")
            cells[(f.x, f.y)] = f.content

    # undeployed shapes
    undeployed: dict[Color, list[Shape]] = {}
    for color in COLORS:
        shape_list = model.shape_list(color)
        if shape_list is None:
            undeployed[color] = list(SHAPES)
            warnings.append(f"state without {color.name.lower()}Shapes: assuming all shapes undeployed")
        else:
            undeployed[color] = list(shape_list.shapes)

    last_mono: dict[Color, bool] = {}
    if model.last_move_mono is not None:
        last_mono = {e.color: e.boolean for e in model.last_move_mono.entries if e.color is not None}

    last_move = None
    if model.last_move is not None:
        last_move = move_from_message(model.last_move)
        if last_move is None:
            warnings.append(f"unreadable lastMove (class {model.last_move.cls!r}) ignored")

    detected = detect_season(model)
    state = GameState.from_parts(
        season=season or detected or DEFAULT_SEASON,
        start_piece=model.start_piece,
        turn=turn,
        cells=[(x, y, c) for (x, y), c in cells.items()],
        undeployed=undeployed,
        valid_colors=valid,
        last_move=last_move,
        last_mono=last_mono,
    )
    return StateRead(state, player_names(model), room_id, warnings, detected)


def state_from_message(message: M.Room | M.Memento | M.State, season: Season | None = None) -> GameState:
    """The position of a memento / state model (see :func:`read_state` for the dialects)."""
    result = read_state(message, season)
    for warning in result.warnings:
        log.warning("state turn %d: %s", result.state.turn, warning)
    return result.state


def player_names(message: M.Room | M.Memento | M.State) -> tuple[str, str]:
    """Display names of team ONE and team TWO (``first`` / ``second``, matched by their team)."""
    model, _ = _state_model(message)
    names = ["", ""]
    for index, player in enumerate((model.first, model.second)):
        if player is None:
            continue
        team = player.team
        names[team if team is not None else index] = player.display_name
    return names[0], names[1]


_XY = tuple((i % P.N, i // P.N) for i in range(P.NCELLS))


def _cells(state: GameState) -> list[tuple[int, int, Color]]:
    """:meth:`GameState.cells` (row by row) without a colour look-up per cell."""
    indexed = []
    for color, bits in zip(COLORS, state.boards, strict=True):
        while bits:
            low = bits & -bits
            indexed.append((low.bit_length() - 1, color))
            bits ^= low
    indexed.sort()
    xy = _XY
    return [(*xy[i], color) for i, color in indexed]


def state_to_model(state: GameState, names: tuple[str, str] = ("", ""), *, with_class: bool = True) -> M.State:
    """The ``<state>`` of a position as its season's server writes it (``class="state"`` as inside a
    memento unless disabled). 2027 states carry no player names.

    The values of a ``GameState`` are valid by construction, so the models are built without
    validation (equal to ``M.State(...)`` of the same values, see tests/test_messages.py); display names
    that are not ``str`` are validated (and refused) as before.
    """
    build = xmlcodec.construct
    field = xmlcodec.maker(M.BoardField)
    parts: dict[str, object] = {
        "cls": M.STATE_CLASS if with_class else None,
        "turn": state.turn,
        "round": state.round,
        "start_piece": state.start_piece,
    }
    if state.season.state_attribute_layout:
        parts["start_team_attr"] = Team.ONE
    else:
        parts["start_team"] = build(M.TeamRef, text=Team.ONE.name)
    for color, name in zip(COLORS, ("blue_shapes", "yellow_shapes", "red_shapes", "green_shapes"), strict=True):
        parts[name] = build(M.ShapeList, shapes=list(state.pieces_left(color)))
    parts["valid_colors"] = build(M.ColorList, colors=list(state.valid_colors))
    if not state.season.state_attribute_layout:
        for key, name, team in (("first", names[0], Team.ONE), ("second", names[1], Team.TWO)):
            if type(name) is str:
                parts[key] = build(M.PlayerInfo, display_name=name, color=build(M.TeamRef, text=team.name))
            else:
                parts[key] = M.PlayerInfo(display_name=name, color=M.TeamRef(text=team.name))
    parts["board"] = build(M.Board, fields=[field({"x": x, "y": y, "content": c}) for x, y, c in _cells(state)])
    parts["last_move"] = None if state.last_move is None else move_element(state.last_move, state.season)
    mono = [build(M.MonoEntry, color=c, boolean=b) for c, b in sorted(state.last_mono.items())]
    parts["last_move_mono"] = build(M.LastMoveMono, entries=mono)
    return build(M.State, **parts)


def state_to_message(state: GameState, room_id: str, names: tuple[str, str] = ("", "")) -> M.Room:
    """The memento the server of the state's season sends for ``state``."""
    return M.Room(room_id=room_id, data=M.Memento(state=state_to_model(state, names)))


def state_from_xml(source: bytes | str, season: Season | None = None) -> StateRead:
    """Read a state from XML text: a bare ``<state>`` or a memento ``<room>`` (state files, fixtures).
    ``season`` overrides the season the form shows."""
    data = source.encode("utf-8") if isinstance(source, str) else source
    root = parse_document(data)
    if root.tag == "state":
        try:
            model = xmlcodec.read(M.State, root) or M.State.from_xml_tree(root)
        except ValidationError as exc:
            raise ValueError(invalid_content(exc)) from None
        return read_state(model, season)
    message = parse_message(root)
    if isinstance(message, M.Room) and isinstance(message.data, M.Memento):
        return read_state(message, season)
    if isinstance(message, UnknownMessage) and message.reason.startswith("unreadable"):
        raise ValueError(message.reason)
    raise ValueError(f"not a state or memento: {message}")


# --- moves -------------------------------------------------------------------------------------------


def _piece_move(piece: M.Piece) -> SetMove:
    return SetMove(piece.color, piece.kind, piece.rotation, piece.is_flipped, piece.position.x, piece.position.y)


def move_from_message(
    message: M.Room | M.SetMoveData | M.SkipMoveData | M.MoveElement | M.Piece,
) -> Move | None:
    """The move of a move message, ``lastMove`` or ``originalRequest``/``originalMessage``.

    ``None`` when there is no move: a SkipMove without ``<color>`` (the server judges it WRONG_COLOR),
    an ``originalRequest`` of a lobby request, an unknown class. For ``lastMove`` any ``*.SetMove`` /
    ``*.SkipMove`` class is accepted (later seasons use their own package).
    """
    if isinstance(message, M.Room):
        message = message.data  # type: ignore[assignment]
    if isinstance(message, M.Piece):
        return _piece_move(message)
    if isinstance(message, M.SetMoveData):
        return _piece_move(message.piece)
    if isinstance(message, M.SkipMoveData):
        return None if message.color is None else SkipMove(message.color)
    if isinstance(message, M.MoveElement):
        cls = message.cls or ""
        if cls.endswith("SetMove") or (not cls and message.piece is not None):
            return None if message.piece is None else _piece_move(message.piece)
        if cls.endswith("SkipMove") or (not cls and message.color is not None):
            return None if message.color is None else SkipMove(message.color)
        return None
    return None


def _piece(move: SetMove) -> M.Piece:
    return M.Piece(
        color=move.color,
        kind=move.shape,
        rotation=move.rotation,
        is_flipped=move.flipped,
        position=M.Position(x=move.x, y=move.y),
    )


def move_element(
    move: Move, season: Season = DEFAULT_SEASON, cls: type[M.MoveElement] = M.MoveElement
) -> M.MoveElement:
    """A move inside another element (``lastMove``, ``originalMessage``) with the season's class."""
    if isinstance(move, SetMove):
        return cls(cls=season.set_move_class, piece=_piece(move))
    return cls(cls=season.skip_move_class, color=move.color)


def move_to_message(move: Move, room_id: str, season: Season = DEFAULT_SEASON) -> M.Room:
    """The room message that sends ``move`` in the season's form (docs/spec/protocol.md §3.1–§3.2,
    docs/spec/season-2027.md §3.4: only the class differs)."""
    if isinstance(move, SetMove):
        return M.Room(room_id=room_id, data=M.SetMoveData(cls=season.set_move_class, piece=_piece(move)))
    if isinstance(move, SkipMove):
        return M.Room(room_id=room_id, data=M.SkipMoveData(cls=season.skip_move_class, color=move.color))
    raise TypeError(f"not a move: {move!r}")


def derive_set_move(
    color: Color, cells: Iterable[tuple[int, int]], candidates: Iterable[Shape] | None = None
) -> SetMove | None:
    """The SetMove (canonical rotation/flip) that covers exactly ``cells``, or None.

    ``candidates`` restricts the shapes (e.g. the one that left the colour's undeployed set).
    """
    cell_set = set(cells)
    if not cell_set:
        return None
    min_x = min(x for x, _ in cell_set)
    min_y = min(y for _, y in cell_set)
    rel = tuple(sorted(((x - min_x, y - min_y) for x, y in cell_set), key=lambda c: (c[1], c[0])))
    shapes = SHAPES if candidates is None else tuple(candidates)
    for shape in shapes:
        if shape.size != len(rel):
            continue
        for o in orientations(shape):
            if o.cells == rel:
                return SetMove(color, shape, o.rotation, o.flipped, min_x, min_y)
    return None


# --- results (the one result type lives in model.result) ---------------------------------------------


def result_from_message(message: M.Room | M.ResultData) -> GameResult:
    """Interpret a result in the 2021, intermediate or 2027 form (see :func:`model.result.result_from_data`)."""
    data = message.data if isinstance(message, M.Room) else message
    if not isinstance(data, M.ResultData):
        raise ValueError(f"not a result: {type(data).__name__}")
    return result_from_data(data)


def is_message_type(message: object, model: type[BaseXmlModel]) -> bool:
    """True if ``message`` is ``model`` or a room message whose data is ``model``."""
    if isinstance(message, model):
        return True
    return isinstance(message, M.Room) and isinstance(message.data, model)
