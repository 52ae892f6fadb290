"""Scripted opponents from the research: the GDL-II games' bots (Partridge & Thielscher) and
the combat doctrine.

=====================================  ============================================================
Spec (env)                             Strategy
=====================================  ============================================================
``scripted:meier`` (``meier``)         Claims: tells the truth, or bluffs with probability
                                       ``1 - rank(roll) / 20`` (a weak roll bluffs more), claiming
                                       uniformly one of the legal values above its roll; a roll
                                       that does not beat the last claim forces the lowest legal
                                       claim. Responses: calls with probability
                                       ``rank(claim) / 20`` (a high claim is more likely a lie),
                                       always at 21.
``scripted:blind_tictactoe``           Completes its own line when two of its marks are in it;
(``blind_tictactoe``,                  otherwise blocks the most likely opponent line: the line
``biased_blind_tictactoe``)            without its own marks holding most cells where its tries
                                       failed (a failed try means the opponent holds the cell);
                                       otherwise centre, then corners, then edges.
``scripted:doctrine`` (``combat``)     The combat doctrine of :mod:`hiddenenvs.envs.combat.doctrine`
                                       for a commander or a fighter; it reads the true state.
=====================================  ============================================================

``rank`` orders Meier values from 31 (rank 0) up to 21 (rank 20). The paper describes
the Meier bot as bluffing "in proportion to the value of its own roll" and calling "in
proportion to their claim"; the bluffing direction here is the sensible one (fewer bluffs
with a better roll). The two GDL-II bots see only what their seat sees: they read their own moves
and percepts back from the information-state tensor of the env (the default
``observation_type``), step by step, from the window of recent steps it holds
(:mod:`hiddenenvs.envs.gdl.encoding`): the Meier bot needs the last step, the blind
tic-tac-toe bot every step (the default window holds the whole game).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import hiddenenvs
from agents.base import Agent
from hiddenenvs.game import State

# Meier values from lowest to highest (the rule sheet's next_higher chain).
MEIER_ORDER = (31, 32, 41, 42, 43, 51, 52, 53, 54, 61, 62, 63, 64, 65, 11, 22, 33, 44, 55, 66, 21)
MEIER_RANK = {value: rank for rank, value in enumerate(MEIER_ORDER)}
TOP_RANK = len(MEIER_ORDER) - 1

# Cells 0..8 row by row: (mark r c) is cell 3 (r - 1) + (c - 1).
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
CELL_PREFERENCE = (4, 0, 2, 6, 8, 1, 3, 5, 7)  # centre, corners, edges


# ---- strategies on what the seat knows ---------------------------------------------------
def meier_claim_distribution(roll: int, claimable: list[int]) -> dict[int, float]:
    """``{claimed value: probability}`` for a player holding ``roll`` (module docstring)."""
    if roll not in claimable:
        return {min(claimable, key=MEIER_RANK.__getitem__): 1.0}
    higher = [value for value in claimable if MEIER_RANK[value] > MEIER_RANK[roll]]
    bluff = 1.0 - MEIER_RANK[roll] / TOP_RANK if higher else 0.0
    distribution = {roll: 1.0 - bluff}
    for value in higher:
        distribution[value] = bluff / len(higher)
    return distribution


def meier_call_probability(claimed: int) -> float:
    return MEIER_RANK[claimed] / TOP_RANK


def blind_tictactoe_cell(mine: set[int], theirs: set[int], untried: list[int]) -> int:
    """The cell to try, from own marks, cells known to be the opponent's, untried cells."""
    for line in LINES:
        if len(mine.intersection(line)) == 2:
            free = [cell for cell in line if cell in untried]
            if free:
                return free[0]
    best_cell, best_count = None, 0
    for line in LINES:
        if mine.intersection(line):
            continue
        count = len(theirs.intersection(line))
        free = [cell for cell in line if cell in untried]
        if free and count > best_count:
            best_cell, best_count = free[0], count
    if best_cell is not None:
        return best_cell
    return next(cell for cell in CELL_PREFERENCE if cell in untried)


# ---- agents --------------------------------------------------------------------------------
class GdlScriptedAgent(Agent):
    """A scripted player of a GDL game that decodes its own recent history from the tensor."""

    NEEDS_WHOLE_HISTORY = False  # True: the tensor's window must cover the whole game

    def __init__(self, env_name: str, player: int, params: dict[str, Any], seed: int | None = None):
        from hiddenenvs.envs.gdl.game import GdlGame

        game = hiddenenvs.load_game(env_name, **params)
        if not isinstance(game, GdlGame):
            raise ValueError(f"{type(self).__name__} plays GDL games; {env_name} is not one")
        super().__init__(game.info.num_distinct_actions, seed)
        role = game.player_roles[player]
        self.move_names = [game.action_to_string(player, a) for a in range(self.num_actions)]
        self.percept_names = game.propnet.percept_names[role]
        self.perception = game.perception
        self.env_name = env_name
        if self.NEEDS_WHOLE_HISTORY and self.perception.summarises:
            raise ValueError(
                f"{type(self).__name__} reads every step of the game, but {env_name}'s "
                f"history_window={self.perception.window} holds fewer than its "
                f"{game.horizon} steps; raise history_window to {game.horizon}"
            )

    def history(self, tensor: np.ndarray) -> list[tuple[str, list[str]]]:
        """``[(own move, [percepts])]`` of the tensor's recent steps, oldest first, as KIF."""
        if tensor.shape != self.perception.shape:
            raise ValueError(
                f"{type(self).__name__} reads {self.env_name}'s information-state tensor "
                f"({self.perception.size} values), got shape {tensor.shape}; make the env with "
                f"observation_type='information_state' (the default)"
            )
        return [
            (self.move_names[move], [self.percept_names[k] for k in percepts])
            for move, percepts in self.perception.recent_steps(tensor)
        ]

    def policy_probabilities_batch(self, observations, action_masks, views=None):
        rows = np.zeros((len(observations), self.num_actions))
        for row, (observation, mask) in enumerate(zip(observations, action_masks)):
            legal = np.flatnonzero(mask)
            legal_names = {self.move_names[a]: int(a) for a in legal}
            for name, probability in self.choose(
                self.history(np.asarray(observation)), legal_names
            ).items():
                rows[row, legal_names[name]] += probability
        return rows

    def choose(self, history, legal_names: dict[str, int]) -> dict[str, float]:
        raise NotImplementedError


def _last_value(history, prefix: str) -> int | None:
    """The value of the latest percept ``(prefix v)``, e.g. ``(rolled 63)`` -> 63."""
    for _, percepts in reversed(history):
        for percept in percepts:
            if percept.startswith(f"({prefix} "):
                return int(percept[len(prefix) + 2 : -1])
    return None


class MeierBot(GdlScriptedAgent):
    def choose(self, history, legal_names):
        claims = {int(name[7:-1]): name for name in legal_names if name.startswith("(claim ")}
        if claims:
            roll = _last_value(history, "rolled")
            if roll is None:
                raise ValueError("meier bot: asked to claim before seeing its roll")
            distribution = meier_claim_distribution(roll, list(claims))
            return {claims[value]: p for value, p in distribution.items()}
        if "call" in legal_names:
            if "accept" not in legal_names:
                return {"call": 1.0}
            claimed = _last_value(history, "claimed")
            call = meier_call_probability(claimed)
            return {"call": call, "accept": 1.0 - call}
        return {name: 1.0 / len(legal_names) for name in legal_names}


class BlindTicTacToeBot(GdlScriptedAgent):
    NEEDS_WHOLE_HISTORY = True  # where its tries failed, from the first step on

    @staticmethod
    def _cell(move: str) -> int:
        row, column = move[6:-1].split()
        return 3 * (int(row) - 1) + int(column) - 1

    def choose(self, history, legal_names):
        mine, theirs = set(), set()
        for move, percepts in history:
            if move.startswith("(mark "):
                (mine if "ok" in percepts else theirs).add(self._cell(move))
        by_cell = {self._cell(name): name for name in legal_names if name.startswith("(mark ")}
        if not by_cell:
            return {name: 1.0 / len(legal_names) for name in legal_names}
        return {by_cell[blind_tictactoe_cell(mine, theirs, sorted(by_cell))]: 1.0}


class CombatDoctrineBot(Agent):
    """The combat doctrine (:mod:`hiddenenvs.envs.combat.doctrine`) in one seat: a team's
    commander or one fighter. Like the research's scripted opponents it reads the true state
    (``USES_TRUE_STATE``: the loop passes ``roots=`` states, an env match the env's state),
    not only what its seat observes. It is deterministic."""

    USES_TRUE_STATE = True

    def __init__(self, env_name: str, player: int, params: dict[str, Any], seed: int | None = None):
        game = hiddenenvs.load_game(env_name, **params)
        super().__init__(game.info.num_distinct_actions, seed)
        self.player = player

    def policy_at_state(self, state: State, player: int) -> np.ndarray:
        """The doctrine's move for ``player`` at ``state``, as a one-hot distribution."""
        from hiddenenvs.envs.combat.doctrine import doctrine_action
        from hiddenenvs.envs.combat.env import CommanderState, FighterState

        if not isinstance(state, (CommanderState, FighterState)):
            raise ValueError(f"the combat doctrine plays combat states, not {type(state).__name__}")
        probabilities = np.zeros(self.num_actions)
        probabilities[doctrine_action(state, player, self.rng)] = 1.0
        return probabilities

    def act_batch(self, observations, action_masks, episode_ids=None, views=None, roots=None):
        if roots is None:
            raise ValueError("the combat doctrine reads the true state: call act_batch with roots=")
        probabilities = np.stack([self.policy_at_state(root, self.player) for root in roots])
        return probabilities.argmax(axis=1), probabilities

    def act_in_env(self, env, agent_name: str, observation: dict) -> int:
        return int(self.policy_at_state(env.unwrapped.game_state, self.player).argmax())

    def policy_probabilities_batch(self, observations, action_masks, views=None):
        raise ValueError(
            "the combat doctrine reads the true state, not observations: it has no "
            "policy over information states (use it as an opponent)"
        )


# {env: {bot name: class(env_name, seat, params)}}: the leaderboard's ``scripted:<name>``.
SCRIPTED_BOTS: dict[str, dict[str, Any]] = {
    "meier": {"meier": MeierBot},
    "blind_tictactoe": {"blind_tictactoe": BlindTicTacToeBot},
    "biased_blind_tictactoe": {"blind_tictactoe": BlindTicTacToeBot},
    "combat": {"doctrine": CombatDoctrineBot},
}
