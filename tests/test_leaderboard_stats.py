"""Leaderboard statistics: intervals with their stated coverage, Elo that finds the truth."""

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from agents.leaderboard.matches import pairings, seat_orders
from agents.leaderboard.stats import (
    ELO_PER_LOGIT,
    Game,
    fit_elo,
    games_from_seats,
    mean_interval,
    pairing_summaries,
    wilson_interval,
)


def test_wilson_interval_known_values():
    # Wilson (1927) score interval at 95%; values as in Newcombe (1998), Table I.
    assert wilson_interval(3, 10) == pytest.approx((0.1078, 0.6032), abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)


def test_mean_interval_is_the_student_t_interval():
    values = [1.0, 2.0, 3.0, 4.0]
    mean, low, high = mean_interval(values)
    half_width = scipy_stats.t.ppf(0.975, 3) * np.std(values, ddof=1) / 2
    assert (mean, low, high) == pytest.approx((2.5, 2.5 - half_width, 2.5 + half_width))


def _exact_coverage(games_per_run: int, win_probability: float) -> tuple[float, float]:
    """Coverage of the win-rate and mean-return intervals, summed over every win count."""
    win_rate = mean_return = 0.0
    for wins in range(games_per_run + 1):
        probability = scipy_stats.binom.pmf(wins, games_per_run, win_probability)
        low, high = wilson_interval(wins, games_per_run)
        win_rate += probability * (low <= win_probability <= high)
        _, low, high = mean_interval([1.0] * wins + [-1.0] * (games_per_run - wins))
        mean_return += probability * (low <= 2 * win_probability - 1 <= high)
    return win_rate, mean_return


def test_intervals_cover_the_truth_at_the_stated_rate_on_a_biased_coin_game():
    # "Biased coin": A wins (+1) with probability 0.7, else loses (-1); each run of 50
    # games goes through the same summaries the leaderboard prints.
    win_probability, games_per_run, runs = 0.7, 50, 2000
    covered_win_rate = covered_mean = 0
    for seed in range(runs):
        outcomes = np.random.default_rng(seed).random(games_per_run) < win_probability
        games = [
            Game("a", "b", 1.0 if won else -1.0, -1.0 if won else 1.0, unit)
            for unit, won in enumerate(outcomes)
        ]
        summary = pairing_summaries(games)[("a", "b")]
        _, low, high = summary.win_rate
        covered_win_rate += low <= win_probability <= high
        covered_mean += (
            summary.mean_return_low <= 2 * win_probability - 1 <= summary.mean_return_high
        )
    exact_win_rate, exact_mean = _exact_coverage(games_per_run, win_probability)
    simulation_error = math.sqrt(0.95 * 0.05 / runs)
    for simulated, exact in (
        (covered_win_rate / runs, exact_win_rate),
        (covered_mean / runs, exact_mean),
    ):
        assert abs(simulated - 0.95) < 0.025, simulated
        assert abs(simulated - exact) < 4 * simulation_error, (simulated, exact)


def test_duplicate_units_pool_mirrored_games_before_the_t_interval():
    # Mirrored games share a unit: +3 and -1 average to +1 in every unit, so the mean is
    # known exactly and the interval has zero width; as independent games it would not.
    games = []
    for unit in range(10):
        games.append(Game("a", "b", 3.0, -3.0, unit))
        games.append(Game("a", "b", -1.0, 1.0, unit))
    summary = pairing_summaries(games)[("a", "b")]
    assert (
        summary.mean_return,
        summary.mean_return_low,
        summary.mean_return_high,
    ) == pytest.approx((1, 1, 1))
    assert (summary.wins, summary.draws, summary.losses) == (10, 0, 10)
    mirror = pairing_summaries(games)[("b", "a")]
    assert mirror.mean_return == pytest.approx(-1.0) and mirror.wins == 10


def _synthetic_games(true_elo: dict[str, float], games_per_pair: int, seed: int) -> list[Game]:
    """Decisive games drawn from the Bradley-Terry model with the given Elo ratings."""
    rng = np.random.default_rng(seed)
    names = sorted(true_elo)
    games = []
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            first_wins = 1.0 / (1.0 + 10 ** ((true_elo[second] - true_elo[first]) / 400))
            for won in rng.random(games_per_pair) < first_wins:
                score = 1.0 if won else -1.0
                games.append(Game(first, second, score, -score, len(games)))
    return games


def test_elo_recovers_the_true_ordering_and_ratings():
    true_elo = {"anchor": 0.0, "weak": -300.0, "fair": 120.0, "good": 260.0, "best": 450.0}
    ratings = fit_elo(_synthetic_games(true_elo, 300, seed=1), anchor="anchor")
    order = [ratings.agents[i] for i in np.argsort(-ratings.elo)]
    assert order == ["best", "good", "fair", "anchor", "weak"]
    assert ratings.elo[ratings.agents.index("anchor")] == 0.0
    for name, truth in true_elo.items():
        i = ratings.agents.index(name)
        if name != "anchor":
            assert abs(ratings.elo[i] - truth) < 3.5 * ratings.standard_error[i], (
                name,
                ratings.elo[i],
            )


def test_elo_standard_errors_match_their_spread_over_seeds():
    true_elo = {"a": 0.0, "b": 150.0, "c": -100.0}
    z_scores = []
    for seed in range(60):
        ratings = fit_elo(_synthetic_games(true_elo, 150, seed=100 + seed), anchor="a")
        for name in ("b", "c"):
            i = ratings.agents.index(name)
            z_scores.append((ratings.elo[i] - true_elo[name]) / ratings.standard_error[i])
    z_scores = np.array(z_scores)
    assert abs(z_scores.mean()) < 0.35
    assert 0.75 < z_scores.std() < 1.3


def test_elo_of_two_agents_is_the_logit_of_the_score():
    games = [Game("a", "b", 1.0, -1.0, u) for u in range(300)] + [
        Game("a", "b", -1.0, 1.0, u) for u in range(100)
    ]
    ratings = fit_elo(games, anchor="b")
    i = ratings.agents.index("a")
    # The weak prior (sd 1000 Elo) moves this by well under one Elo point.
    assert ratings.elo[i] == pytest.approx(ELO_PER_LOGIT * math.log(3.0), abs=0.5)
    assert ratings.standard_error[i] == pytest.approx(
        ELO_PER_LOGIT / math.sqrt(400 * 0.75 * 0.25), rel=1e-2
    )


def test_elo_stays_finite_when_an_agent_wins_every_game():
    games = [Game("a", "b", 1.0, 0.0, u) for u in range(20)] + [
        Game("b", "c", 0.5, 0.5, u) for u in range(20)
    ]
    ratings = fit_elo(games, anchor="c")
    assert np.all(np.isfinite(ratings.elo)) and ratings.elo[ratings.agents.index("a")] > 200


def test_anchor_must_have_played():
    with pytest.raises(ValueError, match="anchor agent 'z' played no game"):
        fit_elo([Game("a", "b", 1.0, 0.0, 0)], anchor="z")


def test_scores_average_over_the_seats_an_agent_holds():
    game = games_from_seats(("x", "y", "y"), (3.0, -1.0, -2.0), unit=7)
    assert (game.first, game.second, game.first_score, game.second_score) == ("x", "y", 3.0, -1.5)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_seat_orders_give_each_agent_every_role_equally_often(num_players):
    orders = seat_orders("a", "b", num_players)
    assert len(orders) == len(set(orders)) == (2 if num_players == 2 else 2 * num_players)
    for seat in range(num_players):
        assert sum(order[seat] == "a" for order in orders) == sum(
            order[seat] == "b" for order in orders
        )


def test_round_robin_and_gauntlet_pairings():
    assert pairings(["a", "b", "c"], "round-robin") == [("a", "b"), ("a", "c"), ("b", "c")]
    assert pairings(["a", "b", "c"], "gauntlet") == [("a", "b"), ("a", "c")]
    with pytest.raises(ValueError, match="distinct"):
        pairings(["a", "a"], "round-robin")
    with pytest.raises(ValueError, match="mode must be one of"):
        pairings(["a", "b"], "swiss")
