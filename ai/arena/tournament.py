"""Tournaments (the library of ``blokus tournament``, whose options ``cli.tournament`` reads): every pairing of
a round-robin (or of a gauntlet: one player against each other one) plays the arena's game pairs (``ai.arena.match``:
each opening from both seats, the same openings for every pairing), the games are written one by one to an
append-only journal (so a stopped or crashed tournament goes on where it stopped, nothing played twice), and
the result is a ratings table: maximum-likelihood Elo with 95 % intervals, anchored at one player, and the
score matrix.

A game is known by its key: the pairing (its two players, in the order of the command line), the round (the
game pair, i.e. the opening) and the seat (0: the pairing's first player plays team ONE). The schedule is a
function of the settings alone, so the same command finds the same keys again.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import IO, Annotated, Any, BinaryIO, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from blokus.ai.arena.audit import MAX_GAMES, GameReport, first_error, judged, report_of
from blokus.ai.arena.match import ArenaGame, GameSpec, fitted_table
from blokus.ai.arena.sprt import Pentanomial, connected, elo_fit, plus_minus, signed, strongly_connected


@dataclass(frozen=True)
class GameKey:
    """Which game of a tournament: pairing (``a`` against ``b``), round (the opening) and seat."""

    a: str
    b: str
    round: int
    seat: int  # 0: a plays team ONE, 1: b does

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Scheduled:
    key: GameKey
    spec: GameSpec  # A is key.a, B is key.b


def pairings(players: list[str], gauntlet: str | None = None) -> list[tuple[str, str]]:
    """The pairings of a round-robin over ``players`` (in their order), or of the gauntlet of one of them."""
    if gauntlet is not None:
        return [(gauntlet, p) for p in players if p != gauntlet]
    return [(a, b) for i, a in enumerate(players) for b in players[i + 1 :]]


def schedule(pairs: list[tuple[str, str]], base: list[GameSpec]) -> list[Scheduled]:
    """Every game of the tournament, round by round (so a stopped tournament has played every pairing about
    equally): the games of ``base`` (``ai.arena.match.make_specs``) for every pairing (the same openings and seeds),
    renumbered so that each game has an index of its own and the two
    games of a pair stay ``2k`` and ``2k + 1``."""
    out = []
    for index, spec in enumerate(base):
        for p, (a, b) in enumerate(pairs):
            out.append(Scheduled(GameKey(a, b, index // 2, spec.a_team), replace(spec, index=p * len(base) + index)))
    return out


# --- the journal --------------------------------------------------------------------------------------------

JOURNAL_FORMAT = "blokus-tournament-journal/2"  # 2: every game with its moves (issue 61)
OLD_FORMATS = ("blokus-tournament-journal/1",)
MAX_LINE_BYTES = 64 * 1024  # a game's line is a few KiB (its moves, its times, a forfeit's line)
NAME_MAX = 4_096  # a player's name (a cmd: player's command line)

Name = Annotated[str, Field(max_length=NAME_MAX)]
Names = Annotated[list[Name], Field(max_length=256)]
Setting = bool | Annotated[int, Field(ge=-(2**63), le=2**63)] | Name | None | Names
_STRICT = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)


class JournalHeader(BaseModel):
    """The first line: the journal's format and the tournament's settings."""

    model_config = _STRICT
    format: Annotated[str, Field(max_length=64)]
    settings: Annotated[dict[Annotated[str, Field(max_length=64)], Setting], Field(max_length=64)]


class JournalKey(BaseModel):
    model_config = _STRICT
    a: Name
    b: Name
    round: Annotated[int, Field(ge=0, le=MAX_GAMES)]
    seat: Literal[0, 1]


class JournalEntry(BaseModel):
    """Every other line: one finished game, its key and its report (``ai.arena.audit.GameReport``)."""

    model_config = _STRICT
    key: JournalKey
    game: GameReport


class JournalError(ValueError):
    """A journal that does not belong to this tournament, cannot be read or is in use: one line."""


class Journal:
    """An append-only file of JSON lines: a header with the tournament's settings, then one line per finished
    game (its key and its report, moves included), each written and fsynced as the game finishes.

    Read as a stream, every line bounded (``MAX_LINE_BYTES``) and validated (``JournalEntry``), the file too (at
    most two lines per game of ``schedule``): anything else is a :class:`JournalError` naming the line and why. A
    game read back counts as ``ai.arena.audit.judged`` says (void unless it replays); a key met twice counts once
    (said), a last line cut off by a crash is dropped (said). The file is locked (``flock``) from ``open`` to
    ``close``: a second tournament on it is refused; bytes another process appends meanwhile are cut off
    (``intruded``)."""

    def __init__(self, path: str | Path, settings: dict[str, Any], schedule: Mapping[GameKey, GameSpec]) -> None:
        self.path = Path(path)
        self.settings = settings
        self.schedule = schedule
        self.games: dict[GameKey, ArenaGame] = {}
        self.notes: list[str] = []  # what was repaired on reading, one line each
        self.intruded = 0  # bytes that something else wrote to the file while it was open (cut off)
        self._fh: BinaryIO | None = None
        self._end = 0  # the file's length as this journal wrote it

    def open(self) -> Journal:
        """Lock the file (made if missing), read what it holds and keep it open for appending; a new file gets
        the header."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+b", opener=_private)  # noqa: SIM115 (closed by close())
        try:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise JournalError(
                    f"{self.path} is in use by another blokus tournament (it would play the same games): "
                    "wait for it to end, or give another journal"
                ) from None
            self._fh = fh
            if os.fstat(fh.fileno()).st_size:
                self._read(fh)
            else:
                self._append({"format": JOURNAL_FORMAT, "settings": self.settings})
        except BaseException:
            self._fh = None
            fh.close()
            raise
        return self

    def _read(self, fh: BinaryIO) -> None:
        fh.seek(0)
        limit = 1 + 2 * len(self.schedule)
        offset = number = twice = 0
        while line := fh.readline(MAX_LINE_BYTES + 1):
            number += 1
            if len(line) > MAX_LINE_BYTES:
                raise JournalError(f"{self.path} line {number} is longer than {MAX_LINE_BYTES // 1024} KiB: no game is")
            if not line.endswith(b"\n"):  # the last line, cut off by a crash: dropped, the next starts on its own
                if number == 1:
                    raise JournalError(f"{self.path} is not a tournament journal (its first line is not whole)")
                self.notes.append(f"the last line of {self.path} was incomplete (a crash while writing): dropped")
                fh.truncate(offset)
                fh.flush()
                os.fsync(fh.fileno())
                break
            if number > limit:
                raise JournalError(
                    f"{self.path} has more lines than twice the {len(self.schedule)} games of this tournament: "
                    "not its journal"
                )
            if number == 1:
                self._check_header(line)
            elif self._read_game(number, line):
                twice += 1
            offset += len(line)
        self._end = offset
        if twice:
            self.notes.append(f"{twice} game(s) found twice in {self.path}: each counted once")

    def _check_header(self, line: bytes) -> None:
        try:
            header = JournalHeader.model_validate_json(line)
        except ValidationError:
            raise JournalError(f"{self.path} is not a tournament journal") from None
        if header.format in OLD_FORMATS:
            raise JournalError(
                f"{self.path} is a journal of an older blokus ({header.format}: without the moves its games are "
                "checked by): give a new journal"
            )
        if header.format != JOURNAL_FORMAT:
            raise JournalError(f"{self.path} is not a tournament journal (format {header.format!r})")
        theirs = header.settings
        for name in sorted(set(theirs) | set(self.settings)):
            if theirs.get(name) != self.settings.get(name):
                raise JournalError(
                    f"{self.path} belongs to another tournament: {name} was {theirs.get(name)!r}, "
                    f"now {self.settings.get(name)!r}"
                )

    def _read_game(self, number: int, line: bytes) -> bool:
        """One game's line; True if its key was there already (not counted again)."""
        try:
            entry = JournalEntry.model_validate_json(line)
        except ValidationError as exc:
            raise JournalError(f"{self.path} line {number} cannot be read: {first_error(exc)}") from None
        key = GameKey(**entry.key.model_dump())
        spec = self.schedule.get(key)
        if spec is None:
            raise JournalError(f"{self.path} line {number}: {describe_key(key)} is no game of this tournament")
        if key in self.games:
            return True
        self.games[key] = judged(spec, entry.game.game())
        return False

    def _append(self, entry: dict[str, Any]) -> None:
        assert self._fh is not None, "the journal is open"
        line = json.dumps(entry, separators=(",", ":"), allow_nan=False).encode() + b"\n"
        self._cut_intruders()
        self._fh.write(line)
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._end += len(line)

    def _cut_intruders(self) -> None:
        """Only the tournament writes its journal: what another process appended since our last line goes."""
        assert self._fh is not None
        self._fh.flush()
        size = os.fstat(self._fh.fileno()).st_size
        if size > self._end:
            self.intruded += size - self._end
            self._fh.truncate(self._end)

    def record(self, key: GameKey, game: ArenaGame) -> None:
        """One finished game, on disk before this returns (a key already there is not written again)."""
        if key in self.games:
            return
        self.games[key] = game
        entry = {"key": key.as_dict(), "game": report_of(game)}
        JournalEntry.model_validate(entry)  # it reads back (our own report: a failure is a bug)
        self._append(entry)

    def close(self) -> None:
        if self._fh is not None:
            self._cut_intruders()
            self._fh.close()
            self._fh = None


def describe_key(key: GameKey) -> str:
    """A game of the tournament in a few words: ``a vs b round 2 seat 1``."""
    return f"{key.a} vs {key.b} round {key.round} seat {key.seat}"


def _private(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_CLOEXEC, 0o600)


# --- ratings ------------------------------------------------------------------------------------------------


@dataclass
class Rating:
    player: str
    elo: float | None  # None: not comparable with the anchor (no scored game connects them)
    ci95: float | None  # half width of the 95 % interval (0 for the anchor)
    games: int
    points: float
    wins: int
    draws: int
    losses: int
    void: int

    @property
    def score(self) -> float | None:
        return self.points / self.games if self.games else None


@dataclass
class Ratings:
    ratings: list[Rating]  # best first
    anchor: str
    players: list[str]  # command-line order (the matrix's rows and columns)
    points: list[list[float]]  # points[i][j]: what players[i] scored against players[j]
    games: list[list[int]]  # scored games between them
    virtual_draws: bool = False  # a player won or lost everything: one virtual draw per pairing made it finite
    note: str = ""  # why, in one line

    def as_dict(self) -> dict[str, Any]:
        return {
            "anchor": self.anchor,
            "method": "maximum likelihood, logistic Elo, draws half a point"
            + (", one virtual draw per pairing" if self.virtual_draws else ""),
            "note": self.note,
            "ratings": [{**asdict(r), "score": r.score} for r in self.ratings],
            "matrix": {"players": self.players, "points": self.points, "games": self.games},
        }


def rate(players: list[str], games: Iterable[tuple[GameKey, ArenaGame]], anchor: str) -> Ratings:
    """Maximum-likelihood Elo (Bradley-Terry on the logistic scale, a draw half a win) of the scored games,
    anchored at ``anchor`` (Elo 0), with 95 % intervals from the observed information. Void games are not
    rated. When the maximum does not exist (some group of players won, or lost, every scored game against the
    rest) every pairing that was played counts one virtual draw (as BayesElo's default prior does), said in
    ``note``. Players with no scored game connecting them to the anchor get no rating."""
    index = {p: i for i, p in enumerate(players)}
    n = len(players)
    points = [[0.0] * n for _ in range(n)]
    played = [[0] * n for _ in range(n)]
    tally = {p: [0, 0, 0, 0] for p in players}  # W D L void
    for key, game in games:
        i, j = index[key.a], index[key.b]
        if game.void:
            tally[key.a][3] += 1
            tally[key.b][3] += 1
            continue
        played[i][j] += 1
        played[j][i] += 1
        points[i][j] += game.score
        points[j][i] += 1.0 - game.score
        kind = {1.0: 0, 0.5: 1, 0.0: 2}[game.score]
        tally[key.a][kind] += 1
        tally[key.b][2 - kind] += 1
    component = connected(index[anchor], played)
    members = sorted(component)
    s = np.array([[points[i][j] for j in members] for i in members], dtype=float)
    m = np.array([[played[i][j] for j in members] for i in members], dtype=float)
    virtual = not strongly_connected(s)
    note = ""
    if virtual:
        beaten = [players[members[k]] for k in range(len(members)) if s[k].sum() == 0]
        unbeaten = [players[members[k]] for k in range(len(members)) if s[:, k].sum() == 0 and m[k].sum()]
        who = ", ".join([f"{p} won every game" for p in unbeaten] + [f"{p} lost every game" for p in beaten])
        note = (
            f"no finite maximum-likelihood rating ({who or 'one group of players won every game against the rest'}): "
            "every pairing played counts one virtual draw"
        )
        s = s + 0.5 * (m > 0)
        m = m + 1.0 * (m > 0)
    elo, half = elo_fit(s, m, members.index(index[anchor]))
    rated = {members[k]: (elo[k], half[k]) for k in range(len(members))}
    out = []
    for i, p in enumerate(players):
        wins, draws, losses, void = tally[p]
        e, h = rated.get(i, (None, None))
        out.append(Rating(p, e, h, wins + draws + losses, wins + 0.5 * draws, wins, draws, losses, void))
    out.sort(key=lambda r: (r.elo is None, -(r.elo or 0.0), players.index(r.player)))
    return Ratings(out, anchor, list(players), points, played, virtual, note)


def format_ratings(r: Ratings) -> str:
    """The ratings table, then the score matrix (row's points against column / scored games); the players'
    names shortened to fit (``ai.arena.match.fitted_table``), the matrix's columns numbered as its rows."""
    out = fitted_table(r.players, lambda names: _ratings_rows(r, dict(zip(r.players, names, strict=True))))
    if r.note:
        out += "\n" + r.note
    unrated = [x.player for x in r.ratings if x.elo is None]
    if unrated:
        out += f"\nnot rated (no scored game connects them with {r.anchor}): {', '.join(unrated)}"
    matrix = fitted_table(r.players, lambda names: _matrix_rows(r, names))
    return out + "\n\nscore matrix (the row's points against column N / scored games):\n" + matrix


def _ratings_rows(r: Ratings, short: dict[str, str]) -> str:
    rows: list[tuple[str, ...]] = [("rank", "player", "Elo", "95% CI", "games", "score %", "W", "D", "L", "void")]
    for rank, x in enumerate(r.ratings, start=1):
        rows.append(
            (
                str(rank) if x.elo is not None else "-",
                short[x.player] + (" (anchor)" if x.player == r.anchor else ""),
                f"{x.elo:+.0f}" if x.elo is not None else "-",
                ("0" if x.player == r.anchor else f"±{x.ci95:.0f}") if x.ci95 is not None else "-",
                str(x.games),
                f"{100 * x.score:.1f}" if x.score is not None else "-",
                str(x.wins),
                str(x.draws),
                str(x.losses),
                str(x.void),
            )
        )
    return _table(rows, left=2)


def _matrix_rows(r: Ratings, names: list[str]) -> str:
    matrix: list[tuple[str, ...]] = [("", *(str(j) for j in range(1, len(names) + 1)))]
    for i, name in enumerate(names):
        cells = []
        for j in range(len(names)):
            if i == j:
                cells.append("-")
            elif r.games[i][j]:
                cells.append(f"{_half(r.points[i][j])}/{r.games[i][j]}")
            else:
                cells.append("")
        matrix.append((f"{i + 1} {name}", *cells))
    return _table(matrix)


# --- game pairs ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairingPairs:
    """The game pairs of one pairing (``a`` against ``b``; for a gauntlet also its player against all the
    others together, ``b`` = ``ALL``): the pentanomial counts of ``a``'s pair scores (``ai.arena.sprt``)."""

    a: str
    b: str
    pentanomial: Pentanomial
    unpaired: int  # games with a result whose pair's other game is void or not played yet

    def as_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, **self.pentanomial.as_dict(), "unpaired": self.unpaired}


ALL = "(all)"  # the gauntlet's player against every other player together


def pairing_pairs(
    pairs: list[tuple[str, str]], games: Iterable[tuple[GameKey, ArenaGame]], gauntlet: str | None = None
) -> list[PairingPairs]:
    """Per pairing (in ``pairs``' order) the pairs whose two games (a round from both seats) have a result;
    for a gauntlet a last line with all of its player's pairs."""
    rounds: dict[tuple[str, str, int], dict[int, ArenaGame]] = {}
    for key, game in games:
        if not game.void:
            rounds.setdefault((key.a, key.b, key.round), {})[key.seat] = game
    out = []
    for a, b in pairs:
        mine = [seats for (x, y, _), seats in sorted(rounds.items()) if (x, y) == (a, b)]
        whole = [(seats[0].score, seats[1].score) for seats in mine if len(seats) == 2]
        out.append(PairingPairs(a, b, Pentanomial.of_pairs(whole), sum(len(s) for s in mine) - 2 * len(whole)))
    if gauntlet is not None and len(out) > 1:
        total = sum((p.pentanomial for p in out), Pentanomial())
        out.append(PairingPairs(gauntlet, ALL, total, sum(p.unpaired for p in out)))
    return out


def format_pairings(stats: list[PairingPairs]) -> str:
    """A table of the pairings' game pairs: counts, Elo and normalised Elo of the first player over the second,
    each with its 95 % interval (names shortened to fit: ``ai.arena.match.fitted_table``)."""
    names = list(dict.fromkeys(name for p in stats for name in (p.a, p.b) if name != ALL))
    table = fitted_table(names, lambda short: _pairing_rows(stats, dict(zip(names, short, strict=True))))
    unpaired = sum(p.unpaired for p in stats if p.b != ALL)
    return (
        "game pairs (each opening from both seats): the player's pairs that scored 0/¼/½/¾/1, Elo, nElo:\n"
        + table
        + (
            f"\n{unpaired} game(s) without the other game of their pair with a result: not in the pairs"
            if unpaired
            else ""
        )
    )


def _pairing_rows(stats: list[PairingPairs], short: dict[str, str]) -> str:
    short = short | {ALL: ALL}
    rows: list[tuple[str, ...]] = [("player", "against", "pairs", "0/¼/½/¾/1", "Elo", "95% CI", "nElo")]
    for p in stats:
        pent = p.pentanomial
        elo, lo, hi = pent.elo()
        rows.append(
            (
                short[p.a],
                short[p.b],
                str(pent.pairs),
                pent.cell(),
                signed(elo) if pent.pairs else "-",
                f"{signed(lo)}..{signed(hi)}" if pent.pairs else "-",
                plus_minus(pent.nelo()),
            )
        )
    return _table(rows, left=2)


def _half(x: float) -> str:
    return f"{x:.0f}" if x == int(x) else f"{x:.1f}"


def _table(rows: list[tuple[str, ...]], left: int = 1) -> str:
    """Columns aligned, the first ``left`` to the left, the others to the right; a rule under the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(v.ljust(w) if i < left else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths, strict=True)))
        for row in rows
    ]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(line.rstrip() for line in lines)


class TournamentProgress:
    """A plain-text progress bar on stderr: games of the whole tournament (those of the journal included)."""

    def __init__(self, total: int, before: int, stream: IO[str] | None = None) -> None:
        self.total = total
        self.before = before
        self.stream = stream or sys.stderr
        self.start = time.monotonic()

    def __call__(self, results: list[ArenaGame]) -> None:
        now = len(results)
        done = self.before + now
        void = sum(bool(r.void) for r in results)
        filled = 30 * done // max(1, self.total)
        elapsed = time.monotonic() - self.start
        left = elapsed / now * (self.total - done) if now else 0.0
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{self.total} games"
            + (f" ({self.before} from the journal)" if self.before else "")
            + (f"  {void} void" if void else "")
            + f"  {elapsed:.0f}s elapsed, ~{left:.0f}s left "
        )
        if done == self.total:
            self.stream.write("\n")
        self.stream.flush()
