"""Everything that is specific to one season of Software-Challenge Blokus, in one place.

Two seasons share one engine: 2021 (``swc_2021_blokus``, official server 21.3.3/21.4.0) and 2026/27
(``swc_2027_blokus``, the official backend 27.0.4). A :class:`Season` is a small
immutable profile of every difference: names on the wire, the first-move rule and its mistake, the
start-piece pool, the turn limit, the result form and its texts, the time limits. The profile travels
with the game state (``GameState.season``); there is no global switch. :data:`DEFAULT_SEASON` (2027, the
current contest season) is used only where nothing says otherwise (no ``--season``, and no server, state or
replay that tells).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property

from blokus.model.moves import Move, MoveMistake


class FirstMove(Enum):
    """Where a colour's first piece must lie."""

    CORNER = "corner"  # 2021: cover one of the four corner cells
    BORDER = "border"  # 2027: cover any cell of the outer ring


@dataclass(frozen=True)
class Season:
    year: int
    game_type: str
    plugin_package: str  # Java package of the move classes, e.g. "sc.plugin2021"
    move_request_class: str  # ``data@class`` of a move request
    first_move: FirstMove
    first_move_mistake: MoveMistake  # the mistake of a first piece off the allowed cells
    board_size: int
    round_limit: int  # full rounds; the game is over when the turn reaches 4 * round_limit
    start_pieces: tuple[str, ...]  # shape names the start piece is drawn from
    result_fragments: tuple[str, str]  # names of the two result parts: victory points, Blokus points
    violator_keeps_points: bool  # 2021: the violator's Blokus points stay in the result; 2027: all 0
    close_tag: str  # the close element this season's server sends
    join_display_name: str  # display name of a slot filled by <join> (2027: blank, names are omitted)
    soft_timeout_ms: int
    hard_timeout_ms: int
    # result reasons of irregular ends by cause (a Cause value): templates of {player}, {detail}, {soft_s},
    # {hard_s}; a cause without one takes the detail (2021's rule violation: the violation text)
    irregular_reasons: tuple[tuple[str, str], ...]
    left_detail: str  # {detail} of a LEFT reason that names none
    violation_move_prefix: str  # between a violation's text and the move: "bei Zug" (2021), "bei" (2027)
    regular_reasons: bool  # 2027 writes a reason for a regular end (the winner, or a tie); 2021 none
    # --- the wire form (docs/spec/protocol.md for 2021, docs/spec/season-2027.md §3 for 2027) ---
    state_attribute_layout: bool  # 2027: startTeam as an attribute and no players (§3.3); 2021: <startTeam>, <first>
    result_entries: bool  # 2027: <scores><entry> and one <winner team regular reason/>; 2021: <score cause> each
    error_names_original_message: bool  # in-room error: 2027's originalMessage, 2021's originalRequest (§3.5)
    lobby_error_packet: bool  # a lobby error: 2027's <errorpacket>, 2021's <error>
    joined_counts_players: bool  # joinedGameRoom: 2027's playerCount, 2021's existing
    slot_reserved_attribute: bool  # a prepared slot carries reserved= (21.3.3 has none)
    unrequested_move_violates: bool  # a move not asked for: 27.x cancels the game (process violation, §3.5);
    #                                  21.3.3 answers an error, disconnects and the sender lost (LEFT)
    tells_pause: bool  # 27.x tells observers when a game is paused or resumed
    one_game_type: bool  # 27.x bundles one plugin: a join for another game type is refused (§3.2)
    mistake_texts: tuple[tuple[MoveMistake, str], ...] = field(default=())  # German texts that differ

    @property
    def name(self) -> str:
        return str(self.year)

    # A season equals its year (a player's ``state.season == 2027``) and prints as it; seasons are one object each.
    def __eq__(self, other: object) -> bool:
        if isinstance(other, Season):
            return self.year == other.year
        if isinstance(other, int) and not isinstance(other, bool):
            return self.year == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.year)

    def __int__(self) -> int:
        return self.year

    def __str__(self) -> str:
        return self.name

    def __reduce__(self) -> tuple:
        # pickled by name (engine processes, arena workers): a season stays one object per process
        return (season_named, (self.name,))

    @property
    def set_move_class(self) -> str:
        return f"{self.plugin_package}.SetMove"

    @property
    def skip_move_class(self) -> str:
        return f"{self.plugin_package}.SkipMove"

    @property
    def turn_limit(self) -> int:
        """The first turn number at which the game is over by the round limit."""
        return 4 * self.round_limit

    @cached_property
    def first_move_cells(self) -> int:
        """Bitboard (bit ``y * size + x``) of the cells a colour's first piece must cover one of."""
        n = self.board_size
        if self.first_move is FirstMove.CORNER:
            cells = {(0, 0), (n - 1, 0), (0, n - 1), (n - 1, n - 1)}
        else:
            cells = {(x, y) for y in range(n) for x in range(n) if x in (0, n - 1) or y in (0, n - 1)}
        return sum(1 << (y * n + x) for x, y in cells)

    # --- texts -------------------------------------------------------------------------------------

    def mistake_text(self, mistake: MoveMistake) -> str:
        """The server's German message for ``mistake`` in this season."""
        return dict(self.mistake_texts).get(mistake, mistake.german)

    def violation_text(self, mistake: MoveMistake, move: Move | None) -> str:
        """The rule-violation text (the exception message; 2021's result reason)."""
        text = self.mistake_text(mistake)
        if move is None or not mistake.carries_move:
            return text
        return f"{text} {self.violation_move_prefix} '{move.german()}'"

    def invalid_move_error(self, player: str, mistake: MoveMistake, move: Move | None) -> str:
        """The message of the in-room error the violator gets (docs/spec/protocol.md §4.6,
        docs/spec/season-2027.md §3.5)."""
        shown = move if mistake.carries_move else None
        return (
            f"Ungueltiger Zug von '{player}'.\n"
            f"InvalidMoveException(mistake={self.mistake_text(mistake)}, "
            f"move={shown.german() if shown else 'null'})"
        )

    def win_reason(self, winner_name: str | None) -> str:
        """The reason of a regular end (``winner_name`` None: a draw); empty where the season writes none."""
        if not self.regular_reasons:
            return ""
        if winner_name is None:
            return "Beide Spieler sind gleichauf"
        return f"{winner_name} hat am meisten Punkte erzielt."

    def irregular_reason(self, cause: str, player: str, detail: str = "") -> str:
        """The result reason of an irregular end caused by ``player`` (a Cause value).

        2021 (21.3.3) writes fixed texts (docs/spec/rules.md §12); 2027 names the player (sdk ``Violation.kt``,
        docs/spec/season-2027.md §3.6: derived, never seen on a wire).
        """
        template = dict(self.irregular_reasons).get(cause)
        if template is None:
            return detail
        if cause == "LEFT":
            detail = detail or self.left_detail
        return template.format(
            player=player, detail=detail, soft_s=self.soft_timeout_ms // 1000, hard_s=self.hard_timeout_ms // 1000
        )


_PENTOMINOES_BUT_X = (
    "PENTO_L",
    "PENTO_T",
    "PENTO_V",
    "PENTO_S",
    "PENTO_Z",
    "PENTO_I",
    "PENTO_P",
    "PENTO_W",
    "PENTO_U",
    "PENTO_R",
    "PENTO_Y",
)

SEASON_2021 = Season(
    year=2021,
    game_type="swc_2021_blokus",
    plugin_package="sc.plugin2021",
    move_request_class="sc.framework.plugins.protocol.MoveRequest",
    first_move=FirstMove.CORNER,
    first_move_mistake=MoveMistake.NOT_IN_CORNER,
    board_size=20,
    round_limit=25,
    start_pieces=_PENTOMINOES_BUT_X,  # docs/spec/rules.md §6.1: every pentomino except PENTO_X
    result_fragments=("Gewinner", "\u2205 Punkte"),
    violator_keeps_points=True,
    close_tag="sc.protocol.responses.CloseConnection",
    join_display_name="Unknown",
    soft_timeout_ms=2000,
    hard_timeout_ms=10000,
    irregular_reasons=(  # fixed texts (docs/spec/rules.md §12)
        ("SOFT_TIMEOUT", "Der Spieler hat innerhalb von {soft_s} Sekunden nach Aufforderung keinen Zug gesendet"),
        ("HARD_TIMEOUT", "Der Spieler hat innerhalb von {hard_s} Sekunden nach Aufforderung keinen Zug gesendet"),
        ("LEFT", "Der Spieler hat das Spiel verlassen"),
    ),
    left_detail="",
    violation_move_prefix="bei Zug",
    regular_reasons=False,
    state_attribute_layout=False,
    result_entries=False,
    error_names_original_message=False,
    lobby_error_packet=False,
    joined_counts_players=False,
    slot_reserved_attribute=False,
    unrequested_move_violates=False,
    tells_pause=False,
    one_game_type=False,
)

SEASON_2027 = Season(
    year=2027,
    game_type="swc_2027_blokus",
    plugin_package="sc.plugin2027",
    move_request_class="moveRequest",
    first_move=FirstMove.BORDER,
    first_move_mistake=MoveMistake.NOT_ON_BORDER,
    board_size=20,
    round_limit=24,  # 27.0.1+ ends at turn 96 (the docs still say 25 rounds; the code wins)
    start_pieces=(*_PENTOMINOES_BUT_X[:10], "PENTO_X", "PENTO_Y"),  # X may start now (enum order)
    result_fragments=("Siegpunkte", "Punkte"),
    violator_keeps_points=False,
    close_tag="close",
    join_display_name="",
    soft_timeout_ms=2000,
    hard_timeout_ms=10000,
    # sdk Violation.kt; the hard timeout really names the soft limit (docs/spec/season-2027.md §3.6)
    irregular_reasons=(
        (
            "SOFT_TIMEOUT",
            "{player} hat fuer die Antwort auf die Zugaufforderung laenger als {soft_s} Sekunden gebraucht.",
        ),
        ("HARD_TIMEOUT", "{player} hat innerhalb von {soft_s} Sekunden nach Aufforderung keinen Zug gesendet."),
        ("LEFT", "{player} hat das Spiel verlassen: {detail}"),
        ("RULE_VIOLATION", "Regelverletzung von {player}: {detail}"),
        ("PROCESS_VIOLATION", "Missachtung des Spielablaufs von {player}: {detail}"),
    ),
    left_detail="LOST_CONNECTION",
    violation_move_prefix="bei",
    regular_reasons=True,
    state_attribute_layout=True,
    result_entries=True,
    error_names_original_message=True,
    lobby_error_packet=True,
    joined_counts_players=True,
    slot_reserved_attribute=True,
    unrequested_move_violates=True,
    tells_pause=True,
    one_game_type=True,
    # a wrong colour is the sdk's MoveMistake.WRONG_COLOR in 27.x
    mistake_texts=((MoveMistake.WRONG_COLOR, "Nur eigene Spielfiguren können gezogen werden"),),
)

SEASONS: dict[str, Season] = {"2021": SEASON_2021, "2027": SEASON_2027}
DEFAULT_SEASON = SEASON_2027  # the current contest season; 2021 is one --season away


def season_named(name: str | int) -> Season:
    """The season of ``2021``/``2027`` (also ``swc_2027_blokus``, ``sc.plugin2027``); KeyError otherwise."""
    text = str(name).strip().lower()
    for season in SEASONS.values():
        if text in (season.name, season.game_type, season.plugin_package):
            return season
    raise KeyError(name)


def season_of_game_type(game_type: str | None) -> Season | None:
    for season in SEASONS.values():
        if game_type == season.game_type:
            return season
    return None


def season_of_class(cls: str | None) -> Season | None:
    """The season whose package or move-request class names ``cls`` (``sc.plugin2027.SetMove``)."""
    if not cls:
        return None
    for season in SEASONS.values():
        if cls.startswith(season.plugin_package + ".") or cls == season.move_request_class:
            return season
    return None


GAME_TYPE = DEFAULT_SEASON.game_type
BOARD_SIZE = DEFAULT_SEASON.board_size
MOVE_REQUEST_CLASS = SEASON_2021.move_request_class
MOVE_REQUEST_CLASS_NEW = SEASON_2027.move_request_class
CLOSE_CONNECTION_21_3 = "sc.protocol.responses.CloseConnection"
CLOSE_CONNECTION_21_4 = "sc.protocol.CloseConnection"
DEFAULT_PORT = 13050
