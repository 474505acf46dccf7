"""The statistics of game pairs (ai/arena/sprt.py): the pentanomial counts, Elo and normalised Elo, and the SPRT
over them: Wald's bounds, the pentanomial LLR, and its error rates."""

from __future__ import annotations

import math
import random

import pytest

from blokus.ai.arena.sprt import Pentanomial, SprtSpec, SprtState, Verdict, elo_of, expected_score


def test_bounds_are_walds_for_five_percent_errors():
    spec = SprtSpec(0, 10)
    assert spec.lower == pytest.approx(-2.944, abs=1e-3)
    assert spec.upper == pytest.approx(2.944, abs=1e-3)


def test_elo_and_score_are_inverse():
    for elo in (-300, -35, 0, 10, 200):
        assert elo_of(expected_score(elo)) == pytest.approx(elo)
    assert expected_score(0) == 0.5


def test_llr_matches_the_normal_approximation_by_hand():
    state = SprtState(SprtSpec(0, 50))
    for first, second in [(1, 1), (1, 0), (1, 0.5), (0, 0), (1, 1), (1, 0)]:
        state = state.add_pair(first, second)
    assert state.counts == (1, 0, 2, 1, 2)
    # the six pairs and half a pseudo-pair of each of the five results
    scores = [0.0, 0.5, 0.5, 0.75, 1.0, 1.0]
    weights = [1.0] * 6 + [0.5] * 5
    values = scores + [0.0, 0.25, 0.5, 0.75, 1.0]
    mean = sum(w * v for w, v in zip(weights, values, strict=True)) / sum(weights)
    variance = sum(w * (v - mean) ** 2 for w, v in zip(weights, values, strict=True)) / sum(weights)
    s0, s1 = expected_score(0), expected_score(50)
    by_hand = 6 * (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance)
    assert state.llr == pytest.approx(by_hand, rel=1e-9)
    # the Elo estimate is the games' own: mean 0.625
    assert state.elo()[0] == pytest.approx(elo_of(sum(scores) / 6))


def test_a_side_that_wins_every_pair_is_accepted_quickly_and_a_losing_one_rejected():
    state = SprtState(SprtSpec(0, 20))
    while state.verdict is Verdict.CONTINUE:
        state = state.add_pair(1, 0.5 if state.pairs % 2 else 1)
        assert state.pairs < 50
    assert state.verdict is Verdict.H1
    state = SprtState(SprtSpec(0, 20))
    while state.verdict is Verdict.CONTINUE:
        state = state.add_pair(0, 0.5 if state.pairs % 2 else 0)
        assert state.pairs < 50
    assert state.verdict is Verdict.H0
    elo, lo, hi = state.elo()
    assert lo <= elo <= hi < 0


def _run(rng: random.Random, true_elo: float, spec: SprtSpec, cap: int = 3000) -> Verdict:
    """One test on games drawn from a side ``true_elo`` stronger (each game a win or loss)."""
    p = expected_score(true_elo)
    state = SprtState(spec)
    while state.verdict is Verdict.CONTINUE and state.pairs < cap:
        state = state.add_pair(float(rng.random() < p), float(rng.random() < p))
    return state.verdict


def test_error_rates_are_near_alpha_and_beta():
    rng = random.Random(7)
    spec = SprtSpec(0, 60)
    runs = 300
    false_h1 = sum(_run(rng, 0, spec) is Verdict.H1 for _ in range(runs)) / runs
    false_h0 = sum(_run(rng, 60, spec) is Verdict.H0 for _ in range(runs)) / runs
    # alpha = beta = 0.05 (300 tests each: a rate of 0.1 would be far outside their spread)
    assert false_h1 <= 0.1
    assert false_h0 <= 0.1


def test_bad_hypotheses_are_one_line_errors():
    with pytest.raises(ValueError, match="ELO0,ELO1"):
        SprtSpec.parse("10")
    with pytest.raises(ValueError, match="ELO0 < ELO1"):
        SprtSpec.parse("10,0")
    assert SprtSpec.parse("-5,5") == SprtSpec(-5, 5)


def test_the_report_names_the_verdict_and_the_interval():
    state = SprtState(SprtSpec(0, 10)).add_pair(1, 0).add_pair(1, 1)
    text = state.describe()
    assert "after 2 pairs" in text and "undecided" in text and "95 %" in text
    data = state.as_dict()
    assert data["pentanomial"] == [0, 0, 1, 0, 1] and data["verdict"] == "continue"
    assert not math.isnan(data["llr"])


def test_any_finite_bounds_give_a_finite_ratio_and_infinite_ones_are_refused():
    assert expected_score(-200_000) == 0.0 and expected_score(200_000) == 1.0
    state = SprtState(SprtSpec.parse("-200000,0")).add_pair(1, 0).add_pair(0.5, 0.5)
    assert math.isfinite(state.llr) and "SPRT [-200000, 0] after 2 pairs" in state.describe()
    for text in ("-inf,0", "0,inf", "nan,0"):
        with pytest.raises(ValueError, match="SPRT needs"):
            SprtSpec.parse(text)


def test_the_arena_takes_negative_bounds_as_written_and_keeps_its_table(capsys):
    from blokus.cli.arena import main as arena_main

    # the usual non-regression bounds, as a separate word (argparse took "-10,0" for an option) and with "="
    for option, bounds in ((["--sprt", "-10,0"], "[-10, 0]"), (["--sprt=-200000,0"], "[-200000, 0]")):
        assert arena_main(["random", "random", *option, "--games", "2", "--quiet", "--move-time", "200"]) == 0
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err and "mean pts" in captured.out  # the table
        assert f"SPRT {bounds} after 1 pairs" in captured.out


# --- pentanomial counts and normalised Elo (issue 65.3) ---------------------------------------------------------


def test_the_pairs_give_elo_and_normalised_elo_by_hand():
    pairs = Pentanomial.of_pairs([(1, 1), (1, 0), (1, 0.5), (0, 0), (1, 1), (0.5, 0.5)])
    assert pairs.counts == (1, 0, 2, 1, 2) and pairs.cell() == "1-0-2-1-2" and pairs.pairs == 6
    # pair scores 0, 1/2, 1/2, 3/4, 1, 1: mean 3.75 / 6 = 0.625; squared deviations 0.390625 + 3 * 0.015625
    # + 2 * 0.140625 = 0.71875, variance 0.71875 / 6 = 0.1197917
    assert pairs.moments() == pytest.approx((0.625, 0.71875 / 6))
    # Elo: -400 log10(1 / 0.625 - 1) = 400 log10(5 / 3) = 88.74
    assert pairs.elo()[0] == pytest.approx(88.7395, abs=1e-3)
    # nElo: 0.125 / sqrt(2 * 0.1197917) * 800 / ln 10 = 0.125 / 0.489472 * 347.4356 = 88.73; the interval:
    # 0.625 -+ 1.96 * sqrt(0.1197917 / 6) = 0.625 -+ 0.276941, i.e. -0.151941 and 0.401941 above 1/2
    nelo = pairs.nelo()
    assert nelo is not None
    assert nelo == pytest.approx((88.727, -107.850, 285.304), abs=1e-2)
    # an even split: mean 1/2, variance 1/16; 1/2 -+ 1.96 * sqrt(1/32) and 347.4356 / sqrt(1/8) = 982.69 a point
    even = Pentanomial((0, 1, 0, 1, 0)).nelo()
    assert even == pytest.approx((0.0, -340.48, 340.48), abs=1e-2)


def test_pairs_that_do_not_vary_have_no_normalised_elo_and_json_has_no_infinity():
    for counts in ((0, 0, 0, 0, 3), (0, 0, 2, 0, 0), (0, 0, 0, 0, 0)):
        assert Pentanomial(counts).nelo() is None
        assert Pentanomial(counts).elo()[1:] == (-math.inf, math.inf)  # no interval to tell either
    assert Pentanomial((0, 0, 2, 0, 0)).elo()[0] == 0.0 and Pentanomial((0, 0, 0, 1, 0)).elo()[0] > 0
    data = Pentanomial((0, 0, 0, 0, 3)).as_dict()
    assert data == {
        "pairs": 3,
        "pentanomial": [0, 0, 0, 0, 3],
        "elo": None,
        "elo_ci95": [None, None],
        "nelo": None,
        "nelo_ci95": [None, None],
    }
    assert "nElo - (the pairs do not vary)" in Pentanomial((0, 0, 0, 0, 3)).describe()


def test_the_sprt_report_gives_the_pairs_elo_and_normalised_elo():
    state = SprtState(SprtSpec(0, 50))
    for first, second in [(1, 1), (1, 0), (1, 0.5), (0, 0), (1, 1), (0.5, 0.5)]:
        state = state.add_pair(first, second)
    head, pairs = state.describe().splitlines()
    assert head.startswith("SPRT [0, 50] after 6 pairs: pentanomial LLR ")
    # the Elo interval: the logistic Elo of 0.625 -+ 0.276941, -400 log10(1 / 0.348059 - 1) = -109 and
    # -400 log10(1 / 0.901941 - 1) = +385
    assert pairs == "  6 pairs 0/¼/½/¾/1: 1-0-2-1-2; Elo +89 (95 % -109 .. +385); nElo +89 (95 % -108 .. +285)"
    data = state.as_dict()
    assert data["pentanomial"] == [1, 0, 2, 1, 2] and data["nelo"] == pytest.approx(88.727, abs=1e-2)
    assert data["nelo_ci95"] == pytest.approx([-107.850, 285.304], abs=1e-2)
    assert data["llr"] == state.llr and data["llr_model"].startswith("pentanomial")
