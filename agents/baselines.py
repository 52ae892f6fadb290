"""Baseline agents and the agent-spec resolver.

===========================  ==============================================================
Agent                        What it plays
===========================  ==============================================================
:class:`RandomAgent`         uniformly random legal actions
:class:`TabularPolicyAgent`  a table of probabilities per information set (e.g. CFR+'s
                             average policy), looked up by the seat's information-state key
===========================  ==============================================================

:func:`load_agent` turns a short spec into an agent for one seat of a registered env:

=====================  ======================================================================
Spec                   Agent
=====================  ======================================================================
``random``             :class:`RandomAgent`
``cfr+:<iterations>``  CFR+'s average policy after that many iterations (``cfr:<n>`` for
                       vanilla CFR); the game tree must be enumerable
``<prefix>:<argument>`` a spec registered in :mod:`agents.search` (``es-mccfr:<iterations>``,
                       ``os-mccfr:<iterations>``, ``oos:10000`` / ``oos:2s``,
                       ``ismcts:1000`` / ``ismcts:1s``: iterations or seconds per move;
                       the classic GGP searchers ``alphabeta:6`` (a depth), ``minimax``,
                       ``maxn:1s``, ``mc:1s``, ``mc-memory:1s``, ``uct:1s,c=40``)
``<path>``             an agent file written by ``Agent.save``, a run checkpoint
                       (``checkpoint.pt``) or a run directory: the trainer's evaluation
                       agent for the seat (NFSP: its average policy)
=====================  ======================================================================

>>> import hiddenenvs
>>> agent = load_agent("cfr+:200", "kuhn_poker", player=0)
>>> state = hiddenenvs.load_game("kuhn_poker").state_from_history([0, 1])  # player 0: Jack
>>> probabilities = agent.policy_probabilities(
...     state.information_state_tensor(0), state.legal_actions_mask(0), state.seat_view(0))
>>> bool(probabilities[0] > 0.6)                     # mostly passes with the Jack
True
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import numpy as np

import hiddenenvs
from agents.base import Agent, load_agent_file, uniform_over_legal
from hiddenenvs.analysis import TabularPolicy
from hiddenenvs.game import Game, GameSpec


class RandomAgent(Agent):
    """Uniformly random over the legal actions."""

    def policy_probabilities_batch(self, observations, action_masks, views=None):
        return uniform_over_legal(action_masks)


class TabularPolicyAgent(Agent):
    """Plays a table ``{(player, information_state_key): probabilities}``.

    It looks its seat's information set up by key from the seat's view, so it works on
    any game (a table filled by CFR over the whole tree, or by sampling methods over the
    information sets they visited) and never depends on how a tensor encodes the key.
    An information set missing from the table is an error naming it. ``player`` limits
    the table to one seat (None: every seat).

    Files (``save``) hold data only: the game's spec, the keys as Python literals (read
    back with ``ast.literal_eval``) and the probabilities as one array.
    """

    USES_SEAT_VIEW = True

    def __init__(self, game: Game, table: dict, player: int | None = None, seed: int | None = None):
        super().__init__(game.info.num_distinct_actions, seed)
        self.game = game
        self.player = player
        self.table = {
            key: np.asarray(row, dtype=np.float64)
            for key, row in table.items() if player is None or key[0] == player
        }

    @classmethod
    def from_policy(cls, policy: TabularPolicy, player: int | None = None,
                    seed: int | None = None) -> TabularPolicyAgent:
        """The agent playing a :class:`TabularPolicy` (e.g. CFR+'s average policy)."""
        tree = policy.tree
        num_actions = tree.game.info.num_distinct_actions
        table = {}
        for infoset, key in enumerate(tree.infoset_keys):
            if player is None or key[0] == player:
                row = np.zeros(num_actions)
                for action, probability in policy.infoset_probabilities(infoset).items():
                    row[action] = probability
                table[key] = row
        return cls(tree.game, table, player, seed)

    def policy_probabilities_batch(self, observations, action_masks, views=None):
        if views is None:
            raise ValueError(
                "TabularPolicyAgent looks information sets up by key: call it with the seats' "
                "views (the loop, evaluate.py and the SB3 wrapper do; or use act_in_env)"
            )
        rows = []
        for view in views:
            row = self.table.get((view.player, view.information_state_key))
            if row is None:
                raise KeyError(
                    f"{self.game.spec}: the table has no information set of player "
                    f"{view.player} with key {view.information_state_key!r}"
                )
            rows.append(row)
        return np.stack(rows)

    def tabular_policy(self, tree) -> TabularPolicy:
        """The table as a :class:`TabularPolicy` on ``tree`` (every information set needed)."""
        return TabularPolicy.from_mapping(tree, self.table)

    def state_dict(self):
        keys = list(self.table)
        encoded = [repr(key) for key in keys]
        for key, text in zip(keys, encoded):
            if _literal(text) != key:
                raise ValueError(
                    f"{self.game.spec}: information-state key {key!r} does not survive a round "
                    f"trip through a Python literal; keys must be built from str, int, float, "
                    f"bool, None, bytes and tuples"
                )
        return {
            "game": self.game.spec.to_dict(),
            "player": self.player,
            "keys": encoded,
            "probabilities": np.stack([self.table[key] for key in keys]) if keys
            else np.zeros((0, self.num_actions)),
        }

    @classmethod
    def from_state_dict(cls, state):
        game = hiddenenvs.load_game(GameSpec.from_dict(state["game"]))
        table = {_literal(text): row for text, row in zip(state["keys"], np.asarray(state["probabilities"]))}
        return cls(game, table, state["player"])


def _literal(text: str):
    """A key written by ``repr``, read back without evaluating code."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError) as error:
        raise ValueError(f"not a Python literal information-state key: {text[:80]!r}") from error


SPEC_HELP = (
    "'random', 'cfr+:<iterations>' (or 'cfr:<iterations>'), 'es-mccfr:<iterations>', "
    "'os-mccfr:<iterations>', 'oos:<iterations>' or 'oos:<seconds>s', 'ismcts:<iterations>' "
    "or 'ismcts:<seconds>s', 'alphabeta:<depth>' / 'minimax' / 'negamax' / 'maxn:<seconds>s' / "
    "'softmaxn', 'mc:<seconds>s', 'mc-memory:<playouts>', 'uct:<seconds>s[,c=40]', "
    "'rebel:<iterations>' or 'rebel:<seconds>s[,depth=2]', an agent file written by "
    "Agent.save(), a run checkpoint file or a run directory"
)


def load_agent(spec: str, env_name: str, player: int = 0, seed: int | None = None,
               **env_params: Any) -> Agent:
    """The agent a spec names, for seat ``player`` of ``env_name`` (see the module docstring)."""
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"agent spec must be a non-empty string: {SPEC_HELP}; got {spec!r}")
    game = hiddenenvs.load_game(env_name, **env_params)
    num_players = game.info.num_players
    if not 0 <= player < num_players:
        raise ValueError(f"player must be in 0..{num_players - 1} for {env_name}, got {player}")
    if spec == "random":
        return RandomAgent(game.info.num_distinct_actions, seed)
    variant, _, iterations = spec.partition(":")
    if variant in ("cfr", "cfr+") and iterations:
        from agents.cfr import CFRSolver

        if not iterations.isdigit() or int(iterations) < 1:
            raise ValueError(f"agent spec {spec!r}: iterations must be a positive integer")
        solver = CFRSolver(game, variant=variant)
        solver.iterate(int(iterations))
        return TabularPolicyAgent.from_policy(solver.average_policy(), player, seed)
    from agents.search import spec_builder

    builder = spec_builder(variant) if iterations or ":" not in spec else None
    if builder is not None:  # a bare prefix (``minimax``, ``uct``) gets an empty argument
        return builder(iterations, game, player, seed)
    path = Path(spec)
    if path.is_dir():
        path = path / "checkpoint.pt"
    if not path.is_file():
        raise ValueError(f"agent spec {spec!r} does not resolve: expected {SPEC_HELP}")
    from agents.checkpoint import load_checkpoint
    from agents.runs import RUN_CHECKPOINT_FORMAT, learner_from_checkpoint

    payload = load_checkpoint(path)
    if isinstance(payload, dict) and payload.get("format") == RUN_CHECKPOINT_FORMAT:
        trained_on = payload["config"]["env"]["name"]
        if trained_on != env_name:
            raise ValueError(f"agent spec {spec!r}: this run trained on {trained_on}, not {env_name}")
        return learner_from_checkpoint(payload).evaluation_agent(player)
    agent = load_agent_file(path)
    made_for = getattr(getattr(agent, "game", None), "spec", None)
    if made_for is not None and made_for.name != env_name:
        raise ValueError(f"agent spec {spec!r}: this agent plays {made_for}, not {env_name}")
    return agent
