"""``blokus arena A B --games N [--move-time MS] [--seed S] [--jobs J] [--season 2027]``: AI against AI, or a
program of one's own (``cmd:COMMAND``) against our players, with a score table.

The match itself is ``ai.arena.match`` (pairs of openings with the seats swapped, the table); the games are played
in this process's workers when both players are in-process (``ai.arena.match.play_game``), or, when one is a program,
each on an embedded server judged as the contest judges (``net.external_arena.ExternalGames``): the player
names (``cli.players``) choose.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from blokus.ai.arena.match import (
    MatchStopped,
    PlayerFactory,
    Progress,
    cores_line,
    format_table,
    make_specs,
    run_match,
    summary,
    threads_per_game,
)
from blokus.ai.arena.sprt import PairedSprt, SprtSpec
from blokus.ai.players.registry import compile_ahead, search_threads_of
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
from blokus.net.external_arena import LOG_BUDGET_BYTES, ExternalGames, LogBudget, kept_logs_text, settle_logs

if TYPE_CHECKING:
    from blokus.net.cluster import DaskSite

SPRT_CAP = 400  # games at most of an --sprt run without --games


def main(argv: list[str] | None = None) -> int:
    parser = Parser("blokus arena", "AI-vs-AI games (one team each).")
    parser.add_argument(
        "a",
        help=f"player A: {accepted()}. gtp:PATH:LEVEL is an external GTP engine (e.g. Pentobi), "
        "mcts:KEY=VALUE,... the default with other settings (e.g. mcts:root_eval=0), cmd:COMMAND your own "
        "client, started per game as COMMAND -h 127.0.0.1 -p PORT -r CODE against an embedded server, "
        "py:PATH[:CLASS] your blokus.player.Player (docs/player-api.md), played as the contest plays it: "
        "blokus bot --player PATH --strict per game",
    )
    parser.add_argument("b", help="player B (the same choices)")
    parser.add_argument(
        "--games",
        type=int,
        default=None,
        help=f"number of games (even: seats swapped per opening; default 2, with --sprt its cap: default {SPRT_CAP})",
    )
    parser.add_argument(
        "--sprt",
        metavar="ELO0,ELO1",
        help="is A stronger than B by ELO1 rather than ELO0 Elo? Plays game pairs until a sequential "
        "probability ratio test (alpha = beta = 0.05) decides, or --games is reached",
    )
    parser.add_argument(
        "--move-time",
        type=milliseconds,
        default=1600,
        metavar="MS",
        help="think time per move in ms, or with a unit (1.6s) (default 1600)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1, help="games played in parallel processes")
    add_cores_per_player(parser)
    add_cluster(parser)
    parser.add_argument("--json", metavar="FILE", help="also write the summary and every game to FILE")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--save-replay", metavar="DIR", help="write every game as a replay file into DIR")
    add_season(
        parser,
        f"rules of the games: start pieces, first-move rule, turn limit (default {DEFAULT_SEASON.name})",
        DEFAULT_SEASON,
    )
    parser.add_argument(
        "--opening-turns",
        type=int,
        default=None,
        help="turns played at random by the arena before the players take over (default 0, "
        "4 with a gtp: player, which does not know the start piece)",
    )
    parser.add_argument(
        "--opening-for",
        choices=("both", "gtp"),
        default="both",
        help="whose moves the arena draws in the opening turns: both sides' (default: the two games of a pair "
        "start alike), or only the gtp: player's, the other side making its own first moves (its opening book)",
    )
    add_openings(parser)
    add_adjudication(parser)
    parser.add_argument(
        "--ponder",
        choices=("a", "b", "both"),
        help="let A, B or both think on the opponent's time (give each pondering player a core: "
        "--jobs at most half the cores)",
    )
    parser.add_argument(
        "--untimed",
        action="store_true",
        help="no time limit per move: each player's own budget decides (mcts:count=N, a gtp: "
        "level), to compare searches per simulation; --move-time is then only a safety cap",
    )
    parser.add_argument(
        "--logs",
        metavar="DIR",
        help="where cmd: programs write their output, per game and seat (default: the --save-replay "
        "DIR, else a temporary directory removed at the end)",
    )
    parser.add_argument(
        "--log-budget",
        type=int,
        default=LOG_BUDGET_BYTES // 2**20,
        metavar="MIB",
        help=f"all the programs' logs of the arena together, in MiB (default {LOG_BUDGET_BYTES // 2**20}; the "
        "oldest are removed first)",
    )
    parser.add_argument(
        "--join-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="a cmd: program that has not joined after this loses the game (default 30)",
    )
    args = parser.parse_args(argv)
    sprt: PairedSprt | None = None
    if args.sprt is not None:
        try:
            sprt = PairedSprt(SprtSpec.parse(args.sprt))
        except ValueError as exc:
            parser.error(str(exc))
    if args.games is None:
        args.games = SPRT_CAP if sprt is not None else 2
    if args.games < 1 or args.move_time < 1 or args.jobs < 1 or args.join_timeout <= 0 or args.log_budget < 1:
        parser.error("--games, --move-time, --jobs, --join-timeout and --log-budget must be positive")
    if args.cluster is not None and args.jobs != 1:
        parser.error("--jobs and --cluster: on a cluster each worker plays as many games at once as it has threads")
    if sprt is not None and args.games < 2:
        parser.error("--sprt plays game pairs: --games must be at least 2")
    args.cores = cores_of(parser, args)
    try:
        return _run(parser, args, sprt)
    except KeyboardInterrupt:  # before the first game (compiling, starting)
        print("\nblokus arena: stopped before the first game", file=sys.stderr)
        return 130


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace, sprt: PairedSprt | None) -> int:
    limit_ms = args.season.soft_timeout_ms
    openings = read_openings_option(parser, args.openings, args.season)
    args.season = args.season.name  # by name from here on: the games' specs, the table and --json carry it
    # every game would be lost on time (the arena keeps the server's limit)
    if args.move_time > limit_ms and not args.untimed:
        parser.error(f"--move-time must be at most {limit_ms} ms, the season's time limit per move")
    players: list[PlayerSpec] = []
    for name in (args.a, args.b):
        try:
            spec = parse_player(name, "AI")
            if spec.external:
                check_player(spec)  # a cmd: program that cannot start, a py: file that cannot be loaded
            else:
                spec.build(0)
        except ValueError as exc:
            parser.error(str(exc))
        players.append(spec)
    for spec in players:
        if not spec.external and args.cluster is None:
            compile_ahead(spec)  # the first start compiles the search: before the clock runs, not in a move
    gtp = any(spec.kind is PlayerKind.GTP for spec in players)
    opening = args.opening_turns if args.opening_turns is not None else 4 if gtp else 0
    if args.opening_for == "gtp" and not gtp:
        parser.error("--opening-for gtp needs a gtp: player")
    if args.save_replay:
        Path(args.save_replay).mkdir(parents=True, exist_ok=True)
    runner = None
    temporary = None  # a log folder of our own: removed at the end
    if any(spec.external for spec in players):  # programs play on an embedded server, one per game
        if opening:
            parser.error("--opening-turns cannot be used with a cmd: or py: player (the server starts every game)")
        log_dir = args.logs or args.save_replay
        if log_dir is None:
            log_dir = temporary = tempfile.mkdtemp(prefix="blokus-arena-logs-")
            kept = kept_logs_text((players[0].external, players[1].external))
            print(
                f"blokus arena: the programs' output goes to {log_dir} (at the end only the logs of games with "
                f"{kept} stay: --logs DIR keeps all)",
                file=sys.stderr,
            )
        else:
            Path(log_dir).mkdir(parents=True, exist_ok=True)
            print(f"blokus arena: the programs' output goes to {log_dir}", file=sys.stderr)
        budget = LogBudget(str(log_dir), args.log_budget * 2**20, args.jobs)
        runner = ExternalGames(players[0], players[1], str(log_dir), join_timeout=args.join_timeout, logs=budget)
    site = open_cluster(parser, args, players) if args.cluster is not None else None
    try:
        return _play(args, (players[0], players[1]), runner, opening, sprt, site, temporary is not None, openings)
    finally:
        if site is not None:
            site.close()
        if temporary is not None and not any(Path(temporary).iterdir()):  # nothing worth a look stayed
            shutil.rmtree(temporary, ignore_errors=True)


def threads_said(spec: PlayerSpec, share: int | None) -> str:
    """The threads a side thinks with (our search's under ``share``, a GTP engine's, a program's own)."""
    if spec.kind is PlayerKind.GTP:
        return "1 thread (GTP --threads 1)"
    if spec.external:
        return "a program: its own threads (our bot: one a core)"
    threads = search_threads_of(spec)
    if threads is None:
        return "1 thread"
    if share is not None and "threads" not in dict(spec.settings):
        threads = min(threads, share)
    return f"{threads} search thread{'s' if threads > 1 else ''}"


def side_cores_line(per_player: int, players: tuple[PlayerSpec, PlayerSpec], share: int | None, results: list) -> str:
    """``--cores-per-player``: the cores each side had of its own and the threads it thought with."""
    a, b = (f"{side} {spec.name}: {threads_said(spec, share)}" for side, spec in zip("AB", players, strict=True))
    return f"cores per player {per_player}, pinned ({cores_line(results) or 'no game played'}); {a}; {b}"


def _opening_sides(opening_for: str, players: tuple[PlayerSpec, PlayerSpec]) -> tuple[bool, bool]:
    """Whose moves the arena draws in the opening turns, A's and B's (``--opening-for``)."""
    if opening_for == "both":
        return True, True
    return players[0].kind is PlayerKind.GTP, players[1].kind is PlayerKind.GTP


def _play(
    args: argparse.Namespace,
    players: tuple[PlayerSpec, PlayerSpec],
    runner: ExternalGames | None,
    opening: int,
    sprt: PairedSprt | None,
    site: DaskSite | None,
    temporary_logs: bool = False,
    openings: Sequence[Opening] = (),
) -> int:
    ponder = (args.ponder in ("a", "both"), args.ponder in ("b", "both"))
    cores = os.cpu_count() or 1
    if args.ponder and 2 * args.jobs > cores:  # a pondering player and its opponent both think all the time
        print(
            f"blokus arena: note: with --ponder each game keeps two cores busy; --jobs {args.jobs} on {cores} "
            f"cores slows both players",
            file=sys.stderr,
        )
    specs = make_specs(
        args.games,
        args.seed,
        args.move_time / 1000,
        args.season,
        args.save_replay,
        opening,
        ponder,
        not args.untimed,
        openings,
        shuffle_openings=args.openings_order == "random",
        adjudicate=not args.no_adjudication,
        opening_sides=_opening_sides(args.opening_for, players),
    )
    progress = None if args.quiet else Progress(len(specs), sprt=sprt)
    stopped, why = False, ""
    cores = args.cores
    # games side by side share the cores; with cores of its own a side's search runs a thread on each
    share = None if site is not None else threads_per_game(args.jobs) if cores is None else args.cores_per_player
    try:
        if runner is not None:
            results = run_match(
                specs, None, None, args.jobs, progress, runner=runner, enough=sprt, site=site, cores=cores
            )
        else:
            results = run_match(
                specs,
                PlayerFactory(players[0], share),
                PlayerFactory(players[1], share),
                args.jobs,
                progress,
                enough=sprt,
                site=site,
                cores=cores,
            )
    except BrokenProcessPool:
        print("blokus arena: a game process died (crashed or killed); the match is incomplete", file=sys.stderr)
        return 1
    except MatchStopped as exc:
        results, stopped, why = exc.results, True, exc.reason
    if progress is not None and len(results) < len(specs):
        print(file=sys.stderr)  # after the progress bar's line (it ends itself only after the last game)
    kept = 0  # games whose logs stay in a temporary folder
    if runner is not None:  # before --json: it lists only log files that exist
        kept = settle_logs(results, runner.log_dir, (players[0].external, players[1].external), temporary_logs)
    s = summary(results, args.a, args.b)
    print(
        f"arena {args.a} vs {args.b}: {args.games} games"
        + (f" at most, SPRT {args.sprt}" if sprt is not None else "")
        + f", season {args.season}, {args.move_time} ms/move, "
        f"seed {args.seed}, "
        + (f"cluster {args.cluster}" if args.cluster else f"jobs {args.jobs}")
        + f", opening turns {opening}"
        + (" (the gtp: player's)" if args.opening_for == "gtp" else "")
        + (f", {len(openings)} openings of {args.openings} ({args.openings_order})" if openings else "")
        + (", no adjudication" if args.no_adjudication else "")
        + (f", pondering {args.ponder}" if args.ponder else "")
        + (", untimed" if args.untimed else "")
    )
    if cores is not None:
        print(side_cores_line(args.cores_per_player, players, share, results))
    print(format_table(s, pairs=sprt is None or sprt.state.counts != s.pentanomial))  # else the SPRT's say it
    adjudicated = [r for r in results if r.adjudicated]
    if adjudicated:
        print(
            f"{len(adjudicated)} of {len(results)} games adjudicated: ended once the winner could no longer change "
            f"(--no-adjudication plays them out)"
        )
    if sprt is not None:
        print(sprt.describe())
        print(sprt.games_line(len(results), args.games))
        if not sprt.decided and not stopped:
            print(f"undecided within the cap of {args.games} games (--games)")
    lost = site.accounting_line() if site is not None else ""
    if lost:
        print(lost)
    if stopped:
        print(f"stopped after {len(results)} of {args.games} games ({why})")
    if args.json:
        with open(args.json, "w") as fh:
            games = [{**asdict(r), "result": None} for r in results]  # the model result is not JSON
            summary_json = s.to_dict() | ({"sprt": sprt.as_dict()} if sprt is not None else {})
            if site is not None:
                summary_json["cluster"] = site.accounting()
            json.dump({"args": vars(args), "summary": summary_json, "games": games, "stopped": stopped}, fh, indent=1)
    if runner is not None and temporary_logs and kept:
        which = kept_logs_text((players[0].external, players[1].external))
        print(
            f"blokus arena: the logs of {kept} game(s) with {which} are kept in {runner.log_dir}",
            file=sys.stderr,
        )
    if stopped:
        return 130 if why == "Ctrl-C" else 1
    if results and all(r.void for r in results):
        print(f"blokus arena: no game had a result: {s.void_games[0]}", file=sys.stderr)
        return 1
    return 0
