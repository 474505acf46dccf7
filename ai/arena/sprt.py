"""The statistics of game pairs, and the sequential probability ratio test over them: "is A stronger than B by
ELO1 rather than ELO0?".

The arena plays each opening twice, once from each seat; a *pair* scores 0, 0.25, 0.5, 0.75 or 1 (the mean
of its two games for A, draws half). The five counts form the pentanomial model that chess engine testers
(fishtest, OpenBench, fastchess) use: it takes the opening's bias out of the variance, so fewer games decide.
:class:`Pentanomial` holds the counts and what they give (the one place of these figures, for the arena's
table, its SPRT and the tournament's pairings):

- the score ``mu`` (the mean pair score) and the variance ``var`` of the pair scores, per pair;
- Elo: the logistic Elo of ``mu``, with the 95 % interval of ``mu +- 1.96 * sqrt(var / pairs)``;
- normalised Elo (fishtest's nElo): ``(mu - 0.5) / sqrt(2 * var) * 800 / ln(10)``, the score's distance from
  an even match in standard deviations of one game (a pair's variance is half a game's: ``sqrt(2 * var)``),
  scaled so that a small logistic Elo difference between players who never draw is about as many nElo; its
  95 % interval is that of ``mu`` mapped the same (linear) way. It does not depend on the draw rate: an Elo
  difference needs fewer games to show where most games are draws, an nElo difference the same number.

The SPRT is pentanomial: after each pair the log-likelihood ratio of H1 (A is ELO1 stronger, logistic Elo)
against H0 (A is ELO0 stronger) is the normal approximation of the generalised SPRT (the likelihood of each
hypothesis at its maximum: pair scores of mean ``s0`` or ``s1``, the expected scores of the bounds, and the
observed variance):

    LLR = pairs * ((mu - s0) ** 2 - (mu - s1) ** 2) / (2 * var)
        = pairs * (s1 - s0) * (2 * mu - s0 - s1) / (2 * var)

with ``mu`` and ``var`` of the pairs (and half a pseudo-pair of each result: ``PSEUDO_PAIRS``). The test
stops when the LLR leaves ``[lower, upper]``: ``upper`` accepts H1, ``lower`` accepts H0 (Wald's bounds from
the error rates alpha and beta).

Here too the rest of a series' statistics: the SPRT of a match fed game by game (:class:`PairedSprt`), the
Wilson interval of a score (the arena's table) and the maximum-likelihood Elo fit of the tournament's ratings
(:func:`elo_fit`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from blokus.ai.arena.game import ArenaGame

PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
# The first pairs alone would give no variance (all alike) and an LLR that leaves the bounds at once: the
# ratio counts this many pseudo-pairs of each result besides the real ones (a Jeffreys prior). Measured over
# 400 simulated tests each at Elo 0 and 60 with [0, 60]: 3.8 % and 5.8 % wrong verdicts (alpha = beta = 5 %),
# where 0.001 pseudo-pairs gave 23 % and 65 %.
PSEUDO_PAIRS = 0.5


class Verdict(Enum):
    CONTINUE = "continue"
    H0 = "H0"  # A is not ELO1 stronger: accepted at the lower bound
    H1 = "H1"  # A is ELO1 stronger: accepted at the upper bound


def expected_score(elo: float) -> float:
    """The expected score of a side ``elo`` points stronger (logistic model); any finite ``elo``."""
    exponent = -elo / 400.0
    if exponent > 300.0:  # 10 ** 309 overflows a float: the score is 0 to double precision long before
        return 0.0
    return 1.0 / (1.0 + 10.0**exponent)


def elo_of(score: float) -> float:
    """The Elo difference that the expected score ``score`` stands for (infinite at 0 and 1)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0  # + 0.0: never -0.0


NELO_PER_SIGMA = 800.0 / math.log(10.0)  # nElo of a score one standard deviation (of a game) above 1/2
Z95 = 1.959963984540054  # the 97.5 % quantile of the standard normal distribution


def pentanomial_index(score_first: float, score_second: float) -> int:
    """Which of the five pair results (0 .. 4: the pair scored 0, 1/4, 1/2, 3/4, 1) two games' scores give."""
    return round((score_first + score_second) * 2)


@dataclass(frozen=True)
class Pentanomial:
    """The counts of game pairs that scored 0, 1/4, 1/2, 3/4 and 1 for A, and the figures they give (module
    docstring): Elo and normalised Elo, each with its 95 % interval."""

    counts: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)

    @classmethod
    def of_pairs(cls, pairs: Iterable[tuple[float, float]]) -> Pentanomial:
        """The counts of pairs given as A's scores (1 win, 0.5 draw, 0 loss) in their two games."""
        counts = [0] * 5
        for first, second in pairs:
            counts[pentanomial_index(first, second)] += 1
        return cls((counts[0], counts[1], counts[2], counts[3], counts[4]))

    def __add__(self, other: Pentanomial) -> Pentanomial:
        """The counts of both (e.g. a gauntlet's player over all its pairings)."""
        a, b = self.counts, other.counts
        return Pentanomial((a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4]))

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def moments(self, prior: float = 0.0) -> tuple[float, float]:
        """The mean and the variance of the pair scores, with ``prior`` pseudo-pairs of each result added."""
        weights = [c + prior for c in self.counts]
        total = sum(weights)
        if total == 0:
            return 0.5, 0.0
        mean = sum(w * s for w, s in zip(weights, PAIR_SCORES, strict=True)) / total
        variance = sum(w * (s - mean) ** 2 for w, s in zip(weights, PAIR_SCORES, strict=True)) / total
        return mean, variance

    def _score_interval(self) -> tuple[float, float, float]:
        mean, variance = self.moments()
        half = Z95 * math.sqrt(variance / self.pairs)
        return mean, mean - half, mean + half

    def elo(self) -> tuple[float, float, float]:
        """A's logistic Elo over B with its 95 % interval (infinite where every pair was won or lost); the
        interval is unknown, -inf .. +inf, while the pairs do not vary (one pair, or all alike)."""
        if self.pairs == 0:
            return 0.0, -math.inf, math.inf
        mean, lo, hi = self._score_interval()
        if lo == hi:
            return elo_of(mean), -math.inf, math.inf
        return elo_of(mean), elo_of(lo), elo_of(hi)

    def nelo(self) -> tuple[float, float, float] | None:
        """A's normalised Elo over B with its 95 % interval; None while the pairs do not vary (no pair, or all
        alike: no standard deviation to measure by)."""
        mean, variance = self.moments()
        if self.pairs == 0 or variance <= 0.0:
            return None
        scale = NELO_PER_SIGMA / math.sqrt(2.0 * variance)
        mean, lo, hi = self._score_interval()
        return (mean - 0.5) * scale, (lo - 0.5) * scale, (hi - 0.5) * scale

    def cell(self) -> str:
        """The counts as one table cell: ``0-1-2-1-2`` (pairs scoring 0, 1/4, 1/2, 3/4, 1)."""
        return "-".join(map(str, self.counts))

    def describe(self) -> str:
        """``6 pairs 0/¼/½/¾/1: 1-0-2-1-2; Elo +42 (95 % -10 .. +98); nElo +51 (95 % -12 .. +114)``."""
        elo, lo, hi = self.elo()
        return (
            f"{self.pairs} pairs 0/¼/½/¾/1: {self.cell()}; Elo {signed(elo)} (95 % {signed(lo)} .. {signed(hi)}); "
            f"nElo {nelo_text(self.nelo())}"
        )

    def as_dict(self) -> dict:
        """For JSON: the counts, Elo and nElo with their intervals (null where infinite or undefined)."""
        elo, lo, hi = self.elo()
        nelo = self.nelo()
        return {
            "pairs": self.pairs,
            "pentanomial": list(self.counts),
            "elo": finite(elo),
            "elo_ci95": [finite(lo), finite(hi)],
            "nelo": nelo[0] if nelo is not None else None,
            "nelo_ci95": [nelo[1], nelo[2]] if nelo is not None else [None, None],
        }


def nelo_text(nelo: tuple[float, float, float] | None) -> str:
    """``+51 (95 % -12 .. +114)``, or ``- (the pairs do not vary)``."""
    if nelo is None:
        return "- (the pairs do not vary)"
    return f"{signed(nelo[0])} (95 % {signed(nelo[1])} .. {signed(nelo[2])})"


def plus_minus(figures: tuple[float, float, float] | None) -> str:
    """``+51 ±63`` (the half width of the interval; the larger side where it is not symmetric), ``-`` if None."""
    if figures is None:
        return "-"
    value, lo, hi = figures
    if not math.isfinite(value):
        return signed(value)
    half = max(value - lo, hi - value)
    return f"{signed(value)} ±{half:.0f}" if math.isfinite(half) else f"{signed(value)} ±inf"


def finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class SprtSpec:
    """The hypotheses (Elo of A over B) and the error rates of the test."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not (math.isfinite(self.elo0) and math.isfinite(self.elo1)):
            raise ValueError(f"SPRT needs finite Elo bounds, not {self.elo0:g},{self.elo1:g}")
        if not self.elo0 < self.elo1:
            raise ValueError(f"SPRT needs ELO0 < ELO1, not {self.elo0:g},{self.elo1:g}")
        if not (0.0 < self.alpha < 0.5 and 0.0 < self.beta < 0.5):
            raise ValueError("SPRT error rates must lie between 0 and 0.5")

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1.0 - self.beta) / self.alpha)

    @classmethod
    def parse(cls, text: str) -> SprtSpec:
        """``ELO0,ELO1`` as on the command line (``--sprt 0,10``)."""
        parts = text.split(",")
        try:
            if len(parts) != 2:
                raise ValueError
            elo0, elo1 = (float(p) for p in parts)
        except ValueError:
            raise ValueError(f"--sprt {text!r}: write ELO0,ELO1, e.g. --sprt 0,10") from None
        return cls(elo0, elo1)


@dataclass(frozen=True)
class SprtState:
    """The pentanomial counts so far (pairs scoring 0, 1/4, 1/2, 3/4, 1 for A) and what they say."""

    spec: SprtSpec
    counts: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)

    def add_pair(self, score_first: float, score_second: float) -> SprtState:
        """The state after one more pair; scores are A's (1 win, 0.5 draw, 0 loss) in its two games."""
        counts = list(self.counts)
        counts[pentanomial_index(score_first, score_second)] += 1
        return SprtState(self.spec, (counts[0], counts[1], counts[2], counts[3], counts[4]))

    @property
    def pentanomial(self) -> Pentanomial:
        return Pentanomial(self.counts)

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    @property
    def llr(self) -> float:
        """The pentanomial LLR (module docstring: the normal approximation of the generalised SPRT)."""
        if self.pairs == 0:
            return 0.0
        mean, variance = self.pentanomial.moments(prior=PSEUDO_PAIRS)
        s0, s1 = expected_score(self.spec.elo0), expected_score(self.spec.elo1)
        return self.pairs * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * variance)

    @property
    def verdict(self) -> Verdict:
        llr = self.llr
        if llr >= self.spec.upper:
            return Verdict.H1
        if llr <= self.spec.lower:
            return Verdict.H0
        return Verdict.CONTINUE

    def elo(self) -> tuple[float, float, float]:
        """A's Elo over B with its 95 % interval (from the pair scores' mean and standard error: the games alone)."""
        return self.pentanomial.elo()

    def nelo(self) -> tuple[float, float, float] | None:
        """A's normalised Elo over B with its 95 % interval (``Pentanomial.nelo``)."""
        return self.pentanomial.nelo()

    def as_dict(self) -> dict:
        """For JSON: the test, then the pairs' figures (``Pentanomial.as_dict``: null where infinite)."""
        return {
            "elo0": self.spec.elo0,
            "elo1": self.spec.elo1,
            "alpha": self.spec.alpha,
            "beta": self.spec.beta,
            "llr": self.llr,
            "llr_model": "pentanomial, normal approximation of the GSPRT",
            "lower": self.spec.lower,
            "upper": self.spec.upper,
            "verdict": self.verdict.value,
            **self.pentanomial.as_dict(),
        }

    def describe(self) -> str:
        """Two lines: the test (LLR, bounds, verdict), then the pairs' figures (``Pentanomial.describe``)."""
        words = {
            Verdict.H1: f"H1 accepted: A is stronger by {self.spec.elo1:g} Elo rather than {self.spec.elo0:g}",
            Verdict.H0: f"H0 accepted: A is not stronger by {self.spec.elo1:g} Elo (rather {self.spec.elo0:g})",
            Verdict.CONTINUE: "undecided",
        }[self.verdict]
        return (
            f"SPRT [{self.spec.elo0:g}, {self.spec.elo1:g}] after {self.pairs} pairs: pentanomial LLR "
            f"{self.llr:.2f} (bounds {self.spec.lower:.2f}, {self.spec.upper:.2f}): {words}\n"
            f"  {self.pentanomial.describe()}"
        )


def signed(elo: float) -> str:
    if math.isinf(elo):
        return "+inf" if elo > 0 else "-inf"
    return f"{round(elo):+d}"  # never "-0"


# --- the arena's figures: its SPRT game by game, the Wilson interval, the tournament's Elo fit ---------------


class PairedSprt:
    """The SPRT of a match (``ai.arena.sprt``), fed game by game (``run_match``'s ``enough``): a pair (games 2k and
    2k+1: one opening from both seats) counts once both games are done, in whatever order they finish; a
    pair with a void game is not counted (``void_pairs``). True once H0 or H1 is accepted.

    Every game of the table is accounted for (``games_line``): in the test (two per counted pair), in a pair
    with a void game, finished after the verdict (it was running then), or without the other game of its pair.
    """

    def __init__(self, spec: SprtSpec) -> None:
        self.state = SprtState(spec)
        self.void_pairs = 0
        self.decided = False
        self.after_verdict = 0  # games that finished after the verdict (running then): not in the test
        self._waiting: dict[int, ArenaGame] = {}  # the first finished game of each open pair

    def __call__(self, results: list[ArenaGame]) -> bool:
        game = results[-1]
        if self.decided:
            self.after_verdict += 1
            return True  # frozen at the verdict: a game that was running then does not change it
        other = self._waiting.pop(game.index // 2, None)
        if other is None:
            self._waiting[game.index // 2] = game
            return False
        first, second = sorted((game, other), key=lambda g: g.index)
        if first.void or second.void:
            self.void_pairs += 1
        else:
            self.state = self.state.add_pair(first.score, second.score)
        self.decided = self.state.verdict is not Verdict.CONTINUE
        return self.decided

    @property
    def games_in_test(self) -> int:
        """The games the test counted: both games of every counted pair."""
        return 2 * self.state.pairs

    @property
    def unpaired(self) -> int:
        """Games finished before the verdict (or the end) whose pair's other game did not."""
        return len(self._waiting)

    def pairs_left(self) -> float | None:
        """The pairs the test needs still, if the LLR keeps its mean step per pair so far (Wald's estimate);
        None before it has a trend."""
        pairs, llr = self.state.pairs, self.state.llr
        if self.decided:
            return 0.0
        if pairs < 2 or llr == 0.0:
            return None
        step = llr / pairs
        bound = self.state.spec.upper if step > 0 else self.state.spec.lower
        return (bound - llr) / step

    def games_line(self, games: int, cap: int) -> str:
        """One line that counts the table's ``games`` as the test did (``cap``: the most the match would play)."""
        rest = [
            (2 * self.void_pairs, "in pairs with a void game"),
            (self.after_verdict, "finished after the verdict (they were running)"),
            (self.unpaired, "without the other game of their pair"),
        ]
        why = "; ".join(f"{n} {text}" for n, text in rest if n)
        counted = f"{self.games_in_test} of the {games} games played ({self.state.pairs} pairs)"
        line = f"the SPRT counted {counted}" + (f"; not counted: {why}" if why else "")
        if self.decided:
            return f"{line}; decided: no game was started after the verdict (cap {cap})"
        return f"{line}; undecided"

    def as_dict(self) -> dict:
        """``SprtState.as_dict`` (an infinite Elo, all pairs won or lost, is null) and the count of the games: in
        the test, in void pairs, after the verdict, without their pair."""
        return {
            **self.state.as_dict(),
            "void_pairs": self.void_pairs,
            "games_in_test": self.games_in_test,
            "games_after_verdict": self.after_verdict,
            "games_unpaired": self.unpaired,
        }

    def describe(self) -> str:
        void = f"; {self.void_pairs} pair(s) with a void game not counted" if self.void_pairs else ""
        return self.state.describe() + void


def wilson(score: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson interval for a proportion ``score`` (0..1) from ``n`` games (draws count 1/2)."""
    if n == 0:
        return 0.0, 1.0
    denom = 1 + z * z / n
    centre = (score + z * z / (2 * n)) / denom
    half = z * math.sqrt(score * (1 - score) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


ELO_PER_NAT = 400.0 / math.log(10.0)  # logistic Elo: p = 1 / (1 + 10 ** (-d / 400))


def connected(start: int, played: list[list[int]]) -> set[int]:
    """The players reached from ``start`` along "played a game against"."""
    seen, todo = {start}, [start]
    while todo:
        i = todo.pop()
        for j, count in enumerate(played[i]):
            if count and j not in seen:
                seen.add(j)
                todo.append(j)
    return seen


def strongly_connected(scored: np.ndarray) -> bool:
    """Whether every player reaches every other along "scored a point against" (the condition for a finite
    maximum of the likelihood, Zermelo/Ford)."""
    n = len(scored)
    for graph in (scored > 0, (scored > 0).T):
        seen, todo = {0}, [0]
        while todo:
            i = todo.pop()
            for j in np.flatnonzero(graph[i]):
                if int(j) not in seen:
                    seen.add(int(j))
                    todo.append(int(j))
        if len(seen) < n:
            return False
    return True


def elo_fit(s: np.ndarray, m: np.ndarray, anchor: int) -> tuple[list[float], list[float]]:
    """Maximum-likelihood logistic Elo of players who scored ``s[i][j]`` in ``m[i][j]`` games against each other
    (the tournament's ratings: Bradley-Terry, a draw half a win): Newton's method on the (concave)
    log-likelihood, the anchor fixed at 0; Elo and 95 % half widths."""
    n = len(s)
    x = np.zeros(n)
    free = [k for k in range(n) if k != anchor]
    if not free:
        return [0.0], [0.0]

    def loglik(x: np.ndarray) -> float:
        d = x[:, None] - x[None, :]
        return float(np.sum(s * -np.logaddexp(0.0, -d)))

    for _ in range(200):
        p = 1.0 / (1.0 + np.exp(-(x[:, None] - x[None, :])))
        grad = (s - m * p).sum(axis=1)
        w = m * p * (1.0 - p)
        hess = w.copy()
        np.fill_diagonal(hess, -w.sum(axis=1) + np.diag(w))
        step = np.linalg.solve(hess[np.ix_(free, free)], grad[free])
        t, before = 1.0, loglik(x)
        while True:
            trial = x.copy()
            trial[free] -= t * step
            if loglik(trial) >= before - 1e-12 or t < 1e-6:
                break
            t /= 2
        x = trial
        if np.max(np.abs(t * step)) < 1e-10:
            break
    p = 1.0 / (1.0 + np.exp(-(x[:, None] - x[None, :])))
    w = m * p * (1.0 - p)
    info = -w
    np.fill_diagonal(info, w.sum(axis=1) - np.diag(w))
    cov = np.linalg.inv(info[np.ix_(free, free)])
    half = [0.0] * n
    for k, f in enumerate(free):
        half[f] = Z95 * math.sqrt(max(cov[k, k], 0.0)) * ELO_PER_NAT
    return [float(v) * ELO_PER_NAT for v in x], half
