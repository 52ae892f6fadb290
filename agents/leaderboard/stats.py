"""Statistics of stored matches: head-to-head summaries with 95% intervals, Elo ratings.

Head-to-head. For a pairing ``(A, B)`` each game gives A a *score* (its return, averaged
over the seats it held) and an outcome against B: win when A's score beats B's, draw
when equal, loss otherwise.

- Win, draw and loss rates carry Wilson score intervals (Wilson 1927): for ``k`` of ``n``
  and ``z = 1.96``, ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``. Unlike the
  normal interval it stays inside [0, 1] and keeps its coverage near 0 and 1.
- The mean return carries a Student-t interval over *units*: one unit per env seed. With
  duplicate matches both seat orders of a game share the seed, so the unit is the pair of
  mirrored games and the luck of the deal, shared by both, cancels inside it; the t
  interval over units is then exact in its assumptions (independent units) instead of
  conservative.

Elo. Ratings come from the Bradley-Terry model fitted by maximum likelihood over every
game (Bradley & Terry 1952; Hunter 2004 for the MLE): ``P(i beats j) = σ(β_i - β_j)``
with a draw counted as half a win and half a loss, so the log-likelihood is
``Σ_games s·log σ(β_i - β_j) + (1 - s)·log σ(β_j - β_i)`` with ``s ∈ {0, ½, 1}``. It is
concave; Newton's method with the anchor agent's ``β`` fixed at 0 converges in a few
steps. An agent that won (or lost) every game has no finite MLE, so a weak Gaussian prior
``β ~ N(0, 1000 Elo)`` (relative to the anchor) is added; it moves well-determined ratings
by a fraction of an Elo point. Standard errors are the square roots of the diagonal of the
inverse Hessian of the negative log-posterior (the observed information); 95% intervals
are ``±1.96·SE``. Elo = ``400/ln 10 · β``, so 400 Elo is 10:1 odds.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Z_95 = 1.959963984540054
ELO_PER_LOGIT = 400.0 / math.log(10.0)
PRIOR_SD_ELO = 1000.0


def wilson_interval(successes: float, trials: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for a binomial rate (see the module docstring)."""
    if trials <= 0:
        return (0.0, 1.0)
    rate = successes / trials
    denominator = 1.0 + z * z / trials
    centre = (rate + z * z / (2 * trials)) / denominator
    half_width = (
        z * math.sqrt(rate * (1 - rate) / trials + z * z / (4 * trials * trials)) / denominator
    )
    return (max(0.0, centre - half_width), min(1.0, centre + half_width))


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)``: Student-t interval for the mean of independent values."""
    array = np.asarray(values, dtype=np.float64)
    n = len(array)
    if n == 0:
        return (math.nan, math.nan, math.nan)
    mean = float(array.mean())
    if n == 1:
        return (mean, -math.inf, math.inf)
    from scipy import stats  # imported here: scipy.stats takes seconds to import

    half_width = stats.t.ppf(0.5 + confidence / 2, n - 1) * array.std(ddof=1) / math.sqrt(n)
    return (mean, mean - half_width, mean + half_width)


@dataclass(frozen=True)
class Game:
    """One game between two agents, from ``first``'s side."""

    first: str
    second: str
    first_score: float
    second_score: float
    unit: int  # games with equal ``unit`` share their chance outcomes (the env seed)

    @property
    def first_points(self) -> float:
        """1 for a win of ``first``, 0.5 for a draw, 0 for a loss."""
        if self.first_score > self.second_score:
            return 1.0
        return 0.5 if self.first_score == self.second_score else 0.0


def games_from_seats(seats: Sequence[str], returns: Sequence[float], unit: int) -> Game:
    """The two-agent game behind a match: each agent's score is its mean over its seats."""
    names = sorted(set(seats))
    if len(names) != 2:
        raise ValueError(
            f"a head-to-head match needs exactly two distinct agents, got seats {list(seats)}"
        )
    scores = {
        name: float(np.mean([r for s, r in zip(seats, returns) if s == name])) for name in names
    }
    return Game(names[0], names[1], scores[names[0]], scores[names[1]], unit)


@dataclass(frozen=True)
class PairingSummary:
    agent: str
    opponent: str
    games: int
    mean_return: float
    mean_return_low: float
    mean_return_high: float
    wins: int
    draws: int
    losses: int

    def rate_interval(self, count: int) -> tuple[float, float, float]:
        low, high = wilson_interval(count, self.games)
        return (count / self.games, low, high)

    @property
    def win_rate(self) -> tuple[float, float, float]:
        return self.rate_interval(self.wins)

    @property
    def draw_rate(self) -> tuple[float, float, float]:
        return self.rate_interval(self.draws)

    @property
    def loss_rate(self) -> tuple[float, float, float]:
        return self.rate_interval(self.losses)

    @property
    def points(self) -> float:
        """Wins plus half the draws, per game."""
        return (self.wins + 0.5 * self.draws) / self.games


def pairing_summaries(games: Sequence[Game]) -> dict[tuple[str, str], PairingSummary]:
    """Both directions of every pairing: ``summaries[(a, b)]`` is from a's side."""
    by_pairing: dict[tuple[str, str], list[Game]] = defaultdict(list)
    for game in games:
        by_pairing[(game.first, game.second)].append(game)
    summaries = {}
    for (first, second), pairing_games in by_pairing.items():
        for agent, opponent, sign in ((first, second, 1.0), (second, first, -1.0)):
            per_unit: dict[int, list[float]] = defaultdict(list)
            wins = draws = 0
            for game in pairing_games:
                score = game.first_score if sign > 0 else game.second_score
                per_unit[game.unit].append(score)
                points = game.first_points if sign > 0 else 1.0 - game.first_points
                wins += points == 1.0
                draws += points == 0.5
            unit_means = [float(np.mean(scores)) for scores in per_unit.values()]
            _, low, high = mean_interval(unit_means)
            total = len(pairing_games)
            mean = float(
                np.mean([g.first_score if sign > 0 else g.second_score for g in pairing_games])
            )
            summaries[(agent, opponent)] = PairingSummary(
                agent, opponent, total, mean, low, high, wins, draws, total - wins - draws
            )
    return summaries


@dataclass(frozen=True)
class Ratings:
    agents: list[str]
    elo: np.ndarray  # relative to the anchor, whose rating is ``anchor_elo``
    standard_error: np.ndarray  # 0 for the anchor
    anchor: str
    anchor_elo: float

    def interval(self, agent: str) -> tuple[float, float, float]:
        i = self.agents.index(agent)
        return (
            self.elo[i],
            self.elo[i] - Z_95 * self.standard_error[i],
            self.elo[i] + Z_95 * self.standard_error[i],
        )


def fit_elo(
    games: Sequence[Game],
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    max_iterations: int = 100,
) -> Ratings:
    """Bradley-Terry maximum likelihood ratings (see the module docstring)."""
    agents = sorted({g.first for g in games} | {g.second for g in games})
    if not agents:
        raise ValueError("no games to rate")
    if anchor is None:
        anchor = agents[0]
    if anchor not in agents:
        raise ValueError(f"anchor agent {anchor!r} played no game; agents: {', '.join(agents)}")
    index = {name: i for i, name in enumerate(agents)}
    # Aggregate: games and points of i against j (i < j) per pair.
    pair_games: dict[tuple[int, int], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for game in games:
        i, j, first_points = index[game.first], index[game.second], game.first_points
        if i > j:
            i, j, first_points = j, i, 1.0 - first_points
        pair_games[(i, j)][0] += 1.0
        pair_games[(i, j)][1] += first_points
    first = np.array([i for i, _ in pair_games])
    second = np.array([j for _, j in pair_games])
    counts = np.array([v[0] for v in pair_games.values()])
    points = np.array([v[1] for v in pair_games.values()])

    free = np.array([i for i in range(len(agents)) if agents[i] != anchor], dtype=np.int64)
    prior_precision = (ELO_PER_LOGIT / PRIOR_SD_ELO) ** 2
    beta = np.zeros(len(agents))
    for _ in range(max_iterations):
        gradient, hessian = _gradient_hessian(beta, first, second, counts, points, prior_precision)
        step = np.linalg.solve(hessian[np.ix_(free, free)], gradient[free])
        beta[free] -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    _, hessian = _gradient_hessian(beta, first, second, counts, points, prior_precision)
    standard_error = np.zeros(len(agents))
    if len(free):
        covariance = np.linalg.inv(hessian[np.ix_(free, free)])
        standard_error[free] = np.sqrt(np.diag(covariance))
    return Ratings(
        agents,
        anchor_elo + ELO_PER_LOGIT * beta,
        ELO_PER_LOGIT * standard_error,
        anchor,
        anchor_elo,
    )


def _gradient_hessian(beta, first, second, counts, points, prior_precision):
    """Gradient and Hessian of the negative log-posterior of the Bradley-Terry model."""
    expected = counts / (1.0 + np.exp(beta[second] - beta[first]))  # expected points of `first`
    residual = expected - points
    gradient = prior_precision * beta
    np.add.at(gradient, first, residual)
    np.add.at(gradient, second, -residual)
    weight = expected * (1.0 - expected / counts)  # n·p·(1-p)
    hessian = np.diag(np.full(len(beta), prior_precision))
    np.add.at(hessian, (first, first), weight)
    np.add.at(hessian, (second, second), weight)
    np.add.at(hessian, (first, second), -weight)
    np.add.at(hessian, (second, first), -weight)
    return gradient, hessian


def openskill_ratings(games: Sequence[Game]) -> dict[str, tuple[float, float]] | None:
    """``{agent: (mu, sigma)}`` from OpenSkill's Plackett-Luce model (Joshy 2024), game by
    game in stored order; None when the optional ``openskill`` package is absent."""
    try:
        from openskill.models import PlackettLuce
    except ImportError:
        return None
    model = PlackettLuce()
    ratings: dict[str, Any] = {}  # openskill's rating objects
    for game in games:
        for name in (game.first, game.second):
            ratings.setdefault(name, model.rating(name=name))
        if game.first_score == game.second_score:
            ranks = [1.0, 1.0]
        else:
            ranks = [1.0, 2.0] if game.first_score > game.second_score else [2.0, 1.0]
        [[ratings[game.first]], [ratings[game.second]]] = model.rate(
            [[ratings[game.first]], [ratings[game.second]]], ranks=ranks
        )
    return {name: (rating.mu, rating.sigma) for name, rating in ratings.items()}
