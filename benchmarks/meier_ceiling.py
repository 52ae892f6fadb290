"""The exact ceiling of strength on the Meier GDL-II sheet: what a best response and what an
equilibrium score against random and against the scripted bot (issue 46's yardsticks).

    python -m benchmarks.meier_ceiling                       # the exact table
    python -m benchmarks.meier_ceiling --agent runs/nfsp_meier # ... and an agent against it

Meier decomposes over its public state. A turn is: the player in control rolls (only it sees
the dice), claims a value above the last claim, and the other player calls (the game ends:
the claimer wins when the dice are at least the claim) or accepts (it takes control and the
old dice are discarded). So after an accept the game from "last claim ``c``, player X in
control" does not depend on anything before it: a proper subgame ``G(c)``, 21 of them
(plus the first turn, any claim allowed). Each is a small signalling game (X's 21 rolls,
up to 21 claims; the responder's call or accept per claim) whose continuation values are
those of the higher subgames, so everything here is solved backward over ``c``:

- a **best response** to a fixed opponent (``random``: claims uniformly among the legal
  values whatever its dice, calls half the time; ``bot``: :mod:`agents.scripted`'s Meier bot,
  whose claim depends on its roll, so the responder weighs the rolls behind a claim): a
  one-line maximum per roll and per claim;
- the **game value** and one **equilibrium**: one linear programme per subgame (the claimer's
  maximin over its behaviour per roll, the responder's minimax over its call probabilities);
- the **best equilibrium against an opponent**: per subgame, the claimer's and the
  responder's strategy that scores most against that opponent among those that keep the
  subgame's value (a linear programme each), built on the higher subgames' best.

Values are probabilities of winning (Meier has no draws), by seat: seat 0 (alice) is first
in control. Checked on the real sheet (``evaluate.py`` and :class:`MeierStrategyAgent`,
1,000 games per seat): the scripted bot against random 0.626 [0.61, 0.65] (exact 0.625),
the equilibrium against random 0.734 / 0.694 by seat (exact 0.733 / 0.689) and against the
bot 0.701 / 0.513 (exact 0.705 / 0.494).

``--agent SPEC`` (any ``evaluate.py`` spec: a run directory, an agent file) plays the agent
against the equilibrium on the real sheet, by seat. An agent that wins ``s`` in a seat whose
game value is ``v`` gives the equilibrium ``v - s`` over its value, so a best response gains
at least that: a lower bound on the agent's exploitability in that seat. It also prints the
agent's opening claim by roll next to the equilibrium's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
import argparse
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from agents.leaderboard.stats import wilson_interval
from agents.scripted import (
    MEIER_ORDER,
    GdlScriptedAgent,
    meier_call_probability,
    meier_claim_distribution,
)

NUM_VALUES = len(MEIER_ORDER)  # claims and rolls as ranks 0 (31) .. 20 (21, unbeatable)
TOP = NUM_VALUES - 1
DOUBLES = {11, 22, 33, 44, 55, 66}
# 36 ordered dice pairs: a double is one of them, any other value (21 included) two.
ROLL_PROBABILITY = np.array([(1 if v in DOUBLES else 2) / 36 for v in MEIER_ORDER])
FIRST = None  # the "last claim" of the first turn: every value may be claimed
GAMES_PER_PAIRING = 400  # issue 46's evaluation: 200 games per seat


def claimable(last: int | None) -> range:
    return range(NUM_VALUES) if last is None else range(last + 1, NUM_VALUES)


@dataclass(frozen=True)
class Opponent:
    """A fixed Meier strategy: ``claim(roll, last) -> {claim: probability}`` over ranks and
    ``call(claim, last) -> probability`` of calling ``claim`` made over ``last`` (1 at 21,
    where accepting is illegal)."""

    name: str
    claim: Callable[[int, int | None], dict[int, float]]
    call: Callable[[int, int | None], float]


def _random_claim(roll: int, last: int | None) -> dict[int, float]:
    values = claimable(last)
    return {value: 1.0 / len(values) for value in values}


def _bot_claim(roll: int, last: int | None) -> dict[int, float]:
    legal = [MEIER_ORDER[rank] for rank in claimable(last)]
    distribution = meier_claim_distribution(MEIER_ORDER[roll], legal)
    return {MEIER_ORDER.index(value): p for value, p in distribution.items()}


RANDOM = Opponent("random", _random_claim, lambda claim, last: 1.0 if claim == TOP else 0.5)
BOT = Opponent(
    "scripted:meier",
    _bot_claim,
    lambda claim, last: 1.0 if claim == TOP else meier_call_probability(MEIER_ORDER[claim]),
)


def _holds(roll: int, claim: int) -> float:
    return 1.0 if roll >= claim else 0.0


def _claims_seen(opponent: Opponent, last: int | None) -> dict[int, tuple[float, float]]:
    """``{claim: (P(claim), P(claim and it is a lie))}`` for the opponent in control."""
    seen: dict[int, list[float]] = {}
    for roll, p_roll in enumerate(ROLL_PROBABILITY):
        for claim, p in opponent.claim(roll, last).items():
            entry = seen.setdefault(claim, [0.0, 0.0])
            entry[0] += p_roll * p
            entry[1] += p_roll * p * (1.0 - _holds(roll, claim))
    return {claim: (p, lie) for claim, (p, lie) in seen.items()}


def best_response(opponent: Opponent) -> tuple[float, float]:
    """A best response's winning probability against ``opponent``, seat 0 and seat 1."""

    @functools.cache
    def in_control(last: int | None) -> float:
        total = 0.0
        for roll, p_roll in enumerate(ROLL_PROBABILITY):
            total += p_roll * max(
                opponent.call(claim, last) * _holds(roll, claim)
                + (1.0 - opponent.call(claim, last)) * (responding(claim) if claim < TOP else 0.0)
                for claim in claimable(last)
            )
        return total

    @functools.cache
    def responding(last: int | None) -> float:
        return sum(
            max(lie, p * in_control(claim) if claim < TOP else 0.0)
            for claim, (p, lie) in _claims_seen(opponent, last).items()
        )

    return in_control(FIRST), responding(FIRST)


@dataclass
class Equilibrium:
    """Per subgame (keyed by the last claim, ``None`` for the first turn): the controller's
    winning probability ``value``, its claims by roll and the responder's call probabilities."""

    value: dict[int | None, float]
    claims: dict[int | None, np.ndarray]  # [roll, claim index within claimable(last)]
    calls: dict[int | None, np.ndarray]  # [claim index within claimable(last)]


def _subgames_top_down() -> list[int | None]:
    return [*range(TOP - 1, -1, -1), FIRST]


def _claimer_constraints(last: int | None, value: dict) -> tuple[np.ndarray, int]:
    """Rows ``t_v - sum_r x[r, v] * payoff <= 0`` for both responses to each claim ``v``,
    over the variables ``x[r, v]`` (flattened, per roll) and then ``t_v``."""
    claims = claimable(last)
    num_x = NUM_VALUES * len(claims)
    rows = []
    for j, claim in enumerate(claims):
        responses = [np.array([_holds(roll, claim) for roll in range(NUM_VALUES)])]
        if claim < TOP:  # accepting hands the claimer the other side of G(claim)
            responses.append(np.full(NUM_VALUES, 1.0 - value[claim]))
        for payoff in responses:
            row = np.zeros(num_x + len(claims))
            row[num_x + j] = 1.0
            row[j : num_x : len(claims)] = -payoff
            rows.append(row)
    return np.array(rows), num_x


def _roll_sums(num_claims: int, extra: int) -> np.ndarray:
    rows = np.zeros((NUM_VALUES, NUM_VALUES * num_claims + extra))
    for roll in range(NUM_VALUES):
        rows[roll, roll * num_claims : (roll + 1) * num_claims] = 1.0
    return rows


def _responder_constraints(last: int | None, value: dict) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``y_v (w - a) - z_r <= -a`` (``z_r``: roll r's best claim against the call
    probabilities ``y``), over the variables ``y_v`` and then ``z_r``."""
    claims = claimable(last)
    rows = []
    for roll in range(NUM_VALUES):
        for j, claim in enumerate(claims):
            accepted = 1.0 - value[claim] if claim < TOP else 0.0
            row = np.zeros(len(claims) + NUM_VALUES)
            row[j] = _holds(roll, claim) - accepted
            row[len(claims) + roll] = -1.0
            rows.append((row, -accepted))
    return np.array([row for row, _ in rows]), np.array([bound for _, bound in rows])


def _call_bounds(last: int | None) -> list[tuple[float | None, float | None]]:
    claims = claimable(last)
    return [(1.0, 1.0) if claim == TOP else (0.0, 1.0) for claim in claims] + [
        (None, None)
    ] * NUM_VALUES


def _solve(cost, a_ub, b_ub, bounds, a_eq=None, b_eq=None) -> np.ndarray:
    result = linprog(
        cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs"
    )
    if result.status != 0:
        raise RuntimeError(f"meier ceiling: a subgame's linear programme failed: {result.message}")
    return result.x


def equilibrium() -> Equilibrium:
    """The game value of every subgame and one equilibrium (module docstring)."""
    value: dict[int | None, float] = {}
    claims_by_roll: dict[int | None, np.ndarray] = {}
    calls: dict[int | None, np.ndarray] = {}
    for last in _subgames_top_down():
        num_claims = len(claimable(last))
        a_ub, num_x = _claimer_constraints(last, value)
        cost = np.concatenate([np.zeros(num_x), -np.ones(num_claims)])  # maximise sum t_v
        x = _solve(
            cost,
            a_ub,
            np.zeros(len(a_ub)),
            [(0.0, None)] * len(cost),
            _roll_sums(num_claims, num_claims),
            ROLL_PROBABILITY,
        )
        value[last] = float(x[num_x:].sum())
        claims_by_roll[last] = x[:num_x].reshape(NUM_VALUES, num_claims) / ROLL_PROBABILITY[:, None]
        a_ub, b_ub = _responder_constraints(last, value)
        cost = np.concatenate([np.zeros(num_claims), ROLL_PROBABILITY])  # minimise sum P(r) z_r
        y = _solve(cost, a_ub, b_ub, _call_bounds(last))
        calls[last] = y[:num_claims]
    return Equilibrium(value, claims_by_roll, calls)


def as_opponent(game: Equilibrium) -> Opponent:
    """``game``'s equilibrium as a fixed strategy."""

    def claim(roll: int, last: int | None) -> dict[int, float]:
        claims = claimable(last)
        return {claims[j]: float(p) for j, p in enumerate(game.claims[last][roll]) if p > 0.0}

    def call(claim: int, last: int | None) -> float:
        return float(game.calls[last][claim - claimable(last).start])

    return Opponent("equilibrium", claim, call)


class MeierStrategyAgent(GdlScriptedAgent):
    """An :class:`Opponent` as a player of the real sheet, reading its seat's history back
    from the information-state tensor like the scripted bot: it claims over the last claim it
    heard (``(claimed v)``, none on the first turn) with the roll it saw, and answers a claim
    made over its own last claim. The window (10 steps) holds both: a turn is 3 steps."""

    def __init__(self, strategy: Opponent, player: int, params: dict, seed: int | None = None):
        super().__init__("meier", player, params, seed)
        self.strategy = strategy

    def choose(self, history, legal_names):
        def latest(prefix: str, own_move: bool) -> int | None:
            for move, percepts in reversed(history):
                for fact in [move] if own_move else percepts:
                    if fact.startswith(f"({prefix} "):
                        return MEIER_ORDER.index(int(fact[len(prefix) + 2 : -1]))
            return None

        if "call" in legal_names:
            claim = latest("claimed", own_move=False)
            if claim is None:
                raise ValueError("meier strategy: asked to respond before hearing a claim")
            call = self.strategy.call(claim, latest("claim", own_move=True))
            return (
                {"call": call, "accept": 1.0 - call} if "accept" in legal_names else {"call": 1.0}
            )
        if any(name.startswith("(claim ") for name in legal_names):
            roll = latest("rolled", own_move=False)
            if roll is None:
                raise ValueError("meier strategy: asked to claim before seeing its roll")
            claims = self.strategy.claim(roll, latest("claimed", own_move=False))
            return {f"(claim {MEIER_ORDER[c]})": p for c, p in claims.items() if p > 0.0}
        return {name: 1.0 / len(legal_names) for name in legal_names}


def play(first: Opponent, second: Opponent) -> tuple[float, float]:
    """``first``'s winning probability against ``second``: as seat 0, as seat 1."""

    @functools.cache
    def first_wins(first_in_control: bool, last: int | None) -> float:
        claimer, responder = (first, second) if first_in_control else (second, first)
        total = 0.0
        for roll, p_roll in enumerate(ROLL_PROBABILITY):
            for claim, p in claimer.claim(roll, last).items():
                q = responder.call(claim, last)
                claimer_wins = _holds(roll, claim)
                on_call = claimer_wins if first_in_control else 1.0 - claimer_wins
                accepted = first_wins(not first_in_control, claim) if claim < TOP else 0.0
                total += p_roll * p * (q * on_call + (1.0 - q) * accepted)
        return total

    return first_wins(True, FIRST), first_wins(False, FIRST)


def best_equilibrium_against(game: Equilibrium, opponent: Opponent) -> tuple[float, float]:
    """The most an equilibrium wins against ``opponent``, by seat: per subgame, among the
    strategies that keep its value, the one that scores most against the opponent given the
    higher subgames' best (an equilibrium in every subgame, so a subgame-perfect one)."""
    in_control: dict[int | None, float] = {}
    responding: dict[int | None, float] = {}
    for last in _subgames_top_down():
        claims = claimable(last)
        num_claims = len(claims)
        a_ub, num_x = _claimer_constraints(last, game.value)
        keep_value = np.concatenate([np.zeros(num_x), -np.ones(num_claims)])
        score = np.zeros(num_x + num_claims)
        for roll in range(NUM_VALUES):
            for j, claim in enumerate(claims):
                q = opponent.call(claim, last)
                accepted = responding[claim] if claim < TOP else 0.0
                score[roll * num_claims + j] = q * _holds(roll, claim) + (1.0 - q) * accepted
        x = _solve(
            -score,
            np.vstack([a_ub, keep_value]),
            np.concatenate([np.zeros(len(a_ub)), [-game.value[last] + 1e-9]]),
            [(0.0, None)] * len(score),
            _roll_sums(num_claims, num_claims),
            ROLL_PROBABILITY,
        )
        in_control[last] = float(score @ x)
        a_ub, b_ub = _responder_constraints(last, game.value)
        keep_value = np.concatenate([np.zeros(num_claims), ROLL_PROBABILITY])
        score = np.zeros(num_claims + NUM_VALUES)
        constant = 0.0
        offset = claims.start
        for claim, (p, lie) in _claims_seen(opponent, last).items():
            accepted = p * in_control[claim] if claim < TOP else 0.0
            score[claim - offset] = lie - accepted
            constant += accepted
        y = _solve(
            -score,
            np.vstack([a_ub, keep_value]),
            np.concatenate([b_ub, [game.value[last] + 1e-9]]),
            _call_bounds(last),
        )
        responding[last] = constant + float(score @ y)
    return in_control[FIRST], responding[FIRST]


def table() -> list[tuple[str, tuple[float, float], tuple[float, float]]]:
    """``(player, (seat 0, seat 1) against random, ... against the bot)`` rows."""
    game = equilibrium()
    strategy = as_opponent(game)
    return [
        ("best response to each opponent", best_response(RANDOM), best_response(BOT)),
        (
            "best equilibrium against each",
            best_equilibrium_against(game, RANDOM),
            best_equilibrium_against(game, BOT),
        ),
        ("an equilibrium (the LP's)", play(strategy, RANDOM), play(strategy, BOT)),
    ]


def _cell(by_seat: tuple[float, float]) -> str:
    mean = sum(by_seat) / 2
    lower, _ = wilson_interval(mean * GAMES_PER_PAIRING, GAMES_PER_PAIRING)
    return f"{mean:.3f} ({by_seat[0]:.3f} / {by_seat[1]:.3f}; {lower:.3f})"


def against_equilibrium(spec: str, games: int, seed: int = 0) -> tuple[float, float]:
    """The agent ``spec``'s win rate against the equilibrium on the real sheet, by seat
    (``games`` per seat)."""
    import hiddenenvs
    from agents.leaderboard.specs import resolve_agent
    from agents.loop import returns_against_opponents

    strategy = as_opponent(equilibrium())
    result = returns_against_opponents(
        lambda: hiddenenvs.make("meier"),
        lambda seat: resolve_agent(spec, "meier", seat, {}),
        games,
        seed,
        opponent=lambda name, seat, agent_seed: MeierStrategyAgent(strategy, seat, {}, agent_seed),
    )
    wins = result.wins / result.episodes
    return float(wins[0]), float(wins[1])


def opening_claims(spec: str) -> dict[int, dict[int, float]]:
    """``{roll: {claim: probability}}`` of the agent ``spec``'s first claim as seat 0 (its
    information state after seeing its first roll), values as on the sheet."""
    from agents.leaderboard.specs import resolve_agent

    agent = resolve_agent(spec, "meier", 0, {})
    reader = MeierStrategyAgent(RANDOM, 0, {})
    noop = reader.move_names.index("noop")
    claim_actions = {value: reader.move_names.index(f"(claim {value})") for value in MEIER_ORDER}
    mask = np.zeros(agent.num_actions, dtype=np.int8)
    mask[list(claim_actions.values())] = 1
    openings = {}
    for roll in MEIER_ORDER:
        seen = (reader.percept_names.index(f"(rolled {roll})"),)
        tensor = reader.perception.tensor(1, False, [(noop, seen)])
        probabilities = agent.policy_probabilities(tensor, mask)
        openings[roll] = {value: float(probabilities[a]) for value, a in claim_actions.items()}
    return openings


def _distribution(claims: dict[int, float], floor: float = 0.05) -> str:
    shown = sorted(claims.items(), key=lambda item: -item[1])
    return " ".join(f"{value}:{p:.2f}" for value, p in shown if p >= floor)


def profile_agent(spec: str, games: int) -> None:
    game = equilibrium()
    value = (game.value[FIRST], 1.0 - game.value[FIRST])
    wins = against_equilibrium(spec, games)
    print(f"{spec} against the equilibrium ({games} games per seat):")
    for seat in (0, 1):
        print(
            f"  seat {seat}: wins {wins[seat]:.3f}, game value {value[seat]:.3f}: exploitable "
            f"by at least {max(0.0, value[seat] - wins[seat]):.3f} (sampling error about "
            f"{2 * np.sqrt(0.25 / games):.3f})"
        )
    print("opening claim by roll (seat 0; claims of probability 0.05 or more):")
    openings = opening_claims(spec)
    for roll, claims in openings.items():
        rank = MEIER_ORDER.index(roll)
        reference = {
            MEIER_ORDER[c]: float(p) for c, p in zip(claimable(FIRST), game.claims[FIRST][rank])
        }
        print(f"  {roll}: agent {_distribution(claims)} | equilibrium {_distribution(reference)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", help="also play this agent spec against the equilibrium")
    parser.add_argument("--games", type=int, default=1000, help="games per seat (--agent)")
    args = parser.parse_args(argv)
    game = equilibrium()
    print(f"Meier game value: seat 0 (first in control) wins {game.value[FIRST]:.4f}")
    print(f"scripted bot against random: {_cell(play(BOT, RANDOM))}")
    print(
        "winning probability over both seats (seat 0 / seat 1; the 95% Wilson lower bound "
        f"of that mean over {GAMES_PER_PAIRING} games)"
    )
    print(f"| player | vs random | vs {BOT.name} |\n|---|---|---|")
    for player, against_random, against_bot in table():
        print(f"| {player} | {_cell(against_random)} | {_cell(against_bot)} |")
    if args.agent:
        profile_agent(args.agent, args.games)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
