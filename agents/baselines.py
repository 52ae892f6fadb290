"""Baseline agents and the agent-spec resolver.

===========================  ==============================================================
Agent                        What it plays
===========================  ==============================================================
:class:`RandomAgent`         uniformly random legal actions
:class:`TabularPolicyAgent`  a :class:`hiddenenvs.analysis.TabularPolicy` (e.g. CFR+'s
                             average policy), looked up by information-state tensor
===========================  ==============================================================

:func:`load_agent` turns a short spec into an agent for one seat of a registered env:

=====================  ======================================================================
Spec                   Agent
=====================  ======================================================================
``random``             :class:`RandomAgent`
``cfr+:<iterations>``  CFR+'s average policy after that many iterations (``cfr:<n>`` for
                       vanilla CFR); the game tree must be enumerable
``<path>``             an agent file written by ``Agent.save``, a run checkpoint
                       (``checkpoint.pt``) or a run directory: the trainer's evaluation
                       agent for the seat (NFSP: its average policy)
=====================  ======================================================================

>>> import hiddenenvs
>>> agent = load_agent("cfr+:200", "kuhn_poker", player=0)
>>> state = hiddenenvs.load_game("kuhn_poker").new_initial_state()
>>> state.apply_action(0); state.apply_action(1)     # player 0 holds the Jack
>>> tensor = state.information_state_tensor(0)
>>> agent.policy_probabilities(tensor, state.legal_actions_mask(0)).round(2).tolist()[0] > 0.6
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

import hiddenenvs
from agents.base import Agent, load_agent_file, uniform_over_legal
from hiddenenvs.analysis import GameTree, TabularPolicy


class RandomAgent(Agent):
    """Uniformly random over the legal actions."""

    def policy_probabilities_batch(self, observations, action_masks):
        return uniform_over_legal(action_masks)


class TabularPolicyAgent(Agent):
    """Plays a tabular policy; finds the information set from the information-state tensor.

    Perfect-recall information-state tensors identify the information set, so the agent
    needs no game state: it maps each of ``player``'s information sets (all players' when
    ``player`` is None) to its tensor once, at construction. The env must give
    information-state observations (the default ``observation_type``).
    """

    def __init__(self, policy: TabularPolicy, player: int | None = None, seed: int | None = None):
        tree = policy.tree
        super().__init__(tree.game.info.num_distinct_actions, seed)
        self.policy = policy
        self.player = player
        self._rows: dict[bytes, np.ndarray] = {}
        owner: dict[bytes, tuple] = {}
        states = tree.representative_states()
        for infoset, (infoset_player, key) in enumerate(tree.infoset_keys):
            if player is not None and infoset_player != player:
                continue
            tensor = np.asarray(states[infoset].information_state_tensor(infoset_player), np.float32)
            row = np.zeros(self.num_actions)
            for action, probability in policy.infoset_probabilities(infoset).items():
                row[action] = probability
            lookup = tensor.tobytes()
            if lookup in self._rows and not np.allclose(self._rows[lookup], row):
                raise ValueError(
                    f"{tree.game.NAME}: information sets {owner[lookup]!r} and "
                    f"{(infoset_player, key)!r} share one information-state tensor; "
                    f"give player= to build a one-seat agent"
                )
            self._rows[lookup] = row
            owner[lookup] = (infoset_player, key)

    def policy_probabilities_batch(self, observations, action_masks):
        observations = np.asarray(observations, dtype=np.float32)
        rows = []
        for observation in observations:
            row = self._rows.get(observation.tobytes())
            if row is None:
                raise KeyError(
                    f"{self.policy.tree.game.NAME}: no information set of "
                    f"{'any player' if self.player is None else f'player {self.player}'} has "
                    f"this information-state tensor: {observation.tolist()}"
                )
            rows.append(row)
        return np.stack(rows)

    def state_dict(self):
        return {
            "game": self.policy.tree.game.NAME,
            "game_params": dict(self.policy.tree.game.params),
            "slot_probabilities": self.policy.slot_probabilities.copy(),
            "player": self.player,
        }

    @classmethod
    def from_state_dict(cls, state):
        from hiddenenvs.registry import REGISTRY

        entry = REGISTRY[state["game"]] if state["game"] in REGISTRY else None
        params = {k: v for k, v in state["game_params"].items()
                  if entry is None or k not in entry.fixed_params}
        game = entry.game_class()(**entry.fixed_params, **params) if entry else None
        if game is None:
            raise ValueError(f"tabular agent file for unregistered game {state['game']!r}")
        tree = GameTree.build(game)
        return cls(TabularPolicy(tree, state["slot_probabilities"]), state["player"])


SPEC_HELP = (
    "'random', 'cfr+:<iterations>' (or 'cfr:<iterations>'), an agent file written by "
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
        return TabularPolicyAgent(solver.average_policy(), player, seed)
    path = Path(spec)
    if path.is_dir():
        path = path / "checkpoint.pt"
    if not path.is_file():
        raise ValueError(f"agent spec {spec!r} does not resolve: expected {SPEC_HELP}")
    from agents.checkpoint import load_checkpoint
    from agents.loop import RUN_CHECKPOINT_FORMAT, learner_from_checkpoint

    payload = load_checkpoint(path)
    if isinstance(payload, dict) and payload.get("format") == RUN_CHECKPOINT_FORMAT:
        trained_on = payload["config"]["env"]["name"]
        if trained_on != env_name:
            raise ValueError(f"agent spec {spec!r}: this run trained on {trained_on}, not {env_name}")
        return learner_from_checkpoint(payload).evaluation_agent(player)
    return load_agent_file(path)
