"""``blokus tournament P1 P2 P3 … [--gauntlet P] [--games N] [--resume FILE] [--cluster ADDRESS]``: a round-robin
(or a gauntlet) over any players the arena takes, with a ratings table.

The tournament itself is ``ai.arena.tournament`` (pairings, the schedule, the journal, the ratings); its games are
the arena's (``ai.arena.match.run_jobs``: in-process players in game processes, programs on an embedded server per
game, ``net.external_arena``), or a cluster's (``--cluster``, ``net.cluster``). Every finished game is written
to the journal at once: after Ctrl-C or a crash the same command with ``--resume FILE`` plays only the missing
games.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from blokus.ai.arena.audit import report_of
from blokus.ai.arena.match import (
    ArenaGame,
    GameJob,
    GameSite,
    MatchStopped,
    PlayerFactory,
    cores_line,
    make_specs,
    run_jobs,
    threads_per_game,
)
from blokus.ai.arena.tournament import (
    GameKey,
    Journal,
    JournalError,
    TournamentProgress,
    describe_key,
    format_pairings,
    format_ratings,
    pairing_pairs,
    pairings,
    rate,
    schedule,
)
from blokus.ai.players.registry import compile_ahead
from blokus.cli.options import (
    Parser,
    add_adjudication,
    add_cluster,
    add_cores_per_player,
    add_openings,
    add_season,
    cores_of,
    milliseconds,
    open_cluster,
    read_openings_option,
)
from blokus.cli.players import PlayerKind, PlayerSpec, accepted, check_player, parse_player
from blokus.model.openings import Opening
from blokus.model.season import DEFAULT_SEASON
from blokus.net.external_arena import LOG_BUDGET_BYTES, ExternalGames, LogBudget


def openings_digest(openings: list[Opening], order: str) -> str:
    text = "\n".join(o.line() for o in openings)
    return f"{len(openings)} openings, {order}, sha256 {hashlib.sha256(text.encode()).hexdigest()[:16]}"


def main(argv: list[str] | None = None) -> int:
    parser = Parser(
        "blokus tournament",
        "A round-robin (or a gauntlet) of game pairs between any players the arena takes, with Elo ratings.",
    )
    parser.add_argument("players", nargs="+", metavar="PLAYER", help=f"the players: {accepted()} (blokus arena)")
    parser.add_argument("--gauntlet", metavar="P", help="P plays every other player, the others do not play each other")
    parser.add_argument(
        "--games", type=int, default=2, help="games per pairing (even: each opening from both seats; default 2)"
    )
    parser.add_argument(
        "--anchor", metavar="P", help="the player rated Elo 0 (default: the gauntlet's player, else the first)"
    )
    parser.add_argument(
        "--resume",
        metavar="FILE",
        help="the journal of finished games: plays only the games it lacks (a new file starts a new tournament; "
        "default: a new tournament-DATE-TIME.jsonl in the current folder)",
    )
    parser.add_argument(
        "--move-time", type=milliseconds, default=1600, metavar="MS", help="think time per move (default 1600)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1, help="games played in parallel processes")
    add_cores_per_player(parser)
    add_cluster(parser)
    parser.add_argument("--json", metavar="FILE", help="also write the ratings, the matrix and every game to FILE")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--save-replay", metavar="DIR", help="write every game as a replay file into DIR")
    add_season(parser, f"rules of the games (default {DEFAULT_SEASON.name})", DEFAULT_SEASON)
    add_openings(parser)
    add_adjudication(parser)
    parser.add_argument(
        "--opening-turns", type=int, default=None, help="turns played at random first (default 0, 4 with gtp:)"
    )
    parser.add_argument(
        "--untimed", action="store_true", help="no time limit per move (each player's own budget decides)"
    )
    parser.add_argument("--logs", metavar="DIR", help="where cmd: and py: programs write their output")
    parser.add_argument(
        "--log-budget",
        type=int,
        default=LOG_BUDGET_BYTES // 2**20,
        metavar="MIB",
        help=f"all the programs' logs together, in MiB (default {LOG_BUDGET_BYTES // 2**20})",
    )
    parser.add_argument(
        "--join-timeout", type=float, default=30.0, metavar="SECONDS", help="a program must join within this"
    )
    args = parser.parse_args(argv)
    _check_args(parser, args)
    try:
        return _run(parser, args)
    except KeyboardInterrupt:  # before the first game (compiling, starting, connecting)
        print("\nblokus tournament: stopped before the first game", file=sys.stderr)
        return 130


def _check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.gauntlet is not None and args.gauntlet not in args.players:
        args.players.insert(0, args.gauntlet)
    if len(set(args.players)) != len(args.players):
        parser.error("each player once: " + ", ".join(sorted({p for p in args.players if args.players.count(p) > 1})))
    if len(args.players) < 2:
        parser.error("a tournament needs at least two players")
    if args.games < 2 or args.games % 2:
        parser.error("--games (per pairing) must be even and at least 2: each opening is played from both seats")
    if args.move_time < 1 or args.jobs < 1 or args.join_timeout <= 0 or args.log_budget < 1:
        parser.error("--move-time, --jobs, --join-timeout and --log-budget must be positive")
    if args.anchor is None:
        args.anchor = args.gauntlet or args.players[0]
    elif args.anchor not in args.players:
        parser.error(f"--anchor {args.anchor!r} is none of the players")
    if args.cluster is not None and args.jobs != 1:
        parser.error("--jobs and --cluster: on a cluster each worker plays as many games at once as it has threads")
    args.cores = cores_of(parser, args)


def _check_players(parser: argparse.ArgumentParser, names: list[str]) -> list[PlayerSpec]:
    specs = []
    for name in names:
        try:
            spec = parse_player(name, "player")
            if spec.external:
                check_player(spec)
            else:
                spec.build(0)
        except ValueError as exc:
            parser.error(str(exc))
        specs.append(spec)
    return specs


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    limit_ms = args.season.soft_timeout_ms
    openings = read_openings_option(parser, args.openings, args.season)
    args.season = args.season.name
    if args.move_time > limit_ms and not args.untimed:
        parser.error(f"--move-time must be at most {limit_ms} ms, the season's time limit per move")
    specs = _check_players(parser, args.players)
    external = any(spec.external for spec in specs)
    gtp = any(spec.kind is PlayerKind.GTP for spec in specs)
    opening = args.opening_turns if args.opening_turns is not None else 4 if gtp else 0
    if external and opening:
        parser.error("--opening-turns cannot be used with a cmd: or py: player (the server starts every game)")
    settings = {
        "players": args.players,
        "gauntlet": args.gauntlet,
        "games_per_pairing": args.games,
        "seed": args.seed,
        "season": args.season,
        "move_time_ms": args.move_time,
        "opening_turns": opening,
        # the openings themselves (a digest), not the file's name: a resumed tournament plays the same games
        "openings": openings_digest(openings, args.openings_order) if openings else None,
        "adjudication": not args.no_adjudication,
        "untimed": args.untimed,
    }
    base = make_specs(
        args.games,
        args.seed,
        args.move_time / 1000,
        args.season,
        args.save_replay,
        opening,
        (False, False),
        not args.untimed,
        openings,
        shuffle_openings=args.openings_order == "random",
        adjudicate=not args.no_adjudication,
    )
    games = schedule(pairings(args.players, args.gauntlet), base)
    path = args.resume or time.strftime("tournament-%Y%m%d-%H%M%S.jsonl")
    try:
        journal = Journal(path, settings, {g.key: g.spec for g in games}).open()
    except (JournalError, OSError) as exc:
        parser.error(str(exc))
    for note in journal.notes:
        print(f"blokus tournament: {note}", file=sys.stderr)
    print(
        f"blokus tournament: journal {path} (after a stop the same command with --resume {path} goes on)",
        file=sys.stderr,
    )
    if args.save_replay:
        Path(args.save_replay).mkdir(parents=True, exist_ok=True)
    missing = [g for g in games if g.key not in journal.games]
    if args.cluster is None and not external:
        for spec in specs:
            compile_ahead(spec)  # before the clock runs, not in a move
    site = open_cluster(parser, args, specs) if args.cluster is not None else None
    temporary = None
    spec_of = dict(zip(args.players, specs, strict=True))
    try:
        runners: dict[tuple[str, str], ExternalGames] = {}
        if external:
            log_dir = args.logs or args.save_replay
            if log_dir is None:
                log_dir = temporary = tempfile.mkdtemp(prefix="blokus-tournament-logs-")
            Path(log_dir).mkdir(parents=True, exist_ok=True)
            print(f"blokus tournament: the programs' output goes to {log_dir}", file=sys.stderr)
            budget = LogBudget(str(log_dir), args.log_budget * 2**20, args.jobs)
            for a, b in pairings(args.players, args.gauntlet):
                runners[a, b] = ExternalGames(
                    spec_of[a], spec_of[b], str(log_dir), join_timeout=args.join_timeout, logs=budget
                )
        # games side by side share the cores; with cores of its own a side's search runs a thread on each
        share = None if site is not None else args.cores_per_player or threads_per_game(args.jobs)
        work = [
            GameJob(g.spec, runner=runners[g.key.a, g.key.b])
            if external
            else GameJob(g.spec, PlayerFactory(spec_of[g.key.a], share), PlayerFactory(spec_of[g.key.b], share))
            for g in missing
        ]
        return _play(args, journal, games, work, site, opening)
    finally:
        journal.close()
        if journal.intruded:
            print(
                f"blokus tournament: something else wrote {journal.intruded} bytes to the journal {path} while the "
                "tournament ran: cut off (only the tournament writes it)",
                file=sys.stderr,
            )
        if site is not None:
            site.close()
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)


def _play(
    args: argparse.Namespace,
    journal: Journal,
    games: list,
    work: list[GameJob],
    site: GameSite | None,
    opening: int,
) -> int:
    key_of: dict[int, GameKey] = {g.spec.index: g.key for g in games}
    before = len(games) - len(work)
    bar = None if args.quiet else TournamentProgress(len(games), before)

    def progress(results: list[ArenaGame]) -> None:
        journal.record(key_of[results[-1].index], results[-1])  # on disk before the next game is counted
        if bar is not None:
            bar(results)

    stopped, why = False, ""
    played: list[ArenaGame] = []
    if work:
        try:
            played = run_jobs(work, args.jobs, progress, site=site, cores=args.cores)
        except BrokenProcessPool:
            print(
                "blokus tournament: a game process died (crashed or killed); the finished games are in the journal",
                file=sys.stderr,
            )
            return 1
        except MatchStopped as exc:
            played, stopped, why = exc.results, True, exc.reason
            if bar is not None:
                print(file=sys.stderr)
    finished = [(g.key, journal.games[g.key]) for g in games if g.key in journal.games]
    ratings = rate(args.players, finished, args.anchor)
    pairs = pairing_pairs(pairings(args.players, args.gauntlet), finished, args.gauntlet)
    void = [(k, g) for k, g in finished if g.void]
    forfeits = [(k, g) for k, g in finished if g.forfeit and not g.void]
    kind = f"gauntlet of {args.gauntlet}" if args.gauntlet else "round-robin"
    print(
        f"tournament ({kind}) {' '.join(args.players)}: {len(games)} games ({args.games} per pairing), "
        f"season {args.season}, {args.move_time} ms/move, seed {args.seed}, "
        + (f"cluster {args.cluster}" if args.cluster else f"jobs {args.jobs}")
        + f", opening turns {opening}"
        + (f", openings of {args.openings} ({args.openings_order})" if args.openings else "")
        + (", no adjudication" if args.no_adjudication else "")
        + (", untimed" if args.untimed else "")
    )
    if args.cores is not None:
        print(f"cores per player {args.cores_per_player}, pinned ({cores_line(played) or 'no game played now'})")
    print(f"{len(finished)} of {len(games)} games played ({before} from the journal {journal.path}, {len(played)} now)")
    print(format_ratings(ratings))
    print()
    print(format_pairings(pairs))
    if void:
        print("void games (no result, not rated):\n  " + "\n  ".join(_line(k, g, g.void) for k, g in void))
    if forfeits:
        print("forfeits:\n  " + "\n  ".join(_line(k, g, g.forfeit) for k, g in forfeits))
    if stopped:
        left = len(games) - len(finished)
        print(f"stopped ({why}): {left} games left; the same command with --resume {journal.path} plays them")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {
                    "settings": journal.settings,
                    "journal": str(journal.path),
                    "cluster": args.cluster,
                    "games_total": len(games),
                    "games_finished": len(finished),
                    "games_now": len(played),
                    "stopped": stopped,
                    **ratings.as_dict(),
                    "pairings": [p.as_dict() for p in pairs],
                    "void_games": [_line(k, g, g.void) for k, g in void],
                    "games": [{"key": k.as_dict(), **report_of(g)} for k, g in finished],
                },
                fh,
                indent=1,
            )
    if stopped:
        return 130 if why == "Ctrl-C" else 1
    if finished and all(g.void for _, g in finished):
        print(f"blokus tournament: no game had a result: {finished[0][1].void}", file=sys.stderr)
        return 1
    return 0


def _line(key: GameKey, game: ArenaGame, why: str) -> str:
    worker = f" (worker {game.worker})" if game.worker else ""
    return f"{describe_key(key)}{worker}: {why}"
