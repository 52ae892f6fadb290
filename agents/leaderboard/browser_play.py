"""A person plays an agent of the board in the browser (``hiddenenvs leaderboard serve``).

The server keeps each game in memory as a :class:`HumanGame`: the env, the opponent
agents and the actions so far. The page shows only what the person's seat may see (its
information-state key, step by step in the game's words, its view drawn where the game
draws one, and its rewards, as ``python -m agents.play`` does in a terminal) and the legal actions as buttons; the
state itself is never shown before the end. When the game ends it is stored like any
other match: the person's seat holds the spec ``human``, ``series_seed`` is the env seed
(drawn fresh for each game, so every game is its own key) and the actions are kept, so
the match has a replay page.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import hiddenenvs
from agents.leaderboard.matches import agent_generator
from agents.leaderboard.specs import resolve_agent
from agents.leaderboard.store import MatchKey, MatchResult, ResultStore

HUMAN = "human"


class HumanGame:
    """One game of a person in ``human_seat`` against ``opponent`` in every other seat."""

    def __init__(
        self,
        env_name: str,
        params: dict[str, Any],
        params_json: str,
        opponent: str,
        human_seat: int,
        env_seed: int | None = None,
    ):
        self.env = hiddenenvs.make(env_name, **params)
        num_players = len(self.env.possible_agents)
        if not 0 <= human_seat < num_players:
            raise ValueError(
                f"seat must be in 0..{num_players - 1} for {env_name}, got {human_seat}"
            )
        # A fresh seed per game unless given (tests): each game is its own match key.
        self.env_seed = secrets.randbits(62) if env_seed is None else env_seed
        self.seats = tuple(HUMAN if s == human_seat else opponent for s in range(num_players))
        self.opponent = opponent
        self.human = self.env.possible_agents[human_seat]
        self.player = human_seat
        self.opponents = {}
        for seat, name in enumerate(self.env.possible_agents):
            if seat != human_seat:
                agent = resolve_agent(opponent, env_name, seat, params)
                agent.rng = agent_generator(self.env_seed, seat)
                self.opponents[name] = agent
        self.key = MatchKey(env_name, params_json, self.seats, self.env_seed, 0)
        self.actions: list[int | None] = []
        self.totals = dict.fromkeys(self.env.possible_agents, 0.0)
        self.started = time.perf_counter()
        self.match_id: int | None = None  # set once stored
        self.env.reset(seed=self.env_seed)
        self._turns = iter(self.env.agent_iter())
        self._advance()

    def _step(self, action: int | None) -> None:
        self.actions.append(action)
        self.env.step(action)
        for rewarded, reward in self.env.rewards.items():
            self.totals[rewarded] += reward

    def _advance(self) -> None:
        """Play the opponents' turns (and finished agents' steps) until the person's turn
        or the end."""
        self.current: str | None = None
        for name in self._turns:
            observation, _, termination, truncation, _ = self.env.last()
            if termination or truncation:
                self._step(None)
            elif name == self.human:
                self.current = name
                return
            else:
                self._step(int(self.opponents[name].act_in_env(self.env, name, observation)))

    @property
    def finished(self) -> bool:
        return self.current is None

    def legal(self) -> dict[int, str]:
        """The person's legal actions by number and name (empty when it is not their turn)."""
        if self.finished:
            return {}
        observation = self.env.last()[0]
        state = self.env.unwrapped.game_state
        return {
            int(a): state.action_to_string(self.player, int(a))
            for a in observation["action_mask"].nonzero()[0]
        }

    def view(self) -> list[str]:
        """What the person's seat has seen, step by step in the game's words."""
        unwrapped = self.env.unwrapped
        key = unwrapped.seat_view(self.human).information_state_key
        return [
            unwrapped.game.describe_step(self.player, public, private) for public, private in key
        ]

    def board(self) -> str | None:
        """The person's view drawn in the game's terms (``Game.describe_view``: blind
        tic-tac-toe's board of own marks and cells found taken, combat's grid of what your
        units see), or None where the game draws none."""
        unwrapped = self.env.unwrapped
        describe_view = getattr(unwrapped.game, "describe_view", None)
        if describe_view is None:
            return None
        return describe_view(unwrapped.game_state, self.player)

    def play(self, action: int) -> None:
        legal = self.legal()
        if action not in legal:
            raise ValueError(f"action {action} is not legal now; legal: {sorted(legal)}")
        self._step(action)
        self._advance()

    def record(self, store: ResultStore) -> int:
        """Store the finished game as a match; its row id."""
        returns = tuple(self.totals[name] for name in self.env.possible_agents)
        result = MatchResult(
            self.key,
            self.env_seed,
            returns,
            time.perf_counter() - self.started,
            tuple(self.actions),
        )
        store.add(result)
        (match,) = [
            m
            for m in store.stored_matches(self.key.env, self.key.params)
            if m.result.key == self.key
        ]
        self.match_id = match.id
        return match.id
